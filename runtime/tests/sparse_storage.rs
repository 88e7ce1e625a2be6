//! Issue 36, sparse-set storage: a component registered as
//! `StorageType::SparseSet` is added and removed without moving the
//! entity's table row, and every query term sees it as it sees a table
//! component (`&T`, `&mut T`, `Option`, `With`/`Without`, `Changed`/`Added`,
//! `Has`, `Or`, `AnyOf`, `get`/`get_many`, `par_for_each`), with change
//! ticks (`Mut` stamps only what is written); `Disabled`, required
//! components, derived and mixed bundles, `insert_if_new` and
//! `remove_present` treat it as a table component; the set walk and the
//! row walk agree; its values are dropped exactly once, a panicking `Drop`
//! too. Each
//! system test runs on every executor kind and on 1, 2 and 4 threads, where
//! the result must be the serial one.

#[path = "support/executors.rs"]
mod executors;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use executors::{PLANNED, executors, quiet_planned_panics, world_on};

use sluice::{
    Added, AnyOf, Changed, Commands, ComponentError, ComponentRef, Entity, EntityError, Has,
    NodeBuilder, Or, Query, QueryEntityError, StorageType, With, Without, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hp(u32);
/// The sparse component under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stun(u32);
/// A second sparse component, a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Burning;

/// `Or<(With<Burning>, With<Pos>)>`: a sparse and a table term.
type BurningOrPlaced = Or<(With<Burning>, With<Pos>)>;

/// What the systems under test saw, frame by frame.
#[derive(Debug, Default, PartialEq)]
struct Seen(Vec<Vec<u32>>);

fn sparse_world(kind: sluice::ExecutorKind, threads: usize) -> World {
    let mut world = world_on(kind, threads);
    world
        .register_component::<Stun>(StorageType::SparseSet)
        .unwrap();
    world
        .register_component::<Burning>(StorageType::SparseSet)
        .unwrap();
    world
}

#[test]
fn adding_and_removing_a_sparse_component_keeps_the_archetype() {
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let e = world.spawn((Pos(1.0), Hp(3)));
    let archetype = world.entities().archetype_of(e);
    world.entity_mut(e).unwrap().insert((Stun(2),)).unwrap();
    assert_eq!(world.entities().archetype_of(e), archetype);
    assert_eq!(world.entity(e).unwrap().get::<Stun>(), Some(&Stun(2)));
    // A mixed bundle: the table part moves, the sparse part goes to its set.
    world
        .entity_mut(e)
        .unwrap()
        .insert((Burning, Hp(9)))
        .unwrap();
    assert_eq!(world.entities().archetype_of(e), archetype);
    assert_eq!(world.entity(e).unwrap().get::<Hp>(), Some(&Hp(9)));
    let (stun, burning) = world
        .entity_mut(e)
        .unwrap()
        .remove::<(Stun, Burning)>()
        .unwrap();
    assert_eq!((stun, burning), (Stun(2), Burning));
    assert_eq!(world.entities().archetype_of(e), archetype);
    assert!(!world.entity(e).unwrap().has::<Stun>());
    assert_eq!(
        world.entity_mut(e).unwrap().remove::<(Stun,)>().err(),
        Some(EntityError::MissingComponent {
            entity: e,
            component: std::any::type_name::<Stun>(),
        })
    );
    // Spawned with a sparse field, and a mixed removal.
    let f = world.spawn((Hp(1), Stun(5)));
    assert_eq!(world.entity(f).unwrap().get::<Stun>(), Some(&Stun(5)));
    assert_eq!(
        world.entity_mut(f).unwrap().remove::<(Hp, Stun)>().unwrap(),
        (Hp(1), Stun(5))
    );
    assert!(world.entity(f).unwrap().get::<Hp>().is_none());
}

#[test]
fn every_query_term_sees_sparse_components() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        world.insert(Seen::default());
        let a = world.spawn((Hp(1), Stun(10)));
        let b = world.spawn((Hp(2),));
        let c = world.spawn((Hp(3), Pos(0.0), Stun(30), Burning));
        let d = world.spawn((Pos(1.0),));
        world.add_system(NodeBuilder::new("look").system(
            |stunned: Query<(&Hp, &Stun)>,
             maybe: Query<(&Hp, Option<&Stun>)>,
             with: Query<&Hp, With<Stun>>,
             without: Query<&Hp, Without<Stun>>,
             has: Query<(&Hp, Has<Burning>)>,
             either: Query<&Hp, BurningOrPlaced>,
             any: Query<AnyOf<(&Stun, &Pos)>>,
             seen: &mut Seen| {
                let mut frame: Vec<u32> = stunned.iter().map(|(h, s)| h.0 * 100 + s.0).collect();
                frame.push(u32::MAX);
                frame.extend(maybe.iter().map(|(h, s)| h.0 * 100 + s.map_or(0, |s| s.0)));
                frame.push(u32::MAX);
                frame.extend(with.iter().map(|h| h.0));
                frame.push(u32::MAX);
                frame.extend(without.iter().map(|h| h.0));
                frame.push(u32::MAX);
                frame.extend(has.iter().map(|(h, has)| h.0 * 10 + u32::from(has)));
                frame.push(u32::MAX);
                frame.extend(either.iter().map(|h| h.0));
                frame.push(u32::MAX);
                frame.extend(
                    any.iter()
                        .map(|(s, p)| s.map_or(0, |s| s.0) + u32::from(p.is_some())),
                );
                frame.push(stunned.count() as u32);
                seen.0.push(frame);
            },
        ));
        world.run_iteration().unwrap();
        const X: u32 = u32::MAX;
        // Archetypes in creation order: {Hp} (a, b), {Hp, Pos} (c), {Pos} (d).
        let expected = vec![
            110, 330, X, 110, 200, 330, X, 1, 3, X, 2, X, 10, 20, 31, X, 3, X, 10, 31, 1, 2,
        ];
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            vec![expected],
            "on {kind:?} x{threads}"
        );
        let _ = (a, b, c, d);
    }
}

