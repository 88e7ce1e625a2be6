//! [`Entities`]: the entity store (slots, archetypes, component columns and
//! the change tick).

use std::fmt;
use std::num::NonZeroU64;

use crate::sync::{AtomicU32, ExclusiveU32, Ordering, StaticAtomicU64};

use super::archetype::{Archetype, ArchetypeId, Archetypes, Change, DROPPED, EdgeId};
use super::bundle::{Bundle, BundleId, Bundles, SPARSE_FIELD};
use super::component::{Component, ComponentId, Components};
use super::entity::{Entity, Location, Slots};
use super::required::Required;
use super::sparse_set::SparseSet;

/// Why an operation on an entity was refused. A refused operation changes
/// nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum EntityError {
    /// The entity is not alive: it was despawned (its slot may now hold a
    /// later entity, which the stale handle never reaches).
    NoSuchEntity {
        /// The stale handle.
        entity: Entity,
    },
    /// The entity is frozen: it can never gain or lose a component.
    Frozen {
        /// The frozen entity.
        entity: Entity,
    },
    /// A [`ComponentRef`](crate::ComponentRef) was asked for a component
    /// kept in a sparse set ([`StorageType::SparseSet`](crate::StorageType::SparseSet)): it caches a table
    /// column, and a sparse component has none.
    SparseComponent {
        /// The entity.
        entity: Entity,
        /// The component's type name.
        component: &'static str,
    },
    /// The entity lacks a component the operation needs.
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The missing component's type name.
        component: &'static str,
    },
    /// A bundle names one component type twice.
    DuplicateComponent {
        /// The type named twice.
        component: &'static str,
    },
    /// A [`ComponentRef`](crate::ComponentRef) was asked for an entity that
    /// is not frozen (its component's store could change under it).
    NotFrozen {
        /// The entity.
        entity: Entity,
    },
    /// A command names an entity spawned by a command of this iteration
    /// whose spawn has not landed: it was refused, its node failed, or it
    /// lands after the command naming it.
    SpawnNotLanded {
        /// The handle.
        spawned: crate::world::Spawned,
    },
    /// A command names an entity spawned by a command of an earlier
    /// iteration or of another world (use the [`Entity`] it landed as).
    StaleSpawned {
        /// The handle.
        spawned: crate::world::Spawned,
    },
    /// A hierarchy change would make an entity its own parent
    /// ([`ChildOf`](crate::ChildOf)).
    OwnParent {
        /// The entity.
        entity: Entity,
    },
    /// A hierarchy change would close a cycle: `parent` descends from
    /// `child` (or is it), so `child` cannot become its child.
    ParentCycle {
        /// The entity that was to get a parent.
        child: Entity,
        /// The parent refused: one of `child`'s descendants.
        parent: Entity,
    },
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity { entity } => write!(f, "{entity} does not exist (despawned)"),
            Self::Frozen { entity } => {
                write!(f, "{entity} is frozen: it cannot gain or lose components")
            }
            Self::MissingComponent { entity, component } => {
                write!(f, "{entity} has no component {component}")
            }
            Self::SparseComponent { entity, component } => write!(
                f,
                "{entity}'s {component} is kept in a sparse set: a ComponentRef refers to table \
                 components only (query it, or read it with `get`)"
            ),
            Self::DuplicateComponent { component } => {
                write!(f, "a bundle names component {component} twice")
            }
            Self::NotFrozen { entity } => write!(
                f,
                "{entity} is not frozen: freeze it before referring to its components"
            ),
            Self::SpawnNotLanded { spawned } => write!(
                f,
                "{spawned} has not landed: its spawn was refused, its node failed, or it \
                 lands after this command"
            ),
            Self::StaleSpawned { spawned } => write!(
                f,
                "{spawned} is not of this iteration's commands in this world: use the entity it \
                 landed as"
            ),
            Self::OwnParent { entity } => write!(f, "{entity} cannot be its own parent"),
            Self::ParentCycle { child, parent } => write!(
                f,
                "{parent} cannot be the parent of {child}: {parent} descends from {child}, so \
                 the hierarchy would close a cycle"
            ),
        }
    }
}

impl std::error::Error for EntityError {}

/// How old a stored tick (a row's added or changed tick, a system's change
/// cursor) may grow before [`Entities::check_ticks`] moves it up: half the
/// window in which the wrapping comparison ([`Entities::is_newer`]) is
/// right, so with checks every [`TICK_CHECK_INTERVAL`] ticks no live tick
/// ever leaves that window, however long a game runs.
pub const MAX_TICK_AGE: u32 = 1 << 30;

/// How many ticks pass between two [`Entities::check_ticks`] passes.
pub const TICK_CHECK_INTERVAL: u32 = 1 << 28;

/// Source of [`StoreId`]s: every store takes the next one.
static NEXT_STORE_ID: StaticAtomicU64 = StaticAtomicU64::new(1);

/// The identity of one entity store ([`Entities::id`]): unique in the
/// process, never 0 and never reused, whatever address the store lives at
/// and whichever world holds it (a store moved into another world keeps
/// its id; a store put in its place has another). Handles that cache where
/// a store keeps something ([`ComponentRef`](crate::ComponentRef)) carry
/// the id of the store they came from and read nothing from any other.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct StoreId(NonZeroU64);

