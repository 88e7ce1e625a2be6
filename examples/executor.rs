//! The guide's chapter "The executor and its settings" (`docs/guide/09-the-executor.md`), runnable:
//! `cargo run --example executor`.
//!
//! Runs one small frame on the serial, parallel and adaptive executors and
//! checks they agree (serial equivalence), runs two worlds on one shared
//! pool, reads per-node timings and the threads' run statistics, and shows a
//! loose task and a fan-out with `exec::for_each_slice`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use sluice::{ExecutorKind, NodeBuilder, ThreadPool, ThreadPoolBuilder, World};

/// Hit points, gated by two systems ordered one after the other.
struct Hp(i64);
/// What the frame saw, appended by a system that reads `Hp`.
struct Log(Vec<i64>);
/// A loop fanned out over the pool.
struct Heights(Vec<u64>);
/// Where the fan-out adds its sums.
struct Total(AtomicU64);

/// Builds the frame on `pool`: two gates on `Hp`, a reader after both, and
/// a system ordered with none of them that fans its loop out.
fn build(pool: ThreadPool, executor: ExecutorKind) -> World {
    let mut world = World::with_pool(pool);
    world.set_executor(executor);
    world.insert(Hp(10));
    world.insert(Log(Vec::new()));
    world.insert(Heights((1..=10_000).collect()));
    world.insert(Total(AtomicU64::new(0)));
    world.add_system(NodeBuilder::new("regenerate").system(|hp: &mut Hp| hp.0 += 3));
    world.add_system(
        NodeBuilder::new("damage")
            .after("regenerate")
            .system(|hp: &mut Hp| hp.0 = hp.0 * 2 - 7),
    );
    world.add_system(
        NodeBuilder::new("log")
            .after("damage")
            .system(|hp: &Hp, log: &mut Log| log.0.push(hp.0)),
    );
    world.add_system(
        NodeBuilder::new("sum").system(|heights: &Heights, total: &Total| {
            let chunks: Vec<&[u64]> = heights.0.chunks(256).collect();
            sluice::exec::for_each_slice(chunks.len(), &|slices| {
                for slice in slices {
                    total
                        .0
                        .fetch_add(chunks[slice].iter().sum::<u64>(), Ordering::Relaxed);
                }
            });
        }),
    );
    world
}

/// Runs `frames` iterations and returns what the frame computed.
fn outcome(world: &mut World, frames: usize) -> (i64, Vec<i64>, u64) {
    for _ in 0..frames {
        world.run_iteration().expect("the frame runs");
    }
    let hp = world.get::<Hp>().expect("inserted").0;
    let log = world.get::<Log>().expect("inserted").0.clone();
    let total = world
        .get::<Total>()
        .expect("inserted")
        .0
        .load(Ordering::Relaxed);
    (hp, log, total)
}

fn main() {
    // One pool for every world below: the caller plus one worker.
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name_prefix("guide")
        .build()
        .expect("the OS starts the pool's threads");

    // Serial equivalence: every executor gives the serial run's result.
    let mut serial = build(pool.clone(), ExecutorKind::Serial);
    let expected = outcome(&mut serial, 5);
    println!(
        "serial:   hp {} log {:?} total {}",
        expected.0, expected.1, expected.2
    );
    for executor in [ExecutorKind::Parallel, ExecutorKind::Adaptive] {
        let mut world = build(pool.clone(), executor);
        let got = outcome(&mut world, 5);
        println!("{executor:?}: the same");
        assert_eq!(got, expected, "{executor:?} differs from the serial run");
    }
    assert_eq!(
        expected.2,
        5 * 50_005_000,
        "the fan-out covered every slice once"
    );

    // Two worlds on the shared pool at once, from two threads.
    let mut server = build(pool.clone(), ExecutorKind::Parallel);
    let server = std::thread::spawn(move || outcome(&mut server, 5));
    let mut client = build(pool.clone(), ExecutorKind::Parallel);
    let client = outcome(&mut client, 5);
    let server = server.join().expect("the server thread ran");
    assert_eq!((&client, &server), (&expected, &expected));
    println!(
        "client and server worlds shared {} threads",
        pool.num_threads()
    );

    // Timing: per node, and where the threads' time went.
    let mut world = build(pool.clone(), ExecutorKind::Parallel);
    world.enable_timing(true);
    world.run_iteration().expect("the frame runs");
    let plan = world.plan().expect("planned");
    for (index, timing) in world.timings().iter().enumerate() {
        if timing.ran {
            let name = plan.node_name(sluice::NodeIndex(index as u32));
            println!(
                "  {name:<20} start {:>10?} took {:>10?}",
                timing.start, timing.duration
            );
        }
    }
    let stats = world.run_stats();
    assert!(stats.measured, "a pool run with timing on is measured");
    assert_eq!(stats.threads().len(), 2);
    println!(
        "run: wall {:?}, idle {:?}, {} wake-ups, efficiency {:.0}%",
        stats.wall,
        stats.idle,
        stats.wakes,
        stats.efficiency() * 100.0
    );

    // A loose task: polled in the iteration's regular window.
    let done = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&done);
    world
        .spawn_task(async move {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .detach();
    world.run_iteration().expect("the frame runs");
    assert_eq!(
        done.load(Ordering::SeqCst),
        1,
        "the task ran in the iteration"
    );
    println!("the loose task ran inside the next iteration");
}
