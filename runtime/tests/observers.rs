//! Observers: systems run for an event (a component's lifecycle event or
//! a custom one), globally or for one entity; their parameters judged by
//! the one gate; what they record landing right after the change that ran
//! them; events propagating along a parent link; the depth bound; a
//! panicking observer; every executor and thread count.

#[path = "support/executors.rs"]
mod support;

use sluice::prelude::*;
use sluice::{
    Add, BoundaryStep, Entities, Event, IterationError, ObserveError, On, Remove, Traversal,
};
use support::{PLANNED, executors, quiet_planned_panics, world_on};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag(u32);

#[derive(Debug, Default)]
struct Log(Vec<String>);

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

#[derive(Debug)]
struct Damage(u32);
impl Event for Damage {}

#[derive(Debug)]
struct Ping(u32);
impl Event for Ping {}

/// A test-local parent link (the hierarchy's `ChildOf` implements
/// `Traversal` the same way).
#[derive(Debug, Clone, Copy)]
struct Parent(Entity);
impl Traversal for Parent {
    fn next(&self) -> Option<Entity> {
        Some(self.0)
    }
}

/// An event that bubbles up `Parent` links.
#[derive(Debug)]
struct Clicked;
impl Event for Clicked {
    fn next_target(entities: &Entities, target: Entity) -> Option<Entity> {
        sluice::traverse::<Parent>(entities, target)
    }
}

#[derive(Debug)]
struct Name(&'static str);

#[test]
fn observers_of_one_event_run_in_registration_order() {
    let mut world = World::new();
    world.insert(Log::default());
    for name in ["first", "second", "third"] {
        world
            .add_observer::<Damage, _>(move |on: On<Damage>, log: &mut Log| {
                log.0.push(format!("{name} {}", on.0))
            })
            .unwrap();
    }
    world.trigger(Damage(4)).unwrap();
    assert_eq!(take_log(&mut world), ["first 4", "second 4", "third 4"]);
    // An event nobody observes is no error.
    world.trigger(Ping(1)).unwrap();
}

#[test]
fn an_observer_is_judged_by_the_one_gate() {
    let mut world = World::new();
    world.insert(Log::default());
    let refused = world.add_observer::<Damage, _>(|_: On<Damage>, _: &mut Log, _: &Log| {});
    let Err(ObserveError::Refused(error)) = refused else {
        panic!("expected a refusal");
    };
    assert!(error.to_string().contains("SL0009"), "{error}");
    // Nothing was registered: the event reaches no one.
    world.trigger(Damage(1)).unwrap();
    // A whole-world system cannot observe (it could change entities in
    // the middle of a change).
    let whole = world.add_observer::<Damage, _>(|_: &mut World| {});
    assert!(matches!(whole, Err(ObserveError::Refused(_))));
}

#[test]
fn an_observer_reads_services_and_queries_and_its_commands_land_after_the_change() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Add<Hp>, _>(
            |on: On<Add<Hp>>, hp: Query<&Hp>, log: &mut Log, commands: Commands<'_>| {
                let target = on.target().unwrap();
                log.0.push(format!("hp {}", hp.get(target).unwrap().0));
                commands.entity(target).insert((Tag(7),));
                commands.trigger(Ping(hp.get(target).unwrap().0));
            },
        )
        .unwrap();
    world
        .add_observer::<Ping, _>(|on: On<Ping>, log: &mut Log| log.0.push(format!("ping {}", on.0)))
        .unwrap();
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            commands.spawn((Hp(1),));
            commands.trigger(Ping(100));
            commands.spawn((Hp(2),));
        }),
    );
    world.run_iteration().unwrap();
    // Each spawn's observer, and what it recorded, before the next command.
    assert_eq!(
        take_log(&mut world),
        ["hp 1", "ping 1", "ping 100", "hp 2", "ping 2"]
    );
    assert_eq!(world.query::<&Tag>().iter().count(), 2);
}