impl StoreId {
    /// The id no store ever has: `fresh` panics before it would hand out
    /// `u64::MAX`. A [`ComponentRef`](crate::ComponentRef) decoded from a
    /// save carries it until a restore binds it to the store it lands in,
    /// so it reads `None` wherever it is seen before that.
    pub(crate) const UNBOUND: StoreId = StoreId(NonZeroU64::MAX);

    /// A store id never handed out before.
    ///
    /// # Panics
    /// After 2^64 - 2 stores (never, in practice): ids are not reused.
    fn fresh() -> Self {
        let id = NEXT_STORE_ID
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |id| id.checked_add(1))
            .expect("fewer than 2^64 - 1 entity stores");
        Self(NonZeroU64::new(id).expect("store ids start at 1"))
    }

    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for StoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "store {}", self.0)
    }
}

/// When a component value was added to its entity and last changed, in the
/// store's ticks ([`Entities::tick`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ComponentTicks {
    /// The tick of the spawn or insert that added it.
    pub added: u32,
    /// The tick of the last write (insert over it, or `get_mut`).
    pub changed: u32,
}

/// The entity store: every entity's components in archetype tables.
///
/// Structural changes (spawn, despawn, insert, remove) take `&mut self`:
/// the world applies them between iterations, at the boundary, or in a
/// whole-world system, never while systems iterate (see the `column`
/// module for why that makes dense columns sound).
///
/// Invariants: every live slot's location names an archetype and a row
/// whose entity list entry is that entity, and vice versa; `tick` is the
/// latest change tick handed out: every write through `&mut` takes a fresh
/// one, and so does every run of a system with a query (its writes are
/// stamped with it and its change cursor moves to it).
#[derive(Debug)]
pub struct Entities {
    /// This store's identity, for the handles that cache its layout.
    id: StoreId,
    pub(super) slots: Slots,
    pub(super) components: Components,
    pub(super) bundles: Bundles,
    /// The components each component requires (`required.rs`).
    pub(super) required: Required,
    pub(super) archetypes: Archetypes,
    /// By component id: the sparse set of a [`StorageType::SparseSet`](crate::StorageType::SparseSet)
    /// component (`None` for a table component, or past the end).
    pub(super) sparse_sets: Vec<Option<SparseSet>>,
    /// The ids of the sparse-set components, in registration order.
    pub(super) sparse_ids: Vec<ComponentId>,
    pub(super) tick: AtomicU32,
    /// Per component id: the entities that lost it (despawned, or the
    /// component removed) and the tick, oldest first; trimmed by the world
    /// at its boundaries (`trim_removals`).
    pub(super) removed: Vec<Vec<(Entity, u32)>>,
    /// Reused for archetype lookups, so a cached move allocates nothing.
    pub(super) scratch: Vec<super::component::ComponentId>,
    /// The tick of the last [`check_ticks`](Entities::check_ticks) pass.
    pub(super) last_tick_check: u32,
}

/// Records that `entity` lost each of `components` at `tick`.
#[inline]
pub(super) fn record_removals(
    removed: &mut Vec<Vec<(Entity, u32)>>,
    components: &[ComponentId],
    entity: Entity,
    tick: u32,
) {
    for &component in components {
        if removed.len() <= component.index() {
            removed.resize_with(component.index() + 1, Vec::new);
        }
        removed[component.index()].push((entity, tick));
    }
}

/// Moves the change counter to a fresh tick through `&mut` (no atomic
/// instruction) and returns it.
pub(super) fn fresh_tick(counter: &mut AtomicU32) -> u32 {
    let tick = counter.get_exclusive().wrapping_add(1);
    counter.set_exclusive(tick);
    tick
}

impl AsRef<Entities> for Entities {
    fn as_ref(&self) -> &Entities {
        self
    }
}

impl Default for Entities {
    fn default() -> Self {
        Self::new()
    }
}

impl Entities {
    /// An empty store at tick 0.
    pub fn new() -> Self {
        let mut components = Components::new();
        // First, so its id is the constant queries test archetypes for.
        let disabled = components.register::<super::disabled::Disabled>();
        debug_assert_eq!(disabled, super::disabled::DISABLED);
        let archetypes = Archetypes::new(&components);
        Self {
            id: StoreId::fresh(),
            slots: Slots::default(),
            components,
            bundles: Bundles::default(),
            required: Required::default(),
            archetypes,
            sparse_sets: Vec::new(),
            sparse_ids: Vec::new(),
            tick: AtomicU32::new(0),
            removed: Vec::new(),
            scratch: Vec::new(),
            last_tick_check: 0,
        }
    }

    /// This store's identity: no other store, before or after, has it.
    #[inline]
    pub fn id(&self) -> StoreId {
        self.id
    }

    /// The change clock itself, for the service cells that stamp service
    /// changes from it while systems run.
    pub(crate) fn clock(&self) -> &AtomicU32 {
        &self.tick
    }

    /// The latest change tick handed out.
    pub fn tick(&self) -> u32 {
        self.tick.load(Ordering::Relaxed)
    }

    /// Moves to a fresh tick and returns it (the world does at every
    /// boundary, and every write through `&mut` does). Ticks wrap at
    /// `u32::MAX`: they are compared with wrapping arithmetic
    /// ([`is_newer`](Self::is_newer)), kept within its window by
    /// [`check_ticks`](Self::check_ticks).
    pub fn advance_tick(&mut self) -> u32 {
        fresh_tick(&mut self.tick)
    }

