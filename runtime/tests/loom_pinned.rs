//! Loom models of the pinned queue (`exec/run.rs`, `RunSlot::push_node`
//! and `RunSlot::visit`; `exec/pool.rs`, `WorkerThread::work_once`): a node
//! given to `CompiledGraph::with_pinned` runs only on the thread that called
//! `run` (worker 0, a game's main thread), is never lost when another
//! thread releases it (the caller wakes for it whether it was parked or
//! running other work), and the other threads never wait for it.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_pinned`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.
//!
//! The real pool runs (the caller plus one worker thread) with the stand-ins
//! of `src/sync.rs`. A lost pinned node is a caller parked forever (loom's
//! deadlock) or a run that returns without it (the run counts below).

#![cfg(loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread::{self, ThreadId};
use sluice::exec::{CompiledGraph, ExecutionState, NodeContext, NodeOutcome};

/// Per node: how often it ran and on which thread, written by its body
/// only, read by its successors' bodies and by the caller after the run, so
/// loom checks that the pinned hand-over orders each write before those
/// reads.
struct Runs(Vec<UnsafeCell<(u32, Option<ThreadId>)>>);

// SAFETY:
// - Each cell is written by its node's body only, and read only by bodies
//   of its successors and by the caller after the run: the executor's
//   ordering, which is what loom checks.
unsafe impl Sync for Runs {}

impl Runs {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| UnsafeCell::new((0, None))).collect())
    }

    fn record(&self, node: usize) {
        // SAFETY:
        // - Only `node`'s body writes its cell (two runs of one node are two
        //   writers, which loom reports as a race).
        self.0[node].with_mut(|run| unsafe {
            (*run).0 += 1;
            (*run).1 = Some(thread::current().id());
        });
    }

    fn get(&self, node: usize) -> (u32, Option<ThreadId>) {
        // SAFETY:
        // - Called after `node` completed (a successor's body, or the caller
        //   after the run).
        self.0[node].with(|run| unsafe { *run })
    }
}

/// Runs `graph` once on a pool of the caller plus one worker, `extra`
/// called in each body after it recorded itself; then checks every node ran
/// once, after its predecessors, and every pinned node on the caller.
fn run_and_check(graph: &CompiledGraph, extra: impl Fn(&NodeContext<'_>) + Sync) {
    let n = graph.node_count();
    let mut state = ExecutionState::new(graph);
    let pool = loom_support::two_thread_pool();
    let runs = Runs::new(n);
    let caller = thread::current().id();
    let result = pool.run(graph, &mut state, |cx| {
        let node = cx.node();
        for from in 0..n {
            if graph.successors(from).contains(&(node as u32)) {
                assert_eq!(runs.get(from).0, 1, "node {node} after {from}");
            }
        }
        assert!(
            !graph.is_pinned(node) || thread::current().id() == caller,
            "pinned node {node} ran off the caller"
        );
        runs.record(node);
        extra(cx);
        NodeOutcome::Done
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    for node in 0..n {
        let (count, on) = runs.get(node);
        assert_eq!(count, 1, "node {node} ran once");
        if graph.is_pinned(node) {
            assert_eq!(on, Some(caller), "pinned node {node} on the caller");
        }
    }
    drop(pool);
}

/// Roots 0 and 1, pinned 2 after 1. Whoever runs 1 releases 2: the worker
/// hands it to the pinned queue and wakes the caller, which is parked, or
/// running 0, or about to look; the caller itself keeps it as its
/// continuation. Either way 2 runs once, on the caller, after 1.
#[test]
fn a_pinned_node_released_by_the_worker_runs_on_the_caller() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(3, &[(1, 2)])
                .unwrap()
                .with_pinned([2])
                .unwrap();
            run_and_check(&graph, |_| {});
        });
}

/// Root 0 releases pinned 1 and unpinned 2; 1's body waits until 2 has
/// run. Run by the caller, 0 keeps 1 and the worker must take 2 while the
/// caller is inside 1; run by the worker, 0 hands 1 over and goes on with
/// 2. A worker that waited for the pinned node (or kept it) would never let
/// 1 finish: loom reports the deadlock.
#[test]
fn the_worker_does_not_wait_for_a_pinned_node() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(3, &[(0, 1), (0, 2)])
                .unwrap()
                .with_pinned([1])
                .unwrap();
            let two_ran = AtomicBool::new(false);
            run_and_check(&graph, |cx| match cx.node() {
                1 => {
                    while !two_ran.load(Ordering::Acquire) {
                        thread::yield_now();
                    }
                }
                2 => two_ran.store(true, Ordering::Release),
                _ => {}
            });
        });
}
