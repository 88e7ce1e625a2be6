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

/// A component that is not opted in.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Secret(u8);

/// A service that is not opted in.
#[derive(Clone, Debug, PartialEq)]
struct Untracked(u32);

#[test]
fn what_is_not_opted_in_is_named_and_strict_refuses_it() {
    let mut world = world();
    world.spawn((Pos(0.0, 0.0), Secret(1)));
    world.insert(Untracked(3));
    world.add_system(|mut n: sluice::Local<u32>| *n += 1);
    world.add_system(|hits: sluice::Publish<'_, Vel>| hits.send(Vel(1.0, 1.0)));
    world.run_iteration().unwrap();
    let snapshot = world.snapshot().unwrap();
    let names: Vec<&str> = snapshot.report().left_out().collect();
    let messages = snapshot
        .report()
        .entries()
        .iter()
        .find(|e| e.kind() == sluice::PartKind::Messages)
        .map(ToString::to_string);
    assert!(
        messages.is_some_and(|m| m.starts_with("messages ") && m.contains("Vel")),
        "{names:?}"
    );
    assert!(
        names.contains(&std::any::type_name::<Secret>()),
        "{names:?}"
    );
    assert!(
        names.contains(&std::any::type_name::<Untracked>()),
        "{names:?}"
    );
    let kinds: Vec<_> = snapshot
        .report()
        .entries()
        .iter()
        .map(|e| e.kind())
        .collect();
    assert!(kinds.contains(&sluice::PartKind::Local), "{kinds:?}");
    assert!(!names.contains(&std::any::type_name::<Pos>()));
    // Rows of a left-out component: the world could not be given back.
    match world.restore(&snapshot) {
        Err(RestoreError::LeftOut { names }) => {
            assert_eq!(names, [std::any::type_name::<Secret>()]);
        }
        other => panic!("{other:?}"),
    }
    world.set_snapshot_strict(true);
    match world.snapshot() {
        Err(SnapshotError::LeftOut { names }) => {
            assert!(names.iter().any(|n| n.contains("Secret")), "{names:?}");
            assert!(names.iter().any(|n| n.contains("Untracked")), "{names:?}");
        }
        other => panic!("{other:?}"),
    }
    // Opted in, and the local gone with a world of its own: strict passes.
    let mut strict = World::new();
    strict
        .set_snapshot_strict(true)
        .snapshot_component::<Secret>();
    strict.spawn((Secret(2),));
    let snapshot = strict.snapshot().unwrap();
    assert!(snapshot.report().is_complete());
    // Opting in twice is a no-op.
    strict
        .snapshot_component::<Secret>()
        .snapshot_component::<Secret>();
    strict.restore(&snapshot).unwrap();
}

#[test]
fn a_left_out_service_is_untouched_and_an_opted_in_one_comes_back_or_goes() {
    let mut world = world();
    world.insert(Untracked(1));
    world.snapshot_service::<Frame>();
    let snapshot = world.snapshot().unwrap();
    world.insert(Untracked(2));
    world.insert(Frame(5));
    world.remove::<Score>();
    world.restore(&snapshot).unwrap();
    assert_eq!(
        world.get::<Untracked>(),
        Some(&Untracked(2)),
        "left out: untouched"
    );
    assert_eq!(
        world.get::<Frame>(),
        None,
        "absent at the snapshot: taken out"
    );
    assert_eq!(world.get::<Score>(), Some(&Score::default()), "put back");
}

/// A value whose `Clone` or `Drop` panics while `ARMED` is set.
#[derive(Debug, PartialEq)]
struct Bomb(u32);

static ARMED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
const CLONE: u8 = 1;
const DROP: u8 = 2;

impl Clone for Bomb {
    fn clone(&self) -> Self {
        if ARMED.load(std::sync::atomic::Ordering::SeqCst) == CLONE && self.0 == 13 {
            panic!("{}: Bomb::clone", executors::PLANNED);
        }
        Bomb(self.0)
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if ARMED.load(std::sync::atomic::Ordering::SeqCst) == DROP && self.0 == 13 {
            ARMED.store(0, std::sync::atomic::Ordering::SeqCst);
            panic!("{}: Bomb::drop", executors::PLANNED);
        }
    }
}

/// The tests arming the bomb run one at a time.
static BOMB_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn bombs(world: &mut World) -> Vec<(Entity, u32)> {
    let mut rows: Vec<_> = world
        .query::<(Entity, &Bomb)>()
        .iter()
        .map(|(e, b)| (e, b.0))
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_panicking_clone_leaves_the_world_and_an_empty_snapshot() {
    let _lock = BOMB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    executors::quiet_planned_panics();
    let mut world = world();
    world.snapshot_component::<Bomb>();
    for i in 10..16 {
        world.spawn((Bomb(i), Pos(i as f32, 0.0)));
    }
    let good = world.snapshot().unwrap();
    let mut into = world.snapshot().unwrap();
    // Every value cloned again: an incremental capture would keep the
    // unchanged `Bomb`s without cloning (`snapshot_incremental.rs`).
    into.set_incremental(false);
    ARMED.store(CLONE, std::sync::atomic::Ordering::SeqCst);
    let refused = world.snapshot_into(&mut into);
    ARMED.store(0, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        refused,
        Err(SnapshotError::Panicked {
            what: std::any::type_name::<Bomb>().into()
        })
    );
    assert!(!into.is_filled() && into.entity_count() == 0);
    assert_eq!(world.restore(&into), Err(RestoreError::Empty));
    assert_eq!(bombs(&mut world).len(), 6, "the world untouched");

    // While restoring: the world unchanged.
    let spawned = world.spawn((Bomb(99),));
    let before = bombs(&mut world);
    ARMED.store(CLONE, std::sync::atomic::Ordering::SeqCst);
    let refused = world.restore(&good);
    ARMED.store(0, std::sync::atomic::Ordering::SeqCst);
    assert!(
        matches!(refused, Err(RestoreError::Panicked { .. })),
        "{refused:?}"
    );
    assert_eq!(bombs(&mut world), before);
    assert!(world.entity(spawned).is_some());
    world.restore(&good).unwrap();
    assert!(world.entity(spawned).is_none());
}

#[test]
fn a_panicking_drop_during_a_restore_is_reported_after_it_finishes() {
    let _lock = BOMB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    executors::quiet_planned_panics();
    let mut world = world();
    world.snapshot_component::<Bomb>();
    let kept = world.spawn((Bomb(1), Pos(1.0, 1.0)));
    let snapshot = world.snapshot().unwrap();
    let expected = bombs(&mut world);
    for i in 10..16 {
        world.spawn((Bomb(i),));
    }
    ARMED.store(DROP, std::sync::atomic::Ordering::SeqCst);
    let result = world.restore(&snapshot);
    ARMED.store(0, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        result,
        Err(RestoreError::DropPanicked {
            what: vec![std::any::type_name::<Bomb>().into()]
        })
    );
    assert_eq!(bombs(&mut world), expected, "restored all the same");
    assert_eq!(
        world.entity(kept).unwrap().get::<Pos>(),
        Some(&Pos(1.0, 1.0))
    );
    // The store is consistent: it goes on.
    let next = world.spawn((Bomb(2),));
    world.despawn(kept).unwrap();
    assert_eq!(bombs(&mut world), [(next, 2)]);
}

#[test]
fn refused_during_an_iteration() {
    #[derive(Default)]
    struct Seen(Vec<String>);
    let mut world = world();
    world.insert(Seen::default());
    let snapshot = world.snapshot().unwrap();
    world.add_system(move |world: &mut World| {
        let taken = world.snapshot().map(|_| ()).map_err(|e| e.to_string());
        let restored = world.restore(&snapshot).map_err(|e| e.to_string());
        let seen = &mut world.get_mut::<Seen>().unwrap().0;
        seen.extend(taken.err());
        seen.extend(restored.err());
    });
    world.run_iteration().unwrap();
    let seen = &world.get::<Seen>().unwrap().0;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter().all(|error| error.contains("iteration")),
        "{seen:?}"
    );
}

#[test]
fn another_world_restores_by_type_and_refuses_what_it_does_not_snapshot() {
    let mut source = world();
    let a = source.spawn((Pos(1.0, 1.0), Vel(2.0, 2.0)));
    let b = source.spawn((Name("b".into()), Target(a)));
    let snapshot = source.snapshot().unwrap();

    // The same types, registered in another order: restored, same ids.
    let mut other = World::new();
    other.spawn((Name("x".into()),));
    other.spawn((Vel(0.0, 0.0), Target(a)));
    other
        .snapshot_component::<Target>()
        .snapshot_component::<Name>()
        .snapshot_component::<Vel>()
        .snapshot_component::<Pos>()
        .snapshot_service::<Score>();
    other.restore(&snapshot).unwrap();
    assert_eq!(contents(&mut other), contents(&mut source));
    assert_eq!(other.entity(b).unwrap().get::<Target>(), Some(&Target(a)));

    // A world that does not snapshot `Name`: refused, unchanged.
    let mut narrow = World::new();
    narrow
        .snapshot_component::<Pos>()
        .snapshot_component::<Vel>();
    let lone = narrow.spawn((Pos(9.0, 9.0),));
    match narrow.restore(&snapshot) {
        Err(RestoreError::NotOptedIn { what }) => assert!(
            what.contains("Name") || what.contains("Target") || what.contains("Score"),
            "{what}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        narrow.entity(lone).unwrap().get::<Pos>(),
        Some(&Pos(9.0, 9.0))
    );

    // `Pos` kept in a sparse set there: refused, unchanged.
    let mut sparse = world();
    sparse
        .register_component::<Pos>(sluice::StorageType::SparseSet)
        .unwrap();
    let lone = sparse.spawn((Pos(7.0, 7.0),));
    match sparse.restore(&snapshot) {
        Err(error @ RestoreError::StorageDiffers { .. }) => {
            assert!(error.to_string().contains("Pos"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sparse.entity(lone).unwrap().get::<Pos>(),
        Some(&Pos(7.0, 7.0))
    );
}

#[test]
fn sparse_components_hierarchies_and_disabled_entities_come_back() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Buff(u32);
    let mut world = world();
    world.snapshot_component::<Buff>();
    world
        .register_component::<Buff>(sluice::StorageType::SparseSet)
        .unwrap();
    let parent = world.spawn((Pos(0.0, 0.0), Buff(1)));
    let child = world.spawn_child(parent, (Pos(1.0, 0.0),)).unwrap();
    let hidden = world.spawn((Pos(5.0, 5.0), sluice::Disabled));
    let snapshot = world.snapshot().unwrap();
    assert!(snapshot.report().is_complete(), "{:?}", snapshot.report());

    world.entity_mut(child).unwrap().insert((Buff(2),)).unwrap();
    world
        .entity_mut(parent)
        .unwrap()
        .remove::<(Buff,)>()
        .unwrap();
    world.despawn(parent).unwrap();
    world
        .entity_mut(hidden)
        .unwrap()
        .remove::<(sluice::Disabled,)>()
        .unwrap();
    world.restore(&snapshot).unwrap();

    let entity = |e| world.entity(e).unwrap();
    assert_eq!(entity(parent).get::<Buff>(), Some(&Buff(1)));
    assert_eq!(entity(child).get::<Buff>(), None);
    assert_eq!(
        entity(child).get::<sluice::ChildOf>().map(|c| c.parent()),
        Some(parent)
    );
    assert_eq!(
        entity(parent)
            .get::<sluice::Children>()
            .map(|c| c.as_slice().to_vec()),
        Some(vec![child])
    );
    assert!(entity(hidden).get::<sluice::Disabled>().is_some());
    let visible = world.query::<&Pos>().iter().count();
    assert_eq!(visible, 2, "the disabled entity is hidden again");
    let buffs: Vec<_> = world
        .query::<(Entity, &Buff)>()
        .iter()
        .map(|(e, b)| (e, *b))
        .collect();
    assert_eq!(buffs, [(parent, Buff(1))]);
}

#[test]
fn a_restore_fires_no_hook_or_observer() {
    #[derive(Default)]
    struct Fired(u32);
    let mut world = world();
    world.insert(Fired::default());
    world
        .on_add::<Pos>(|_, world| world.get_mut::<Fired>().unwrap().0 += 1)
        .unwrap();
    world.spawn((Pos(0.0, 0.0),));
    let snapshot = world.snapshot().unwrap();
    world.spawn((Pos(0.0, 0.0),));
    assert_eq!(world.get::<Fired>().unwrap().0, 2);
    world.restore(&snapshot).unwrap();
    world.restore(&snapshot).unwrap();
    assert_eq!(world.get::<Fired>().unwrap().0, 2);
}

#[test]
fn ids_spawned_after_a_restore_are_those_spawned_after_the_snapshot() {
    let mut world = world();
    let spawned: Vec<Entity> = (0..20)
        .map(|i| world.spawn((Pos(i as f32, 0.0),)))
        .collect();
    for e in spawned.iter().step_by(3) {
        world.despawn(*e).unwrap();
    }
    let snapshot = world.snapshot().unwrap();
    let first: Vec<Entity> = (0..10).map(|_| world.spawn((Vel(0.0, 0.0),))).collect();
    for e in &first[..4] {
        world.despawn(*e).unwrap();
    }
    world.restore(&snapshot).unwrap();
    let again: Vec<Entity> = (0..10).map(|_| world.spawn((Vel(0.0, 0.0),))).collect();
    assert_eq!(first, again);
    // A stale handle from the detour reads nothing it should not.
    world.restore(&snapshot).unwrap();
    assert!(world.entity(first[0]).is_none());
}

#[test]
fn removal_records_come_back() {
    #[derive(Default)]
    struct Gone(Vec<Entity>);
    let mut world = world();
    world.insert(Gone::default());
    world.add_system(|removed: sluice::Removed<'_, Pos>, gone: &mut Gone| {
        gone.0.extend(removed.iter())
    });
    let a = world.spawn((Pos(0.0, 0.0),));
    world.run_iteration().unwrap();
    world.despawn(a).unwrap();
    let snapshot = world.snapshot().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Gone>().unwrap().0, [a]);
    world.restore(&snapshot).unwrap();
    world.get_mut::<Gone>().unwrap().0.clear();
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Gone>().unwrap().0,
        [a],
        "seen again after the restore"
    );
}

#[test]
fn the_rollback_buffer_keeps_the_last_frames() {
    let mut world = world();
    let mut buffer = sluice::RollbackBuffer::new(3);
    for frame in 0..6_i64 {
        world.get_mut::<Score>().unwrap().0 = frame as u64;
        buffer.save(frame, &world).unwrap();
    }
    let mut kept: Vec<i64> = buffer.frames().collect();
    kept.sort();
    assert_eq!(kept, [3, 4, 5]);
    assert_eq!(
        buffer.load(2, &mut world),
        Err(RestoreError::NotKept { frame: 2 })
    );
    assert!(buffer.get(1).is_none());
    buffer.load(4, &mut world).unwrap();
    assert_eq!(world.get::<Score>().unwrap().0, 4);
    // Saved again after a rollback: the frame's own slot.
    world.get_mut::<Score>().unwrap().0 = 40;
    buffer.save(4, &world).unwrap();
    let mut kept: Vec<i64> = buffer.frames().collect();
    kept.sort();
    assert_eq!(kept, [3, 4, 5]);
    buffer.load(3, &mut world).unwrap();
    assert_eq!(world.get::<Score>().unwrap().0, 3);
    buffer.load(4, &mut world).unwrap();
    assert_eq!(world.get::<Score>().unwrap().0, 40);
    // Negative frames, and a capacity of 0 keeps one.
    let mut one = sluice::RollbackBuffer::new(0);
    assert_eq!(one.capacity(), 1);
    one.save(-5, &world).unwrap();
    one.save(-4, &world).unwrap();
    assert_eq!(one.frames().collect::<Vec<_>>(), [-4]);
    // A failed save keeps nothing in its slot.
    let mut strict = World::new();
    strict.set_snapshot_strict(true);
    strict.insert(Untracked(1));
    assert!(one.save(-4, &strict).is_err());
    assert!(one.get(-4).is_none());
}

#[test]
fn many_entities_come_back() {
    let count = if cfg!(miri) { 120 } else { 100_000 };
    let mut world = world();
    let spawned: Vec<Entity> = (0..count)
        .map(|i| match i % 3 {
            0 => world.spawn((Pos(i as f32, 0.0),)),
            1 => world.spawn((Pos(i as f32, 1.0), Vel(1.0, 0.0))),
            _ => world.spawn((Vel(0.0, i as f32), Name(format!("n{i}")))),
        })
        .collect();
    for e in spawned.iter().step_by(7) {
        world.despawn(*e).unwrap();
    }
    let before = contents(&mut world);
    let snapshot = world.snapshot().unwrap();
    assert_eq!(snapshot.entity_count(), before.len());
    for e in spawned.iter().skip(1).step_by(5) {
        let _ = world.despawn(*e);
    }
    world.restore(&snapshot).unwrap();
    assert_eq!(contents(&mut world), before);
}

#[test]
fn snapshots_move_between_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Snapshot>();
    send_sync::<sluice::RollbackBuffer>();
    let mut world = world();
    let a = world.spawn((Pos(1.0, 2.0),));
    let snapshot = std::thread::spawn({
        let snapshot = world.snapshot().unwrap();
        move || snapshot
    })
    .join()
    .unwrap();
    world.despawn(a).unwrap();
    world.restore(&snapshot).unwrap();
    assert_eq!(world.entity(a).unwrap().get::<Pos>(), Some(&Pos(1.0, 2.0)));
}

