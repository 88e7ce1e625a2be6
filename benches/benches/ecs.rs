//! `ecs`: the entity store and queries (issue 10) beside bevy_ecs 0.20 and
//! hecs, on the ecs_bench_suite workloads:
//!
//! - `simple_insert`: 10,000 entities of four components (a 4×4 transform,
//!   position, rotation, velocity), spawned as a batch into a new world,
//!   which is made and dropped inside the timed round (as ecs_bench_suite
//!   does).
//! - `simple_iter`: over those 10,000 entities, `pos += vel` through a query.
//! - `frag_iter`: 26 archetypes (components `A` to `Z`) × 20 entities, each
//!   with a `Data` component doubled through one query.
//! - `schedule`: 40,000 entities in four archetypes and three systems
//!   swapping components (`ab`, `cd`, `ce`), one frame run by each library's
//!   executor (sluice's adaptive world, bevy's multi-threaded schedule; hecs
//!   has no scheduler, so its three loops run one after another).
//! - `add_remove`: add then remove a component on 10,000 entities, kept in
//!   tables (`sluice_table`, `bevy_table`, hecs) and in sparse sets
//!   (`sluice_sparse`: `StorageType::SparseSet`; `bevy_sparse`:
//!   `#[component(storage = "SparseSet")]`).
//! - `heavy_compute`: 1,000 entities, each inverting its 4×4 matrix 100
//!   times, in parallel: sluice's parallel query node (slices of 64 rows on
//!   the world's pool) and a system calling `Query::par_for_each` (automatic
//!   slices), bevy's `par_iter_mut` in a multi-threaded schedule, hecs
//!   `query().iter_batched(64)` bridged to rayon.
//! - `follow`: 10,000 followers each copying the position of one of 100
//!   leaders: sluice through `Target<Position>` in a query
//!   (`sluice_target`) and `ComponentRef::get` (`sluice_get`), bevy through
//!   a second query's `get`, hecs through `World::get`.
//!
//! The parallel rows (`schedule`, `heavy_compute`) use
//! `SLUICE_BENCH_THREADS`' largest count (up to 64) or every core, for
//! sluice's pool, bevy's compute pool and rayon's global pool alike.
//!
//! The worlds are built outside the timing except in `simple_insert`.

#![allow(missing_docs)]

use std::hint::black_box;

use bevy_ecs::prelude::{Component, Query as BevyQuery, Schedule, World as BevyWorld};
use bevy_ecs::schedule::MultiThreadedExecutor;
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use sluice::exec::ThreadPool;
use sluice::{NodeBuilder, Query, StorageType, World};
use sluice_benches::threads::{bench_threads, init_bevy_pool};

#[derive(Component, Clone, Copy)]
struct Transform(#[allow(dead_code)] [f32; 16]);
#[derive(Component, Clone, Copy)]
struct Position([f32; 3]);
#[derive(Component, Clone, Copy)]
struct Rotation(#[allow(dead_code)] [f32; 3]);
#[derive(Component, Clone, Copy)]
struct Velocity([f32; 3]);

const ENTITIES: usize = 10_000;

fn bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform([1.0; 16]),
        Position([1.0, 0.0, 0.0]),
        Rotation([1.0, 0.0, 0.0]),
        Velocity([1.0, 0.0, 0.0]),
    )
}

fn simple_insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/simple_insert");
    group.bench_function("sluice", |b| {
        b.iter(|| {
            let mut world = World::new();
            black_box(world.spawn_batch((0..ENTITIES).map(|_| bundle())));
            black_box(world);
        })
    });
    group.bench_function("bevy", |b| {
        b.iter(|| {
            let mut world = BevyWorld::new();
            world.spawn_batch((0..ENTITIES).map(|_| bundle()));
            black_box(world);
        })
    });
    group.bench_function("hecs", |b| {
        b.iter(|| {
            let mut world = hecs::World::new();
            world.spawn_batch((0..ENTITIES).map(|_| bundle()));
            black_box(world);
        })
    });
    group.finish();
}

