//! Loom models of a batch node (`exec/batch.rs`): helpers claiming slices
//! from the shared counter, `helpers_left` electing the last one to run
//! `after_update`, then the node's completion releasing its successor; and,
//! for a node pinned to the run's caller, the last helper on a worker
//! handing the finish to the caller (`RunSlot::hand_to_caller`), which runs
//! `after_update` whether it was parked, running a helper or looking.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_batch`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.
//!
//! The real pool runs (the caller plus one worker thread) with the stand-ins
//! of `src/sync.rs`.

#![cfg(loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use loom::thread::{self, ThreadId};
use sluice::exec::{
    BatchBuffer, BatchNode, BatchProcessor, CompiledGraph, ExecutionState, NodeOutcome,
};

const ITEMS: usize = 3;

/// One result per item (a slice is one item): written by the slice that
/// claims it, read by `after_update`.
struct Doubler {
    results: Vec<UnsafeCell<u32>>,
    /// What `after_update` saw: the sum of the results, once per batch.
    summed: Vec<u32>,
    /// The thread each `after_update` ran on.
    finished_on: Vec<ThreadId>,
}

impl Doubler {
    fn new() -> Self {
        Self {
            results: (0..ITEMS).map(|_| UnsafeCell::new(0)).collect(),
            summed: Vec::new(),
            finished_on: Vec::new(),
        }
    }
}

// SAFETY:
// - `results[i]` is written only by the slice with start `i` (each slice is
//   claimed once), and read only by `after_update`, which runs after every
//   helper left: the ordering loom checks.
unsafe impl Sync for Doubler {}

impl BatchProcessor for Doubler {
    type Buffer = Vec<u32>;
    type Item = u32;
    const BATCH_SIZE: usize = 1;

    fn items(buffer: &Vec<u32>) -> &[u32] {
        buffer
    }

    fn process_batch(&self, start: usize, batch: &[u32]) {
        // SAFETY:
        // - Slice `start` is claimed by one helper only.
        self.results[start].with_mut(|value| unsafe { *value = batch[0] * 2 });
    }

    fn after_update(&mut self, buffer: &mut Vec<u32>) {
        let sum = self
            .results
            .iter()
            // SAFETY:
            // - Every helper has left; nothing writes the results now.
            .map(|result| result.with(|value| unsafe { *value }))
            .sum();
        self.summed.push(sum);
        self.finished_on.push(thread::current().id());
        buffer.clear();
    }
}

/// A three-slice batch on the caller and one worker (two helpers), then a
/// successor: every slice is processed exactly once, `after_update` runs
/// once, after all of them, and the successor runs after `after_update`.
#[test]
fn slices_claimed_once_and_the_last_helper_finishes() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
            let mut state = ExecutionState::new(&graph);
            let pool = loom_support::two_thread_pool();
            let mut batch = BatchNode::new(Doubler::new());
            let mut buffer = BatchBuffer::new(vec![1, 2, 3]);
            let result = pool.run(&graph, &mut state, |cx| {
                if cx.node() == 0 {
                    return batch.schedule(cx, &buffer);
                }
                NodeOutcome::Done
            });
            if let Err(failure) = result {
                panic!("{failure}");
            }
            assert!(buffer.get_mut().is_empty(), "after_update ran");
            assert_eq!(
                batch.processor_mut().summed,
                [12],
                "every slice once, then after_update once"
            );
            drop(pool);
        });
}

/// The batch above pinned to the caller: the caller runs `before_update`
/// and pushes two helpers; the worker may steal one, and whichever helper
/// leaves last, `after_update` runs once, on the caller, after every slice
/// (a worker leaving last hands the finish over, and the caller takes it
/// whether it was parked, running the other helper or about to look), and
/// the successor runs after it. A lost hand-over is a caller parked
/// forever (loom's deadlock); a finish on the worker fails the thread
/// check.
#[test]
fn a_pinned_batch_finishes_on_the_caller_whoever_leaves_last() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let graph = CompiledGraph::from_edges(2, &[(0, 1)])
                .unwrap()
                .with_pinned([0])
                .unwrap();
            let mut state = ExecutionState::new(&graph);
            let pool = loom_support::two_thread_pool();
            let caller = thread::current().id();
            let mut batch = BatchNode::new(Doubler::new());
            let mut buffer = BatchBuffer::new(vec![1, 2, 3]);
            let result = pool.run(&graph, &mut state, |cx| {
                if cx.node() == 0 {
                    return batch.schedule(cx, &buffer);
                }
                NodeOutcome::Done
            });
            if let Err(failure) = result {
                panic!("{failure}");
            }
            assert!(buffer.get_mut().is_empty(), "after_update ran");
            let processor = batch.processor_mut();
            assert_eq!(
                processor.summed,
                [12],
                "every slice once, then after_update once"
            );
            assert_eq!(
                processor.finished_on,
                [caller],
                "after_update on the caller"
            );
            drop(pool);
        });
}
