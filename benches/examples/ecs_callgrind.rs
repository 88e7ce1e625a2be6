//! One of `ecs/add_remove`'s, `ecs/simple_insert`'s or `ecs/simple_iter`'s
//! workloads (or one of the query walks below) alone, for counting
//! instructions per entity under callgrind, sluice's, hecs' or bevy_ecs':
//!
//! ```text
//! cargo build --release -p sluice-benches --example ecs_callgrind
//! valgrind --tool=callgrind --toggle-collect='*add_remove_*' \
//!     target/release/examples/ecs_callgrind sluice 10000
//! valgrind --tool=callgrind --toggle-collect='*simple_insert_*' \
//!     target/release/examples/ecs_callgrind hecs 10000 simple_insert
//! valgrind --tool=callgrind --toggle-collect='*simple_iter_*' \
//!     target/release/examples/ecs_callgrind sluice 10000 simple_iter
//! ```
//!
//! Arguments: the store (`sluice`, `sluice_sparse`, `hecs`, `bevy` or
//! `bevy_sparse`, the default `sluice`; the `_sparse` ones keep the added
//! component in a sparse set), entities (10,000), the workload
//! (`add_remove`, the default, `simple_insert`, `simple_insert_world`,
//! `simple_iter`, `filtered_iter` or `sparse_iter`), and for
//! `simple_insert*` a number of rounds (1). `add_remove` (sluice,
//! sluice_sparse, hecs, bevy, bevy_sparse): the entities are spawned with
//! one component, then each gains a second and loses it again, as the
//! bench does; only `add_remove_*` is counted with `--toggle-collect`, so
//! the instructions divided by the entities are one insert plus one
//! remove. `simple_insert` (sluice, hecs): a new store spawns the entities
//! with four components in one batch and is dropped, all of it in
//! `simple_insert_*`; `simple_insert_world` (sluice) does the same with a
//! whole `World`, as the bench does. The rounds argument repeats
//! `simple_insert*` (`perf stat -e page-faults` then sees the allocator's
//! behaviour across rounds: `... sluice 10000 simple_insert_world 1000`).
//! `simple_iter` (sluice, hecs, bevy): the entities are spawned with four
//! components, then `pos += vel` runs over every one of them
//! [`ITER_ROUNDS`] times, each round one `simple_iter_*` call (sluice:
//! `for_each` over `Mut` items), so the instructions divided by the
//! entities and the rounds are one row's. `filtered_iter` (sluice): the
//! entities have a position and a marker, and each round sums the
//! positions through `query_filtered::<&Position, With<Marker>>().iter()`
//! (`filtered_iter_*`), a table-only query's iterator. `sparse_iter`
//! (sluice_sparse, bevy_sparse): every tenth entity also has a component
//! in a sparse set, and each round sums it through a query of it alone
//! (`sparse_iter_*`): instructions divided by the entities *with it* and
//! the rounds.

use std::hint::black_box;

use bevy_ecs::prelude::Component;

/// How many passes `simple_iter` makes over the entities.
const ITER_ROUNDS: usize = 100;

