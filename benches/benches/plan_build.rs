//! `plan_build`: registering N systems and building the plan, beside bevy_ecs
//! adding the same systems to a `Schedule` and initializing it (which builds
//! its dependency graph).
//!
//! Each system touches 1 to 4 of 64 resources (one access in four mutable)
//! and one system in four runs after a random earlier one.

#![allow(missing_docs)]

use std::hint::black_box;

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SystemSet;
#[allow(deprecated)]
use bevy_ecs::system::FilteredResourcesMutParamBuilder;
use bevy_ecs::system::SystemParamBuilder;
#[allow(deprecated)]
use bevy_ecs::world::FilteredResourcesMut;
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use sluice::{Graph, NodeBuilder, PlanOptions};
use sluice_benches::plan_workload::{SystemSpec, systems};

const SERVICES: usize = 64;
const SEED: u64 = 0x5EED_5A1C;

/// One resource type per service, for both sides.
#[derive(Resource, Default)]
struct R<const N: usize>;

type Access = fn(NodeBuilder, bool) -> NodeBuilder;
type Register = fn(&mut World) -> bevy_ecs::component::ComponentId;

macro_rules! per_service {
    ($($n:literal)*) => {
        /// Typed access to service `N` for a sluice node.
        const ACCESS: [Access; SERVICES] = [$(|node, gated| {
            if gated { node.gates::<R<$n>>() } else { node.reads::<R<$n>>() }
        }),*];
        /// Registers service `N` as a bevy resource.
        const REGISTER: [Register; SERVICES] = [$(|world| {
            world.init_resource::<R<$n>>()
        }),*];
    };
}

per_service!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
    30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59
    60 61 62 63);

/// Node names as `&'static str`, as function names would be.
fn names(count: usize) -> Vec<&'static str> {
    (0..count)
        .map(|i| &*Box::leak(format!("system_{i}").into_boxed_str()))
        .collect()
}

fn sluice_plan(specs: &[SystemSpec], names: &[&'static str]) -> sluice::Plan {
    let mut graph = Graph::new();
    for (spec, &name) in specs.iter().zip(names) {
        let mut node = NodeBuilder::new(name);
        for &(service, gated) in &spec.accesses {
            node = ACCESS[service](node, gated);
        }
        if let Some(after) = spec.after {
            node = node.after(names[after]);
        }
        graph.add_node(node);
    }
    graph.build(&PlanOptions::default()).expect("acyclic")
}

#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Node(usize);

#[allow(deprecated)]
fn bevy_schedule(
    specs: &[SystemSpec],
    world: &mut World,
    ids: &[bevy_ecs::component::ComponentId],
) {
    let mut targeted = vec![false; specs.len()];
    for spec in specs {
        if let Some(after) = spec.after {
            targeted[after] = true;
        }
    }
    let mut schedule = Schedule::default();
    for (i, spec) in specs.iter().enumerate() {
        let accesses = spec.accesses.clone();
        let system = (FilteredResourcesMutParamBuilder::new(move |builder| {
            for (service, gated) in accesses {
                if gated {
                    builder.add_write_by_id(ids[service]);
                } else {
                    builder.add_read_by_id(ids[service]);
                }
            }
        }),)
            .build_state(world)
            .build_system(|_resources: FilteredResourcesMut| {});
        match (targeted[i], spec.after) {
            (true, Some(after)) => schedule.add_systems(system.in_set(Node(i)).after(Node(after))),
            (true, None) => schedule.add_systems(system.in_set(Node(i))),
            (false, Some(after)) => schedule.add_systems(system.after(Node(after))),
            (false, None) => schedule.add_systems(system),
        };
    }
    schedule.initialize(world).expect("schedule builds");
    black_box(&schedule);
}

fn bevy_world() -> (World, Vec<bevy_ecs::component::ComponentId>) {
    let mut world = World::new();
    let ids = REGISTER
        .iter()
        .map(|register| register(&mut world))
        .collect();
    (world, ids)
}

fn plan_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan_build");
    for nodes in [100usize, 1_000, 10_000] {
        let specs = systems(nodes, SERVICES, SEED);
        let names = names(nodes);
        group.bench_with_input(BenchmarkId::new("sluice", nodes), &specs, |b, specs| {
            b.iter(|| black_box(sluice_plan(specs, &names)));
        });
        if nodes <= 1_000 {
            group.bench_with_input(BenchmarkId::new("bevy_ecs", nodes), &specs, |b, specs| {
                b.iter_batched(
                    bevy_world,
                    |(mut world, ids)| bevy_schedule(specs, &mut world, &ids),
                    BatchSize::LargeInput,
                );
            });
        }
    }
    group.finish();
}

criterion_group!(benches, plan_build);
criterion_main!(benches);
