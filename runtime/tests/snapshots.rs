//! Snapshots of a whole world and the rollback buffer (issue 39): a
//! restore gives back the entities (the same ids), their archetypes,
//! values and change ticks, the opted-in services and the clocks; what is
//! not captured is named; bad input is refused with the world unchanged.

#[path = "support/executors.rs"]
mod executors;

use executors::{executors, world_on};
use sluice::{
    Changed, Commands, Entity, ExecutorKind, NodeBuilder, Query, RestoreError, Snapshot,
    SnapshotError, World,
};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32, f32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f32, f32);

#[derive(Clone, Debug, PartialEq)]
struct Name(String);

/// Holds a reference to another entity.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Target(Entity);

#[derive(Clone, Debug, PartialEq, Default)]
struct Score(u64, Vec<u32>);

fn world() -> World {
    let mut world = World::new();
    world
        .snapshot_component::<Pos>()
        .snapshot_component::<Vel>()
        .snapshot_component::<Name>()
        .snapshot_component::<Target>()
        .snapshot_service::<Score>();
    world.insert(Score::default());
    world
}

/// An entity with its components.
type Row = (
    Entity,
    Option<Pos>,
    Option<Vel>,
    Option<Name>,
    Option<Target>,
);

/// Every entity with its components, in id order.
fn contents(world: &mut World) -> Vec<Row> {
    let mut rows: Vec<_> = world
        .query::<(
            Entity,
            Option<&Pos>,
            Option<&Vel>,
            Option<&Name>,
            Option<&Target>,
        )>()
        .iter()
        .map(|(e, p, v, n, t)| (e, p.copied(), v.copied(), n.cloned(), t.copied()))
        .collect();
    rows.sort_by_key(|row| row.0);
    rows
}

#[test]
fn smoke_restore_gives_back_ids_values_archetypes_and_ticks() {
    let mut world = world();
    let a = world.spawn((Pos(1.0, 2.0), Vel(0.5, 0.0)));
    let b = world.spawn((Pos(3.0, 4.0), Name("b".into())));
    let c = world.spawn((Vel(9.0, 9.0), Target(a)));
    world.despawn(b).unwrap();
    let d = world.spawn((Name("d".into()),));
    world.get_mut::<Score>().unwrap().0 = 7;
    let before = contents(&mut world);
    let ticks = world.entities().ticks::<Pos>(a).unwrap();
    let tick = world.entities().tick();

    let snapshot = world.snapshot().unwrap();
    assert!(snapshot.report().is_complete(), "{:?}", snapshot.report());
    assert_eq!(snapshot.entity_count(), 3);
    assert!(snapshot.heap_bytes() > 0);

    // Change everything: values, archetypes, despawns, spawns.
    world.entity_mut(a).unwrap().get_mut::<Pos>().unwrap().0 = 100.0;
    world
        .entity_mut(c)
        .unwrap()
        .insert((Pos(0.0, 0.0),))
        .unwrap();
    world.despawn(d).unwrap();
    let e = world.spawn((Pos(5.0, 5.0), Vel(1.0, 1.0), Name("e".into())));
    world.get_mut::<Score>().unwrap().0 = 99;
    world.get_mut::<Score>().unwrap().1.push(1);

    world.restore(&snapshot).unwrap();
    assert_eq!(world.entities().tick(), tick);
    assert_eq!(world.entities().ticks::<Pos>(a), Some(ticks));
    assert_eq!(contents(&mut world), before);
    assert!(
        world.entity(e).is_none(),
        "spawned after the snapshot: gone"
    );
    assert_eq!(world.get::<Score>(), Some(&Score(7, Vec::new())));
    assert_eq!(
        world.entity(c).unwrap().get::<Target>(),
        Some(&Target(a)),
        "a reference inside a component is valid"
    );
    assert_eq!(
        world
            .entity(world.entity(c).unwrap().get::<Target>().unwrap().0)
            .unwrap()
            .get::<Pos>(),
        Some(&Pos(1.0, 2.0))
    );
    // The same ids are handed out next.
    let mut twin = world.snapshot().unwrap();
    let after_restore = world.spawn((Pos(0.0, 0.0),));
    world.restore(&snapshot).unwrap();
    world.snapshot_into(&mut twin).unwrap();
    let again = world.spawn((Pos(0.0, 0.0),));
    assert_eq!(after_restore, again);
}

