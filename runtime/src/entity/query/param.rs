//! A query as a system parameter: it declares its lanes and a shared read
//! of the entity store, and borrows the store from the world's cells.

use crate::access::{AccessKind, ServiceId};
use crate::entity::Entities;
use crate::entity::query::{Query, QueryData, QueryFilter, ReadOnlyQueryData};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ReadOnlyParam, ServiceCells};

// SAFETY: `fetch` reads only the entity store (declared shared) and hands
// the query out under `Query::new`'s contract: the node declared every lane
// `D` touches (`D::declare`), and the plan gives it those lanes as declared
// while it runs; `&mut Entities` exists only outside iterations.
unsafe impl<D: QueryData, F: QueryFilter> Param for Query<'_, D, F> {
    type Item<'w> = Query<'w, D, F>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<Entities>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        // The data's lanes as written (so a query aliasing itself is refused,
        // SL0009), then the filter's where the data does not hold them.
        let mut lanes = Vec::new();
        D::lanes(&mut lanes);
        F::declare(D::declare(node.runtime_reads::<Entities>()), &lanes)
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        D::resolve(registry);
        F::resolve(registry);
        registry.resolve::<Entities>()
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Query<'w, D, F> {
        // SAFETY: the node declared shared access to the store, and only
        // the world (between iterations) takes it mutably.
        let entities = unsafe { cells.get::<Entities>(id) }
            .expect("every world holds its entity store from its creation");
        // SAFETY: the node holds `D`'s lanes as declared (see above).
        unsafe { Query::new(entities) }
    }
}

/// A query of read-only data may serve a run condition.
impl<D: ReadOnlyQueryData, F: QueryFilter> ReadOnlyParam for Query<'_, D, F> {}
