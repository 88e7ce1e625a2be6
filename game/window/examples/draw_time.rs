//! How long rasterizing a 40,000-unit frame at 1280x720 takes on the
//! calling thread alone: `cargo run --release -p sluice-game-window --example draw_time`.

use std::time::Instant;

use sluice_game::math::{Vec2, in_disk};
use sluice_game::units::ARENA;
use sluice_game_window::draw::{Camera, Framebuffer, GROUND, Instance, RED};

fn main() {
    let mut instances = vec![Instance::square(
        Vec2::new(ARENA / 2.0, ARENA / 2.0),
        ARENA / 2.0,
        GROUND,
    )];
    instances.extend((0..40_000u64).map(|seed| {
        Instance::disc(
            Vec2::new(ARENA / 2.0, ARENA / 2.0) + in_disk(seed, 300.0),
            2.5,
            RED,
        )
    }));
    let mut frame = Framebuffer::new(1280, 720);
    let camera = Camera::default();
    let rounds = 200;
    let started = Instant::now();
    for _ in 0..rounds {
        frame.draw(&instances, &camera);
    }
    let each = started.elapsed() / rounds;
    println!(
        "draw: {:.3} ms a frame ({} instances, 1280x720, one thread)",
        each.as_secs_f64() * 1e3,
        instances.len()
    );
}