#[test]
fn writes_and_change_ticks_through_sparse_queries() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        world.insert(Seen::default());
        let a = world.spawn((Hp(1), Stun(1)));
        let b = world.spawn((Hp(2),));
        world.add_system(
            NodeBuilder::new("tick")
                .system(|mut stuns: Query<&mut Stun>| stuns.for_each(|mut stun| stun.0 += 1)),
        );
        world.add_system(NodeBuilder::new("watch").after("tick").system(
            |changed: Query<&Hp, Changed<Stun>>,
             added: Query<&Hp, Added<Stun>>,
             seen: &mut Seen| {
                let mut frame: Vec<u32> = changed.iter().map(|h| h.0).collect();
                frame.push(0);
                frame.extend(added.iter().map(|h| h.0));
                seen.0.push(frame);
            },
        ));
        world.run_iteration().unwrap();
        world.entity_mut(b).unwrap().insert((Stun(7),)).unwrap();
        world.run_iteration().unwrap();
        world.entity_mut(a).unwrap().remove::<(Stun,)>().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            vec![vec![1, 0, 1], vec![1, 2, 0, 2], vec![2, 0]],
            "on {kind:?} x{threads}"
        );
        assert_eq!(world.entity(b).unwrap().get::<Stun>(), Some(&Stun(9)));
        let ticks = world.entity(b).unwrap().ticks::<Stun>().unwrap();
        assert!(ticks.changed != ticks.added);
    }
}

