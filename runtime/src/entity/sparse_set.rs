//! Sparse-set storage ([`StorageType::SparseSet`](super::StorageType)): one
//! component's values beside the archetype tables, for components that come
//! and go every frame.
//!
//! A sparse set is a dense [`Column`] of values (with their added and
//! changed ticks, as a table column has) and, by entity slot, the index of
//! the entity's value in it. Adding or removing the component touches this
//! set only: the entity keeps its archetype and its table row, so nothing
//! else moves (bevy moves the entity to another archetype that shares its
//! table; sluice's archetype *is* its table, so the set's components are
//! not part of the archetype at all). A query naming a sparse component
//! visits the archetypes its other terms allow and looks each row's entity
//! up here ([`RowIndex`]).
//!
//! Removal reuses the column's panic safety: a value leaving the set waits
//! in the column's spare slot until the store's bookkeeping is done
//! (`drop_pending`), so a panicking `Drop` leaves the set consistent and
//! drops nothing twice.

use super::archetype::{Archetype, ArchetypeId, Change};
use super::bundle::{Bundle, BundleId};
use super::column::{Column, each_even_if_one_panics};
use super::component::{Component, ComponentError, ComponentId, ComponentInfo, StorageType};
use super::entity::{Entity, Location};
use super::store::{Entities, EntityError, fresh_tick, record_removals};

/// One sparse component's values, by entity.
///
/// Invariants: `entities.len()` equals the column's row count, and row `i`
/// of `dense` is `entities[i]`'s value; `sparse[e.slot()] == i + 1` for
/// every `entities[i] == e`, and every other entry of `sparse` is 0 (a slot
/// whose entity has no value, or whose entity is another generation than
/// the one stored: [`index_of`](Self::index_of) compares the whole handle).
#[derive(Debug)]
pub struct SparseSet {
    sparse: Vec<u32>,
    dense: Column,
    entities: Vec<Entity>,
}

impl SparseSet {
    /// An empty set for the component `info` describes.
    pub(crate) fn new(info: &ComponentInfo) -> Self {
        Self {
            sparse: Vec::new(),
            dense: Column::new(info),
            entities: Vec::new(),
        }
    }

    /// How many entities have a value.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// The row of `entity`'s value, if it has one.
    #[inline]
    pub(crate) fn index_of(&self, entity: Entity) -> Option<usize> {
        let index = (*self.sparse.get(entity.slot() as usize)? as usize).checked_sub(1)?;
        (self.entities.get(index) == Some(&entity)).then_some(index)
    }

    /// The column of values.
    #[inline]
    pub(crate) fn column(&self) -> &Column {
        &self.dense
    }

    /// The column of values, mutably.
    #[inline]
    pub(crate) fn column_mut(&mut self) -> &mut Column {
        &mut self.dense
    }

    /// Whether `entity` has a value here.
    #[inline]
    pub(crate) fn contains(&self, entity: Entity) -> bool {
        self.index_of(entity).is_some()
    }

    /// The entities with a value, in the order of their values.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// Makes room for a value of `entity`, allocating here, before any
    /// value moves, so [`commit`](Self::commit) cannot fail. When the
    /// entity has a value and `replace` is set, that value is parked
    /// (pending its drop) and its row marked changed at `tick`.
    ///
    /// The caller then writes the new value to
    /// [`slot_ptr`](Self::slot_ptr) (with the same `replace`), calls
    /// [`commit`](Self::commit), and [`drop_pending`](Self::drop_pending)
    /// once every table and set it changes is consistent, with nothing
    /// else done to the set in between.
    pub(crate) fn prepare(&mut self, entity: Entity, replace: bool, tick: u32) {
        self.dense.reserve(1);
        self.entities.reserve(1);
        let slot = entity.slot() as usize;
        if self.sparse.len() <= slot {
            self.sparse.resize(slot + 1, 0);
        }
        if let Some(row) = self.index_of(entity).filter(|_| replace) {
            // SAFETY: `row < len`; room was reserved just above and no drop
            // is pending (every operation finishes its drops).
            unsafe { self.dense.park_row(row, tick) };
        }
    }

