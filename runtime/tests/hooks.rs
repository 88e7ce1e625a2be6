//! Component hooks (`on_add`, `on_insert`, `on_replace`, `on_remove`):
//! their order around observers, one per component and event, what they
//! may do in the middle of a change (read and write values, record
//! commands that land right after), and a hook that panics, on every
//! executor and thread count.

#[path = "support/executors.rs"]
mod support;

use sluice::prelude::*;
use sluice::{Add, BoundaryStep, IterationError, Lifecycle, ObserveError, On, Remove, Replace};
use support::{PLANNED, executors, quiet_planned_panics, world_on};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Armor(u32);
#[derive(Debug)]
struct Doomed;
#[derive(Debug)]
struct Fragile;
#[derive(Debug, Clone, Copy)]
struct Tag(u32);

#[derive(Debug, Default)]
struct Log(Vec<String>);

fn log(world: &mut sluice::HookWorld<'_>, line: String) {
    world.get_mut::<Log>().expect("a log").0.push(line);
}

/// A world with a log, every hook of `Hp` and an observer of each of its
/// four events, all logging.
fn logging_world(mut world: World) -> World {
    world.insert(Log::default());
    world
        .on_add::<Hp>(|cx, w| log(w, format!("hook add {:?}", cx.entity)))
        .unwrap();
    world
        .on_insert::<Hp>(|cx, w| {
            let hp = w.entity(cx.entity).unwrap().get::<Hp>().unwrap().0;
            log(w, format!("hook insert {hp}"));
        })
        .unwrap();
    world
        .on_replace::<Hp>(|cx, w| {
            let hp = w.entity(cx.entity).unwrap().get::<Hp>().unwrap().0;
            log(w, format!("hook replace {hp}"));
        })
        .unwrap();
    world
        .on_remove::<Hp>(|cx, w| {
            let hp = w.entity(cx.entity).unwrap().get::<Hp>().unwrap().0;
            log(w, format!("hook remove {hp}"));
        })
        .unwrap();
    world
        .add_observer::<Add<Hp>, _>(|_: On<Add<Hp>>, log: &mut Log| {
            log.0.push("observer add".into())
        })
        .unwrap();
    world
        .add_observer::<sluice::Insert<Hp>, _>(
            |on: On<sluice::Insert<Hp>>, hp: Query<&Hp>, log: &mut Log| {
                let value = hp.get(on.target().unwrap()).unwrap().0;
                log.0.push(format!("observer insert {value}"));
            },
        )
        .unwrap();
    world
        .add_observer::<Replace<Hp>, _>(|_: On<Replace<Hp>>, log: &mut Log| {
            log.0.push("observer replace".into())
        })
        .unwrap();
    world
        .add_observer::<Remove<Hp>, _>(|_: On<Remove<Hp>>, log: &mut Log| {
            log.0.push("observer remove".into())
        })
        .unwrap();
    world
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

#[test]
fn hooks_run_before_observers_on_add_and_insert_after_them_on_replace_and_remove() {
    let mut world = logging_world(World::new());
    let e = world.spawn((Hp(1),));
    assert_eq!(
        take_log(&mut world),
        [
            format!("hook add {e:?}"),
            "observer add".into(),
            "hook insert 1".into(),
            "observer insert 1".into(),
        ]
    );
    world.entity_mut(e).unwrap().insert((Hp(2),)).unwrap();
    // The old value is readable before, the new one after.
    assert_eq!(
        take_log(&mut world),
        [
            "observer replace",
            "hook replace 1",
            "hook insert 2",
            "observer insert 2"
        ]
    );
    let removed = world.entity_mut(e).unwrap().remove::<(Hp,)>().unwrap();
    assert_eq!(removed.0, Hp(2));
    assert_eq!(
        take_log(&mut world),
        [
            "observer replace",
            "hook replace 2",
            "observer remove",
            "hook remove 2"
        ]
    );
    world.entity_mut(e).unwrap().insert((Hp(3),)).unwrap();
    take_log(&mut world);
    world.despawn(e).unwrap();
    assert_eq!(
        take_log(&mut world),
        [
            "observer replace",
            "hook replace 3",
            "observer remove",
            "hook remove 3"
        ]
    );
    assert!(world.take_observer_failures().is_empty());
}

#[test]
fn a_second_hook_for_one_event_is_refused_by_name_and_the_first_stays() {
    let mut world = World::new();
    world.insert(Log::default());
    world.on_add::<Hp>(|_, w| log(w, "first".into())).unwrap();
    let refused = world.on_add::<Hp>(|_, w| log(w, "second".into()));
    match refused {
        Err(ObserveError::HookAlreadySet {
            component, event, ..
        }) => {
            assert!(component.ends_with("Hp"));
            assert_eq!(event, Lifecycle::Add);
        }
        other => panic!("expected HookAlreadySet, got {other:?}"),
    }
    let message = world.on_add::<Hp>(|_, _| {}).unwrap_err().to_string();
    assert!(
        message.contains("Hp") && message.contains("on_add"),
        "{message}"
    );
    // Another event of the same component is a hook of its own.
    world
        .on_remove::<Hp>(|_, w| log(w, "remove".into()))
        .unwrap();
    let e = world.spawn((Hp(1),));
    world.despawn(e).unwrap();
    assert_eq!(take_log(&mut world), ["first", "remove"]);
}

#[test]
fn the_raw_store_fires_nothing_and_no_hook_costs_nothing() {
    let mut world = logging_world(World::new());
    let e = world.entities_mut().spawn((Hp(1),));
    world.entities_mut().despawn(e).unwrap();
    assert!(take_log(&mut world).is_empty());
    // A world without hooks spawns and changes as before.
    let mut plain = World::new();
    let e = plain.spawn((Hp(1),));
    plain.entity_mut(e).unwrap().insert((Armor(2),)).unwrap();
    assert_eq!(plain.entity(e).unwrap().get::<Armor>(), Some(&Armor(2)));
}

#[test]
fn insert_if_new_fires_nothing_for_what_it_keeps() {
    let mut world = logging_world(World::new());
    let e = world.spawn((Hp(1),));
    take_log(&mut world);
    world
        .entity_mut(e)
        .unwrap()
        .insert_if_new((Hp(9), Armor(1)))
        .unwrap();
    assert!(take_log(&mut world).is_empty());
    assert_eq!(world.entity(e).unwrap().get::<Hp>(), Some(&Hp(1)));
}

#[test]
fn required_components_fire_their_add_hooks() {
    let mut world = World::new();
    world.insert(Log::default());
    world.register_required::<Hp, Armor>().unwrap();
    world
        .on_add::<Armor>(|_, w| log(w, "armor added".into()))
        .unwrap();
    world.spawn((Hp(1),));
    assert_eq!(take_log(&mut world), ["armor added"]);
}

#[test]
fn a_hook_writes_values_in_place_and_records_commands_that_land_right_after() {
    let mut world = World::new();
    world.insert(Log::default());
    // Every new Hp is capped at 10, in place, and gets Armor by command.
    world
        .on_insert::<Hp>(|cx, w| {
            let hp = w.component_mut::<Hp>(cx.entity).unwrap();
            hp.0 = hp.0.min(10);
            w.commands().entity(cx.entity).insert((Armor(1),));
        })
        .unwrap();
    world
        .on_add::<Armor>(|_, w| log(w, "armor".into()))
        .unwrap();
    let e = world.spawn((Hp(50),));
    assert_eq!(world.entity(e).unwrap().get::<Hp>(), Some(&Hp(10)));
    assert_eq!(world.entity(e).unwrap().get::<Armor>(), Some(&Armor(1)));
    assert_eq!(take_log(&mut world), ["armor"]);
}

#[test]
fn despawning_inside_a_hook_lands_after_the_change_and_fires_the_remove_hooks() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .on_add::<Doomed>(|cx, w| {
            log(w, "doomed added".into());
            w.commands().despawn(cx.entity);
        })
        .unwrap();
    world
        .on_remove::<Doomed>(|_, w| log(w, "doomed removed".into()))
        .unwrap();
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            commands.spawn((Doomed, Tag(1)));
            commands.spawn((Tag(2),));
        }),
    );
    world.run_iteration().unwrap();
    assert_eq!(take_log(&mut world), ["doomed added", "doomed removed"]);
    let tags: Vec<u32> = world.query::<&Tag>().iter().map(|t| t.0).collect();
    assert_eq!(tags, [2]);
}

