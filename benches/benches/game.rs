//! `game`: one frame of `sluice-game` (feed handshake plus `World::update`)
//! at the default size (20,000 units) and at 10x (200,000), on one thread
//! and on every core.
//!
//! After criterion's figures a summary runs each game again for a fixed
//! number of frames with per-node timing on and prints, per size: the mean
//! update time on 1 thread and on all cores, the speed-up, and the share of
//! the 1-thread update time spent outside node bodies (the executor, the
//! loose-task window and the iteration boundary):
//! `1 - sum(node time) / update time`. The fixed plan's nodes count as
//! their last step's time times the frame's steps (the runtime keeps only
//! the last step's timings). `--summary-only` skips criterion.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice_game::{Config, Game};

const SIZES: [usize; 2] = [20_000, 200_000];
/// Frames run before measuring, so the armies are in battle.
const WARM_UP_FRAMES: u64 = 240;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn thread_counts() -> Vec<usize> {
    let mut counts = vec![1, cores()];
    counts.dedup();
    counts
}

fn game(entities: usize, threads: usize, timing: bool) -> Game {
    let config = Config {
        threads,
        frames: 0,
        entities,
        timing,
    };
    let mut game = Game::new(&config).expect("the pool starts");
    for _ in 0..WARM_UP_FRAMES {
        game.frame().expect("the frame runs");
    }
    game
}

fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("game");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for entities in SIZES {
        for threads in thread_counts() {
            let mut game = game(entities, threads, false);
            group.bench_function(
                BenchmarkId::new(format!("frame/{entities}"), format!("{threads}t")),
                |b| b.iter(|| game.frame().expect("the frame runs")),
            );
        }
    }
    group.finish();
}

/// Mean update time and the share of it spent in node bodies, over
/// `frames` frames.
fn measure(entities: usize, threads: usize, frames: u64) -> (Duration, f64) {
    let mut game = game(entities, threads, true);
    let mut nodes = Vec::new();
    let mut update = Duration::ZERO;
    let mut in_nodes = Duration::ZERO;
    for _ in 0..frames {
        update += game.frame().expect("the frame runs");
        game.node_times(&mut nodes);
        in_nodes += nodes.iter().sum::<Duration>();
    }
    (
        update / frames as u32,
        in_nodes.as_secs_f64() / update.as_secs_f64(),
    )
}

fn summary() {
    let all = cores();
    println!(
        "\ngame summary (mean update time after {WARM_UP_FRAMES} warm-up frames, per-node timing on)"
    );
    println!(
        "{:>9} | {:>12} | {:>12} | {:>8} | {:>26}",
        "units",
        "1 thread",
        format!("{all} threads"),
        "speed-up",
        "outside nodes (1 thread)"
    );
    for entities in SIZES {
        let frames = if entities > 50_000 { 60 } else { 300 };
        let (one, in_nodes) = measure(entities, 1, frames);
        let (many, _) = measure(entities, all, frames);
        println!(
            "{entities:>9} | {:>9.3} ms | {:>9.3} ms | {:>7.2}x | {:>25.1}%",
            one.as_secs_f64() * 1e3,
            many.as_secs_f64() * 1e3,
            one.as_secs_f64() / many.as_secs_f64(),
            100.0 * (1.0 - in_nodes),
        );
    }
}

criterion_group!(benches, frame);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--summary-only") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary();
    }
}
