//! `Removed<T>`: the entities that lost a `T` (despawned, or `T` removed)
//! since the reading system last ran, each reader with its own cursor.
//! Removals happen at the boundary or between iterations, never while
//! systems run, so reading the records needs no lane.

use std::marker::PhantomData;

use crate::access::{AccessKind, ServiceId};
use crate::entity::query::cursor;
use crate::entity::{Component, Entities, Entity};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ReadOnlyParam, ServiceCells};

/// The entities that lost a `T` since this system last ran (the world keeps
/// the records of the last two iterations).
pub struct Removed<'w, T> {
    entities: &'w Entities,
    last_run: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Removed<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Removed<{}>", std::any::type_name::<T>())
    }
}

impl<'w, T: Component> Removed<'w, T> {
    /// The entities, oldest removal first (an entity that lost `T` twice
    /// appears twice).
    pub fn iter(&self) -> impl Iterator<Item = Entity> + 'w {
        self.entities.removed_since::<T>(self.last_run)
    }
}

// SAFETY: `fetch` reads only the entity store (declared shared); removal
// records change only through `&mut Entities`, outside iterations.
unsafe impl<T: Component> Param for Removed<'_, T> {
    type Item<'w> = Removed<'w, T>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<Entities>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.runtime_reads::<Entities>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<Entities>()
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Removed<'w, T> {
        // SAFETY: the node declared shared access to the store, and only the
        // world, between iterations, takes it mutably.
        let entities = unsafe { cells.get::<Entities>(id) }
            .expect("every world holds its entity store from its creation");
        let (last_run, _) = cursor::current(|| entities.run_tick());
        Removed {
            entities,
            last_run,
            _marker: PhantomData,
        }
    }
}

impl<T: Component> ReadOnlyParam for Removed<'_, T> {}
