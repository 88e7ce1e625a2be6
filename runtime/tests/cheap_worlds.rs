//! Issue 36, cheap worlds: `World::new` runs on the shared pool, started at
//! the first parallel run and never joined, so making and dropping worlds
//! starts no thread. One test in this binary: it counts the process's
//! threads, which another test running beside it would change.

use sluice::prelude::*;
use sluice::{ExecutorKind, ThreadPool};

struct Count(u64);

fn bump(count: &mut Count) {
    count.0 += 1;
}

/// The process's threads, from `/proc/self/task`.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task (Linux)")
        .count()
}

fn busy_world(executor: ExecutorKind) -> World {
    let mut world = World::new();
    world.set_executor(executor);
    world.insert(Count(0));
    world.add_system(NodeBuilder::new("bump").system(bump));
    world
}

#[test]
fn worlds_share_one_pool_started_at_the_first_parallel_run() {
    let before = threads();
    // Made, filled, run inline and dropped: no thread starts.
    for _ in 0..50 {
        let mut world = busy_world(ExecutorKind::Serial);
        world.spawn_batch((0..100u32).map(|i| (i,)));
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Count>().unwrap().0, 1);
    }
    assert_eq!(threads(), before, "a world run inline started threads");

    // The first parallel run starts the shared pool: its workers, once.
    let mut first = busy_world(ExecutorKind::Parallel);
    first.run_iteration().unwrap();
    let pool = ThreadPool::shared().num_threads();
    assert_eq!(first.pool().num_threads(), pool);
    let started = threads();
    assert_eq!(started, before + pool - 1, "the shared pool's workers");
    drop(first);

    // Hundreds more, on every executor: the count stays.
    for round in 0..300 {
        let executor = [
            ExecutorKind::Parallel,
            ExecutorKind::Adaptive,
            ExecutorKind::Serial,
        ][round % 3];
        let mut world = busy_world(executor);
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        assert_eq!(world.get::<Count>().unwrap().0, 3);
    }
    assert_eq!(
        threads(),
        started,
        "dropping worlds joined or started threads"
    );
}
