//! Snapshots on disk and their checksum (the `serde` feature): what a
//! save holds and what the checksum covers are in the
//! [module's header](crate::snapshot).

use std::any::TypeId;
use std::io::{Read, Write};

use serde::ser::{SerializeSeq, SerializeTuple};
use serde::{Deserialize, Serialize, Serializer};

use super::checksum::{EncodeError, PartHasher};
use super::codec::{DecodedPart, PartCodec, Sink, encode, hash_part};
use super::file::{self, LoadError, SaveError, SaveWriter, Section, SectionKind};
use super::saves::SaveCodecs;
use super::{CapturedService, Snapshot};
use crate::entity::{
    CapturedArchetype, CapturedComponent, CapturedStore, Entity, RemovalRecords, SavedSlots,
    SlotsView, StorageType, StoreMismatch,
};
use crate::world::{SavedClocks, World};

/// The name of the entities section.
const ENTITIES: &str = "entities";
/// The name of the clocks section.
const CLOCKS: &str = "clocks";

/// The entity store of a snapshot as its entities section encodes it;
/// `with_ticks: false` is what the checksum hashes.
struct StoreView<'a> {
    snapshot: &'a Snapshot,
    with_ticks: bool,
}

/// A sequence written from an iterator whose length is counted first
/// (postcard needs the length before the elements).
struct Counted<F>(F);

impl<F, I, T> Serialize for Counted<F>
where
    F: Fn() -> I,
    I: Iterator<Item = T>,
    T: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some((self.0)().count()))?;
        for item in (self.0)() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

impl Snapshot {
    fn store(&self) -> &CapturedStore {
        &self.store
    }

    fn archetypes(&self) -> &[CapturedArchetype] {
        &self.store.archetypes[..self.store.archetype_len]
    }

    /// The codec of a captured component part, if it is saved.
    fn component_codec(&self, component: &CapturedComponent) -> Option<&dyn PartCodec> {
        self.saves
            .of_type(SectionKind::Component, component.type_id)
    }

    fn saved_services(&self) -> impl Iterator<Item = (&dyn PartCodec, &CapturedService)> {
        self.saves
            .in_name_order()
            .filter(|codec| codec.kind() == SectionKind::Service)
            .filter_map(|codec| {
                self.services[..self.service_len]
                    .iter()
                    .find(|service| service.type_id == codec.value_type())
                    .map(|service| (codec, service))
            })
    }

    fn saved_components(&self) -> impl Iterator<Item = (&dyn PartCodec, &CapturedComponent)> {
        self.saves
            .in_name_order()
            .filter(|codec| codec.kind() == SectionKind::Component)
            .filter_map(|codec| {
                self.store
                    .used_parts()
                    .find(|component| component.type_id == codec.value_type())
                    .map(|component| (codec, component))
            })
    }

