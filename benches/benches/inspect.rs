//! `inspect`: what the live inspector (`sluice-inspect`, issue 38) costs
//! the game's frame, at 20,000 units on 2 threads.
//!
//! - `frame_off`: a frame of the game alone (`Game::frame`);
//! - `frame_on`: a frame of an identical game with an inspector attached
//!   (`Game::frame`, then `Inspector::frame`, which answers queued requests
//!   and publishes a snapshot every `publish_every`, 100 ms by default);
//! - `publish`: one publish alone (an inspector set to publish on every
//!   call: the snapshot built from the world and swapped in);
//! - `snapshot_json`: the server's work per snapshot a client reads (its
//!   JSON, made once per version and shared by every client).
//!
//! The target (issue 38): the inspector costs under 1% of the frame. The
//! peer is the same game without an inspector, in the same run; both
//! games measure per-node times (the inspector turns timing on, so the
//! game without it has timing on too).

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sluice_game::{Config, Game};
use sluice_inspect::{Inspector, InspectorOptions};

const UNITS: usize = 20_000;
const THREADS: usize = 2;
/// Frames run before measuring, so the armies are in battle.
const WARM_UP_FRAMES: u64 = 240;

fn game() -> Game {
    let config = Config {
        threads: THREADS,
        frames: 0,
        entities: UNITS,
        timing: true,
    };
    let mut game = Game::new(&config).expect("the pool starts");
    for _ in 0..WARM_UP_FRAMES {
        game.frame().expect("the frame runs");
    }
    game
}

fn inspect(c: &mut Criterion) {
    let mut group = c.benchmark_group("inspect");
    group.sample_size(20);
    let mut off = game();
    let mut on = game();
    let mut inspector = sluice_game::inspect::start("127.0.0.1:0").expect("the inspector starts");
    group.bench_function(BenchmarkId::new("frame_off", UNITS), |b| {
        b.iter(|| off.frame().expect("the frame runs"))
    });
    group.bench_function(BenchmarkId::new("frame_on", UNITS), |b| {
        b.iter(|| {
            on.frame().expect("the frame runs");
            inspector.frame(on.world_mut());
        })
    });
    let mut every = Inspector::start(
        "127.0.0.1:0",
        InspectorOptions {
            publish_every: Duration::ZERO,
            ..InspectorOptions::default()
        },
    )
    .expect("the inspector starts");
    // The first call turns timing on and draws the plan: once, not timed.
    every.frame(off.world_mut());
    group.bench_function(BenchmarkId::new("publish", UNITS), |b| {
        b.iter(|| every.frame(off.world_mut()))
    });
    let snapshot = every.snapshot();
    group.bench_function(BenchmarkId::new("snapshot_json", UNITS), |b| {
        b.iter(|| serde_json::to_string(&*snapshot).expect("a snapshot serializes"))
    });
    group.finish();
}

criterion_group!(benches, inspect);
criterion_main!(benches);