#[test]
fn empty_snapshot_is_refused() {
    let mut world = world();
    assert_eq!(world.restore(&Snapshot::new()), Err(RestoreError::Empty));
    let _ = SnapshotError::DuringIteration;
}

/// What the game below logs: per frame, the entities whose `Vel` changed.
#[derive(Clone, Debug, Default, PartialEq)]
struct Log(Vec<(u32, Vec<Entity>)>);

/// The frame counter of the game below, a service.
#[derive(Clone, Debug, Default, PartialEq)]
struct Frame(u32);

/// A small game: movers spawned every frame, bounced off the walls (a
/// write to `Vel` that `Changed<Vel>` sees), despawned past the floor.
fn game(executor: ExecutorKind, threads: usize) -> World {
    let mut world = world_on(executor, threads);
    world
        .snapshot_component::<Pos>()
        .snapshot_component::<Vel>()
        .snapshot_service::<Log>()
        .snapshot_service::<Frame>();
    world.insert(Log::default());
    world.insert(Frame::default());
    world.add_system(NodeBuilder::new("spawn").system(
        |frame: &mut Frame, commands: Commands<'_>, q: Query<'_, (Entity, &Pos)>| {
            frame.0 += 1;
            let n = frame.0;
            commands.spawn((Pos(0.0, n as f32), Vel((n % 5) as f32 - 2.0, 1.0)));
            for (entity, pos) in q.iter() {
                if pos.1 > 12.0 {
                    commands.entity(entity).despawn();
                }
            }
        },
    ));
    world.add_system(NodeBuilder::new("move").after("spawn").system(
        |mut q: Query<'_, (&mut Pos, &Vel)>| {
            q.for_each(|(mut pos, vel)| {
                pos.0 += vel.0;
                pos.1 += vel.1;
            });
        },
    ));
    world.add_system(NodeBuilder::new("bounce").after("move").system(
        |mut q: Query<'_, (&Pos, &mut Vel)>| {
            q.for_each(|(pos, mut vel)| {
                if pos.0.abs() > 6.0 && (pos.0 > 0.0) == (vel.0 > 0.0) {
                    vel.0 = -vel.0;
                }
            });
        },
    ));
    world.add_system(NodeBuilder::new("watch").after("bounce").system(
        |frame: &Frame, log: &mut Log, q: Query<'_, Entity, Changed<Vel>>| {
            let mut changed: Vec<Entity> = q.iter().collect();
            changed.sort();
            log.0.push((frame.0, changed));
        },
    ));
    world
}

/// Everything the game holds: every mover, and the log.
fn state(world: &mut World) -> (Vec<(Entity, Pos, Vel)>, Log) {
    let mut movers: Vec<_> = world
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, *p, *v))
        .collect();
    movers.sort_by_key(|row| row.0);
    (movers, world.get::<Log>().unwrap().clone())
}

#[test]
fn restoring_and_playing_the_same_frames_again_gives_the_same_frames() {
    let (before, after) = if cfg!(miri) { (3, 3) } else { (12, 8) };
    let mut reference = None;
    for (executor, threads) in executors() {
        let mut world = game(executor, threads);
        for _ in 0..before {
            world.run_iteration().unwrap();
        }
        let snapshot = world.snapshot().unwrap();
        assert!(snapshot.report().is_complete(), "{:?}", snapshot.report());
        for _ in 0..after {
            world.run_iteration().unwrap();
        }
        let played = state(&mut world);
        assert!(
            played.1.0.iter().any(|(_, changed)| !changed.is_empty()),
            "the game bounces something"
        );
        world.restore(&snapshot).unwrap();
        for _ in 0..after {
            world.run_iteration().unwrap();
        }
        assert_eq!(state(&mut world), played, "{executor:?} on {threads}");
        // And once more, from a restore of a restore.
        world.restore(&snapshot).unwrap();
        for _ in 0..after {
            world.run_iteration().unwrap();
        }
        assert_eq!(
            state(&mut world),
            played,
            "{executor:?} on {threads}, again"
        );
        match &reference {
            None => reference = Some(played),
            Some(reference) => assert_eq!(&played, reference, "{executor:?} on {threads}"),
        }
    }
}