    /// The type names of the parts this snapshot holds that are not
    /// registered for saving ([`World::save_component`],
    /// [`World::save_service`]), its message queues, its
    /// [`Local`](crate::Local) values of types not saved
    /// ([`World::save_local`]) and its script stores not saved (not
    /// registered with [`World::save_scripts`], or left out of the
    /// snapshot: an `async` script):
    /// they are neither saved nor covered by the
    /// [`checksum`](Self::checksum).
    pub fn not_saved(&self) -> Vec<&'static str> {
        let components = self
            .store
            .used_parts()
            .filter(|component| self.component_codec(component).is_none())
            .map(|component| component.name);
        let services = self.services[..self.service_len]
            .iter()
            .filter(|service| {
                self.saves
                    .of_type(SectionKind::Service, service.type_id)
                    .is_none()
            })
            .map(|service| service.name);
        // Message queues are never saved (a load leaves them as they are).
        let messages = self.messages[..self.messages_len]
            .iter()
            .map(|messages| messages.name);
        // Nor are `Local` values of types not saved (a node's own, put
        // back into its world only): each type named once.
        let mut locals: Vec<&'static str> = Vec::new();
        for local in &self.locals {
            if self.saves.local_of(local.type_id).is_none() && !locals.contains(&local.name) {
                locals.push(local.name);
            }
        }
        // Nor are script stores not registered for saving
        // (`World::save_scripts`), or left out of the snapshot (an `async`
        // script): a store opted in but absent has nothing to leave out.
        let scripts = self.scripts[..self.scripts_len]
            .iter()
            .filter(|scripts| {
                scripts.state == super::scripts::StoreState::LeftOut
                    || (!self.saves_store(scripts.type_id)
                        && scripts.state == super::scripts::StoreState::Captured)
            })
            .map(|scripts| scripts.name);
        components
            .chain(services)
            .chain(messages)
            .chain(locals)
            .chain(scripts)
            .collect()
    }

    /// The checksum of the saved state: the xxh3-64 of each part's
    /// fixed-width little-endian encoding (the entities, then each saved
    /// component and service by name, then each saved script store by
    /// name, then each saved local by node key and position), combined in
    /// that order by one more
    /// xxh3-64 of their hashes. Equal snapshots have equal checksums on
    /// every thread count and machine. See the [module](crate::snapshot)
    /// for what it covers and the encoding; an empty snapshot's is the
    /// xxh3-64 of nothing.
    ///
    /// # Panics
    ///
    /// When a saved type's `Serialize` panics or fails (then
    /// [`write_to`](Self::write_to) names it).
    pub fn checksum(&self) -> u64 {
        if !self.store.filled {
            return xxhash_rust::xxh3::xxh3_64(&[]);
        }
        self.part_hashes()
            .map(|parts| {
                let bytes: Vec<u8> = parts.iter().flat_map(|hash| hash.to_le_bytes()).collect();
                xxhash_rust::xxh3::xxh3_64(&bytes)
            })
            .unwrap_or_else(|error| panic!("a saved type failed to encode: {error}"))
    }

    /// The hash of each part the checksum covers, in its order.
    fn part_hashes(&self) -> Result<Vec<u64>, EncodeError> {
        let mut hasher = PartHasher::new();
        let mut parts = Vec::new();
        hasher.write(&StoreView {
            snapshot: self,
            with_ticks: false,
        })?;
        parts.push(hasher.digest());
        for (codec, component) in self.saved_components() {
            parts.push(hash_part(codec, &*component.part, &mut hasher)?);
        }
        for (codec, service) in self.saved_services() {
            parts.push(hash_part(codec, &*service.part, &mut hasher)?);
        }
        parts.extend(
            self.script_hashes(&mut hasher)?
                .into_iter()
                .map(|(_, hash)| hash),
        );
        parts.extend(
            self.local_hashes(&mut hasher)?
                .into_iter()
                .map(|(_, _, hash)| hash),
        );
        Ok(parts)
    }

    /// Writes the snapshot as a save (see the [module](crate::snapshot)):
    /// the entities, then every saved component and service, the clocks,
    /// the saved locals and script stores, then a trailing checksum of the
    /// file. Services not registered for saving
    /// are left out (a load leaves those of the world as they are).
    ///
    /// # Errors
    /// [`SaveError::Empty`], [`SaveError::Registration`],
    /// [`SaveError::NotSaved`] (component rows, or scripts of a saved
    /// store, of types not registered for saving),
    /// [`SaveError::ForeignReference`] (a saved reference made in another
    /// world), [`SaveError::UnsavedCondition`], and a saved script's failing or
    /// panicking `Serialize` before anything is written; [`SaveError::Encode`] and
    /// [`SaveError::Panicked`] naming the type whose `Serialize` failed,
    /// [`SaveError::Io`]: what was written then is not a valid save.
    pub fn write_to(&self, writer: impl Write) -> Result<(), SaveError> {
        if !self.store.filled {
            return Err(SaveError::Empty);
        }
        if !self.saves.conflicts.is_empty() {
            return Err(SaveError::Registration {
                conflicts: self.saves.conflicts.clone(),
            });
        }
        let mut unsaved: Vec<String> = self.report.left_out_components();
        unsaved.extend(
            self.store
                .used_parts()
                .filter(|component| self.component_codec(component).is_none())
                .map(|component| component.name.to_owned()),
        );
        if !unsaved.is_empty() {
            return Err(SaveError::NotSaved { names: unsaved });
        }
        self.check_foreign_refs()?;
        self.check_local_keys()?;
        let scripts = self.encode_scripts()?;
        let locals = self.has_saved_locals();
        let sections = 1
            + self.saved_components().count()
            + self.saved_services().count()
            + usize::from(self.clock.is_some())
            + usize::from(locals)
            + scripts.len();
        let mut out = SaveWriter::start(writer, sections)?;
        out.section(SectionKind::Entities, ENTITIES, |bytes| {
            encode(
                &StoreView {
                    snapshot: self,
                    with_ticks: true,
                },
                Sink(bytes),
            )
        })?;
        for (codec, component) in self.saved_components() {
            out.section(SectionKind::Component, codec.name(), |bytes| {
                codec.encode_section(&*component.part, bytes)
            })?;
        }
        for (codec, service) in self.saved_services() {
            out.section(SectionKind::Service, codec.name(), |bytes| {
                codec.encode_section(&*service.part, bytes)
            })?;
        }
        if let Some(clock) = &self.clock {
            out.section(SectionKind::Clocks, CLOCKS, |bytes| {
                encode(&SavedClocks::new(clock), Sink(bytes))
            })?;
        }
        if locals {
            out.section(SectionKind::Locals, super::local_saves::LOCALS, |bytes| {
                self.encode_locals(bytes)
            })?;
        }
        for (name, payload) in &scripts {
            out.section(SectionKind::Scripts, name, |bytes| {
                bytes.extend_from_slice(payload);
                Ok(())
            })?;
        }
        out.finish()?;
        Ok(())
    }
}