/// A message of the test below: the frame it was sent in.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hit(u32);

#[test]
fn opted_in_messages_come_back_with_their_readers_cursors() {
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Heard(Vec<(u32, Vec<Hit>)>);
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world
            .snapshot_service::<Heard>()
            .snapshot_service::<Frame>()
            .snapshot_messages::<Hit>();
        world.insert(Heard::default());
        world.insert(Frame::default());
        // Registered first: it reads, each frame, what was sent the frame
        // before (kept in the queue across the boundary).
        world.add_system(NodeBuilder::new("hear").system(
            |mut hits: sluice::Subscribe<'_, Hit>, frame: &Frame, heard: &mut Heard| {
                heard.0.push((frame.0, hits.unread().copied().collect()));
            },
        ));
        world.add_system(NodeBuilder::new("shout").system(
            |hits: sluice::Publish<'_, Hit>, frame: &mut Frame| {
                frame.0 += 1;
                hits.send(Hit(frame.0));
                if frame.0.is_multiple_of(2) {
                    hits.send(Hit(frame.0 * 100));
                }
            },
        ));
        let (before, after) = if cfg!(miri) { (2, 2) } else { (3, 5) };
        for _ in 0..before {
            world.run_iteration().unwrap();
        }
        let snapshot = world.snapshot().unwrap();
        assert!(
            snapshot.report().is_complete(),
            "{executor:?}: {:?}",
            snapshot.report()
        );
        for _ in 0..after {
            world.run_iteration().unwrap();
        }
        let played = world.get::<Heard>().unwrap().clone();
        assert_eq!(played.0[3], (3, vec![Hit(3)]), "{played:?}");
        world.restore(&snapshot).unwrap();
        for _ in 0..after {
            world.run_iteration().unwrap();
        }
        assert_eq!(
            world.get::<Heard>().unwrap(),
            &played,
            "{executor:?} on {threads}"
        );
    }
}
