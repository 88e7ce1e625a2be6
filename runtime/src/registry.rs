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
