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
//! - `group_condition_holds` / `group_condition_skips`: the same systems
//!   in one group whose condition (`ready`, one read of a service) is
//!   evaluated once per iteration (`World::run_group_if`; bevy 0.20:
//!   `configure_sets(Members.run_if(ready))`), holding (every body runs) or
//!   false (every member skipped).
//! - `run_system`: one call of a registered one-shot system (a `Local<u64>`
//!   and a service written through `&mut`) between iterations:
//!   `World::run_system(id)` beside bevy's `World::run_system(id)` of the
//!   same system (`Local<u64>`, `ResMut`).
//!
//! Peers: sluice's default (adaptive) and serial executors, bevy's
//! single-threaded and multi-threaded executors (the multi-threaded ones on
//! `SLUICE_BENCH_THREADS`' largest count or every core).

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use bevy_ecs::prelude::{
    IntoScheduleConfigs, Local as BevyLocal, Res, Resource, Schedule, SystemCondition, SystemSet,
    World as BevyWorld, not as bevy_not,
};
use bevy_ecs::schedule::{MultiThreadedExecutor, SingleThreadedExecutor};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice::exec::ThreadPool;
use sluice::{ConditionExt, ExecutorKind, Group, Local, NodeBuilder, World, not};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const SYSTEMS: usize = 100;

struct Paused(bool);
struct Ready(bool);

#[derive(Resource)]
struct BevyPaused(bool);
#[derive(Resource)]
struct BevyReady(bool);

/// The set every member of the group workloads is in.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
struct Members;

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
    /// The members' group condition, holding or not.
    GroupCondition(bool),
}

impl Workload {
    /// What `ready` returns.
    fn ready(self) -> bool {
        !matches!(self, Workload::GroupCondition(false))
    }
}

fn sluice_world(executor: ExecutorKind, workload: Workload) -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(executor);
    world.insert(Paused(false));
    world.insert(Ready(workload.ready()));
    if let Workload::GroupCondition(_) = workload {
        world.add_group(Group::new("Members"));
        world.run_group_if("Members", ready);
    }
    for i in 0..SYSTEMS {
        let node = NodeBuilder::new(format!("count{i}"));
        let node = match workload {
            Workload::LocalCounter => node.system(count),
            Workload::CombinedCondition => node.system(count).run_if(ready.and(not(paused))),
            Workload::GroupCondition(_) => node.in_group("Members").system(count),
        };
        world.add_system(node);
    }
    world.run_iteration().expect("plans and runs");
    world
}

fn bevy_world(multi_threaded: bool, workload: Workload) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_resource(BevyPaused(false));
    world.insert_resource(BevyReady(workload.ready()));
    let mut schedule = Schedule::default();
    if multi_threaded {
        init_bevy_pool(bench_threads());
        schedule.set_executor(MultiThreadedExecutor::new());
    } else {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
    if let Workload::GroupCondition(_) = workload {
        schedule.configure_sets(Members.run_if(bevy_ready));
    }
    for _ in 0..SYSTEMS {
        match workload {
            Workload::GroupCondition(_) => {
                schedule.add_systems(bevy_count.in_set(Members));
            }
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

fn group_condition(c: &mut Criterion) {
    group(c, "group_condition_holds", Workload::GroupCondition(true));
    group(c, "group_condition_skips", Workload::GroupCondition(false));
}

struct Score(u64);

#[derive(Resource)]
struct BevyScore(u64);

fn score(mut calls: Local<u64>, score: &mut Score) {
    *calls += 1;
    score.0 += *calls;
}

fn bevy_score(mut calls: BevyLocal<u64>, mut score: bevy_ecs::prelude::ResMut<BevyScore>) {
    *calls += 1;
    score.0 += *calls;
}

fn run_system(c: &mut Criterion) {
    let mut group = c.benchmark_group("system_vocabulary/run_system");
    let mut world = World::new();
    world.insert(Score(0));
    let id = world.register_system(score);
    group.bench_function("sluice", |b| {
        b.iter(|| world.run_system(black_box(id)).unwrap());
    });
    let mut bevy = BevyWorld::new();
    bevy.insert_resource(BevyScore(0));
    let bevy_id = bevy.register_system(bevy_score);
    group.bench_function("bevy", |b| {
        b.iter(|| bevy.run_system(black_box(bevy_id)).unwrap());
    });
    group.finish();
    black_box((
        world.get::<Score>().map(|s| s.0),
        bevy.resource::<BevyScore>().0,
    ));
}

criterion_group!(
    benches,
    local_counter,
    combined_condition,
    group_condition,
    run_system
);
criterion_main!(benches);
