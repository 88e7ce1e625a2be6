//! Where two snapshots differ (the `serde` feature): the first part, in
//! the checksum's order, and the entities concerned.

use std::collections::BTreeMap;
use std::fmt;

use super::Snapshot;
use super::checksum::{EncodeError, PartHasher};
use super::codec::PartCodec;
use super::file::SectionKind;
use crate::entity::{CapturedComponent, Entity, SlotsView};

/// At most this many entities are listed in a [`Divergence`].
pub const DIVERGENCE_ENTITIES: usize = 16;

/// The first part in which two snapshots differ, from
/// [`Snapshot::divergence`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Divergence {
    /// [`SectionKind::Entities`] (which entities live, in which archetype
    /// and row, and the allocator), a component, a service or a saved
    /// script store ([`SectionKind::Scripts`]).
    pub kind: SectionKind,
    /// The part's save name (`entities` for the entities).
    pub name: String,
    /// The first entities concerned, by id, at most
    /// [`DIVERGENCE_ENTITIES`]: those alive in one snapshot only or in
    /// another archetype, or whose values of the component differ. Empty
    /// for a service, and for entities that differ only in their rows'
    /// order or in the allocator's free list.
    pub entities: Vec<Entity>,
    /// How many entities differ (all of them, not only those listed).
    pub differing: usize,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} `{}` differs", self.kind, self.name)?;
        if self.differing > 0 {
            write!(f, " for {} entities:", self.differing)?;
            for entity in &self.entities {
                write!(f, " {entity}")?;
            }
            if self.differing > self.entities.len() {
                f.write_str(" ...")?;
            }
        }
        Ok(())
    }
}

/// The hash of what `write` writes (in the checksum's encoding), with
/// `hasher` reset first.
fn hash_with(
    hasher: &mut PartHasher,
    write: impl FnOnce(&mut PartHasher) -> Result<(), EncodeError>,
) -> u64 {
    hasher.reset();
    write(hasher).unwrap_or_else(|error| panic!("a saved type failed to encode: {error}"));
    hasher.digest()
}

impl Snapshot {
    /// Each live entity with the names of its saved components (its
    /// archetype) and its row.
    fn membership(&self) -> BTreeMap<Entity, (Vec<&'static str>, usize)> {
        let mut map = BTreeMap::new();
        for archetype in &self.store.archetypes[..self.store.archetype_len] {
            let names: Vec<&'static str> = archetype
                .columns
                .iter()
                .filter_map(|&(part, _)| {
                    self.saves
                        .of_type(
                            SectionKind::Component,
                            self.store.components[part as usize].type_id,
                        )
                        .map(PartCodec::name)
                })
                .collect();
            for (row, &entity) in self.store.entities[archetype.entities.clone()]
                .iter()
                .enumerate()
            {
                map.insert(entity, (names.clone(), row));
            }
        }
        for component in self.store.used_parts() {
            if let Some(codec) = self
                .saves
                .of_type(SectionKind::Component, component.type_id)
            {
                for entity in &component.sparse_entities {
                    if let Some((names, _)) = map.get_mut(entity) {
                        names.push(codec.name());
                    }
                }
            }
        }
        for (names, _) in map.values_mut() {
            names.sort_unstable();
        }
        map
    }

    /// Each entity holding `component`, with its value's hash.
    fn value_hashes(
        &self,
        codec: &dyn PartCodec,
        component: Option<&CapturedComponent>,
    ) -> BTreeMap<Entity, u64> {
        let mut map = BTreeMap::new();
        let Some(component) = component else {
            return map;
        };
        let part = &*component.part;
        let mut hasher = PartHasher::new();
        let mut add = |entity: Entity, index: usize| {
            map.insert(
                entity,
                hash_with(&mut hasher, |hasher| codec.hash_value(part, index, hasher)),
            );
        };
        for (index, &entity) in component.sparse_entities.iter().enumerate() {
            add(entity, index);
        }
        for archetype in &self.store.archetypes[..self.store.archetype_len] {
            let rows = &self.store.entities[archetype.entities.clone()];
            for &(part_index, start) in &archetype.columns {
                if std::ptr::eq(&self.store.components[part_index as usize], component) {
                    for (row, &entity) in rows.iter().enumerate() {
                        add(entity, start + row);
                    }
                }
            }
        }
        map
    }

    fn component_of(&self, codec: &dyn PartCodec) -> Option<&CapturedComponent> {
        self.store
            .used_parts()
            .find(|component| component.type_id == codec.value_type())
    }

