//! Changes recorded by running nodes and applied at the iteration boundary:
//! the registration ledger.

use sluice_collections::LockOnResizeArray;
use sync_wrapper::SyncWrapper;

use crate::access::{AccessKind, ServiceId};
use crate::node::NodeBuilder;
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ServiceCells};
use crate::world::World;
use crate::world::spec::{IntoFactory, IntoSystem};

/// One deferred change to a world. Only ever touched through `&mut` (when
/// drained), so `SyncWrapper` lets the ledger be shared without requiring the
/// closure to be `Sync`.
type Command = SyncWrapper<WorldChange>;

/// A change to apply to the world at the boundary.
pub(crate) type WorldChange = Box<dyn FnOnce(&mut World) + Send>;

/// The world's ledger of deferred changes: appended to concurrently by running
/// nodes (one atomic slot claim each), drained at the boundary.
#[derive(Debug, Default)]
pub struct CommandQueue {
    commands: LockOnResizeArray<Command>,
}

impl CommandQueue {
    fn push(&self, command: impl FnOnce(&mut World) + Send + 'static) {
        self.commands.push(SyncWrapper::new(Box::new(command)));
    }

    /// Applies every recorded change, in the order the slots were claimed.
    pub(crate) fn take_all(&mut self) -> Vec<WorldChange> {
        self.commands.drain().map(SyncWrapper::into_inner).collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

/// Records changes to the world from inside a running node; they take effect
/// at the iteration boundary. Nodes registered this way appear in the plan of
/// a later iteration: the plan factory rebuilds the plan during the next
/// iteration, and it is swapped in at that iteration's end.
///
/// Declares shared access to the world's [`CommandQueue`], so any number of
/// nodes record commands at once.
#[derive(Debug, Clone, Copy)]
pub struct Commands<'w> {
    queue: &'w CommandQueue,
}

impl Commands<'_> {
    /// Registers a system at the boundary.
    pub fn add_system<M>(&self, system: impl IntoSystem<M>) {
        let spec = system.into_system();
        self.queue.push(move |world| {
            world.add_spec(spec);
        });
    }

    /// Registers a factory at the boundary.
    pub fn add_factory<M>(&self, factory: impl IntoFactory<M>) {
        let spec = factory.into_factory();
        self.queue.push(move |world| {
            world.add_spec(spec);
        });
    }

    /// Inserts (or replaces) a service at the boundary.
    pub fn insert<T: Send + Sync + 'static>(&self, value: T) {
        self.queue.push(move |world| world.insert(value));
    }
}

// SAFETY: `fetch` reads only the `CommandQueue` slot, through shared access,
// as `declare` declares.
unsafe impl Param for Commands<'_> {
    type Item<'w> = Commands<'w>;
    const KIND: AccessKind = AccessKind::Shared;

    fn service_name() -> &'static str {
        std::any::type_name::<CommandQueue>()
    }

    fn declare(node: NodeBuilder) -> NodeBuilder {
        node.reads::<CommandQueue>()
    }

    fn resolve(registry: &mut Registry, _hooks: &mut BoundaryHooks) -> ServiceId {
        registry.resolve::<CommandQueue>()
    }

    unsafe fn fetch<'w>(id: ServiceId, cells: &ServiceCells<'w>) -> Commands<'w> {
        // SAFETY: the node declared shared access to the queue, and only the
        // boundary (outside any iteration) takes it mutably.
        let queue = unsafe { cells.get::<CommandQueue>(id) }
            .expect("every world holds a CommandQueue from its creation");
        Commands { queue }
    }
}
