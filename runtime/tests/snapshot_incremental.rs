//! Incremental captures (issue 39, follow-up): `World::snapshot_into` and
//! `RollbackBuffer::save` keep a component type's values from the slot's
//! last capture of the same world when none of its columns changed since.
//! A kept part must hold exactly what a full copy holds: random sequences
//! of every way to reach a value mutably (queries with `&mut T`/`Mut<T>`,
//! `get_mut`, commands, hooks, observers, spawn, despawn, restore, another
//! world's capture into the same slot) are captured both ways and the two
//! compared value for value, tick for tick, row for row, on the serial
//! executor and on a pool of 2.

#[path = "support/executors.rs"]
mod executors;

use executors::{executors, world_on};
use proptest::prelude::*;
use sluice::{
    Add, Commands, ComponentTicks, Entity, ExecutorKind, NodeBuilder, On, Query, RollbackBuffer,
    Snapshot, SnapshotError, StorageType, World,
};

/// Never changes after spawn, unless an `Hp` insert's hook bumps it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Team(u8);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hp(i32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32);

/// Not `Copy`: cloned value by value.
#[derive(Clone, Debug, PartialEq)]
struct Name(String);

/// Kept in a sparse set.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(u8);

/// What the systems do in the next iteration.
#[derive(Clone, Debug, Default)]
struct Orders {
    /// `Query<&mut Pos>` moves every `Pos`.
    move_all: bool,
    /// `Query<(Entity, &mut Hp)>` reaches every `Hp`, writes this one's.
    hit: Option<Entity>,
    /// Commands: insert a `Tag`, remove it, despawn.
    commands: Vec<(Entity, u8)>,
}

/// Opts every component in (the same in every world of a test).
fn registered(mut world: World) -> World {
    world
        .register_component::<Tag>(StorageType::SparseSet)
        .unwrap();
    world
        .snapshot_component::<Team>()
        .snapshot_component::<Hp>()
        .snapshot_component::<Pos>()
        .snapshot_component::<Name>()
        .snapshot_component::<Tag>();
    world
}

/// The world the operations run on, with its systems, hook and observer.
fn game(executor: ExecutorKind, threads: usize) -> World {
    let mut world = registered(world_on(executor, threads));
    world.insert(Orders::default());
    world.add_system(NodeBuilder::new("move").system(
        |orders: &Orders, mut q: Query<'_, &mut Pos>| {
            if orders.move_all {
                q.for_each(|mut pos| pos.0 += 1.0);
            }
        },
    ));
    world.add_system(NodeBuilder::new("hit").system(
        |orders: &Orders, mut q: Query<'_, (Entity, &mut Hp)>| {
            // Reaches every `Hp` mutably, writes one (or none).
            for (entity, mut hp) in q.iter_mut() {
                if orders.hit == Some(entity) {
                    hp.0 -= 1;
                }
            }
        },
    ));
    world.add_system(NodeBuilder::new("orders").system(
        |orders: &Orders, commands: Commands<'_>| {
            for &(entity, what) in &orders.commands {
                match what % 3 {
                    0 => {
                        commands.entity(entity).insert((Tag(what),));
                    }
                    1 => {
                        commands.entity(entity).remove::<(Tag,)>();
                    }
                    _ => {
                        commands.entity(entity).despawn();
                    }
                }
            }
        },
    ));
    // A hook writing another component of the entity in place.
    world
        .on_insert::<Hp>(|cx, w| {
            if let Some(team) = w.component_mut::<Team>(cx.entity) {
                team.0 = team.0.wrapping_add(1);
            }
        })
        .unwrap();
    // An observer writing through a query.
    world
        .add_observer::<Add<Tag>, _>(|on: On<Add<Tag>>, mut names: Query<'_, &mut Name>| {
            if let Ok(mut name) = names.get_mut(on.target().unwrap()) {
                name.0.push('!');
            }
        })
        .unwrap();
    world
}

/// One entity's row: its id, then each component with its ticks.
type Row = (
    Entity,
    Option<(Team, ComponentTicks)>,
    Option<(Hp, ComponentTicks)>,
    Option<(Pos, ComponentTicks)>,
    Option<(Name, ComponentTicks)>,
    Option<(Tag, ComponentTicks)>,
);

/// Everything a restore gives back of the store: the change tick, and
/// every archetype's rows in row order with each component's value and
/// ticks.
fn contents(world: &World) -> (u32, usize, Vec<Vec<Row>>) {
    let entities = world.entities();
    fn cell<C: sluice::Component + Clone>(
        world: &World,
        entity: Entity,
    ) -> Option<(C, ComponentTicks)> {
        let value = world.entity(entity)?.get::<C>()?.clone();
        Some((value, world.entities().ticks::<C>(entity)?))
    }
    let archetypes = entities
        .archetypes()
        .map(|archetype| {
            archetype
                .entities()
                .iter()
                .map(|&e| {
                    (
                        e,
                        cell::<Team>(world, e),
                        cell::<Hp>(world, e),
                        cell::<Pos>(world, e),
                        cell::<Name>(world, e),
                        cell::<Tag>(world, e),
                    )
                })
                .collect()
        })
        .collect();
    (entities.tick(), entities.len(), archetypes)
}

