//! What the world keeps per registered node, by registration index.

use sync_wrapper::SyncWrapper;

use crate::exec::{NodeContext as RunContext, NodeOutcome};
use crate::sync::{AtomicBool, Ordering};
use crate::system::NodeEnv;
use crate::world::conditions::{BatchCell, RunConditions};
use crate::world::node_cell::{NodeCell, Ran};

/// A registered node's run-time side.
pub(crate) enum WorldNode {
    /// A system or factory body (with its run conditions).
    Body(NodeCell),
    /// A batch processor or parallel query (with its run conditions),
    /// complete when its last slice is.
    Batch(BatchCell),
    /// A group's, stage's or set's run condition: a cell with an empty
    /// body and the conditions, and the verdict its members read.
    Gate(GateCell),
    /// A removed node: never planned again (its index is not reused).
    Removed,
    /// A whole-world system: run by the world itself, alone, between the
    /// parts of its plan. Only ever reached through `&mut`, so the wrapper
    /// makes it `Sync` without a lock.
    Whole(SyncWrapper<WholeCell>),
}

/// A whole-world system with its run conditions, which the world evaluates
/// once, on its own thread, before the body (and skips it when one is false).
pub(crate) struct WholeCell {
    /// `None` while it runs (the body borrows the world it lives in).
    pub(crate) body: Option<WholeWorldBody>,
    pub(crate) conditions: RunConditions,
}

/// A group's, stage's or set's run condition node
/// ([`World::run_group_if`](crate::World::run_group_if)): evaluated once per
/// iteration, before every member (the plan orders it so); each member reads
/// `open` when it is due and is skipped when it is false.
pub(crate) struct GateCell {
    cell: NodeCell,
    /// Whether every condition held in this iteration's evaluation. Written
    /// before the members start and read after (the plan's edges from this
    /// node to each member order the two).
    open: AtomicBool,
}

impl GateCell {
    pub(crate) fn new(cell: NodeCell) -> Self {
        Self {
            cell,
            open: AtomicBool::new(false),
        }
    }

    /// Whether the members may run this iteration.
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Evaluates the conditions (the cell's body is empty) and records the
    /// verdict.
    ///
    /// Out of line: the few condition nodes need no inlined copy of
    /// [`NodeCell::run`] in the node runner, which every node pays for.
    ///
    /// # Safety
    /// [`NodeCell::run`]'s.
    #[inline(never)]
    unsafe fn run(&self, env: &NodeEnv<'_>, world: u64, node: u32, rank: u32) {
        // SAFETY: forwarded from the caller.
        let ran = unsafe { self.cell.run(env, world, node, rank) };
        self.open.store(ran == Ran::Body, Ordering::Release);
    }

    /// Closes the gate: it was itself skipped (an enclosing group's
    /// condition was false), so its members are too.
    #[inline]
    pub(crate) fn close(&self) {
        self.open.store(false, Ordering::Release);
    }
}

/// The body of a whole-world system.
pub(crate) type WholeWorldBody = Box<dyn FnMut(&mut crate::World) + Send>;

impl WorldNode {
    /// Moves its change cursors up to the store's `MAX_TICK_AGE` before
    /// `now` (see `Entities::check_ticks`).
    pub(crate) fn clamp_cursors(&mut self, now: u32) {
        match self {
            Self::Body(cell) => cell.clamp_cursors(now),
            Self::Batch(batch) => batch.clamp_cursors(now),
            Self::Gate(gate) => gate.cell.clamp_cursors(now),
            Self::Whole(whole) => whole.get_mut().conditions.clamp_cursors(now),
            Self::Removed => {}
        }
    }

    /// Whether a run of the node can skip its body: it has run conditions,
    /// or is a factory. Only such a node keeps [`skipped`](Self::skipped).
    pub(crate) fn skippable(&self) -> bool {
        match self {
            Self::Body(cell) | Self::Gate(GateCell { cell, .. }) => cell.skippable(),
            Self::Batch(batch) => batch.skippable(),
            Self::Removed | Self::Whole(_) => false,
        }
    }

    /// Whether the gate `gate` of a vertex ([`NodeGates::per_vertex`]:
    /// a condition node, `NO_GATE` or `MANY_GATES`, then in `many`) is open.
    ///
    /// [`NodeGates::per_vertex`]: crate::plan::conditions::NodeGates::per_vertex
    #[inline]
    pub(crate) fn gate_open<'a>(
        nodes: &[WorldNode],
        gate: u32,
        many: impl FnOnce() -> &'a [u32],
    ) -> bool {
        use crate::plan::conditions::{MANY_GATES, NO_GATE};
        match gate {
            NO_GATE => true,
            MANY_GATES => Self::gates_open(nodes, many()),
            gate => Self::gates_open(nodes, &[gate]),
        }
    }

    /// Whether every group, stage and set condition in `gates` (condition
    /// nodes' registration indices) held this iteration.
    #[inline]
    pub(crate) fn gates_open(nodes: &[WorldNode], gates: &[u32]) -> bool {
        gates.iter().all(|&gate| match nodes.get(gate as usize) {
            Some(WorldNode::Gate(gate)) => gate.is_open(),
            _ => true,
        })
    }

