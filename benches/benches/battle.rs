//! `battle`: one frame of the battle (`sluice_benches::battle`, a faithful
//! subset of sluice-game's frame: physics, a grid per team, steering by
//! neighbours, damage as messages, deaths and respawns through commands) on
//! sluice and on bevy_ecs 0.20, at 20,000 and 200,000 units, after
//! [`WARM_UP_FRAMES`] frames that bring the armies into contact.
//!
//! The thread counts are `SLUICE_BENCH_THREADS`' (up to 64), or 1 and every
//! core (`sluice_benches::threads`). bevy's `ComputeTaskPool` is made once
//! per process, so with more than one count the bench runs itself once per
//! count, each run with its own pool size (sluice's world pool and bevy's
//! compute pool both of that many threads).
//!
//! The battle's cost per frame drifts (2.7x over its first thousand
//! frames at 20,000 units: the armies meet dense and thin out), and
//! criterion runs each side for as many frames as fit its time, so its
//! figures for the two sides, or two thread counts, cover different
//! frames. The summary after them is the comparison: both sides run the
//! same frames (fixed rounds of fixed frame counts, interleaved so that the
//! machine's load hits both alike, `summary_frames`), and it prints each
//! side's mean frame time over them, the ratio sluice / bevy, the median of
//! the rounds' own ratios, and whether both reached the same outcome after
//! the warm-up and again at the end. `--summary-only` skips criterion.

#![allow(missing_docs)]

use std::process::Command;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use sluice_benches::battle::bevy::BevyBattle;
use sluice_benches::battle::sluice::SluiceBattle;
use sluice_benches::battle::{Battle, WARM_UP_FRAMES};
use sluice_benches::rounds::{aligned_rounds, median};
use sluice_benches::threads::{VARIABLE, bench_threads, init_bevy_pool, thread_counts};

const SIZES: [usize; 2] = [20_000, 200_000];
/// Set in the runs this bench starts for each thread count.
const CHILD: &str = "SLUICE_BATTLE_CHILD";

fn warmed(mut battle: Box<dyn Battle>) -> Box<dyn Battle> {
    for _ in 0..WARM_UP_FRAMES {
        battle.frame();
    }
    battle
}

fn sides(units: usize, threads: usize) -> [(&'static str, Box<dyn Battle>); 2] {
    [
        (
            "sluice",
            warmed(Box::new(SluiceBattle::new(units, threads))),
        ),
        ("bevy", warmed(Box::new(BevyBattle::new(units)))),
    ]
}

fn frame(c: &mut Criterion, threads: usize) {
    for units in SIZES {
        let mut group = c.benchmark_group(format!("battle/{units}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(4));
        for (name, mut battle) in sides(units, threads) {
            group.bench_function(BenchmarkId::new(name, format!("{threads}t")), |b| {
                b.iter(|| battle.frame())
            });
        }
        group.finish();
    }
}

/// The summary's frames per size: `(rounds, frames a round)`. Fixed (not a
/// time budget) so that both sides, and the runs at each thread count, time
/// the same frames: the battle's cost drifts by 2.7x over its first thousand
/// frames (the armies meet dense and thin out), so a side that ran further
/// ahead would be timed on cheaper frames.
fn summary_frames(units: usize) -> (usize, usize) {
    if units > 50_000 { (8, 5) } else { (10, 15) }
}

fn summary(threads: usize) {
    println!(
        "\nbattle summary, {threads} thread(s): the same frames on both sides, in \
         interleaved rounds after {WARM_UP_FRAMES} warm-up frames"
    );
    println!(
        "{:>9} | {:>7} | {:>11} | {:>12} | {:>12} | {:>11} | {:>13} | {:>12}",
        "units",
        "threads",
        "frames",
        "sluice",
        "bevy",
        "sluice/bevy",
        "median round",
        "same outcome"
    );
    for units in SIZES {
        let mut sides = sides(units, threads);
        let same_before = {
            let [(_, sluice), (_, bevy)] = &mut sides;
            sluice.outcome() == bevy.outcome()
        };
        let (rounds, frames) = summary_frames(units);
        let samples = aligned_rounds(&mut sides, rounds, frames, |(_, battle)| battle.frame());
        let [(_, sluice), (_, bevy)] = &mut sides;
        let same = same_before && sluice.outcome() == bevy.outcome();
        let mean = |side: &[f64]| side.iter().sum::<f64>() / side.len() as f64;
        let (ours, theirs) = (mean(&samples[0]), mean(&samples[1]));
        let round_ratio = median(samples[0].iter().zip(&samples[1]).map(|(a, b)| a / b));
        let first = WARM_UP_FRAMES as usize;
        println!(
            "{units:>9} | {threads:>7} | {:>11} | {:>9.3} ms | {:>9.3} ms | {:>10.3}x | {:>12.3}x | {:>12}",
            format!("{first}-{}", first + rounds * frames),
            ours / 1e6,
            theirs / 1e6,
            ours / theirs,
            round_ratio,
            if same { "yes" } else { "NO" },
        );
    }
}

/// Runs this bench once per thread count, each run with that count alone.
fn run_per_count(counts: &[usize]) {
    let exe = std::env::current_exe().expect("the bench knows its own path");
    for count in counts {
        let status = Command::new(&exe)
            .args(std::env::args_os().skip(1))
            .env(VARIABLE, count.to_string())
            .env(CHILD, "1")
            .status()
            .expect("the bench starts itself");
        assert!(
            status.success(),
            "the battle bench at {count} thread(s) failed: {status}"
        );
    }
}

fn main() {
    let counts = thread_counts();
    if counts.len() > 1 && std::env::var_os(CHILD).is_none() {
        run_per_count(&counts);
        return;
    }
    let threads = bench_threads();
    let pool = init_bevy_pool(threads);
    assert_eq!(
        pool, threads,
        "bevy's compute pool has {pool} threads, not {threads}"
    );
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--summary-only") {
        let mut criterion = Criterion::default().configure_from_args();
        frame(&mut criterion, threads);
        criterion.final_summary();
    }
    if !args.iter().any(|a| a == "--list" || a == "--test") {
        summary(threads);
    }
}