impl Snapshot {
    /// Refuses a saved reference made in another world's store
    /// ([`SaveError::ForeignReference`]).
    fn check_foreign_refs(&self) -> Result<(), SaveError> {
        let store = &self.store;
        for codec in &self.saves.refs {
            let Some(part) = store
                .components
                .iter()
                .position(|component| component.used && component.type_id == codec.type_id)
            else {
                continue;
            };
            if let Some((index, target)) =
                (codec.foreign)(&*store.components[part].part, store.origin)
            {
                let holder = entities_of(store, part)
                    .get(index)
                    .copied()
                    .flatten()
                    .unwrap_or(target);
                return Err(SaveError::ForeignReference {
                    holder,
                    target,
                    component: codec.target_name,
                });
            }
        }
        Ok(())
    }
}

impl Serialize for StoreView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let snapshot = self.snapshot;
        let store = snapshot.store();
        let name_of = |part: u32| {
            snapshot
                .component_codec(&store.components[part as usize])
                .map(|codec| codec.name())
        };
        let archetypes = Counted(|| {
            snapshot.archetypes().iter().map(|archetype| {
                (
                    Counted(|| {
                        archetype
                            .columns
                            .iter()
                            .filter_map(|&(part, _)| name_of(part))
                    }),
                    &store.entities[archetype.entities.clone()],
                )
            })
        });
        let sparse = Counted(|| {
            snapshot
                .saved_components()
                .filter(|(_, component)| component.storage == StorageType::SparseSet)
                .map(|(codec, component)| (codec.name(), &component.sparse_entities[..]))
        });
        let mut tuple = serializer.serialize_tuple(6)?;
        if self.with_ticks {
            tuple.serialize_element(&(
                store.tick,
                store.last_tick_check,
                snapshot.removal_ticks,
            ))?;
        }
        tuple.serialize_element(&SlotsView(&store.slots))?;
        tuple.serialize_element(&archetypes)?;
        tuple.serialize_element(&sparse)?;
        if self.with_ticks {
            let removed = Counted(|| {
                store.removed[..store.removed_len]
                    .iter()
                    .filter_map(|removal| {
                        snapshot
                            .saves
                            .of_type(SectionKind::Component, removal.type_id)
                            .map(|codec| (codec.name(), &removal.records[..]))
                    })
            });
            tuple.serialize_element(&removed)?;
        }
        tuple.end()
    }
}

