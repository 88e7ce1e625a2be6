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

/// One script store type opted in.
pub(crate) struct ScriptsEntry {
    /// The store's type, `Scripts<K>`.
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// An empty capture for it.
    pub(crate) new_part: fn() -> Box<dyn super::scripts::ScriptsPart>,
}

/// One `Local<T>` type opted in.
pub(crate) struct LocalEntry {
    /// The type its slots hold, `LocalValue<T>`.
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// Clones a slot's value (`None`: another type, or locked).
    pub(crate) clone: CloneLocal,
}

/// Clones a local's slot value into a new one of the same type.
pub(crate) type CloneLocal = fn(&(dyn Any + Send + Sync)) -> Option<Box<dyn Any + Send + Sync>>;

/// A new `LocalValue<T>` holding a clone of `value`'s.
fn clone_local<T: Clone + Send + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Option<Box<dyn Any + Send + Sync>> {
    let cell = value.downcast_ref::<crate::system::LocalValue<T>>()?;
    // Nothing runs while a snapshot is taken or restored, so the lock is
    // free; `try_lock` all the same, never to wait.
    let guard = match cell.try_lock() {
        Ok(guard) => guard,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    Some(Box::new(crate::system::LocalValue::new(T::clone(&guard))))
}

/// The world's registry of what its snapshots capture.
/// A [`ComponentRef<T>`](crate::ComponentRef) type opted into snapshots
/// ([`World::snapshot_component_ref`](crate::World::snapshot_component_ref)):
/// how to bind its values to the store a restore puts them in.
pub(crate) struct RefEntry {
    /// `ComponentRef<T>`'s.
    pub(crate) type_id: TypeId,
    /// `T`'s.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) target_type: TypeId,
    /// `T`'s type name.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) target_name: &'static str,
    /// [`rebind_refs::<T>`](crate::entity::rebind_refs).
    pub(crate) rebind: RebindRefs,
    /// Each captured value's target, in the part's order.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) targets: fn(&dyn ComponentPart) -> Vec<crate::Entity>,
}

pub(crate) type RebindRefs = fn(
    &mut crate::entity::Entities,
    Option<crate::entity::StoreId>,
) -> Vec<(crate::Entity, crate::entity::EntityError)>;

fn targets_of<T: Component>(part: &dyn ComponentPart) -> Vec<crate::Entity> {
    part.as_any()
        .downcast_ref::<ColumnValues<crate::ComponentRef<T>>>()
        .map(|values| values.values.iter().map(|r| r.target()).collect())
        .unwrap_or_default()
}

#[derive(Default)]
pub(crate) struct SnapshotRegistry {
    pub(crate) refs: Vec<RefEntry>,
    pub(crate) components: Vec<ComponentEntry>,
    pub(crate) services: Vec<ServiceEntry>,
    /// The message types opted in: by the `TypeId` and name of their
    /// queue (`Messages<T>`).
    pub(crate) messages: Vec<MessagesEntry>,
    /// The `Local<T>` types opted in.
    pub(crate) locals: Vec<LocalEntry>,
    /// The script stores opted in, by their type (`Scripts<K>`).
    pub(crate) scripts: Vec<ScriptsEntry>,
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
    /// Opts `ComponentRef<T>` into snapshots, with its rebinding.
    pub(crate) fn add_component_ref<T: Component>(&mut self) {
        self.add_component::<crate::ComponentRef<T>>();
        let type_id = TypeId::of::<crate::ComponentRef<T>>();
        if self.refs.iter().all(|entry| entry.type_id != type_id) {
            self.refs.push(RefEntry {
                type_id,
                target_type: TypeId::of::<T>(),
                target_name: std::any::type_name::<T>(),
                rebind: crate::entity::rebind_refs::<T>,
                targets: targets_of::<T>,
            });
        }
    }

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

    /// Opts the `Local<T>` parameters of every node in (once).
    pub(crate) fn add_local<T: Clone + Default + Send + 'static>(&mut self) {
        let type_id = TypeId::of::<crate::system::LocalValue<T>>();
        if self.locals.iter().all(|l| l.type_id != type_id) {
            self.locals.push(LocalEntry {
                type_id,
                name: std::any::type_name::<crate::Local<'static, T>>(),
                clone: clone_local::<T>,
            });
        }
    }

    /// Opts the script store `Scripts<K>` in (once).
    pub(crate) fn add_scripts<K: crate::script::ScriptKind>(&mut self) {
        let type_id = TypeId::of::<crate::script::Scripts<K>>();
        if self.scripts.iter().all(|s| s.type_id != type_id) {
            self.scripts.push(ScriptsEntry {
                type_id,
                name: std::any::type_name::<crate::script::Scripts<K>>(),
                new_part: super::scripts::new_part::<K>,
            });
        }
    }

    /// The entry of the script store type `type_id`, if opted in.
    pub(crate) fn scripts(&self, type_id: TypeId) -> Option<&ScriptsEntry> {
        self.scripts.iter().find(|s| s.type_id == type_id)
    }

    /// The entry of the local slot type `type_id` (`LocalValue<T>`), if
    /// opted in.
    pub(crate) fn local(&self, type_id: TypeId) -> Option<&LocalEntry> {
        self.locals.iter().find(|l| l.type_id == type_id)
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
