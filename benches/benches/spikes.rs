//! `spikes`: what the spike watch costs per node. One iteration of 1,000
//! no-op systems on the serial executor (`sluice_benches::spike_worlds`), in
//! a world that never had the watch (`never`), one where it was turned on
//! and off again (`off`), one with it on (`on`, default thresholds: nothing
//! is reported, every node is judged and recorded), and, to tell the
//! watch's own work from the clock it turns on, one with per-node timing on
//! (`timing`) and one with both (`timing_and_on`). Beside them, in the
//! `clock` group, one clock read of each kind: `std::time::Instant::now`
//! (what the executor read before) and the TSC through `quanta` (what it
//! reads now, once per node on the serial executor). After criterion's
//! figures, a summary measures every variant again, interleaved, and prints
//! ns per node over `never`.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use sluice::World;
use sluice_benches::rounds::{interleaved_medians, mean_ns};
use sluice_benches::spike_worlds::{NODES, Watch, world};

fn spikes(c: &mut Criterion) {
    let mut group = c.benchmark_group("spikes");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .throughput(Throughput::Elements(NODES as u64));
    for watch in Watch::ALL {
        let mut world = world(watch);
        group.bench_function(BenchmarkId::new(watch.name(), NODES), |b| {
            b.iter(|| world.run_iteration().expect("runs"));
        });
    }
    group.finish();
    let mut group = c.benchmark_group("clock");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000));
    group.bench_function("std_instant_now", |b| b.iter(|| black_box(Instant::now())));
    let clock = quanta::Clock::new();
    group.bench_function("quanta_raw", |b| b.iter(|| black_box(clock.raw())));
    group.finish();
}

/// One frame of a summary peer.
enum Peer {
    World(Box<World>),
    StdClock,
    QuantaClock(quanta::Clock),
}

impl Peer {
    fn frame(&mut self) {
        match self {
            Peer::World(world) => world.run_iteration().expect("runs"),
            // NODES reads, so that the figure divides like the worlds'.
            Peer::StdClock => (0..NODES).for_each(|_| {
                black_box(Instant::now());
            }),
            Peer::QuantaClock(clock) => (0..NODES).for_each(|_| {
                black_box(clock.raw());
            }),
        }
    }
}

/// Every variant again, in interleaved rounds (the median round counts), so
/// the differences compare figures taken side by side.
fn summary() {
    const ROUNDS: usize = 9;
    const ROUND: Duration = Duration::from_millis(100);
    let mut peers: Vec<Peer> = Watch::ALL
        .iter()
        .map(|&watch| Peer::World(Box::new(world(watch))))
        .collect();
    peers.push(Peer::StdClock);
    peers.push(Peer::QuantaClock(quanta::Clock::new()));
    // Warm every peer once before the rounds.
    for peer in &mut peers {
        mean_ns(|| peer.frame(), ROUND / 4);
    }
    let medians = interleaved_medians(&mut peers, ROUNDS, ROUND, Peer::frame);
    let per_node: Vec<f64> = medians.iter().map(|ns| ns / NODES as f64).collect();
    println!("\nspikes summary ({NODES} no-op systems, serial, median of {ROUNDS} rounds):");
    println!(
        "{:>14} {:>12} {:>9} {:>14}",
        "variant", "iteration", "ns/node", "over never"
    );
    for (watch, (&ns, &node)) in Watch::ALL.iter().zip(medians.iter().zip(&per_node)) {
        println!(
            "{:>14} {:>9.2} us {node:>9.2} {:>11.2} ns",
            watch.name(),
            ns / 1e3,
            node - per_node[0]
        );
    }
    let on_over_timing = per_node[4] - per_node[3];
    println!("{:>14} {on_over_timing:>36.2} ns", "on over timing");
    println!(
        "one clock read: std Instant::now {:.2} ns, quanta raw (TSC) {:.2} ns",
        per_node[5], per_node[6]
    );
}

criterion_group!(benches, spikes);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
