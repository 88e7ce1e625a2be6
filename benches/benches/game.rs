//! `game`: one frame of `sluice-game` (feed handshake plus `World::update`)
//! at the default size (20,000 units) and at 10x (200,000), on one thread
//! and on more.
//!
//! The thread counts are `SLUICE_BENCH_THREADS`' (up to 64), or 1 and every
//! core (`sluice_benches::threads`).
//!
//! After criterion's figures a summary runs each game again with per-node
//! timing on, every thread count's game of one size in turn in short
//! interleaved rounds (so that the machine's drifting load hits them
//! alike), and prints, per size and thread count: the mean update time, the
//! speed-up over 1 thread, the parallel efficiency (speed-up / threads; over
//! all rounds, and the median of the rounds' own), and the share of the threads' time
//! spent outside node bodies (idle and waking, the executor, the loose-task
//! window and the iteration boundary):
//! `1 - sum(node time) / (update time * threads)`. The fixed plan's nodes count as
//! their last step's time times the frame's steps (the runtime keeps only
//! the last step's timings). Then, from `World::run_stats` (issue 21), for
//! the runs the executor made on the pool: how many per frame and their
//! time, the threads' idle time in them (summed over threads) and the part
//! parked, the time `par_for_each` callers waited for stolen helpers' last
//! slices, parks and wake-ups per frame (counts, which do not depend on the
//! machine's load), the helpers another thread took of those pushed, their
//! wake-up latency (push to start; mean, and max over the frames), and the
//! runs' own efficiency, `1 - idle / (run time * threads)`. Above one
//! thread each count runs twice: on the adaptive executor (the game's) and
//! on the pool alone (`ExecutorKind::Parallel`). `--summary-only` skips
//! criterion.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use sluice::{ExecutorKind, FixedTime, RunStats};
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

/// What the summary reports of one game, per frame.
#[derive(Default)]
struct Figures {
    update: Duration,
    /// Share of the threads' time in node bodies.
    in_nodes: f64,
    /// The executor's measured runs (variable plan plus fixed steps, on the
    /// pool), their count and their time, summed.
    runs: f64,
    wall: Duration,
    idle: Duration,
    parked: Duration,
    parks: f64,
    wakes: f64,
    helpers_pushed: f64,
    helpers_taken: f64,
    wake_latency: Duration,
    wake_latency_max: Duration,
    slice_wait: Duration,
}

/// Adds `stats`, `times` times (a fixed step stands for the frame's steps).
fn add_run(figures: &mut Figures, stats: &RunStats, times: u32) {
    if !stats.measured || times == 0 {
        return;
    }
    let n = u64::from(times) as f64;
    figures.runs += f64::from(times);
    figures.wall += stats.wall * times;
    figures.idle += stats.idle * times;
    figures.parked += stats.parked * times;
    figures.parks += stats.parks as f64 * n;
    figures.wakes += stats.wakes as f64 * n;
    figures.helpers_pushed += stats.helpers_pushed as f64 * n;
    figures.helpers_taken += stats.helpers_taken as f64 * n;
    figures.wake_latency += stats.wake_latency * times;
    figures.wake_latency_max = figures.wake_latency_max.max(stats.wake_latency_max);
    figures.slice_wait += stats.slice_wait * times;
}

/// One game of the summary, run in rounds interleaved with the others of
/// its size (so that the machine's load, which drifts by tens of percent
/// over a minute on a shared machine, hits every thread count alike).
struct Measured {
    game: Game,
    threads: usize,
    executor: ExecutorKind,
    sum: Figures,
    in_nodes: Duration,
    frames: u64,
    /// Each round's update time, summed over its frames.
    rounds: Vec<Duration>,
    nodes: Vec<Duration>,
}

