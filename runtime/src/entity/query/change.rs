//! Per-row change detection in a query's items: `&mut C` yields [`Mut<C>`],
//! which stamps its row's changed tick only when it is written through
//! (`DerefMut`), so `Changed<C>` reports exactly the rows a system wrote;
//! [`Ref<C>`] reads a row and says whether it changed or was added since
//! the system last ran; `Option<&mut C>` yields `Option<Mut<C>>`.
//!
//! A `Mut` holds the row's value, a cell for its changed tick, the run's
//! ticks and whether it was written; a `DerefMut` sets that flag, and the
//! item stores the run's tick into the cell once, when it drops. The column's changed ticks are cells because the
//! system writes them through a shared borrow of the column: the planner
//! gives it `C`'s lane gated, so no other node touches the column while it
//! runs, and the query hands each row out once per borrow.

use std::any::TypeId;
use std::ops::{Deref, DerefMut};

use crate::entity::query::data::{Lane, QueryData, ReadOnlyQueryData, lacks, values_of, within};
use crate::entity::{Archetype, Component, ComponentId, Components, Entities, Entity};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::sync::UnsafeCell;

/// The ticks one run of a system compares and stamps with: `last_run`, its
/// change cursor (the tick of its previous run, or the cursor of a reader
/// that never ran), and `this_run`, the tick its writes are stamped with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTicks {
    /// The system's change cursor: rows stamped after it are news.
    pub last_run: u32,
    /// This run's tick: what the system writes is stamped with it.
    pub this_run: u32,
}

impl RunTicks {
    /// Whether `tick` is newer than the cursor (wrapping, as
    /// [`Entities::is_newer`]).
    #[inline]
    pub fn is_new(self, tick: u32) -> bool {
        Entities::is_newer(tick, self.last_run)
    }
}

/// A component row handed out for writing by a query item `&mut C`: it
/// reads as `&C` and writes as `&mut C`, and a write (any `DerefMut`) marks
/// the row changed at this run's tick, so `Changed<C>` readers see exactly
/// the rows written. Reading through it marks nothing.
///
/// ```
/// use sluice::{Changed, Entity, Mut, NodeBuilder, Query, World};
///
/// struct Hp(u32);
///
/// let mut world = World::new();
/// let hurt = world.spawn((Hp(3),));
/// world.spawn((Hp(0),));
/// world.add_system(NodeBuilder::new("heal").system(|mut hp: Query<&mut Hp>| {
///     hp.for_each(|mut hp: Mut<Hp>| {
///         if hp.0 > 0 {
///             hp.0 += 1; // only this row is marked changed
///         }
///     });
/// }));
/// world.run_iteration()?;
/// let changed: Vec<Entity> = world
///     .query_filtered::<Entity, Changed<Hp>>()
///     .iter()
///     .collect();
/// // Both rows were added before the reader's first run; see
/// // `Mut::is_changed` and the guide for readers that ran before.
/// assert!(changed.contains(&hurt));
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub struct Mut<'w, T> {
    value: &'w mut T,
    changed: &'w UnsafeCell<u32>,
    added: u32,
    ticks: RunTicks,
    /// Whether the row was written through this item: its changed tick is
    /// stamped once, when the item drops (see `Drop`).
    written: bool,
}

impl<'w, T> Mut<'w, T> {
    /// Whether the row was added since the system last ran.
    #[inline]
    pub fn is_added(&self) -> bool {
        self.ticks.is_new(self.added)
    }

    /// Whether the row changed since the system last ran (written by
    /// another system, added, or written through this item already).
    #[inline]
    pub fn is_changed(&self) -> bool {
        // SAFETY: this item is the row's only handle (the query hands each
        // row out once per borrow, under `C`'s gated lane), and no write
        // through `self.changed` is in progress while `&self` is held.
        self.written
            || self
                .ticks
                .is_new(self.changed.with(|tick| unsafe { *tick }))
    }

    /// Marks the row changed without writing it.
    #[inline]
    pub fn set_changed(&mut self) {
        self.written = true;
    }

    /// The value, for writing without marking the row changed: a write
    /// through it is invisible to `Changed<T>` readers.
    #[inline]
    pub fn bypass_change_detection(&mut self) -> &mut T {
        self.value
    }

    /// Writes `value` only if it differs from the current one, marking the
    /// row changed only then; whether it wrote.
    #[inline]
    pub fn set_if_neq(&mut self, value: T) -> bool
    where
        T: PartialEq,
    {
        if *self.value == value {
            return false;
        }
        *self.value = value;
        self.set_changed();
        true
    }

