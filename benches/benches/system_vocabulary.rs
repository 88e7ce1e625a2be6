//! `system_vocabulary` (issue 36): the cost of the new system vocabulary
//! per node, beside bevy_ecs 0.20's equivalent, one iteration of 100
//! systems:
//!
//! - `local_counter`: each system bumps a `Local<u64>` counter of its own
//!   (bevy: `Local<u64>`); no system touches a service, so none conflict.
//! - `combined_condition`: the same systems, each guarded by
//!   `ready.and(not(paused))` over two services (bevy 0.20:
//!   `ready.and_then(not(paused))`, its short-circuiting `and`, over two
//!   resources); both operands are evaluated and hold, so every body runs.
//!
//! Peers: sluice's default (adaptive) and serial executors, bevy's
//! single-threaded and multi-threaded executors (the multi-threaded ones on
//! `SLUICE_BENCH_THREADS`' largest count or every core).

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use bevy_ecs::prelude::{
    IntoScheduleConfigs, Local as BevyLocal, Res, Resource, Schedule, SystemCondition,
    World as BevyWorld, not as bevy_not,
};
use bevy_ecs::schedule::{MultiThreadedExecutor, SingleThreadedExecutor};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice::exec::ThreadPool;
use sluice::{ConditionExt, ExecutorKind, Local, NodeBuilder, World, not};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const SYSTEMS: usize = 100;

struct Paused(bool);
struct Ready(bool);

#[derive(Resource)]
struct BevyPaused(bool);
#[derive(Resource)]
struct BevyReady(bool);

fn paused(paused: &Paused) -> bool {
    paused.0
}

fn ready(ready: &Ready) -> bool {
    ready.0
}

fn bevy_paused(paused: Res<BevyPaused>) -> bool {
    paused.0
}

fn bevy_ready(ready: Res<BevyReady>) -> bool {
    ready.0
}

fn count(mut runs: Local<u64>) {
    *runs += 1;
    black_box(*runs);
}

fn bevy_count(mut runs: BevyLocal<u64>) {
    *runs += 1;
    black_box(*runs);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    LocalCounter,
    CombinedCondition,
}

fn sluice_world(executor: ExecutorKind, workload: Workload) -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(executor);
    world.insert(Paused(false));
    world.insert(Ready(true));
    for i in 0..SYSTEMS {
        let node = NodeBuilder::new(format!("count{i}")).system(count);
        let node = match workload {
            Workload::LocalCounter => node,
            Workload::CombinedCondition => node.run_if(ready.and(not(paused))),
        };
        world.add_system(node);
    }
    world.run_iteration().expect("plans and runs");
    world
}

fn bevy_world(multi_threaded: bool, workload: Workload) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_resource(BevyPaused(false));
    world.insert_resource(BevyReady(true));
    let mut schedule = Schedule::default();
    if multi_threaded {
        init_bevy_pool(bench_threads());
        schedule.set_executor(MultiThreadedExecutor::new());
    } else {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
    for _ in 0..SYSTEMS {
        match workload {
            Workload::LocalCounter => {
                schedule.add_systems(bevy_count);
            }
            Workload::CombinedCondition => {
                schedule.add_systems(bevy_count.run_if(bevy_ready.and_then(bevy_not(bevy_paused))));
            }
        }
    }
    schedule.run(&mut world);
    (world, schedule)
}

enum Peer {
    Sluice(Box<World>),
    Bevy(Box<(BevyWorld, Schedule)>),
}

impl Peer {
    const NAMES: [&'static str; 4] = [
        "sluice_adaptive",
        "sluice_serial",
        "bevy_single_threaded",
        "bevy_multi_threaded",
    ];

    fn new(name: &str, workload: Workload) -> Self {
        match name {
            "sluice_adaptive" => {
                Peer::Sluice(Box::new(sluice_world(ExecutorKind::Adaptive, workload)))
            }
            "sluice_serial" => Peer::Sluice(Box::new(sluice_world(ExecutorKind::Serial, workload))),
            "bevy_single_threaded" => Peer::Bevy(Box::new(bevy_world(false, workload))),
            "bevy_multi_threaded" => Peer::Bevy(Box::new(bevy_world(true, workload))),
            _ => unreachable!("unknown peer {name}"),
        }
    }

    fn iterate(&mut self) {
        match self {
            Peer::Sluice(world) => world.run_iteration().expect("runs"),
            Peer::Bevy(bevy) => {
                let (world, schedule) = &mut **bevy;
                schedule.run(world);
            }
        }
    }
}

fn group(c: &mut Criterion, name: &str, workload: Workload) {
    let mut group = c.benchmark_group(format!("system_vocabulary/{name}"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    group.throughput(Throughput::Elements(SYSTEMS as u64));
    for peer_name in Peer::NAMES {
        let mut peer = Peer::new(peer_name, workload);
        group.bench_function(BenchmarkId::new(peer_name, SYSTEMS), |b| {
            b.iter(|| peer.iterate())
        });
    }
    group.finish();
}

fn local_counter(c: &mut Criterion) {
    group(c, "local_counter", Workload::LocalCounter);
}

fn combined_condition(c: &mut Criterion) {
    group(c, "combined_condition", Workload::CombinedCondition);
}

criterion_group!(benches, local_counter, combined_condition);
criterion_main!(benches);
