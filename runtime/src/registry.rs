//! The world's services: one slot per [`ServiceId`] with its value and version.

use std::any::Any;

use crate::access::{ServiceId, ServiceTable};
use crate::non_send::NonSendCell;

/// One service's storage.
///
/// A plain struct on purpose: the executor hands a node direct access to the
/// slots its access set declares, and the plan guarantees no two nodes that
/// conflict on a slot run at the same time.
#[derive(Debug, Default)]
pub struct ServiceSlot {
    /// The value, `None` while the service is named (by a node's access set)
    /// but not yet inserted.
    pub value: Option<Box<dyn Any + Send + Sync>>,
    /// Bumped by every gated access; factories compare it with the version
    /// they last saw to skip work whose inputs did not move.
    pub version: u64,
    /// When the value last changed and was added, on the world's change
    /// clock (the entity store's ticks), for `Tracked<T>` readers.
    pub(crate) ticks: SlotTicks,
}

/// A service's change ticks. A gated access inside an iteration stamps
/// `changed` (and `added`, when it fills an empty slot) with the clock's
/// next tick at once; a change made between iterations (through the
/// [`Registry`]) only moves the version, and is stamped when the next part
/// of a plan starts ([`Registry::stamp_unstamped`]): until then the version
/// differs from `stamped_version` and readers count the change as new.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotTicks {
    /// The tick of the last stamped change.
    pub(crate) changed: u32,
    /// The tick at which the value was last added to an empty slot.
    pub(crate) added: u32,
    /// The slot's version when it was last stamped.
    pub(crate) stamped_version: u64,
    /// The slot's version when a value was last added to it empty.
    pub(crate) added_version: u64,
}

impl SlotTicks {
    /// Stamps the change that moved its slot's version to `version` with
    /// `tick` (see [`ServiceSlot::stamp`]); apart from the slot, so a
    /// caller can hold the slot's value while it stamps.
    #[inline]
    pub(crate) fn stamp(&mut self, version: u64, tick: u32) {
        if self.added_version > self.stamped_version {
            self.added = tick;
        }
        self.changed = tick;
        self.stamped_version = version;
    }
}

impl ServiceSlot {
    /// Marks the value added at this version when the slot held no value
    /// of the same type before (`had` says whether it did).
    fn note_added(&mut self, had: bool) {
        if !had {
            self.ticks.added_version = self.version;
        }
    }

    /// Stamps the change that moved the version to where it is with
    /// `tick`: as an addition too when one happened since the last stamp.
    #[inline]
    pub(crate) fn stamp(&mut self, tick: u32) {
        self.ticks.stamp(self.version, tick);
    }

    /// Whether the value changed and was added after `last_run`, on the
    /// change clock: `(changed, added)`. A change not stamped yet (made
    /// between iterations, before this part of the plan started) is new to
    /// every reader.
    pub(crate) fn changed_since(&self, last_run: u32) -> (bool, bool) {
        let ticks = &self.ticks;
        let unstamped = self.version != ticks.stamped_version;
        let added = (unstamped && ticks.added_version > ticks.stamped_version)
            || crate::entity::Entities::is_newer(ticks.added, last_run);
        let changed = unstamped || crate::entity::Entities::is_newer(ticks.changed, last_run);
        (changed, added)
    }
}

/// The services of one world, indexed by dense id.
///
/// Type-to-id resolution happens once (in the [`ServiceTable`]); the hot path
/// indexes `slots` by id.
#[derive(Debug, Default)]
pub struct Registry {
    table: ServiceTable,
    slots: Vec<ServiceSlot>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id space: type and name to id.
    pub fn table(&self) -> &ServiceTable {
        &self.table
    }