#[test]
fn a_panicking_hook_is_reported_by_name_and_the_rest_of_the_boundary_lands() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world
            .on_add::<Fragile>(|_, w| {
                w.commands().spawn((Tag(99),)); // dropped with the panic
                panic!("{PLANNED}: fragile hook");
            })
            .unwrap();
        world
            .on_add::<Tag>(|cx, w| {
                let tag = w.entity(cx.entity).unwrap().get::<Tag>().unwrap().0;
                log(w, format!("tag {tag}"));
            })
            .unwrap();
        world.add_system(
            NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
                commands.spawn((Fragile, Tag(1)));
                commands.spawn((Tag(2),));
            }),
        );
        let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
            panic!("expected a boundary failure");
        };
        assert_eq!(failures.len(), 1, "{failures:?}");
        match failures[0].step() {
            BoundaryStep::Hook {
                hook,
                component,
                event,
                ..
            } => {
                assert!(hook.contains("hooks"), "{hook}");
                assert!(component.ends_with("Fragile"));
                assert_eq!(*event, Lifecycle::Add);
            }
            other => panic!("expected a hook step, got {other:?}"),
        }
        assert!(failures[0].message().unwrap().contains("fragile hook"));
        assert!(failures[0].to_string().contains("on_add"));
        // Both spawns landed; the panicking hook's command did not.
        let mut tags: Vec<u32> = world.query::<&Tag>().iter().map(|t| t.0).collect();
        tags.sort_unstable();
        assert_eq!(tags, [1, 2], "{executor:?} on {threads}");
        assert_eq!(take_log(&mut world), ["tag 1", "tag 2"]);
        // The next iteration runs normally (its spawner's Fragile panics
        // the same way again).
        let Err(IterationError::Boundary(again)) = world.run_iteration() else {
            panic!("expected the same boundary failure");
        };
        assert_eq!(again.len(), 1);
        assert_eq!(world.query::<&Tag>().iter().count(), 4);
    }
}