fn simple_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/simple_iter");
    let mut world = World::new();
    world.spawn_batch((0..ENTITIES).map(|_| bundle()));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            world
                .query::<(&Velocity, &mut Position)>()
                .for_each(|(velocity, mut position)| {
                    for i in 0..3 {
                        position.0[i] += velocity.0[i];
                    }
                })
        })
    });
    let mut bevy = BevyWorld::new();
    bevy.spawn_batch((0..ENTITIES).map(|_| bundle()));
    let mut query = bevy.query::<(&Velocity, &mut Position)>();
    group.bench_function("bevy", |b| {
        b.iter(|| {
            query
                .iter_mut(&mut bevy)
                .for_each(|(velocity, mut position)| {
                    for i in 0..3 {
                        position.0[i] += velocity.0[i];
                    }
                })
        })
    });
    let mut hecs = hecs::World::new();
    hecs.spawn_batch((0..ENTITIES).map(|_| bundle()));
    group.bench_function("hecs", |b| {
        b.iter(|| {
            for (_, (velocity, position)) in hecs.query_mut::<(&Velocity, &mut Position)>() {
                for i in 0..3 {
                    position.0[i] += velocity.0[i];
                }
            }
        })
    });
    group.finish();
}

#[derive(Component, Clone, Copy)]
struct Data(f32);