    /// Where the value [`prepare`](Self::prepare)d for `entity` goes: its
    /// row when it replaces one, else the spare slot (a new value, or one
    /// offered and not kept).
    ///
    /// # Safety
    ///
    /// `prepare(entity, replace, ..)` was the last thing done to the set.
    #[inline]
    pub(crate) unsafe fn slot_ptr(&mut self, entity: Entity, replace: bool) -> *mut u8 {
        match self.index_of(entity) {
            Some(row) if replace => self.dense.get_ptr(row),
            // SAFETY: `prepare` reserved room and, not replacing, left no
            // drop pending (caller).
            _ => unsafe { self.dense.spare_ptr() },
        }
    }

    /// Finishes an insert: a new value becomes `entity`'s row, added and
    /// changed at `tick`; a replaced one's old value, or a value offered
    /// and not kept (`!replace`), stays pending for
    /// [`drop_pending`](Self::drop_pending).
    ///
    /// # Safety
    ///
    /// A value of the set's type was written to `slot_ptr(entity, replace)`
    /// after `prepare(entity, replace, ..)`, and nothing else was done to
    /// the set.
    pub(crate) unsafe fn commit(&mut self, entity: Entity, replace: bool, tick: u32) {
        match self.index_of(entity) {
            Some(_) if replace => {}
            // SAFETY: the offered value was moved into the spare slot, with
            // room reserved and no drop pending (caller).
            Some(_) => unsafe { self.dense.discard_spare() },
            None => {
                // SAFETY: the value was moved into the spare slot after
                // `prepare` reserved room (caller).
                unsafe { self.dense.commit_spare(tick, tick) };
                self.entities.push(entity);
                let row = u32::try_from(self.entities.len()).expect("fewer than 2^32 rows");
                self.sparse[entity.slot() as usize] = row;
            }
        }
    }

    /// Removes `entity`'s value from the set without dropping it: its bytes
    /// wait in the column's spare slot ([`taken_ptr`](Self::taken_ptr)) for
    /// the caller to take. Whether it had one.
    pub(crate) fn remove_forget(&mut self, entity: Entity) -> bool {
        self.remove_with(entity, Column::swap_remove_forget)
    }

    /// Removes `entity`'s value, parking it pending
    /// [`drop_pending`](Self::drop_pending). Whether it had one.
    pub(crate) fn remove_deferred(&mut self, entity: Entity) -> bool {
        self.remove_with(entity, Column::swap_remove_deferred)
    }

    /// Swap-removes `entity`'s row: the column's half with `remove`, then
    /// the entity list and the index. Whether it had one.
    fn remove_with(&mut self, entity: Entity, remove: fn(&mut Column, usize)) -> bool {
        let Some(row) = self.index_of(entity) else {
            return false;
        };
        remove(&mut self.dense, row);
        self.entities.swap_remove(row);
        self.sparse[entity.slot() as usize] = 0;
        if let Some(&moved) = self.entities.get(row) {
            self.sparse[moved.slot() as usize] = u32::try_from(row + 1).expect("fewer rows");
        }
        true
    }

    /// The value [`remove_forget`](Self::remove_forget) left behind.
    ///
    /// # Safety
    ///
    /// `remove_forget` returned `true` and nothing touched the set since;
    /// the caller takes the value (reads it once) or leaks it.
    #[inline]
    pub(crate) unsafe fn taken_ptr(&mut self) -> *mut u8 {
        // SAFETY: the swap-remove left `len < capacity` and no drop
        // pending, the removed value's bytes in the spare slot (caller).
        unsafe { self.dense.spare_ptr() }
    }

    /// Drops a value a removal left pending, if any.
    pub(crate) fn drop_pending(&mut self) {
        self.dense.drop_pending();
    }