#[test]
fn a_hook_panicking_on_a_direct_change_is_kept_for_the_caller() {
    quiet_planned_panics();
    let mut world = World::new();
    world
        .on_remove::<Fragile>(|_, _| panic!("{PLANNED}: on remove"))
        .unwrap();
    let e = world.spawn((Fragile,));
    world.despawn(e).unwrap();
    assert!(!world.entities().contains(e));
    let failures = world.take_observer_failures();
    assert_eq!(failures.len(), 1);
    assert!(matches!(
        failures[0].step(),
        BoundaryStep::Hook {
            event: Lifecycle::Remove,
            ..
        }
    ));
}

#[test]
fn hooks_run_in_command_order_on_every_executor() {
    fn run(executor: sluice::ExecutorKind, threads: usize) -> Vec<String> {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        world
            .on_add::<Tag>(|cx, w| {
                let tag = w.entity(cx.entity).unwrap().get::<Tag>().unwrap().0;
                log(w, format!("add {tag}"));
                if tag % 3 == 0 && (1..1000).contains(&tag) {
                    // Lands right after this spawn, before the next command.
                    w.commands().spawn((Tag(tag * 1000),));
                }
            })
            .unwrap();
        world
            .on_remove::<Tag>(|cx, w| {
                let tag = w.entity(cx.entity).unwrap().get::<Tag>().unwrap().0;
                log(w, format!("remove {tag}"));
            })
            .unwrap();
        for node in 0..6u32 {
            world.add_system(NodeBuilder::new(format!("spawner {node}")).system(
                move |commands: Commands<'_>| {
                    for i in 0..5 {
                        commands.spawn((Tag(node * 10 + i),));
                    }
                },
            ));
        }
        world.add_system(NodeBuilder::new("reaper").system(
            |tags: Query<(Entity, &Tag)>, commands: Commands<'_>| {
                for (entity, tag) in tags.iter() {
                    if tag.0 % 2 == 1 {
                        commands.despawn(entity);
                    }
                }
            },
        ));
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        take_log(&mut world)
    }
    let reference = run(sluice::ExecutorKind::Serial, 1);
    assert!(reference.contains(&"add 3000".to_owned()));
    let at = |line: &str| reference.iter().position(|l| l == line).unwrap();
    // A hook's spawn lands before the next command of the queue.
    assert_eq!(at("add 3000"), at("add 3") + 1);
    assert_eq!(at("add 4"), at("add 3000") + 1);
    for (executor, threads) in executors() {
        assert_eq!(
            run(executor, threads),
            reference,
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn a_hook_despawning_the_parent_while_its_subtree_goes_takes_the_subtree_and_nothing_else() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        // Each `Doomed` leaving despawns its parent's subtree (which is
        // going already) from inside the hook.
        world
            .on_remove::<Doomed>(|cx, w| {
                let parent = w
                    .entity(cx.entity)
                    .and_then(|e| e.get::<ChildOf>().map(|link| link.parent()));
                log(w, format!("remove {}", parent.is_some()));
                if let Some(parent) = parent {
                    w.commands().entity(parent).despawn_recursive();
                }
            })
            .unwrap();
        let root = world.spawn(());
        let a = world.spawn_child(root, (Doomed,)).unwrap();
        world.spawn_child(a, (Doomed,)).unwrap();
        world.spawn_child(root, (Tag(1),)).unwrap();
        let keep = world.spawn((Tag(2),));
        // Directly: every entity of the subtree goes. The deepest goes
        // first and its hook's command takes the rest (a's hook takes the
        // root): those are not counted as this call's.
        assert_eq!(world.despawn_recursive(root), Ok(1));
        assert_eq!(world.entities().len(), 1, "{executor:?} on {threads}");
        assert!(world.entity(keep).is_some());
        assert!(world.take_observer_failures().is_empty());
        // Through a command in a frame: the same, and no failure.
        let root = world.spawn(());
        let a = world.spawn_child(root, (Doomed,)).unwrap();
        world.spawn_child(a, (Doomed,)).unwrap();
        world.add_system(
            NodeBuilder::new("despawner").system(move |commands: Commands<'_>| {
                commands.entity(root).despawn_recursive();
            }),
        );
        world.run_iteration().unwrap();
        assert_eq!(world.entities().len(), 1, "{executor:?} on {threads}");
        assert!(world.entity(keep).is_some());
    }
}

#[test]
fn hooks_panicking_in_a_subtree_despawn_are_each_reported_and_the_subtree_goes() {
    quiet_planned_panics();
    let mut world = World::new();
    world
        .on_remove::<Fragile>(|_, _| panic!("{PLANNED}: remove hook"))
        .unwrap();
    let root = world.spawn(());
    let a = world.spawn_child(root, (Fragile,)).unwrap();
    world.spawn_child(a, (Fragile,)).unwrap();
    world.spawn_child(root, (Fragile,)).unwrap();
    let keep = world.spawn((Tag(1),));
    assert_eq!(world.despawn_recursive(root), Ok(4));
    assert_eq!(world.entities().len(), 1);
    assert!(world.entity(keep).is_some());
    let failures = world.take_observer_failures();
    assert_eq!(failures.len(), 3);
    for failure in &failures {
        let BoundaryStep::Hook {
            component, event, ..
        } = failure.step()
        else {
            panic!("{failure}");
        };
        assert!(component.ends_with("Fragile"));
        assert_eq!(*event, Lifecycle::Remove);
        assert!(failure.message().unwrap().contains("remove hook"));
    }
}