#[test]
fn an_observer_that_despawns_the_entity_that_triggered_it() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Add<Hp>, _>(|on: On<Add<Hp>>, commands: Commands<'_>| {
            commands.despawn(on.target().unwrap());
        })
        .unwrap();
    world
        .add_observer::<Remove<Hp>, _>(|on: On<Remove<Hp>>, hp: Query<&Hp>, log: &mut Log| {
            // Still readable: it goes after its observers.
            log.0.push(format!(
                "removed {}",
                hp.get(on.target().unwrap()).unwrap().0
            ));
        })
        .unwrap();
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            let e = commands.spawn((Hp(5),));
            // Refused: despawned by the observer before this lands.
            commands.entity(e).insert((Tag(1),));
        }),
    );
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("expected the insert to be refused");
    };
    assert_eq!(failures.len(), 1);
    assert!(failures[0].refused_because().is_some());
    assert_eq!(take_log(&mut world), ["removed 5"]);
    assert_eq!(world.entities().len(), 0);
    // Directly, too.
    let e = world.spawn((Hp(6),));
    assert!(!world.entities().contains(e));
    assert_eq!(take_log(&mut world), ["removed 6"]);
}

#[test]
fn an_entity_observer_sees_only_its_entity_and_goes_with_it() {
    let mut world = World::new();
    world.insert(Log::default());
    let watched = world.spawn((Tag(1),));
    let other = world.spawn((Tag(2),));
    world
        .observe_entity::<Damage, _>(watched, |on: On<Damage>, log: &mut Log| {
            log.0.push(format!("watched {}", on.0))
        })
        .unwrap();
    world
        .add_observer::<Damage, _>(|on: On<Damage>, log: &mut Log| {
            log.0.push(format!("global {:?}", on.target().is_some()))
        })
        .unwrap();
    world.trigger_targets(Damage(1), other).unwrap();
    world.trigger_targets(Damage(2), watched).unwrap();
    world.trigger(Damage(3)).unwrap();
    assert_eq!(
        take_log(&mut world),
        ["global true", "watched 2", "global true", "global false"]
    );
    world.despawn(watched).unwrap();
    world.trigger_targets(Damage(4), other).unwrap();
    assert_eq!(take_log(&mut world), ["global true"]);
    let gone = world.observe_entity::<Damage, _>(watched, |_: On<Damage>| {});
    assert!(matches!(gone, Err(ObserveError::NoSuchEntity { .. })));
}

#[test]
fn an_observer_can_be_removed() {
    let mut world = World::new();
    world.insert(Log::default());
    let id = world
        .add_observer::<Damage, _>(|_: On<Damage>, log: &mut Log| log.0.push("hit".into()))
        .unwrap();
    world.trigger(Damage(1)).unwrap();
    world.remove_observer(id).unwrap();
    world.trigger(Damage(1)).unwrap();
    assert_eq!(take_log(&mut world), ["hit"]);
    assert!(matches!(
        world.remove_observer(id),
        Err(ObserveError::NoSuchObserver(_))
    ));
    // Lifecycle observers, too: removing the last one makes spawns plain.
    let id = world
        .add_observer::<Add<Hp>, _>(|_: On<Add<Hp>>, log: &mut Log| log.0.push("add".into()))
        .unwrap();
    world.spawn((Hp(1),));
    world.remove_observer(id).unwrap();
    world.spawn((Hp(1),));
    assert_eq!(take_log(&mut world), ["add"]);
}

#[test]
fn events_bubble_up_parent_links_and_stop_where_asked() {
    let mut world = World::new();
    world.insert(Log::default());
    let root = world.spawn((Name("root"),));
    let middle = world.spawn((Name("middle"), Parent(root)));
    let leaf = world.spawn((Name("leaf"), Parent(middle)));
    world
        .add_observer::<Clicked, _>(|on: On<Clicked>, names: Query<&Name>, log: &mut Log| {
            log.0
                .push(names.get(on.target().unwrap()).unwrap().0.to_owned())
        })
        .unwrap();
    world.trigger_targets(Clicked, leaf).unwrap();
    assert_eq!(take_log(&mut world), ["leaf", "middle", "root"]);
    // Stopped at `middle`: its observers all run, then it goes no further.
    world
        .observe_entity::<Clicked, _>(middle, |on: On<Clicked>, log: &mut Log| {
            on.stop_propagation();
            log.0.push("stopped".into());
        })
        .unwrap();
    world.trigger_targets(Clicked, leaf).unwrap();
    assert_eq!(take_log(&mut world), ["leaf", "middle", "stopped"]);
    // A stale parent is never followed.
    world.despawn(middle).unwrap();
    world.trigger_targets(Clicked, leaf).unwrap();
    assert_eq!(take_log(&mut world), ["leaf"]);
}

