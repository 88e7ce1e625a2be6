//! `ecs/add_remove`'s workload alone, for counting instructions per entity
//! under callgrind, sluice's or hecs':
//!
//! ```text
//! cargo build --release -p sluice-benches --example ecs_callgrind
//! valgrind --tool=callgrind --toggle-collect='*add_remove*' \
//!     target/release/examples/ecs_callgrind sluice 10000
//! ```
//!
//! Arguments: the store (`sluice` or `hecs`, the default `sluice`),
//! entities (10,000). The entities are spawned with one component, then
//! each gains a second and loses it again, as the bench does; only
//! `add_remove_*` is counted with `--toggle-collect`, so the instructions
//! divided by the entities are one insert plus one remove.

use std::hint::black_box;

#[derive(Clone, Copy)]
struct Position(#[allow(dead_code)] [f32; 3]);
#[derive(Clone, Copy)]
struct Extra(#[allow(dead_code)] f32);

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
    match store.as_str() {
        "sluice" => {
            let mut world = sluice::World::new();
            let entities = world.spawn_batch((0..count).map(|_| (Position([0.0; 3]),)));
            add_remove_sluice(&mut world, black_box(&entities));
            black_box(&world);
        }
        "hecs" => {
            let mut world = hecs::World::new();
            let entities: Vec<_> = world
                .spawn_batch((0..count).map(|_| (Position([0.0; 3]),)))
                .collect();
            add_remove_hecs(&mut world, black_box(&entities));
            black_box(&world);
        }
        other => panic!("unknown store {other:?} (sluice, hecs)"),
    }
    println!("{store}: {count} entities added to and removed from");
}