/// `incremental` and `full` hold the same: restored into `scratch`, each
/// gives the same store.
fn same(scratch: &mut World, incremental: &Snapshot, full: &Snapshot) -> Result<(), String> {
    scratch.restore(full).map_err(|e| format!("full: {e}"))?;
    let want = contents(scratch);
    scratch
        .restore(incremental)
        .map_err(|e| format!("incremental: {e}"))?;
    let got = contents(scratch);
    if got == want {
        Ok(())
    } else {
        Err(format!("incremental {got:?}\nfull {want:?}"))
    }
}

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        team: u8,
        name: bool,
        tag: bool,
    },
    Despawn(usize),
    /// `EntityMut::get_mut::<Name>`.
    Rename(usize),
    /// `World::query::<&mut Pos>`, iterated, nothing written.
    ReachPos,
    /// `World::query::<&mut Hp>`, one written.
    WriteHp(usize),
    /// An insert of `Hp`: its hook bumps `Team`.
    InsertHp(usize),
    RemoveName(usize),
    /// One iteration of the systems.
    Run {
        move_all: bool,
        hit: Option<usize>,
        commands: Vec<(usize, u8)>,
    },
    /// Restores one of the full snapshots kept.
    Restore(usize),
    /// Another world's capture into the incremental slot.
    Foreign,
    /// Both captures, compared.
    Capture,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u8>(), any::<bool>(), any::<bool>())
            .prop_map(|(team, name, tag)| Op::Spawn { team, name, tag }),
        1 => any::<usize>().prop_map(Op::Despawn),
        1 => any::<usize>().prop_map(Op::Rename),
        1 => Just(Op::ReachPos),
        1 => any::<usize>().prop_map(Op::WriteHp),
        1 => any::<usize>().prop_map(Op::InsertHp),
        1 => any::<usize>().prop_map(Op::RemoveName),
        2 => (
            any::<bool>(),
            proptest::option::of(any::<usize>()),
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3)
        )
            .prop_map(|(move_all, hit, commands)| Op::Run { move_all, hit, commands }),
        1 => any::<usize>().prop_map(Op::Restore),
        1 => Just(Op::Foreign),
        5 => Just(Op::Capture),
    ]
}

/// The live entity picked by `index` (any, when there are some).
fn pick(world: &World, index: usize) -> Option<Entity> {
    let all: Vec<Entity> = world
        .entities()
        .archetypes()
        .flat_map(|a| a.entities().iter().copied())
        .collect();
    (!all.is_empty()).then(|| all[index % all.len()])
}