#[test]
fn a_parent_link_that_loops_is_stopped_and_reported() {
    let mut world = World::new();
    world.insert(Log::default());
    let a = world.spawn(());
    let b = world.spawn((Parent(a),));
    world.entity_mut(a).unwrap().insert((Parent(b),)).unwrap();
    world
        .add_observer::<Clicked, _>(|_: On<Clicked>, mut count: Local<u32>| *count += 1)
        .unwrap();
    let Err(ObserveError::Failed(failures)) = world.trigger_targets(Clicked, a) else {
        panic!("expected the loop to be reported");
    };
    assert!(matches!(
        failures[0].step(),
        BoundaryStep::Propagation { hops, .. } if *hops == sluice::world::observe::MAX_PROPAGATION
    ));
}

/// An event dropped after its observers ran, with a `Drop` that panics:
/// the panic is reported as the delivery's failure, what the observers did
/// stays, and the world delivers the next event as before (globally and
/// along a parent link).
#[test]
fn a_panicking_drop_of_an_event_is_reported_and_keeps_what_its_observers_did() {
    struct Bomb(u32);
    impl Event for Bomb {
        fn next_target(entities: &Entities, target: Entity) -> Option<Entity> {
            sluice::traverse::<Parent>(entities, target)
        }
    }
    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 == 13 {
                panic!("bomb 13 went off in Drop");
            }
        }
    }
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Bomb, _>(|on: On<Bomb>, log: &mut Log| log.0.push(format!("bomb {}", on.0)))
        .unwrap();
    let parent = world.spawn(());
    let child = world.spawn((Parent(parent),));
    for target in [None, Some(child)] {
        let result = match target {
            None => world.trigger(Bomb(13)),
            Some(target) => world.trigger_targets(Bomb(13), target),
        };
        let Err(ObserveError::Failed(failures)) = result else {
            panic!("the panicking drop was not reported ({target:?})");
        };
        assert_eq!(failures.len(), 1);
        assert!(
            matches!(failures[0].step(), BoundaryStep::Propagation { event, .. } if event.contains("Bomb"))
        );
        let message = failures[0].message().unwrap_or_default();
        assert!(message.contains("bomb 13 went off"), "{message}");
        let expected = if target.is_some() { 2 } else { 1 };
        assert_eq!(take_log(&mut world), vec!["bomb 13"; expected]);
        world.trigger(Bomb(1)).unwrap();
        assert_eq!(take_log(&mut world), ["bomb 1"]);
    }
}

#[test]
fn observers_triggering_each_other_stop_at_the_bound_and_keep_what_landed() {
    for limit in [1u32, 5, 64] {
        let mut world = World::new();
        world.insert(Log::default());
        world.set_observer_depth_limit(limit);
        world
            .add_observer::<Ping, _>(|on: On<Ping>, log: &mut Log, commands: Commands<'_>| {
                log.0.push(format!("ping {}", on.0));
                commands.trigger(Ping(on.0 + 1));
            })
            .unwrap();
        world.add_system(NodeBuilder::new("start").system(|commands: Commands<'_>| {
            commands.trigger(Ping(0));
            commands.spawn((Tag(1),));
        }));
        let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
            panic!("expected the chain to be stopped");
        };
        assert_eq!(failures.len(), 1);
        let BoundaryStep::ObserverChain { chain } = failures[0].step() else {
            panic!("expected an observer chain, got {:?}", failures[0].step());
        };
        assert_eq!(chain.len(), limit as usize + 1);
        assert!(chain.iter().all(|link| link.contains("Ping")), "{chain:?}");
        // Everything before the bound landed, and so did the rest of the
        // boundary.
        let log = take_log(&mut world);
        assert_eq!(log.len(), limit as usize);
        assert_eq!(log.last().unwrap(), &format!("ping {}", limit - 1));
        assert_eq!(world.query::<&Tag>().iter().count(), 1);
    }
}

