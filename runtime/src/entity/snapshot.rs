//! The entity store's side of a [`Snapshot`](crate::Snapshot): what a
//! [`CapturedStore`] holds, how it is taken from an [`Entities`] and how it
//! is put back.
//!
//! Values are kept per component type ([`ComponentPart`]), each type's
//! rows of every archetype one after another; each captured archetype
//! records its entities and, per column, which part holds its values and
//! from where. A restore moves the values back in whole runs (one copy per
//! column), after cloning them out of the snapshot first, so nothing that
//! may panic runs while the store is half changed.
//!
//! # Incremental capture
//!
//! A capture into a snapshot that holds an earlier capture of the same
//! store ([`StoreId`](super::StoreId)) keeps a component type's part as it
//! is, without copying, when every column of that type (each archetype's
//! with rows, or its sparse set's) is the same column with the same
//! [version](super::column::Column::version) as then: a column's version
//! grows whenever a row goes in or out, a value is replaced or stamped,
//! ticks are clamped, or a writing query fetches it, and never goes back.
//! Same columns, same versions: the same rows, values and ticks, in the
//! same order, so the part holds exactly what a full copy would.

use std::any::TypeId;
use std::ops::Range;

use super::StorageType;
use super::component::ComponentId;
use super::entity::{Entity, Location, Slots};
use super::store::Entities;
use crate::snapshot::part::{ComponentPart, StagedValues};
use crate::sync::ExclusiveU32;

/// Makes an empty part for a component type opted into snapshots; `None`
/// for a type that is not.
pub(crate) type PartFor<'a> = &'a dyn Fn(TypeId) -> Option<fn() -> Box<dyn ComponentPart>>;

/// No part for this component id (in [`CapturedStore`]'s lookup).
const NO_PART: u32 = u32::MAX;
/// Not looked up yet.
const UNRESOLVED: u32 = u32::MAX - 1;
/// In a part's `seen` list, a sparse set's column (archetype ids stay
/// below it).
const SPARSE_COLUMN: u32 = u32::MAX;

/// An entity store as a snapshot holds it.
///
/// Invariants once `filled` (checked again by [`check`](Self::check)
/// before any restore, since a save may build one): every used part's
/// values and ticks have one length; per table part, the archetypes'
/// ranges of it follow one another from 0 and cover it; every entity
/// listed is alive in `slots` and listed once among the archetypes, which
/// list every live entity.
#[derive(Debug, Default)]
pub(crate) struct CapturedStore {
    /// Whether a capture finished (an empty or failed one holds nothing).
    pub(crate) filled: bool,
    pub(crate) slots: Slots,
    pub(crate) tick: u32,
    pub(crate) last_tick_check: u32,
    /// Removal records by component type; the first `removed_len` are
    /// this capture's (the rest keep their memory for the next).
    pub(crate) removed: Vec<RemovalRecords>,
    pub(crate) removed_len: usize,
    /// One entry per component type met by some capture; `used` by this one.
    pub(crate) components: Vec<CapturedComponent>,
    /// The archetypes with rows; the first `archetype_len` are this
    /// capture's.
    pub(crate) archetypes: Vec<CapturedArchetype>,
    pub(crate) archetype_len: usize,
    /// Every archetype's entities, in row order, one archetype after another.
    pub(crate) entities: Vec<Entity>,
    /// Scratch: per component id of the store captured, its part's index
    /// (or `NO_PART`, `UNRESOLVED`).
    by_component: Vec<u32>,
    /// The store the last finished capture took (`None`: none, or the
    /// snapshot was built or cleared otherwise): only a capture of that
    /// store may keep parts.
    pub(crate) origin: Option<super::StoreId>,
    /// Whether captures copy every part (incremental capture off).
    pub(crate) always_full: bool,
    /// How many parts the last capture kept without copying.
    pub(crate) kept: usize,
}

/// One component type's removal records: the entities that lost it, with
/// the tick.
#[derive(Debug)]
pub(crate) struct RemovalRecords {
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    pub(crate) records: Vec<(Entity, u32)>,
}

