//! Loom models of the completion protocol (`exec/run.rs`): the run's count
//! word (open, visitors joining, the caller closing), the pending counters
//! that release a successor when its last predecessor completes, and a
//! deferred completion finished from a thread outside the pool.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_completion`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.
//!
//! The real pool runs (the caller plus one worker thread), with loom's
//! atomics, cells, threads and locks, and the deque and parker stand-ins of
//! `src/sync.rs` (see there for what is assumed of crossbeam's). The pool's
//! local deques hold one job (`local_capacity(1)`: the rest overflow into
//! the ready ring, so visitors join the run) and, under loom, idle threads
//! park without spinning.

#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::{Arc, Mutex};
use loom::thread::{self, JoinHandle};
use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, ThreadPoolBuilder};

/// One cell per node, written by the node's body: a body reads its
/// predecessors' cells and the caller reads every cell after the run, so
/// loom checks that the executor orders each write before those reads.
struct Cells(Vec<UnsafeCell<u32>>);

// SAFETY:
// - Each cell is written by its node's body only, and read only by bodies
//   of its successors and by the caller after the run: the executor's
//   ordering, which is what loom checks.
unsafe impl Sync for Cells {}

impl Cells {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| UnsafeCell::new(0)).collect())
    }

    fn write(&self, node: usize) {
        // SAFETY:
        // - Only `node`'s body writes its cell, once per run.
        self.0[node].with_mut(|value| unsafe { *value = node as u32 + 1 });
    }

    fn read(&self, node: usize) -> u32 {
        // SAFETY:
        // - Called after `node` completed (a successor's body, or the caller
        //   after the run).
        self.0[node].with(|value| unsafe { *value })
    }
}

fn pool() -> sluice::ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .max_concurrent_runs(1)
        .local_capacity(1)
        .build()
        .unwrap()
}

/// A diamond, 0 -> {1, 2} -> 3, on the caller and one worker: node 3 runs
/// after both 1 and 2 (which may complete on different threads) and sees
/// their writes; the caller sees every write once the run returns; every
/// node runs once.
#[test]
fn diamond_releases_the_join_after_both_predecessors() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
            let mut state = ExecutionState::new(&graph);
            let pool = pool();
            let cells = Cells::new(4);
            let result = pool.run(&graph, &mut state, |cx| {
                let node = cx.node();
                for p in 0..4 {
                    if graph.successors(p).contains(&(node as u32)) {
                        assert_eq!(cells.read(p), p as u32 + 1, "node {node} after {p}");
                    }
                }
                cells.write(node);
                NodeOutcome::Done
            });
            if let Err(failure) = result {
                panic!("{failure}");
            }
            for node in 0..4 {
                assert_eq!(cells.read(node), node as u32 + 1, "node {node} ran");
            }
            drop(pool);
        });
}

/// Node 1 of the chain 0 -> 1 -> 2 defers and hands its completion to a
/// thread outside the pool, which writes, then completes (through the
/// injector). Node 2 runs only after that, and sees the write; the run does
/// not return before it.
#[test]
fn deferred_completion_from_a_foreign_thread() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(3, &[(0, 1), (1, 2)]).unwrap();
            let mut state = ExecutionState::new(&graph);
            let pool = pool();
            let cells = Arc::new(Cells::new(3));
            let completer: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);
            let result = pool.run(&graph, &mut state, |cx| {
                let node = cx.node();
                if node > 0 {
                    assert_eq!(
                        cells.read(node - 1),
                        node as u32,
                        "node {node} after its predecessor"
                    );
                }
                if node == 1 {
                    let completion = cx.defer();
                    let cells = cells.clone();
                    let handle = thread::spawn(move || {
                        cells.write(1);
                        completion.complete();
                    });
                    *completer.lock().unwrap() = Some(handle);
                    return NodeOutcome::Deferred;
                }
                cells.write(node);
                NodeOutcome::Done
            });
            if let Err(failure) = result {
                panic!("{failure}");
            }
            for node in 0..3 {
                assert_eq!(cells.read(node), node as u32 + 1, "node {node} ran");
            }
            completer.lock().unwrap().take().unwrap().join().unwrap();
            drop(pool);
        });
}