/// The entities section, decoded (the layout [`StoreView`] writes with
/// ticks).
#[derive(Deserialize)]
struct SavedStore {
    ticks: (u32, u32, (u32, u32)),
    slots: SavedSlots,
    archetypes: Vec<(Vec<String>, Vec<Entity>)>,
    sparse: Vec<(String, Vec<Entity>)>,
    removed: Vec<(String, Vec<(Entity, u32)>)>,
}

/// The codec saved under `section`'s name, of its kind.
fn codec_for<'c>(
    saves: &'c SaveCodecs,
    section: &Section<'_>,
) -> Result<&'c dyn PartCodec, LoadError> {
    let codec = saves
        .named(section.name)
        .ok_or_else(|| LoadError::UnknownType {
            kind: section.kind,
            name: section.name.to_owned(),
        })?;
    if codec.kind() != section.kind {
        return Err(section.shape(format!(
            "saved as a {}, registered in this world as a {}",
            section.kind,
            codec.kind()
        )));
    }
    Ok(codec)
}

fn component_named<'c>(saves: &'c SaveCodecs, name: &str) -> Result<&'c dyn PartCodec, LoadError> {
    match saves.named(name) {
        Some(codec) if codec.kind() == SectionKind::Component => Ok(codec),
        Some(_) => Err(LoadError::Inconsistent {
            what: format!(
                "the entities name `{name}` as a component; this world saves a service under it"
            ),
        }),
        None => Err(LoadError::UnknownType {
            kind: SectionKind::Component,
            name: name.to_owned(),
        }),
    }
}

/// The entity of each value of the part `part` of `store`, in the part's
/// order (`None` where the store does not say, a damaged one).
fn entities_of(store: &CapturedStore, part: usize) -> Vec<Option<Entity>> {
    let component = &store.components[part];
    let mut rows = vec![None; component.part.len()];
    for (index, &entity) in component.sparse_entities.iter().enumerate() {
        if let Some(row) = rows.get_mut(index) {
            *row = Some(entity);
        }
    }
    for archetype in &store.archetypes[..store.archetype_len] {
        let entities = store
            .entities
            .get(archetype.entities.clone())
            .unwrap_or_default();
        for &(column_part, start) in &archetype.columns {
            if column_part as usize == part {
                for (offset, &entity) in entities.iter().enumerate() {
                    if let Some(row) = rows.get_mut(start + offset) {
                        *row = Some(entity);
                    }
                }
            }
        }
    }
    rows
}

/// The typed values of the part of `T` in `store`, with their entities.
fn values_of<T: crate::entity::Component + Clone>(store: &CapturedStore) -> Vec<(Entity, T)> {
    let Some(part) = store
        .components
        .iter()
        .position(|component| component.used && component.type_id == TypeId::of::<T>())
    else {
        return Vec::new();
    };
    let Some(values) = store.components[part]
        .part
        .as_any()
        .downcast_ref::<super::part::ColumnValues<T>>()
    else {
        return Vec::new();
    };
    entities_of(store, part)
        .into_iter()
        .zip(&values.values)
        .filter_map(|(entity, value)| entity.map(|entity| (entity, value.clone())))
        .collect()
}