#[test]
fn get_get_many_and_par_for_each() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        let n = if cfg!(miri) { 40 } else { 1000 };
        let all: Vec<Entity> = (0..n).map(|i| world.spawn((Hp(i),))).collect();
        for &e in all.iter().step_by(3) {
            world.entity_mut(e).unwrap().insert((Stun(1),)).unwrap();
        }
        world.add_system(
            NodeBuilder::new("par").system(|mut q: Query<(&mut Stun, &Hp)>| {
                q.par_for_each(|(mut stun, hp)| stun.0 += hp.0)
            }),
        );
        world.run_iteration().unwrap();
        let mut query = world.query::<(&Hp, &Stun)>();
        assert_eq!(query.get(all[3]).unwrap(), (&Hp(3), &Stun(4)));
        assert_eq!(
            query.get(all[1]).err(),
            Some(QueryEntityError::MissingComponent {
                entity: all[1],
                component: std::any::type_name::<Stun>(),
            })
        );
        let [x, y] = query.get_many([all[0], all[6]]).unwrap();
        assert_eq!((x.1, y.1), (&Stun(1), &Stun(7)));
        let [s, t] = query.get_many_mut([all[0], all[3]]).unwrap();
        assert_eq!((s.1.0, t.1.0), (1, 4));
        assert!(query.get_many_mut([all[0], all[0]]).is_err());
        let total: u32 = world.query::<&Stun>().iter().map(|s| s.0).sum();
        let expected: u32 = (0..n).step_by(3).map(|i| i + 1).sum();
        assert_eq!(total, expected, "on {kind:?} x{threads}");
    }
}

#[test]
fn commands_insert_and_remove_sparse_components_at_the_boundary() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        let e = world.spawn((Hp(1),));
        world.add_system(NodeBuilder::new("toggle").system(
            |all: Query<(Entity, Has<Stun>)>, commands: Commands| {
                for (entity, stunned) in all.iter() {
                    if stunned {
                        commands.entity(entity).remove::<(Stun,)>();
                    } else {
                        commands.entity(entity).insert((Stun(3),));
                    }
                }
            },
        ));
        for frame in 0..4 {
            world.run_iteration().unwrap();
            assert_eq!(
                world.entity(e).unwrap().has::<Stun>(),
                frame % 2 == 0,
                "on {kind:?} x{threads}"
            );
        }
    }
}

#[test]
fn the_storage_cannot_change_once_chosen() {
    let mut world = World::new();
    world
        .register_component::<Stun>(StorageType::SparseSet)
        .unwrap();
    // The same choice again is accepted.
    world
        .register_component::<Stun>(StorageType::SparseSet)
        .unwrap();
    let refused = world.register_component::<Stun>(StorageType::Table);
    assert_eq!(
        refused.err(),
        Some(ComponentError::StorageAlreadyChosen {
            component: std::any::type_name::<Stun>(),
            storage: StorageType::SparseSet,
            requested: StorageType::Table,
        })
    );
    // Used as a table component first: too late to choose a sparse set.
    world.spawn((Hp(1),));
    let error = world
        .register_component::<Hp>(StorageType::SparseSet)
        .unwrap_err();
    assert!(error.to_string().contains("Hp"), "{error}");
    assert!(error.to_string().contains("table"), "{error}");
    // Nothing changed: Hp is still a table component.
    world.spawn((Hp(2),));
    assert_eq!(world.query::<&Hp>().count(), 2);
}

#[test]
fn a_component_ref_refuses_a_sparse_component_by_name() {
    let mut world = World::new();
    world
        .register_component::<Stun>(StorageType::SparseSet)
        .unwrap();
    let e = world.spawn((Hp(1), Stun(1)));
    world.freeze(e).unwrap();
    assert_eq!(
        ComponentRef::<Stun>::new(&world, e).err(),
        Some(EntityError::SparseComponent {
            entity: e,
            component: std::any::type_name::<Stun>(),
        })
    );
    // Frozen: it can no longer gain or lose a sparse component either.
    assert_eq!(
        world.entity_mut(e).unwrap().remove::<(Stun,)>().err(),
        Some(EntityError::Frozen { entity: e })
    );
}

/// Counts its drops; panics in `Drop` when armed.
struct Tracked {
    drops: Arc<AtomicUsize>,
    bomb: bool,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
        if self.bomb {
            panic!("{PLANNED}: a sparse component's drop");
        }
    }
}

