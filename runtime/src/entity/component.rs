//! The component type registry: one dense [`ComponentId`] per Rust type
//! stored in entities, with what a type-erased column needs to hold values
//! of that type ([`ComponentInfo`]).

use std::alloc::Layout;
use std::any::TypeId;
use std::fmt;

use foldhash::HashMap;

/// A type that can be stored in an entity: any `Send + Sync + 'static`
/// type is one (blanket impl).
///
/// `Send + Sync` because systems on other threads read and write component
/// columns through the lanes the planner orders, exactly like services.
pub trait Component: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Component for T {}

/// A component type's number in one [`Components`] registry: dense, from 0,
/// in registration order.
///
/// Only a number: each store registers types in the order it first meets
/// them, so in another store the id names another type, or none. Nothing
/// public trusts it ([`Archetype::contains`](crate::Archetype::contains)
/// answers for the archetype's own registry; [`Components::info`] checks
/// its bounds).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ComponentId(pub u32);

impl ComponentId {
    /// The id as an index into per-component tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a component type's values are kept: bevy's `StorageType`.
///
/// Chosen once per type and store, before the type is first stored
/// ([`Entities::register_component`](crate::Entities::register_component),
/// [`World::register_component`](crate::World::register_component)); a type
/// never registered is a [`Table`](StorageType::Table) component.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum StorageType {
    /// A column in the archetype's table: the fastest to iterate; adding
    /// or removing it moves the entity's row to another archetype.
    #[default]
    Table,
    /// A sparse set beside the tables (a dense array of values and an
    /// index by entity): adding or removing it moves nothing else, and the
    /// entity keeps its archetype; a query that names it looks each row up.
    /// For components that come and go every frame (markers, timers,
    /// short-lived states).
    SparseSet,
}

impl std::fmt::Display for StorageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Table => "table",
            Self::SparseSet => "sparse set",
        })
    }
}

/// Why a component registration was refused. A refused registration
/// changes nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum ComponentError {
    /// The type is already registered (registered, spawned, inserted or
    /// named in a bundle) with the other storage: a type's storage cannot
    /// change once the store has met it.
    StorageAlreadyChosen {
        /// The component's type name.
        component: &'static str,
        /// The storage it keeps.
        storage: StorageType,
        /// The storage the refused registration asked for.
        requested: StorageType,
    },
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StorageAlreadyChosen {
                component,
                storage,
                requested,
            } => write!(
                f,
                "component {component} is already stored in a {storage}: it cannot move to a \
                 {requested} (register its storage before it is first spawned, inserted or \
                 named in a bundle)"
            ),
        }
    }
}

impl std::error::Error for ComponentError {}

/// What a type-erased column needs to know about a component type.
#[derive(Clone, Copy)]
pub struct ComponentInfo {
    type_id: TypeId,
    name: &'static str,
    layout: Layout,
    /// Drops one value in place; `None` when the type needs no drop.
    drop: Option<unsafe fn(*mut u8)>,
    storage: StorageType,
}

impl ComponentInfo {
    /// The description of `T`.
    pub fn of<T: Component>() -> Self {
        /// # Safety
        ///
        /// `ptr` must point to a valid, initialised, aligned `T` that is
        /// not used again (as for `ptr::drop_in_place`).
        unsafe fn drop_ptr<T>(ptr: *mut u8) {
            // SAFETY: the caller passes a pointer to a valid, aligned,
            // initialised `T` it gives up (this fn's contract).
            unsafe { ptr.cast::<T>().drop_in_place() }
        }
        Self {
            type_id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
            layout: Layout::new::<T>(),
            drop: std::mem::needs_drop::<T>().then_some(drop_ptr::<T> as unsafe fn(*mut u8)),
            storage: StorageType::Table,
        }
    }

    /// Where the type's values are kept.
    pub fn storage(&self) -> StorageType {
        self.storage
    }

    /// The type's `TypeId`.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The type's name (`std::any::type_name`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The layout of one value.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The function that drops one value in place, if the type needs one.
    /// Calling it requires a pointer to a valid, initialised value of this
    /// type that is never used again.
    pub fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop
    }
}

impl fmt::Debug for ComponentInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentInfo")
            .field("name", &self.name)
            .field("layout", &self.layout)
            .field("needs_drop", &self.drop.is_some())
            .field("storage", &self.storage)
            .finish()
    }
}

/// The registry of component types: `TypeId` to [`ComponentId`] and back
/// to [`ComponentInfo`].
///
/// Invariant: `infos[id.index()]` describes the type whose `TypeId` maps to
/// `id` in `by_type`; ids are never removed or renumbered.
#[derive(Debug, Default)]
pub struct Components {
    infos: Vec<ComponentInfo>,
    by_type: HashMap<TypeId, ComponentId>,
}

impl Components {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// `T`'s id, registering `T` (as a table component) if it is new.
    pub fn register<T: Component>(&mut self) -> ComponentId {
        self.register_new::<T>(StorageType::Table).0
    }

    /// `T`'s id, registering it with `storage` if it is new; refused when
    /// `T` is registered already with the other storage. The second half:
    /// whether `T` is new.
    pub(crate) fn register_with<T: Component>(
        &mut self,
        storage: StorageType,
    ) -> Result<(ComponentId, bool), ComponentError> {
        let (id, new) = self.register_new::<T>(storage);
        let info = &self.infos[id.index()];
        if info.storage != storage {
            return Err(ComponentError::StorageAlreadyChosen {
                component: info.name,
                storage: info.storage,
                requested: storage,
            });
        }
        Ok((id, new))
    }

    /// `T`'s id, registering it with `storage` if it is new, and whether it
    /// is.
    fn register_new<T: Component>(&mut self, storage: StorageType) -> (ComponentId, bool) {
        if let Some(&id) = self.by_type.get(&TypeId::of::<T>()) {
            return (id, false);
        }
        let id =
            ComponentId(u32::try_from(self.infos.len()).expect("fewer than 2^32 component types"));
        self.infos.push(ComponentInfo {
            storage,
            ..ComponentInfo::of::<T>()
        });
        self.by_type.insert(TypeId::of::<T>(), id);
        (id, true)
    }

    /// Whether the component `id` is kept in a sparse set.
    #[inline]
    pub fn is_sparse(&self, id: ComponentId) -> bool {
        self.infos[id.index()].storage == StorageType::SparseSet
    }

    /// `T`'s id, if `T` has been registered.
    pub fn id_of<T: Component>(&self) -> Option<ComponentId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// The id of the type `type_id`, if it has been registered.
    pub(crate) fn id_of_type(&self, type_id: TypeId) -> Option<ComponentId> {
        self.by_type.get(&type_id).copied()
    }

    /// The description of the component with this id.
    ///
    /// # Panics
    ///
    /// If `id` was not handed out by this registry.
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        &self.infos[id.index()]
    }

    /// The number of registered component types.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no type has been registered.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_is_idempotent_and_dense() {
        let mut components = Components::new();
        let a = components.register::<u32>();
        let b = components.register::<String>();
        assert_eq!((a, b), (ComponentId(0), ComponentId(1)));
        assert_eq!(components.register::<u32>(), a);
        assert_eq!(components.id_of::<String>(), Some(b));
        assert_eq!(components.id_of::<u8>(), None);
        assert_eq!(components.info(b).name(), "alloc::string::String");
        assert!(components.info(b).drop_fn().is_some());
        assert!(components.info(a).drop_fn().is_none());
        assert_eq!(components.len(), 2);
    }
}
