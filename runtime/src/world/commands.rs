//! Changes recorded by running nodes and applied at the iteration boundary:
//! the registration ledger.

use sluice_collections::LockOnResizeArray;
use sync_wrapper::SyncWrapper;

use crate::access::{AccessKind, ServiceId};
use crate::node::{Label, NodeBuilder};
use crate::registry::Registry;
use crate::system::{BoundaryHooks, Param, ServiceCells};
use crate::world::World;
use crate::world::spec::{IntoFactory, IntoSystem};

/// One deferred change to a world. Only ever touched through `&mut` (when
/// drained), so `SyncWrapper` lets the ledger be shared without requiring the
/// closure to be `Sync`.
type Command = SyncWrapper<RecordedChange>;

/// A change to apply to the world at the boundary.
pub(crate) type WorldChange = Box<dyn FnOnce(&mut World) + Send>;

/// What a recorded command does, for the message when it fails.
#[derive(Debug, Clone)]
pub(crate) enum CommandLabel {
    /// Inserts the service of this type.
    Insert(&'static str),
    /// Registers the node of this name.
    AddNode(Label),
}

impl std::fmt::Display for CommandLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandLabel::Insert(service) => write!(f, "insert `{service}`"),
            CommandLabel::AddNode(name) => write!(f, "add node `{name}`"),
        }
    }
}

/// A change and what it does.
pub(crate) struct RecordedChange {
    pub(crate) label: CommandLabel,
    pub(crate) change: WorldChange,
}

/// The world's ledger of deferred changes: appended to concurrently by running
/// nodes (one atomic slot claim each), drained at the boundary.
#[derive(Debug, Default)]
pub(crate) struct CommandQueue {
    commands: LockOnResizeArray<Command>,
}

impl CommandQueue {
    fn push(&self, label: CommandLabel, command: impl FnOnce(&mut World) + Send + 'static) {
        self.commands.push(SyncWrapper::new(RecordedChange {
            label,
            change: Box::new(command),
        }));
    }

    /// Every recorded change, in the order the slots were claimed.
    pub(crate) fn take_all(&mut self) -> Vec<RecordedChange> {
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
/// Declares shared access to the world's private command queue, so any number of
/// nodes record commands at once.
#[derive(Debug, Clone, Copy)]
pub struct Commands<'w> {
    queue: &'w CommandQueue,
}

impl Commands<'_> {
    /// Registers a system at the boundary.
    #[track_caller]
    pub fn add_system<M>(&self, system: impl IntoSystem<M>) {
        let spec = system.into_system();
        let label = CommandLabel::AddNode(spec.builder.name_label().clone());
        self.queue.push(label, move |world| {
            world.add_spec(spec);
        });
    }

    /// Registers a factory at the boundary.
    #[track_caller]
    pub fn add_factory<M>(&self, factory: impl IntoFactory<M>) {
        let spec = factory.into_factory();
        let label = CommandLabel::AddNode(spec.builder.name_label().clone());
        self.queue.push(label, move |world| {
            world.add_spec(spec);
        });
    }

    /// Inserts (or replaces) a service at the boundary. If the replaced
    /// value's `Drop` panics, the new value is in place regardless, the
    /// iteration reports the panic, and the commands after this one land.
    pub fn insert<T: Send + Sync + 'static>(&self, value: T) {
        let label = CommandLabel::Insert(std::any::type_name::<T>());
        self.queue.push(label, move |world| world.insert(value));
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
