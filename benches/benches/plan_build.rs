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
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use sluice::{Graph, NodeBuilder, PlanOptions};
use sluice_benches::plan_workload::{SystemSpec, systems};
use sluice_benches::services::{SERVICES, bevy_system, register_bevy, with_accesses};

const SEED: u64 = 0x5EED_5A1C;

/// Node names as `&'static str`, as function names would be.
fn names(count: usize) -> Vec<&'static str> {
    (0..count)
        .map(|i| &*Box::leak(format!("system_{i}").into_boxed_str()))
        .collect()
}

fn sluice_plan(specs: &[SystemSpec], names: &[&'static str]) -> sluice::Plan {
    let mut graph = Graph::new();
    for (spec, &name) in specs.iter().zip(names) {
        let mut node = with_accesses(NodeBuilder::new(name), &spec.accesses);
        if let Some(after) = spec.after {
            node = node.after(names[after]);
        }
        graph.add_node(node);
    }
    graph.build(&PlanOptions::default()).expect("acyclic")
}

#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Node(usize);

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
        let system = bevy_system(world, ids, &spec.accesses, || {});
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
    let ids = register_bevy(&mut world, SERVICES);
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
