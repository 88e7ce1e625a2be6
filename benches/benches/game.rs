//! `game`: one frame of `sluice-game` (feed handshake plus `World::update`)
//! at the default size (20,000 units) and at 10x (200,000), on one thread
//! and on more.
//!
//! The thread counts are `SLUICE_BENCH_THREADS`' (up to 64), or 1 and every
//! core (`sluice_benches::threads`).
//!
//! After criterion's figures a summary runs each game again for a fixed
//! number of frames with per-node timing on and prints, per size and thread
//! count: the mean update time, the speed-up over 1 thread, the parallel
//! efficiency (speed-up / threads), and the share of the threads' time
//! spent outside node bodies (idle and waking, the executor, the loose-task
//! window and the iteration boundary):
//! `1 - sum(node time) / (update time * threads)`. The fixed plan's nodes count as
//! their last step's time times the frame's steps (the runtime keeps only
//! the last step's timings). `--summary-only` skips criterion.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice_benches::threads::thread_counts;
use sluice_game::{Config, Game};

const SIZES: [usize; 2] = [20_000, 200_000];
/// Frames run before measuring, so the armies are in battle.
const WARM_UP_FRAMES: u64 = 240;

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
    let counts = thread_counts();
    println!(
        "\ngame summary (mean update time after {WARM_UP_FRAMES} warm-up frames, per-node timing on)"
    );
    println!(
        "{:>9} | {:>7} | {:>12} | {:>8} | {:>10} | {:>14}",
        "units", "threads", "update", "speed-up", "efficiency", "outside nodes"
    );
    for entities in SIZES {
        let frames = if entities > 50_000 { 60 } else { 300 };
        let mut one = None;
        for &threads in &counts {
            let (update, in_nodes) = measure(entities, threads, frames);
            // The speed-up is against 1 thread when 1 is among the counts.
            let base = *one.get_or_insert((threads, update));
            let speed_up = base.1.as_secs_f64() / update.as_secs_f64() * base.0 as f64;
            println!(
                "{entities:>9} | {threads:>7} | {:>9.3} ms | {speed_up:>7.2}x | {:>9.1}% | {:>13.1}%",
                update.as_secs_f64() * 1e3,
                100.0 * speed_up / threads as f64,
                100.0 * (1.0 - in_nodes / threads as f64),
            );
        }
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