    /// Moves every tick older than the store's `MAX_TICK_AGE` before `now`
    /// up to that age.
    pub(crate) fn clamp_ticks(&mut self, now: u32) {
        self.dense.clamp_ticks(now);
    }

    /// Empties the set, dropping every value. The index and the entity
    /// list are emptied first, so a `Drop` that panics leaves an empty,
    /// consistent set (the panic goes on to the caller).
    pub(crate) fn clear(&mut self) {
        self.entities.clear();
        self.sparse.fill(0);
        self.dense.clear();
    }

    /// Fills an empty set (a snapshot's restore): `fill` appends one value
    /// per entity of `entities` to the column, in that order, with room
    /// reserved for them; the index is rebuilt.
    ///
    /// # Panics
    ///
    /// If `fill` did not append exactly `entities.len()` values (the set
    /// is then emptied again, leaking nothing it was not given).
    pub(crate) fn refill(&mut self, entities: &[Entity], fill: impl FnOnce(&mut Column)) {
        debug_assert!(self.entities.is_empty() && self.dense.row_count() == 0);
        self.dense.reserve(entities.len());
        fill(&mut self.dense);
        if self.dense.row_count() != entities.len() {
            self.dense.clear();
            panic!("a sparse set refilled with another number of values than entities");
        }
        self.entities.extend_from_slice(entities);
        let end = entities
            .iter()
            .map(|e| e.slot() as usize + 1)
            .max()
            .unwrap_or(0);
        if self.sparse.len() < end {
            self.sparse.resize(end, 0);
        }
        for (row, entity) in entities.iter().enumerate() {
            self.sparse[entity.slot() as usize] = u32::try_from(row + 1).expect("fewer rows");
        }
    }
}

/// The store's side of sparse-set storage: registering a sparse component,
/// and the inserts, removals and despawns that touch sets.
impl Entities {
    /// Chooses where `T`'s values are kept ([`StorageType`]), registering
    /// `T`. Call it before `T` is first spawned, inserted or named in a
    /// bundle: from then on its storage is fixed. Registering `T` again with
    /// the storage it has changes nothing.
    ///
    /// # Errors
    /// [`ComponentError::StorageAlreadyChosen`] when `T` is registered
    /// already with the other storage (registering it, spawning or
    /// inserting it, or a bundle naming it, chose table storage); nothing
    /// changes.
    pub fn register_component<T: Component>(
        &mut self,
        storage: StorageType,
    ) -> Result<ComponentId, ComponentError> {
        let (id, new) = self.components.register_with::<T>(storage)?;
        if new && storage == StorageType::SparseSet {
            if self.sparse_sets.len() <= id.index() {
                self.sparse_sets.resize_with(id.index() + 1, || None);
            }
            self.sparse_sets[id.index()] = Some(SparseSet::new(self.components.info(id)));
            self.sparse_ids.push(id);
        }
        Ok(id)
    }

    /// The sparse set of component `id`, if it is kept in one.
    #[inline]
    pub(crate) fn sparse_set(&self, id: ComponentId) -> Option<&SparseSet> {
        self.sparse_sets.get(id.index())?.as_ref()
    }

    /// The sparse set of a component a bundle lists as sparse.
    #[inline]
    pub(super) fn sparse_set_mut(
        sets: &mut [Option<SparseSet>],
        id: ComponentId,
    ) -> &mut SparseSet {
        sets[id.index()]
            .as_mut()
            .expect("a sparse component has a set")
    }

    /// Drops what an insert left pending: `table`'s replaced or discarded
    /// values, if given, and each of the `sparse` fields' sets', all of
    /// them even if one `Drop` panics, once every table and set is
    /// consistent.
    pub(super) fn drop_pending_with_sets(
        sets: &mut [Option<SparseSet>],
        sparse: &[(u32, ComponentId)],
        mut table: Option<&mut Archetype>,
    ) {
        each_even_if_one_panics(sparse.len() + 1, |i| match i.checked_sub(1) {
            None => {
                if let Some(table) = table.as_deref_mut() {
                    table.drop_pending();
                }
            }
            Some(field) => Self::sparse_set_mut(sets, sparse[field].1).drop_pending(),
        });
    }