#[test]
fn values_drop_exactly_once_even_when_a_drop_panics() {
    quiet_planned_panics();
    let drops = Arc::new(AtomicUsize::new(0));
    let tracked = |bomb| Tracked {
        drops: drops.clone(),
        bomb,
    };
    let mut world = World::new();
    world
        .register_component::<Tracked>(StorageType::SparseSet)
        .unwrap();
    let n = if cfg!(miri) { 6 } else { 100 };
    let all: Vec<Entity> = (0..n)
        .map(|i| world.spawn((Hp(i), tracked(false))))
        .collect();
    // Replaced: the old value drops.
    world
        .entity_mut(all[0])
        .unwrap()
        .insert((tracked(false),))
        .unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    // Removed and returned: the caller drops it.
    drop(world.entity_mut(all[1]).unwrap().remove::<(Tracked,)>());
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    // Despawned with a panicking drop: the store is consistent after it.
    world
        .entity_mut(all[2])
        .unwrap()
        .insert((tracked(true),))
        .unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    let despawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.despawn(all[2]).unwrap();
    }));
    assert!(despawn.is_err());
    assert_eq!(drops.load(Ordering::Relaxed), 4);
    assert!(world.entity(all[2]).is_none());
    assert_eq!(world.query::<&Tracked>().count(), n as usize - 2);
    // Replacing a value whose drop panics: the new value is in place.
    world
        .entity_mut(all[3])
        .unwrap()
        .insert((tracked(true),))
        .unwrap();
    let replace = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world
            .entity_mut(all[3])
            .unwrap()
            .insert((tracked(false),))
            .unwrap();
    }));
    assert!(replace.is_err());
    assert!(!world.entity(all[3]).unwrap().get::<Tracked>().unwrap().bomb);
    world.despawn(all[4]).unwrap();
    let before_drop = drops.load(Ordering::Relaxed);
    let live = world.query::<&Tracked>().count();
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), before_drop + live);
    // Every value made: n spawned, 3 inserted over, 1 bomb replaced.
    assert_eq!(drops.load(Ordering::Relaxed), n as usize + 4);
}

#[test]
fn churn_reuses_slots_and_keeps_every_value() {
    let mut world = World::new();
    world
        .register_component::<Stun>(StorageType::SparseSet)
        .unwrap();
    let rounds = if cfg!(miri) { 3 } else { 50 };
    let per = if cfg!(miri) { 10 } else { 2000 };
    for round in 0..rounds {
        let spawned: Vec<Entity> = (0..per).map(|i| world.spawn((Hp(i),))).collect();
        for &e in &spawned {
            world.entity_mut(e).unwrap().insert((Stun(round),)).unwrap();
        }
        for &e in spawned.iter().step_by(2) {
            world.entity_mut(e).unwrap().remove::<(Stun,)>().unwrap();
        }
        assert_eq!(world.query::<&Stun>().count(), per as usize / 2);
        for e in spawned {
            world.despawn(e).unwrap();
        }
        assert_eq!(world.query::<&Stun>().count(), 0);
    }
}

