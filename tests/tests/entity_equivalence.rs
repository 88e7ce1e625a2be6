//! Serial equivalence for entities (issue 10): random worlds of random
//! query systems with random structural commands leave the same entities,
//! the same values, the same change observations and the same refused
//! commands on the serial executor as on the parallel and adaptive ones.
//!
//! Four component types `C<0>..C<3>` (each an `i64`). A system is one of:
//! a combiner (`Query<(&mut A, &B)>`), a filtered mutator
//! (`Query<&mut A, Without<B>>`), a structural system
//! (`Query<(Entity, &A), With<B>>` with `Commands`: despawn, insert, remove
//! or spawn by the value it reads) or an observer
//! (`Query<(Entity, &A), Changed<A>>`, logging what it sees).

use std::sync::{Arc, Mutex, PoisonError};

use proptest::prelude::*;
use sluice::{
    Changed, Commands, Entity, ExecutorKind, IterationError, NodeBuilder, Query, ThreadPool, With,
    Without, World,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct C<const N: usize>(i64);

/// Runs `$body` with `$T` the component type `C<$i>`.
macro_rules! with_component {
    ($i:expr, |$T:ident| $body:expr) => {
        match $i {
            0 => {
                type $T = C<0>;
                $body
            }
            1 => {
                type $T = C<1>;
                $body
            }
            2 => {
                type $T = C<2>;
                $body
            }
            _ => {
                type $T = C<3>;
                $body
            }
        }
    };
}

#[derive(Debug, Clone)]
enum SystemSpec {
    Combine {
        a: usize,
        b: usize,
    },
    Mutate {
        a: usize,
        without: usize,
    },
    Structural {
        a: usize,
        with: usize,
        c: usize,
        k: i64,
    },
    Observe {
        a: usize,
    },
}

fn system_spec() -> impl Strategy<Value = SystemSpec> {
    prop_oneof![
        (0..4usize, 0..4usize)
            .prop_filter("two components", |(a, b)| a != b)
            .prop_map(|(a, b)| SystemSpec::Combine { a, b }),
        (0..4usize, 0..4usize)
            .prop_filter("two components", |(a, b)| a != b)
            .prop_map(|(a, without)| SystemSpec::Mutate { a, without }),
        (0..4usize, 0..4usize, 0..4usize, 2..7i64)
            .prop_map(|(a, with, c, k)| SystemSpec::Structural { a, with, c, k }),
        (0..4usize).prop_map(|a| SystemSpec::Observe { a }),
    ]
}

/// An observer's log: the entities and values it saw, in order.
type Log = Arc<Mutex<Vec<(u64, i64)>>>;

/// What a run leaves: every entity's id and components, every observer's
/// log, and the refused commands of every iteration.
type Outcome = (
    Vec<(u64, [Option<i64>; 4])>,
    Vec<Vec<(u64, i64)>>,
    Vec<usize>,
);

fn spawn(world: &mut World, mask: u8, value: i64) {
    let v = |n: i64| value.wrapping_add(n);
    match mask % 8 {
        0 => drop(world.spawn((C::<0>(v(0)),))),
        1 => drop(world.spawn((C::<0>(v(0)), C::<1>(v(1))))),
        2 => drop(world.spawn((C::<1>(v(1)), C::<2>(v(2))))),
        3 => drop(world.spawn((C::<0>(v(0)), C::<2>(v(2)), C::<3>(v(3))))),
        4 => drop(world.spawn((C::<3>(v(3)),))),
        5 => drop(world.spawn((C::<0>(v(0)), C::<1>(v(1)), C::<2>(v(2)), C::<3>(v(3))))),
        6 => drop(world.spawn((C::<1>(v(1)), C::<3>(v(3))))),
        _ => drop(world.spawn((C::<2>(v(2)),))),
    }
}

fn add_system(world: &mut World, index: usize, spec: &SystemSpec, logs: &[Log]) {
    let name = format!("system{index}");
    match *spec {
        SystemSpec::Combine { a, b } => with_component!(a, |A| with_component!(b, |B| {
            world.add_system(NodeBuilder::new(name).system(|mut q: Query<(&mut A, &B)>| {
                q.for_each(|(mut a, b)| a.0 = a.0.wrapping_mul(3).wrapping_add(b.0));
            }));
        })),
        SystemSpec::Mutate { a, without } => {
            with_component!(a, |A| with_component!(without, |W| {
                world.add_system(NodeBuilder::new(name).system(
                    |mut q: Query<&mut A, Without<W>>| {
                        q.for_each(|mut a| a.0 ^= 0x55);
                    },
                ));
            }))
        }
        SystemSpec::Structural { a, with, c, k } => {
            with_component!(a, |A| with_component!(with, |B| with_component!(c, |X| {
                world.add_system(NodeBuilder::new(name).system(
                    move |q: Query<(Entity, &A), With<B>>, commands: Commands<'_>| {
                        for (e, v) in q.iter() {
                            if v.0.rem_euclid(k) != 0 {
                                continue;
                            }
                            match v.0.div_euclid(k).rem_euclid(4) {
                                0 => commands.despawn(e),
                                1 => drop(commands.entity(e).insert((X { 0: v.0 / 2 },))),
                                2 => drop(commands.entity(e).remove::<(X,)>()),
                                _ => drop(commands.spawn((A {
                                    0: v.0.wrapping_add(1),
                                },))),
                            }
                        }
                    },
                ));
            })))
        }
        SystemSpec::Observe { a } => {
            let log = Arc::clone(&logs[index]);
            with_component!(a, |A| {
                world.add_system(NodeBuilder::new(name).system(
                    move |q: Query<(Entity, &A), Changed<A>>| {
                        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                        log.extend(q.iter().map(|(e, a)| (e.id(), a.0)));
                    },
                ));
            })
        }
    }
}