    /// The first part in which `other` differs from this snapshot, in the
    /// order the [`checksum`](Self::checksum) covers them (the entities,
    /// then the saved components and services by name, then the saved
    /// script stores by name), with the
    /// entities concerned; `None` when they are equal (then their
    /// checksums are too). For finding where two peers of a lockstep game
    /// parted ways: compare checksums every frame, and the snapshots of
    /// the first frame whose checksums differ. Both are read with this
    /// snapshot's registrations.
    ///
    /// # Panics
    ///
    /// When a saved type's `Serialize` panics or fails, as
    /// [`checksum`](Self::checksum).
    pub fn divergence(&self, other: &Snapshot) -> Option<Divergence> {
        let entities = self.entities_divergence(other);
        if entities.is_some() {
            return entities;
        }
        for codec in self.saves.in_name_order() {
            match codec.kind() {
                SectionKind::Component => {
                    let ours = self.value_hashes(codec, self.component_of(codec));
                    let theirs = other.value_hashes(codec, other.component_of(codec));
                    let differing = differing_keys(&ours, &theirs);
                    if !differing.is_empty() {
                        return Some(divergence(SectionKind::Component, codec.name(), differing));
                    }
                }
                SectionKind::Service => {
                    let value = |snapshot: &Snapshot| {
                        snapshot.services[..snapshot.service_len]
                            .iter()
                            .find(|service| service.type_id == codec.value_type())
                            .map(|service| {
                                hash_with(&mut PartHasher::new(), |hasher| {
                                    codec.hash_values(&*service.part, hasher)
                                })
                            })
                    };
                    if value(self) != value(other) {
                        return Some(divergence(SectionKind::Service, codec.name(), Vec::new()));
                    }
                }
                _ => {}
            }
        }
        self.scripts_divergence(other)
            .or_else(|| self.locals_divergence(other))
    }

    /// The first saved local, by node key and position, whose hash
    /// differs (or that one snapshot holds only).
    fn locals_divergence(&self, other: &Snapshot) -> Option<Divergence> {
        fn hashes(snapshot: &Snapshot) -> Vec<(&str, u32, u64)> {
            snapshot
                .local_hashes(&mut PartHasher::new())
                .unwrap_or_else(|error| panic!("a saved type failed to encode: {error}"))
        }
        let (ours, theirs) = (hashes(self), hashes(other));
        // Both lists are in (key, position) order: the first entry that
        // differs, or the first past the shorter list.
        let (key, position, _) = ours
            .iter()
            .zip(&theirs)
            .find(|(a, b)| a != b)
            .map(|(a, b)| a.min(b))
            .or_else(|| ours.get(theirs.len()).or_else(|| theirs.get(ours.len())))?;
        let name = format!("{key}[{position}]");
        Some(divergence(SectionKind::Locals, &name, Vec::new()))
    }

    /// The first saved script store, by name, whose hash differs (or that
    /// one snapshot holds only).
    fn scripts_divergence(&self, other: &Snapshot) -> Option<Divergence> {
        let hashes = |snapshot: &Snapshot| {
            snapshot
                .script_hashes(&mut PartHasher::new())
                .unwrap_or_else(|error| panic!("a saved type failed to encode: {error}"))
                .into_iter()
                .collect::<BTreeMap<_, _>>()
        };
        let (ours, theirs) = (hashes(self), hashes(other));
        let mut names: Vec<&str> = ours.keys().chain(theirs.keys()).copied().collect();
        names.sort_unstable();
        names
            .into_iter()
            .find(|name| ours.get(name) != theirs.get(name))
            .map(|name| divergence(SectionKind::Scripts, name, Vec::new()))
    }

    fn entities_divergence(&self, other: &Snapshot) -> Option<Divergence> {
        if self.store.filled != other.store.filled {
            return Some(divergence(SectionKind::Entities, "entities", Vec::new()));
        }
        let ours = self.membership();
        let theirs = other.membership();
        let differing = differing_keys(&ours, &theirs);
        if !differing.is_empty() {
            return Some(divergence(SectionKind::Entities, "entities", differing));
        }
        // The same entities in the same archetypes and rows: the
        // allocator, or the archetypes' order.
        let view = |snapshot: &Snapshot| {
            hash_with(&mut PartHasher::new(), |hasher| {
                hasher.write(&SlotsView(&snapshot.store.slots))?;
                let order: Vec<&[Entity]> = snapshot.store.archetypes
                    [..snapshot.store.archetype_len]
                    .iter()
                    .map(|archetype| &snapshot.store.entities[archetype.entities.clone()])
                    .collect();
                hasher.write(&order)
            })
        };
        if self.store.filled && view(self) != view(other) {
            return Some(divergence(SectionKind::Entities, "entities", Vec::new()));
        }
        None
    }
}

/// The keys whose values differ, or that only one map has, in order.
fn differing_keys<V: PartialEq>(
    ours: &BTreeMap<Entity, V>,
    theirs: &BTreeMap<Entity, V>,
) -> Vec<Entity> {
    let mut keys: Vec<Entity> = ours
        .iter()
        .filter(|(entity, value)| theirs.get(entity) != Some(value))
        .map(|(entity, _)| *entity)
        .chain(theirs.keys().filter(|e| !ours.contains_key(e)).copied())
        .collect();
    keys.sort_unstable();
    keys
}

fn divergence(kind: SectionKind, name: &str, mut differing: Vec<Entity>) -> Divergence {
    let count = differing.len();
    differing.truncate(DIVERGENCE_ENTITIES);
    Divergence {
        kind,
        name: name.to_owned(),
        entities: differing,
        differing: count,
    }
}