#[test]
fn removed_single_and_combinations_see_sparse_components() {
    use sluice::{Populated, Removed, Single};
    #[derive(Debug, Default, PartialEq)]
    struct Log(Vec<(&'static str, u32)>);
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        world.insert(Log::default());
        let a = world.spawn((Hp(1), Stun(1)));
        let b = world.spawn((Hp(2), Stun(2)));
        let c = world.spawn((Hp(3),));
        world.add_system(NodeBuilder::new("removed").system(
            |removed: Removed<Stun>, hp: Query<&Hp>, log: &mut Log| {
                for e in removed.iter() {
                    log.0.push(("removed", hp.get(e).map_or(0, |h| h.0)));
                }
            },
        ));
        world.add_system(
            NodeBuilder::new("single").system(|lone: Single<(&Hp, &Stun)>, log: &mut Log| {
                log.0.push(("single", lone.0.0))
            }),
        );
        world.add_system(NodeBuilder::new("pairs").system(
            |stunned: Populated<&Stun>, log: &mut Log| {
                let pairs = stunned.iter_combinations::<2>().count() as u32;
                log.0.push(("pairs", pairs));
            },
        ));
        world.run_iteration().unwrap();
        world.entity_mut(a).unwrap().remove::<(Stun,)>().unwrap();
        world.run_iteration().unwrap();
        world.despawn(b).unwrap();
        world.run_iteration().unwrap();
        let _ = c;
        let mut log = std::mem::take(&mut world.get_mut::<Log>().unwrap().0);
        // Within a frame the three systems' order is the plan's; sort each.
        log.sort_unstable();
        let mut expected = vec![
            ("pairs", 1),
            ("pairs", 0),
            ("removed", 1),
            ("removed", 0),
            ("single", 2),
        ];
        expected.sort_unstable();
        assert_eq!(log, expected, "on {kind:?} x{threads}");
    }
}

/// `Mut` items of a sparse component stamp only the rows written;
/// `Changed`, `Added` and `Ref` read the set's per-value ticks; on every
/// executor the serial result.
#[test]
fn mut_items_stamp_only_the_written_values() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        world.insert(Seen::default());
        let even: Vec<Entity> = (0..6u32).map(|i| world.spawn((Hp(i), Stun(i)))).collect();
        world.add_system(NodeBuilder::new("write_odd").system(
            |mut stuns: Query<(&Hp, &mut Stun)>| {
                stuns.for_each(|(hp, mut stun)| {
                    if hp.0 % 2 == 1 {
                        stun.0 += 10;
                    }
                });
            },
        ));
        world.add_system(NodeBuilder::new("watch").after("write_odd").system(
            |changed: Query<&Hp, Changed<Stun>>,
             refs: Query<(&Hp, sluice::Ref<Stun>)>,
             seen: &mut Seen| {
                let mut frame: Vec<u32> = changed.iter().map(|hp| hp.0).collect();
                frame.sort_unstable();
                frame.push(100);
                let mut added: Vec<u32> = refs
                    .iter()
                    .filter(|(_, stun)| stun.is_added())
                    .map(|(hp, _)| hp.0)
                    .collect();
                added.sort_unstable();
                frame.extend(added);
                seen.0.push(frame);
            },
        ));
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Seen>().unwrap().0,
            vec![
                // First run: everything is news to the watcher.
                vec![0, 1, 2, 3, 4, 5, 100, 0, 1, 2, 3, 4, 5],
                // Then only the odd rows were written, and nothing added.
                vec![1, 3, 5, 100],
            ],
            "on {kind:?} x{threads}"
        );
        assert_eq!(
            world.entity(even[3]).unwrap().get::<Stun>(),
            Some(&Stun(23))
        );
    }
}

/// A disabled entity's sparse components are hidden from every walk (the
/// set walk included) unless the query asks for it.
#[test]
fn disabled_entities_are_hidden_on_the_sparse_walks() {
    use sluice::{Allow, Disabled};
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let awake = world.spawn((Hp(1), Stun(1)));
    let asleep = world.spawn((Hp(2), Stun(2), Disabled));
    let calm = world.spawn((Hp(3),));
    assert_eq!(
        world
            .query::<&Stun>()
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(world.query::<(&Hp, Has<Stun>)>().count(), 2);
    let mut seen: Vec<u32> = world
        .query_filtered::<&Stun, Allow<Disabled>>()
        .iter()
        .map(|s| s.0)
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, [1, 2]);
    assert!(matches!(
        world.query::<&Stun>().get(asleep),
        Err(QueryEntityError::Disabled(_))
    ));
    assert!(matches!(
        world.query::<&Stun>().get(calm),
        Err(QueryEntityError::MissingComponent { component, .. }) if component.contains("Stun")
    ));
    assert_eq!(world.query::<&Stun>().get(awake).unwrap(), &Stun(1));
    // Enabling it again shows its sparse component.
    world
        .entity_mut(asleep)
        .unwrap()
        .remove::<(Disabled,)>()
        .unwrap();
    assert_eq!(world.query::<&Stun>().count(), 2);
}