/// A save's hierarchy must be one the runtime could have made: each
/// [`ChildOf`](crate::ChildOf) names a live parent whose
/// [`Children`](crate::Children) lists the child, and each `Children` is
/// non-empty and lists live children, once each, whose `ChildOf` names it.
fn check_hierarchy(store: &CapturedStore) -> Result<(), LoadError> {
    use std::collections::{HashMap, HashSet};
    let parents: HashMap<Entity, Entity> = values_of::<crate::ChildOf>(store)
        .into_iter()
        .map(|(child, of)| (child, of.parent()))
        .collect();
    let children = values_of::<crate::Children>(store);
    let inconsistent = |what: String| Err(LoadError::Inconsistent { what });
    let mut listed = 0;
    for (parent, list) in &children {
        if list.as_slice().is_empty() {
            return inconsistent(format!("{parent} has an empty Children"));
        }
        let mut once = HashSet::new();
        for &child in list.as_slice() {
            if !once.insert(child) || parents.get(&child) != Some(parent) {
                return inconsistent(format!(
                    "{parent}'s Children lists {child}, whose ChildOf does not name it once"
                ));
            }
        }
        listed += list.as_slice().len();
    }
    if listed != parents.len() {
        return inconsistent(format!(
            "{} entities have a ChildOf, {listed} are listed in a Children",
            parents.len()
        ));
    }
    if let Some((child, parent)) = parents
        .iter()
        .find(|(_, parent)| store.slots.get(**parent).is_none())
    {
        return inconsistent(format!("{child}'s parent {parent} is not alive"));
    }
    Ok(())
}

/// Every saved [`ComponentRef`](crate::ComponentRef) names a target the
/// runtime could have let it name (checked before anything is restored,
/// so that the restore's binding cannot fail): alive, frozen and in an
/// archetype with a table column of its `T`; or an id the slot table
/// handed out and took back (a target despawned before the save reads
/// `None` after the load, as before).
fn check_refs(store: &CapturedStore, refs: &[super::registry::RefEntry]) -> Result<(), LoadError> {
    use std::collections::HashMap;
    let archetypes = &store.archetypes[..store.archetype_len];
    // Each live entity's archetype, indexed once when a reference needs it.
    let mut archetype_of: Option<HashMap<Entity, usize>> = None;
    let handed_out = store.slots.handed_out();
    for entry in refs {
        let Some(part) = store
            .components
            .iter()
            .position(|component| component.used && component.type_id == entry.type_id)
        else {
            continue;
        };
        let targets = (entry.targets)(&*store.components[part].part);
        let holders = entities_of(store, part);
        for (holder, target) in holders.into_iter().zip(targets) {
            // A value with no entity was refused by the row counts.
            let Some(holder) = holder else { continue };
            let fault = match store.slots.get(target) {
                None if handed_out(target) => continue,
                None => super::ReferenceFault::NeverSpawned,
                Some(slot) if !slot.frozen => super::ReferenceFault::NotFrozen,
                Some(_) => {
                    let index = archetype_of.get_or_insert_with(|| {
                        archetypes
                            .iter()
                            .enumerate()
                            .flat_map(|(index, archetype)| {
                                store
                                    .entities
                                    .get(archetype.entities.clone())
                                    .unwrap_or_default()
                                    .iter()
                                    .map(move |&entity| (entity, index))
                            })
                            .collect()
                    });
                    let has_column = index.get(&target).is_some_and(|&archetype| {
                        archetypes[archetype].columns.iter().any(|&(column, _)| {
                            let component = &store.components[column as usize];
                            component.type_id == entry.target_type
                                && component.storage == StorageType::Table
                        })
                    });
                    if has_column {
                        continue;
                    }
                    super::ReferenceFault::LacksComponent
                }
            };
            return Err(LoadError::Reference {
                holder,
                target,
                component: entry.target_name,
                fault,
            });
        }
    }
    Ok(())
}