fn run(
    executor: ExecutorKind,
    threads: usize,
    initial: &[(u8, i64)],
    systems: &[SystemSpec],
    iterations: usize,
) -> Outcome {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    for &(mask, value) in initial {
        spawn(&mut world, mask, value);
    }
    let logs: Vec<_> = systems
        .iter()
        .map(|_| Arc::new(Mutex::new(Vec::new())))
        .collect();
    for (index, spec) in systems.iter().enumerate() {
        add_system(&mut world, index, spec, &logs);
    }
    let mut refused = Vec::new();
    for _ in 0..iterations {
        match world.run_iteration() {
            Ok(()) => refused.push(0),
            Err(IterationError::Boundary(failures)) => {
                assert!(
                    failures.iter().all(|f| f.refused_because().is_some()),
                    "only refusals: {failures:?}"
                );
                refused.push(failures.len());
            }
            Err(other) => panic!("{other}"),
        }
    }
    let mut entities: Vec<(u64, [Option<i64>; 4])> = world
        .entities()
        .archetypes()
        .flat_map(|archetype| archetype.entities().to_vec())
        .map(|e| {
            let view = world.entity(e).expect("listed entities are alive");
            (
                e.id(),
                [
                    view.get::<C<0>>().map(|c| c.0),
                    view.get::<C<1>>().map(|c| c.0),
                    view.get::<C<2>>().map(|c| c.0),
                    view.get::<C<3>>().map(|c| c.0),
                ],
            )
        })
        .collect();
    entities.sort();
    let logs = logs
        .iter()
        .map(|log| log.lock().unwrap_or_else(PoisonError::into_inner).clone())
        .collect();
    (entities, logs, refused)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_entity_worlds_are_serially_equivalent(
        initial in prop::collection::vec((0..8u8, -50..50i64), 1..60),
        systems in prop::collection::vec(system_spec(), 1..10),
    ) {
        let serial = run(ExecutorKind::Serial, 0, &initial, &systems, 4);
        for threads in [1, 2, 4] {
            for executor in [ExecutorKind::Parallel, ExecutorKind::Adaptive] {
                let other = run(executor, threads, &initial, &systems, 4);
                prop_assert_eq!(&other, &serial, "{:?} on {} threads", executor, threads);
            }
        }
    }
}
