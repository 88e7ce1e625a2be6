//! Per-row change detection (issue 36), sluice beside bevy_ecs 0.20.
//!
//! - `partial_write`: 100,000 entities; one frame of two systems: a writer
//!   iterates every row of `A` mutably and writes 10% of them (`Mut<A>`
//!   stamps only those), then a reader counts the rows `Changed<A>`
//!   reports (10,000, asserted before timing). sluice's serial executor
//!   (one thread), bevy's single-threaded schedule with the writer chained
//!   before the reader.
//! - `write_all`: the same frame with every row written, so the cost of the
//!   stamp itself shows beside bevy's.

#![allow(missing_docs)]

use bevy_ecs::prelude::{
    Changed as BevyChanged, Component, IntoScheduleConfigs, Query as BevyQuery, ResMut, Resource,
    Schedule, World as BevyWorld,
};
use bevy_ecs::schedule::SingleThreadedExecutor;
use criterion::{Criterion, criterion_group, criterion_main};
use sluice::exec::ThreadPool;
use sluice::{Changed, ExecutorKind, NodeBuilder, Query, World};

const ENTITIES: u32 = 100_000;

#[derive(Component, Clone, Copy)]
struct A(u32);

/// The row's index, fixed: which rows the writer writes.
#[derive(Component, Clone, Copy)]
struct Index(u32);

/// How many rows the reader saw changed.
#[derive(Resource, Default)]
struct Count(usize);

/// Writes row `index` when it is one of every `every`.
fn due(index: u32, every: u32) -> bool {
    index.is_multiple_of(every)
}

fn sluice_world(every: u32) -> World {
    let mut world = World::with_pool(ThreadPool::new(1).expect("pool"));
    world.set_executor(ExecutorKind::Serial);
    world.spawn_batch((0..ENTITIES).map(|i| (A(0), Index(i))));
    world.insert(Count::default());
    world.add_system(
        NodeBuilder::new("write").system(move |mut rows: Query<(&mut A, &Index)>| {
            rows.for_each(|(mut a, index)| {
                if due(index.0, every) {
                    a.0 += 1;
                }
            });
        }),
    );
    world.add_system(NodeBuilder::new("read").after("write").system(
        |changed: Query<&A, Changed<A>>, count: &mut Count| {
            count.0 = changed.iter().count();
        },
    ));
    world
}

fn bevy_world(every: u32) -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.spawn_batch((0..ENTITIES).map(|i| (A(0), Index(i))));
    world.insert_resource(Count::default());
    let write = move |mut rows: BevyQuery<(&mut A, &Index)>| {
        for (mut a, index) in &mut rows {
            if due(index.0, every) {
                a.0 += 1;
            }
        }
    };
    let read = |changed: BevyQuery<&A, BevyChanged<A>>, mut count: ResMut<Count>| {
        count.0 = changed.iter().count();
    };
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((write, read).chain());
    (world, schedule)
}

fn frame(c: &mut Criterion, name: &str, every: u32) {
    let expected = (ENTITIES as usize).div_ceil(every as usize);
    let mut group = c.benchmark_group(format!("change_detection/{name}"));
    let mut world = sluice_world(every);
    for _ in 0..2 {
        world.run_iteration().expect("runs");
    }
    assert_eq!(world.get::<Count>().unwrap().0, expected, "sluice");
    group.bench_function("sluice", |b| {
        b.iter(|| world.run_iteration().expect("runs"))
    });
    let (mut bevy, mut schedule) = bevy_world(every);
    for _ in 0..2 {
        schedule.run(&mut bevy);
    }
    assert_eq!(bevy.resource::<Count>().0, expected, "bevy");
    group.bench_function("bevy", |b| b.iter(|| schedule.run(&mut bevy)));
    group.finish();
}

fn partial_write(c: &mut Criterion) {
    frame(c, "partial_write", 10);
}

fn write_all(c: &mut Criterion) {
    frame(c, "write_all", 1);
}

criterion_group!(benches, partial_write, write_all);
criterion_main!(benches);
