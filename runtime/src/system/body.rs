//! What the executor runs for each node.

use crate::node::NodeDescriptor;
use crate::plan::GraphView;
use crate::system::cells::ServiceCells;

/// What a running node sees: the world's cells, the registrations (id table,
/// descriptors, markers), and its own declaration.
#[derive(Debug, Clone, Copy)]
pub struct NodeEnv<'w> {
    /// The world's services.
    pub cells: ServiceCells<'w>,
    /// The registrations: read-only for the whole iteration. Borrowed, so
    /// that the executor builds each node's environment from three words,
    /// not eight.
    pub graph: &'w GraphView<'w>,
    /// The running node's declaration.
    pub descriptor: &'w NodeDescriptor,
}

/// A node's runnable body, type-erased.
pub trait NodeBody: Send + 'static {
    /// Runs the body once.
    ///
    /// # Safety
    /// The body runs as a node of the plan of the world it was registered in,
    /// against that world's cells, with `env.descriptor` its own declaration:
    /// every pair of nodes that conflict on a service is ordered by that plan,
    /// so the body's declared accesses do not overlap with any concurrently
    /// running node's.
    unsafe fn run(&mut self, env: &NodeEnv<'_>);
}