#[test]
fn a_panicking_observer_is_reported_by_name_and_the_rest_lands() {
    quiet_planned_panics();
    fn fragile(on: On<Damage>, commands: Commands<'_>) {
        commands.spawn((Tag(99),));
        if on.0 == 13 {
            panic!("{PLANNED}: unlucky damage");
        }
    }
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world.add_observer::<Damage, _>(fragile).unwrap();
        world
            .add_observer::<Damage, _>(|on: On<Damage>, log: &mut Log| {
                log.0.push(format!("after {}", on.0))
            })
            .unwrap();
        world.add_system(NodeBuilder::new("hitter").system(|commands: Commands<'_>| {
            commands.trigger(Damage(13));
            commands.trigger(Damage(1));
        }));
        let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
            panic!("expected a boundary failure");
        };
        assert_eq!(failures.len(), 1);
        let BoundaryStep::Observer { observer, event } = failures[0].step() else {
            panic!("expected an observer step");
        };
        assert!(observer.contains("fragile"), "{observer}");
        assert!(event.ends_with("Damage"));
        assert!(failures[0].message().unwrap().contains("unlucky damage"));
        assert_eq!(take_log(&mut world), ["after 13", "after 1"]);
        // The failing run's spawn was dropped; the other one's landed.
        assert_eq!(
            world.query::<&Tag>().iter().count(),
            1,
            "{executor:?} {threads}"
        );
    }
}

#[test]
fn an_observer_missing_a_service_is_reported_and_the_rest_lands() {
    struct Absent;
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Damage, _>(|_: On<Damage>, _: &Absent| {})
        .unwrap();
    world
        .add_observer::<Damage, _>(|_: On<Damage>, log: &mut Log| log.0.push("ran".into()))
        .unwrap();
    let Err(ObserveError::Failed(failures)) = world.trigger(Damage(1)) else {
        panic!("expected a failure");
    };
    assert!(
        failures[0].to_string().contains("Absent"),
        "{}",
        failures[0]
    );
    assert_eq!(take_log(&mut world), ["ran"]);
}

#[test]
fn a_trigger_at_a_spawned_entity_lands_in_command_order() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Damage, _>(|on: On<Damage>, hp: Query<&Hp>, log: &mut Log| {
            let hp = hp.get(on.target().unwrap()).unwrap().0;
            log.0.push(format!("{} on {hp}", on.0));
        })
        .unwrap();
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            let e = commands.spawn((Hp(10),));
            commands.trigger_targets(Damage(3), e);
            commands.despawn(e);
            commands.trigger_targets(Damage(4), e); // refused: gone
        }),
    );
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("expected the last trigger refused");
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(take_log(&mut world), ["3 on 10"]);
}