/// Required components across storages: a table component requiring a
/// sparse one, and a sparse one requiring a table one.
#[test]
fn required_components_across_storages() {
    #[derive(Debug, Default, PartialEq)]
    struct Armour(u32);
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    world.register_required::<Hp, Burning>().unwrap();
    world
        .register_required_with::<Stun, Armour>(|| Armour(5))
        .unwrap();
    let e = world.spawn((Hp(1),));
    assert!(world.entity(e).unwrap().get::<Burning>().is_some());
    world.entity_mut(e).unwrap().insert((Stun(1),)).unwrap();
    assert_eq!(world.entity(e).unwrap().get::<Armour>(), Some(&Armour(5)));
    // Given in the bundle: kept, not replaced by the default.
    let f = world.spawn((Stun(2), Armour(9)));
    assert_eq!(world.entity(f).unwrap().get::<Armour>(), Some(&Armour(9)));
    // A sparse requirement the entity has already is kept.
    world.entity_mut(e).unwrap().insert((Hp(2),)).unwrap();
    assert_eq!(world.query::<&Burning>().count(), 1);
}

/// Mixed derived bundles, `insert_if_new` and `remove_present` with
/// sparse fields; values drop once.
#[test]
fn derived_bundles_insert_if_new_and_remove_present() {
    #[derive(sluice::Bundle)]
    struct Hurt {
        hp: Hp,
        stun: Stun,
        #[bundle]
        placed: (Pos, Burning),
    }
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let e = world.spawn(Hurt {
        hp: Hp(1),
        stun: Stun(2),
        placed: (Pos(0.5), Burning),
    });
    assert_eq!(world.query::<(&Hp, &Stun, &Pos, &Burning)>().count(), 1);
    // The entity's table holds only the table fields.
    let archetype = world.entities().archetype_of(e).unwrap();
    assert_eq!(
        world
            .entities()
            .archetype(archetype)
            .unwrap()
            .components()
            .len(),
        2
    );
    // insert_if_new keeps the sparse value it has, adds what it lacks.
    world
        .entity_mut(e)
        .unwrap()
        .insert_if_new((Stun(99), Hp(99)))
        .unwrap();
    assert_eq!(world.entity(e).unwrap().get::<Stun>(), Some(&Stun(2)));
    assert_eq!(world.entity(e).unwrap().get::<Hp>(), Some(&Hp(1)));
    let absent = world
        .entity_mut(e)
        .unwrap()
        .remove_present::<(Stun, Burning, Pos)>()
        .unwrap();
    assert!(absent.is_empty(), "{absent:?}");
    let absent = world
        .entity_mut(e)
        .unwrap()
        .remove_present::<(Stun, Hp)>()
        .unwrap();
    assert_eq!(absent, [std::any::type_name::<Stun>()]);
    assert!(world.entity(e).unwrap().get::<Hp>().is_none());
    // A bundle only partly there is refused whole by `remove`.
    world.entity_mut(e).unwrap().insert((Stun(3),)).unwrap();
    let refused = world.entity_mut(e).unwrap().remove::<(Stun, Burning)>();
    assert!(
        matches!(refused, Err(EntityError::MissingComponent { component, .. }) if component.contains("Burning"))
    );
    assert_eq!(world.entity(e).unwrap().get::<Stun>(), Some(&Stun(3)));
    let (stun,) = world.entity_mut(e).unwrap().remove::<(Stun,)>().unwrap();
    assert_eq!(stun, Stun(3));
}

/// `insert_if_new` over a sparse value drops the offered one exactly once,
/// even when its `Drop` panics.
#[test]
fn insert_if_new_drops_the_offered_sparse_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    struct Loud(Arc<AtomicUsize>, bool);
    impl Drop for Loud {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
            if self.1 {
                panic!("loud");
            }
        }
    }
    let mut world = World::new();
    world
        .register_component::<Loud>(StorageType::SparseSet)
        .unwrap();
    let e = world.spawn((Hp(1), Loud(drops.clone(), false)));
    let offered = Loud(drops.clone(), true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.entities_mut().insert_if_new(e, (offered,))
    }));
    assert!(result.is_err(), "the offered value's drop panicked");
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert!(world.entity(e).unwrap().get::<Loud>().is_some_and(|l| !l.1));
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 2, "each value once");
}