/// The index in `parts` of `codec`'s part, added on first need; its
/// storage must be the same every time.
fn part_of<'c>(
    parts: &mut Vec<(&'c dyn PartCodec, StorageType, usize)>,
    codec: &'c dyn PartCodec,
    storage: StorageType,
) -> Result<usize, LoadError> {
    if let Some(index) = parts
        .iter()
        .position(|(known, _, _)| known.name() == codec.name())
    {
        if parts[index].1 != storage {
            return Err(LoadError::Inconsistent {
                what: format!(
                    "`{}` is both a table and a sparse-set component",
                    codec.name()
                ),
            });
        }
        return Ok(index);
    }
    parts.push((codec, storage, 0));
    Ok(parts.len() - 1)
}

impl World {
    /// Reads a save written by [`Snapshot::write_to`] into a snapshot of
    /// this world's registrations (types are found by their save names);
    /// nothing in the world changes: [`restore`](Self::restore) it after,
    /// or use [`load_from`](Self::load_from). The whole save is validated
    /// first (see [`LoadError`]); a length read from it never reserves
    /// more than serde's cautious 1 MiB before the values it announces
    /// are decoded, and component values only grow as they are.
    ///
    /// # Errors
    /// Every [`LoadError`] but [`LoadError::Restore`], each naming what
    /// and where.
    pub fn read_snapshot(&self, mut reader: impl Read) -> Result<Snapshot, LoadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map_err(LoadError::Io)?;
        let sections = file::parse(&bytes)?;
        let saves = &self.snapshots.saves;
        if !saves.conflicts.is_empty() {
            return Err(LoadError::Registration {
                conflicts: saves.conflicts.clone(),
            });
        }
        let Some((entities_section, rest)) = sections.split_first() else {
            return Err(LoadError::Sections {
                what: "no entities section".to_owned(),
            });
        };
        if entities_section.kind != SectionKind::Entities {
            return Err(LoadError::Sections {
                what: format!(
                    "the first section is the {} `{}`, not the entities",
                    entities_section.kind, entities_section.name
                ),
            });
        }
        for (index, section) in rest.iter().enumerate() {
            if section.kind == SectionKind::Entities
                || rest[..index]
                    .iter()
                    .any(|other| other.kind == section.kind && other.name == section.name)
            {
                return Err(LoadError::Sections {
                    what: format!("the {} `{}` appears twice", section.kind, section.name),
                });
            }
        }
        let saved: SavedStore = postcard::from_bytes(entities_section.payload)
            .map_err(|error| entities_section.shape(error))?;
        let mut snapshot = Snapshot::new();
        snapshot.saves = saves.clone();
        let store = &mut snapshot.store;
        let (tick, last_tick_check, removal_ticks) = saved.ticks;
        store.tick = tick;
        store.last_tick_check = last_tick_check;
        snapshot.removal_ticks = removal_ticks;
        store.slots = saved
            .slots
            .to_slots()
            .map_err(|what| LoadError::Inconsistent { what })?;

        // The parts, by the order the entities first name them; each
        // component's rows, counted from the entities.
        let mut parts: Vec<(&dyn PartCodec, StorageType, usize)> = Vec::new();
        for (names, entities) in &saved.archetypes {
            let start = store.entities.len();
            store.entities.extend_from_slice(entities);
            let mut columns = Vec::with_capacity(names.len().min(entities.len().max(1)));
            for name in names {
                let codec = component_named(saves, name)?;
                let part = part_of(&mut parts, codec, StorageType::Table)?;
                columns.push((part as u32, parts[part].2));
                parts[part].2 += entities.len();
            }
            store.archetypes.push(CapturedArchetype {
                entities: start..store.entities.len(),
                columns,
            });
        }
        store.archetype_len = store.archetypes.len();
        let mut sparse_entities = Vec::new();
        for (name, entities) in saved.sparse {
            let codec = component_named(saves, &name)?;
            let part = part_of(&mut parts, codec, StorageType::SparseSet)?;
            if parts[part].2 != 0 {
                return Err(LoadError::Inconsistent {
                    what: format!("the sparse-set component `{name}` is listed twice"),
                });
            }
            parts[part].2 = entities.len();
            sparse_entities.push((part, entities));
        }

