//! The serial executor: the same contract, one node at a time, in the
//! graph's order, on the calling thread.

use std::fmt;

use super::graph::CompiledGraph;
use super::loose::LooseTasks;
use super::pool::{Registry, serial_registry};
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
#[derive(Clone)]
pub struct SerialExecutor {
    registry: Arc<Registry>,
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
        run_serial(&self.registry, graph, state, None, &body)
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
        run_serial(&self.registry, graph, state, Some(loose), &body)
    }
}

impl fmt::Debug for SerialExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerialExecutor").finish_non_exhaustive()
    }
}

fn run_serial<'scope, F>(
    registry: &Arc<Registry>,
    graph: &CompiledGraph,
    state: &mut ExecutionState,
    loose: Option<&LooseTasks>,
    body: &F,
) -> Result<(), NodeFailure>
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    let _machinery = crate::sync::coarse::machinery();
    state.prepare_serial(graph);
    let timed = state.timings.begin_run(true);
    let failure = Registry::with_external_seat(registry, |worker| {
        let slot = registry.run_slot(worker.index);
        let params = RunParams::new(graph, state, timed, body, loose, true);
        // SAFETY:
        // - This thread occupies the seat and the slot is closed.
        // - Everything `params` points at is borrowed until this function
        //   returns, after the run is closed below.
        unsafe { slot.open(params, 0) };
        let only_hold_left = || slot.active() == 1;
        for &node in graph.order() {
            if slot.is_aborted() {
                break;
            }
            // SAFETY:
            // - `slot` is this seat's serial run, open, and this thread is
            //   its caller holding the hold.
            let deferred = unsafe { execute_serial_node(slot, node, worker) };
            if deferred {
                // Run its batch slices (or wait for its completion) before
                // the next node starts.
                worker.wait_until(Some(slot), false, only_hold_left, only_hold_left);
            }
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
