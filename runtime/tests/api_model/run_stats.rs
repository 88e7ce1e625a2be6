//! Issue 21's operation in the API model: `World::run_stats`, the threads'
//! idle and wake-up time in the last iteration.
//!
//! The model knows what the documentation promises: with timing off the
//! figures are zeros and not `measured`; with timing on, an iteration run
//! on the pool (the parallel executor) is measured, one entry per thread
//! of the pool, and within bounds (no thread idles longer than the
//! iteration's runs, parked time is idle time, the sums are the threads',
//! taken helpers are pushed ones); the serial executor measures nothing.
//! The op turns timing on or off, runs an iteration as `Op::Run` does
//! (so the rows still follow the model), and leaves timing as it set it.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{ExecutorKind, RunStats};

use super::{Model, Op, Real, apply as apply_op, check};

pub(super) fn op() -> impl Strategy<Value = Op> {
    any::<bool>().prop_map(|timing| Op::RunStats { timing })
}

/// What holds of any figures the world reports.
fn bounds(stats: &RunStats) -> Result<(), TestCaseError> {
    let threads = stats.threads();
    check(
        threads
            .iter()
            .all(|t| t.idle <= stats.wall && t.parked <= t.idle),
        || format!("a thread idle beyond the runs, or parked beyond idle: {stats:?}"),
    )?;
    check(
        stats.idle == threads.iter().map(|t| t.idle).sum()
            && stats.parked == threads.iter().map(|t| t.parked).sum()
            && stats.parks == threads.iter().map(|t| t.parks).sum::<u64>(),
        || format!("the sums are not the threads': {stats:?}"),
    )?;
    check(
        stats.helpers_empty <= stats.helpers_taken
            && stats.helpers_taken <= stats.helpers_pushed
            && stats.wake_latency_max <= stats.wake_latency
            && stats.slice_wait <= stats.idle,
        || format!("helpers or waits out of order: {stats:?}"),
    )
}

pub(super) fn apply(
    timing: bool,
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
) -> Result<(), TestCaseError> {
    real.world.enable_timing(timing);
    check(!real.world.run_stats().measured, || {
        "enable_timing kept the last figures".to_owned()
    })?;
    apply_op(&Op::Run, real, model, serial)?;
    let stats = real.world.run_stats();
    if !timing {
        return check(
            !stats.measured && stats.wall.is_zero() && stats.idle.is_zero() && stats.parks == 0,
            || format!("timing off, yet measured: {stats:?}"),
        );
    }
    bounds(stats)?;
    let threads = real.pool.num_threads();
    match real.world.executor() {
        ExecutorKind::Serial => check(!stats.measured, || {
            format!("a serial iteration measured: {stats:?}")
        }),
        ExecutorKind::Parallel => check(stats.measured && stats.threads().len() == threads, || {
            format!("a parallel iteration on {threads} threads: {stats:?}")
        }),
        // The adaptive executor may run a part either way.
        _ => check(!stats.measured || stats.threads().len() == threads, || {
            format!("an adaptive iteration on {threads} threads: {stats:?}")
        }),
    }
}
