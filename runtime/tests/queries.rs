//! Queries as system parameters (issue 10): component access on the lanes,
//! filters, and the same results on every executor and thread count.

// Query types in signatures are the API under test.
#![allow(clippy::type_complexity)]

use sluice::exec::ThreadPool;
use sluice::{
    Added, Changed, Commands, Entity, ExecutorKind, IterationError, NodeBuilder, Query,
    QueryEntityError, With, Without, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Enemy;

fn n(full: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { full }
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
    let still = world.spawn((Pos(0.0, 0.0),));
    let moving = world.spawn((Pos(1.0, 1.0), Vel(1.0, 2.0)));
    let foe = world.spawn((Pos(5.0, 5.0), Vel(-1.0, 0.0), Hp(10), Enemy));
    world.add_system(
        NodeBuilder::new("move").system(|mut q: Query<(&mut Pos, &Vel)>| {
            assert_eq!(q.count(), 2);
            q.for_each(|(mut pos, vel)| {
                pos.0 += vel.0;
                pos.1 += vel.1;
            });
        }),
    );
    world.add_system(NodeBuilder::new("hurt").system(
        |mut q: Query<(Entity, &mut Hp), With<Enemy>>| {
            for (_, mut hp) in q.iter_mut() {
                hp.0 -= 3;
            }
        },
    ));
    world.run_iteration().unwrap();
    let pos = |e| *world.entity(e).unwrap().get::<Pos>().unwrap();
    assert_eq!(pos(still), Pos(0.0, 0.0));
    assert_eq!(pos(moving), Pos(2.0, 3.0));
    assert_eq!(pos(foe), Pos(4.0, 5.0));
    assert_eq!(world.entity(foe).unwrap().get::<Hp>(), Some(&Hp(7)));
}

#[test]
fn filters_optional_and_get() {
    let mut world = World::new();
    let a = world.spawn((Pos(0.0, 0.0),));
    let b = world.spawn((Pos(1.0, 0.0), Vel(0.0, 0.0)));
    let c = world.spawn((Pos(2.0, 0.0), Enemy));
    let gone = world.spawn((Pos(3.0, 0.0),));
    world.despawn(gone).unwrap();
    world.insert(vec![a, b, c, gone]);
    world.add_system(NodeBuilder::new("look").system(
        |all: Query<(Entity, Option<&Vel>)>,
         calm: Query<Entity, (With<Pos>, Without<Enemy>)>,
         never: Query<&Hp>,
         handles: &Vec<Entity>| {
            let mut seen: Vec<(Entity, bool)> =
                all.iter().map(|(e, vel)| (e, vel.is_some())).collect();
            seen.sort();
            assert_eq!(
                seen,
                vec![(handles[0], false), (handles[1], true), (handles[2], false)]
            );
            let mut calm: Vec<Entity> = calm.iter().collect();
            calm.sort();
            assert_eq!(calm, vec![handles[0], handles[1]]);
            assert!(never.is_empty(), "no entity ever had an Hp");
            assert_eq!(all.get(handles[1]).map(|(_, v)| v.is_some()), Ok(true));
            assert_eq!(
                all.get(handles[3]).err(),
                Some(QueryEntityError::NoSuchEntity(handles[3])),
                "a despawned entity is not found"
            );
        },
    ));
    world.run_iteration().unwrap();
}

/// `Query::get` and `get_mut` say why an entity has no item: not alive
/// here (despawned, or another world's), which required component it lacks
/// (never stored at all, or not on this entity), or the filter that leaves
/// it out (by archetype or by change tick).
#[test]
fn get_says_why() {
    struct Hp;
    let mut world = World::new();
    let plain = world.spawn((Pos(0.0, 0.0),));
    let moving = world.spawn((Pos(1.0, 0.0), Vel(1.0, 0.0)));
    let foe = world.spawn((Pos(2.0, 0.0), Vel(0.0, 1.0), Enemy));
    let gone = world.spawn((Pos(3.0, 0.0),));
    world.despawn(gone).unwrap();
    // Another world's handle that names nothing here (a foreign handle
    // names a live entity of this world or nothing, never other bytes).
    let mut other = World::new();
    let stranger = (0..6)
        .map(|_| other.spawn((Pos(9.0, 9.0), Vel(9.0, 9.0))))
        .last()
        .unwrap();

    let vel = std::any::type_name::<Vel>();
    let hp = std::any::type_name::<Hp>();
    let calm = std::any::type_name::<Without<Enemy>>();
    let mut q = world.query_filtered::<(&Pos, &mut Vel), Without<Enemy>>();
    assert!(q.get_mut(moving).is_ok());
    assert_eq!(
        q.get_mut(plain).err(),
        Some(QueryEntityError::MissingComponent {
            entity: plain,
            component: vel
        })
    );
    assert_eq!(
        q.get_mut(foe).err(),
        Some(QueryEntityError::FilteredOut {
            entity: foe,
            filter: calm
        })
    );
    assert_eq!(
        q.get_mut(gone).err(),
        Some(QueryEntityError::NoSuchEntity(gone))
    );
    let err = q.get_mut(stranger).err().unwrap();
    assert_eq!(err, QueryEntityError::NoSuchEntity(stranger));
    assert_eq!(err.entity(), stranger);
    assert!(err.to_string().contains("not alive"), "{err}");

    // A component no entity ever had is named too, and the first one
    // missing is the one named.
    let q = world.query::<(&Pos, &Hp, &Vel)>();
    let err = q.get(plain).err().unwrap();
    assert_eq!(
        err,
        QueryEntityError::MissingComponent {
            entity: plain,
            component: hp
        }
    );
    assert!(err.to_string().contains(hp), "{err}");
    // `Option` requires nothing.
    assert!(world.query::<(&Pos, Option<&Vel>)>().get(plain).is_ok());

    // By change tick: a reader that already saw `moving` is told the
    // filter `Changed<Vel>` leaves it out, inside a system.
    world.insert(vec![moving]);
    world.insert(Vec::<Result<(), QueryEntityError>>::new());
    world.add_system(NodeBuilder::new("changed").system(
        |q: Query<&Vel, Changed<Vel>>,
         handles: &Vec<Entity>,
         seen: &mut Vec<Result<(), QueryEntityError>>| {
            seen.push(q.get(handles[0]).map(|_| ()));
        },
    ));
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    let changed = std::any::type_name::<Changed<Vel>>();
    assert_eq!(
        world.get::<Vec<Result<(), QueryEntityError>>>().unwrap(),
        &vec![
            Ok(()),
            Err(QueryEntityError::FilteredOut {
                entity: moving,
                filter: changed
            })
        ]
    );
}

/// `&C` is shared on C's lane and `&mut C` gated: writers of different
/// components are not ordered, writers of one are, and a reader of C waits
/// for the writer before it.
#[test]
fn components_are_lanes() {
    let mut world = World::new();
    world.spawn((Pos(0.0, 0.0), Vel(1.0, 1.0)));
    let pos_writer = world.add_system(
        NodeBuilder::new("pos_writer")
            .system(|mut q: Query<&mut Pos>| q.for_each(|mut p| p.0 += 1.0)),
    );
    let vel_writer = world.add_system(
        NodeBuilder::new("vel_writer")
            .system(|mut q: Query<&mut Vel>| q.for_each(|mut v| v.0 += 1.0)),
    );
    let pos_reader = world.add_system(
        NodeBuilder::new("pos_reader").system(|q: Query<&Pos>| assert_eq!(q.count(), 1)),
    );
    let second_pos_writer = world.add_system(
        NodeBuilder::new("pos_writer_2")
            .system(|mut q: Query<&mut Pos>| q.for_each(|mut p| p.1 += 1.0)),
    );
    let plan = world.plan().unwrap();
    assert!(plan.edge_between(pos_writer, vel_writer).is_none());
    assert!(plan.edge_between(vel_writer, pos_writer).is_none());
    assert!(plan.edge_between(pos_writer, pos_reader).is_some());
    assert!(plan.edge_between(pos_reader, second_pos_writer).is_some());
    assert_eq!(plan.stage_of(pos_writer), plan.stage_of(vel_writer));
    world.run_iteration().unwrap();
}

/// A system naming a component through two queries in aliasing ways is
/// refused before anything runs, naming the node (SL0009).
#[test]
fn aliasing_queries_are_refused() {
    let mut world = World::new();
    let e = world.spawn((Pos(0.0, 0.0),));
    world.add_system(NodeBuilder::new("aliases").system(
        |mut a: Query<&mut Pos>, b: Query<&Pos>| {
            a.for_each(|mut p| p.0 += 1.0);
            b.iter().for_each(|p| assert!(p.0 >= 0.0));
        },
    ));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("two queries aliasing Pos must not plan");
    };
    let message = errors.to_string();
    assert!(message.contains("SL0009"), "{message}");
    assert!(message.contains("aliases"), "{message}");
    assert_eq!(world.entity(e).unwrap().get::<Pos>(), Some(&Pos(0.0, 0.0)));
}

