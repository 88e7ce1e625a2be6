//! The world's service slots as running nodes see them.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::access::ServiceId;
use crate::entity::Entities;
use crate::registry::ServiceSlot;
use crate::sync::{AtomicU32, Ordering};

/// Unsynchronised access to every service slot of a world for the length of
/// one iteration, shared by all the threads running its nodes.
///
/// Soundness rests on the plan, not on locks: a node reaches only the slots its
/// access set declares, and the plan orders every pair of nodes that conflict
/// on a slot (a gate is alone in its lane; a producer comes before every
/// consumer). The `'w` borrow of the slots is exclusive, so nothing outside the
/// iteration touches them, and the slot array cannot grow or move meanwhile.
#[derive(Debug, Clone, Copy)]
pub struct ServiceCells<'w> {
    /// Start of the slot array; valid for `len` slots for `'w`.
    slots: NonNull<ServiceSlot>,
    len: usize,
    /// The world's change clock (its entity store's tick counter), when
    /// the world gave it ([`with_clock`](Self::with_clock)): gated accesses
    /// stamp their slot's change tick from it.
    clock: Option<NonNull<AtomicU32>>,
    _world: PhantomData<&'w mut [ServiceSlot]>,
}

// SAFETY: the cells are only dereferenced under the plan's discipline described
// on the type; the values themselves are `Send + Sync` (`ServiceSlot` holds
// `dyn Any + Send + Sync`).
unsafe impl Send for ServiceCells<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for ServiceCells<'_> {}

impl<'w> ServiceCells<'w> {
    /// Borrows every slot exclusively for `'w`.
    pub fn new(slots: &'w mut [ServiceSlot]) -> Self {
        Self {
            len: slots.len(),
            slots: NonNull::from(slots).cast(),
            clock: None,
            _world: PhantomData,
        }
    }

    /// The same cells, stamping service changes from the change clock of
    /// the entity store held as service `entities` (none when it holds no
    /// store). Without a clock a gated access only moves the version, and
    /// the change is stamped when the next part of a plan starts.
    pub(crate) fn with_clock(mut self, entities: ServiceId) -> Self {
        // SAFETY: the world makes the cells before any node runs, and only
        // the world, between iterations, takes its store mutably; the store
        // stays in its slot (boxed) for `'w`.
        self.clock =
            unsafe { self.get::<Entities>(entities) }.map(|store| NonNull::from(store.clock()));
        self
    }

    /// Whether the cells stamp from a change clock.
    #[inline]
    pub(crate) fn has_clock(&self) -> bool {
        self.clock.is_some()
    }

    /// The clock's next tick, without taking it: newer than every tick
    /// handed out so far, and not newer than any handed out after this.
    #[inline]
    fn next_tick(&self) -> Option<u32> {
        // SAFETY: the clock lives in the entity store, which outlives the
        // cells (`with_clock`); it is only read or bumped atomically.
        let clock = unsafe { self.clock?.as_ref() };
        Some(clock.load(Ordering::Relaxed).wrapping_add(1))
    }

    /// Takes a fresh tick from the clock for a run that reads service
    /// changes (as the entity store's `run_tick`), or `None` without one.
    #[inline]
    pub(crate) fn run_tick(&self) -> Option<u32> {
        // SAFETY: as for `next_tick`.
        let clock = unsafe { self.clock?.as_ref() };
        Some(clock.fetch_add(1, Ordering::Relaxed).wrapping_add(1))
    }

