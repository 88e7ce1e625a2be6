//! Interleaved timing rounds, for the summaries the benches print after
//! criterion's figures: every peer measured in turn, round after round, so
//! that ratios compare figures taken side by side on a shared machine.

use std::time::{Duration, Instant};

/// Mean time of one call of `frame` over about `budget`, in nanoseconds.
pub fn mean_ns(mut frame: impl FnMut(), budget: Duration) -> f64 {
    let mut calls = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        for _ in 0..16 {
            frame();
        }
        calls += 16;
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

/// Per peer, the median over `rounds` of [`mean_ns`] (each `budget` long),
/// the peers measured in turn within each round.
pub fn interleaved_medians<P>(
    peers: &mut [P],
    rounds: usize,
    budget: Duration,
    mut frame: impl FnMut(&mut P),
) -> Vec<f64> {
    let mut samples = vec![Vec::with_capacity(rounds); peers.len()];
    for _ in 0..rounds {
        for (peer, samples) in peers.iter_mut().zip(&mut samples) {
            samples.push(mean_ns(|| frame(peer), budget));
        }
    }
    samples.into_iter().map(median).collect()
}

/// Per peer, the time of each of `rounds` rounds of `frames` calls of
/// `frame` (nanoseconds per call), the peers in turn within each round.
///
/// For workloads whose cost drifts from frame to frame (a battle thins
/// out as it goes), where [`interleaved_medians`]' time budget would let a
/// faster peer run further ahead into cheaper frames: here every peer runs
/// the same frames, so a round's figures compare like with like, and two
/// runs with the same `rounds` and `frames` (one per thread count) cover
/// the same frames too.
pub fn aligned_rounds<P>(
    peers: &mut [P],
    rounds: usize,
    frames: usize,
    mut frame: impl FnMut(&mut P),
) -> Vec<Vec<f64>> {
    let mut samples = vec![Vec::with_capacity(rounds); peers.len()];
    for _ in 0..rounds {
        for (peer, samples) in peers.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            for _ in 0..frames {
                frame(peer);
            }
            samples.push(start.elapsed().as_nanos() as f64 / frames as f64);
        }
    }
    samples
}

/// The median of `values` (the upper one of an even count); `NaN` if empty.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