/// Writes through `&mut C` stamp the rows' changed tick.
#[test]
fn writes_mark_rows_changed() {
    let mut world = World::new();
    let written = world.spawn((Pos(0.0, 0.0), Vel(1.0, 0.0)));
    let untouched = world.spawn((Pos(0.0, 0.0),));
    world.add_system(
        NodeBuilder::new("move")
            .system(|mut q: Query<(&mut Pos, &Vel)>| q.for_each(|(mut p, v)| p.0 += v.0)),
    );
    let before = world.entity(written).unwrap().ticks::<Pos>().unwrap();
    let untouched_before = world.entity(untouched).unwrap().ticks::<Pos>().unwrap();
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    let after = world.entity(written).unwrap().ticks::<Pos>().unwrap();
    assert!(after.changed > before.changed, "{before:?} -> {after:?}");
    let other = world.entity(untouched).unwrap().ticks::<Pos>().unwrap();
    assert_eq!(
        other, untouched_before,
        "a row not handed out keeps its ticks"
    );
}

/// A world of query systems with structural commands: the same entities and
/// values after a few iterations on every executor and thread count.
#[test]
fn serial_equivalence_across_thread_counts() {
    let entities = n(400, 12);
    let run = |executor: ExecutorKind, threads: usize| {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
        world.set_executor(executor);
        for i in 0..entities {
            let x = i as f32;
            match i % 4 {
                0 => drop(world.spawn((Pos(x, 0.0), Vel(1.0, 0.5)))),
                1 => drop(world.spawn((Pos(x, 1.0), Vel(-0.5, 1.0), Hp(20)))),
                2 => drop(world.spawn((Pos(x, 2.0), Hp(5), Enemy))),
                _ => drop(world.spawn((Pos(x, 3.0),))),
            }
        }
        world.add_system(
            NodeBuilder::new("integrate").system(|mut q: Query<(&mut Pos, &Vel)>| {
                q.for_each(|(mut p, v)| {
                    p.0 += v.0;
                    p.1 += v.1;
                })
            }),
        );
        world.add_system(
            NodeBuilder::new("damp")
                .system(|mut q: Query<&mut Vel>| q.for_each(|mut v| v.0 *= 0.9)),
        );
        world.add_system(NodeBuilder::new("bleed").system(
            |mut q: Query<(Entity, &mut Hp), Without<Vel>>, commands: Commands<'_>| {
                for (e, mut hp) in q.iter_mut() {
                    hp.0 -= 2;
                    if hp.0 <= 0 {
                        commands.despawn(e);
                    }
                }
            },
        ));
        world.add_system(NodeBuilder::new("reinforce").system(
            |enemies: Query<&Pos, With<Enemy>>, commands: Commands<'_>| {
                for p in enemies.iter() {
                    if p.0 < 3.0 {
                        commands.spawn((Pos(p.0 + 100.0, p.1), Hp(3), Enemy));
                    }
                }
            },
        ));
        world.add_system(NodeBuilder::new("slow").system(
            |q: Query<(Entity, &Pos), (Without<Enemy>, With<Vel>)>, commands: Commands<'_>| {
                for (e, p) in q.iter() {
                    if p.0 > 10.0 && p.1 > 3.0 {
                        commands.entity(e).insert((Hp(1),)).remove::<(Vel,)>();
                    }
                }
            },
        ));
        for iteration in 0..5 {
            if let Err(error) = world.run_iteration() {
                panic!("iteration {iteration} on {executor:?}: {error}");
            }
        }
        let mut state: Vec<(u64, Option<Pos>, Option<Vel>, Option<Hp>, bool)> = world
            .entities()
            .archetypes()
            .flat_map(|a| a.entities().to_vec())
            .map(|e| {
                let view = world.entity(e).unwrap();
                (
                    e.id(),
                    view.get::<Pos>().copied(),
                    view.get::<Vel>().copied(),
                    view.get::<Hp>().copied(),
                    view.has::<Enemy>(),
                )
            })
            .collect();
        state.sort_by_key(|s| s.0);
        state
    };
    let serial = run(ExecutorKind::Serial, 0);
    assert!(serial.len() > entities / 2, "{}", serial.len());
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    for &threads in threads {
        for &executor in parallel_kinds() {
            assert!(
                run(executor, threads) == serial,
                "{executor:?} on {threads} threads differs from serial"
            );
        }
    }
}

