//! The world's entities (issue 10): spawned, changed and despawned directly
//! between iterations, and through `Commands` from running systems, landing
//! at the boundary in an order that does not depend on the thread count.

use std::time::Duration;

use sluice::exec::ThreadPool;
use sluice::{
    BoundaryStep, Commands, Entity, EntityError, ExecutorKind, IterationError, NodeBuilder, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Tag(u32, u32);
#[derive(Debug, Default)]
struct Targets(Vec<Entity>);

fn counts() -> (u32, u32) {
    if cfg!(miri) { (3, 4) } else { (8, 50) }
}
/// The executors compared with the serial run; under Miri the parallel one
/// only: the adaptive executor runs the serial path until its first probe,
/// 32 iterations in, further than a test runs under Miri.
fn parallel_kinds() -> &'static [ExecutorKind] {
    if cfg!(miri) {
        &[ExecutorKind::Parallel]
    } else {
        &[ExecutorKind::Parallel, ExecutorKind::Adaptive]
    }
}

#[test]
fn smoke() {
    let mut world = World::new();
    let a = world.spawn((Pos(1.0, 2.0), Vel(0.5, 0.0)));
    let b = world.spawn((Pos(3.0, 4.0),));
    assert_eq!(world.entities().len(), 2);
    assert_eq!(world.entity(a).unwrap().get::<Pos>(), Some(&Pos(1.0, 2.0)));
    assert!(world.entity(b).unwrap().get::<Vel>().is_none());
    assert!(!world.entity(b).unwrap().has::<Vel>());

    let mut view = world.entity_mut(b).unwrap();
    view.insert((Vel(1.0, 1.0),)).unwrap();
    view.get_mut::<Pos>().unwrap().0 += 1.0;
    assert_eq!(view.get::<Pos>(), Some(&Pos(4.0, 4.0)));
    assert_eq!(view.remove::<(Vel,)>(), Ok((Vel(1.0, 1.0),)));
    assert_eq!(
        world.entity_mut(b).unwrap().remove::<(Vel,)>(),
        Err(EntityError::MissingComponent {
            entity: b,
            component: std::any::type_name::<Vel>(),
        })
    );

    world.despawn(a).unwrap();
    assert!(world.entity(a).is_none(), "a despawned entity has no view");
    assert_eq!(
        world.despawn(a),
        Err(EntityError::NoSuchEntity { entity: a })
    );
    let c = world.spawn((Pos(9.0, 9.0),));
    assert_ne!(a, c);
    assert_eq!(c.slot(), a.slot(), "the freed slot is reused");
    assert_eq!(
        c.generation(),
        a.generation() + 1,
        "under its next generation"
    );
    assert!(![a.id(), b.id()].contains(&c.id()), "ids are never reused");
    assert!(
        world.entity(a).is_none(),
        "a stale handle never reads the new entity"
    );
    assert_eq!(world.entity(c).unwrap().get::<Pos>(), Some(&Pos(9.0, 9.0)));
}

#[test]
fn spawn_batch_and_freeze() {
    let mut world = World::new();
    let all = world.spawn_batch((0..10).map(|i| (Pos(i as f32, 0.0), Tag(i, 0))));
    assert_eq!(all.len(), 10);
    for (i, e) in all.iter().enumerate() {
        assert_eq!(
            world.entity(*e).unwrap().get::<Tag>(),
            Some(&Tag(i as u32, 0))
        );
    }
    world.freeze(all[3]).unwrap();
    assert!(world.entity(all[3]).unwrap().is_frozen());
    let refused = world
        .entity_mut(all[3])
        .unwrap()
        .insert((Vel(0.0, 0.0),))
        .map(drop);
    assert_eq!(refused.err(), Some(EntityError::Frozen { entity: all[3] }));
    assert!(
        !world.entity(all[3]).unwrap().has::<Vel>(),
        "a refused insert changes nothing"
    );
    // A frozen entity can still be despawned.
    world.despawn(all[3]).unwrap();
}

/// `Commands` record spawns and changes; they land at the boundary, in each
/// system's record order.
#[test]
fn commands_land_at_the_boundary() {
    let mut world = World::new();
    let target = world.spawn((Pos(0.0, 0.0),));
    world.insert(Targets(vec![target]));
    world.add_system(NodeBuilder::new("changer").system(
        |commands: Commands<'_>, targets: &mut Targets| {
            // Once: the second iteration finds no target.
            for e in targets.0.drain(..) {
                commands
                    .entity(e)
                    .insert((Vel(1.0, 0.0),))
                    .remove::<(Pos,)>();
            }
            commands.spawn((Pos(5.0, 5.0), Tag(7, 0)));
        },
    ));
    world.run_iteration().unwrap();
    let view = world.entity(target).unwrap();
    assert_eq!(view.get::<Vel>(), Some(&Vel(1.0, 0.0)));
    assert!(
        !view.has::<Pos>(),
        "the remove recorded after the insert landed after it"
    );
    // One spawn per iteration: the entity count grows by one each time.
    assert_eq!(world.entities().len(), 2);
    world.run_iteration().unwrap();
    assert_eq!(world.entities().len(), 3);
}