#[test]
fn observers_give_the_same_result_on_every_executor() {
    fn run(executor: sluice::ExecutorKind, threads: usize) -> (Vec<String>, Vec<u32>) {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world
            .add_observer::<Add<Hp>, _>(
                |on: On<Add<Hp>>, hp: Query<&Hp>, log: &mut Log, commands: Commands<'_>| {
                    let value = hp.get(on.target().unwrap()).unwrap().0;
                    log.0.push(format!("add {value}"));
                    if value.is_multiple_of(4) {
                        commands.trigger_targets(Damage(value), on.target().unwrap());
                    }
                },
            )
            .unwrap();
        world
            .add_observer::<Damage, _>(|on: On<Damage>, log: &mut Log, commands: Commands<'_>| {
                log.0.push(format!("damage {}", on.0));
                commands.entity(on.target().unwrap()).insert((Tag(on.0),));
                if on.0.is_multiple_of(8) {
                    commands.despawn(on.target().unwrap());
                }
            })
            .unwrap();
        world
            .add_observer::<Remove<Hp>, _>(|on: On<Remove<Hp>>, log: &mut Log| {
                log.0.push(format!("remove {:?}", on.target().unwrap()))
            })
            .unwrap();
        for node in 0..5u32 {
            world.add_system(NodeBuilder::new(format!("spawner {node}")).system(
                move |commands: Commands<'_>| {
                    // Under Miri half: hp 0, 8 and 24 still despawn.
                    for i in 0..if cfg!(miri) { 3 } else { 6 } {
                        commands.spawn((Hp(node * 6 + i),));
                    }
                },
            ));
        }
        for _ in 0..if cfg!(miri) { 2 } else { 3 } {
            // A despawned entity's insert is refused: the same on every
            // executor.
            let _ = world.run_iteration();
        }
        let mut tags: Vec<u32> = world.query::<&Tag>().iter().map(|t| t.0).collect();
        tags.sort_unstable();
        (take_log(&mut world), tags)
    }
    let reference = run(sluice::ExecutorKind::Serial, 1);
    assert!(reference.0.iter().any(|l| l.starts_with("remove")));
    for (executor, threads) in executors() {
        assert_eq!(
            run(executor, threads),
            reference,
            "{executor:?} on {threads}"
        );
    }
}

#[derive(Debug)]
struct Hit(u32);

#[test]
fn observers_with_and_without_commands_or_messages_each_leave_what_they_did() {
    // An observer declaring neither `Commands` nor a message service runs
    // its body alone; the others keep their queue and their messages.
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Damage, _>(|on: On<Damage>, log: &mut Log| {
            log.0.push(format!("quiet {}", on.0))
        })
        .unwrap();
    world
        .add_observer::<Damage, _>(|on: On<Damage>, hits: Publish<Hit>| hits.send(Hit(on.0)))
        .unwrap();
    world
        .add_observer::<Damage, _>(|on: On<Damage>, commands: Commands<'_>| {
            commands.spawn((Hp(on.0),));
        })
        .unwrap();
    world
        .add_observer::<Damage, _>(|on: On<Damage>, log: &mut Log| {
            log.0.push(format!("after {}", on.0))
        })
        .unwrap();
    world.trigger(Damage(3)).unwrap();
    world.trigger(Damage(4)).unwrap();
    assert_eq!(
        take_log(&mut world),
        ["quiet 3", "after 3", "quiet 4", "after 4"]
    );
    let mut hp: Vec<u32> = world.query::<&Hp>().iter().map(|hp| hp.0).collect();
    hp.sort_unstable();
    assert_eq!(hp, [3, 4]);
    world
        .run_system_once(|mut hits: Subscribe<Hit>, log: &mut Log| {
            for hit in hits.unread() {
                log.0.push(format!("hit {}", hit.0));
            }
        })
        .unwrap();
    assert_eq!(take_log(&mut world), ["hit 3", "hit 4"]);
    // A quiet observer that panics is reported by name, as any other.
    world
        .add_observer::<Ping, _>(|_: On<Ping>, log: &mut Log| {
            if log.0.is_empty() {
                panic!("{PLANNED}: quiet boom");
            }
        })
        .unwrap();
    quiet_planned_panics();
    let Err(ObserveError::Failed(failures)) = world.trigger(Ping(1)) else {
        panic!("expected the panic to be reported");
    };
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].to_string().contains("quiet boom"),
        "{}",
        failures[0]
    );
}