    /// Whether the node's last run skipped its body (a run condition was
    /// false, or a factory's inputs had not moved); read between runs, and
    /// always false for a node that is not [`skippable`](Self::skippable).
    pub(crate) fn skipped(&mut self) -> bool {
        match self {
            Self::Body(cell) | Self::Gate(GateCell { cell, .. }) => cell.skipped(),
            Self::Batch(batch) => batch.skipped(),
            Self::Removed | Self::Whole(_) => false,
        }
    }

    /// Runs the node for one iteration.
    ///
    /// # Safety
    /// - The executor runs this node on one thread at a time, as a node of the
    ///   world's current plan, with `env` its environment for this run.
    /// - `env`'s cells live for the whole run (`'s`).
    ///
    /// It runs as node `node` (registration index) of world `world`, at
    /// position `rank` of its plan's order: what it records lands there.
    #[inline(always)]
    pub(crate) unsafe fn run<'s>(
        &'s self,
        env: &NodeEnv<'s>,
        cx: &RunContext<'s>,
        world: u64,
        node: u32,
        rank: u32,
    ) -> NodeOutcome {
        match self {
            WorldNode::Body(cell) => {
                // SAFETY: forwarded from the caller.
                unsafe { cell.run(env, world, node, rank) };
                NodeOutcome::Done
            }
            WorldNode::Gate(gate) => {
                // SAFETY: forwarded from the caller.
                unsafe { gate.run(env, world, node, rank) };
                NodeOutcome::Done
            }
            WorldNode::Batch(batch) => {
                let _recording = crate::recording::Recording::enter(world, node, rank);
                // SAFETY: forwarded from the caller.
                unsafe { batch.run(env, cx) }
            }
            // Plans leave removed nodes out, and run whole-world systems
            // between their parts, never as jobs.
            WorldNode::Removed | WorldNode::Whole(_) => NodeOutcome::Done,
        }
    }
}

/// The change cursors of a world's nodes, as a snapshot keeps them: per
/// node (by registration index), how many cursors it has and a factory's
/// record of its inputs' versions, and every cursor one node after another.
#[derive(Debug, Default, Clone)]
pub(crate) struct NodeCursors {
    nodes: Vec<(u32, Option<u64>)>,
    cursors: Vec<Option<u32>>,
}

impl WorldNode {
    /// Appends its change cursors; a factory's record of its inputs'
    /// versions. A whole-world system's conditions are not read (only
    /// reached through `&mut`): none.
    ///
    /// # Safety
    /// No thread is running the node.
    unsafe fn read_cursors(&self, out: &mut Vec<Option<u32>>) -> Option<u64> {
        match self {
            // SAFETY: forwarded from the caller.
            Self::Body(cell) | Self::Gate(GateCell { cell, .. }) => unsafe {
                cell.read_cursors(out)
            },
            Self::Batch(batch) => {
                // SAFETY: forwarded from the caller.
                unsafe { batch.read_cursors(out) };
                None
            }
            Self::Whole(_) | Self::Removed => None,
        }
    }

    /// Sets what `read_cursors` read.
    fn write_cursors(&mut self, cursors: &[Option<u32>], seen: Option<u64>) {
        match self {
            Self::Body(cell) | Self::Gate(GateCell { cell, .. }) => {
                cell.write_cursors(cursors, seen)
            }
            Self::Batch(batch) => batch.write_cursors(cursors),
            Self::Whole(_) | Self::Removed => {}
        }
    }
}

impl crate::World {
    /// Every node's change cursors into `into` (reusing its memory).
    pub(crate) fn capture_cursors(&self, into: &mut NodeCursors) {
        into.nodes.clear();
        into.cursors.clear();
        for node in &self.nodes {
            let start = into.cursors.len();
            // SAFETY: no node of this world runs: an iteration holds the
            // world `&mut`, and a snapshot refuses to run from a
            // whole-world system or custom command (`running_whole`), the
            // only code holding a `World` while its nodes run.
            let seen = unsafe { node.read_cursors(&mut into.cursors) };
            let count = u32::try_from(into.cursors.len() - start).expect("fewer cursors");
            into.nodes.push((count, seen));
        }
    }

    /// Puts back the cursors `from` holds; a node registered since (or
    /// whose cursors number otherwise) starts over: no cursor (its next run
    /// sees every row as new) and, for a factory, no record of its inputs
    /// (it runs).
    pub(crate) fn restore_cursors(&mut self, from: &NodeCursors) {
        let mut start = 0;
        let mut scratch = Vec::new();
        for (index, node) in self.nodes.iter_mut().enumerate() {
            let captured = from.nodes.get(index).map(|&(count, seen)| {
                let cursors = &from.cursors[start..start + count as usize];
                start += count as usize;
                (cursors, seen)
            });
            scratch.clear();
            // SAFETY: `&mut self`: no node runs.
            unsafe { node.read_cursors(&mut scratch) };
            match captured {
                Some((cursors, seen)) if cursors.len() == scratch.len() => {
                    node.write_cursors(cursors, seen)
                }
                _ => {
                    scratch.fill(None);
                    node.write_cursors(&scratch, None);
                }
            }
        }
    }
}
