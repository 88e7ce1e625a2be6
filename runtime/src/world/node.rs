//! What the world keeps per registered node, by registration index.

use crate::exec::{NodeContext as RunContext, NodeOutcome};
use crate::system::NodeEnv;
use crate::world::batch::BatchDriver;
use crate::world::node_cell::NodeCell;

/// A registered node's run-time side.
pub(crate) enum WorldNode {
    /// A system or factory body (with its run conditions).
    Body(NodeCell),
    /// A batch processor, complete when its last slice is.
    Batch(Box<dyn BatchDriver>),
    /// A removed node: never planned again (its index is not reused).
    Removed,
}

impl WorldNode {
    /// Runs the node for one iteration.
    ///
    /// # Safety
    /// - The executor runs this node on one thread at a time, as a node of the
    ///   world's current plan, with `env` its environment for this run.
    /// - `env`'s cells live for the whole run (`'s`).
    pub(crate) unsafe fn run<'s>(&'s self, env: &NodeEnv<'s>, cx: &RunContext<'s>) -> NodeOutcome {
        match self {
            WorldNode::Body(cell) => {
                // SAFETY: forwarded from the caller.
                unsafe { cell.run(env) };
                NodeOutcome::Done
            }
            // SAFETY: forwarded from the caller.
            WorldNode::Batch(batch) => unsafe { batch.schedule(cx, &env.cells) },
            // Plans leave removed nodes out; nothing to run.
            WorldNode::Removed => NodeOutcome::Done,
        }
    }
}
