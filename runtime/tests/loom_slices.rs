//! Loom model of `exec::for_each_slice` (`exec/slices.rs`): a body on the
//! caller fans three slices out to the pool's other thread, takes back the
//! helper nobody stole, and waits for a stolen one; every slice runs
//! exactly once, and all of them happen before the call returns.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sluice --release --test loom_slices`.
//! Each model here explores inside sluice's machinery too
//! ([`Builder::explore_machinery`](sluice::model::Builder::explore_machinery)):
//! the machinery is what they check.
//!
//! The real pool runs (the caller plus one worker thread) with the stand-ins
//! of `src/sync.rs`.

#![cfg(loom)]

mod loom_support;

use loom::cell::UnsafeCell;
use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, for_each_slice};

const SLICES: usize = 3;

/// One cell per slice, written by the slice's run.
struct Marks(Vec<UnsafeCell<u32>>);

// SAFETY:
// - `for_each_slice` runs each slice index once, so each cell has one
//   writer; the caller reads them only after the call returned, which loom
//   checks happens after every write.
unsafe impl Sync for Marks {}

impl Marks {
    /// Counts one run of `slice`.
    fn mark(&self, slice: usize) {
        // SAFETY: slice `slice` runs once (the property under test: loom
        // reports two writers as a race).
        self.0[slice].with_mut(|mark| unsafe { *mark += 1 });
    }
}

/// Runs `body` as the one node of a run on a pool of the caller plus one
/// worker thread; the run's failure, if any, as text.
fn run_on_two_threads(body: impl Fn() + Sync) -> Result<(), String> {
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let pool = loom_support::two_thread_pool();
    pool.run(&graph, &mut state, |_| {
        body();
        NodeOutcome::Done
    })
    .map_err(|failure| failure.to_string())
}

#[test]
fn every_slice_once_before_the_call_returns() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let marks = Marks((0..SLICES).map(|_| UnsafeCell::new(0)).collect());
            let result = run_on_two_threads(|| {
                for_each_slice(SLICES, &|slices| slices.for_each(|slice| marks.mark(slice)));
                for mark in &marks.0 {
                    // SAFETY: the call returned: every write happened before.
                    assert_eq!(mark.with(|mark| unsafe { *mark }), 1, "once each");
                }
            });
            result.unwrap_or_else(|failure| panic!("{failure}"));
        });
}

/// A slice that panics on the helper's thread is resumed on the caller
/// (failing its node) only after the helper has left the scope.
#[test]
fn a_panicking_slice_reaches_the_caller() {
    sluice::model::Builder::new()
        .explore_machinery(true)
        .check(|| {
            let result = run_on_two_threads(|| {
                for_each_slice(2, &|slices| {
                    if slices.contains(&1) {
                        panic!("slice 1");
                    }
                });
            });
            let failure = result.expect_err("slice 1 panicked");
            assert!(failure.contains("slice 1"), "{failure}");
        });
}
