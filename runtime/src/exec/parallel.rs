//! The parallel run of one iteration on a [`ThreadPool`].
//!
//! The caller claims an external seat (seat 0 when it is the only caller, so
//! the main thread is worker 0), copies the graph's predecessor counts into
//! the execution state's atomics, pushes the roots and works until the run
//! is quiescent. A finished node decrements its successors' counts and pushes
//! the ones that reach zero onto its thread's local deque, keeping one to run
//! next itself. No scan for ready nodes, no allocation.

use super::graph::CompiledGraph;
use super::loose::LooseTasks;
use super::pool::{Registry, ThreadPool};
use super::run::{NodeContext, NodeFailure, NodeOutcome, RunParams};
use super::state::ExecutionState;
use crate::sync::Arc;

impl ThreadPool {
    /// Runs every node of `graph` once, in parallel, each after all its
    /// predecessors completed; returns when the run is quiescent.
    ///
    /// `body` runs a node: it gets a [`NodeContext`] (the node index, the
    /// thread, the means to defer) and says whether the node is done.
    ///
    /// On a panicking node, nothing new starts, running work finishes, and
    /// the first failure is returned; the pool is ready for the next run.
    ///
    /// # Panics
    ///
    /// When `state` was not made for `graph`, or when called from inside a
    /// node or task of this same pool.
    pub fn run<'scope, F>(
        &self,
        graph: &CompiledGraph,
        state: &mut ExecutionState,
        body: F,
    ) -> Result<(), NodeFailure>
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        run_parallel(self.registry(), graph, state, None, &body)
    }

    /// [`run`](Self::run), also draining `loose`: its prioritized tasks to
    /// completion, its regular tasks for the length of its window.
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
        run_parallel(self.registry(), graph, state, Some(loose), &body)
    }
}

fn run_parallel<'scope, F>(
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
    state.prepare(graph);
    let timed = state.timings.begin_run(false);
    let idle_timed = match state.timings.snapshot_clock() {
        Some(clock) => {
            let clock = clock.clone();
            let wakes = registry.wakes();
            registry.idle.begin(&clock, &mut state.timings.probe, wakes);
            true
        }
        None => false,
    };
    let (failure, seat) = Registry::with_external_seat(registry, |worker| {
        let slot = registry.run_slot(worker.index);
        let params = RunParams::new(graph, state, timed, body, loose, false);
        let roots = graph.roots();
        // SAFETY:
        // - This thread occupies the seat, and the slot is closed (the last
        //   run at this seat closed before its caller left the seat).
        // - `graph`, `state`, `body` and `loose` are borrowed until this
        //   function returns, after the run is closed below.
        unsafe { slot.open(params, roots.len() as u32) };
        registry.caller_cpus.record(worker.index, slot.generation());
        // Reversed: the LIFO deque pops the smallest root first.
        for &root in roots.iter().rev() {
            // SAFETY:
            // - Each root's count was added by `open`; the hold is held.
            // - `worker` is a participant of `registry`.
            unsafe { slot.push_node(root, Some(worker), registry) };
        }
        registry.notify(roots.len().saturating_sub(1));
        worker.wait_until(Some(slot), true, || slot.try_close(), || slot.active() == 1);
        // Closed: take the failure before another caller can take the seat.
        (slot.take_failure(), worker.index)
    });
    if idle_timed {
        let wakes = registry.wakes();
        let workers = registry.worker_seats();
        registry
            .idle
            .end(&mut state.timings.probe, seat, workers, wakes);
    }
    state.timings.finish_run();
    failure.map_or(Ok(()), Err)
}