    /// Moves the change counter on by `by` ticks and returns the new tick,
    /// as `by` calls to [`advance_tick`](Self::advance_tick) would (for
    /// tools and tests that simulate a long run). Ticks compare right only
    /// while [`check_ticks`](Self::check_ticks) passes keep up: move on by
    /// at most [`TICK_CHECK_INTERVAL`] between two of them (a world runs
    /// one at every boundary).
    pub fn advance_ticks(&mut self, by: u32) -> u32 {
        let tick = self.tick.get_exclusive().wrapping_add(by);
        self.tick.set_exclusive(tick);
        tick
    }

    /// Keeps the ticks comparable however long the store lives: once
    /// [`TICK_CHECK_INTERVAL`] ticks have passed since the last pass, moves
    /// every row's added and changed tick older than [`MAX_TICK_AGE`] up to
    /// that age, and returns the current tick (the world then does the same
    /// to every system's change cursor with [`clamp_tick`](Self::clamp_tick));
    /// `None` when no pass was due. The world calls it at every boundary.
    ///
    /// A system that has not run for [`MAX_TICK_AGE`] ticks may then miss a
    /// change older than that; nothing newer is lost.
    pub fn check_ticks(&mut self) -> Option<u32> {
        let now = self.tick();
        if now.wrapping_sub(self.last_tick_check) < TICK_CHECK_INTERVAL {
            return None;
        }
        self.last_tick_check = now;
        for archetype in self.archetypes.iter_mut() {
            for column in archetype.columns.iter_mut() {
                column.clamp_ticks(now);
            }
        }
        for set in self.sparse_sets.iter_mut().flatten() {
            set.clamp_ticks(now);
        }
        for records in &mut self.removed {
            for (_, tick) in records.iter_mut() {
                Self::clamp_tick(tick, now);
            }
        }
        Some(now)
    }

    /// Moves `tick` up to [`MAX_TICK_AGE`] before `now` if it is older.
    #[inline]
    pub fn clamp_tick(tick: &mut u32, now: u32) {
        if now.wrapping_sub(*tick) > MAX_TICK_AGE {
            *tick = now.wrapping_sub(MAX_TICK_AGE);
        }
    }

    /// The change cursor of a reader that has never run (a new system, run
    /// condition or parallel query, or a query between iterations), for a
    /// run at `now`: the oldest tick the wrapping comparison still orders
    /// before `now`, so every stored tick reads as newer (check passes keep
    /// them all younger than [`MAX_TICK_AGE`] + [`TICK_CHECK_INTERVAL`]).
    /// A fixed cursor such as 0 would not do: once `now` is 2^31 past it,
    /// every row reads as older.
    #[inline]
    pub(crate) fn unseen_cursor(now: u32) -> u32 {
        now.wrapping_sub(i32::MAX as u32)
    }

    /// A cursor as queries compare against it: `last_run`, or
    /// [`unseen_cursor`](Self::unseen_cursor) for a reader that never ran.
    #[inline]
    pub(crate) fn cursor_for(last_run: Option<u32>, now: u32) -> u32 {
        last_run.unwrap_or_else(|| Self::unseen_cursor(now))
    }

    /// A fresh tick for one run of a system with a query: its writes are
    /// stamped with it, and its change cursor moves to it.
    pub(crate) fn run_tick(&self) -> u32 {
        self.tick.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
    }

