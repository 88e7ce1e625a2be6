//! The guide's chapter "The live inspector" (`docs/guide/18-the-live-inspector.md`),
//! runnable: `cargo run --example inspect_serve -- 127.0.0.1:7878 0`, then
//! open <http://127.0.0.1:7878/> in a browser.
//!
//! A swarm of particles drifts and bumps into the walls; each bump is a
//! message, a state says whether the swarm is calm or stormy, and all of
//! it is served live by a [`sluice_inspect::Inspector`] on a loopback
//! port. The first argument is the address (default `127.0.0.1:0`: a free
//! port, printed); the second how many frames to run (default 300, about
//! five seconds; `0`: until stopped); frames run at about 60 a second.

use std::time::{Duration, Instant};

use sluice::plugin::Plugin;
use sluice::prelude::*;
use sluice_inspect::{Inspector, InspectorOptions};

/// Where a particle is.
#[derive(Debug, Clone, Copy)]
struct Pos(f32, f32);

/// How fast it goes.
#[derive(Debug, Clone, Copy)]
struct Vel(f32, f32);

/// A particle hit a wall.
#[derive(Debug)]
struct Bump;

/// The swarm's mood: stormy every other 300 frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Weather {
    #[default]
    Calm,
    Stormy,
}
impl States for Weather {}

/// Frames run so far.
#[derive(Default)]
struct Clock(u64);

/// The swarm: its particles, its systems, its weather.
struct SwarmPlugin {
    particles: usize,
}

impl Plugin for SwarmPlugin {
    fn build(&self, world: &mut World) {
        world.init_service::<Clock>();
        world.init_state::<Weather>();
        world.spawn_batch((0..self.particles).map(|i| {
            let angle = i as f32 * 0.618;
            (Pos(50.0, 50.0), Vel(angle.cos(), angle.sin()))
        }));
        world.add_system(NodeBuilder::new("tick").system(
            |clock: &mut Clock, weather: &mut NextState<Weather>| {
                clock.0 += 1;
                if clock.0.is_multiple_of(300) {
                    let stormy = (clock.0 / 300) % 2 == 1;
                    weather.set(if stormy {
                        Weather::Stormy
                    } else {
                        Weather::Calm
                    });
                }
            },
        ));
        world.add_system(NodeBuilder::new("drift").system(
            |mut particles: Query<(&mut Pos, &mut Vel)>, bumps: Publish<Bump>| {
                for (mut pos, mut vel) in particles.iter_mut() {
                    pos.0 += vel.0;
                    pos.1 += vel.1;
                    if !(0.0..=100.0).contains(&pos.0) {
                        vel.0 = -vel.0;
                        bumps.send(Bump);
                    }
                    if !(0.0..=100.0).contains(&pos.1) {
                        vel.1 = -vel.1;
                        bumps.send(Bump);
                    }
                }
            },
        ));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let frames: u64 = match args.next() {
        Some(frames) => frames.parse()?,
        None => 300,
    };
    let mut world = World::new();
    world.add_plugin(SwarmPlugin { particles: 2_000 })?;
    let mut inspector = Inspector::start(address.as_str(), InspectorOptions::default())?;
    inspector
        .component::<Pos>()
        .component::<Vel>()
        .messages::<Bump>()
        .state::<Weather>();
    println!("inspector: http://{}/", inspector.local_addr());
    let frame_time = Duration::from_millis(16);
    let mut frame = 0;
    while frames == 0 || frame < frames {
        let begin = Instant::now();
        world.run_iteration()?;
        inspector.frame(&mut world);
        frame += 1;
        std::thread::sleep(frame_time.saturating_sub(begin.elapsed()));
    }
    Ok(())
}