    /// The id of `T`, assigning one (with an empty slot) on first mention.
    pub fn resolve<T: 'static>(&mut self) -> ServiceId {
        self.resolve_type(std::any::TypeId::of::<T>(), std::any::type_name::<T>())
    }

    /// The id of the type `type_id` called `name`, assigning one on first mention.
    pub fn resolve_type(&mut self, type_id: std::any::TypeId, name: &str) -> ServiceId {
        let id = self.table.resolve_type(type_id, name);
        self.grow();
        id
    }

    /// Puts `value` (a boxed value of the type `type_id`, called `name`)
    /// into that type's slot, or empties it (`None`), bumping its version
    /// as [`insert`](Self::insert) and [`remove`](Self::remove) do; the old
    /// value is returned for the caller to drop (a snapshot's restore).
    pub(crate) fn replace_boxed(
        &mut self,
        type_id: std::any::TypeId,
        name: &str,
        value: Option<Box<dyn Any + Send + Sync>>,
    ) -> Option<Box<dyn Any + Send + Sync>> {
        let id = self.resolve_type(type_id, name);
        let slot = &mut self.slots[id.index()];
        let had = slot.value.is_some();
        let adds = value.is_some();
        let old = std::mem::replace(&mut slot.value, value);
        slot.version += 1;
        if adds {
            slot.note_added(had);
        }
        old
    }

    /// The id of `T` as a service only the runtime reaches: never found by
    /// name (see [`ServiceTable`]).
    pub(crate) fn resolve_private<T: 'static>(&mut self) -> ServiceId {
        let id = self
            .table
            .resolve_private(std::any::TypeId::of::<T>(), std::any::type_name::<T>());
        self.grow();
        id
    }

    /// A slot of its own for one [`Local`](crate::Local) parameter of one
    /// registration, holding `value`: never shared with another parameter,
    /// node or type (see [`ServiceTable::push_local`]).
    pub(crate) fn add_local<T: Send + Sync + 'static>(
        &mut self,
        name: &str,
        value: T,
    ) -> ServiceId {
        let id = self.table.push_local(name);
        self.grow();
        self.slots[id.index()].value = Some(Box::new(value));
        id
    }

    /// The id of the service called `name`, assigning one on first mention.
    pub fn resolve_name(&mut self, name: &str) -> ServiceId {
        let id = self.table.resolve_name(name);
        self.grow();
        id
    }

    fn grow(&mut self) {
        self.slots
            .resize_with(self.table.len(), ServiceSlot::default);
    }

    /// Stores `value` as the service `T`, replacing any value there, and
    /// bumps its version.
    ///
    /// The slot holds `value` with its new version before the old value is
    /// dropped, so a `Drop` that panics leaves the registry consistent (the
    /// panic still reaches the caller).
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> ServiceId {
        let id = self.resolve::<T>();
        let slot = &mut self.slots[id.index()];
        let old = slot.value.replace(Box::new(value));
        slot.version += 1;
        slot.note_added(old.as_deref().is_some_and(<dyn Any + Send + Sync>::is::<T>));
        drop(old);
        id
    }

    /// The id of `T`, marked as a service whose value is not `Send` (see
    /// [`ServiceTable::is_non_send`]).
    pub(crate) fn resolve_non_send<T: 'static>(&mut self) -> ServiceId {
        let id = self.resolve::<T>();
        self.table.mark_non_send(id);
        id
    }

    /// Stores `value` as the service `T`, reachable only on the calling
    /// thread (see `non_send.rs`), replacing any value there (a replaced
    /// value made on another thread is leaked, not dropped here); bumps its
    /// version. `None` (nothing stored) while the calling thread is being
    /// torn down.
    pub(crate) fn insert_non_send<T: 'static>(&mut self, value: T) -> Option<ServiceId> {
        let cell = NonSendCell::new(value)?;
        let id = self.resolve_non_send::<T>();
        let slot = &mut self.slots[id.index()];
        let old = slot.value.replace(Box::new(cell));
        slot.version += 1;
        slot.note_added(
            old.as_deref()
                .is_some_and(<dyn Any + Send + Sync>::is::<NonSendCell<T>>),
        );
        drop(old);
        Some(id)
    }

    /// The non-`Send` service `T`, on the thread that inserted it.
    pub(crate) fn get_non_send<T: 'static>(&self) -> Option<&T> {
        self.slots[self.id_of::<T>()?.index()]
            .value
            .as_deref()?
            .downcast_ref::<NonSendCell<T>>()?
            .get()
    }

    /// The non-`Send` service `T`, mutably, on the thread that inserted it
    /// (bumps its version).
    pub(crate) fn get_non_send_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let slot = &mut self.slots[self.table.id_of::<T>()?.index()];
        let value = slot
            .value
            .as_deref_mut()?
            .downcast_mut::<NonSendCell<T>>()?
            .get_mut()?;
        slot.version += 1;
        Some(value)
    }

    /// Takes the service `T` out, leaving its slot (and id) empty, and bumps
    /// its version: factories reading it see the change.
    pub fn remove<T: 'static>(&mut self) -> Option<T> {
        let slot = &mut self.slots[self.table.id_of::<T>()?.index()];
        if !slot.value.as_deref()?.is::<T>() {
            return None;
        }
        let value = slot.value.take()?;
        slot.version += 1;
        value.downcast::<T>().ok().map(|boxed| *boxed)
    }

    /// The id of `T` if it has been mentioned.
    pub fn id_of<T: 'static>(&self) -> Option<ServiceId> {
        self.table.id_of::<T>()
    }

    /// The id of the service called `name` if it has been mentioned.
    pub fn id_by_name(&self, name: &str) -> Option<ServiceId> {
        self.table.id_by_name(name)
    }

    /// Shared access to `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.slots[self.id_of::<T>()?.index()]
            .value
            .as_deref()?
            .downcast_ref()
    }

    /// Gated access to `T`: bumps its version.
    pub fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let slot = &mut self.slots[self.table.id_of::<T>()?.index()];
        let value = slot.value.as_deref_mut()?.downcast_mut()?;
        slot.version += 1;
        Some(value)
    }

    /// The version of `id` (0 when never inserted or gated).
    pub fn version(&self, id: ServiceId) -> u64 {
        self.slots.get(id.index()).map_or(0, |slot| slot.version)
    }

    /// The slot of `id`.
    pub fn slot(&self, id: ServiceId) -> Option<&ServiceSlot> {
        self.slots.get(id.index())
    }

    /// The slot of `id`, mutably. Callers that gate the value bump `version`.
    pub fn slot_mut(&mut self, id: ServiceId) -> Option<&mut ServiceSlot> {
        self.slots.get_mut(id.index())
    }

    /// The id table and the slots, borrowed apart.
    pub(crate) fn split_mut(&mut self) -> (&ServiceTable, &mut [ServiceSlot]) {
        (&self.table, &mut self.slots)
    }

    /// Stamps every change made since its slot was last stamped (between
    /// iterations, through this registry) with `tick`: the world does when
    /// a part of a plan starts, with the change clock's next tick, so
    /// readers that ran before see the change as new and readers after
    /// this one do not.
    pub(crate) fn stamp_unstamped(&mut self, tick: u32) {
        for slot in &mut self.slots {
            if slot.version != slot.ticks.stamped_version {
                slot.stamp(tick);
            }
        }
    }

    /// Moves every service tick older than the entity store's
    /// `MAX_TICK_AGE` before `now` up to that age (with the store's own
    /// ticks, at the same boundary).
    pub(crate) fn clamp_ticks(&mut self, now: u32) {
        for slot in &mut self.slots {
            crate::entity::Entities::clamp_tick(&mut slot.ticks.changed, now);
            crate::entity::Entities::clamp_tick(&mut slot.ticks.added, now);
        }
    }

    /// All slots, indexed by id.
    pub fn slots(&self) -> &[ServiceSlot] {
        &self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Hp(u32);

    #[test]
    fn insert_get_and_versions() {
        let mut registry = Registry::new();
        assert_eq!(registry.get::<Hp>(), None);
        let id = registry.insert(Hp(3));
        assert_eq!(registry.id_of::<Hp>(), Some(id));
        assert_eq!(registry.get::<Hp>(), Some(&Hp(3)));
        assert_eq!(registry.version(id), 1);
        registry.get_mut::<Hp>().unwrap().0 = 5;
        assert_eq!(registry.version(id), 2);
        assert_eq!(registry.get::<Hp>(), Some(&Hp(5)));
        let _ = registry.get::<Hp>();
        assert_eq!(registry.version(id), 2, "shared access leaves the version");
    }

    #[test]
    fn a_service_named_before_insertion_keeps_its_id() {
        let mut registry = Registry::new();
        let named = registry.resolve::<Hp>();
        assert!(registry.slot(named).unwrap().value.is_none());
        assert_eq!(registry.insert(Hp(1)), named);
        let by_name = registry.resolve_name("Armor");
        assert_eq!(registry.id_by_name("Armor"), Some(by_name));
        assert_eq!(registry.slots().len(), 2);
    }
}
