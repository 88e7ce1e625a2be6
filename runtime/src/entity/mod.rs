//! The entity store: entities, their components in archetype tables, and
//! change ticks (`shared/DESIGN.md`, "Entities").
//!
//! - [`Entity`]: an 8-byte `Copy` handle, a slot and its generation; slots
//!   are reused under the next generation (a slot out of generations is
//!   retired), so no handle ever names two entities and a stale handle
//!   resolves to nothing.
//! - [`Components`]: the component type registry ([`ComponentId`],
//!   [`ComponentInfo`]).
//! - [`Archetype`]: every entity with one exact component set, one dense
//!   column per component, found by its set; insert/remove transitions are
//!   cached per archetype.
//! - [`Bundle`]: tuples of up to 12 components.
//! - [`StorageType`]: a component in its archetype's table (the default)
//!   or in a sparse set beside the tables (`sparse_set.rs`), for components
//!   added and removed often.
//! - [`Entities`]: the store itself: spawn, despawn, insert, remove, get,
//!   freeze, and the tick stamped into every column's added/changed ticks;
//!   its [`StoreId`] is unique in the process, so what caches its layout
//!   ([`ComponentRef`]) reads nothing from another store.
//!
//! Structural changes take `&mut Entities` and so never overlap systems
//! iterating (see `column.rs` for why that makes dense columns sound).

mod archetype;
mod bundle;
pub(crate) mod column;
mod component;
mod component_ref;
pub(crate) mod disabled;
#[allow(clippy::module_inception)] // the `Entity` handle, in `entity/entity.rs`
mod entity;
pub mod hierarchy;
#[cfg(test)]
mod model;
mod observed;
pub mod query;
mod required;
mod snapshot;
mod sparse_set;
mod store;
#[cfg(test)]
mod tests;

pub use archetype::{Archetype, ArchetypeId};
pub use bundle::Bundle;
pub use component::{
    Component, ComponentError, ComponentId, ComponentInfo, Components, StorageType,
};
pub(crate) use component_ref::rebind_refs;
pub use component_ref::{ComponentRef, Target, TargetFetch};
pub use disabled::{Allow, Disabled};
pub use entity::Entity;
#[cfg(feature = "serde")]
pub(crate) use entity::{SavedSlots, SlotsView};
pub use hierarchy::{
    Ancestors, ChildOf, ChildSpawner, Children, DescendantsBreadthFirst, DescendantsDepthFirst,
    GlobalTransform, Transform, TransformPropagation, propagate_transforms,
};
#[cfg(feature = "serde")]
pub(crate) use hierarchy::{ChildOfEncoding, ChildrenEncoding};
pub use query::{
    Added, Changed, Mut, Query, QueryData, QueryEntityError, QueryFilter, QueryIter,
    ReadOnlyQueryData, Ref, Removed, RunTicks, With, Without,
};
pub use query::{AnyOf, Has, Or, Populated, Single};
pub use required::RequiredError;
#[cfg(feature = "serde")]
pub(crate) use snapshot::{CapturedArchetype, CapturedComponent, RemovalRecords};
pub(crate) use snapshot::{CapturedStore, StoreMismatch};
pub use store::{
    ComponentTicks, Entities, EntityError, MAX_TICK_AGE, StoreId, TICK_CHECK_INTERVAL,
};