/// One component type's captured values.
#[derive(Debug)]
pub(crate) struct CapturedComponent {
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    pub(crate) storage: StorageType,
    pub(crate) part: Box<dyn ComponentPart>,
    /// Whether the last capture holds values of it.
    pub(crate) used: bool,
    /// A sparse component's entities, in the order of its values.
    pub(crate) sparse_entities: Vec<Entity>,
    /// The columns the values were copied from, in order, with the
    /// version each had: `(archetype id, version)`, or
    /// `(SPARSE_COLUMN, version)` for the sparse set's. Empty unless
    /// a capture filled the part.
    pub(crate) seen: Vec<(u32, u64)>,
    /// Scratch: this capture's columns, as `seen`.
    next_seen: Vec<(u32, u64)>,
    /// Scratch: where the next archetype's rows start in the part.
    cursor: usize,
    /// Scratch: this capture keeps the part as it is.
    keep: bool,
}

impl CapturedComponent {
    /// An empty entry for a part made for `type_id`.
    pub(crate) fn new(
        type_id: TypeId,
        name: &'static str,
        storage: StorageType,
        part: Box<dyn ComponentPart>,
    ) -> Self {
        Self {
            type_id,
            name,
            storage,
            part,
            used: false,
            sparse_entities: Vec::new(),
            seen: Vec::new(),
            next_seen: Vec::new(),
            cursor: 0,
            keep: false,
        }
    }
}

/// One archetype with rows.
#[derive(Debug, Default)]
pub(crate) struct CapturedArchetype {
    /// Its entities: a range of [`CapturedStore::entities`].
    pub(crate) entities: Range<usize>,
    /// Per column: the part holding its values (an index of
    /// [`CapturedStore::components`]) and where its rows start there.
    pub(crate) columns: Vec<(u32, usize)>,
}