    /// Whether `entity` (alive) has the component `id`, in its table or
    /// its set.
    pub(crate) fn has_component(&self, entity: Entity, id: ComponentId) -> bool {
        match self.sparse_set(id) {
            Some(set) => set.contains(entity),
            None => self
                .archetype_of(entity)
                .and_then(|archetype| self.archetype(archetype))
                .is_some_and(|archetype| archetype.contains(id)),
        }
    }

    /// [`remove_present`](Entities::remove_present) of a bundle with
    /// sparse fields: the sparse fields the entity has leave their sets,
    /// the table fields it has leave with an archetype move; everything
    /// removed is dropped once both are consistent. The absent fields'
    /// names, in field order.
    pub(super) fn remove_present_with_sparse(
        &mut self,
        entity: Entity,
        location: Location,
        id: BundleId,
    ) -> Vec<&'static str> {
        let info = self.bundles.info(id);
        let absent: Vec<&'static str> = info
            .fields
            .iter()
            .filter(|&&c| !self.has_component(entity, c))
            .map(|&c| self.components.info(c).name())
            .collect();
        if absent.len() == info.fields.len() {
            return absent;
        }
        let tick = fresh_tick(&mut self.tick);
        for &(_, component) in &info.sparse {
            if Self::sparse_set_mut(&mut self.sparse_sets, component).remove_deferred(entity) {
                record_removals(&mut self.removed, &[component], entity, tick);
            }
        }
        let edge = self.archetypes.edge(
            location.archetype,
            Change::Remove,
            (id, info),
            &self.components,
            &mut self.scratch,
        );
        let moves = self.archetypes.edge_info(edge).to != location.archetype;
        if moves {
            let (fields, edge_fields) = (&info.fields, &self.archetypes.edge_info(edge).fields);
            for (&component, field) in fields.iter().zip(edge_fields.iter()) {
                if field.existed {
                    record_removals(&mut self.removed, &[component], entity, tick);
                }
            }
            self.move_entity(entity, location, edge);
        }
        let (edge, source) = self.archetypes.edge_source(location.archetype, edge);
        if moves {
            for field in edge.fields.iter().filter(|field| field.existed) {
                // SAFETY: the move swap-removed the entity's row from this
                // source column without a drop, leaving its value in the
                // spare slot, owned by nobody, with no drop pending.
                unsafe { source.columns[field.column as usize].discard_spare() };
            }
        }
        let sparse = &self.bundles.info(id).sparse;
        Self::drop_pending_with_sets(&mut self.sparse_sets, sparse, moves.then_some(source));
        absent
    }

    /// [`remove`](Entities::remove) of a bundle with sparse fields:
    /// refused, changing nothing, when the entity lacks one; the entity
    /// keeps its archetype when every field is sparse.
    pub(super) fn remove_with_sparse<B: Bundle>(
        &mut self,
        entity: Entity,
        location: Location,
        id: BundleId,
    ) -> Result<B, EntityError> {
        let info = self.bundles.info(id);
        let sets = &mut self.sparse_sets;
        let absent = info
            .sparse
            .iter()
            .find(|&&(_, c)| Self::sparse_set_mut(sets, c).index_of(entity).is_none());
        if let Some(&(_, missing)) = absent {
            let component = self.components.info(missing).name();
            return Err(EntityError::MissingComponent { entity, component });
        }
        if !info.sorted.is_empty() {
            return self.remove_moving::<B, true>(entity, location, id);
        }
        let tick = fresh_tick(&mut self.tick);
        for &(_, component) in &info.sparse {
            record_removals(&mut self.removed, &[component], entity, tick);
            Self::sparse_set_mut(sets, component).remove_forget(entity);
        }
        // SAFETY: every field is sparse and was just removed from its set
        // without a drop (one set per field: no duplicates), its bytes left
        // in the set's spare slot for `take` to own.
        Ok(unsafe { B::take(|i| Self::sparse_set_mut(sets, info.fields[i]).taken_ptr()) })
    }

    /// [`despawn`](Entities::despawn)'s sparse half, once the entity's slot
    /// is free and its table row removed (its values pending in `archetype`'s
    /// columns): removes its values from every set, then drops everything
    /// pending, all of it even if one `Drop` panics.
    pub(super) fn despawn_sparse(&mut self, entity: Entity, archetype: ArchetypeId, tick: u32) {
        for &component in &self.sparse_ids {
            if Self::sparse_set_mut(&mut self.sparse_sets, component).remove_deferred(entity) {
                record_removals(&mut self.removed, &[component], entity, tick);
            }
        }
        let (table, sets, ids) = (
            self.archetypes.get_mut(archetype),
            &mut self.sparse_sets,
            &self.sparse_ids,
        );
        each_even_if_one_panics(ids.len() + 1, |i| match i.checked_sub(1) {
            None => table.drop_pending(),
            Some(set) => Self::sparse_set_mut(sets, ids[set]).drop_pending(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::Entities;
    use crate::sync::{Arc, AtomicUsize, Ordering};

    struct Counted(Arc<AtomicUsize>, u32);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn insert(set: &mut SparseSet, entity: Entity, value: Counted, tick: u32) {
        set.prepare(entity, true, tick);
        // SAFETY: right after `prepare`; a `Counted` set.
        unsafe {
            set.slot_ptr(entity, true).cast::<Counted>().write(value);
            set.commit(entity, true, tick);
        }
        set.drop_pending();
    }

    fn value(set: &SparseSet, entity: Entity) -> Option<u32> {
        let row = set.index_of(entity)?;
        // SAFETY: a live row of a `Counted` set.
        Some(unsafe { (*set.column().get_ptr(row).cast::<Counted>()).1 })
    }

    #[test]
    fn insert_replace_remove_and_drop_each_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut store = Entities::new();
        let n = if cfg!(miri) { 8 } else { 200 };
        let entities: Vec<_> = (0..n).map(|_| store.spawn(())).collect();
        let mut set = SparseSet::new(&ComponentInfo::of::<Counted>());
        for (i, &e) in entities.iter().enumerate() {
            insert(&mut set, e, Counted(drops.clone(), i as u32), 1);
        }
        insert(&mut set, entities[3], Counted(drops.clone(), 1000), 2);
        assert_eq!(drops.load(Ordering::Relaxed), 1, "the replaced value");
        assert_eq!(value(&set, entities[3]), Some(1000));
        assert_eq!(set.column().changed_tick(3), 2);
        assert_eq!(set.column().added_tick(3), 1);
        assert!(set.remove_deferred(entities[0]));
        set.drop_pending();
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        assert!(set.remove_forget(entities[1]));
        // SAFETY: `remove_forget` just left entity 1's value there.
        let taken = unsafe { set.taken_ptr().cast::<Counted>().read() };
        assert_eq!(taken.1, 1);
        drop(taken);
        assert!(!set.remove_forget(entities[1]), "removed already");
        assert_eq!(value(&set, entities[0]), None);
        assert_eq!(value(&set, entities[n - 1]), Some(n as u32 - 1));
        assert_eq!(set.len(), n - 2);
        drop(set);
        assert_eq!(drops.load(Ordering::Relaxed), n + 1, "each value once");
    }

    #[test]
    fn a_later_generation_of_the_slot_finds_nothing() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut store = Entities::new();
        let old = store.spawn(());
        let mut set = SparseSet::new(&ComponentInfo::of::<Counted>());
        insert(&mut set, old, Counted(drops.clone(), 7), 1);
        store.despawn(old).unwrap();
        let new = store.spawn(());
        assert_eq!(new.slot(), old.slot());
        assert_eq!(value(&set, new), None);
        assert!(!set.remove_deferred(new));
        assert_eq!(value(&set, old), Some(7));
    }
}