/// A command whose entity is gone by the boundary is refused and reported,
/// naming the entity; the commands around it land.
#[test]
fn refused_commands_are_reported_and_change_nothing() {
    let mut world = World::new();
    let doomed = world.spawn((Pos(0.0, 0.0),));
    let frozen = world.spawn((Pos(1.0, 1.0),));
    world.freeze(frozen).unwrap();
    world.insert(Targets(vec![doomed, frozen]));
    world.add_system(NodeBuilder::new("twice").system(
        |commands: Commands<'_>, targets: &Targets| {
            commands.despawn(targets.0[0]);
            commands.despawn(targets.0[0]);
            commands.entity(targets.0[1]).insert((Vel(2.0, 2.0),));
            commands.spawn((Tag(1, 1),));
        },
    ));
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("the second despawn and the frozen insert are refused");
    };
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert_eq!(
        failures[0].refused_because(),
        Some(&EntityError::NoSuchEntity { entity: doomed })
    );
    assert!(matches!(
        failures[0].step(),
        BoundaryStep::Command { index: 1, .. }
    ));
    let message = failures[0].to_string();
    assert!(message.contains("was refused"), "{message}");
    assert!(message.contains(&doomed.to_string()), "{message}");
    assert_eq!(
        failures[1].refused_because(),
        Some(&EntityError::Frozen { entity: frozen })
    );
    assert!(world.entity(doomed).is_none());
    assert!(!world.entity(frozen).unwrap().has::<Vel>());
    assert_eq!(
        world.entities().len(),
        2,
        "the spawn after the refusals landed"
    );
}

/// A spawn command whose bundle names a component twice is refused at the
/// boundary with an error naming the type; nothing is spawned for it and
/// the commands after it land.
#[test]
fn a_duplicate_bundle_spawn_is_refused() {
    let mut world = World::new();
    world.add_system(NodeBuilder::new("sloppy").system(|commands: Commands<'_>| {
        commands.spawn((Pos(0.0, 0.0), Vel(1.0, 1.0), Pos(2.0, 2.0)));
        commands.spawn((Tag(7, 7),));
    }));
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("the duplicate bundle is refused");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    let Some(EntityError::DuplicateComponent { component }) = failures[0].refused_because() else {
        panic!("{failures:?}");
    };
    assert!(component.ends_with("Pos"), "{component}");
    let message = failures[0].to_string();
    assert!(
        message.contains("Pos") && message.contains("twice"),
        "{message}"
    );
    assert_eq!(world.entities().len(), 1, "only the good spawn landed");
    assert_eq!(world.query::<&Pos>().iter().count(), 0);
    assert_eq!(world.query::<&Tag>().iter().next(), Some(&Tag(7, 7)));
}

/// Many systems spawning at once: the entities' ids and contents come out the
/// same on every executor and thread count (commands land by system, then in
/// each system's record order, not in the order threads claimed slots).
#[test]
fn commands_land_the_same_for_every_thread_count() {
    let (systems, per_system) = counts();
    let run = |executor: ExecutorKind, threads: usize| -> Vec<(u64, Tag)> {
        let pool = ThreadPool::new(threads).expect("pool");
        let mut world = World::with_pool(pool);
        world.set_executor(executor);
        for system in 0..systems {
            // No shared service: the systems run in parallel.
            world.add_system(NodeBuilder::new(format!("spawner{system}")).system(
                move |commands: Commands<'_>| {
                    for i in 0..per_system {
                        if i % 7 == 3 {
                            // Some work between records, so threads interleave.
                            std::hint::black_box((0..200).sum::<u32>());
                        }
                        commands.spawn((Tag(system, i),));
                    }
                },
            ));
        }
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        let mut spawned: Vec<(u64, Tag)> = world
            .entities()
            .archetypes()
            .flat_map(|archetype| archetype.entities().to_vec())
            .map(|e| (e.id(), *world.entity(e).unwrap().get::<Tag>().unwrap()))
            .collect();
        // Nothing is despawned, so slots, and so ids, come in spawn order.
        spawned.sort();
        spawned
    };
    let serial = run(ExecutorKind::Serial, 0);
    assert_eq!(serial.len(), (3 * systems * per_system) as usize);
    // Within one iteration: by system, then in record order.
    let first: Vec<Tag> = serial[..(systems * per_system) as usize]
        .iter()
        .map(|&(_, tag)| tag)
        .collect();
    let mut expected = first.clone();
    expected.sort();
    assert_eq!(first, expected);
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    for &threads in threads {
        for &executor in parallel_kinds() {
            assert_eq!(
                run(executor, threads),
                serial,
                "{executor:?} on {threads} threads"
            );
        }
    }
}

/// The store's tick advances at every boundary, so a change made in one
/// iteration is newer than everything before it.
#[test]
fn ticks_advance_at_the_boundary() {
    let mut world = World::new();
    let e = world.spawn((Pos(0.0, 0.0),));
    let spawned = world.entity(e).unwrap().ticks::<Pos>().unwrap();
    world.update(Duration::from_millis(16)).unwrap();
    world.update(Duration::from_millis(16)).unwrap();
    world.entity_mut(e).unwrap().get_mut::<Pos>().unwrap().0 = 1.0;
    let changed = world.entity(e).unwrap().ticks::<Pos>().unwrap();
    assert_eq!(changed.added, spawned.added);
    assert!(
        changed.changed > spawned.changed,
        "{spawned:?} -> {changed:?}"
    );
}