/// What a capture could not take: the names of the component types with
/// values that are not opted in.
pub(crate) type LeftOutSink<'a> = &'a mut dyn FnMut(&'static str);

impl CapturedStore {
    /// Forgets what it holds, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.filled = false;
        self.origin = None;
        self.kept = 0;
        for component in &mut self.components {
            component.part.clear();
            component.used = false;
            component.sparse_entities.clear();
            component.seen.clear();
        }
        self.archetype_len = 0;
        self.removed_len = 0;
        self.entities.clear();
    }

    /// The number of live entities captured.
    pub(crate) fn entity_count(&self) -> usize {
        if self.filled { self.slots.live() } else { 0 }
    }

    /// The bytes of heap memory held.
    pub(crate) fn heap_bytes(&self) -> usize {
        let parts: usize = self
            .components
            .iter()
            .map(|c| c.part.heap_bytes() + c.sparse_entities.capacity() * size_of::<Entity>())
            .sum();
        let archetypes: usize = self
            .archetypes
            .iter()
            .map(|a| a.columns.capacity() * size_of::<(u32, usize)>())
            .sum::<usize>()
            + self.archetypes.capacity() * size_of::<CapturedArchetype>();
        let removed: usize = self
            .removed
            .iter()
            .map(|r| r.records.capacity() * size_of::<(Entity, u32)>())
            .sum();
        parts
            + archetypes
            + removed
            + self.slots.heap_bytes()
            + self.entities.capacity() * size_of::<Entity>()
            + self.components.capacity() * size_of::<CapturedComponent>()
            + self.by_component.capacity() * size_of::<u32>()
    }

    /// The index of the part for component `id` of `entities`, made (or
    /// found among those of earlier captures) on first need; `None` when
    /// its type is not opted in.
    fn part_of(
        &mut self,
        entities: &Entities,
        id: ComponentId,
        part_for: PartFor<'_>,
    ) -> Option<u32> {
        let index = id.index();
        if self.by_component[index] == UNRESOLVED {
            let info = entities.components.info(id);
            let found = self
                .components
                .iter()
                .position(|c| c.type_id == info.type_id() && c.storage == info.storage());
            self.by_component[index] = match found {
                Some(part) => part as u32,
                None => match part_for(info.type_id()) {
                    Some(new_part) => {
                        self.components.push(CapturedComponent::new(
                            info.type_id(),
                            info.name(),
                            info.storage(),
                            new_part(),
                        ));
                        (self.components.len() - 1) as u32
                    }
                    None => NO_PART,
                },
            };
        }
        let part = self.by_component[index];
        (part != NO_PART).then_some(part)
    }

    /// Takes `entities` as it is now, reusing this snapshot's memory: no
    /// allocation when the store's shape (its archetypes and how many rows
    /// each has) is no larger than at the last capture. Each component type
    /// with values that is not opted in goes to `left_out` (once) and its
    /// values are not captured. A part whose columns all kept the versions
    /// the last capture of this store saw is kept, not copied again (see
    /// the module).
    ///
    /// A `Clone` that panics goes on to the caller, which must
    /// [`clear`](Self::clear) the snapshot.
    pub(crate) fn capture(
        &mut self,
        entities: &Entities,
        part_for: PartFor<'_>,
        left_out: LeftOutSink<'_>,
        cloning: &std::cell::Cell<&'static str>,
    ) {
        let incremental = self.filled && !self.always_full && self.origin == Some(entities.id());
        self.filled = false;
        self.origin = None;
        self.kept = 0;
        self.archetype_len = 0;
        self.removed_len = 0;
        self.entities.clear();
        self.by_component.clear();
        self.by_component
            .resize(entities.components.len(), UNRESOLVED);
        for component in &mut self.components {
            component.next_seen.clear();
            component.cursor = 0;
        }
        // First the columns each part would copy, with their versions.
        for archetype in entities.archetypes.iter().filter(|a| !a.is_empty()) {
            for (column, &id) in archetype.columns.iter().zip(archetype.components()) {
                if let Some(part) = self.part_of(entities, id, part_for) {
                    self.components[part as usize]
                        .next_seen
                        .push((archetype.id().0, column.version()));
                }
            }
        }
        for &id in &entities.sparse_ids {
            let Some(set) = entities.sparse_set(id).filter(|s| !s.entities().is_empty()) else {
                continue;
            };
            if let Some(part) = self.part_of(entities, id, part_for) {
                self.components[part as usize]
                    .next_seen
                    .push((SPARSE_COLUMN, set.column().version()));
            }
        }
        // Then which parts hold what a copy would give (the same columns,
        // unchanged since): those are kept, the others emptied for a copy.
        for component in &mut self.components {
            component.keep = incremental
                && component.used
                && !component.next_seen.is_empty()
                && component.next_seen == component.seen;
            if !component.keep {
                component.part.clear();
                component.sparse_entities.clear();
            }
            component.used = !component.next_seen.is_empty();
            // Copied, not swapped: both lists keep their memory from the
            // first capture on (a swap would leave one empty for the
            // second, which would allocate).
            if !component.keep {
                component.seen.clear();
                component.seen.extend_from_slice(&component.next_seen);
            }
            self.kept += usize::from(component.keep);
        }
        for archetype in entities.archetypes.iter().filter(|a| !a.is_empty()) {
            let start = self.entities.len();
            self.entities.extend_from_slice(&archetype.entities);
            if self.archetype_len == self.archetypes.len() {
                self.archetypes.push(CapturedArchetype::default());
            }
            let slot = self.archetype_len;
            self.archetype_len += 1;
            self.archetypes[slot].entities = start..self.entities.len();
            self.archetypes[slot].columns.clear();
            for (column, &id) in archetype.columns.iter().zip(archetype.components()) {
                let Some(part) = self.part_of(entities, id, part_for) else {
                    left_out(entities.components.info(id).name());
                    continue;
                };
                let component = &mut self.components[part as usize];
                self.archetypes[slot].columns.push((part, component.cursor));
                component.cursor += archetype.len();
                if component.keep {
                    continue;
                }
                cloning.set(component.name);
                // SAFETY: the part was made for (or found by) the type of
                // component `id`, whose column this is.
                unsafe { component.part.capture_column(column) };
            }
        }
        for &id in &entities.sparse_ids {
            let Some(set) = entities.sparse_set(id) else {
                continue;
            };
            if set.entities().is_empty() {
                continue;
            }
            let Some(part) = self.part_of(entities, id, part_for) else {
                left_out(entities.components.info(id).name());
                continue;
            };
            let component = &mut self.components[part as usize];
            if component.keep {
                continue;
            }
            component.sparse_entities.extend_from_slice(set.entities());
            cloning.set(component.name);
            // SAFETY: the set's column holds values of component `id`'s
            // type, the part's.
            unsafe { component.part.capture_column(set.column()) };
        }
        debug_assert!(self.components.iter().all(|c| !c.keep
            || c.part.len()
                == if c.storage == StorageType::Table {
                    c.cursor
                } else {
                    c.sparse_entities.len()
                }));
        self.slots.clone_from(&entities.slots);
        self.tick = entities.tick();
        self.last_tick_check = entities.last_tick_check;
        for (id, records) in entities.removed.iter().enumerate() {
            if records.is_empty() {
                continue;
            }
            let info = entities.components.info(ComponentId(id as u32));
            if self.removed_len == self.removed.len() {
                self.removed.push(RemovalRecords {
                    type_id: info.type_id(),
                    name: info.name(),
                    records: Vec::new(),
                });
            }
            let entry = &mut self.removed[self.removed_len];
            self.removed_len += 1;
            entry.type_id = info.type_id();
            entry.name = info.name();
            entry.records.clear();
            entry.records.extend_from_slice(records);
        }
        self.origin = Some(entities.id());
        self.filled = true;
    }

    /// The parts this capture holds values in.
    pub(crate) fn used_parts(&self) -> impl Iterator<Item = &CapturedComponent> {
        self.components.iter().filter(|c| c.used)
    }

    /// Whether the captured store can be put back into `world`: every part
    /// opted in there (`opted`), of the storage `world` gives its type,
    /// and the capture consistent in itself (a save builds one too).
    pub(crate) fn check(
        &self,
        world: &Entities,
        opted: &dyn Fn(TypeId) -> bool,
    ) -> Result<(), StoreMismatch> {
        for (index, component) in self.used_parts().enumerate() {
            if self
                .used_parts()
                .take(index)
                .any(|other| other.type_id == component.type_id)
            {
                return Err(StoreMismatch::Corrupt(format!(
                    "{} has two parts",
                    component.name
                )));
            }
            if !opted(component.type_id) {
                return Err(StoreMismatch::NotOptedIn(component.name));
            }
            if let Some(id) = world.components.id_of_type(component.type_id) {
                let storage = world.components.info(id).storage();
                if storage != component.storage {
                    return Err(StoreMismatch::Storage {
                        name: component.name,
                        snapshot: component.storage,
                        world: storage,
                    });
                }
            }
            let (added, changed) = component.part.ticks();
            if added.len() != component.part.len() || changed.len() != component.part.len() {
                return Err(StoreMismatch::Corrupt(format!(
                    "{}: {} values, {} added and {} changed ticks",
                    component.name,
                    component.part.len(),
                    added.len(),
                    changed.len()
                )));
            }
            if component.storage == StorageType::SparseSet
                && component.sparse_entities.len() != component.part.len()
            {
                return Err(StoreMismatch::Corrupt(format!(
                    "{}: {} values for {} entities",
                    component.name,
                    component.part.len(),
                    component.sparse_entities.len()
                )));
            }
        }
        self.check_rows()
    }

    /// [`check`](Self::check)'s walk over the archetypes and entities.
    fn check_rows(&self) -> Result<(), StoreMismatch> {
        let corrupt = |what: String| Err(StoreMismatch::Corrupt(what));
        if self.archetype_len > self.archetypes.len() || self.removed_len > self.removed.len() {
            return corrupt(format!(
                "{} archetypes and {} removal lists used of {} and {}",
                self.archetype_len,
                self.removed_len,
                self.archetypes.len(),
                self.removed.len()
            ));
        }
        let mut next = vec![0_usize; self.components.len()];
        let mut seen = vec![false; self.components.len()];
        let mut listed = 0_usize;
        let mut alive_once = vec![false; self.slots.table_len()];
        let once = |entity: Entity, list: &mut Vec<bool>| -> bool {
            let Some(flag) = list.get_mut(entity.slot() as usize) else {
                return false;
            };
            let fresh = !*flag && self.slots.get(entity).is_some();
            *flag = true;
            fresh
        };
        for archetype in &self.archetypes[..self.archetype_len] {
            let Some(rows) = self.entities.get(archetype.entities.clone()) else {
                return corrupt(format!(
                    "an archetype's rows {:?} are out of bounds",
                    archetype.entities
                ));
            };
            seen.fill(false);
            for &(part, start) in &archetype.columns {
                let Some(component) = self.components.get(part as usize).filter(|c| c.used) else {
                    return corrupt(format!(
                        "an archetype names part {part}, which holds nothing"
                    ));
                };
                if component.storage != StorageType::Table
                    || std::mem::replace(&mut seen[part as usize], true)
                {
                    return corrupt(format!(
                        "an archetype names {} twice, or as a table column",
                        component.name
                    ));
                }
                if start != next[part as usize] || start + rows.len() > component.part.len() {
                    return corrupt(format!(
                        "{}: rows from {start} do not follow the last archetype's",
                        component.name
                    ));
                }
                next[part as usize] += rows.len();
            }
            for &entity in rows {
                if !once(entity, &mut alive_once) {
                    return corrupt(format!("{entity} is listed twice, or is not alive"));
                }
            }
            listed += rows.len();
        }
        if listed != self.slots.live() {
            return corrupt(format!(
                "{listed} entities listed of {} alive",
                self.slots.live()
            ));
        }
        for (part, component) in self.components.iter().enumerate().filter(|(_, c)| c.used) {
            if component.storage == StorageType::Table && next[part] != component.part.len() {
                return corrupt(format!(
                    "{}: {} values, {} rows",
                    component.name,
                    component.part.len(),
                    next[part]
                ));
            }
            if component.storage == StorageType::SparseSet {
                let mut in_set = vec![false; self.slots.table_len()];
                for &entity in &component.sparse_entities {
                    if !once(entity, &mut in_set) {
                        return corrupt(format!(
                            "{}: {entity} is listed twice, or is not alive",
                            component.name
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Clones every used part's values out of the snapshot, by part index
    /// (`None` for a part this capture does not use). A `Clone` that panics
    /// goes on to the caller; what was cloned is dropped.
    pub(crate) fn stage(
        &self,
        cloning: &std::cell::Cell<&'static str>,
    ) -> Vec<Option<Box<dyn StagedValues>>> {
        self.components
            .iter()
            .map(|c| {
                c.used.then(|| {
                    cloning.set(c.name);
                    c.part.stage()
                })
            })
            .collect()
    }

    /// Puts the captured store back into `world`, which [`check`](Self::check)
    /// accepted, with the values `staged` from it: every entity, archetype
    /// row, value and tick, the slot table, the change tick and the removal
    /// records as they were. The values `world` held are dropped; each
    /// `Drop` that panics is caught and named in `panics`, and the restore
    /// goes on.
    pub(crate) fn restore_into(
        &self,
        world: &mut Entities,
        mut staged: Vec<Option<Box<dyn StagedValues>>>,
        panics: &mut Vec<&'static str>,
    ) {
        // Ids in `world`, registering a type it never met (the storage was
        // checked: it cannot be refused).
        let ids: Vec<Option<ComponentId>> = self
            .components
            .iter()
            .map(|c| {
                c.used.then(|| {
                    world.components.id_of_type(c.type_id).unwrap_or_else(|| {
                        c.part
                            .register(world, c.storage)
                            .expect("the storage was checked")
                    })
                })
            })
            .collect();
        Self::empty(world, panics);
        world.slots.clone_from(&self.slots);
        for archetype in &self.archetypes[..self.archetype_len] {
            world.scratch.clear();
            world.scratch.extend(
                archetype
                    .columns
                    .iter()
                    .map(|&(part, _)| ids[part as usize].expect("a used part")),
            );
            world.scratch.sort_unstable();
            let target = world
                .archetypes
                .get_or_create(&world.scratch, &world.components);
            let rows = &self.entities[archetype.entities.clone()];
            let table = world.archetypes.get_mut(target);
            table.reserve(rows.len());
            let base = table.entities.len();
            for &(part, start) in &archetype.columns {
                let id = ids[part as usize].expect("a used part");
                let column = table
                    .column_index(id)
                    .expect("the archetype of these columns");
                let range = start..start + rows.len();
                let (added, changed) = self.components[part as usize].part.ticks();
                let values = staged[part as usize]
                    .as_mut()
                    .expect("a used part is staged");
                // SAFETY: the staged values are of the column's type (its
                // component's id was found by the part's type); room for
                // the rows was reserved above; each part's ranges follow
                // one another from 0 in archetype order (`check`), and
                // there are as many ticks as rows.
                unsafe {
                    values.move_into(
                        range.clone(),
                        &mut table.columns[column],
                        &added[range.clone()],
                        &changed[range],
                    );
                }
            }
            table.entities.extend_from_slice(rows);
            for (row, &entity) in rows.iter().enumerate() {
                let row = u32::try_from(base + row).expect("fewer than 2^32 rows");
                world.slots.set_location(
                    entity,
                    Location {
                        archetype: target,
                        row,
                    },
                );
            }
        }
        for (part, component) in self.components.iter().enumerate() {
            if !component.used || component.storage != StorageType::SparseSet {
                continue;
            }
            let id = ids[part].expect("a used part");
            let values = staged[part].as_mut().expect("a used part is staged");
            let (added, changed) = component.part.ticks();
            let set = Entities::sparse_set_mut(&mut world.sparse_sets, id);
            set.refill(&component.sparse_entities, |column| {
                // SAFETY: as for the table columns above: the set's column
                // holds the part's type, `refill` reserved room for every
                // value, and the whole range moves at once.
                unsafe { values.move_into(0..added.len(), column, added, changed) }
            });
        }
        world.tick.set_exclusive(self.tick);
        world.last_tick_check = self.last_tick_check;
        for records in &mut world.removed {
            records.clear();
        }
        for removal in &self.removed[..self.removed_len] {
            let Some(id) = world.components.id_of_type(removal.type_id) else {
                continue;
            };
            if world.removed.len() <= id.index() {
                world.removed.resize_with(id.index() + 1, Vec::new);
            }
            world.removed[id.index()].extend_from_slice(&removal.records);
        }
        // Every archetype still rests on the location its rows were given.
        debug_assert!(
            world
                .archetypes
                .iter()
                .all(|a| a.entities.iter().enumerate().all(|(row, &e)| world
                    .slots
                    .get(e)
                    .is_some_and(|s| s.location
                        == Location {
                            archetype: a.id(),
                            row: row as u32
                        })))
        );
    }

    /// Empties every table and set of `world`, dropping the values; a
    /// `Drop` that panics is caught (the column is empty and consistent
    /// by then) and its component named in `panics`.
    fn empty(world: &mut Entities, panics: &mut Vec<&'static str>) {
        let components = &world.components;
        for archetype in world.archetypes.iter_mut() {
            archetype.entities.clear();
            let ids: Vec<ComponentId> = archetype.components().to_vec();
            for (column, id) in archetype.columns.iter_mut().zip(ids) {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| column.clear()))
                    .is_err()
                {
                    panics.push(components.info(id).name());
                }
            }
        }
        for (index, set) in world.sparse_sets.iter_mut().enumerate() {
            let Some(set) = set else { continue };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| set.clear())).is_err() {
                panics.push(components.info(ComponentId(index as u32)).name());
            }
        }
    }
}

/// Why a captured store cannot go back into a world.
#[derive(Debug)]
pub(crate) enum StoreMismatch {
    /// A component type with values the world does not snapshot.
    NotOptedIn(&'static str),
    /// A component type kept one way in the snapshot, another in the world.
    Storage {
        name: &'static str,
        snapshot: StorageType,
        world: StorageType,
    },
    /// The capture contradicts itself (a damaged save).
    Corrupt(String),
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::snapshot::part::ColumnValues;

    #[derive(Clone, Debug, PartialEq)]
    struct A(u32);

    fn part_for(type_id: TypeId) -> Option<fn() -> Box<dyn ComponentPart>> {
        let make: fn() -> Box<dyn ComponentPart> = || Box::new(ColumnValues::<A>::default());
        (type_id == TypeId::of::<A>()).then_some(make)
    }

    fn captured() -> (Entities, CapturedStore) {
        let mut entities = Entities::new();
        for i in 0..4 {
            entities.spawn((A(i),));
        }
        let mut store = CapturedStore::default();
        store.capture(&entities, &part_for, &mut |_| {}, &Cell::new(""));
        (entities, store)
    }

    fn values(store: &mut CapturedStore) -> &mut ColumnValues<A> {
        let part = &mut store.components.iter_mut().find(|c| c.used).unwrap().part;
        part.as_any_mut().downcast_mut().unwrap()
    }

    /// A save builds a captured store from bytes: every way one can
    /// contradict itself is refused before anything is restored.
    #[test]
    fn a_forged_capture_is_refused() {
        let refused = |forge: fn(&mut CapturedStore)| {
            let (entities, mut store) = captured();
            assert!(store.check(&entities, &|_| true).is_ok());
            forge(&mut store);
            match store.check(&entities, &|_| true) {
                Err(StoreMismatch::Corrupt(what)) => what,
                other => panic!("{other:?}"),
            }
        };
        refused(|s| s.entities[1] = s.entities[0]);
        refused(|s| {
            let live = s.entities[3];
            s.slots.free(live);
        });
        refused(|s| s.archetypes[0].entities = 0..9);
        refused(|s| s.archetypes[0].columns[0].1 = 1);
        refused(|s| values(s).values.push(A(9)));
        refused(|s| {
            values(s).added.pop();
        });
        refused(|s| {
            let column = s.archetypes[0].columns[0];
            s.archetypes[0].columns.push(column);
        });
        refused(|s| s.archetypes[0].columns[0].0 = 7);
        refused(|s| s.archetype_len = 0);
        refused(|s| s.archetype_len = 2);
        refused(|s| s.removed_len = 1);
        refused(|s| {
            let first = &s.components[0];
            let mut twin = CapturedComponent::new(
                first.type_id,
                first.name,
                first.storage,
                part_for(TypeId::of::<A>()).unwrap()(),
            );
            twin.used = true;
            s.components.push(twin);
        });
        // Not opted in here: named, not corrupt.
        let (entities, store) = captured();
        assert!(matches!(
            store.check(&entities, &|_| false),
            Err(StoreMismatch::NotOptedIn(_))
        ));
    }

    /// Restored into a fresh store: the same ids, values and ticks.
    #[test]
    fn a_capture_restores_into_a_fresh_store() {
        let (entities, store) = captured();
        let mut fresh = Entities::new();
        let staged = store.stage(&Cell::new(""));
        let mut panics = Vec::new();
        store.restore_into(&mut fresh, staged, &mut panics);
        assert!(panics.is_empty());
        for e in entities.archetypes().flat_map(|a| a.entities().to_vec()) {
            assert_eq!(fresh.get::<A>(e), entities.get::<A>(e));
            assert_eq!(fresh.ticks::<A>(e), entities.ticks::<A>(e));
        }
        assert_eq!(fresh.len(), 4);
        assert_eq!(fresh.tick(), entities.tick());
    }
}
