//! `window_draw`: rasterizing one frame of the game's window
//! (`sluice-game-window`'s `Framebuffer::draw`, 1280x720, 40,000 units
//! and the ground, on the calling thread alone), beside the floor every
//! frame pays whatever is drawn: clearing the 921,600 pixels (`std`'s
//! `slice::fill`) and, for the window, the same clear and a copy out.
//!
//! The target (issue 38): the window holds 60 frames a second, so the
//! rasterizer's share must sit well inside 16.6 ms; `window` in
//! `benches/README.md` has the whole windowed frame under Xvfb.

#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sluice_game::math::{Vec2, in_disk};
use sluice_game::units::ARENA;
use sluice_game_window::draw::{Camera, Framebuffer, GROUND, Instance, RED};

const UNITS: u64 = 40_000;
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;

fn instances() -> Vec<Instance> {
    let centre = Vec2::new(ARENA / 2.0, ARENA / 2.0);
    let mut instances = vec![Instance::square(centre, ARENA / 2.0, GROUND)];
    instances
        .extend((0..UNITS).map(|seed| Instance::disc(centre + in_disk(seed, 300.0), 2.5, RED)));
    instances
}

fn draw(c: &mut Criterion) {
    let mut group = c.benchmark_group("window_draw");
    group.sample_size(20);
    let instances = instances();
    let camera = Camera::default();
    let mut frame = Framebuffer::new(WIDTH, HEIGHT);
    group.bench_function(BenchmarkId::new("sluice_draw", UNITS), |b| {
        b.iter(|| frame.draw(&instances, &camera))
    });
    // Something was drawn: not every pixel is the clear colour.
    let first = frame.pixels()[0];
    assert!(frame.pixels().iter().any(|&pixel| pixel != first));
    let mut pixels = vec![0u32; (WIDTH * HEIGHT) as usize];
    let mut out = vec![0u32; pixels.len()];
    group.bench_function(
        BenchmarkId::new("std_clear_and_copy", WIDTH * HEIGHT),
        |b| {
            b.iter(|| {
                pixels.fill(std::hint::black_box(0x0010_1820));
                out.copy_from_slice(&pixels);
            })
        },
    );
    group.finish();
}

criterion_group!(benches, draw);
criterion_main!(benches);