/// Runs `ops` on a world on `executor`, capturing into one reused
/// snapshot and a rollback buffer of two, each compared with a full
/// capture; how many component types the incremental captures kept.
fn run(ops: &[Op], executor: ExecutorKind, threads: usize) -> Result<usize, String> {
    let mut world = game(executor, threads);
    let mut other = registered(World::new());
    other.spawn((Team(9), Pos(9.0), Tag(9)));
    let mut scratch = registered(World::new());
    let mut slot = Snapshot::new();
    let mut buffer = RollbackBuffer::new(2);
    let mut kept: Vec<Snapshot> = Vec::new();
    let mut frame = 0_i64;
    let mut reused = 0;
    // Whether the slot holds the other world's capture.
    let mut foreign = false;
    for op in ops {
        match op {
            &Op::Spawn { team, name, tag } => {
                let e = world.spawn((Team(team), Hp(10), Pos(0.0)));
                let mut entity = world.entity_mut(e).unwrap();
                if name {
                    entity.insert((Name(format!("u{team}")),)).unwrap();
                }
                if tag {
                    entity.insert((Tag(team),)).unwrap();
                }
            }
            &Op::Despawn(i) => {
                if let Some(e) = pick(&world, i) {
                    world.despawn(e).unwrap();
                }
            }
            &Op::Rename(i) => {
                if let Some(e) = pick(&world, i)
                    && let Some(name) = world.entity_mut(e).unwrap().get_mut::<Name>()
                {
                    name.0.push('x');
                }
            }
            Op::ReachPos => for _pos in world.query::<&mut Pos>().iter_mut() {},
            &Op::WriteHp(i) => {
                let target = pick(&world, i);
                for (e, mut hp) in world.query::<(Entity, &mut Hp)>().iter_mut() {
                    if Some(e) == target {
                        hp.0 += 5;
                    }
                }
            }
            &Op::InsertHp(i) => {
                if let Some(e) = pick(&world, i) {
                    world.entity_mut(e).unwrap().insert((Hp(3),)).unwrap();
                }
            }
            &Op::RemoveName(i) => {
                if let Some(e) = pick(&world, i) {
                    let _ = world.entity_mut(e).unwrap().remove::<(Name,)>();
                }
            }
            Op::Run {
                move_all,
                hit,
                commands,
            } => {
                let orders = Orders {
                    move_all: *move_all,
                    hit: hit.and_then(|i| pick(&world, i)),
                    commands: commands
                        .iter()
                        .filter_map(|&(i, what)| Some((pick(&world, i)?, what)))
                        // One command per entity: a despawned one takes no more.
                        .fold(Vec::new(), |mut list, (e, what)| {
                            if list.iter().all(|&(seen, _)| seen != e) {
                                list.push((e, what));
                            }
                            list
                        }),
                };
                *world.get_mut::<Orders>().unwrap() = orders;
                world.run_iteration().map_err(|e| format!("run: {e:?}"))?;
                *world.get_mut::<Orders>().unwrap() = Orders::default();
            }
            &Op::Restore(i) => {
                if !kept.is_empty() {
                    world
                        .restore(&kept[i % kept.len()])
                        .map_err(|e| format!("restore: {e}"))?;
                }
            }
            Op::Foreign => {
                let after_ours = slot.is_filled() && !foreign;
                other
                    .snapshot_into(&mut slot)
                    .map_err(|e| format!("foreign: {e}"))?;
                foreign = true;
                if after_ours && slot.reused_components() != 0 {
                    return Err("another world's capture kept a part".into());
                }
            }
            Op::Capture => {
                world
                    .snapshot_into(&mut slot)
                    .map_err(|e| format!("snapshot_into: {e}"))?;
                if foreign && slot.reused_components() != 0 {
                    return Err("a capture after another world's kept a part".into());
                }
                foreign = false;
                reused += slot.reused_components();
                frame += 1;
                buffer
                    .save(frame, &world)
                    .map_err(|e| format!("save: {e}"))?;
                reused += buffer.get(frame).unwrap().reused_components();
                let full = world.snapshot().map_err(|e| format!("snapshot: {e}"))?;
                same(&mut scratch, &slot, &full).map_err(|e| format!("slot: {e}"))?;
                same(&mut scratch, buffer.get(frame).unwrap(), &full)
                    .map_err(|e| format!("buffer: {e}"))?;
                if kept.len() == 3 {
                    kept.remove(0);
                }
                kept.push(full);
            }
        }
    }
    Ok(reused)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 1 } else { 96 },
        // Miri's isolation has no working directory to find the file in.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            ProptestConfig::default().failure_persistence
        },
        ..ProptestConfig::default()
    })]

    /// A kept part holds what a copy would: after any sequence of
    /// operations, both executors.
    #[test]
    fn an_incremental_capture_equals_a_full_one(
        ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 48 })
    ) {
        let serial = run(&ops, ExecutorKind::Serial, 1);
        prop_assert!(serial.is_ok(), "serial: {}", serial.unwrap_err());
        let parallel = run(&ops, ExecutorKind::Parallel, 2);
        prop_assert!(parallel.is_ok(), "parallel on 2: {}", parallel.unwrap_err());
        prop_assert_eq!(serial, parallel, "the same parts kept on both executors");
    }
}

/// A world in the game's shape: some components never change after spawn.
fn shaped() -> (World, Vec<Entity>) {
    let mut world = registered(World::new());
    let units = (0..20)
        .map(|i| world.spawn((Team(i % 2), Hp(10), Pos(i as f32))))
        .collect();
    (world, units)
}

/// Which types a capture keeps, as each way of changing them happens.
#[test]
fn an_unchanged_type_is_kept_and_a_changed_one_copied() {
    let (mut world, units) = shaped();
    let mut slot = Snapshot::new();
    assert!(slot.is_incremental());
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0, "the first capture copies");
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 3, "nothing changed: all kept");

    // A query writing `Pos`: only `Pos` copied.
    for mut pos in world.query::<&mut Pos>().iter_mut() {
        pos.0 += 1.0;
    }
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 2);
    // `get_mut` on one `Hp`.
    world
        .entity_mut(units[3])
        .unwrap()
        .get_mut::<Hp>()
        .unwrap()
        .0 = 1;
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 2);
    // A spawn into the archetype: every type of it copied.
    let late = world.spawn((Team(1), Hp(1), Pos(0.0)));
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0);
    // A spawn into another archetype: its types only (`Team` there too).
    world.spawn((Team(1),));
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 2);
    // A despawn.
    world.despawn(late).unwrap();
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0);
    // A restore writes every column back.
    let full = world.snapshot().unwrap();
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 3);
    world.restore(&full).unwrap();
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0);
    // Another world's capture in between: nothing kept.
    let other = registered(World::new());
    other.snapshot_into(&mut slot).unwrap();
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0);
    // Turned off: nothing kept.
    slot.set_incremental(false);
    assert!(!slot.is_incremental());
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0);
    let mut scratch = registered(World::new());
    same(&mut scratch, &slot, &full).unwrap();
}

