//! The serial executor: the same contract, one node at a time, in the
//! graph's order, on the calling thread.

use std::fmt;

use super::graph::CompiledGraph;
use super::loose::LooseTasks;
use super::pool::{HeldSeat, Registry, serial_registry};
use super::run::{NodeContext, NodeFailure, NodeOutcome, RunParams, execute_serial_node};
use super::state::ExecutionState;
use crate::sync::Arc;

/// Runs graphs node by node in [`CompiledGraph::order`] on the calling
/// thread; no other thread is involved.
///
/// A deferred node (a batch, or a [`Completion`](super::Completion)) is
/// waited for before the next node starts; batch slices run on the calling
/// thread meanwhile. Loose tasks are drained after the last node, by the
/// same rules as the parallel run.
pub struct SerialExecutor {
    registry: Arc<Registry>,
    /// The seat the crate's own runs keep between runs (claimed at the
    /// first); runs through the public methods claim a seat per run.
    held: Option<HeldSeat>,
}

impl Clone for SerialExecutor {
    /// Another handle on the same registry, holding no seat.
    fn clone(&self) -> Self {
        Self {
            registry: Arc::clone(&self.registry),
            held: None,
        }
    }
}

impl Default for SerialExecutor {
    fn default() -> Self {
        Self::new()
    }
}

impl SerialExecutor {
    /// A serial executor (no thread is started).
    pub fn new() -> Self {
        Self {
            registry: serial_registry(4),
            held: None,
        }
    }

    /// A serial executor with one seat: a world's own, which runs one
    /// iteration at a time and keeps its seat between them (a world is made
    /// often; each seat costs its deque).
    pub(crate) fn single_seat() -> Self {
        Self {
            registry: serial_registry(1),
            held: None,
        }
    }

    /// Runs every node of `graph` once, in order; see
    /// [`ThreadPool::run`](super::ThreadPool::run) for the contract.
    pub fn run<'scope, F>(
        &self,
        graph: &CompiledGraph,
        state: &mut ExecutionState,
        body: F,
    ) -> Result<(), NodeFailure>
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        run_serial(&self.registry, None, graph, state, None, &[], &body)
    }

    /// [`run`](Self::run), then the loose tasks, like
    /// [`ThreadPool::run_with_loose`](super::ThreadPool::run_with_loose).
    pub fn run_with_loose<'scope, F>(
        &self,
        graph: &CompiledGraph,
        state: &mut ExecutionState,
        loose: &LooseTasks,
        body: F,
    ) -> Result<(), NodeFailure>
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        run_serial(&self.registry, None, graph, state, Some(loose), &[], &body)
    }

    /// [`run_with_loose`](Self::run_with_loose), leaving out the nodes at
    /// positions `skip` of [`CompiledGraph::order`] (ascending): nodes whose
    /// run is known beforehand to do nothing (the world's own factories in
    /// a steady frame). No node may depend on a skipped one doing anything.
    ///
    /// Keeps this executor's seat between such runs.
    pub(crate) fn run_with_loose_skipping<'scope, F>(
        &mut self,
        graph: &CompiledGraph,
        state: &mut ExecutionState,
        loose: &LooseTasks,
        skip: &[u32],
        body: F,
    ) -> Result<(), NodeFailure>
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        let held = self
            .held
            .get_or_insert_with(|| Registry::hold_external_seat(&self.registry));
        run_serial(
            &self.registry,
            Some(held),
            graph,
            state,
            Some(loose),
            skip,
            &body,
        )
    }
}

impl fmt::Debug for SerialExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerialExecutor").finish_non_exhaustive()
    }
}

/// A serial run, in `held` (or a seat claimed for the run) of `registry`.
fn run_serial<'scope, F>(
    registry: &Arc<Registry>,
    held: Option<&mut HeldSeat>,
    graph: &CompiledGraph,
    state: &mut ExecutionState,
    loose: Option<&LooseTasks>,
    skip: &[u32],
    body: &F,
) -> Result<(), NodeFailure>
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    let _machinery = crate::sync::coarse::machinery();
    state.prepare_serial(graph);
    let timed = state.timings.begin_run(true);
    let failure = Registry::with_seat(registry, held, |worker| {
        let slot = worker.registry.run_slot(worker.index);
        let params = RunParams::new(graph, state, timed, body, loose, true);
        // SAFETY:
        // - This thread occupies the seat and the slot is closed.
        // - Everything `params` points at is borrowed until this function
        //   returns, after the run is closed below.
        unsafe { slot.open(params, 0) };
        // SAFETY:
        // - This thread holds the hold of the run it just opened: the
        //   parameters stay in place until it closes the run below.
        let params = unsafe { slot.params() };
        let only_hold_left = || slot.active() == 1;
        let order = graph.order();
        // The order in stretches between the skipped positions: no test
        // per node.
        let ends = skip.iter().map(|&at| at as usize).chain([order.len()]);
        let mut from = 0;
        'stretches: for end in ends {
            for &node in order.get(from..end).unwrap_or_default() {
                if slot.is_aborted() {
                    break 'stretches;
                }
                // SAFETY:
                // - `slot` is this seat's serial run, open, and this thread
                //   is its caller holding the hold.
                // - `body` is the body it was opened with, and `params` the
                //   run's, read after the open.
                let deferred = unsafe { execute_serial_node(slot, params, node, worker, body) };
                if deferred {
                    // Run its batch slices (or wait for its completion)
                    // before the next node starts.
                    worker.wait_until(Some(slot), false, only_hold_left, only_hold_left);
                }
            }
            from = end + 1;
        }
        // Nothing queued is the common end: close at once, without the
        // work loop's first look at the queues.
        if !slot.try_close() {
            worker.wait_until(Some(slot), true, || slot.try_close(), only_hold_left);
        }
        slot.take_failure()
    });
    state.timings.finish_run();
    failure.map_or(Ok(()), Err)
}