    /// The value for the rest of `'w`, marking the row changed (the caller
    /// may write it).
    #[inline]
    pub fn into_inner(self) -> &'w mut T {
        self.stamp();
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the `&mut` read
        // out of it is the only one left (a move out of a `Drop` type).
        unsafe { std::ptr::read(&raw const this.value) }
    }

    /// Stamps the row's changed tick with this run's tick.
    #[inline]
    fn stamp(&self) {
        let tick = self.ticks.this_run;
        // SAFETY: this item is the row's only handle (see `is_changed`),
        // and nothing reads or writes the cell through it meanwhile.
        self.changed.with_mut(|changed| unsafe { *changed = tick });
    }

    /// The ticks this item compares and stamps with.
    #[inline]
    pub fn ticks(&self) -> RunTicks {
        self.ticks
    }
}

/// The row is stamped once, when the item goes, if it was written: a loop
/// body writing several fields stores the tick once, after them, rather
/// than once per `DerefMut` between the value's own loads and stores (which
/// the compiler cannot prove apart from the tick, and so reloads). An item
/// leaked with `mem::forget` marks nothing.
impl<T> Drop for Mut<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.written {
            self.stamp();
        }
    }
}

impl<T> Deref for Mut<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> DerefMut for Mut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.set_changed();
        self.value
    }
}

impl<T> AsRef<T> for Mut<'_, T> {
    #[inline]
    fn as_ref(&self) -> &T {
        self.value
    }
}

impl<T> AsMut<T> for Mut<'_, T> {
    #[inline]
    fn as_mut(&mut self) -> &mut T {
        self
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Mut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Mut").field(&self.value).finish()
    }
}

/// A component row handed out for reading, with its change ticks: a query
/// item `Ref<C>` is declared like `&C` (shared on `C`'s lane) and also says
/// whether the row changed or was added since the system last ran.
///
/// ```
/// use sluice::{NodeBuilder, Query, Ref, World};
///
/// struct Hp(u32);
///
/// let mut world = World::new();
/// world.spawn((Hp(3),));
/// world.add_system(NodeBuilder::new("watch").system(|hp: Query<Ref<Hp>>| {
///     for hp in hp.iter() {
///         // The first run sees every row as added.
///         assert!(hp.is_added() && hp.is_changed() && hp.0 == 3);
///     }
/// }));
/// world.run_iteration()?;
/// # Ok::<(), sluice::IterationError>(())
/// ```
pub struct Ref<'w, T> {
    value: &'w T,
    added: u32,
    changed: u32,
    ticks: RunTicks,
}

impl<'w, T> Ref<'w, T> {
    /// Whether the row was added since the system last ran.
    #[inline]
    pub fn is_added(&self) -> bool {
        self.ticks.is_new(self.added)
    }

    /// Whether the row changed (or was added) since the system last ran.
    #[inline]
    pub fn is_changed(&self) -> bool {
        self.ticks.is_new(self.changed)
    }

    /// The value for the rest of `'w`.
    #[inline]
    pub fn into_inner(self) -> &'w T {
        self.value
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T> AsRef<T> for Ref<'_, T> {
    #[inline]
    fn as_ref(&self) -> &T {
        self.value
    }
}

impl<T> Clone for Ref<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Ref<'_, T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Ref").field(&self.value).finish()
    }
}

/// One archetype's column of `C`, for writing: the values, their ticks,
/// and the run's ticks.
pub struct WriteFetch<'w, C> {
    data: *mut C,
    /// The column's changed ticks, one per row.
    changed: &'w [UnsafeCell<u32>],
    /// The column's added ticks, one per row.
    added: &'w [u32],
    ticks: RunTicks,
}

impl<C> Clone for WriteFetch<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for WriteFetch<'_, C> {}

impl<C> std::fmt::Debug for WriteFetch<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteFetch")
            .field("ticks", &self.ticks)
            .finish_non_exhaustive()
    }
}

impl<'w, C> WriteFetch<'w, C> {
    /// The column of the component `ids` for `archetype` (its own, or the
    /// component's set's), for writing at `ticks`.
    #[inline]
    fn new(
        ids: (ComponentId, bool),
        entities: &'w Entities,
        archetype: &'w Archetype,
        ticks: RunTicks,
    ) -> Self {
        let column = values_of(ids, entities, archetype);
        // Once per archetype rather than per stamp: the rows this fetch
        // hands out may be stamped at `this_run`, so `Changed<C>` scans
        // must not skip the column (conservative when nothing is written).
        column.raise_changed_bound(ticks.this_run);
        // Likewise once per archetype: the values may be written, so an
        // incremental snapshot must copy this column again.
        column.mark_reached();
        Self {
            data: column.data().cast::<C>(),
            changed: column.changed_cells(),
            added: column.added_ticks(),
            ticks,
        }
    }