    /// The entities that lost a `C` after `since` (despawned, or `C`
    /// removed), oldest first, among the records kept (see
    /// [`trim_removals`](Self::trim_removals)).
    pub fn removed_since<C: Component>(&self, since: u32) -> impl Iterator<Item = Entity> + '_ {
        self.components
            .id_of::<C>()
            .and_then(|id| self.removed.get(id.index()))
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(move |&&(_, tick)| Self::is_newer(tick, since))
            .map(|&(entity, _)| entity)
    }

    /// Forgets the removal records from `before` and earlier. The world
    /// does at every boundary, keeping the records of the iteration that
    /// ended and of the one before it (a reader skipped for longer misses
    /// them). Keeps the records' allocations.
    pub fn trim_removals(&mut self, before: u32) {
        for records in &mut self.removed {
            let stale = records
                .iter()
                .take_while(|&&(_, tick)| !Self::is_newer(tick, before))
                .count();
            records.drain(..stale);
        }
    }

    /// Whether `tick` came after `than` (wrapping).
    pub fn is_newer(tick: u32, than: u32) -> bool {
        (tick.wrapping_sub(than) as i32) > 0
    }

    /// The number of live entities.
    pub fn len(&self) -> usize {
        self.slots.live()
    }

    /// Whether no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `entity` is alive.
    pub fn contains(&self, entity: Entity) -> bool {
        self.slots.get(entity).is_some()
    }

    /// The component type registry.
    pub fn components(&self) -> &Components {
        &self.components
    }

    /// Every archetype, by id (including empty ones).
    pub fn archetypes(&self) -> impl ExactSizeIterator<Item = &Archetype> + '_ {
        self.archetypes.iter()
    }

    /// The archetype with this id.
    pub fn archetype(&self, id: ArchetypeId) -> Option<&Archetype> {
        self.archetypes.get(id)
    }

    /// Where `entity` lives, if it is alive: its archetype, row, and
    /// whether it is frozen.
    #[inline]
    pub(crate) fn place_of(&self, entity: Entity) -> Option<(ArchetypeId, usize, bool)> {
        let slot = self.slots.get(entity)?;
        Some((
            slot.location.archetype,
            slot.location.row as usize,
            slot.frozen,
        ))
    }

    /// Every archetype, by id (for queries).
    pub(crate) fn archetype_list(&self) -> &[Archetype] {
        self.archetypes.as_slice()
    }

    /// Whether any entity is [`Disabled`](crate::Disabled) (a look at
    /// the archetypes holding it, not at every archetype).
    #[inline]
    pub(crate) fn any_disabled(&self) -> bool {
        self.archetypes.any_disabled()
    }

    /// Where `entity` lives: its archetype and row.
    #[inline]
    pub(crate) fn location_of(&self, entity: Entity) -> Option<(&Archetype, usize)> {
        let location = self.slots.get(entity)?.location;
        let archetype = self.archetypes.get(location.archetype)?;
        Some((archetype, location.row as usize))
    }

    /// The archetype `entity` is stored in, if it is alive.
    pub fn archetype_of(&self, entity: Entity) -> Option<ArchetypeId> {
        self.slots.get(entity).map(|slot| slot.location.archetype)
    }

    /// Registers `B` and refuses it if it names a type twice; with whether
    /// `B` has no sparse-set field (read beside the duplicate check, so the
    /// table-only paths pay no second lookup to choose themselves).
    #[inline]
    fn bundle_kind<B: Bundle>(&mut self) -> Result<(BundleId, bool), EntityError> {
        let id = self.bundles.register::<B>(&mut self.components);
        let info = self.bundles.info(id);
        match info.duplicate {
            Some(component) => Err(EntityError::DuplicateComponent { component }),
            None => Ok((id, info.sparse.is_empty())),
        }
    }

    /// The archetype spawns of bundle `id` land in.
    fn spawn_archetype(&mut self, id: BundleId) -> ArchetypeId {
        if let Some(archetype) = self.bundles.info(id).spawn {
            return archetype;
        }
        let archetype = self
            .archetypes
            .get_or_create(&self.bundles.info(id).sorted, &self.components);
        self.bundles.info_mut(id).spawn = Some(archetype);
        archetype
    }

    /// Spawns an entity with the components of `bundle`.
    ///
    /// # Panics
    ///
    /// If the bundle names a component type twice (the message names it);
    /// [`try_spawn`](Self::try_spawn) returns the error instead.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.try_spawn(bundle)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Spawns an entity with the components of `bundle`, or refuses a
    /// bundle that names a type twice.
    pub fn try_spawn<B: Bundle>(&mut self, bundle: B) -> Result<Entity, EntityError> {
        let (id, table_only) = self.bundle_kind::<B>()?;
        let archetype = self.spawn_archetype(id);
        self.reserve_spawns(archetype, 1);
        // SAFETY: room for one entity was just reserved.
        let entity = unsafe { self.spawn_reserved((id, table_only), archetype, bundle) };
        self.apply_required(entity, id);
        Ok(entity)
    }

    /// Spawns one entity per bundle, reserving room once for the
    /// iterator's lower size bound (and again, doubling, whenever it runs
    /// past it).
    ///
    /// # Panics
    ///
    /// As [`spawn`](Self::spawn).
    pub fn spawn_batch<B: Bundle>(&mut self, bundles: impl IntoIterator<Item = B>) -> Vec<Entity> {
        let (id, table_only) = self
            .bundle_kind::<B>()
            .unwrap_or_else(|error| panic!("{error}"));
        let archetype = self.spawn_archetype(id);
        let requires = !self.required.is_empty();
        let bundles = bundles.into_iter();
        let mut room = bundles.size_hint().0;
        self.reserve_spawns(archetype, room);
        let mut spawned = Vec::with_capacity(room);
        for bundle in bundles {
            if room == 0 {
                room = spawned.len().max(1);
                self.reserve_spawns(archetype, room);
            }
            room -= 1;
            // SAFETY: `room` counts the entities reserved and not yet
            // spawned; it was at least one before this spawn.
            spawned.push(unsafe { self.spawn_reserved((id, table_only), archetype, bundle) });
        }
        if requires {
            self.insert_required_for(&spawned, id);
        }
        spawned
    }

    /// Makes room for `additional` spawns into `archetype`: slots, entity
    /// list, and every column (with its spare slot).
    fn reserve_spawns(&mut self, archetype: ArchetypeId, additional: usize) {
        self.slots.reserve(additional);
        self.archetypes.get_mut(archetype).reserve(additional);
    }

    /// Spawns into `archetype` (bundle `id`'s; `table_only`: it has no
    /// sparse-set field): nothing here can panic half-way.
    ///
    /// # Safety
    ///
    /// Room for this spawn was reserved ([`reserve_spawns`](Self::reserve_spawns))
    /// and not used since.
    #[inline]
    unsafe fn spawn_reserved<B: Bundle>(
        &mut self,
        (id, table_only): (BundleId, bool),
        archetype: ArchetypeId,
        bundle: B,
    ) -> Entity {
        // SAFETY: the caller's.
        unsafe {
            if table_only {
                self.spawn_into::<B, false>(id, archetype, bundle)
            } else {
                self.spawn_into::<B, true>(id, archetype, bundle)
            }
        }
    }

    /// [`spawn_reserved`](Self::spawn_reserved), for a bundle with sparse
    /// fields (`SPARSE`) or without: the table-only path compiles without
    /// the sets.
    ///
    /// # Safety
    ///
    /// As `spawn_reserved`; `SPARSE` is whether the bundle has sparse fields.
    #[inline]
    unsafe fn spawn_into<B: Bundle, const SPARSE: bool>(
        &mut self,
        id: BundleId,
        archetype: ArchetypeId,
        bundle: B,
    ) -> Entity {
        let table = self.archetypes.get_mut(archetype);
        let row = u32::try_from(table.len()).expect("fewer than 2^32 rows");
        let entity = self.slots.alloc(Location { archetype, row });
        let info = self.bundles.info(id);
        let tick = fresh_tick(&mut self.tick);
        // Room in the sets, before any value moves (`prepare` allocates; it
        // finds no value of the new entity to replace).
        if SPARSE {
            for &(_, component) in &info.sparse {
                Self::sparse_set_mut(&mut self.sparse_sets, component).prepare(entity, false, tick);
            }
        }
        table.entities.push(entity);
        let (columns, sets) = (&info.spawn_columns, &mut self.sparse_sets);
        // SAFETY: the archetype's columns are exactly the bundle's table
        // fields (`spawn_columns[i]` is field `i`'s column, the invariant of
        // `BundleInfo`), each column has reserved room (caller) and no drop
        // pending (drops are finished by every operation), so its spare
        // slot is valid for a write of the field's type; a sparse field's
        // set was prepared for the entity just above.
        unsafe {
            bundle.write(|i| match columns[i] {
                SPARSE_FIELD if SPARSE => {
                    Self::sparse_set_mut(sets, info.fields[i]).slot_ptr(entity, false)
                }
                column => table.columns[column as usize].spare_ptr(),
            });
        }
        for column in &mut table.columns {
            // SAFETY: `write` moved one value into every column's spare
            // slot (one field per column) with room reserved.
            unsafe { column.commit_spare(tick, tick) };
        }
        for &(_, component) in info.sparse.iter().filter(|_| SPARSE) {
            // SAFETY: `write` moved the field's value to `slot_ptr`.
            unsafe { Self::sparse_set_mut(sets, component).commit(entity, false, tick) };
        }
        entity
    }

    /// Despawns `entity`, dropping its components. Its row is reused: the
    /// archetype's last entity moves into it.
    ///
    /// If a component's `Drop` panics, the entity is already gone and the
    /// store consistent; the other components are still dropped.
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        let location = self
            .slots
            .free(entity)
            .ok_or(EntityError::NoSuchEntity { entity })?;
        let tick = fresh_tick(&mut self.tick);
        let table = self.archetypes.get_mut(location.archetype);
        record_removals(&mut self.removed, table.components(), entity, tick);
        let row = location.row as usize;
        for column in &mut table.columns {
            column.swap_remove_deferred(row);
        }
        if let Some(moved) = table.swap_remove_entity(row) {
            self.slots.set_row(moved, location.row);
        }
        if self.sparse_ids.is_empty() {
            table.drop_pending();
        } else {
            self.despawn_sparse(entity, location.archetype, tick);
        }
        Ok(())
    }

    /// Inserts what the components of bundle `id`, just given to `entity`,
    /// require (`required.rs`); nothing to do, and one branch, when no
    /// requirement is registered.
    #[inline]
    fn apply_required(&mut self, entity: Entity, id: BundleId) {
        if !self.required.is_empty() {
            self.insert_required_for(&[entity], id);
        }
    }

    /// [`apply_required`](Self::apply_required)'s work, out of line so
    /// the spawn and insert paths stay as small as without requirements.
    #[cold]
    #[inline(never)]
    fn insert_required_for(&mut self, entities: &[Entity], id: BundleId) {
        let given = self.bundles.info(id).fields.clone();
        for &entity in entities {
            self.insert_required(entity, &given);
        }
    }

    /// The live, unfrozen location of `entity`.
    #[inline]
    pub(super) fn movable(&self, entity: Entity) -> Result<Location, EntityError> {
        let slot = self
            .slots
            .get(entity)
            .ok_or(EntityError::NoSuchEntity { entity })?;
        if slot.frozen {
            return Err(EntityError::Frozen { entity });
        }
        Ok(slot.location)
    }

    /// Moves `entity`'s row along `edge` from its archetype to the edge's
    /// target, carrying every component both have (with its ticks) and
    /// forgetting the others (the caller has taken them); reserves room
    /// for one more row in every target column (so a caller may then write
    /// the fields the target adds); fixes both entities' locations. The new
    /// location.
    pub(super) fn move_entity(
        &mut self,
        entity: Entity,
        location: Location,
        edge: EdgeId,
    ) -> Location {
        let (edge, source, target) = self.archetypes.move_parts(location.archetype, edge);
        target.reserve(1);
        let row = location.row as usize;
        let new_row = u32::try_from(target.len()).expect("fewer than 2^32 rows");
        for (column, &to) in source.columns.iter_mut().zip(&edge.moves) {
            match to {
                DROPPED => column.swap_remove_forget(row),
                // SAFETY:
                // - `to` is the target column of this source column's
                //   component (`Edge`'s invariant), so of its type;
                // - every target column has room for a row (`reserve(1)`
                //   above) and no drop pending (every operation finishes
                //   its drops before it returns).
                to => unsafe { column.move_row_to(row, &mut target.columns[to as usize]) },
            }
        }
        target.entities.push(entity);
        if let Some(moved) = source.swap_remove_entity(row) {
            self.slots.set_row(moved, location.row);
        }
        let new = Location {
            archetype: edge.to,
            row: new_row,
        };
        self.slots.set_location(entity, new);
        new
    }

    /// Adds the components of `bundle` to `entity` (an archetype move);
    /// a component it already has is overwritten in place and marked
    /// changed. Refused for a stale or frozen entity, or a bundle naming a
    /// type twice.
    ///
    /// If an overwritten value's `Drop` panics, the insert is complete and
    /// the store consistent.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.insert_bundle::<B, true>(entity, bundle)
    }

    /// Adds the components of `bundle` that `entity` lacks, keeping (and
    /// not marking changed) those it has: the offered values of those are
    /// dropped. Refused as [`insert`](Self::insert) is.
    ///
    /// If a dropped offered value's `Drop` panics, the insert is complete
    /// and the store consistent.
    pub fn insert_if_new<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        self.insert_bundle::<B, false>(entity, bundle)
    }

    /// [`insert`](Self::insert) (`REPLACE`) or
    /// [`insert_if_new`](Self::insert_if_new).
    #[inline]
    fn insert_bundle<B: Bundle, const REPLACE: bool>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        let location = self.movable(entity)?;
        let (id, table_only) = self.bundle_kind::<B>()?;
        if table_only {
            self.insert_moving::<B, REPLACE, false>(entity, location, id, bundle);
        } else {
            self.insert_moving::<B, REPLACE, true>(entity, location, id, bundle);
        }
        self.apply_required(entity, id);
        Ok(())
    }

    /// [`insert_bundle`](Self::insert_bundle)'s work: an archetype move
    /// for the table fields the entity lacks (none when it has them all, or
    /// the bundle has none), each field written; sparse fields too when
    /// `SPARSE` (the table-only path compiles without the sets).
    #[inline]
    fn insert_moving<B: Bundle, const REPLACE: bool, const SPARSE: bool>(
        &mut self,
        entity: Entity,
        location: Location,
        id: BundleId,
        bundle: B,
    ) {
        let edge = self.archetypes.edge(
            location.archetype,
            Change::Insert,
            (id, self.bundles.info(id)),
            &self.components,
            &mut self.scratch,
        );
        let row = if self.archetypes.edge_info(edge).to == location.archetype {
            // Every field is there already: each is replaced in place,
            // through its column's spare slot.
            self.archetypes.get_mut(location.archetype).reserve(1);
            location.row
        } else {
            self.move_entity(entity, location, edge).row
        } as usize;
        let tick = fresh_tick(&mut self.tick);
        let info = self.bundles.info(id);
        let sets = &mut self.sparse_sets;
        for &(_, component) in info.sparse.iter().filter(|_| SPARSE) {
            Self::sparse_set_mut(sets, component).prepare(entity, REPLACE, tick);
        }
        let (edge, table) = self.archetypes.edge_target(edge);
        // SAFETY: for each table field, `edge.fields[i]` is its column in the
        // target (`Edge`'s invariant; one column per field, the bundle has
        // no duplicates) and every target column has room for a row and a
        // spare slot (`reserve(1)` above or in `move_entity`) with no drop
        // pending. A field the source had, replaced: `row` is the entity's
        // live row, parked and returned for the new value; kept
        // (`!REPLACE`): the spare slot, whose value `discard_spare` below
        // marks for dropping. A new field: the spare slot, which
        // `commit_spare` below makes the row. A sparse field:
        // its set, prepared for `entity` above (`SparseSet::slot_ptr`).
        unsafe {
            bundle.write(|i| {
                let field = edge.fields[i];
                if SPARSE && field.column == SPARSE_FIELD {
                    return Self::sparse_set_mut(sets, info.fields[i]).slot_ptr(entity, REPLACE);
                }
                let column = &mut table.columns[field.column as usize];
                if REPLACE && field.existed {
                    column.park_row(row, tick)
                } else {
                    column.spare_ptr()
                }
            });
        }
        for (i, field) in edge.fields.iter().enumerate() {
            if SPARSE && field.column == SPARSE_FIELD {
                // SAFETY: `write` moved the field's value to its set's
                // `slot_ptr`, right after `prepare`.
                unsafe { Self::sparse_set_mut(sets, info.fields[i]).commit(entity, REPLACE, tick) };
                continue;
            }
            let column = &mut table.columns[field.column as usize];
            if !field.existed {
                // SAFETY: `write` moved the field's value into the spare slot.
                unsafe { column.commit_spare(tick, tick) };
            } else if !REPLACE {
                // SAFETY: `write` moved the offered value into the spare
                // slot, with room reserved and no drop pending.
                unsafe { column.discard_spare() };
            }
        }
        // Only a replaced or discarded value is pending (`park_row`,
        // `discard_spare`, a set's `prepare` or `commit`); the move left
        // none.
        let table = edge.overwrites.then_some(table);
        if SPARSE {
            Self::drop_pending_with_sets(sets, &info.sparse, table);
        } else if let Some(table) = table {
            table.drop_pending();
        }
    }

    /// Removes the components of `B` from `entity` (an archetype move) and
    /// returns them. Refused, changing nothing, for a stale or frozen
    /// entity, one lacking any of them, or a bundle naming a type twice.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, EntityError> {
        let location = self.movable(entity)?;
        let (id, table_only) = self.bundle_kind::<B>()?;
        if table_only {
            self.remove_moving::<B, false>(entity, location, id)
        } else {
            self.remove_with_sparse(entity, location, id)
        }
    }

    /// [`remove`](Self::remove) of a bundle with table fields (an
    /// archetype move), and sparse fields too when `SPARSE` (each present:
    /// the caller checked; the table-only path compiles without the sets).
    #[inline]
    pub(super) fn remove_moving<B: Bundle, const SPARSE: bool>(
        &mut self,
        entity: Entity,
        location: Location,
        id: BundleId,
    ) -> Result<B, EntityError> {
        let edge = match self
            .archetypes
            .cached_edge(location.archetype, Change::Remove, id)
        {
            Some(edge) if self.archetypes.edge_info(edge).takes_all => edge,
            // Any other cached removal is a `remove_present`'s, lacking a
            // field or without any: checked as a new one is.
            Some(_) | None => {
                let source = self
                    .archetypes
                    .get(location.archetype)
                    .expect("live archetype");
                let info = self.bundles.info(id);
                if let Some(&missing) = info.sorted.iter().find(|&&c| !source.contains(c)) {
                    let component = self.components.info(missing).name();
                    return Err(EntityError::MissingComponent { entity, component });
                }
                if info.sorted.is_empty() {
                    // SAFETY: no fields: `take` reads nothing.
                    return Ok(unsafe { B::take(|_| unreachable!("a bundle without fields")) });
                }
                self.archetypes.edge(
                    location.archetype,
                    Change::Remove,
                    (id, info),
                    &self.components,
                    &mut self.scratch,
                )
            }
        };
        let tick = fresh_tick(&mut self.tick);
        let info = self.bundles.info(id);
        record_removals(&mut self.removed, &info.sorted, entity, tick);
        for &(_, component) in info.sparse.iter().filter(|_| SPARSE) {
            record_removals(&mut self.removed, &[component], entity, tick);
            Self::sparse_set_mut(&mut self.sparse_sets, component).remove_forget(entity);
        }
        self.move_entity(entity, location, edge);
        let (edge, source, _) = self.archetypes.move_parts(location.archetype, edge);
        // The table-only path looks the bundle up no more.
        let fields: &[ComponentId] = if SPARSE {
            &self.bundles.info(id).fields
        } else {
            &[]
        };
        let sets = &mut self.sparse_sets;
        // SAFETY: `edge.fields[i].column` is table field `i`'s column in
        // the source (`Edge`'s invariant for a removal). The move just
        // swap-removed the entity's row from each of them without a drop,
        // leaving its value's bytes in the spare slot, owned by nobody (no
        // drop pending): each is read once here, by the returned bundle. A
        // sparse field was removed from its set the same way above.
        let values = unsafe {
            B::take(|i| match edge.fields[i].column {
                SPARSE_FIELD if SPARSE => Self::sparse_set_mut(sets, fields[i]).taken_ptr(),
                column => source.columns[column as usize].spare_ptr(),
            })
        };
        Ok(values)
    }

    /// Removes whichever components of `B` `entity` has (an archetype
    /// move), dropping them, as Bevy's `remove` does, and returns the type
    /// names of those it lacked, in field order (empty, and not allocated,
    /// when it had them all). Refused, changing nothing, for a stale or
    /// frozen entity, or a bundle naming a type twice.
    ///
    /// If a removed value's `Drop` panics, the removal is complete and the
    /// store consistent; the other removed values are still dropped.
    pub fn remove_present<B: Bundle>(
        &mut self,
        entity: Entity,
    ) -> Result<Vec<&'static str>, EntityError> {
        let location = self.movable(entity)?;
        let (id, table_only) = self.bundle_kind::<B>()?;
        if !table_only {
            return Ok(self.remove_present_with_sparse(entity, location, id));
        }
        let edge = self.archetypes.edge(
            location.archetype,
            Change::Remove,
            (id, self.bundles.info(id)),
            &self.components,
            &mut self.scratch,
        );
        let info = self.bundles.info(id);
        let edge_info = self.archetypes.edge_info(edge);
        let absent: Vec<&'static str> = info
            .fields
            .iter()
            .zip(&edge_info.fields)
            .filter(|(_, field)| !field.existed)
            .map(|(&component, _)| self.components.info(component).name())
            .collect();
        if edge_info.to == location.archetype {
            return Ok(absent);
        }
        let tick = fresh_tick(&mut self.tick);
        let present = info
            .fields
            .iter()
            .zip(&edge_info.fields)
            .filter(|(_, field)| field.existed)
            .map(|(&component, _)| component);
        for component in present {
            record_removals(&mut self.removed, &[component], entity, tick);
        }
        self.move_entity(entity, location, edge);
        let (edge, source, _) = self.archetypes.move_parts(location.archetype, edge);
        for field in edge.fields.iter().filter(|field| field.existed) {
            // SAFETY: the move swap-removed the entity's row from this
            // source column without a drop, leaving its value in the spare
            // slot, owned by nobody, with no drop pending.
            unsafe { source.columns[field.column as usize].discard_spare() };
        }
        source.drop_pending();
        Ok(absent)
    }

    /// `entity`'s `C`, if it is alive and has one.
    pub fn get<C: Component>(&self, entity: Entity) -> Option<&C> {
        let (column, row) = self.find::<C>(entity)?;
        // SAFETY: the column of `C`'s id holds `C`s, and `row` is a live
        // row (`find`); the shared borrow of `self` keeps it in place.
        Some(unsafe { &*column.get_ptr(row).cast::<C>() })
    }

    /// `entity`'s `C`, if it is alive and has one; marks it changed at the
    /// current tick.
    pub fn get_mut<C: Component>(&mut self, entity: Entity) -> Option<&mut C> {
        let (column, row, clock) = self.column_of_mut::<C>(entity)?;
        column.set_changed(row, fresh_tick(clock));
        // SAFETY:
        // - `column_of_mut` gives the column of `C`'s id (its table's or
        //   its sparse set's), which holds `C`s, and `row`, the alive
        //   `entity`'s row in it;
        // - the exclusive borrow of `self` lasts as long as the reference,
        //   so nothing else reads or writes the value meanwhile.
        Some(unsafe { &mut *column.get_ptr(row).cast::<C>() })
    }

    /// `entity`'s `C`, to rewrite what the runtime derives from the
    /// store (a [`ComponentRef`](crate::ComponentRef)'s cached column)
    /// rather than the game's state: no changed tick is stamped. The
    /// column's version is bumped, so an incremental capture copies it.
    pub(crate) fn get_mut_unstamped<C: Component>(&mut self, entity: Entity) -> Option<&mut C> {
        let (column, row, _) = self.column_of_mut::<C>(entity)?;
        column.mark_reached();
        // SAFETY: as in `get_mut`.
        Some(unsafe { &mut *column.get_ptr(row).cast::<C>() })
    }

    /// The column holding `entity`'s `C` (its table's, or its sparse
    /// set's) and its row there, if it is alive and has one; with the
    /// change clock, for a caller that stamps the change.
    fn column_of_mut<C: Component>(
        &mut self,
        entity: Entity,
    ) -> Option<(&mut super::column::Column, usize, &mut AtomicU32)> {
        let id = self.components.id_of::<C>()?;
        let location = self.slots.get(entity)?.location;
        let (column, row) = match self.sparse_sets.get_mut(id.index()) {
            Some(Some(set)) => {
                let row = set.index_of(entity)?;
                (set.column_mut(), row)
            }
            _ => {
                let table = self.archetypes.get_mut(location.archetype);
                let column = table.column_index(id)?;
                (&mut table.columns[column], location.row as usize)
            }
        };
        Some((column, row, &mut self.tick))
    }

    /// Every entity holding a `C`: each table's rows, then its sparse set.
    pub(crate) fn holders_of<C: Component>(&self) -> Vec<Entity> {
        let Some(id) = self.components.id_of::<C>() else {
            return Vec::new();
        };
        if let Some(set) = self.sparse_set(id) {
            return set.entities().to_vec();
        }
        self.archetypes
            .iter()
            .filter(|archetype| archetype.contains(id))
            .flat_map(|archetype| archetype.entities().iter().copied())
            .collect()
    }

    /// When `entity`'s `C` was added and last changed.
    pub fn ticks<C: Component>(&self, entity: Entity) -> Option<ComponentTicks> {
        let (column, row) = self.find::<C>(entity)?;
        Some(ComponentTicks {
            added: column.added_tick(row),
            changed: column.changed_tick(row),
        })
    }

    /// The column and row of `entity`'s `C` (in its table or its set).
    fn find<C: Component>(&self, entity: Entity) -> Option<(&super::column::Column, usize)> {
        let id = self.components.id_of::<C>()?;
        let location = self.slots.get(entity)?.location;
        if let Some(set) = self.sparse_set(id) {
            return Some((set.column(), set.index_of(entity)?));
        }
        let table = self.archetypes.get(location.archetype)?;
        Some((
            &table.columns[table.column_index(id)?],
            location.row as usize,
        ))
    }

    /// Freezes `entity`: from now on it can never gain or lose a component
    /// (it can still be despawned, and its components written).
    pub fn freeze(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.slots
            .get_mut(entity)
            .ok_or(EntityError::NoSuchEntity { entity })?
            .frozen = true;
        Ok(())
    }

    /// Whether `entity` is alive and frozen.
    pub fn is_frozen(&self, entity: Entity) -> bool {
        self.slots.get(entity).is_some_and(|slot| slot.frozen)
    }

    /// The slot table's capacity and the largest column
    /// capacity of any sized component (for the churn tests).
    #[cfg(test)]
    pub(crate) fn footprint(&self) -> (usize, usize) {
        let columns = self
            .archetypes
            .iter()
            .flat_map(|a| a.columns.iter())
            .map(|c| c.capacity())
            .filter(|&c| c != usize::MAX)
            .max()
            .unwrap_or(0);
        (self.slots.slot_count(), columns)
    }

    /// Test hook: moves every free slot on to `generation`, as if reused
    /// that many times (see `Slots::age_free_slots`).
    #[cfg(test)]
    pub(crate) fn age_free_slots(&mut self, generation: std::num::NonZeroU32) {
        self.slots.age_free_slots(generation);
    }

    /// How many slots ran out of generations and are never reused.
    #[cfg(test)]
    pub(crate) fn retired_slots(&self) -> usize {
        self.slots.retired()
    }

    /// Whether `from` has a cached insert edge for bundle `B`.
    #[cfg(test)]
    pub(crate) fn has_insert_edge<B: Bundle>(&mut self, from: ArchetypeId) -> bool {
        let id = self.bundles.register::<B>(&mut self.components);
        self.archetypes
            .cached_edge(from, Change::Insert, id)
            .is_some()
    }
}