        let mut decoded: Vec<Option<DecodedPart>> = (0..parts.len()).map(|_| None).collect();
        for section in rest {
            if section.kind == SectionKind::Clocks {
                let saved: SavedClocks =
                    postcard::from_bytes(section.payload).map_err(|error| section.shape(error))?;
                snapshot.clock = Some(
                    saved
                        .into_snapshot()
                        .map_err(|what| LoadError::Inconsistent { what })?,
                );
                continue;
            }
            if section.kind == SectionKind::Locals {
                self.read_locals(section, &mut snapshot)?;
                continue;
            }
            if section.kind == SectionKind::Scripts {
                self.read_scripts(section, &mut snapshot)?;
                continue;
            }
            let codec = codec_for(saves, section)?;
            if section.kind == SectionKind::Service {
                let decoded = codec
                    .decode_section(section.payload, 1)
                    .map_err(|reason| section.shape(reason))?;
                let DecodedPart::Service(part) = decoded else {
                    unreachable!("a service codec decodes a service");
                };
                snapshot.services.push(CapturedService {
                    type_id: codec.value_type(),
                    name: codec.type_name(),
                    // A save keeps no slot versions: readers see the
                    // loaded values as changed.
                    book: None,
                    part,
                });
                continue;
            }
            let Some(index) = parts
                .iter()
                .position(|(known, _, _)| known.name() == codec.name())
            else {
                return Err(LoadError::Inconsistent {
                    what: format!(
                        "the component `{}` has values but no entity has it",
                        codec.name()
                    ),
                });
            };
            let part = codec
                .decode_section(section.payload, parts[index].2)
                .map_err(|reason| section.shape(reason))?;
            decoded[index] = Some(part);
        }
        snapshot.service_len = snapshot.services.len();

        let store = &mut snapshot.store;
        for (index, (codec, storage, _)) in parts.iter().enumerate() {
            let Some(DecodedPart::Component(part)) = decoded[index].take() else {
                return Err(LoadError::Sections {
                    what: format!("the component `{}` has rows but no section", codec.name()),
                });
            };
            let mut component =
                CapturedComponent::new(codec.value_type(), codec.type_name(), *storage, part);
            component.used = true;
            store.components.push(component);
        }
        for (part, entities) in sparse_entities {
            store.components[part].sparse_entities = entities;
        }
        for (name, records) in saved.removed {
            let codec = component_named(saves, &name)?;
            store.removed.push(RemovalRecords {
                type_id: codec.value_type(),
                name: codec.type_name(),
                records,
            });
        }
        store.removed_len = store.removed.len();
        store.filled = true;

        check_hierarchy(store)?;
        let registry = &self.snapshots;
        store
            .check(self.entities(), &|type_id: TypeId| {
                registry.component(type_id).is_some()
            })
            .map_err(|mismatch| match mismatch {
                StoreMismatch::Corrupt(what) => LoadError::Inconsistent { what },
                other => LoadError::Inconsistent {
                    what: format!("{other:?}"),
                },
            })?;
        // Against a consistent store: every live entity in one row.
        check_refs(store, &registry.refs)?;
        Ok(snapshot)
    }

    /// [`read_snapshot`](Self::read_snapshot) and
    /// [`restore`](Self::restore): the world as the save holds it. A load
    /// that fails changes nothing (a value whose `Drop` panics as the
    /// restore replaces it is the one exception, as for `restore`).
    ///
    /// # Errors
    /// As [`read_snapshot`](Self::read_snapshot), and
    /// [`LoadError::Restore`] when the restore is refused.
    pub fn load_from(&mut self, reader: impl Read) -> Result<(), LoadError> {
        let snapshot = self.read_snapshot(reader)?;
        self.restore(&snapshot).map_err(LoadError::Restore)
    }
}