/// The set walk (a required sparse component), the row walk (an optional
/// one) and `get` agree, on a few thousand entities in many archetypes.
#[test]
fn the_set_walk_and_the_row_walk_agree() {
    struct A;
    struct B;
    let n: u32 = if cfg!(miri) { 60 } else { 20_000 };
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let mut with_stun = Vec::new();
    for i in 0..n {
        let e = match i % 3 {
            0 => world.spawn((Hp(i),)),
            1 => world.spawn((Hp(i), A)),
            _ => world.spawn((Hp(i), A, B)),
        };
        if i % 7 == 0 {
            world.entity_mut(e).unwrap().insert((Stun(i),)).unwrap();
            with_stun.push(i);
        }
    }
    let mut by_set: Vec<u32> = world
        .query::<(&Hp, &Stun)>()
        .iter()
        .map(|(h, _)| h.0)
        .collect();
    by_set.sort_unstable();
    assert_eq!(by_set, with_stun);
    let mut by_rows: Vec<u32> = world
        .query::<(&Hp, Option<&Stun>)>()
        .iter()
        .filter_map(|(h, s)| {
            s.map(|s| {
                assert_eq!(s.0, h.0);
                h.0
            })
        })
        .collect();
    by_rows.sort_unstable();
    assert_eq!(by_rows, with_stun);
    let with_a: usize = with_stun.iter().filter(|&&i| i % 3 != 0).count();
    assert_eq!(world.query_filtered::<&Stun, With<A>>().count(), with_a);
    assert_eq!(
        world
            .query_filtered::<&Hp, (With<A>, Without<Stun>)>()
            .count(),
        (0..n).filter(|i| i % 3 != 0 && i % 7 != 0).count()
    );
}

/// A query of the set's component alone (`&S`, `&mut S`, `Ref<S>`, with
/// `()`, `With<S>` or `Allow<Disabled>`) reads the set's column in order
/// without looking its entities up, unless an entity it would hide is
/// disabled: every item walk of it (`iter`'s `next` and `fold`, `for_each`,
/// `count`) agrees with the entity-by-entity walk of `(Entity, &S)`, before
/// any entity is disabled, while one is, and once the disabled archetype is
/// empty again.
#[test]
fn the_dense_set_walk_agrees_with_the_entity_walk() {
    use sluice::{Allow, Disabled, Ref};
    let n: u32 = if cfg!(miri) { 40 } else { 3_000 };
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let mut spawned = Vec::new();
    for i in 0..n {
        let e = world.spawn((Hp(i),));
        if i % 3 == 0 {
            world.entity_mut(e).unwrap().insert((Stun(i),)).unwrap();
        }
        spawned.push(e);
    }
    let by_entity = |world: &mut World, seen_disabled: bool| -> Vec<u32> {
        let mut all: Vec<u32> = if seen_disabled {
            world
                .query_filtered::<(Entity, &Stun), Allow<Disabled>>()
                .iter()
                .map(|(_, s)| s.0)
                .collect()
        } else {
            world
                .query::<(Entity, &Stun)>()
                .iter()
                .map(|(_, s)| s.0)
                .collect()
        };
        all.sort_unstable();
        all
    };
    let check = |world: &mut World, when: &str| {
        let expected = by_entity(world, false);
        let sum: u64 = expected.iter().map(|&v| u64::from(v)).sum();
        let query = world.query::<&Stun>();
        let mut iter = query.iter();
        let mut got: Vec<u32> = iter.next().map(|s| s.0).into_iter().collect();
        got.extend(iter.map(|s| s.0));
        got.sort_unstable();
        assert_eq!(got, expected, "iter, {when}");
        assert_eq!(query.count(), expected.len(), "count, {when}");
        let folded: u64 = world
            .query_filtered::<&Stun, With<Stun>>()
            .iter()
            .map(|s| u64::from(s.0))
            .sum();
        assert_eq!(folded, sum, "With<Stun>, {when}");
        let mut each = Vec::new();
        world.query::<Ref<Stun>>().for_each(|s| each.push(s.0));
        each.sort_unstable();
        assert_eq!(each, expected, "for_each, {when}");
        let mut allowed: Vec<u32> = world
            .query_filtered::<&Stun, Allow<Disabled>>()
            .iter()
            .map(|s| s.0)
            .collect();
        allowed.sort_unstable();
        assert_eq!(allowed, by_entity(world, true), "Allow<Disabled>, {when}");
    };
    check(&mut world, "with nothing disabled");
    for &e in spawned.iter().step_by(5) {
        world.entity_mut(e).unwrap().insert((Disabled,)).unwrap();
    }
    check(&mut world, "with some disabled");
    assert!(world.query::<&Stun>().count() < by_entity(&mut world, true).len());
    for &e in spawned.iter().step_by(5) {
        world
            .entity_mut(e)
            .unwrap()
            .remove::<(Disabled,)>()
            .unwrap();
    }
    check(&mut world, "once none is disabled again");
    // Writes through the dense walk land on each entity's own value and
    // stamp it changed.
    world.query::<&mut Stun>().for_each(|mut s| s.0 += n);
    for (i, &e) in spawned.iter().enumerate() {
        let view = world.entity(e).unwrap();
        let expected = (i % 3 == 0).then_some(Stun(i as u32 + n));
        assert_eq!(view.get::<Stun>().copied(), expected, "entity {i}");
        if let Some(ticks) = view.ticks::<Stun>() {
            assert!(ticks.changed > ticks.added, "entity {i} stamped changed");
        }
    }
}

