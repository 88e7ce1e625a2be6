//! Hook and observer dispatch, per event, beside bevy_ecs 0.20 in the same
//! criterion group (issue 37):
//!
//! - `trigger/N`: one custom event triggered between iterations with `N`
//!   (1, 10, 100) global observers, each taking the event and a service;
//! - `add_remove_observed/N`: a component inserted into and removed from
//!   one entity with `N` observers of its `Add` event;
//! - `add_remove_hooked`: the same with an `on_insert` hook instead (one
//!   per component, as in both runtimes).
//!
//! The worlds are built outside the timing.

#![allow(missing_docs)]

use std::hint::black_box;

use bevy_ecs::prelude::{
    Add as BevyAdd, Component, Event as BevyEvent, On as BevyOn, ResMut, Resource,
    World as BevyWorld,
};
use criterion::{Criterion, criterion_group, criterion_main};
use sluice::{Add, Event, On, World};

const COUNTS: [usize; 3] = [1, 10, 100];

#[derive(BevyEvent, Clone, Copy)]
struct Ping(u32);
impl Event for Ping {}

#[derive(Component, Clone, Copy)]
struct Marker;

#[derive(Resource, Default)]
struct Hits(u64);

fn trigger(c: &mut Criterion) {
    let mut group = c.benchmark_group("observers/trigger");
    for n in COUNTS {
        group.bench_function(format!("sluice/{n}"), |b| {
            let mut world = World::new();
            world.insert(Hits::default());
            for _ in 0..n {
                world
                    .add_observer::<Ping, _>(|on: On<Ping>, hits: &mut Hits| {
                        hits.0 += u64::from(on.0)
                    })
                    .expect("observer");
            }
            b.iter(|| world.trigger(black_box(Ping(1))).expect("delivered"));
            assert!(world.get::<Hits>().expect("hits").0 > 0);
        });
        group.bench_function(format!("bevy/{n}"), |b| {
            let mut world = BevyWorld::new();
            world.init_resource::<Hits>();
            for _ in 0..n {
                world.add_observer(|on: BevyOn<Ping>, mut hits: ResMut<Hits>| {
                    hits.0 += u64::from(on.event().0)
                });
            }
            world.flush();
            b.iter(|| world.trigger(black_box(Ping(1))));
            assert!(world.resource::<Hits>().0 > 0);
        });
    }
    group.finish();
}

fn add_remove_observed(c: &mut Criterion) {
    let mut group = c.benchmark_group("observers/add_remove_observed");
    for n in COUNTS {
        group.bench_function(format!("sluice/{n}"), |b| {
            let mut world = World::new();
            world.insert(Hits::default());
            for _ in 0..n {
                world
                    .add_observer::<Add<Marker>, _>(|_: On<Add<Marker>>, hits: &mut Hits| {
                        hits.0 += 1
                    })
                    .expect("observer");
            }
            let e = world.spawn(());
            b.iter(|| {
                let mut entity = world.entity_mut(e).expect("alive");
                entity.insert((Marker,)).expect("insert");
                entity.remove::<(Marker,)>().expect("remove");
            });
            assert!(world.get::<Hits>().expect("hits").0 > 0);
        });
        group.bench_function(format!("bevy/{n}"), |b| {
            let mut world = BevyWorld::new();
            world.init_resource::<Hits>();
            for _ in 0..n {
                world
                    .add_observer(|_: BevyOn<BevyAdd<Marker>>, mut hits: ResMut<Hits>| hits.0 += 1);
            }
            let e = world.spawn_empty().id();
            world.flush();
            b.iter(|| {
                let mut entity = world.entity_mut(e);
                entity.insert(Marker);
                entity.remove::<Marker>();
            });
            assert!(world.resource::<Hits>().0 > 0);
        });
    }
    group.finish();
}

fn add_remove_hooked(c: &mut Criterion) {
    let mut group = c.benchmark_group("observers/add_remove_hooked");
    group.bench_function("sluice", |b| {
        let mut world = World::new();
        world.insert(Hits::default());
        world
            .on_insert::<Marker>(|_, w| w.get_mut::<Hits>().expect("hits").0 += 1)
            .expect("hook");
        let e = world.spawn(());
        b.iter(|| {
            let mut entity = world.entity_mut(e).expect("alive");
            entity.insert((Marker,)).expect("insert");
            entity.remove::<(Marker,)>().expect("remove");
        });
        assert!(world.get::<Hits>().expect("hits").0 > 0);
    });
    group.bench_function("bevy", |b| {
        let mut world = BevyWorld::new();
        world.init_resource::<Hits>();
        world
            .register_component_hooks::<Marker>()
            .on_insert(|mut world, _| world.resource_mut::<Hits>().0 += 1);
        let e = world.spawn_empty().id();
        b.iter(|| {
            let mut entity = world.entity_mut(e);
            entity.insert(Marker);
            entity.remove::<Marker>();
        });
        assert!(world.resource::<Hits>().0 > 0);
    });
    group.finish();
}

criterion_group!(benches, trigger, add_remove_observed, add_remove_hooked);
criterion_main!(benches);
