//! The boundary's list of recorded commands comes from the per-type pool
//! (`PooledList`, reference 003 "The structures underneath"): a frame that
//! records `k` commands allocates exactly `k` times what one command costs
//! (the command's own box and the value it lands), with nothing per frame
//! on top for the list the boundary sorts them in.
//!
//! Its own test binary, for the counting global allocator. One test
//! function, so no other test allocates concurrently.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::exec::ThreadPool;
use sluice::{Commands, ExecutorKind, NodeBuilder, World};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, Threads, allocations_during};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many commands the recording system records per frame.
static PER_FRAME: AtomicUsize = AtomicUsize::new(0);

/// The service the commands replace.
struct Score(u64);

#[test]
fn a_frame_of_commands_allocates_per_command_only() {
    for executor in [ExecutorKind::Serial, ExecutorKind::Parallel] {
        let mut world = World::with_pool(ThreadPool::new(2).unwrap());
        world.set_executor(executor);
        world.insert(Score(0));
        world.add_system(NodeBuilder::new("record").system(
            |commands: Commands<'_>, score: &Score| {
                for i in 0..PER_FRAME.load(Ordering::Relaxed) {
                    commands.insert(Score(score.0 + i as u64 + 1));
                }
            },
        ));
        // Warm up with the largest frame, so every buffer has grown.
        PER_FRAME.store(8, Ordering::Relaxed);
        for _ in 0..5 {
            world.run_iteration().unwrap();
        }
        while world.pool().stats().sleeping_workers + 1 < world.pool().num_threads() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut frame = |commands: usize| {
            PER_FRAME.store(commands, Ordering::Relaxed);
            let before = world.get::<Score>().unwrap().0;
            let allocations = allocations_during(Threads::Every, || world.run_iteration().unwrap());
            // The last command recorded lands last.
            assert_eq!(world.get::<Score>().unwrap().0, before + commands as u64);
            allocations
        };
        let (none, one, two, four) = (frame(0), frame(1), frame(2), frame(4));
        assert_eq!(none, 0, "{executor:?}: a frame without commands allocated");
        assert!(one > 0, "{executor:?}: a command costs its box");
        assert_eq!(
            (two, four),
            (2 * one, 4 * one),
            "{executor:?}: allocations for 1, 2, 4 commands are {one}, {two}, {four}: \
             the boundary allocated per frame, not per command"
        );
    }
}
