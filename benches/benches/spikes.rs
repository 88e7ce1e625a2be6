//! `spikes`: what the spike watch costs per node. One iteration of 1,000
//! no-op systems on the serial executor, in a world that never had the
//! watch (`never`), one where it was turned on and off again (`off`), one
//! with it on (`on`, default thresholds: nothing is reported, every node is
//! judged and recorded), and, to tell the watch's own work from the clocks
//! it turns on, one with per-node timing on (`timing`) and one with both
//! (`timing_and_on`). After criterion's figures, a summary measures every
//! variant again, interleaved, and prints ns per node over `never`.

#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, SpikeWatch, World};

const NODES: usize = 1_000;
const VARIANTS: [&str; 5] = ["never", "off", "on", "timing", "timing_and_on"];

/// A world of `NODES` no-op systems in `variant`'s state, planned and run
/// once (the histories exist, the plan is installed).
fn world(variant: &str) -> World {
    let mut world = World::with_pool(ThreadPool::new(0).expect("pool"));
    world.set_executor(ExecutorKind::Serial);
    for i in 0..NODES {
        world.add_system(NodeBuilder::new(format!("system_{i}")).system(|| {}));
    }
    let watch = Some(SpikeWatch::default());
    match variant {
        "never" => {}
        "off" => {
            world.set_spike_watch(watch).expect("valid");
            world.run_iteration().expect("runs");
            world.set_spike_watch(None).expect("valid");
        }
        "on" => world.set_spike_watch(watch).expect("valid"),
        "timing" => world.enable_timing(true),
        "timing_and_on" => {
            world.enable_timing(true);
            world.set_spike_watch(watch).expect("valid");
        }
        _ => unreachable!("unknown variant {variant}"),
    }
    // Past the window, so that every run is judged and evicts the oldest.
    for _ in 0..SpikeWatch::default().window + 1 {
        world.run_iteration().expect("runs");
    }
    world
}

fn spikes(c: &mut Criterion) {
    let mut group = c.benchmark_group("spikes");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .throughput(Throughput::Elements(NODES as u64));
    for variant in VARIANTS {
        let mut world = world(variant);
        group.bench_function(BenchmarkId::new(variant, NODES), |b| {
            b.iter(|| world.run_iteration().expect("runs"));
        });
    }
    group.finish();
}

/// Every variant again, in interleaved rounds of `ROUND` each (the median
/// round counts), so the differences compare figures taken side by side.
fn summary() {
    const ROUNDS: usize = 9;
    const ROUND: Duration = Duration::from_millis(100);
    let mut worlds: Vec<World> = VARIANTS.iter().map(|v| world(v)).collect();
    let mut rounds = vec![Vec::with_capacity(ROUNDS); VARIANTS.len()];
    for _ in 0..ROUNDS {
        for (world, samples) in worlds.iter_mut().zip(&mut rounds) {
            let (start, mut runs) = (Instant::now(), 0u32);
            while start.elapsed() < ROUND {
                world.run_iteration().expect("runs");
                runs += 1;
            }
            samples.push(start.elapsed().as_nanos() as f64 / f64::from(runs));
        }
    }
    let medians: Vec<f64> = rounds
        .iter_mut()
        .map(|samples| {
            samples.sort_by(f64::total_cmp);
            samples[ROUNDS / 2]
        })
        .collect();
    println!("\nspikes summary ({NODES} no-op systems, serial, median of {ROUNDS} rounds):");
    println!(
        "{:>14} {:>12} {:>9} {:>16}",
        "variant", "iteration", "ns/node", "over never"
    );
    for (variant, &ns) in VARIANTS.iter().zip(&medians) {
        println!(
            "{variant:>14} {:>9.2} us {:>9.2} {:>13.2} ns",
            ns / 1e3,
            ns / NODES as f64,
            (ns - medians[0]) / NODES as f64
        );
    }
    println!(
        "{:>14} {:>42.2} ns",
        "on over timing",
        (medians[4] - medians[3]) / NODES as f64
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
