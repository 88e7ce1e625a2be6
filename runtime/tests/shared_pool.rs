//! Issue 36, cheap worlds: worlds made by `World::new` share one pool, run
//! on it at once from several threads, and a panic in one world's system
//! leaves the others (and the pool) working. Every executor kind.

#[path = "support/executors.rs"]
mod executors;

use std::sync::Barrier;

use executors::{PLANNED, executors, quiet_planned_panics};
use sluice::ThreadPool;
use sluice::prelude::*;

struct Count(u64);

/// Every executor kind (the shared pool's thread count is the machine's).
fn kinds() -> Vec<ExecutorKind> {
    let mut kinds: Vec<_> = executors().into_iter().map(|(kind, _)| kind).collect();
    kinds.dedup();
    kinds
}

fn rounds() -> u64 {
    if cfg!(miri) { 2 } else { 50 }
}

#[test]
fn worlds_on_several_threads_share_the_pool_at_once() {
    let threads = if cfg!(miri) { 2 } else { 6 };
    let barrier = Barrier::new(threads);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let barrier = &barrier;
            scope.spawn(move || {
                let mut world = World::new();
                world.set_executor(kinds()[t % kinds().len()]);
                world.insert(Count(0));
                world.add_system(NodeBuilder::new("a").system(|c: &mut Count| c.0 += 1));
                world.add_system(NodeBuilder::new("b").system(|c: &mut Count| c.0 += 10));
                barrier.wait();
                for _ in 0..rounds() {
                    world.run_iteration().unwrap();
                }
                assert!(std::ptr::eq(world.pool(), ThreadPool::shared()));
                assert_eq!(world.get::<Count>().unwrap().0, 11 * rounds());
            });
        }
    });
}

#[test]
fn a_panic_in_one_world_does_not_poison_another() {
    quiet_planned_panics();
    for executor in kinds() {
        let barrier = Barrier::new(2);
        std::thread::scope(|scope| {
            let barrier = &barrier;
            scope.spawn(move || {
                let mut failing = World::new();
                failing.set_executor(executor);
                failing.add_system(NodeBuilder::new("boom").system(|| panic!("{PLANNED}")));
                barrier.wait();
                for _ in 0..rounds() {
                    let error = failing.run_iteration().unwrap_err();
                    assert!(error.to_string().contains("boom"), "{error}");
                }
            });
            scope.spawn(move || {
                let mut healthy = World::new();
                healthy.set_executor(executor);
                healthy.insert(Count(0));
                healthy.add_system(NodeBuilder::new("a").system(|c: &mut Count| c.0 += 1));
                barrier.wait();
                for _ in 0..rounds() {
                    healthy.run_iteration().unwrap();
                }
                assert_eq!(healthy.get::<Count>().unwrap().0, rounds());
            });
        });
        // The failed world's pool runs the next world as before.
        let mut after = World::new();
        after.set_executor(executor);
        after.insert(Count(0));
        after.add_system(NodeBuilder::new("a").system(|c: &mut Count| c.0 += 1));
        after.run_iteration().unwrap();
        assert_eq!(after.get::<Count>().unwrap().0, 1, "{executor:?}");
    }
}

#[test]
fn a_system_may_run_another_world_on_the_shared_pool() {
    for executor in kinds() {
        let mut outer = World::new();
        outer.set_executor(executor);
        outer.insert(Count(0));
        outer.add_system(NodeBuilder::new("inner").system(|count: &mut Count| {
            // Nested in a node of the shared pool: the inner world runs
            // inline rather than waiting for this thread.
            let mut inner = World::new();
            inner.set_executor(ExecutorKind::Parallel);
            inner.insert(Count(0));
            inner.add_system(NodeBuilder::new("a").system(|c: &mut Count| c.0 += 1));
            inner.run_iteration().unwrap();
            count.0 += inner.get::<Count>().unwrap().0;
        }));
        outer.run_iteration().unwrap();
        outer.run_iteration().unwrap();
        assert_eq!(outer.get::<Count>().unwrap().0, 2, "{executor:?}");
    }
}