#[derive(Debug, Default)]
struct Seen(Vec<(Entity, f32)>);
#[derive(Debug, Default)]
struct Open(bool);

/// `Changed<T>` yields the rows written since the system last ran, and
/// `Added<T>` the rows added since; each system has its own cursor.
#[test]
fn changed_and_added_since_the_last_run() {
    let mut world = World::new();
    let a = world.spawn((Pos(0.0, 0.0), Vel(1.0, 0.0)));
    let b = world.spawn((Pos(0.0, 0.0), Vel(0.0, 0.0)));
    world.insert(Seen::default());
    world.insert(Vec::<Entity>::new());
    // Only `a` moves: only `a` changes after the first run.
    world.add_system(
        NodeBuilder::new("move").system(|mut q: Query<(&mut Pos, &Vel)>| {
            q.for_each(|(mut p, v)| {
                if v.0 != 0.0 {
                    p.0 += v.0;
                }
            })
        }),
    );
    world.add_system(NodeBuilder::new("watch").system(
        |q: Query<(Entity, &Pos), Changed<Pos>>, seen: &mut Seen| {
            seen.0.clear();
            seen.0.extend(q.iter().map(|(e, p)| (e, p.0)));
            seen.0.sort_by_key(|x| x.0);
        },
    ));
    world.add_system(NodeBuilder::new("arrivals").system(
        |q: Query<Entity, Added<Vel>>, arrived: &mut Vec<Entity>| {
            arrived.clear();
            arrived.extend(q.iter());
            arrived.sort();
        },
    ));
    world.run_iteration().unwrap();
    // The first run sees everything as new.
    assert_eq!(world.get::<Seen>().unwrap().0.len(), 2);
    assert_eq!(world.get::<Vec<Entity>>().unwrap(), &vec![a, b]);
    world.run_iteration().unwrap();
    // `move` hands out `&mut Pos` for both rows (both marked changed); the
    // filter sees both again, but only `a`'s value moved.
    let seen = &world.get::<Seen>().unwrap().0;
    assert_eq!(seen.iter().find(|(e, _)| *e == a).map(|s| s.1), Some(2.0));
    assert!(
        world.get::<Vec<Entity>>().unwrap().is_empty(),
        "nothing added"
    );
    // A write between iterations is seen; an insert is an addition.
    let c = world.spawn((Pos(9.0, 9.0),));
    world
        .entity_mut(c)
        .unwrap()
        .insert((Vel(0.0, 0.0),))
        .unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Vec<Entity>>().unwrap(), &vec![c]);
}