/// A removal edge cached by `remove_present` (a table field lacking) is
/// not taken by `remove` of the same mixed bundle: that is refused by name.
#[test]
fn remove_after_remove_present_of_a_mixed_bundle_is_refused_by_name() {
    let mut world = sparse_world(sluice::ExecutorKind::Serial, 1);
    let a = world.spawn((Hp(1), Stun(1)));
    let b = world.spawn((Hp(2), Stun(2)));
    let absent = world
        .entity_mut(a)
        .unwrap()
        .remove_present::<(Hp, Pos, Stun)>()
        .unwrap();
    assert_eq!(absent, [std::any::type_name::<Pos>()]);
    let refused = world.entity_mut(b).unwrap().remove::<(Hp, Pos, Stun)>();
    assert!(
        matches!(refused, Err(EntityError::MissingComponent { component, .. }) if component.contains("Pos"))
    );
    assert_eq!(world.query::<(&Hp, &Stun)>().count(), 1);
}

/// A parallel query node (`add_par_query`) naming a sparse component
/// looks each row up in its slices: on every executor the serial result.
#[test]
fn a_parallel_query_node_reads_and_writes_sparse_components() {
    for (kind, threads) in executors() {
        let mut world = sparse_world(kind, threads);
        let n = if cfg!(miri) { 40 } else { 1000 };
        let entities = world.spawn_batch((0..n).map(|i| (Hp(i),)));
        for &e in entities.iter().step_by(3) {
            world.entity_mut(e).unwrap().insert((Stun(1),)).unwrap();
        }
        world.add_par_query::<(&mut Hp, &Stun), ()>(
            NodeBuilder::new("stun_hurts"),
            16,
            |(mut hp, stun): (sluice::Mut<Hp>, &Stun)| hp.0 += 1000 * stun.0,
        );
        world.run_iteration().unwrap();
        for (i, &e) in entities.iter().enumerate() {
            let expected = i as u32 + if i % 3 == 0 { 1000 } else { 0 };
            assert_eq!(
                world.entity(e).unwrap().get::<Hp>(),
                Some(&Hp(expected)),
                "on {kind:?} x{threads}"
            );
        }
    }
}