/// A `Changed<T>` read reaches nothing mutably: the type stays kept, and
/// the ticks a restore gives back are the ones captured.
#[test]
fn reading_changes_keeps_a_type_and_its_ticks() {
    let (mut world, units) = shaped();
    world
        .entity_mut(units[0])
        .unwrap()
        .get_mut::<Hp>()
        .unwrap()
        .0 = 2;
    let mut slot = Snapshot::new();
    world.snapshot_into(&mut slot).unwrap();
    let changed: Vec<Entity> = world
        .query_filtered::<Entity, sluice::Changed<Hp>>()
        .iter()
        .collect();
    assert!(!changed.is_empty());
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 3);
    let ticks = world.entities().ticks::<Hp>(units[0]);
    world
        .entity_mut(units[0])
        .unwrap()
        .get_mut::<Hp>()
        .unwrap()
        .0 = 5;
    world.restore(&slot).unwrap();
    assert_eq!(world.entities().ticks::<Hp>(units[0]), ticks);
    assert_eq!(world.entity(units[0]).unwrap().get::<Hp>(), Some(&Hp(2)));
}

/// A `Clone` that panics in a copied part empties the snapshot; the next
/// capture copies everything again and is right.
#[test]
fn a_panicking_clone_leaves_nothing_to_keep() {
    executors::quiet_planned_panics();
    #[derive(Debug, PartialEq)]
    struct Fragile(u32);
    impl Clone for Fragile {
        fn clone(&self) -> Self {
            if self.0 == 13 {
                panic!("{}: Fragile::clone", executors::PLANNED);
            }
            Fragile(self.0)
        }
    }
    let (mut world, units) = shaped();
    world.snapshot_component::<Fragile>();
    world
        .entity_mut(units[0])
        .unwrap()
        .insert((Fragile(1),))
        .unwrap();
    let mut slot = Snapshot::new();
    world.snapshot_into(&mut slot).unwrap();
    world
        .entity_mut(units[0])
        .unwrap()
        .get_mut::<Fragile>()
        .unwrap()
        .0 = 13;
    assert!(matches!(
        world.snapshot_into(&mut slot),
        Err(SnapshotError::Panicked { .. })
    ));
    assert!(!slot.is_filled());
    world
        .entity_mut(units[0])
        .unwrap()
        .get_mut::<Fragile>()
        .unwrap()
        .0 = 2;
    world.snapshot_into(&mut slot).unwrap();
    assert_eq!(slot.reused_components(), 0, "nothing kept after a failure");
    let full = world.snapshot().unwrap();
    world
        .entity_mut(units[0])
        .unwrap()
        .get_mut::<Hp>()
        .unwrap()
        .0 = 0;
    world.restore(&slot).unwrap();
    let restored = contents(&world);
    world.restore(&full).unwrap();
    assert_eq!(contents(&world), restored);
    assert_eq!(
        world.entity(units[0]).unwrap().get::<Fragile>(),
        Some(&Fragile(2))
    );
}

/// A game's frames on every executor and thread count: the same parts
/// kept, and each capture equal to a full one.
#[test]
fn every_executor_keeps_the_same_parts() {
    let spawn = |team| Op::Spawn {
        team,
        name: team % 2 == 0,
        tag: team % 3 == 0,
    };
    // Miri's share: fewer frames (a pool's frame is what costs there).
    let frames = if cfg!(miri) { 2 } else { 6 };
    let mut ops: Vec<Op> = (0..8).map(spawn).collect();
    for frame in 0..frames {
        ops.push(Op::Run {
            move_all: frame % 2 == 0,
            hit: (frame % 3 == 0).then_some(frame),
            commands: if frame == frames - 1 {
                vec![(1, 0), (2, 2)]
            } else {
                Vec::new()
            },
        });
        ops.push(Op::Capture);
    }
    let mut reference = None;
    for (executor, threads) in executors() {
        let reused = run(&ops, executor, threads).unwrap();
        assert!(reused > 0, "some types kept");
        match reference {
            None => reference = Some(reused),
            Some(reference) => assert_eq!(reused, reference, "{executor:?} on {threads}"),
        }
    }
}
