//! `busy_systems`: how close the parallel executors get to the ideal
//! schedule when systems do real work. Every system busy-waits 50 us.
//!
//! - `independent`: 16 systems, each reading its own service.
//! - `chains`: 4 chains of 4 systems, each chain serialised by gating one
//!   service (bevy: the same write access, and `.chain()`).
//!
//! sluice's parallel executor beside bevy_ecs's multi-threaded one, both
//! with one thread per core. The ideal is the larger of total work / cores
//! and the critical path; the overhead is elapsed - ideal. After criterion's
//! figures, a summary measures each case again, interleaved, and prints the
//! overheads.

#![allow(missing_docs)]

use std::hint::spin_loop;
use std::time::{Duration, Instant};

use bevy_ecs::schedule::{IntoScheduleConfigs, MultiThreadedExecutor, Schedule};
use bevy_ecs::world::World as BevyWorld;
use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, World};
use sluice_benches::services::{
    bevy_system, ignore_ambiguities, insert_sluice, register_bevy, with_accesses,
};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const WORK: Duration = Duration::from_micros(50);
const SYSTEMS: usize = 16;
const CHAINS: usize = 4;
const CHAIN_LENGTH: usize = SYSTEMS / CHAINS;

fn spin() {
    let start = Instant::now();
    while start.elapsed() < WORK {
        spin_loop();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Independent,
    Chains,
}

impl Shape {
    const ALL: [Shape; 2] = [Shape::Independent, Shape::Chains];

    fn name(self) -> &'static str {
        match self {
            Shape::Independent => "independent",
            Shape::Chains => "chains",
        }
    }

    /// System `i`'s accesses: its own service read, or its chain's gated.
    fn access(self, i: usize) -> (usize, bool) {
        match self {
            Shape::Independent => (i, false),
            Shape::Chains => (i / CHAIN_LENGTH, true),
        }
    }

    /// max(total work / cores, critical path).
    fn ideal(self, cores: usize) -> Duration {
        let spread = WORK * SYSTEMS as u32 / cores as u32;
        let critical = match self {
            Shape::Independent => WORK,
            Shape::Chains => WORK * CHAIN_LENGTH as u32,
        };
        spread.max(critical)
    }
}

fn sluice_world(shape: Shape, executor: ExecutorKind) -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(executor);
    insert_sluice(&mut world, SYSTEMS);
    ignore_ambiguities(&mut world);
    for i in 0..SYSTEMS {
        let node = with_accesses(NodeBuilder::new(format!("busy_{i}")), &[shape.access(i)]);
        world.add_system(node.run(|_cx| spin()));
    }
    world.run_iteration().expect("plans and runs");
    world
}

fn bevy_world(shape: Shape) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    let ids = register_bevy(&mut world, SYSTEMS);
    let mut schedule = Schedule::default();
    init_bevy_pool(bench_threads());
    schedule.set_executor(MultiThreadedExecutor::new());
    match shape {
        Shape::Independent => {
            for i in 0..SYSTEMS {
                schedule.add_systems(bevy_system(&mut world, &ids, &[shape.access(i)], spin));
            }
        }
        Shape::Chains => {
            for chain in 0..CHAINS {
                let mut member = |k: usize| {
                    let access = shape.access(chain * CHAIN_LENGTH + k);
                    bevy_system(&mut world, &ids, &[access], spin)
                };
                schedule.add_systems((member(0), member(1), member(2), member(3)).chain());
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
    const NAMES: [&'static str; 3] = ["sluice_adaptive", "sluice_parallel", "bevy_multi_threaded"];

    fn new(name: &str, shape: Shape) -> Self {
        match name {
            "sluice_adaptive" => {
                Peer::Sluice(Box::new(sluice_world(shape, ExecutorKind::Adaptive)))
            }
            "sluice_parallel" => {
                Peer::Sluice(Box::new(sluice_world(shape, ExecutorKind::Parallel)))
            }
            "bevy_multi_threaded" => {
                let (world, schedule) = bevy_world(shape);
                Peer::Bevy(Box::new((world, schedule)))
            }
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

fn busy_systems(c: &mut Criterion) {
    let mut group = c.benchmark_group("busy_systems");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for shape in Shape::ALL {
        for name in Peer::NAMES {
            let mut peer = Peer::new(name, shape);
            group.bench_function(BenchmarkId::new(name, shape.name()), |b| {
                b.iter(|| peer.iterate());
            });
        }
    }
    group.finish();
}

/// Every iteration's time over about `budget`, sorted.
fn iteration_times(peer: &mut Peer, budget: Duration) -> Vec<Duration> {
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget {
        let begin = Instant::now();
        peer.iterate();
        times.push(begin.elapsed());
    }
    times.sort();
    times
}

/// Each case again, interleaved in rounds; the 10th percentile, median and
/// mean iteration over all rounds against the ideal (the 10th percentile is
/// the least disturbed by other processes on a shared machine).
fn summary() {
    const ROUNDS: usize = 5;
    let cores = bench_threads();
    println!("\nbusy_systems summary ({cores} threads, {ROUNDS} interleaved rounds of 200 ms):");
    println!(
        "{:>12} {:>20} {:>9} {:>9} {:>9} {:>9} {:>16} {:>16}",
        "shape", "peer", "ideal", "p10", "median", "mean", "p10 overhead", "median overhead"
    );
    for shape in Shape::ALL {
        let ideal = shape.ideal(cores);
        let mut peers: Vec<Peer> = Peer::NAMES.iter().map(|n| Peer::new(n, shape)).collect();
        let mut times = vec![Vec::new(); peers.len()];
        for _ in 0..ROUNDS {
            for (peer, times) in peers.iter_mut().zip(&mut times) {
                times.extend(iteration_times(peer, Duration::from_millis(200)));
            }
        }
        for (name, times) in Peer::NAMES.iter().zip(&mut times) {
            times.sort();
            let p10 = times[times.len() / 10];
            let median = times[times.len() / 2];
            let mean = times.iter().sum::<Duration>() / times.len() as u32;
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            let over = |d: Duration| {
                let o = us(d) - us(ideal);
                format!("{o:>7.1} us {:>5.1}%", 100.0 * o / us(ideal))
            };
            println!(
                "{:>12} {name:>20} {:>6.0} us {:>6.1} us {:>6.1} us {:>6.1} us {:>16} {:>16}",
                shape.name(),
                us(ideal),
                us(p10),
                us(median),
                us(mean),
                over(p10),
                over(median)
            );
        }
    }
}

criterion_group!(benches, busy_systems);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