    /// Row `row`'s item.
    ///
    /// # Safety
    /// `row` is below the column's length, the node holds `C`'s lane gated,
    /// and no other item of this row is alive.
    #[inline]
    unsafe fn item(self, row: usize) -> Mut<'w, C> {
        // SAFETY:
        // - `row` is a live row (caller): below the column's length, which
        //   is the length of both tick slices (`Column`'s invariant), and
        //   the slot holds an initialised `C`;
        // - the node holds `C`'s lane gated, so no other system touches the
        //   column while it runs, and no other item of this row is alive
        //   (caller): the `&mut` and the tick cell have one user.
        unsafe {
            Mut {
                value: &mut *self.data.add(row),
                changed: self.changed.get_unchecked(row),
                added: *self.added.get_unchecked(row),
                ticks: self.ticks,
                written: false,
            }
        }
    }
}

/// One archetype's column of `C`, for reading with its ticks.
pub struct ReadFetch<'w, C> {
    data: *const C,
    column: &'w crate::entity::column::Column,
    ticks: RunTicks,
}

impl<C> Clone for ReadFetch<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for ReadFetch<'_, C> {}

impl<C> std::fmt::Debug for ReadFetch<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadFetch")
            .field("ticks", &self.ticks)
            .finish_non_exhaustive()
    }
}

// SAFETY: declares `C` gated; `item` writes only row `row` of `C`'s column
// and its changed tick (through the `Mut` it hands out).
unsafe impl<C: Component> QueryData for &mut C {
    type Item<'w> = Mut<'w, C>;
    type Ids = (ComponentId, bool);
    type Fetch<'w> = WriteFetch<'w, C>;

    crate::entity::query::data::required_component!(gate, true, WriteFetch::item);

    unsafe fn fetch<'w>(
        ids: (ComponentId, bool),
        entities: &'w Entities,
        archetype: &'w Archetype,
        ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        WriteFetch::new(ids, entities, archetype, ticks)
    }

    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Mut<'w, C> {
        // SAFETY: forwarded from the caller: `row` is live and this row's
        // item is handed out once; the node holds `C` gated (`declare`).
        unsafe { fetch.item(row) }
    }

    #[inline]
    unsafe fn scoped<'w, R>(
        fetch: Self::Fetch<'w>,
        len: usize,
        body: impl FnOnce(Self::Fetch<'w>) -> R,
    ) -> R {
        // SAFETY: the column holds `len` initialised `C`s from `fetch.data`
        // (the archetype's length, caller), and no other reference to one
        // exists for the call (caller): the items `body` hands out are made
        // from the slice's own pointer.
        let column = unsafe { std::slice::from_raw_parts_mut(fetch.data, len) };
        within(column, |column| {
            body(WriteFetch {
                data: column.as_mut_ptr(),
                ..fetch
            })
        })
    }
}

// SAFETY: declares `C` gated, as `&mut C`, for the archetypes that have
// `C`; `item` writes as `&mut C` does.
unsafe impl<C: Component> QueryData for Option<&mut C> {
    type Item<'w> = Option<Mut<'w, C>>;
    type Ids = Option<(ComponentId, bool)>;
    type Fetch<'w> = Option<WriteFetch<'w, C>>;

    crate::entity::query::data::optional_component!(gate, true, WriteFetch::item);

    unsafe fn fetch<'w>(
        ids: Option<(ComponentId, bool)>,
        entities: &'w Entities,
        archetype: &'w Archetype,
        ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        ids.filter(|&(id, sparse)| sparse || archetype.contains(id))
            .map(|ids| WriteFetch::new(ids, entities, archetype, ticks))
    }

    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Option<Mut<'w, C>> {
        // SAFETY: as for `&mut C`, for an archetype with the column.
        fetch.map(|fetch| unsafe { fetch.item(row) })
    }
}

// SAFETY: declares `C` shared, as `&C`; `item` reads row `row` of `C`'s
// column and its ticks.
unsafe impl<C: Component> QueryData for Ref<'_, C> {
    type Item<'w> = Ref<'w, C>;
    type Ids = (ComponentId, bool);
    type Fetch<'w> = ReadFetch<'w, C>;

    crate::entity::query::data::required_component!(read, false, Self::item);

    unsafe fn fetch<'w>(
        ids: (ComponentId, bool),
        entities: &'w Entities,
        archetype: &'w Archetype,
        ticks: RunTicks,
    ) -> Self::Fetch<'w> {
        let column = values_of(ids, entities, archetype);
        ReadFetch {
            data: column.data().cast::<C>(),
            column,
            ticks,
        }
    }

    #[inline]
    unsafe fn item<'w>(fetch: Self::Fetch<'w>, row: usize) -> Ref<'w, C> {
        // SAFETY: `row` is a live row of the column (caller), which holds
        // initialised `C`s; the lane is read shared, so no `&mut` to the
        // value and no write of its ticks happens while the node runs.
        let value = unsafe { &*fetch.data.add(row) };
        Ref {
            value,
            added: fetch.column.added_tick(row),
            changed: fetch.column.changed_tick(row),
            ticks: fetch.ticks,
        }
    }
}

// SAFETY: `Ref<C>` hands out shared references only.
unsafe impl<C: Component> ReadOnlyQueryData for Ref<'_, C> {}
