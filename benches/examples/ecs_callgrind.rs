//! `ecs/add_remove`'s or `ecs/simple_insert`'s workload alone, for counting
//! instructions per entity under callgrind, sluice's or hecs':
//!
//! ```text
//! cargo build --release -p sluice-benches --example ecs_callgrind
//! valgrind --tool=callgrind --toggle-collect='*add_remove_*' \
//!     target/release/examples/ecs_callgrind sluice 10000
//! valgrind --tool=callgrind --toggle-collect='*simple_insert_*' \
//!     target/release/examples/ecs_callgrind hecs 10000 simple_insert
//! ```
//!
//! Arguments: the store (`sluice` or `hecs`, the default `sluice`),
//! entities (10,000), the workload (`add_remove`, the default, or
//! `simple_insert`). `add_remove`: the entities are spawned with one
//! component, then each gains a second and loses it again, as the bench
//! does; only `add_remove_*` is counted with `--toggle-collect`, so the
//! instructions divided by the entities are one insert plus one remove.
//! `simple_insert`: a new store spawns the entities with four components
//! in one batch and is dropped, all of it in `simple_insert_*`.

use std::hint::black_box;

#[derive(Clone, Copy)]
struct Position(#[allow(dead_code)] [f32; 3]);
#[derive(Clone, Copy)]
struct Extra(#[allow(dead_code)] f32);
#[derive(Clone, Copy)]
struct Transform(#[allow(dead_code)] [f32; 16]);
#[derive(Clone, Copy)]
struct Rotation(#[allow(dead_code)] [f32; 3]);
#[derive(Clone, Copy)]
struct Velocity(#[allow(dead_code)] [f32; 3]);

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

#[inline(never)]
fn add_remove_hecs(world: &mut hecs::World, entities: &[hecs::Entity]) {
    for &e in entities {
        world.insert_one(e, Extra(0.0)).expect("insert");
    }
    for &e in entities {
        world.remove_one::<Extra>(e).expect("remove");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let store = args.next().unwrap_or_else(|| "sluice".into());
    let count: usize = args.next().map_or(10_000, |a| a.parse().expect("entities"));
    let workload = args.next().unwrap_or_else(|| "add_remove".into());
    match (store.as_str(), workload.as_str()) {
        ("sluice", "add_remove") => {
            let mut world = sluice::World::new();
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
        ("sluice", "simple_insert") => simple_insert_sluice(count),
        ("hecs", "simple_insert") => simple_insert_hecs(count),
        other => panic!(
            "unknown store or workload {other:?} (sluice or hecs; add_remove or simple_insert)"
        ),
    }
    println!("{store}: {workload}, {count} entities");
}