macro_rules! fragmented {
    ($($name:ident)*) => {
        $(
            #[derive(Component, Clone, Copy)]
            struct $name(#[allow(dead_code)] f32);
        )*

        /// 20 entities of each of the 26 archetypes `(X, Data)`.
        fn frag_worlds() -> (World, BevyWorld, hecs::World) {
            let mut sluice = World::new();
            let mut bevy = BevyWorld::new();
            let mut hecs = hecs::World::new();
            $(
                sluice.spawn_batch((0..20).map(|_| ($name(0.0), Data(1.0))));
                bevy.spawn_batch((0..20).map(|_| ($name(0.0), Data(1.0))));
                hecs.spawn_batch((0..20).map(|_| ($name(0.0), Data(1.0))));
            )*
            (sluice, bevy, hecs)
        }
    };
}

fragmented!(A B C D E F G H I J K L M N O P Q R S T U V W X Y Z);

fn frag_iter(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/frag_iter");
    let (mut world, mut bevy, mut hecs) = frag_worlds();
    group.bench_function("sluice", |b| {
        b.iter(|| {
            world
                .query::<&mut Data>()
                .for_each(|mut data| data.0 *= 2.0)
        })
    });
    let mut query = bevy.query::<&mut Data>();
    group.bench_function("bevy", |b| {
        b.iter(|| query.iter_mut(&mut bevy).for_each(|mut data| data.0 *= 2.0))
    });
    group.bench_function("hecs", |b| {
        b.iter(|| {
            for (_, data) in hecs.query_mut::<&mut Data>() {
                data.0 *= 2.0;
            }
        })
    });
    group.finish();
}

#[derive(Component, Clone, Copy)]
struct SwapA(f32);
#[derive(Component, Clone, Copy)]
struct SwapB(f32);
#[derive(Component, Clone, Copy)]
struct SwapC(f32);
#[derive(Component, Clone, Copy)]
struct SwapD(f32);
#[derive(Component, Clone, Copy)]
struct SwapE(f32);

const SCHEDULE_ENTITIES: usize = 10_000;

/// The schedule workload's four archetypes into `$world` (each library's
/// `spawn_batch` takes the same tuples).
macro_rules! spawn_swappers {
    ($world:ident) => {
        $world.spawn_batch((0..SCHEDULE_ENTITIES).map(|_| (SwapA(0.0), SwapB(1.0))));
        $world.spawn_batch((0..SCHEDULE_ENTITIES).map(|_| (SwapA(0.0), SwapB(1.0), SwapC(2.0))));
        $world.spawn_batch(
            (0..SCHEDULE_ENTITIES).map(|_| (SwapA(0.0), SwapB(1.0), SwapC(2.0), SwapD(3.0))),
        );
        $world.spawn_batch(
            (0..SCHEDULE_ENTITIES).map(|_| (SwapA(0.0), SwapB(1.0), SwapC(2.0), SwapE(4.0))),
        );
    };
}

fn sluice_ab(mut q: Query<(&mut SwapA, &mut SwapB)>) {
    q.for_each(|(mut a, mut b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn sluice_cd(mut q: Query<(&mut SwapC, &mut SwapD)>) {
    q.for_each(|(mut c, mut d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn sluice_ce(mut q: Query<(&mut SwapC, &mut SwapE)>) {
    q.for_each(|(mut c, mut e)| std::mem::swap(&mut c.0, &mut e.0));
}

fn bevy_ab(mut q: BevyQuery<(&mut SwapA, &mut SwapB)>) {
    for (mut a, mut b) in q.iter_mut() {
        std::mem::swap(&mut a.0, &mut b.0);
    }
}

fn bevy_cd(mut q: BevyQuery<(&mut SwapC, &mut SwapD)>) {
    for (mut c, mut d) in q.iter_mut() {
        std::mem::swap(&mut c.0, &mut d.0);
    }
}

fn bevy_ce(mut q: BevyQuery<(&mut SwapC, &mut SwapE)>) {
    for (mut c, mut e) in q.iter_mut() {
        std::mem::swap(&mut c.0, &mut e.0);
    }
}

/// A world whose pool has the bench's thread count (see
/// `sluice_benches::threads`), for the rows that run in parallel.
fn parallel_world() -> World {
    World::with_pool(ThreadPool::new(bench_threads()).expect("pool"))
}

fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/schedule");
    let mut world = parallel_world();
    spawn_swappers!(world);
    world.add_system(NodeBuilder::new("ab").system(sluice_ab));
    world.add_system(NodeBuilder::new("cd").system(sluice_cd));
    world.add_system(NodeBuilder::new("ce").system(sluice_ce));
    world.run_iteration().expect("the schedule plans");
    group.bench_function("sluice", |b| {
        b.iter(|| world.run_iteration().expect("runs"))
    });

    let mut bevy = BevyWorld::new();
    spawn_swappers!(bevy);
    let mut bevy_schedule = Schedule::default();
    init_bevy_pool(bench_threads());
    bevy_schedule.set_executor(MultiThreadedExecutor::new());
    bevy_schedule.add_systems((bevy_ab, bevy_cd, bevy_ce));
    bevy_schedule.run(&mut bevy);
    group.bench_function("bevy", |b| b.iter(|| bevy_schedule.run(&mut bevy)));

    let mut hecs = hecs::World::new();
    spawn_swappers!(hecs);
    group.bench_function("hecs_sequential", |b| {
        b.iter(|| {
            for (_, (a, b)) in hecs.query_mut::<(&mut SwapA, &mut SwapB)>() {
                std::mem::swap(&mut a.0, &mut b.0);
            }
            for (_, (c, d)) in hecs.query_mut::<(&mut SwapC, &mut SwapD)>() {
                std::mem::swap(&mut c.0, &mut d.0);
            }
            for (_, (c, e)) in hecs.query_mut::<(&mut SwapC, &mut SwapE)>() {
                std::mem::swap(&mut c.0, &mut e.0);
            }
        })
    });
    group.finish();
}

#[derive(Component, Clone, Copy)]
struct Extra(#[allow(dead_code)] f32);

/// `Extra` in bevy's sparse-set storage.
#[derive(Component, Clone, Copy)]
#[component(storage = "SparseSet")]
struct SparseExtra(#[allow(dead_code)] f32);

/// sluice's `add_remove` with `Extra` kept in `storage`.
fn sluice_add_remove(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, storage: StorageType) {
    group.bench_function(name, |b| {
        b.iter_batched(
            || {
                let mut world = World::new();
                world
                    .register_component::<Extra>(storage)
                    .expect("a new type");
                let entities = world.spawn_batch((0..ENTITIES).map(|_| (Position([0.0; 3]),)));
                (world, entities)
            },
            |(mut world, entities)| {
                for &e in &entities {
                    world
                        .entity_mut(e)
                        .expect("alive")
                        .insert((Extra(0.0),))
                        .expect("insert");
                }
                for &e in &entities {
                    world
                        .entity_mut(e)
                        .expect("alive")
                        .remove::<(Extra,)>()
                        .expect("remove");
                }
                (world, entities)
            },
            BatchSize::LargeInput,
        )
    });
}

/// bevy's `add_remove` with the component `C` (`Extra` or `SparseExtra`).
fn bevy_add_remove<C: Component>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    extra: impl Fn() -> C,
) {
    group.bench_function(name, |b| {
        b.iter_batched(
            || {
                let mut world = BevyWorld::new();
                let entities: Vec<_> = world
                    .spawn_batch((0..ENTITIES).map(|_| Position([0.0; 3])))
                    .collect();
                (world, entities)
            },
            |(mut world, entities)| {
                for &e in &entities {
                    world.entity_mut(e).insert(extra());
                }
                for &e in &entities {
                    world.entity_mut(e).remove::<C>();
                }
                (world, entities)
            },
            BatchSize::LargeInput,
        )
    });
}

fn add_remove(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/add_remove");
    sluice_add_remove(&mut group, "sluice_table", StorageType::Table);
    sluice_add_remove(&mut group, "sluice_sparse", StorageType::SparseSet);
    bevy_add_remove(&mut group, "bevy_table", || Extra(0.0));
    bevy_add_remove(&mut group, "bevy_sparse", || SparseExtra(0.0));
    group.bench_function("hecs", |b| {
        b.iter_batched(
            || {
                let mut world = hecs::World::new();
                let entities: Vec<_> = world
                    .spawn_batch((0..ENTITIES).map(|_| (Position([0.0; 3]),)))
                    .collect();
                (world, entities)
            },
            |(mut world, entities)| {
                for &e in &entities {
                    world.insert_one(e, Extra(0.0)).expect("insert");
                }
                for &e in &entities {
                    world.remove_one::<Extra>(e).expect("remove");
                }
                (world, entities)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

#[derive(Component, Clone, Copy)]
struct Matrix(glam::Mat4);

const HEAVY_ENTITIES: usize = 1_000;

fn heavy_bundle() -> (Matrix, Position, Rotation, Velocity) {
    (
        Matrix(glam::Mat4::from_scale_rotation_translation(
            glam::Vec3::splat(1.5),
            glam::Quat::from_rotation_y(0.3),
            glam::Vec3::new(1.0, 2.0, 3.0),
        )),
        Position([1.0, 0.0, 0.0]),
        Rotation([1.0, 0.0, 0.0]),
        Velocity([1.0, 0.0, 0.0]),
    )
}

fn invert(matrix: &mut Matrix, position: &mut Position) {
    for _ in 0..100 {
        matrix.0 = matrix.0.inverse();
    }
    position.0[0] = matrix.0.w_axis.x;
}

fn sluice_heavy(mut q: Query<(&mut Matrix, &mut Position)>) {
    q.par_for_each(|(mut matrix, mut position)| invert(&mut matrix, &mut position));
}

fn bevy_heavy(mut q: BevyQuery<(&mut Matrix, &mut Position)>) {
    q.par_iter_mut()
        .for_each(|(mut matrix, mut position)| invert(&mut matrix, &mut position));
}

fn heavy_compute(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs/heavy_compute");
    let mut world = parallel_world();
    world.spawn_batch((0..HEAVY_ENTITIES).map(|_| heavy_bundle()));
    world.add_par_query::<(&mut Matrix, &mut Position), ()>(
        NodeBuilder::new("heavy"),
        64,
        |(mut matrix, mut position): (sluice::Mut<Matrix>, sluice::Mut<Position>)| {
            invert(&mut matrix, &mut position)
        },
    );
    world.run_iteration().expect("the heavy query plans");
    group.bench_function("sluice", |b| {
        b.iter(|| world.run_iteration().expect("runs"))
    });

    let mut world = parallel_world();
    world.spawn_batch((0..HEAVY_ENTITIES).map(|_| heavy_bundle()));
    world.add_system(NodeBuilder::new("heavy").system(sluice_heavy));
    world.run_iteration().expect("the heavy system plans");
    group.bench_function("sluice_par_for_each", |b| {
        b.iter(|| world.run_iteration().expect("runs"))
    });

    let mut bevy = BevyWorld::new();
    bevy.spawn_batch((0..HEAVY_ENTITIES).map(|_| heavy_bundle()));
    let mut bevy_schedule = Schedule::default();
    init_bevy_pool(bench_threads());
    bevy_schedule.set_executor(MultiThreadedExecutor::new());
    bevy_schedule.add_systems(bevy_heavy);
    bevy_schedule.run(&mut bevy);
    group.bench_function("bevy", |b| b.iter(|| bevy_schedule.run(&mut bevy)));

    let mut hecs = hecs::World::new();
    hecs.spawn_batch((0..HEAVY_ENTITIES).map(|_| heavy_bundle()));
    // rayon's global pool is made once; a second build is refused.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(bench_threads())
        .build_global();
    group.bench_function("hecs_rayon", |b| {
        use rayon::iter::{ParallelBridge, ParallelIterator};
        b.iter(|| {
            hecs.query::<(&mut Matrix, &mut Position)>()
                .iter_batched(64)
                .par_bridge()
                .for_each(|batch| {
                    for (_, (matrix, position)) in batch {
                        invert(matrix, position);
                    }
                })
        })
    });
    group.finish();
}

#[derive(Component, Clone, Copy)]
struct Leader(bevy_ecs::entity::Entity);
#[derive(Clone, Copy)]
struct HecsLeader(hecs::Entity);

const LEADERS: usize = 100;

fn follow(c: &mut Criterion) {
    use sluice::{ComponentRef, Target};
    let mut group = c.benchmark_group("ecs/follow");
    let leader = |i: usize| Position([i as f32, 0.0, 0.0]);
    let mut world = World::new();
    let leaders = world.spawn_batch((0..LEADERS).map(|i| (leader(i),)));
    let refs: Vec<ComponentRef<Position>> = leaders
        .iter()
        .map(|&e| {
            world.freeze(e).expect("alive");
            ComponentRef::new(&world, e).expect("frozen, with a Position")
        })
        .collect();
    world.spawn_batch((0..ENTITIES).map(|i| (Velocity([0.0; 3]), refs[i % LEADERS])));
    group.bench_function("sluice_target", |b| {
        b.iter(|| {
            world
                .query::<(&mut Velocity, Target<Position>)>()
                .for_each(|(mut velocity, target)| {
                    if let Some(position) = target {
                        velocity.0 = position.0;
                    }
                })
        })
    });
    let followers: Vec<ComponentRef<Position>> = (0..ENTITIES).map(|i| refs[i % LEADERS]).collect();
    group.bench_function("sluice_get", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for reference in &followers {
                sum += reference.get(&world).map_or(0.0, |position| position.0[0]);
            }
            black_box(sum)
        })
    });

    let mut bevy = BevyWorld::new();
    let leaders: Vec<_> = (0..LEADERS).map(|i| bevy.spawn(leader(i)).id()).collect();
    bevy.spawn_batch((0..ENTITIES).map(|i| (Velocity([0.0; 3]), Leader(leaders[i % LEADERS]))));
    let mut state = bevy_ecs::system::SystemState::<(
        BevyQuery<(&mut Velocity, &Leader)>,
        BevyQuery<&Position>,
    )>::new(&mut bevy);
    group.bench_function("bevy", |b| {
        b.iter(|| {
            let (mut followers, positions) = state.get_mut(&mut bevy).expect("valid");
            for (mut velocity, leader) in followers.iter_mut() {
                if let Ok(position) = positions.get(leader.0) {
                    velocity.0 = position.0;
                }
            }
        })
    });

    let mut hecs = hecs::World::new();
    let leaders: Vec<_> = (0..LEADERS).map(|i| hecs.spawn((leader(i),))).collect();
    hecs.spawn_batch((0..ENTITIES).map(|i| (Velocity([0.0; 3]), HecsLeader(leaders[i % LEADERS]))));
    group.bench_function("hecs", |b| {
        b.iter(|| {
            for (_, (velocity, leader)) in hecs.query::<(&mut Velocity, &HecsLeader)>().iter() {
                if let Ok(position) = hecs.get::<&Position>(leader.0) {
                    velocity.0 = position.0;
                }
            }
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    simple_insert,
    simple_iter,
    frag_iter,
    schedule,
    add_remove,
    heavy_compute,
    follow
);
criterion_main!(benches);
