//! The prioritized loose-task budget: a prioritized task that wakes itself
//! and stays pending forever cannot keep a run from returning.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use sluice::exec::{
    CompiledGraph, DEFAULT_PRIORITIZED_BUDGET, ExecutionState, LooseTasks, NodeOutcome,
    SerialExecutor, ThreadPool,
};
use sluice::{ExecutorKind, World};

/// Wakes itself and stays pending, forever; counts its polls.
struct Spinner(Arc<AtomicU64>);

impl Future for Spinner {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.fetch_add(1, Ordering::Relaxed);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn spinner(spawn: impl FnOnce(Spinner)) -> Arc<AtomicU64> {
    let polls = Arc::new(AtomicU64::new(0));
    spawn(Spinner(Arc::clone(&polls)));
    polls
}

#[test]
fn a_self_waking_prioritized_task_stops_at_the_budget_and_carries_over() {
    let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let loose = LooseTasks::new();
    assert_eq!(loose.prioritized_budget(), DEFAULT_PRIORITIZED_BUDGET);
    loose.set_prioritized_budget(1_000);
    let polls = spinner(|task| loose.spawn_prioritized(task).detach());
    let pool = ThreadPool::new(2).unwrap();
    let mut last = 0;
    for run in 1..=3u64 {
        pool.run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
            .unwrap();
        let now = polls.load(Ordering::Relaxed);
        assert!(now > last, "run {run}: the task was polled");
        assert!(now - last <= 1_000, "run {run}: {} polls", now - last);
        last = now;
        assert_eq!(loose.queued_prioritized(), 1, "it carries over");
        assert_eq!(loose.prioritized_overruns(), run, "each run reports it");
    }
    // The serial executor keeps the same bound.
    SerialExecutor::new()
        .run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
        .unwrap();
    let now = polls.load(Ordering::Relaxed);
    assert!(now > last && now - last <= 1_000, "{} polls", now - last);
    assert_eq!(loose.prioritized_overruns(), 4);
}

/// Prioritized tasks that finish within the budget are drained as before:
/// nothing carries over and nothing is reported.
#[test]
fn prioritized_tasks_within_the_budget_finish_in_their_run() {
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let loose = LooseTasks::new();
    loose.set_prioritized_budget(64);
    let done = Arc::new(AtomicU64::new(0));
    for _ in 0..64 {
        let done = Arc::clone(&done);
        loose
            .spawn_prioritized(async move {
                done.fetch_add(1, Ordering::Relaxed);
            })
            .detach();
    }
    ThreadPool::new(2)
        .unwrap()
        .run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
        .unwrap();
    assert_eq!(done.load(Ordering::Relaxed), 64);
    assert_eq!(loose.queued_prioritized(), 0);
    assert_eq!(loose.prioritized_overruns(), 0);
}

/// Through a world, with the default budget: `run_iteration` returns on
/// every executor, and the world says how often the budget stopped it.
#[test]
fn run_iteration_returns_with_a_self_waking_prioritized_task() {
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::new();
        world.set_executor(executor);
        world.add_system(sluice::NodeBuilder::new("frame").system(|| {}));
        let polls = spinner(|task| world.spawn_prioritized_task(task).detach());
        for iteration in 1..=2 {
            world.run_iteration().unwrap();
            assert!(
                polls.load(Ordering::Relaxed) <= iteration * DEFAULT_PRIORITIZED_BUDGET,
                "{executor:?}"
            );
            assert_eq!(
                world.prioritized_overruns(),
                iteration,
                "{executor:?}: {} polls",
                polls.load(Ordering::Relaxed)
            );
        }
    }
}

/// Many short runs of a self-waking task on two threads: every run ends
/// with its budget spent, never earlier. Closing used to be an ABA: the
/// caller looked at the queues, a visitor joined, polled the task (which
/// queued itself again) and left, and the caller's swap of the unchanged
/// count word closed the run with budget left; about one run in a few
/// hundred did.
#[test]
fn no_run_closes_with_budget_left() {
    let runs = if cfg!(miri) { 10 } else { 3_000 };
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let loose = LooseTasks::new();
    loose.set_prioritized_budget(4);
    let polls = spinner(|task| loose.spawn_prioritized(task).detach());
    let pool = ThreadPool::new(2).unwrap();
    for run in 1..=runs {
        pool.run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
            .unwrap();
        assert_eq!(
            loose.prioritized_overruns(),
            run,
            "run {run} closed with budget left ({} polls in all)",
            polls.load(Ordering::Relaxed)
        );
    }
}
