//! `observers`' rows alone (`benches/benches/observers.rs`), for counting
//! instructions per event and per observer under callgrind, sluice or
//! bevy_ecs:
//!
//! ```text
//! cargo build --release -p sluice-benches --example observers_callgrind
//! valgrind --tool=callgrind --toggle-collect='*round_*' \
//!     target/release/examples/observers_callgrind sluice trigger 10 1000
//! ```
//!
//! Arguments: `sluice` or `bevy`; `trigger` (a custom event, each observer
//! taking it and a service), `add` (a component inserted and removed with
//! observers of its `Add` event) or `hook` (the same with an `on_insert`
//! hook, the count ignored); the observers; the rounds counted (after ten
//! uncounted ones). The instructions divided by the rounds are one event's.

use bevy_ecs::prelude::{
    Add as BevyAdd, Component, Event as BevyEvent, On as BevyOn, ResMut, Resource,
    World as BevyWorld,
};
use sluice::{Add, Event, On, World};

#[derive(BevyEvent, Clone, Copy)]
struct Ping(u32);
impl Event for Ping {}

#[derive(Component, Clone, Copy)]
struct Marker;

#[derive(Resource, Default)]
struct Hits(u64);

fn sluice_world(case: &str, observers: usize) -> World {
    let mut world = World::new();
    world.insert(Hits::default());
    match case {
        "trigger" => {
            for _ in 0..observers {
                world
                    .add_observer::<Ping, _>(|on: On<Ping>, hits: &mut Hits| {
                        hits.0 += u64::from(on.0)
                    })
                    .expect("observer");
            }
        }
        "add" => {
            for _ in 0..observers {
                world
                    .add_observer::<Add<Marker>, _>(|_: On<Add<Marker>>, hits: &mut Hits| {
                        hits.0 += 1
                    })
                    .expect("observer");
            }
        }
        "hook" => {
            world
                .on_insert::<Marker>(|_, w| w.get_mut::<Hits>().expect("hits").0 += 1)
                .expect("hook");
        }
        other => panic!("unknown case {other:?} (trigger, add or hook)"),
    }
    world
}

fn bevy_world(case: &str, observers: usize) -> BevyWorld {
    let mut world = BevyWorld::new();
    world.init_resource::<Hits>();
    match case {
        "trigger" => {
            for _ in 0..observers {
                world.add_observer(|on: BevyOn<Ping>, mut hits: ResMut<Hits>| {
                    hits.0 += u64::from(on.event().0)
                });
            }
        }
        "add" => {
            for _ in 0..observers {
                world
                    .add_observer(|_: BevyOn<BevyAdd<Marker>>, mut hits: ResMut<Hits>| hits.0 += 1);
            }
        }
        "hook" => {
            world
                .register_component_hooks::<Marker>()
                .on_insert(|mut world, _| world.resource_mut::<Hits>().0 += 1);
        }
        other => panic!("unknown case {other:?} (trigger, add or hook)"),
    }
    world.flush();
    world
}

#[inline(never)]
fn round_sluice(world: &mut World, trigger: bool, e: sluice::Entity) {
    if trigger {
        world.trigger(Ping(1)).expect("delivered");
    } else {
        let mut entity = world.entity_mut(e).expect("alive");
        entity.insert((Marker,)).expect("insert");
        entity.remove::<(Marker,)>().expect("remove");
    }
}

#[inline(never)]
fn round_bevy(world: &mut BevyWorld, trigger: bool, e: bevy_ecs::entity::Entity) {
    if trigger {
        world.trigger(Ping(1));
    } else {
        let mut entity = world.entity_mut(e);
        entity.insert(Marker);
        entity.remove::<Marker>();
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let peer = args.next().unwrap_or_else(|| "sluice".into());
    let case = args.next().unwrap_or_else(|| "trigger".into());
    let observers: usize = args.next().map_or(10, |a| a.parse().expect("observers"));
    let rounds: usize = args.next().map_or(1000, |a| a.parse().expect("rounds"));
    let trigger = case == "trigger";
    match peer.as_str() {
        "sluice" => {
            let mut world = sluice_world(&case, observers);
            let e = world.spawn(());
            for _ in 0..10 {
                round_sluice(&mut world, trigger, e);
            }
            for _ in 0..rounds {
                round_sluice(&mut world, trigger, e);
            }
            assert!(world.get::<Hits>().expect("hits").0 > 0);
        }
        "bevy" => {
            let mut world = bevy_world(&case, observers);
            let e = world.spawn_empty().id();
            world.flush();
            for _ in 0..10 {
                round_bevy(&mut world, trigger, e);
            }
            for _ in 0..rounds {
                round_bevy(&mut world, trigger, e);
            }
            assert!(world.resource::<Hits>().0 > 0);
        }
        other => panic!("unknown peer {other:?} (sluice or bevy)"),
    }
    println!("{peer}: {case}, {observers} observers, {rounds} rounds");
}
