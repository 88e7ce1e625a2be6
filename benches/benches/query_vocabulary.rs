//! `query_vocabulary`: issue 36's query words beside bevy_ecs 0.20's.
//!
//! - `iter_combinations`: 1,000 bodies, every pair once (499,500 pairs),
//!   summing the inverse-square pull between them through read-only
//!   items: sluice's `Query::iter_combinations::<2>()`, bevy's
//!   `QueryState::iter_combinations::<2>()`.
//! - `iter_combinations_mut`: the same pairs, each adding its pull to both
//!   bodies' force (the n-body step): sluice's lending
//!   `iter_combinations_mut().fetch_next()`, bevy's
//!   `iter_combinations_mut().fetch_next()`.
//! - `get_many_mut`: 10,000 calls of `get_many_mut` on 2 entities (of
//!   10,000), swapping their positions: sluice's `Query::get_many_mut`,
//!   bevy's `Query::get_many_mut` (its name in 0.20; `get_disjoint_mut`
//!   came later).
//!
//! Both libraries query a world held exclusively between frames (sluice's
//! `World::query`, bevy's `QueryState`), on the calling thread; the worlds
//! are built outside the timing.

#![allow(missing_docs)]

use std::hint::black_box;

use bevy_ecs::prelude::{Component, Entity as BevyEntity, World as BevyWorld};
use criterion::{Criterion, criterion_group, criterion_main};
use sluice::{Entity, World};

#[derive(Component, Clone, Copy)]
struct Body {
    pos: [f32; 3],
    mass: f32,
    force: [f32; 3],
}

#[derive(Component, Clone, Copy)]
struct Position([f32; 3]);

const BODIES: usize = 1_000;
const ENTITIES: usize = 10_000;
const CALLS: usize = 10_000;

fn body(i: usize) -> Body {
    let f = i as f32;
    Body {
        pos: [f.sin() * 100.0, f.cos() * 100.0, f * 0.1],
        mass: 1.0 + (i % 7) as f32,
        force: [0.0; 3],
    }
}

/// The pull of `b` on `a` (and minus it of `a` on `b`).
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

fn iter_combinations(c: &mut Criterion) {
    let mut group = c.benchmark_group("query_vocabulary/iter_combinations");
    let mut world = World::new();
    world.spawn_batch((0..BODIES).map(|i| (body(i),)));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            let mut total = [0.0f32; 3];
            let bodies = world.query::<&Body>();
            for [x, y] in bodies.iter_combinations() {
                add(&mut total, pull(x, y), 1.0);
            }
            black_box(total)
        })
    });
    let mut bevy = BevyWorld::new();
    bevy.spawn_batch((0..BODIES).map(body));
    let mut state = bevy.query::<&Body>();
    group.bench_function("bevy", |b| {
        b.iter(|| {
            let mut total = [0.0f32; 3];
            for [x, y] in state.iter_combinations::<2>(&bevy) {
                add(&mut total, pull(x, y), 1.0);
            }
            black_box(total)
        })
    });
    group.finish();
}

fn iter_combinations_mut(c: &mut Criterion) {
    let mut group = c.benchmark_group("query_vocabulary/iter_combinations_mut");
    let mut world = World::new();
    world.spawn_batch((0..BODIES).map(|i| (body(i),)));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            let mut bodies = world.query::<&mut Body>();
            let mut pairs = bodies.iter_combinations_mut();
            while let Some([mut x, mut y]) = pairs.fetch_next() {
                let f = pull(&x, &y);
                add(&mut x.force, f, 1.0);
                add(&mut y.force, f, -1.0);
            }
        })
    });
    let mut bevy = BevyWorld::new();
    bevy.spawn_batch((0..BODIES).map(body));
    let mut state = bevy.query::<&mut Body>();
    group.bench_function("bevy", |b| {
        b.iter(|| {
            let mut pairs = state.iter_combinations_mut::<2>(&mut bevy);
            while let Some([mut x, mut y]) = pairs.fetch_next() {
                let f = pull(&x, &y);
                add(&mut x.force, f, 1.0);
                add(&mut y.force, f, -1.0);
            }
        })
    });
    group.finish();
}

/// The pairs asked for: entity `i` with entity `(i * 7919 + 1) % n`.
fn pairs<E: Copy>(entities: &[E]) -> Vec<[E; 2]> {
    let n = entities.len();
    (0..CALLS)
        .map(|i| [entities[i % n], entities[(i * 7919 + 1) % n]])
        .collect()
}

fn get_many_mut(c: &mut Criterion) {
    let mut group = c.benchmark_group("query_vocabulary/get_many_mut");
    let mut world = World::new();
    let entities: Vec<Entity> = (0..ENTITIES)
        .map(|i| world.spawn((Position([i as f32, 0.0, 0.0]),)))
        .collect();
    let sluice_pairs: Vec<[Entity; 2]> = pairs(&entities)
        .into_iter()
        .filter(|[a, b]| a != b)
        .collect();
    group.bench_function("sluice", |b| {
        b.iter(|| {
            let mut positions = world.query::<&mut Position>();
            for &pair in &sluice_pairs {
                if let Ok([mut x, mut y]) = positions.get_many_mut(pair) {
                    std::mem::swap(&mut x.0, &mut y.0);
                }
            }
        })
    });
    let mut bevy = BevyWorld::new();
    let entities: Vec<BevyEntity> = (0..ENTITIES)
        .map(|i| bevy.spawn(Position([i as f32, 0.0, 0.0])).id())
        .collect();
    let bevy_pairs: Vec<[BevyEntity; 2]> = pairs(&entities)
        .into_iter()
        .filter(|[a, b]| a != b)
        .collect();
    let mut state = bevy.query::<&mut Position>();
    group.bench_function("bevy", |b| {
        b.iter(|| {
            let mut positions = state.query_mut(&mut bevy);
            for &pair in &bevy_pairs {
                if let Ok([mut x, mut y]) = positions.get_many_mut(pair) {
                    std::mem::swap(&mut x.0, &mut y.0);
                }
            }
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    iter_combinations,
    iter_combinations_mut,
    get_many_mut
);
criterion_main!(benches);
