//! What a world opts into snapshots: per component and service type, how
//! to make an empty part for it, and the slot a save's codec fills.

use std::any::{Any, TypeId};

use super::part::{
    ColumnValues, ComponentPart, MessagesPart, MessagesValue, ServicePart, ServiceValue,
};
use crate::entity::Component;

/// One component type opted in.
pub(crate) struct ComponentEntry {
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// An empty [`ColumnValues<T>`] for it.
    pub(crate) new_part: fn() -> Box<dyn ComponentPart>,
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    /// The codec of a type registered for saving (`save_component`, behind
    /// the `serde` feature): whatever the saves code keeps, downcast by it.
    pub(crate) codec: Option<Box<dyn Any + Send + Sync>>,
}

/// One service type opted in.
pub(crate) struct ServiceEntry {
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// An empty [`ServiceValue<T>`] for it.
    pub(crate) new_part: fn() -> Box<dyn ServicePart>,
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    /// As [`ComponentEntry::codec`].
    pub(crate) codec: Option<Box<dyn Any + Send + Sync>>,
}

/// One message type opted in.
pub(crate) struct MessagesEntry {
    /// The queue's type, `Messages<T>`.
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// An empty [`MessagesValue<T>`] for it.
    pub(crate) new_part: fn() -> Box<dyn MessagesPart>,
}

/// The world's registry of what its snapshots capture.
#[derive(Default)]
pub(crate) struct SnapshotRegistry {
    pub(crate) components: Vec<ComponentEntry>,
    pub(crate) services: Vec<ServiceEntry>,
    /// The message types opted in: by the `TypeId` and name of their
    /// queue (`Messages<T>`).
    pub(crate) messages: Vec<MessagesEntry>,
    /// Whether a snapshot is refused while anything is left out.
    pub(crate) strict: bool,
    /// The types registered for saving, with their names and codecs
    /// (`World::save_component`); each snapshot shares them.
    #[cfg(feature = "serde")]
    pub(crate) saves: std::sync::Arc<super::saves::SaveCodecs>,
}

impl std::fmt::Debug for SnapshotRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotRegistry")
            .field(
                "components",
                &self.components.iter().map(|c| c.name).collect::<Vec<_>>(),
            )
            .field(
                "services",
                &self.services.iter().map(|s| s.name).collect::<Vec<_>>(),
            )
            .field("strict", &self.strict)
            .finish()
    }
}

impl SnapshotRegistry {
    /// A registry with the runtime's own components opted in.
    pub(crate) fn with_builtins() -> Self {
        let mut registry = Self::default();
        registry.add_component::<crate::Disabled>();
        registry.add_component::<crate::ChildOf>();
        registry.add_component::<crate::Children>();
        registry.add_component::<crate::Transform>();
        registry.add_component::<crate::GlobalTransform>();
        // Saved under fixed names: a game saves its hierarchy without
        // registering the runtime's types.
        #[cfg(feature = "serde")]
        super::saves::add_builtins(&mut registry);
        registry
    }

    /// Opts `T` in (once); its entry.
    pub(crate) fn add_component<T: Component + Clone>(&mut self) -> &mut ComponentEntry {
        let type_id = TypeId::of::<T>();
        let index = match self.components.iter().position(|c| c.type_id == type_id) {
            Some(index) => index,
            None => {
                self.components.push(ComponentEntry {
                    type_id,
                    name: std::any::type_name::<T>(),
                    new_part: || Box::new(ColumnValues::<T>::default()),
                    codec: None,
                });
                self.components.len() - 1
            }
        };
        &mut self.components[index]
    }

    /// Opts the service `T` in (once); its entry.
    pub(crate) fn add_service<T: Clone + Send + Sync + 'static>(&mut self) -> &mut ServiceEntry {
        let type_id = TypeId::of::<T>();
        let index = match self.services.iter().position(|s| s.type_id == type_id) {
            Some(index) => index,
            None => {
                self.services.push(ServiceEntry {
                    type_id,
                    name: std::any::type_name::<T>(),
                    new_part: || Box::new(ServiceValue::<T>::default()),
                    codec: None,
                });
                self.services.len() - 1
            }
        };
        &mut self.services[index]
    }

    /// Opts the messages of type `T` in (once).
    pub(crate) fn add_messages<T: Clone + Send + Sync + 'static>(&mut self) {
        let type_id = TypeId::of::<crate::Messages<T>>();
        if self.messages.iter().all(|m| m.type_id != type_id) {
            self.messages.push(MessagesEntry {
                type_id,
                name: std::any::type_name::<crate::Messages<T>>(),
                new_part: || Box::new(MessagesValue::<T>::default()),
            });
        }
    }

    /// The entry of the queue type `type_id` (`Messages<T>`), if opted in.
    pub(crate) fn messages(&self, type_id: TypeId) -> Option<&MessagesEntry> {
        self.messages.iter().find(|m| m.type_id == type_id)
    }

    /// The entry of component type `type_id`, if opted in.
    pub(crate) fn component(&self, type_id: TypeId) -> Option<&ComponentEntry> {
        self.components.iter().find(|c| c.type_id == type_id)
    }

    /// The entry of service type `type_id`, if opted in.
    pub(crate) fn service(&self, type_id: TypeId) -> Option<&ServiceEntry> {
        self.services.iter().find(|s| s.type_id == type_id)
    }
}
