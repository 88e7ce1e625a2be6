//! `RunStats`: the threads' idle and wake-up time in a timed parallel run
//! (issue 21), from the executor (`ExecutionState::run_stats`) and the world
//! (`World::run_stats`).

use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, RunStats, ThreadPool};
use sluice::{ExecutorKind, NodeBuilder, Query, World};

/// How long the waiting node holds the run: long against the executor's
/// own nanoseconds, short enough for a test (Miri runs it slowly anyway).
const HOLD: Duration = Duration::from_millis(if cfg!(miri) { 2 } else { 20 });

/// The bounds every measured run keeps: nobody idles longer than the run,
/// parked time is idle time, and the sums are the threads'.
fn check_bounds(stats: &RunStats) {
    assert!(stats.measured);
    let threads = stats.threads();
    for (i, thread) in threads.iter().enumerate() {
        assert!(
            thread.idle <= stats.wall,
            "thread {i}: {thread:?} in {stats:?}"
        );
        assert!(thread.parked <= thread.idle, "thread {i}: {thread:?}");
    }
    assert_eq!(stats.idle, threads.iter().map(|t| t.idle).sum());
    assert_eq!(stats.parked, threads.iter().map(|t| t.parked).sum());
    assert_eq!(stats.parks, threads.iter().map(|t| t.parks).sum::<u64>());
    assert!(stats.helpers_taken <= stats.helpers_pushed, "{stats:?}");
    assert!(stats.helpers_empty <= stats.helpers_taken, "{stats:?}");
    assert!(stats.wake_latency_max <= stats.wake_latency, "{stats:?}");
    assert!(stats.slice_wait <= stats.idle, "{stats:?}");
    assert!((0.0..=1.0).contains(&stats.efficiency()), "{stats:?}");
}

/// 0 -> 1, and node 0 holds the run: whichever thread runs it, the other
/// has nothing to do and waits for node 1 (a barrier between the two
/// nodes). Its idle time is the hold; with timing off nothing is measured.
#[test]
fn a_thread_waiting_on_a_dependency_is_idle_and_timing_off_measures_nothing() {
    let pool = ThreadPool::new(2).unwrap();
    let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let body = |cx: &sluice::exec::NodeContext<'_>| {
        if cx.node() == 0 {
            thread::sleep(HOLD);
        }
        NodeOutcome::Done
    };
    pool.run(&graph, &mut state, body).unwrap();
    assert_eq!(state.run_stats(), &RunStats::default(), "timing off");

    state.enable_timing(true);
    pool.run(&graph, &mut state, body).unwrap();
    let stats = state.run_stats();
    check_bounds(stats);
    assert_eq!(stats.threads().len(), 2);
    assert!(stats.wall >= HOLD, "{stats:?}");
    let waited = stats.threads().iter().map(|t| t.idle).max().unwrap();
    assert!(
        waited >= HOLD * 3 / 4,
        "one thread waited out the hold: {stats:?}"
    );
    assert!(stats.efficiency() < 0.7, "{stats:?}");

    // Between runs the worker parks: a pause before the next run is not
    // that run's idle time.
    thread::sleep(HOLD * 3);
    pool.run(&graph, &mut state, |_| NodeOutcome::Done).unwrap();
    let stats = state.run_stats();
    check_bounds(stats);
    assert!(stats.wall < HOLD, "{stats:?}");

    state.enable_timing(false);
    assert!(!state.run_stats().measured);
    pool.run(&graph, &mut state, body).unwrap();
    let stats = state.run_stats();
    assert!(!stats.measured);
    assert_eq!(stats.idle, Duration::ZERO);
    assert!(stats.threads().iter().all(|t| t.idle.is_zero()));
}

struct Slow(u32);

/// A `par_for_each` whose caller is held at a barrier until the worker
/// has taken its helper: the helper is taken (not taken back), after a
/// measured wait, and the run counts it.
#[test]
fn a_taken_helper_reports_its_wake_up_latency() {
    let rows = if cfg!(miri) { 16 } else { 512 };
    let mut world = World::with_pool(ThreadPool::new(2).unwrap());
    // On the pool: inline, the one runner would wait at the barrier alone.
    world.set_executor(ExecutorKind::Parallel);
    world.spawn_batch((0..rows).map(|i| (Slow(i),)));
    let barrier = std::sync::Arc::new(Barrier::new(2));
    world.add_system(
        NodeBuilder::new("slices").system(move |mut q: Query<'_, &mut Slow>| {
            // Two slices of half the rows, one per runner: each runner
            // meets the other at the barrier on its first row, so the
            // helper is surely taken by the worker.
            q.par_for_each_init_sliced(
                (rows as usize).div_ceil(2),
                || {
                    barrier.wait();
                },
                |(), mut slow| slow.0 = slow.0.wrapping_add(1),
            );
        }),
    );
    world.enable_timing(true);
    for _ in 0..3 {
        world.run_iteration().unwrap();
        let stats = world.run_stats();
        check_bounds(stats);
        assert_eq!(stats.threads().len(), 2);
        assert_eq!(stats.helpers_pushed, 1, "{stats:?}");
        assert_eq!(stats.helpers_taken, 1, "{stats:?}");
        assert_eq!(stats.helpers_empty, 0, "{stats:?}");
        assert!(stats.wake_latency > Duration::ZERO, "{stats:?}");
        assert!(stats.wake_latency <= stats.wall, "{stats:?}");
    }
    world.enable_timing(false);
    world.run_iteration().unwrap();
    assert!(!world.run_stats().measured);
    assert_eq!(world.run_stats().helpers_pushed, 0);
}
