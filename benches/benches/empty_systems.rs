//! `empty_systems`: the executor's own cost. One iteration of 10, 100 and
//! 1,000 no-op systems with mixed access over 16 services (each touches 1 to
//! 3 of them, one access in four gated, seeded), on sluice's parallel and
//! serial executors, beside bevy_ecs running the same systems (same accesses,
//! dynamic `FilteredResourcesMut` systems with empty bodies) in a `Schedule`
//! with its multi-threaded and single-threaded executors.
//!
//! `touching_systems`: the same systems, each touching its first service
//! through a typed parameter (`&R<N>` or `&mut R<N>` bumping it; bevy: `Res`
//! or `ResMut`), on sluice's default and serial executors beside bevy's
//! single-threaded one.
//!
//! Both parallel executors use one thread per core (sluice: the caller plus
//! workers; bevy: its `ComputeTaskPool`). After criterion's figures, a
//! summary measures every peer again, interleaved, and prints ns per node and
//! the ratios (`--summary-only` skips criterion).

#![allow(missing_docs)]

use std::time::Duration;

use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule, SingleThreadedExecutor};
use bevy_ecs::world::World as BevyWorld;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, World};
use sluice_benches::plan_workload::{SystemSpec, systems_with};
use sluice_benches::rounds::interleaved_medians;
use sluice_benches::services::{
    bevy_system, ignore_ambiguities, insert_sluice, register_bevy, touching_bevy, touching_sluice,
    with_accesses,
};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const SERVICES: usize = 16;
const MAX_ACCESSES: usize = 3;
const SEED: u64 = 0x5EED_E4E7;
const SIZES: [usize; 3] = [10, 100, 1_000];

fn specs(nodes: usize) -> Vec<SystemSpec> {
    systems_with(nodes, SERVICES, MAX_ACCESSES, false, SEED)
}

/// What each system does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    /// Nothing, with the accesses of its spec declared (the executor's
    /// own cost).
    Empty,
    /// Reads or bumps (when gated) the first service of its spec, through
    /// a typed parameter (`&R<N>` / `&mut R<N>`; bevy: `Res` / `ResMut`).
    Touching,
}

/// A sluice world holding the systems of `specs`, planned (one iteration run).
fn sluice_world(specs: &[SystemSpec], executor: ExecutorKind, body: Body) -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(executor);
    insert_sluice(&mut world, SERVICES);
    ignore_ambiguities(&mut world);
    for (i, spec) in specs.iter().enumerate() {
        let node = NodeBuilder::new(format!("system_{i}"));
        match body {
            Body::Empty => {
                world.add_system(with_accesses(node, &spec.accesses).run(|_cx| {}));
            }
            Body::Touching => {
                let (service, gated) = spec.accesses[0];
                touching_sluice(&mut world, node, service, gated);
            }
        }
    }
    world.run_iteration().expect("plans and runs");
    world
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BevyExecutor {
    MultiThreaded,
    SingleThreaded,
}

/// A bevy world and schedule with the same systems, initialized (one run).
fn bevy_world(specs: &[SystemSpec], executor: BevyExecutor, body: Body) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    let ids = register_bevy(&mut world, SERVICES);
    let mut schedule = Schedule::default();
    match executor {
        BevyExecutor::MultiThreaded => {
            init_bevy_pool(bench_threads());
            schedule.set_executor(MultiThreadedExecutor::new())
        }
        BevyExecutor::SingleThreaded => schedule.set_executor(SingleThreadedExecutor::new()),
    };
    for spec in specs {
        match body {
            Body::Empty => {
                schedule.add_systems(bevy_system(&mut world, &ids, &spec.accesses, || {}));
            }
            Body::Touching => {
                let (service, gated) = spec.accesses[0];
                touching_bevy(&mut schedule, service, gated);
            }
        }
    }
    schedule.run(&mut world);
    (world, schedule)
}

/// One peer, ready to run iterations.
enum Peer {
    Sluice(Box<World>),
    Bevy(Box<(BevyWorld, Schedule)>),
}

impl Peer {
    const NAMES: [&'static str; 5] = [
        "sluice_adaptive",
        "sluice_parallel",
        "sluice_serial",
        "bevy_multi_threaded",
        "bevy_single_threaded",
    ];