impl Measured {
    fn new(entities: usize, threads: usize, executor: ExecutorKind) -> Self {
        let mut game = game(entities, threads, true);
        game.world_mut().set_executor(executor);
        Self {
            game,
            threads,
            executor,
            sum: Figures::default(),
            in_nodes: Duration::ZERO,
            frames: 0,
            rounds: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// Runs one round of `frames` frames.
    fn round(&mut self, frames: u64) {
        let mut update = Duration::ZERO;
        for _ in 0..frames {
            update += self.game.frame().expect("the frame runs");
            self.game.node_times(&mut self.nodes);
            self.in_nodes += self.nodes.iter().sum::<Duration>();
            let world = self.game.world();
            let steps = world.get::<FixedTime>().map_or(0, |fixed| fixed.steps);
            add_run(&mut self.sum, world.run_stats(), 1);
            add_run(&mut self.sum, world.fixed_run_stats(), steps);
        }
        self.sum.update += update;
        self.frames += frames;
        self.rounds.push(update);
    }

    /// Per-frame means over every round: update time, the share of it in
    /// node bodies, and the executor's idle and wake-up figures
    /// (`World::run_stats`).
    fn figures(&self) -> Figures {
        let (sum, frames) = (&self.sum, self.frames);
        let n = frames as u32;
        let per = |d: Duration| d / n;
        Figures {
            update: per(sum.update),
            in_nodes: self.in_nodes.as_secs_f64() / sum.update.as_secs_f64(),
            runs: sum.runs / frames as f64,
            wall: per(sum.wall),
            idle: per(sum.idle),
            parked: per(sum.parked),
            parks: sum.parks / frames as f64,
            wakes: sum.wakes / frames as f64,
            helpers_pushed: sum.helpers_pushed / frames as f64,
            helpers_taken: sum.helpers_taken / frames as f64,
            wake_latency: if sum.helpers_taken > 0.0 {
                sum.wake_latency.div_f64(sum.helpers_taken)
            } else {
                Duration::ZERO
            },
            wake_latency_max: sum.wake_latency_max,
            slice_wait: per(sum.slice_wait),
        }
    }

    /// The median over the rounds of this game's parallel efficiency
    /// against `base`'s same round: `base / (this * threads / base threads)`.
    fn median_efficiency(&self, base: &Measured) -> f64 {
        let mut ratios: Vec<f64> = self
            .rounds
            .iter()
            .zip(&base.rounds)
            .map(|(mine, theirs)| {
                theirs.as_secs_f64() * base.threads as f64
                    / (mine.as_secs_f64() * self.threads as f64)
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios.get(ratios.len() / 2).copied().unwrap_or(1.0)
    }
}

fn summary() {
    let counts = thread_counts();
    println!(
        "\ngame summary (per frame, mean after {WARM_UP_FRAMES} warm-up frames, per-node timing on)"
    );
    println!(
        "  idle: the threads' time in the executor's runs not spent in a job (summed over \
         threads), parked: the part of it asleep; wake-up: push of a par_for_each helper to a \
         thread taking it (mean, max over the frames); slice wait: callers waiting for stolen \
         helpers' last slices"
    );
    println!(
        "{:>9} | {:>7} | {:>8} | {:>12} | {:>8} | {:>13} | {:>13} | {:>16} | {:>9} | {:>9} | {:>10} | {:>11} | {:>15} | {:>18} | {:>10}",
        "units",
        "threads",
        "executor",
        "update",
        "speed-up",
        "effic all/med",
        "outside nodes",
        "pool runs",
        "idle",
        "parked",
        "slice wait",
        "parks/wakes",
        "helpers taken",
        "wake-up mean/max",
        "run effic."
    );
    for entities in SIZES {
        // Rounds of a few frames each, every game in turn.
        let (rounds, frames) = if entities > 50_000 { (12, 5) } else { (15, 20) };
        // One thread: the adaptive executor runs inline. More: the adaptive
        // executor (what the game uses) and the pool alone.
        let mut games: Vec<Measured> = counts
            .iter()
            .flat_map(|&threads| {
                let executors: &[ExecutorKind] = if threads == 1 {
                    &[ExecutorKind::Adaptive]
                } else {
                    &[ExecutorKind::Adaptive, ExecutorKind::Parallel]
                };
                executors
                    .iter()
                    .map(move |&executor| Measured::new(entities, threads, executor))
            })
            .collect();
        for _ in 0..rounds {
            for game in &mut games {
                game.round(frames);
            }
        }
        // The speed-up is against the first count (1 when it is among them).
        let base = &games[0];
        let base_update = base.figures().update;
        for measured in &games {
            let (threads, f) = (measured.threads, measured.figures());
            let speed_up = base_update.as_secs_f64() / f.update.as_secs_f64() * base.threads as f64;
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            let run_efficiency = if f.wall.is_zero() {
                1.0
            } else {
                1.0 - f.idle.as_secs_f64() / (f.wall.as_secs_f64() * threads as f64)
            };
            println!(
                "{entities:>9} | {threads:>7} | {:>8} | {:>9.3} ms | {speed_up:>7.2}x | {:>5.1}% {:>5.1}% | {:>12.1}% | {:>4.1} in {:>6.0} us | {:>6.0} us | {:>6.0} us | {:>7.0} us | {:>5.1}/{:<5.1} | {:>6.1} of {:>5.1} | {:>6.1}/{:>6.0} us | {:>9.1}%",
                format!("{:?}", measured.executor).to_lowercase(),
                f.update.as_secs_f64() * 1e3,
                100.0 * speed_up / threads as f64,
                100.0 * measured.median_efficiency(base),
                100.0 * (1.0 - f.in_nodes / threads as f64),
                f.runs,
                us(f.wall),
                us(f.idle),
                us(f.parked),
                us(f.slice_wait),
                f.parks,
                f.wakes,
                f.helpers_taken,
                f.helpers_pushed,
                us(f.wake_latency),
                us(f.wake_latency_max),
                100.0 * run_efficiency,
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
