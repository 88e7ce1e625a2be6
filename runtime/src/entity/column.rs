//! A type-erased dense column: one component's values for the rows of one
//! archetype, with their change ticks.
//!
//! # Why a dense column and not `LockOnResizeArray`
//!
//! `sluice_collections::LockOnResizeArray` exists so that appends can
//! overlap readers: a writer claims a slot atomically while other threads
//! read, and only growth takes a lock. Entity storage never needs that. Every
//! structural change (spawn, despawn, insert, remove: anything that appends
//! a row to a column or moves or removes one) goes through `&mut Entities`,
//! which exists only between iterations, at the boundary where `Commands`
//! are applied in record order, or inside a whole-world system that holds
//! the world alone. While systems iterate they hold `&Entities` (and reach
//! columns through the lanes the planner orders), so no append can overlap
//! a reader, and the borrow checker proves it. That phase boundary is what
//! makes the plain dense column sound, and it buys what the queries need:
//! one contiguous allocation per column (rows are indices, iteration is a
//! slice walk and splits into chunk slices for parallel iteration), no
//! atomic slot claim per append and no chunk indirection per read.
//!
//! # Panic safety
//!
//! A value leaving the column is first moved into the *spare slot*, the slot
//! at index `len` (it is within capacity and outside the live rows), and
//! marked pending; the caller finishes its bookkeeping and then calls
//! [`Column::drop_pending`]. So a `Drop` that panics runs only after every
//! table is consistent again, and the pending flag is cleared before the
//! drop runs, so the value is never dropped twice.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use super::component::ComponentInfo;
use crate::sync::UnsafeCell;

/// One component's values for the rows of an archetype.
///
/// Invariants:
/// - `data` is an allocation of `capacity` values of `item` (or dangling and
///   aligned to `item` when `capacity` is 0 or the type is zero-sized; a
///   zero-sized column has `capacity == usize::MAX` and never allocates);
///   the column owns it, unless `in_block` is set: then it is a part of a
///   [`ColumnBlock`] that its archetype owns, frees after the column, and
///   grows only through [`reserve_together`];
/// - rows `0..len` hold initialised values, owned by the column;
/// - when `pending` is set, `len < capacity` and the spare slot `len` holds
///   one initialised value waiting to be dropped; otherwise the slots from
///   `len` on are logically uninitialised;
/// - `added.len() == changed.len() == len`: the ticks of row `i` are
///   `added[i]` and `changed[i]`, and they move with the row. `changed` is
///   in cells so that a query writing this column's values through a shared
///   `&Column` (the planner gives its system the column's lane alone) can
///   stamp the rows it hands out;
/// - no row's changed tick is newer than `changed_bound` (by
///   [`Entities::is_newer`](super::Entities::is_newer)): a `Changed<T>`
///   scan skips the column whole when the bound is not newer than its
///   cursor. Every path that stamps a row raises the bound first (a
///   writing query when it fetches the column, so its rows' stamps stay
///   per row and cost nothing more).
pub(crate) struct Column {
    item: Layout,
    drop: Option<unsafe fn(*mut u8)>,
    data: NonNull<u8>,
    len: usize,
    capacity: usize,
    pending: bool,
    /// Whether the values live in a [`ColumnBlock`] shared with the
    /// archetype's other columns (which then frees them) rather than in an
    /// allocation of the column's own.
    in_block: bool,
    added: Vec<u32>,
    changed: Vec<UnsafeCell<u32>>,
    /// The newest changed tick any row may carry (see the invariant). An
    /// atomic because a writing query raises it through `&Column` from
    /// each thread of its fan-out (all with the same tick); relaxed, since
    /// a reader of the ticks is ordered after the writer by the executor's
    /// hand-offs, as for the ticks themselves. std's rather than the loom
    /// shim's: it publishes nothing, and columns live outside models too.
    changed_bound: std::sync::atomic::AtomicU32,
    /// The column's version: it grows whenever its rows, values or ticks
    /// may change (a row in or out, a value replaced or stamped, ticks
    /// clamped, and a writing query fetching the column), and never goes
    /// back, so a version seen earlier names the same contents only while
    /// it is still the version. An incremental snapshot skips a column type
    /// whose every column kept the version it saw. An atomic because a
    /// writing query bumps it through `&Column` (see
    /// [`mark_reached`](Self::mark_reached)).
    version: std::sync::atomic::AtomicU64,
}

// SAFETY: the column owns values of a `Component` type, which is
// `Send + Sync`; the raw pointer is only its storage.
unsafe impl Send for Column {}
// SAFETY: as above; `&Column` hands out only shared access to the values.
unsafe impl Sync for Column {}