#[derive(Component, Clone, Copy)]
struct Position([f32; 3]);
#[derive(Clone, Copy)]
struct Extra(f32);
#[derive(Component, Clone, Copy)]
struct Transform(#[allow(dead_code)] [f32; 16]);
#[derive(Component, Clone, Copy)]
struct Rotation(#[allow(dead_code)] [f32; 3]);
#[derive(Component, Clone, Copy)]
struct Velocity([f32; 3]);

fn bundle() -> (Transform, Position, Rotation, Velocity) {
    (
        Transform([0.0; 16]),
        Position([0.0; 3]),
        Rotation([0.0; 3]),
        Velocity([0.0; 3]),
    )
}

#[inline(never)]
fn simple_insert_sluice(count: usize) {
    let mut world = sluice::Entities::new();
    black_box(world.spawn_batch((0..count).map(|_| bundle())));
}

/// The bench's round: a `World` (not only its store) made, filled and
/// dropped.
#[inline(never)]
fn simple_insert_world_sluice(count: usize) {
    let mut world = sluice::World::new();
    black_box(world.spawn_batch((0..count).map(|_| bundle())));
    black_box(world);
}

#[inline(never)]
fn simple_insert_hecs(count: usize) {
    let mut world = hecs::World::new();
    world.spawn_batch((0..count).map(|_| bundle()));
    black_box(world);
}

#[inline(never)]
fn add_remove_sluice(world: &mut sluice::World, entities: &[sluice::Entity]) {
    for &e in entities {
        world
            .entity_mut(e)
            .expect("alive")
            .insert((Extra(0.0),))
            .expect("insert");
    }
    for &e in entities {
        world
            .entity_mut(e)
            .expect("alive")
            .remove::<(Extra,)>()
            .expect("remove");
    }
}

/// `Position` and `Extra` for bevy, `Extra` in a table or a sparse set.
#[derive(Component)]
struct BevyPosition(#[allow(dead_code)] [f32; 3]);
#[derive(Component)]
struct BevyExtra(#[allow(dead_code)] f32);
#[derive(Component)]
#[component(storage = "SparseSet")]
struct BevySparseExtra(f32);

#[inline(never)]
fn add_remove_bevy<C: Component>(
    world: &mut bevy_ecs::world::World,
    entities: &[bevy_ecs::entity::Entity],
    extra: impl Fn() -> C,
) {
    for &e in entities {
        world.entity_mut(e).insert(extra());
    }
    for &e in entities {
        world.entity_mut(e).remove::<C>();
    }
}

/// bevy's `add_remove` with `C` added and removed.
fn bevy_add_remove<C: Component>(count: usize, extra: impl Fn() -> C) {
    let mut world = bevy_ecs::world::World::new();
    let entities: Vec<_> = world
        .spawn_batch((0..count).map(|_| BevyPosition([0.0; 3])))
        .collect();
    add_remove_bevy(&mut world, black_box(&entities), extra);
    black_box(&world);
}

/// A marker for `filtered_iter`.
struct Marker;

#[inline(never)]
fn filtered_iter_sluice(world: &mut sluice::World) -> f32 {
    world
        .query_filtered::<&Position, sluice::With<Marker>>()
        .iter()
        .map(|position| position.0[0])
        .sum()
}

#[inline(never)]
fn sparse_iter_sluice(world: &mut sluice::World) -> f32 {
    world.query::<&Extra>().iter().map(|extra| extra.0).sum()
}

#[inline(never)]
fn sparse_iter_bevy(
    world: &mut bevy_ecs::world::World,
    query: &mut bevy_ecs::query::QueryState<&BevySparseExtra>,
) -> f32 {
    query.iter(world).map(|extra| extra.0).sum()
}

#[inline(never)]
fn add_remove_hecs(world: &mut hecs::World, entities: &[hecs::Entity]) {
    for &e in entities {
        world.insert_one(e, Extra(0.0)).expect("insert");
    }
    for &e in entities {
        world.remove_one::<Extra>(e).expect("remove");
    }
}

#[inline(never)]
fn simple_iter_sluice(world: &mut sluice::World) {
    world
        .query::<(&Velocity, &mut Position)>()
        .for_each(|(velocity, mut position)| {
            for i in 0..3 {
                position.0[i] += velocity.0[i];
            }
        });
}

#[inline(never)]
fn simple_iter_hecs(world: &mut hecs::World) {
    for (_, (velocity, position)) in world.query_mut::<(&Velocity, &mut Position)>() {
        for i in 0..3 {
            position.0[i] += velocity.0[i];
        }
    }
}

#[inline(never)]
fn simple_iter_bevy(
    world: &mut bevy_ecs::world::World,
    query: &mut bevy_ecs::query::QueryState<(&Velocity, &mut Position)>,
) {
    query.iter_mut(world).for_each(|(velocity, mut position)| {
        for i in 0..3 {
            position.0[i] += velocity.0[i];
        }
    });
}

/// `sluice_sparse`'s storage for `Extra`, or the table's.
fn storage(store: &str) -> sluice::StorageType {
    if store == "sluice_sparse" {
        sluice::StorageType::SparseSet
    } else {
        sluice::StorageType::Table
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let store = args.next().unwrap_or_else(|| "sluice".into());
    let count: usize = args.next().map_or(10_000, |a| a.parse().expect("entities"));
    let workload = args.next().unwrap_or_else(|| "add_remove".into());
    let rounds: usize = args.next().map_or(1, |a| a.parse().expect("rounds"));
    match (store.as_str(), workload.as_str()) {
        ("sluice" | "sluice_sparse", "add_remove") => {
            let mut world = sluice::World::new();
            world
                .register_component::<Extra>(storage(&store))
                .expect("a new type");
            let entities = world.spawn_batch((0..count).map(|_| (Position([0.0; 3]),)));
            add_remove_sluice(&mut world, black_box(&entities));
            black_box(&world);
        }
        ("hecs", "add_remove") => {
            let mut world = hecs::World::new();
            let entities: Vec<_> = world
                .spawn_batch((0..count).map(|_| (Position([0.0; 3]),)))
                .collect();
            add_remove_hecs(&mut world, black_box(&entities));
            black_box(&world);
        }
        ("bevy", "add_remove") => bevy_add_remove(count, || BevyExtra(0.0)),
        ("bevy_sparse", "add_remove") => bevy_add_remove(count, || BevySparseExtra(0.0)),
        ("sluice", "filtered_iter") => {
            let mut world = sluice::World::new();
            world.spawn_batch((0..count).map(|_| (Position([1.0; 3]), Marker)));
            for _ in 0..ITER_ROUNDS {
                black_box(filtered_iter_sluice(black_box(&mut world)));
            }
        }
        ("sluice_sparse", "sparse_iter") => {
            let mut world = sluice::World::new();
            world
                .register_component::<Extra>(sluice::StorageType::SparseSet)
                .expect("a new type");
            let entities = world.spawn_batch((0..count).map(|_| (Position([0.0; 3]),)));
            for &e in entities.iter().step_by(10) {
                world
                    .entity_mut(e)
                    .expect("alive")
                    .insert((Extra(1.0),))
                    .expect("insert");
            }
            for _ in 0..ITER_ROUNDS {
                black_box(sparse_iter_sluice(black_box(&mut world)));
            }
        }
        ("bevy_sparse", "sparse_iter") => {
            let mut world = bevy_ecs::world::World::new();
            let entities: Vec<_> = world
                .spawn_batch((0..count).map(|_| BevyPosition([0.0; 3])))
                .collect();
            for &e in entities.iter().step_by(10) {
                world.entity_mut(e).insert(BevySparseExtra(1.0));
            }
            let mut query = world.query::<&BevySparseExtra>();
            for _ in 0..ITER_ROUNDS {
                black_box(sparse_iter_bevy(black_box(&mut world), &mut query));
            }
        }
        ("sluice", "simple_insert") => (0..rounds).for_each(|_| simple_insert_sluice(count)),
        ("sluice", "simple_insert_world") => {
            (0..rounds).for_each(|_| simple_insert_world_sluice(count));
        }
        ("hecs", "simple_insert") => (0..rounds).for_each(|_| simple_insert_hecs(count)),
        ("sluice", "simple_iter") => {
            let mut world = sluice::World::new();
            world.spawn_batch((0..count).map(|_| bundle()));
            for _ in 0..ITER_ROUNDS {
                simple_iter_sluice(black_box(&mut world));
            }
        }
        ("hecs", "simple_iter") => {
            let mut world = hecs::World::new();
            world.spawn_batch((0..count).map(|_| bundle()));
            for _ in 0..ITER_ROUNDS {
                simple_iter_hecs(black_box(&mut world));
            }
        }
        ("bevy", "simple_iter") => {
            let mut world = bevy_ecs::world::World::new();
            world.spawn_batch((0..count).map(|_| bundle()));
            let mut query = world.query::<(&Velocity, &mut Position)>();
            for _ in 0..ITER_ROUNDS {
                simple_iter_bevy(black_box(&mut world), &mut query);
            }
        }
        other => panic!(
            "unknown store or workload {other:?} (see the header: sluice, sluice_sparse, hecs, bevy or \
             bevy_sparse; add_remove, simple_insert, simple_insert_world, simple_iter, filtered_iter or \
             sparse_iter)"
        ),
    }
    println!("{store}: {workload}, {count} entities");
}
