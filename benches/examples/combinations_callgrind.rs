//! `query_vocabulary/iter_combinations_mut`'s n-body step alone
//! (`benches/benches/query_vocabulary.rs`: 1,000 bodies, every pair once,
//! each adding its pull to both bodies' force), for counting instructions
//! per pair under callgrind, sluice's or bevy_ecs':
//!
//! ```text
//! cargo build --release -p sluice-benches --example combinations_callgrind
//! valgrind --tool=callgrind --toggle-collect='*step_*' \
//!     target/release/examples/combinations_callgrind sluice 3
//! ```
//!
//! Arguments: `sluice` or `bevy`, the steps counted. The instructions
//! divided by the steps and 499,500 are one pair's.

use bevy_ecs::prelude::{Component, World as BevyWorld};
use bevy_ecs::query::QueryState;
use sluice::World;

#[derive(Component, Clone, Copy)]
struct Body {
    pos: [f32; 3],
    mass: f32,
    force: [f32; 3],
}

const BODIES: usize = 1_000;

fn body(i: usize) -> Body {
    let f = i as f32;
    Body {
        pos: [f.sin() * 100.0, f.cos() * 100.0, f * 0.1],
        mass: 1.0 + (i % 7) as f32,
        force: [0.0; 3],
    }
}

#[inline]
fn pull(a: &Body, b: &Body) -> [f32; 3] {
    let d = [
        b.pos[0] - a.pos[0],
        b.pos[1] - a.pos[1],
        b.pos[2] - a.pos[2],
    ];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
    let s = a.mass * b.mass / (r2 * r2.sqrt());
    [d[0] * s, d[1] * s, d[2] * s]
}

#[inline]
fn add(total: &mut [f32; 3], by: [f32; 3], sign: f32) {
    for i in 0..3 {
        total[i] += by[i] * sign;
    }
}

#[inline(never)]
fn step_sluice(world: &mut World) {
    let mut bodies = world.query::<&mut Body>();
    let mut pairs = bodies.iter_combinations_mut();
    while let Some([mut x, mut y]) = pairs.fetch_next() {
        let f = pull(&x, &y);
        add(&mut x.force, f, 1.0);
        add(&mut y.force, f, -1.0);
    }
}

#[inline(never)]
fn step_bevy(world: &mut BevyWorld, state: &mut QueryState<&mut Body>) {
    let mut pairs = state.iter_combinations_mut::<2>(world);
    while let Some([mut x, mut y]) = pairs.fetch_next() {
        let f = pull(&x, &y);
        add(&mut x.force, f, 1.0);
        add(&mut y.force, f, -1.0);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let peer = args.next().unwrap_or_else(|| "sluice".into());
    let steps: usize = args.next().map_or(3, |a| a.parse().expect("steps"));
    match peer.as_str() {
        "sluice" => {
            let mut world = World::new();
            world.spawn_batch((0..BODIES).map(|i| (body(i),)));
            for _ in 0..steps {
                step_sluice(&mut world);
            }
        }
        "bevy" => {
            let mut world = BevyWorld::new();
            world.spawn_batch((0..BODIES).map(body));
            let mut state = world.query::<&mut Body>();
            for _ in 0..steps {
                step_bevy(&mut world, &mut state);
            }
        }
        other => panic!("unknown peer {other:?} (sluice or bevy)"),
    }
    println!("{peer}: {steps} steps");
}