impl std::fmt::Debug for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column")
            .field("item", &self.item)
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Column {
    /// An empty column for the component `info` describes.
    pub(crate) fn new(info: &ComponentInfo) -> Self {
        let item = info.layout();
        Self {
            item,
            drop: info.drop_fn(),
            data: dangling(item),
            len: 0,
            capacity: if item.size() == 0 { usize::MAX } else { 0 },
            pending: false,
            in_block: false,
            added: Vec::new(),
            changed: Vec::new(),
            changed_bound: std::sync::atomic::AtomicU32::new(0),
            version: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The newest changed tick any row may carry: no row's is newer.
    #[inline]
    pub(crate) fn changed_bound(&self) -> u32 {
        self.changed_bound
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Raises the bound to `tick` before a row is stamped with it (or
    /// keeps it, when it is newer already). When the column has no rows
    /// the bound covers nothing yet and takes `tick` as it is.
    #[inline]
    pub(crate) fn raise_changed_bound(&self, tick: u32) {
        use std::sync::atomic::Ordering::Relaxed;
        let bound = self.changed_bound.load(Relaxed);
        if self.len == 0 || super::Entities::is_newer(tick, bound) {
            self.changed_bound.store(tick, Relaxed);
        }
    }

    /// The column's version (see the field): equal to a version read
    /// earlier only if nothing changed the rows, values or ticks since.
    #[inline]
    pub(crate) fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Bumps the version through `&Column`: a writing query's fetch, once
    /// per column it hands out (not per row). A load and a store rather
    /// than an atomic add: threads of one fan-out racing here may lose an
    /// increment, but each stores more than any version read before the
    /// query ran (the executor orders a snapshot before or after it), so
    /// the version still differs from every one seen earlier.
    #[inline]
    pub(crate) fn mark_reached(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        self.version
            .store(self.version.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// Bumps the version through `&mut Column`: every method that changes
    /// rows, values or ticks calls it first.
    #[inline]
    fn touch(&mut self) {
        *self.version.get_mut() += 1;
    }

    /// An empty column whose values are to live in a [`ColumnBlock`] with
    /// the other columns of its archetype: it grows only through
    /// [`reserve_together`], with that block.
    pub(crate) fn new_in_block(info: &ComponentInfo) -> Self {
        let mut column = Self::new(info);
        column.in_block = true;
        column
    }

    /// Whether `additional` more rows, the spare slot and their ticks fit
    /// without growing.
    #[inline]
    fn has_room(&self, additional: usize) -> bool {
        self.capacity - self.len > additional
            && self.added.capacity() - self.len >= additional
            && self.changed.capacity() - self.len >= additional
    }

    /// The number of rows.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// How many values fit without reallocating (`usize::MAX` for a
    /// zero-sized type).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes room for `additional` more rows plus the spare slot, and for
    /// their ticks (`move_row_to` writes those unchecked).
    ///
    /// A column in a [`ColumnBlock`] grows with its block instead
    /// ([`reserve_together`]).
    // A column of its own (the tests', a sparse set's) grows here; the
    // archetypes' columns all grow with their block.
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.has_room(additional) {
            return;
        }
        self.grow(additional);
    }

    /// [`reserve`](Self::reserve)'s slow path.
    #[cold]
    fn grow(&mut self, additional: usize) {
        assert!(!self.in_block, "a column in a block grows with its block");
        let Some(new_capacity) = self.reserve_ticks(additional) else {
            return;
        };
        let new_layout = array(self.item, new_capacity);
        let new = if self.capacity == 0 {
            // SAFETY: `new_layout` has a non-zero size (the type is not
            // zero-sized: those columns start at `usize::MAX` capacity, and
            // `new_capacity >= 4`).
            unsafe { alloc::alloc(new_layout) }
        } else {
            // SAFETY: `data` was allocated by the global allocator with
            // `array(item, capacity)` (invariant), and the new size is
            // non-zero and does not overflow `isize` (`array` checked it).
            unsafe {
                alloc::realloc(
                    self.data.as_ptr(),
                    array(self.item, self.capacity),
                    new_layout.size(),
                )
            }
        };
        self.data = NonNull::new(new).unwrap_or_else(|| alloc::handle_alloc_error(new_layout));
        self.capacity = new_capacity;
    }

    /// Reserves the ticks of `additional` more rows; the capacity the values
    /// must grow to for them and the spare slot, if they must.
    fn reserve_ticks(&mut self, additional: usize) -> Option<usize> {
        let needed = self
            .len
            .checked_add(additional)
            .and_then(|n| n.checked_add(1))
            .expect("column capacity overflow");
        self.added.reserve(additional);
        self.changed.reserve(additional);
        (needed > self.capacity).then(|| {
            needed
                .max(self.capacity.saturating_mul(2))
                .max(MIN_CAPACITY)
        })
    }

    /// A pointer to the value in `row` (or the spare slot when
    /// `row == len`).
    ///
    /// # Safety
    ///
    /// `row < capacity`.
    #[inline]
    unsafe fn slot(&self, row: usize) -> *mut u8 {
        // SAFETY: `row < capacity`, so the offset stays inside the
        // allocation (or is 0 for a zero-sized type: `size == 0`).
        unsafe { self.data.as_ptr().add(row * self.item.size()) }
    }

    /// A pointer to the value in `row`, for reading or writing it in place.
    ///
    /// # Panics
    ///
    /// If `row >= len`.
    #[inline]
    pub(crate) fn get_ptr(&self, row: usize) -> *mut u8 {
        assert!(
            row < self.len,
            "row {row} out of bounds ({} rows)",
            self.len
        );
        // SAFETY: `row < len <= capacity`.
        unsafe { self.slot(row) }
    }

    /// Appends a value, moving it in from `src`, with its ticks (the
    /// tests' way in; the store writes through the spare slot).
    ///
    /// # Safety
    ///
    /// `src` points to a valid, initialised value of this column's type,
    /// which the caller gives up (it must not be used or dropped again).
    #[cfg(test)]
    pub(crate) unsafe fn push(&mut self, src: *const u8, added: u32, changed: u32) {
        self.touch();
        debug_assert!(!self.pending, "a pending drop would be overwritten");
        self.reserve(1);
        // SAFETY: `reserve` left `len < capacity`; `src` is a valid value
        // of this type (caller) and cannot overlap the spare slot, which
        // holds no live value.
        unsafe { copy_value(src, self.slot(self.len), self.item.size()) };
        self.raise_changed_bound(changed);
        self.len += 1;
        self.added.push(added);
        self.changed.push(UnsafeCell::new(changed));
    }

    /// The spare slot: for the caller to move a value into before
    /// [`commit_spare`](Self::commit_spare), or to take the value a
    /// [`swap_remove_forget`](Self::swap_remove_forget) left there.
    ///
    /// # Safety
    ///
    /// Room was reserved (`len < capacity`) and no drop is pending (the
    /// spare slot holds no live value).
    #[inline]
    pub(crate) unsafe fn spare_ptr(&mut self) -> *mut u8 {
        debug_assert!(self.len < self.capacity && !self.pending);
        // SAFETY: `len < capacity` (caller).
        unsafe { self.slot(self.len) }
    }

    /// Makes the spare slot a row, with its ticks.
    ///
    /// # Safety
    ///
    /// The spare slot holds a valid value of this column's type, moved in
    /// after [`spare_ptr`](Self::spare_ptr) with room reserved (for the
    /// ticks too) and no drop pending; the column now owns it.
    #[inline]
    pub(crate) unsafe fn commit_spare(&mut self, added: u32, changed: u32) {
        self.touch();
        debug_assert!(self.len < self.capacity && !self.pending);
        self.raise_changed_bound(changed);
        self.len += 1;
        self.added.push(added);
        self.changed.push(UnsafeCell::new(changed));
    }

    /// Marks the value the caller moved into the spare slot (after
    /// [`spare_ptr`](Self::spare_ptr)) pending a
    /// [`drop_pending`](Self::drop_pending): a value offered and not kept
    /// (`insert_if_new` over a component the entity has).
    ///
    /// # Safety
    ///
    /// The spare slot holds a valid value of this column's type, moved in
    /// with room reserved and no drop pending; the column now owns it.
    #[inline]
    pub(crate) unsafe fn discard_spare(&mut self) {
        debug_assert!(self.len < self.capacity && !self.pending);
        self.pending = true;
    }

    /// Parks `row`'s value in the spare slot, pending a
    /// [`drop_pending`](Self::drop_pending), marks the row changed at `tick`,
    /// and returns the row's slot, which the caller must fill with a new
    /// value before anything else touches the column.
    ///
    /// # Safety
    ///
    /// `row < len`; room was reserved (`len < capacity`) and no drop is
    /// pending.
    #[inline]
    pub(crate) unsafe fn park_row(&mut self, row: usize, tick: u32) -> *mut u8 {
        self.touch();
        debug_assert!(row < self.len && self.len < self.capacity && !self.pending);
        // SAFETY: `row < len < capacity` (caller): both slots are in bounds
        // and distinct; the spare slot holds no live value (no drop
        // pending), so nothing is overwritten.
        let slot = unsafe {
            let slot = self.slot(row);
            copy_value(slot, self.slot(self.len), self.item.size());
            slot
        };
        self.pending = true;
        self.raise_changed_bound(tick);
        *self.changed[row].get_mut() = tick;
        slot
    }

    /// Removes `row` without dropping its value: the last row takes its
    /// place (swap-remove). The caller must already have taken the value
    /// (moved its bytes elsewhere); otherwise it is leaked, never dropped.
    ///
    /// # Panics
    ///
    /// If `row >= len`.
    pub(crate) fn swap_remove_forget(&mut self, row: usize) {
        self.swap_remove_to_spare(row);
    }

    /// Removes `row` (swap-remove) and parks its value in the spare slot,
    /// pending a [`drop_pending`](Self::drop_pending).
    ///
    /// # Panics
    ///
    /// If `row >= len` or a drop is already pending.
    pub(crate) fn swap_remove_deferred(&mut self, row: usize) {
        assert!(!self.pending, "a drop is already pending");
        self.swap_remove_to_spare(row);
        self.pending = true;
    }

    /// Swaps `row` with the last row and shortens the column by one, so the
    /// removed value's bytes sit in the spare slot (with the ticks removed).
    #[inline]
    fn swap_remove_to_spare(&mut self, row: usize) {
        self.touch();
        assert!(
            row < self.len,
            "row {row} out of bounds ({} rows)",
            self.len
        );
        let last = self.len - 1;
        if row != last {
            // SAFETY: `row` and `last` are distinct rows below `len`, so
            // both slots are in bounds and do not overlap.
            unsafe { swap_values(self.slot(row), self.slot(last), self.item.size()) };
        }
        self.len = last;
        // SAFETY: `row < len`, the ticks' length (invariant, asserted
        // above).
        unsafe {
            remove_tick(&mut self.added, row);
            remove_tick(&mut self.changed, row);
        }
    }

    /// Drops the value parked in the spare slot, if any. The flag is
    /// cleared first, so a panicking `Drop` leaves nothing to drop twice.
    pub(crate) fn drop_pending(&mut self) {
        if !std::mem::take(&mut self.pending) {
            return;
        }
        if let Some(drop) = self.drop {
            // SAFETY: a pending drop means the spare slot `len < capacity`
            // holds an initialised value of this type nobody else owns
            // (invariant); the flag is now clear, so it is dropped once.
            unsafe { drop(self.slot(self.len)) }
        }
    }

    /// The tick at which `row` was added.
    #[inline]
    pub(crate) fn added_tick(&self, row: usize) -> u32 {
        self.added[row]
    }

    /// The tick at which `row` was last changed.
    #[inline]
    pub(crate) fn changed_tick(&self, row: usize) -> u32 {
        // SAFETY: no `&mut Column` exists while `&self` does, and a writer
        // through `&self` (`mark_changed`) holds the column's lane alone,
        // so nothing writes this cell now.
        self.changed[row].with(|tick| unsafe { *tick })
    }

    /// Moves every tick older than the store's `MAX_TICK_AGE` before `now`
    /// up to that age.
    pub(crate) fn clamp_ticks(&mut self, now: u32) {
        self.touch();
        for tick in &mut self.added {
            super::Entities::clamp_tick(tick, now);
        }
        for tick in &mut self.changed {
            super::Entities::clamp_tick(tick.get_mut(), now);
        }
        // Clamped as the rows' are, so it still bounds them.
        super::Entities::clamp_tick(self.changed_bound.get_mut(), now);
    }

    /// Marks `row` changed at `tick`.
    #[inline]
    pub(crate) fn set_changed(&mut self, row: usize, tick: u32) {
        self.touch();
        self.raise_changed_bound(tick);
        *self.changed[row].get_mut() = tick;
    }

    /// Every row's changed tick, for a query stamping the rows it hands out
    /// through a shared borrow. Whoever writes one must hold the column's
    /// lane gated (no other system touches the column while it runs) and
    /// write each row from one thread.
    #[inline]
    pub(crate) fn changed_cells(&self) -> &[UnsafeCell<u32>] {
        &self.changed
    }

    /// Every row's added tick, for a query handing out rows with their
    /// ticks.
    #[inline]
    pub(crate) fn added_ticks(&self) -> &[u32] {
        &self.added
    }

    /// The start of the values, for a query walking the rows in place.
    #[inline]
    pub(crate) fn data(&self) -> *mut u8 {
        self.data.as_ptr()
    }

    /// The number of rows.
    #[inline]
    pub(crate) fn row_count(&self) -> usize {
        self.len
    }

    /// Appends every row's added and changed ticks to `added` and
    /// `changed` (a snapshot's copy).
    pub(crate) fn copy_ticks(&self, added: &mut Vec<u32>, changed: &mut Vec<u32>) {
        added.extend_from_slice(&self.added);
        // SAFETY: as in `changed_tick`: while `&self` is held nothing
        // writes a cell (a writer through `&self` holds the column's lane
        // alone, and a snapshot holds the whole world shared).
        changed.extend(
            self.changed
                .iter()
                .map(|cell| cell.with(|tick| unsafe { *tick })),
        );
    }

    /// Drops every row's value and forgets the ticks: the column is empty.
    /// The length drops to 0 first, so a `Drop` that panics leaves an
    /// empty, consistent column (the other values are still dropped; the
    /// panic goes on to the caller).
    pub(crate) fn clear(&mut self) {
        self.touch();
        debug_assert!(!self.pending, "no drop pending between operations");
        let count = std::mem::take(&mut self.len);
        self.added.clear();
        self.changed.clear();
        if let Some(drop) = self.drop {
            each_even_if_one_panics(count, |row| {
                // SAFETY: slots `0..count` held the rows, initialised and
                // owned by the column; `len` is 0 now, so each is dropped
                // once, here.
                unsafe { drop(self.slot(row)) }
            });
        }
    }

    /// Appends `count` values moved in from `src`, with their ticks (a
    /// snapshot's restore: one copy for the whole run of values).
    ///
    /// # Safety
    ///
    /// - `src` is valid for reads of `count` initialised values of this
    ///   column's type, which the caller gives up (never used or dropped
    ///   again), and lies outside the column's storage;
    /// - room for `count` more rows was reserved ([`reserve`](Self::reserve)
    ///   or [`reserve_together`]) and no drop is pending.
    ///
    /// # Panics
    ///
    /// If `added` or `changed` does not hold `count` ticks (before
    /// anything moves).
    pub(crate) unsafe fn append_moved(
        &mut self,
        src: *const u8,
        count: usize,
        added: &[u32],
        changed: &[u32],
    ) {
        self.touch();
        assert!(
            added.len() == count && changed.len() == count,
            "one added and one changed tick per value"
        );
        if count == 0 {
            return;
        }
        debug_assert!(self.capacity - self.len >= count && !self.pending);
        let newest = changed.iter().copied().reduce(|newest, tick| {
            if super::Entities::is_newer(tick, newest) {
                tick
            } else {
                newest
            }
        });
        if let Some(newest) = newest {
            // Before the length grows: an empty column takes it as it is.
            self.raise_changed_bound(newest);
        }
        // SAFETY: room for `count` rows from `len` (caller), so the
        // destination lies inside the allocation, past the live rows (no
        // live value is overwritten); the source is outside it (caller);
        // the column owns the values from here as `len` grows over them.
        unsafe {
            std::ptr::copy_nonoverlapping(src, self.slot(self.len), count * self.item.size());
        }
        self.len += count;
        self.added.extend_from_slice(added);
        self.changed
            .extend(changed.iter().map(|&tick| UnsafeCell::new(tick)));
    }

    /// Moves the value in `row` to the end of `to`, with its ticks, and
    /// swap-removes it here: the last row is copied into `row` (one copy
    /// per value, no swap, no drop).
    ///
    /// # Safety
    ///
    /// `to` holds the same component type as this column, has room for one
    /// more row ([`reserve`](Self::reserve)) and no drop pending.
    ///
    /// # Panics
    ///
    /// If `row >= len` (before anything moves).
    #[inline]
    pub(crate) unsafe fn move_row_to(&mut self, row: usize, to: &mut Column) {
        self.touch();
        to.touch();
        debug_assert_eq!(self.item, to.item);
        debug_assert!(to.len < to.capacity && !to.pending);
        assert!(
            row < self.len,
            "row {row} out of bounds ({} rows)",
            self.len
        );
        let last = self.len - 1;
        let size = self.item.size();
        // Before `to.len` grows: an empty `to` takes the row's tick as its
        // bound.
        to.raise_changed_bound(self.changed_tick(row));
        // SAFETY:
        // - `row < len <= capacity` and `last < len`: both source slots are
        //   in bounds, and distinct when `row != last`;
        // - `to.len < to.capacity` (caller): `to`'s spare slot is in
        //   bounds, in another column's storage (another archetype's,
        //   so another allocation), and holds no live value (no drop
        //   pending), so nothing is overwritten;
        // - the two columns hold one type (caller), so the bytes of `row`
        //   are a valid value for `to`, which owns it from here; this
        //   column stops owning it as `len` drops to `last`, and `row` then
        //   holds the last row's value (its old slot `last` is spare).
        unsafe {
            copy_value(self.slot(row), to.slot(to.len), size);
            if row != last {
                copy_value(self.slot(last), self.slot(row), size);
            }
        }
        self.len = last;
        to.len += 1;
        // SAFETY: `row < len`, the ticks' length (invariant, asserted
        // above), and `to` has room for a row's ticks (caller).
        unsafe {
            move_tick(&mut self.added, row, &mut to.added);
            move_tick(&mut self.changed, row, &mut to.changed);
        }
    }
}

impl Drop for Column {
    fn drop(&mut self) {
        /// Frees the allocation even when a value's `Drop` panics.
        struct Free(NonNull<u8>, Option<Layout>);
        impl Drop for Free {
            fn drop(&mut self) {
                if let Some(layout) = self.1 {
                    // SAFETY: `layout` is the layout the allocation was
                    // made with (the column's invariant), and nothing
                    // uses it after the column is dropped.
                    unsafe { alloc::dealloc(self.0.as_ptr(), layout) }
                }
            }
        }
        let allocated = !self.in_block && self.item.size() != 0 && self.capacity != 0;
        let _free = Free(
            self.data,
            allocated.then(|| array(self.item, self.capacity)),
        );
        // The live rows, and the spare slot when a drop is pending.
        let count = self.len + usize::from(std::mem::take(&mut self.pending));
        self.len = 0;
        if let Some(drop) = self.drop {
            each_even_if_one_panics(count, |row| {
                // SAFETY: slots `0..count` hold initialised values the
                // column owns (the rows, then the pending spare slot);
                // `len` and `pending` are cleared, so each is dropped once.
                unsafe { drop(self.slot(row)) }
            });
        }
    }
}

/// The smallest capacity a column's values grow to.
const MIN_CAPACITY: usize = 4;

/// One allocation holding the values of every column of an archetype, each
/// column's rows in a part of their own (the columns' `data`), all of one
/// capacity. An archetype's values are then one block: spawning thousands
/// of entities allocates (and dropping the world frees) one block per
/// archetype rather than one per column, and its size, most of the world's
/// memory, is what glibc's adaptive thresholds learn from, so a world made
/// and dropped again reuses the memory rather than returning it to the
/// system and faulting it back in page by page.
///
/// Invariant: `layout` is the layout `ptr` was allocated with by the
/// global allocator, or `None` with nothing allocated. The block must
/// outlive the columns whose values it holds (their owner drops the
/// columns first).
#[derive(Debug)]
pub(crate) struct ColumnBlock {
    ptr: NonNull<u8>,
    layout: Option<Layout>,
}

// SAFETY: the block is only memory, owned by one archetype; what lives in
// it is reached through the archetype's columns, which are `Send + Sync`.
unsafe impl Send for ColumnBlock {}
// SAFETY: as above; `&ColumnBlock` gives no access to the memory.
unsafe impl Sync for ColumnBlock {}

impl ColumnBlock {
    /// A block holding nothing yet.
    pub(crate) fn empty() -> Self {
        Self {
            ptr: NonNull::dangling(),
            layout: None,
        }
    }
}

impl Drop for ColumnBlock {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: `layout` is the layout `ptr` was allocated with
            // (invariant); the columns that lived in it are gone.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// Makes room in every column of `columns` (all made with
/// [`Column::new_in_block`], with the same rows, their values in `block`)
/// for `additional` more rows, the spare slot and their ticks, as
/// [`Column::reserve`] does for one column.
#[inline]
pub(crate) fn reserve_together(columns: &mut [Column], block: &mut ColumnBlock, additional: usize) {
    if columns.iter().all(|column| column.has_room(additional)) {
        return;
    }
    grow_together(columns, block, additional);
}

/// [`reserve_together`]'s slow path: the ticks grow column by column, the
/// values all at once into a new block (geometrically, as a column does).
#[cold]
fn grow_together(columns: &mut [Column], block: &mut ColumnBlock, additional: usize) {
    let mut new_capacity = None;
    for column in columns.iter_mut() {
        debug_assert!(column.in_block);
        new_capacity = new_capacity.max(column.reserve_ticks(additional));
    }
    let Some(new_capacity) = new_capacity else {
        return;
    };
    // The parts, one after another, each aligned for its type; the same
    // walk below finds each part's offset.
    let layout = columns
        .iter()
        .filter(|column| column.item.size() != 0)
        .fold(Layout::new::<()>(), |layout, column| {
            layout
                .extend(array(column.item, new_capacity))
                .expect("column capacity overflow")
                .0
        });
    // SAFETY: the layout has a non-zero size: some column needs to grow,
    // so it is not zero-sized (those never do: `usize::MAX` capacity) and
    // its part holds `new_capacity >= MIN_CAPACITY` values.
    let new = unsafe { alloc::alloc(layout) };
    let new = NonNull::new(new).unwrap_or_else(|| alloc::handle_alloc_error(layout));
    let mut walked = Layout::new::<()>();
    for column in columns.iter_mut().filter(|column| column.item.size() != 0) {
        let (next, offset) = walked
            .extend(array(column.item, new_capacity))
            .expect("the layout above made the same walk");
        walked = next;
        let live = column.len + usize::from(column.pending);
        // SAFETY:
        // - `offset` and the part's `new_capacity` values lie inside the
        //   new allocation (`layout` made the same walk) and are aligned
        //   for the column's type (`extend` aligned the offset);
        // - the column's first `live` slots (its rows, and the spare slot
        //   when a drop is pending) are initialised and inside its old
        //   part (`live <= capacity`; no part at all only when
        //   `live == 0`), which lies in the old block, not the new one;
        // - `live <= len + 1 <= new_capacity`, so they fit; the bytes
        //   move, and the old block is freed below without dropping them.
        unsafe {
            let part = new.as_ptr().add(offset);
            std::ptr::copy_nonoverlapping(column.data.as_ptr(), part, live * column.item.size());
            column.data = NonNull::new_unchecked(part);
        }
        column.capacity = new_capacity;
    }
    // The old block (if any) is freed here; nothing points into it now.
    *block = ColumnBlock {
        ptr: new,
        layout: Some(layout),
    };
}

/// Calls `f(0)`, `f(1)`, .., `f(count - 1)`; if one call panics, the rest
/// still run while unwinding (a second panic aborts), as
/// `ptr::drop_in_place::<[T]>` does for the elements of a slice.
pub(crate) fn each_even_if_one_panics(count: usize, f: impl FnMut(usize)) {
    struct Rest<F: FnMut(usize)> {
        next: usize,
        count: usize,
        f: F,
    }
    impl<F: FnMut(usize)> Drop for Rest<F> {
        fn drop(&mut self) {
            // Runs only what is left: nothing on the normal path.
            while self.next < self.count {
                let i = self.next;
                self.next += 1;
                (self.f)(i);
            }
        }
    }
    let mut rest = Rest { next: 0, count, f };
    while rest.next < rest.count {
        let i = rest.next;
        rest.next += 1;
        (rest.f)(i);
    }
}

/// Copies one value of `size` bytes from `src` to `dst`: the sizes most
/// components have (4 to 32 bytes) as two fixed-size, possibly overlapping
/// moves inlined here, the rest through `copy_nonoverlapping`. A move per
/// column per row is the hot path of every archetype move; a `memcpy` call
/// of a run-time size costs more than the copy.
///
/// # Safety
///
/// `src` is valid for reads and `dst` for writes of `size` bytes, and the
/// two ranges do not overlap.
#[inline(always)]
unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    use std::ptr::copy_nonoverlapping as copy;
    /// The head and tail `N` bytes (they overlap when `size < 2 * N`),
    /// which together cover `N <= size <= 2 * N` bytes.
    ///
    /// # Safety
    ///
    /// As `copy_value`, and `N <= size`.
    #[inline(always)]
    unsafe fn head_tail<const N: usize>(src: *const u8, dst: *mut u8, size: usize) {
        // SAFETY: `N <= size`, so `[0, N)` and `[size - N, size)` lie in
        // both ranges (caller), which do not overlap; byte copies carry
        // uninitialised padding and pointer provenance as they are.
        unsafe {
            copy(src, dst, N);
            copy(src.add(size - N), dst.add(size - N), N);
        }
    }
    // SAFETY: each arm copies within `size` bytes of both ranges (caller),
    // its own bound on `size` meeting `head_tail`'s `N <= size`.
    unsafe {
        match size {
            0 => {}
            4..=7 => head_tail::<4>(src, dst, size),
            8..=16 => head_tail::<8>(src, dst, size),
            17..=32 => head_tail::<16>(src, dst, size),
            _ => copy(src, dst, size),
        }
    }
}

/// Swap-removes `row` of `from` and appends it to `to`, as
/// `to.push(from.swap_remove(row))` does, without the bound and capacity
/// checks (the column checked both once for all its parts).
///
/// # Safety
///
/// `row < from.len()` and `to.len() < to.capacity()`.
#[inline(always)]
unsafe fn move_tick<T>(from: &mut Vec<T>, row: usize, to: &mut Vec<T>) {
    debug_assert!(row < from.len() && to.len() < to.capacity());
    let last = from.len() - 1;
    let to_len = to.len();
    // SAFETY:
    // - `row <= last < from.len()`: both are initialised elements of
    //   `from`; `row`'s is read out, then `last`'s is copied over it
    //   (`copy` allows `row == last`) and the length drops to `last`, so
    //   each value is owned once;
    // - `to_len < to.capacity()` (caller): the slot is allocated and
    //   uninitialised, and `to` owns it once its length grows past it;
    // - `from` and `to` are distinct `&mut`s, so the writes do not alias.
    unsafe {
        let base = from.as_mut_ptr();
        let value = base.add(row).read();
        std::ptr::copy(base.add(last), base.add(row), 1);
        from.set_len(last);
        to.as_mut_ptr().add(to_len).write(value);
        to.set_len(to_len + 1);
    }
}

/// `from.swap_remove(row)`, dropping the tick, without the bound check.
///
/// # Safety
///
/// `row < from.len()`.
#[inline(always)]
unsafe fn remove_tick<T>(from: &mut Vec<T>, row: usize) {
    debug_assert!(row < from.len());
    let last = from.len() - 1;
    // SAFETY: `row <= last < from.len()`: `row`'s element is read out and
    // dropped, `last`'s copied over it (`copy` allows `row == last`) and
    // the length drops to `last`, so each value is owned once.
    unsafe {
        let base = from.as_mut_ptr();
        drop(base.add(row).read());
        std::ptr::copy(base.add(last), base.add(row), 1);
        from.set_len(last);
    }
}

/// Swaps two values of `size` bytes: through a stack buffer with
/// [`copy_value`] up to 32 bytes, `swap_nonoverlapping` beyond.
///
/// # Safety
///
/// `a` and `b` are each valid for reads and writes of `size` bytes, and the
/// two ranges do not overlap.
#[inline(always)]
unsafe fn swap_values(a: *mut u8, b: *mut u8, size: usize) {
    if size > 32 {
        // SAFETY: the caller's contract is `swap_nonoverlapping`'s.
        unsafe { std::ptr::swap_nonoverlapping(a, b, size) };
        return;
    }
    let mut buffer = std::mem::MaybeUninit::<[u8; 32]>::uninit();
    let tmp = buffer.as_mut_ptr().cast::<u8>();
    // SAFETY: `size <= 32`, so `tmp` is valid for `size` bytes and is in
    // neither range; `a` and `b` are valid and disjoint (caller). The three
    // copies leave `a`'s bytes in `b` and `b`'s in `a`.
    unsafe {
        copy_value(a, tmp, size);
        copy_value(b, a, size);
        copy_value(tmp, b, size);
    }
}

/// A dangling pointer aligned for `item` (the storage of an empty or
/// zero-sized column).
fn dangling(item: Layout) -> NonNull<u8> {
    NonNull::new(std::ptr::without_provenance_mut(item.align())).expect("alignment is non-zero")
}

/// The layout of `n` values of `item`.
fn array(item: Layout, n: usize) -> Layout {
    let size = item
        .size()
        .checked_mul(n)
        .expect("column capacity overflow");
    Layout::from_size_align(size, item.align()).expect("column capacity overflow")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Arc, AtomicUsize, Ordering};

    struct Counted(Arc<AtomicUsize>, u64);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn push<T: Send + Sync + 'static>(column: &mut Column, value: T) {
        let value = std::mem::ManuallyDrop::new(value);
        // SAFETY: a valid `T` that the ManuallyDrop gives up.
        unsafe { column.push((&raw const *value).cast(), 0, 0) }
    }

    fn read<T>(column: &Column, row: usize) -> &T {
        // SAFETY: the tests push only `T`s into the column.
        unsafe { &*column.get_ptr(row).cast::<T>() }
    }

    #[test]
    fn push_swap_remove_and_drop_all() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut column = Column::new(&ComponentInfo::of::<Counted>());
        let n = if cfg!(miri) { 20 } else { 1000 };
        for i in 0..n {
            push(&mut column, Counted(drops.clone(), i));
        }
        column.swap_remove_deferred(0);
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        column.drop_pending();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert_eq!(
            read::<Counted>(&column, 0).1,
            n - 1,
            "the last row took row 0's place"
        );
        assert_eq!(column.len(), n as usize - 1);
        drop(column);
        assert_eq!(drops.load(Ordering::Relaxed), n as usize);
    }

    #[test]
    fn zst() {
        #[derive(Debug, PartialEq)]
        struct Marker;
        let mut column = Column::new(&ComponentInfo::of::<Marker>());
        for _ in 0..10 {
            push(&mut column, Marker);
        }
        assert_eq!(column.capacity(), usize::MAX);
        assert_eq!(read::<Marker>(&column, 9), &Marker);
        column.swap_remove_deferred(3);
        column.drop_pending();
        assert_eq!(column.len(), 9);
    }

    #[test]
    fn over_aligned() {
        #[repr(align(64))]
        struct Wide(u8);
        let mut column = Column::new(&ComponentInfo::of::<Wide>());
        for i in 0..9 {
            push(&mut column, Wide(i));
        }
        for row in 0..9 {
            let ptr = column.get_ptr(row);
            assert_eq!(ptr.addr() % 64, 0);
            assert_eq!(read::<Wide>(&column, row).0, row as u8);
        }
    }

    /// A value of `N` bytes, each different, so a byte copied to the wrong
    /// place or not at all shows.
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Bytes<const N: usize>([u8; N]);

    fn bytes<const N: usize>(seed: u8) -> Bytes<N> {
        Bytes(std::array::from_fn(|i| {
            seed.wrapping_mul(37).wrapping_add(i as u8)
        }))
    }

    fn push_with_ticks<T: Send + Sync + 'static>(column: &mut Column, value: T, tick: u32) {
        let value = std::mem::ManuallyDrop::new(value);
        // SAFETY: a valid `T` that the ManuallyDrop gives up.
        unsafe { column.push((&raw const *value).cast(), tick, tick + 100) }
    }

    /// Rows moved to another column, swap-removed and parked keep every
    /// byte and their ticks, for a type of `size_of::<T>()` bytes.
    fn moves_keep_every_byte<T: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
        value: impl Fn(u8) -> T,
    ) {
        let info = ComponentInfo::of::<T>();
        let (mut from, mut to) = (Column::new(&info), Column::new(&info));
        for i in 0..6 {
            push_with_ticks(&mut from, value(i), u32::from(i));
        }
        let rows = |column: &Column| -> Vec<(T, u32, u32)> {
            (0..column.len())
                .map(|row| {
                    let ticks = (column.added_tick(row), column.changed_tick(row));
                    (*read::<T>(column, row), ticks.0, ticks.1)
                })
                .collect()
        };
        let expect = |seeds: &[u8]| -> Vec<(T, u32, u32)> {
            seeds
                .iter()
                .map(|&i| (value(i), u32::from(i), u32::from(i) + 100))
                .collect()
        };
        // A middle row (the last fills it), then the last row itself.
        for row in [1, 4] {
            to.reserve(1);
            // SAFETY: one type, room reserved, no drop pending.
            unsafe { from.move_row_to(row, &mut to) };
        }
        assert_eq!(rows(&from), expect(&[0, 5, 2, 3]));
        assert_eq!(rows(&to), expect(&[1, 4]));
        from.swap_remove_forget(0);
        assert_eq!(rows(&from), expect(&[3, 5, 2]));
        // SAFETY: `swap_remove_forget` left row 0's value in the spare slot.
        assert_eq!(unsafe { *from.spare_ptr().cast::<T>() }, value(0));
        from.reserve(1);
        // SAFETY: row 1 < len, room reserved, no drop pending; the slot is
        // filled at once.
        unsafe { from.park_row(1, 7).cast::<T>().write(value(9)) };
        from.drop_pending();
        assert_eq!(rows(&from)[1], (value(9), 5, 7));
    }

    #[test]
    fn moves_keep_every_byte_of_every_size() {
        /// Padding between and after the fields: copied as it is.
        #[derive(Clone, Copy, PartialEq, Debug)]
        #[repr(C)]
        struct Padded(u8, u32, u8, u64, u16);
        moves_keep_every_byte(|_| ());
        moves_keep_every_byte(bytes::<1>);
        moves_keep_every_byte(bytes::<2>);
        moves_keep_every_byte(bytes::<3>);
        moves_keep_every_byte(bytes::<4>);
        moves_keep_every_byte(bytes::<5>);
        moves_keep_every_byte(bytes::<7>);
        moves_keep_every_byte(bytes::<8>);
        moves_keep_every_byte(bytes::<9>);
        moves_keep_every_byte(bytes::<12>);
        moves_keep_every_byte(bytes::<15>);
        moves_keep_every_byte(bytes::<16>);
        moves_keep_every_byte(bytes::<17>);
        moves_keep_every_byte(bytes::<24>);
        moves_keep_every_byte(bytes::<31>);
        moves_keep_every_byte(bytes::<32>);
        moves_keep_every_byte(bytes::<33>);
        moves_keep_every_byte(bytes::<64>);
        moves_keep_every_byte(|i| Padded(i, u32::from(i) << 8, !i, u64::from(i) << 40, 7));
        moves_keep_every_byte(|i| u64::from(i) << 32 | 0xABCD);
    }

    #[test]
    fn drop_continues_past_a_panic() {
        struct Bomb(Arc<AtomicUsize>, bool);
        impl Drop for Bomb {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
                if self.1 {
                    panic!("bomb");
                }
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let mut column = Column::new(&ComponentInfo::of::<Bomb>());
        for i in 0..5 {
            push(&mut column, Bomb(drops.clone(), i == 1));
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(column)));
        assert!(result.is_err());
        assert_eq!(drops.load(Ordering::Relaxed), 5, "every value dropped once");
    }
}
