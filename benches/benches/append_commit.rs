//! Appenders plus a commit (issue 20, reference 003's instance buffer):
//! `RECORDERS` systems each push `PER_RECORDER` values in parallel, then
//! one commit drains them all, per iteration.
//!
//! - `sluice_append`: `Append<T>` parameters into an `AppendBuffer<T>`
//!   (lock-free tail bump), drained by a two-point node's commit
//!   (`instanced.commit(..)`); the planner puts every appender first.
//! - `sluice_mutex_vec`: the same graph over a `Mutex<Vec<T>>` service the
//!   recorders share (`&Instances`) and the commit gates (`&mut`).
//! - `bevy_mutex_vec`: bevy_ecs's closest equivalent: the recorders take
//!   `Res<Instances>` (a `Mutex<Vec>` resource; bevy has no lock-free
//!   shared append into a resource), the commit `ResMut<Instances>` ordered
//!   `.after` them, on the multi-threaded executor.
//!
//! All three run on every core the machine has.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Duration;

use bevy_ecs::prelude::{IntoScheduleConfigs, Res, ResMut, Resource, SystemSet};
use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule};
use bevy_ecs::world::World as BevyWorld;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice::{Append, AppendBuffer, ExecutorKind, IntoSystem, NodeBuilder, ThreadPool, World};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

const RECORDERS: u64 = 8;
const PER_RECORDER: u64 = 2_000;

/// The committed total, so no work is optimised away.
#[derive(Debug, Default, Resource)]
struct Total(u64);

#[derive(Debug, Default, Resource)]
struct Instances(Mutex<Vec<u64>>);

fn sluice_append() -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    world.insert(Total::default());
    world.insert(AppendBuffer::<u64>::with_capacity(
        (RECORDERS * PER_RECORDER) as usize,
    ));
    fn instanced(out: Append<'_, u64>) {
        out.push(0);
    }
    fn commit(buffer: &mut AppendBuffer<u64>, total: &mut Total) {
        total.0 = buffer.drain().sum();
    }
    world.add_system(instanced.commit(commit));
    for r in 0..RECORDERS {
        world.add_system(NodeBuilder::new(format!("recorder{r}")).system(
            move |out: Append<'_, u64>| {
                for k in 0..PER_RECORDER {
                    out.push(r * PER_RECORDER + k);
                }
            },
        ));
    }
    world.run_iteration().expect("runs");
    world
}

fn sluice_mutex_vec() -> World {
    let mut world = World::with_pool(ThreadPool::new(bench_threads()).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    world.insert(Total::default());
    world.insert(Instances::default());
    for r in 0..RECORDERS {
        world.add_system(NodeBuilder::new(format!("recorder{r}")).system(
            move |out: &Instances| {
                for k in 0..PER_RECORDER {
                    out.0.lock().unwrap().push(r * PER_RECORDER + k);
                }
            },
        ));
    }
    world.add_system(NodeBuilder::new("commit").system(
        |instances: &mut Instances, total: &mut Total| {
            total.0 = instances.0.get_mut().unwrap().drain(..).sum();
        },
    ));
    world.run_iteration().expect("runs");
    world
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, SystemSet)]
struct Recorders;

fn bevy_mutex_vec() -> (BevyWorld, Schedule) {
    let mut world = BevyWorld::new();
    world.insert_resource(Total::default());
    world.insert_resource(Instances::default());
    let mut schedule = Schedule::default();
    init_bevy_pool(bench_threads());
    schedule.set_executor(MultiThreadedExecutor::new());
    for r in 0..RECORDERS {
        schedule.add_systems(
            (move |out: Res<Instances>| {
                for k in 0..PER_RECORDER {
                    out.0.lock().unwrap().push(r * PER_RECORDER + k);
                }
            })
            .in_set(Recorders),
        );
    }
    schedule.add_systems(
        (|mut instances: ResMut<Instances>, mut total: ResMut<Total>| {
            total.0 = instances.0.get_mut().unwrap().drain(..).sum();
        })
        .after(Recorders),
    );
    schedule.run(&mut world);
    (world, schedule)
}

fn expected() -> u64 {
    let n = RECORDERS * PER_RECORDER;
    n * (n - 1) / 2
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("append_commit");
    group
        .throughput(Throughput::Elements(RECORDERS * PER_RECORDER))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));

    let mut world = sluice_append();
    group.bench_function("sluice_append", |b| {
        b.iter(|| world.run_iteration().expect("runs"));
    });
    assert_eq!(world.get::<Total>().unwrap().0, expected());

    let mut world = sluice_mutex_vec();
    group.bench_function("sluice_mutex_vec", |b| {
        b.iter(|| world.run_iteration().expect("runs"));
    });
    assert_eq!(world.get::<Total>().unwrap().0, expected());

    let (mut world, mut schedule) = bevy_mutex_vec();
    group.bench_function("bevy_mutex_vec", |b| {
        b.iter(|| schedule.run(&mut world));
    });
    assert_eq!(black_box(world.resource::<Total>().0), expected());
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