    fn new(name: &str, specs: &[SystemSpec], body: Body) -> Self {
        let sluice = |executor| Peer::Sluice(Box::new(sluice_world(specs, executor, body)));
        let bevy = |executor| Peer::Bevy(Box::new(bevy_world(specs, executor, body)));
        match name {
            "sluice_adaptive" => sluice(ExecutorKind::Adaptive),
            "sluice_parallel" => sluice(ExecutorKind::Parallel),
            "sluice_serial" => sluice(ExecutorKind::Serial),
            "bevy_multi_threaded" => bevy(BevyExecutor::MultiThreaded),
            "bevy_single_threaded" => bevy(BevyExecutor::SingleThreaded),
            _ => unreachable!("unknown peer {name}"),
        }
    }

    #[inline]
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

/// The peers of the `touching_systems` group: the default executor and
/// the serial one beside bevy's single-threaded executor, the fastest of
/// bevy's on these frames.
const TOUCHING_PEERS: [&str; 3] = ["sluice_adaptive", "sluice_serial", "bevy_single_threaded"];

fn empty_systems(c: &mut Criterion) {
    group(c, "empty_systems", &Peer::NAMES, Body::Empty);
}

fn touching_systems(c: &mut Criterion) {
    group(c, "touching_systems", &TOUCHING_PEERS, Body::Touching);
}

fn group(c: &mut Criterion, name: &str, peers: &[&str], body: Body) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    for nodes in SIZES {
        let specs = specs(nodes);
        group.throughput(Throughput::Elements(nodes as u64));
        for &name in peers {
            let mut peer = Peer::new(name, &specs, body);
            group.bench_function(BenchmarkId::new(name, nodes), |b| b.iter(|| peer.iterate()));
        }
    }
    group.finish();
}

/// Median ns per iteration of each of `names`, over rounds of 100 ms
/// interleaved (`sluice_benches::rounds`), so the ratios compare figures
/// taken side by side.
fn medians(names: &[&str], specs: &[SystemSpec], body: Body, rounds: usize) -> Vec<f64> {
    let mut peers: Vec<Peer> = names.iter().map(|n| Peer::new(n, specs, body)).collect();
    interleaved_medians(
        &mut peers,
        rounds,
        Duration::from_millis(100),
        Peer::iterate,
    )
}

fn summary() {
    const ROUNDS: usize = 7;
    println!("\nempty_systems summary (median of {ROUNDS} interleaved rounds of 100 ms):");
    println!(
        "{:>6} {:>22} {:>12} {:>10}",
        "nodes", "peer", "iteration", "ns/node"
    );
    for nodes in SIZES {
        let specs = specs(nodes);
        let medians = medians(&Peer::NAMES, &specs, Body::Empty, ROUNDS);
        for (name, &ns) in Peer::NAMES.iter().zip(&medians) {
            println!(
                "{nodes:>6} {name:>22} {:>9.2} us {:>10.1}",
                ns / 1e3,
                ns / nodes as f64
            );
        }
        let [adaptive, par, ser, bevy_mt, bevy_st] =
            [medians[0], medians[1], medians[2], medians[3], medians[4]];
        println!(
            "{nodes:>6}   bevy_mt / sluice_adaptive = {:.2}x, sluice_adaptive / bevy_st = {:.2}x, \
             sluice_adaptive / sluice_serial = {:.2}x",
            bevy_mt / adaptive,
            adaptive / bevy_st,
            adaptive / ser,
        );
        println!(
            "{nodes:>6}   bevy_mt / sluice_par = {:.2}x, sluice_par / bevy_st = {:.2}x, \
             sluice_par / sluice_serial = {:.2}x, sluice_serial / bevy_st = {:.2}x",
            bevy_mt / par,
            par / bevy_st,
            par / ser,
            ser / bevy_st
        );
    }
}

/// The touching systems, interleaved likewise.
fn touching_summary() {
    const ROUNDS: usize = 7;
    println!("\ntouching_systems summary (median of {ROUNDS} interleaved rounds of 100 ms):");
    for nodes in SIZES {
        let medians = medians(&TOUCHING_PEERS, &specs(nodes), Body::Touching, ROUNDS);
        for (name, &ns) in TOUCHING_PEERS.iter().zip(&medians) {
            println!(
                "{nodes:>6} {name:>22} {:>9.2} us {:>10.1}",
                ns / 1e3,
                ns / nodes as f64
            );
        }
        println!(
            "{nodes:>6}   sluice_adaptive / bevy_st = {:.2}x, sluice_serial / bevy_st = {:.2}x",
            medians[0] / medians[2],
            medians[1] / medians[2],
        );
    }
}

criterion_group!(benches, empty_systems, touching_systems);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--summary-only` skips criterion, as the other benches' summaries do.
    if !args.iter().any(|a| a == "--summary-only") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary();
        touching_summary();
    }
}
