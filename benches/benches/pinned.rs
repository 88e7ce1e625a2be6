//! `pinned`: what a node pinned to the main thread adds to a frame (issue
//! 20). One iteration of 64 small independent systems (each a few hundred
//! nanoseconds of arithmetic) on sluice's parallel executor with the caller
//! plus one worker (2 threads), with one of them (registered in the middle)
//! reading a non-`Send` service through `NonSend<T>`, which pins it to the
//! caller, against the same frame where that system reads an ordinary
//! service. Beside it, bevy_ecs 0.20 running the same frame in a `Schedule`
//! on its multi-threaded executor (its `ComputeTaskPool` defaults to one
//! thread per core: 2 here), the middle system a `NonSend<T>` system (run
//! on the thread that runs the schedule) or a `Res<T>` one.
//!
//! After criterion's figures, a summary measures the four again,
//! interleaved, and prints each pinned frame's added latency.

#![allow(missing_docs)]

use std::cell::Cell;
use std::hint::black_box;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule};
use bevy_ecs::system::{NonSend as BevyNonSend, Res};
use bevy_ecs::world::World as BevyWorld;
use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, NonSend, World};
use sluice_benches::rounds::interleaved_medians;

const SYSTEMS: usize = 64;
/// The system that is pinned (or reads a non-`Send` value) in the pinned
/// frames.
const MIDDLE: usize = SYSTEMS / 2;

/// The work of one small system.
fn work() {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..64 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    }
    black_box(x);
}

/// The non-`Send` value the pinned system reads (an `Rc`, like a window
/// handle).
struct Window(Rc<Cell<u64>>);

/// The ordinary service the same system reads in the unpinned frames.
#[derive(Resource, Default)]
struct Plain(AtomicU64);

fn sluice_world(pinned: bool) -> World {
    let mut world = World::with_pool(ThreadPool::new(2).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    world.insert_non_send(Window(Rc::new(Cell::new(0))));
    world.insert(Plain::default());
    for i in 0..SYSTEMS {
        let node = NodeBuilder::new(format!("system_{i}"));
        world.add_system(match (i == MIDDLE, pinned) {
            (true, true) => node.system(|window: NonSend<Window>| {
                window.0.set(window.0.get() + 1);
                work();
            }),
            (true, false) => node.system(|plain: &Plain| {
                plain.0.fetch_add(1, Ordering::Relaxed);
                work();
            }),
            (false, _) => node.system(work),
        });
    }
    world.run_iteration().expect("plans and runs");
    if pinned {
        let plan = world.plan().expect("planned");
        assert_eq!(plan.order().filter(|&n| plan.is_pinned(n)).count(), 1);
    }
    world
}

fn bevy_world(non_send: bool) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_non_send(Window(Rc::new(Cell::new(0))));
    world.insert_resource(Plain::default());
    let mut schedule = Schedule::default();
    schedule.set_executor(MultiThreadedExecutor::new());
    for i in 0..SYSTEMS {
        if i != MIDDLE {
            schedule.add_systems(work);
        } else if non_send {
            schedule.add_systems(|window: BevyNonSend<Window>| {
                window.0.set(window.0.get() + 1);
                work();
            });
        } else {
            schedule.add_systems(|plain: Res<Plain>| {
                plain.0.fetch_add(1, Ordering::Relaxed);
                work();
            });
        }
    }
    schedule.run(&mut world);
    (world, schedule)
}

/// One peer, ready to run frames.
enum Peer {
    Sluice(Box<World>),
    Bevy(Box<(BevyWorld, Schedule)>),
}

impl Peer {
    const NAMES: [&'static str; 4] = [
        "sluice_unpinned",
        "sluice_pinned",
        "bevy_normal",
        "bevy_non_send",
    ];

    fn new(name: &str) -> Self {
        match name {
            "sluice_unpinned" => Peer::Sluice(Box::new(sluice_world(false))),
            "sluice_pinned" => Peer::Sluice(Box::new(sluice_world(true))),
            "bevy_normal" => Peer::Bevy(Box::new(bevy_world(false))),
            "bevy_non_send" => Peer::Bevy(Box::new(bevy_world(true))),
            _ => unreachable!("unknown peer {name}"),
        }
    }

    #[inline]
    fn frame(&mut self) {
        match self {
            Peer::Sluice(world) => world.run_iteration().expect("runs"),
            Peer::Bevy(bevy) => {
                let (world, schedule) = &mut **bevy;
                schedule.run(world);
            }
        }
    }
}

fn pinned(c: &mut Criterion) {
    let mut group = c.benchmark_group("pinned");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for name in Peer::NAMES {
        let mut peer = Peer::new(name);
        group.bench_function(BenchmarkId::new(name, SYSTEMS), |b| b.iter(|| peer.frame()));
    }
    group.finish();
}

/// The four again, interleaved in rounds (the median round counts), so the
/// added latencies compare figures taken side by side.
fn summary() {
    const ROUNDS: usize = 9;
    println!("\npinned summary (median of {ROUNDS} interleaved rounds of 100 ms):");
    let mut peers: Vec<Peer> = Peer::NAMES.iter().map(|n| Peer::new(n)).collect();
    let medians = interleaved_medians(&mut peers, ROUNDS, Duration::from_millis(100), Peer::frame);
    for (name, &ns) in Peer::NAMES.iter().zip(&medians) {
        println!("{name:>16} {:>9.2} us per frame", ns / 1e3);
    }
    let [unpinned, pinned, bevy_normal, bevy_non_send] =
        [medians[0], medians[1], medians[2], medians[3]];
    println!(
        "added by the pinned node: sluice {:+.2} us ({:+.1}%), bevy {:+.2} us ({:+.1}%); \
         bevy_non_send / sluice_pinned = {:.2}x",
        (pinned - unpinned) / 1e3,
        (pinned / unpinned - 1.0) * 100.0,
        (bevy_non_send - bevy_normal) / 1e3,
        (bevy_non_send / bevy_normal - 1.0) * 100.0,
        bevy_non_send / pinned,
    );
}

criterion_group!(benches, pinned);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