/// A body skipped by its run condition keeps its cursor: when it next runs
/// it sees every change made while it was skipped.
#[test]
fn a_skipped_body_catches_up() {
    let mut world = World::new();
    let e = world.spawn((Hp(10),));
    world.insert(Open(false));
    world.insert(Seen::default());
    world.add_system(
        NodeBuilder::new("hurt").system(|mut q: Query<&mut Hp>, open: &Open| {
            if !open.0 {
                q.for_each(|mut hp| hp.0 -= 1);
            }
        }),
    );
    world.add_system(
        NodeBuilder::new("report")
            .system(|q: Query<(Entity, &Hp), Changed<Hp>>, seen: &mut Seen| {
                seen.0 = q.iter().map(|(e, hp)| (e, hp.0 as f32)).collect();
            })
            .run_if(|open: &Open| open.0),
    );
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    assert!(
        world.get::<Seen>().unwrap().0.is_empty(),
        "report never ran"
    );
    world.insert(Open(true)); // hurt stops writing; report runs
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Seen>().unwrap().0,
        vec![(e, 7.0)],
        "the changes made while it was skipped"
    );
    world.run_iteration().unwrap();
    assert!(
        world.get::<Seen>().unwrap().0.is_empty(),
        "nothing changed since its last run"
    );
}

/// A run condition may query (read-only) with its own cursor.
#[test]
fn run_conditions_query_with_their_own_cursor() {
    let mut world = World::new();
    world.spawn((Hp(3),));
    world.insert(Seen::default());
    world.add_system(
        NodeBuilder::new("hurt").system(|mut q: Query<&mut Hp>| q.for_each(|mut hp| hp.0 -= 1)),
    );
    world.add_system(
        NodeBuilder::new("on_death")
            .system(|seen: &mut Seen, q: Query<(Entity, &Hp)>| {
                seen.0.extend(q.iter().map(|(e, hp)| (e, hp.0 as f32)));
            })
            .run_if(|q: Query<&Hp>| q.iter().any(|hp| hp.0 <= 0)),
    );
    for _ in 0..5 {
        world.run_iteration().unwrap();
    }
    let seen = &world.get::<Seen>().unwrap().0;
    assert_eq!(
        seen.len(),
        3,
        "ran from the iteration Hp reached 0: {seen:?}"
    );
}

