//! Snapshots of a whole world and the rollback buffer (issue 39): a
//! restore gives back the entities (the same ids), their archetypes,
//! values and change ticks, the opted-in services and the clocks; what is
//! not captured is named; bad input is refused with the world unchanged.

use sluice::{Entity, RestoreError, Snapshot, SnapshotError, World};

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