/// `EntityCommands::observe`: an observer attached from commands lands in
/// command order (a trigger recorded before it is not seen, one after is),
/// the same on every executor; several systems each watching what they
/// spawned.
#[test]
fn an_observer_attached_by_commands_lands_in_command_order() {
    fn run(executor: sluice::ExecutorKind, threads: usize) -> Vec<String> {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        for node in 0..4u32 {
            world.add_system(NodeBuilder::new(format!("watcher {node}")).system(
                move |commands: Commands<'_>| {
                    let e = commands.spawn((Hp(node),));
                    commands.trigger_targets(Damage(100 + node), e); // before: unseen
                    commands.entity(e).observe::<Damage, _>(
                        move |on: On<Damage>, hp: Query<&Hp>, log: &mut Log| {
                            let hp = hp.get(on.target().unwrap()).unwrap().0;
                            log.0.push(format!("{node} saw {} on {hp}", on.0));
                        },
                    );
                    commands.trigger_targets(Damage(node), e);
                },
            ));
        }
        world.run_iteration().unwrap();
        take_log(&mut world)
    }
    let reference = run(sluice::ExecutorKind::Serial, 1);
    assert_eq!(
        reference,
        [
            "0 saw 0 on 0",
            "1 saw 1 on 1",
            "2 saw 2 on 2",
            "3 saw 3 on 3"
        ]
    );
    for (executor, threads) in executors() {
        assert_eq!(
            run(executor, threads),
            reference,
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn an_observer_attached_by_commands_watches_its_entity_only_and_goes_with_it() {
    let mut world = World::new();
    world.insert(Log::default());
    let watched = world.spawn((Hp(1),));
    let other = world.spawn((Hp(2),));
    world.add_system(NodeBuilder::new("attach").system(
        move |commands: Commands<'_>, mut done: Local<bool>| {
            if !std::mem::replace(&mut *done, true) {
                commands.entity(watched).observe::<Add<Tag>, _>(
                    |on: On<Add<Tag>>, log: &mut Log| {
                        log.0.push(format!("tagged {:?}", on.target().is_some()));
                    },
                );
            }
        },
    ));
    world.run_iteration().unwrap();
    world.entity_mut(other).unwrap().insert((Tag(0),)).unwrap();
    world
        .entity_mut(watched)
        .unwrap()
        .insert((Tag(1),))
        .unwrap();
    assert_eq!(take_log(&mut world), ["tagged true"]);
    world.despawn(watched).unwrap();
    let again = world.spawn((Hp(3),));
    world.entity_mut(again).unwrap().insert((Tag(2),)).unwrap();
    assert!(take_log(&mut world).is_empty(), "the observer went with it");
}

#[test]
fn observing_a_despawned_entity_from_commands_is_a_named_refusal() {
    let mut world = World::new();
    world.insert(Log::default());
    let doomed = world.spawn((Hp(1),));
    world.add_system(
        NodeBuilder::new("late watcher").system(move |commands: Commands<'_>| {
            commands.despawn(doomed);
            commands
                .entity(doomed)
                .observe::<Damage, _>(|_: On<Damage>, log: &mut Log| log.0.push("ran".into()));
            commands.spawn((Tag(9),)); // lands regardless
        }),
    );
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("expected the observe refused");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    let message = failures[0].to_string();
    assert!(
        message.contains("observe") && message.contains(&doomed.to_string()),
        "{message}"
    );
    assert!(failures[0].refused_because().is_some(), "{message}");
    assert_eq!(world.query::<&Tag>().iter().count(), 1);
    // Nothing was registered: a trigger reaches no one, and the world has
    // no observer of `Damage` left waiting.
    world.trigger(Damage(1)).unwrap();
    assert!(take_log(&mut world).is_empty());
}

#[test]
fn an_observer_the_gate_refuses_from_commands_is_reported_by_its_error() {
    let mut world = World::new();
    world.insert(Log::default());
    let e = world.spawn((Hp(1),));
    world.add_system(
        NodeBuilder::new("bad watcher").system(move |commands: Commands<'_>| {
            commands
                .entity(e)
                .observe::<Damage, _>(|_: On<Damage>, _: &mut Log, _: &Log| {});
            commands.entity(e).insert((Tag(1),));
        }),
    );
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("expected the observe refused");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    let message = failures[0].to_string();
    assert!(
        message.contains("SL0009") && message.contains("observe"),
        "{message}"
    );
    assert!(world.entity(e).unwrap().get::<Tag>().is_some());
    world.trigger_targets(Damage(1), e).unwrap();
}