#[derive(Debug, Default)]
struct Gone(Vec<Entity>);
#[derive(Debug, Default)]
struct GoneLater(Vec<Entity>);

/// `Removed<T>` yields the entities that lost a `T` since the reader last
/// ran, each reader with its own cursor.
#[test]
fn removed_since_the_last_run() {
    use sluice::Removed;
    let mut world = World::new();
    let a = world.spawn((Hp(1), Pos(0.0, 0.0)));
    let b = world.spawn((Hp(2),));
    let c = world.spawn((Hp(3),));
    world.insert(Gone::default());
    world.insert(GoneLater::default());
    world.insert(Open(false));
    world.insert(vec![c]);
    world.add_system(
        NodeBuilder::new("every").system(|removed: Removed<Hp>, gone: &mut Gone| {
            gone.0.extend(removed.iter());
        }),
    );
    world.add_system(
        NodeBuilder::new("sometimes")
            .system(|removed: Removed<Hp>, gone: &mut GoneLater| gone.0.extend(removed.iter()))
            .run_if(|open: &Open| open.0),
    );
    world.add_system(NodeBuilder::new("strip").system(
        |commands: Commands<'_>, targets: &mut Vec<Entity>| {
            for e in targets.drain(..) {
                commands.entity(e).remove::<(Hp,)>();
            }
        },
    ));
    world.run_iteration().unwrap(); // strip records c's removal at the boundary
    world.despawn(a).unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Gone>().unwrap().0, vec![c, a]);
    world.despawn(b).unwrap();
    world.insert(Open(true)); // the skipped reader catches up
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Gone>().unwrap().0, vec![c, a, b]);
    assert_eq!(world.get::<GoneLater>().unwrap().0, vec![c, a, b]);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Gone>().unwrap().0.len(), 3, "each removal once");
    assert_eq!(world.get::<GoneLater>().unwrap().0.len(), 3);
    assert!(world.entity(c).unwrap().get::<Hp>().is_none());
}

/// Between iterations the planner does not see a query, so the world checks
/// it: a query naming a component twice where either writes it is refused
/// before any reference exists; reading twice is fine.
#[test]
fn world_queries_that_would_alias_are_refused() {
    let mut world = World::new();
    world.spawn((Pos(1.0, 2.0), Vel(0.0, 0.0)));
    assert_eq!(world.query::<(&Pos, &Pos)>().count(), 1, "two shared reads");
    for attempt in [
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.query::<(&mut Pos, &Pos)>().count()
        })),
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.query::<(&mut Pos, Option<&Pos>)>().count()
        })),
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world
                .query_filtered::<(&mut Vel, &mut Vel), With<Pos>>()
                .count()
        })),
    ] {
        let payload = attempt.expect_err("an aliasing query is refused");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("names a component twice"), "{message}");
    }
    assert_eq!(
        world.query::<&Pos>().iter().next(),
        Some(&Pos(1.0, 2.0)),
        "nothing changed"
    );
}

/// Change detection stays right however long a world runs: ticks wrap
/// around `u32` several times while nothing changes, and `Changed<T>` never
/// reports a stale row as new; a real change is still seen.
#[test]
fn changed_survives_tick_wraparound() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let mut world = World::new();
    world.spawn((Pos(0.0, 0.0),));
    let seen = Arc::new(AtomicUsize::new(0));
    let write = Arc::new(AtomicBool::new(false));
    let (counted, writing) = (seen.clone(), write.clone());
    world.add_system(
        NodeBuilder::new("move").system(move |mut q: Query<&mut Pos>| {
            if writing.load(Ordering::Relaxed) {
                q.for_each(|mut pos| pos.0 += 1.0);
            }
        }),
    );
    world.add_system(
        NodeBuilder::new("watch").system(move |q: Query<&Pos, Changed<Pos>>| {
            counted.fetch_add(q.iter().count(), Ordering::Relaxed);
        }),
    );
    world.run_iteration().expect("runs");
    assert_eq!(
        seen.swap(0, Ordering::Relaxed),
        1,
        "added counts as changed"
    );
    // Five times 2^30 ticks: past the u32 wrap, and past i32's window.
    for _ in 0..20 {
        world
            .entities_mut()
            .advance_ticks(sluice::TICK_CHECK_INTERVAL + 12_345);
        world.run_iteration().expect("runs");
        assert_eq!(seen.load(Ordering::Relaxed), 0, "nothing changed");
    }
    write.store(true, Ordering::Relaxed);
    world.run_iteration().expect("runs");
    assert_eq!(seen.load(Ordering::Relaxed), 1, "a real change is seen");
}