    /// Whether the value of `id` changed and was added after `last_run`:
    /// `(changed, added)`.
    ///
    /// # Safety
    /// As for [`get`](Self::get).
    pub(crate) unsafe fn changed_since(&self, id: ServiceId, last_run: u32) -> (bool, bool) {
        let slot = self.slot_ptr(id);
        // SAFETY: in bounds, and no `&mut` to the slot exists concurrently
        // (caller's guarantee, as for `get`).
        unsafe { (*slot).changed_since(last_run) }
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inlined: each parameter's fetch calls it, and out of line its call
    /// cost as much as its bounds check (callgrind, `observers_callgrind`).
    #[inline]
    fn slot_ptr(&self, id: ServiceId) -> *mut ServiceSlot {
        assert!(
            id.index() < self.len,
            "service id {} is outside this world's {} services",
            id.0,
            self.len
        );
        // SAFETY: `id.index() < len` (checked above), so the offset stays inside
        // the slot array.
        unsafe { self.slots.as_ptr().add(id.index()) }
    }

    /// Shared access to the value of `id`, or `None` when it holds no `T`.
    ///
    /// # Safety
    /// - The calling node declared shared or gated access to `id` (or produces it
    ///   and is running its own output step).
    /// - No node holding gated access to `id` runs at the same time: the plan
    ///   orders every gate of a lane against every other accessor.
    pub unsafe fn get<T: 'static>(&self, id: ServiceId) -> Option<&'w T> {
        let slot = self.slot_ptr(id);
        // SAFETY:
        // - `slot` points into the live slot array (`slot_ptr`'s bounds check);
        // - no `&mut` to this slot exists now: only a gate or producer makes
        //   one, and the caller guarantees none runs concurrently.
        let slot = unsafe { &*slot };
        slot.value.as_deref()?.downcast_ref()
    }

    /// Gated access to the value of `id`; bumps the slot's version when it
    /// holds a `T` (an absent service, `None`, stays as it was, so factories
    /// reading it do not rerun because a gate found nothing).
    ///
    /// # Safety
    /// - The calling node declared gated access to `id`.
    /// - No other node touching `id` runs at the same time, and the caller
    ///   holds no other reference into this slot: the plan makes a gate alone
    ///   in its lane.
    pub unsafe fn get_mut<T: 'static>(&self, id: ServiceId) -> Option<&'w mut T> {
        let slot = self.slot_ptr(id);
        // SAFETY: `slot` is in bounds, and by the caller's guarantee this is the
        // only reference to the slot while it lives.
        let ServiceSlot {
            value,
            version,
            ticks,
        } = unsafe { &mut *slot };
        // One type check (a downcast), then the version and ticks beside
        // the value it borrows: this runs once per `&mut T` per run.
        let value = value.as_deref_mut()?.downcast_mut()?;
        *version += 1;
        if let Some(tick) = self.next_tick() {
            ticks.stamp(*version, tick);
        }
        Some(value)
    }

    /// A node's own state in slot `id` (a [`Local`](crate::Local)), mutably;
    /// leaves the version where it is (nothing plans on a local).
    ///
    /// # Safety
    /// - `id` is a local slot the calling node part resolved for itself
    ///   (no declaration of any node names it, so no other node reaches it).
    /// - The node runs on one thread at a time (the executor's contract,
    ///   SOUNDNESS.md S5), and the caller holds no other reference into
    ///   this slot.
    pub(crate) unsafe fn local_mut<T: 'static>(&self, id: ServiceId) -> Option<&'w mut T> {
        let slot = self.slot_ptr(id);
        // SAFETY: `slot` is in bounds, and by the caller's guarantee this is
        // the only reference to the slot while it lives.
        let slot = unsafe { &mut *slot };
        slot.value.as_deref_mut()?.downcast_mut()
    }

    /// Stores `value` as the service `id` (a factory's output), overwriting in
    /// place when the slot already holds a `T` so a steady factory does not
    /// allocate; bumps the version.
    ///
    /// # Safety
    /// - The calling node declared that it produces `id` (or gates it).
    /// - No other node touching `id` runs at the same time: producers come
    ///   before every consumer in the plan.
    pub unsafe fn put<T: Send + Sync + 'static>(&self, id: ServiceId, value: T) {
        let slot = self.slot_ptr(id);
        // SAFETY: `slot` is in bounds and, by the caller's guarantee, not
        // referenced by anyone else while this runs.
        let slot = unsafe { &mut *slot };
        slot.version += 1;
        match slot
            .value
            .as_deref_mut()
            .and_then(|v| v.downcast_mut::<T>())
        {
            Some(existing) => *existing = value,
            None => {
                slot.value = Some(Box::new(value));
                slot.ticks.added_version = slot.version;
            }
        }
        if let Some(tick) = self.next_tick() {
            slot.stamp(tick);
        }
    }

    /// The version of `id`.
    ///
    /// # Safety
    /// The calling node declared access to `id` (so no gate of it runs now).
    pub unsafe fn version(&self, id: ServiceId) -> u64 {
        let slot = self.slot_ptr(id);
        // SAFETY: in bounds, and no `&mut` to the slot exists concurrently by
        // the caller's guarantee.
        unsafe { (*slot).version }
    }
}
