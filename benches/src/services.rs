//! Services shared by the benchmarks that run the same systems on sluice and
//! on bevy_ecs: one resource type per service index, and builders that give a
//! sluice node or a bevy system the same accesses to them.

#![allow(deprecated)] // bevy's `FilteredResourcesMut`, the dynamic access it has

use bevy_ecs::component::ComponentId;
use std::hint::black_box;

use bevy_ecs::prelude::{Res, ResMut, Resource};
use bevy_ecs::schedule::Schedule;
use bevy_ecs::system::{FilteredResourcesMutParamBuilder, System, SystemParamBuilder};
use bevy_ecs::world::{FilteredResourcesMut, World as BevyWorld};
use sluice::plan::{AmbiguityLevel, PlanOptions};
use sluice::{NodeBuilder, World};

/// How many distinct service types there are.
pub const SERVICES: usize = 64;

/// Service number `N`: a bevy resource and a sluice service alike.
#[derive(Resource, Default, Debug)]
pub struct R<const N: usize>(pub u64);

type Access = fn(NodeBuilder, bool) -> NodeBuilder;
type InsertSluice = fn(&mut World);
type RegisterBevy = fn(&mut BevyWorld) -> ComponentId;
type TouchSluice = fn(&mut World, NodeBuilder, bool);
type TouchBevy = fn(&mut Schedule, bool);

macro_rules! per_service {
    ($($n:literal)*) => {
        const TOUCH_SLUICE: [TouchSluice; SERVICES] = [$(|world, node, gated| {
            if gated {
                world.add_system(node.system(|r: &mut R<$n>| r.0 += 1));
            } else {
                world.add_system(node.system(|r: &R<$n>| {
                    black_box(r.0);
                }));
            }
        }),*];
        const TOUCH_BEVY: [TouchBevy; SERVICES] = [$(|schedule, gated| {
            if gated {
                schedule.add_systems(|mut r: ResMut<R<$n>>| r.0 += 1);
            } else {
                schedule.add_systems(|r: Res<R<$n>>| {
                    black_box(r.0);
                });
            }
        }),*];
        const ACCESS: [Access; SERVICES] = [$(|node, gated| {
            if gated { node.gates::<R<$n>>() } else { node.reads::<R<$n>>() }
        }),*];
        const INSERT_SLUICE: [InsertSluice; SERVICES] = [$(|world| world.insert(R::<$n>(0))),*];
        const REGISTER_BEVY: [RegisterBevy; SERVICES] = [$(|world| {
            world.init_resource::<R<$n>>()
        }),*];
    };
}

per_service!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
    30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59
    60 61 62 63);

/// Adds to `world` a system `node` that touches `service`: bumps it when
/// `gated`, reads it otherwise (typed parameters, as a user writes them).
///
/// # Panics
/// When `service >= SERVICES`.
pub fn touching_sluice(world: &mut World, node: NodeBuilder, service: usize, gated: bool) {
    TOUCH_SLUICE[service](world, node, gated);
}

/// Adds to `schedule` the bevy system [`touching_sluice`] adds: `ResMut`
/// bumping `service` when `gated`, `Res` reading it otherwise.
///
/// # Panics
/// When `service >= SERVICES`.
pub fn touching_bevy(schedule: &mut Schedule, service: usize, gated: bool) {
    TOUCH_BEVY[service](schedule, gated);
}

/// Declares access to `service` on `node`: gated, or shared.
///
/// # Panics
/// When `service >= SERVICES`.
pub fn access(node: NodeBuilder, service: usize, gated: bool) -> NodeBuilder {
    ACCESS[service](node, gated)
}

/// `node` with every access of `accesses` (`(service, gated)`).
pub fn with_accesses(node: NodeBuilder, accesses: &[(usize, bool)]) -> NodeBuilder {
    accesses
        .iter()
        .fold(node, |node, &(service, gated)| access(node, service, gated))
}

/// Turns off the SL0008 report for a world of these systems: their random
/// accesses conflict by design, and its warnings (on stderr when nothing
/// subscribes to `tracing`) would flood a bench's output. bevy's schedules
/// do not look for ambiguities unless asked either.
pub fn ignore_ambiguities(world: &mut World) {
    world.set_plan_options(PlanOptions {
        ambiguity: AmbiguityLevel::Ignore,
        ..PlanOptions::default()
    });
}

/// Inserts services `0..count` into a sluice world.
pub fn insert_sluice(world: &mut World, count: usize) {
    for insert in &INSERT_SLUICE[..count] {
        insert(world);
    }
}

/// Registers services `0..count` as bevy resources; their component ids by
/// service index.
pub fn register_bevy(world: &mut BevyWorld, count: usize) -> Vec<ComponentId> {
    REGISTER_BEVY[..count]
        .iter()
        .map(|register| register(world))
        .collect()
}

/// A bevy system with the accesses of `accesses` (`(service, gated)`: gated
/// is a write, shared a read) over the resources `ids`, running `body`.
pub fn bevy_system<F: FnMut() + Send + Sync + 'static>(
    world: &mut BevyWorld,
    ids: &[ComponentId],
    accesses: &[(usize, bool)],
    mut body: F,
) -> impl System<In = (), Out = ()> + use<F> {
    (FilteredResourcesMutParamBuilder::new(|builder| {
        for &(service, gated) in accesses {
            if gated {
                builder.add_write_by_id(ids[service]);
            } else {
                builder.add_read_by_id(ids[service]);
            }
        }
    }),)
        .build_state(world)
        .build_system(move |_resources: FilteredResourcesMut| body())
}
