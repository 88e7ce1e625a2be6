//! Issue 37, where hierarchies meet hooks and observers: a despawned
//! parent's subtree goes through the observers entity by entity, children
//! first; a hook that despawns a subtree; an event bubbling up `ChildOf`;
//! reparenting firing `ChildOf`'s lifecycle events in the documented
//! order, the same on every executor.

#[path = "support/executors.rs"]
mod support;

use sluice::prelude::*;
use sluice::{
    Add, ChildOf, Children, Entities, Event, HookContext, HookWorld, Insert, On, Remove, Replace,
};
use support::{executors, world_on};

#[derive(Debug)]
struct Name(&'static str);

#[derive(Debug, Default)]
struct Log(Vec<String>);

fn log(world: &World) -> Vec<String> {
    world.get::<Log>().unwrap().0.clone()
}

/// A root with two children, the first with a child of its own.
fn tree(world: &mut World) -> Entity {
    let root = world.spawn((Name("root"),));
    let a = world.spawn_child(root, (Name("a"),)).unwrap();
    world.spawn_child(a, (Name("a1"),)).unwrap();
    world.spawn_child(root, (Name("b"),)).unwrap();
    root
}

#[test]
fn a_despawned_subtree_goes_through_the_observers_children_first() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Remove<Name>, _>(|on: On<Remove<Name>>, log: &mut Log| {
            log.0.push(format!("{:?}", on.target().is_some()));
        })
        .unwrap();
    world
        .on_remove::<Name>(|cx, w| {
            let name = w
                .entity(cx.entity)
                .and_then(|e| e.get::<Name>().map(|n| n.0))
                .unwrap_or("?");
            w.get_mut::<Log>().unwrap().0.push(name.to_owned());
        })
        .unwrap();
    let root = tree(&mut world);
    world.despawn(root).unwrap();
    let seen: Vec<String> = log(&world).into_iter().filter(|s| s != "true").collect();
    // The deepest level first, each level in reverse listing order.
    assert_eq!(seen, ["a1", "b", "a", "root"]);
    assert_eq!(world.entities().len(), 0);
}

#[test]
fn despawn_recursive_and_the_command_fire_the_same_observers() {
    for by_command in [false, true] {
        let mut world = World::new();
        world.insert(Log::default());
        world
            .add_observer::<Remove<ChildOf>, _>(|_: On<Remove<ChildOf>>, log: &mut Log| {
                log.0.push("unparented".to_owned());
            })
            .unwrap();
        let root = tree(&mut world);
        if by_command {
            world.add_system(NodeBuilder::new("cull").system(move |commands: Commands| {
                commands.entity(root).despawn_recursive();
            }));
            world.run_iteration().unwrap();
        } else {
            assert_eq!(world.despawn_recursive(root).unwrap(), 4);
        }
        assert_eq!(log(&world).len(), 3, "three entities had a parent");
        assert_eq!(world.entities().len(), 0);
    }
}

#[derive(Debug)]
struct Clicked;
impl Event for Clicked {
    fn next_target(entities: &Entities, target: Entity) -> Option<Entity> {
        sluice::traverse::<ChildOf>(entities, target)
    }
}

#[test]
fn an_entity_event_bubbles_up_child_of_to_the_root() {
    let mut world = World::new();
    world.insert(Log::default());
    let root = tree(&mut world);
    let a1 = world
        .descendants(root)
        .find(|&e| world.entities().get::<Name>(e).is_some_and(|n| n.0 == "a1"));
    let a1 = a1.expect("a1 is in the tree");
    world
        .add_observer::<Clicked, _>(|on: On<Clicked>, log: &mut Log| {
            log.0.push(format!("{:?}", on.target()));
        })
        .unwrap();
    world.trigger_targets(Clicked, a1).unwrap();
    let path = log(&world);
    assert_eq!(path.len(), 3, "a1, a, root: {path:?}");
    assert_eq!(path[2], format!("{:?}", Some(root)));
}

/// The name of the parent `ChildOf` names on `child` now, read by a hook.
fn parent_name_in_hook(world: &HookWorld<'_>, child: Entity) -> &'static str {
    let parent = world
        .entity(child)
        .and_then(|e| e.get::<ChildOf>().map(ChildOf::parent));
    parent
        .and_then(|p| world.entity(p))
        .and_then(|p| p.get::<Name>().map(|n| n.0))
        .unwrap_or("-")
}

/// Hooks and observers of all four of `ChildOf`'s events, each logging
/// the event, who ran it and the parent the child names at that moment.
fn watch_child_of(world: &mut World) {
    fn hook(what: &'static str) -> impl Fn(HookContext, &mut HookWorld<'_>) + Send + Sync {
        move |cx, w| {
            let line = format!("hook {what} {}", parent_name_in_hook(w, cx.entity));
            w.get_mut::<Log>().unwrap().0.push(line);
        }
    }
    world.on_add::<ChildOf>(hook("add")).unwrap();
    world.on_insert::<ChildOf>(hook("insert")).unwrap();
    world.on_replace::<ChildOf>(hook("replace")).unwrap();
    world.on_remove::<ChildOf>(hook("remove")).unwrap();
    fn parent_name(of: &Query<&ChildOf>, names: &Query<&Name>, child: Entity) -> &'static str {
        of.get(child)
            .ok()
            .and_then(|of| names.get(of.parent()).ok())
            .map_or("-", |n| n.0)
    }
    world
        .add_observer::<Add<ChildOf>, _>(
            |on: On<Add<ChildOf>>, of: Query<&ChildOf>, names: Query<&Name>, log: &mut Log| {
                let line = format!(
                    "observer add {}",
                    parent_name(&of, &names, on.target().unwrap())
                );
                log.0.push(line);
            },
        )
        .unwrap();
    world
        .add_observer::<Insert<ChildOf>, _>(
            |on: On<Insert<ChildOf>>,
             of: Query<&ChildOf>,
             names: Query<&Name>,
             children: Query<&Children>,
             log: &mut Log| {
                let child = on.target().unwrap();
                // The new parent lists it already.
                let parent = of.get(child).unwrap().parent();
                assert!(children.get(parent).unwrap().as_slice().contains(&child));
                let line = format!("observer insert {}", parent_name(&of, &names, child));
                log.0.push(line);
            },
        )
        .unwrap();
    world
        .add_observer::<Replace<ChildOf>, _>(
            |on: On<Replace<ChildOf>>, of: Query<&ChildOf>, names: Query<&Name>, log: &mut Log| {
                let line = format!(
                    "observer replace {}",
                    parent_name(&of, &names, on.target().unwrap())
                );
                log.0.push(line);
            },
        )
        .unwrap();
    world
        .add_observer::<Remove<ChildOf>, _>(
            |on: On<Remove<ChildOf>>, of: Query<&ChildOf>, names: Query<&Name>, log: &mut Log| {
                let line = format!(
                    "observer remove {}",
                    parent_name(&of, &names, on.target().unwrap())
                );
                log.0.push(line);
            },
        )
        .unwrap();
}

fn take(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

#[test]
fn reparenting_fires_child_of_events_in_the_documented_order() {
    let mut world = World::new();
    world.insert(Log::default());
    watch_child_of(&mut world);
    let p1 = world.spawn((Name("p1"),));
    let p2 = world.spawn((Name("p2"),));
    let c = world.spawn((Name("c"),));
    world.set_parent(c, p1).unwrap();
    // On the way in: the hook first, then the observers; Add before Insert.
    assert_eq!(
        take(&mut world),
        [
            "hook add p1",
            "observer add p1",
            "hook insert p1",
            "observer insert p1"
        ]
    );
    world.set_parent(c, p2).unwrap();
    // A move: Replace with the old parent still named, then Insert.
    assert_eq!(
        take(&mut world),
        [
            "observer replace p1",
            "hook replace p1",
            "hook insert p2",
            "observer insert p2"
        ]
    );
    assert_eq!(world.children(p2), [c]);
    assert!(world.children(p1).is_empty());
    world.add_child(p2, c).unwrap();
    assert!(
        take(&mut world).is_empty(),
        "the parent it has: nothing fires"
    );
    // A refused attach fires nothing.
    assert!(world.set_parent(p2, c).is_err());
    assert!(take(&mut world).is_empty());
    assert_eq!(world.remove_parent(c).unwrap(), Some(p2));
    // On the way out: the observers first, then the hook; Replace, Remove.
    assert_eq!(
        take(&mut world),
        [
            "observer replace p2",
            "hook replace p2",
            "observer remove p2",
            "hook remove p2"
        ]
    );
    assert_eq!(world.remove_parent(c).unwrap(), None);
    assert!(take(&mut world).is_empty(), "no parent: nothing fires");
    // A child spawned under a parent gains its first parent.
    let d = world.spawn_child(p1, (Name("d"),)).unwrap();
    assert_eq!(
        take(&mut world),
        [
            "hook add p1",
            "observer add p1",
            "hook insert p1",
            "observer insert p1"
        ]
    );
    // Despawning the parent: the child's `ChildOf` goes as any component.
    world.despawn(p1).unwrap();
    assert!(!world.entities().contains(d));
    assert_eq!(
        take(&mut world),
        [
            "observer replace p1",
            "hook replace p1",
            "observer remove p1",
            "hook remove p1"
        ]
    );
}

#[test]
fn an_observer_of_child_of_records_commands_that_land_after_the_move() {
    struct Moved(u32);
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_observer::<Insert<ChildOf>, _>(|on: On<Insert<ChildOf>>, commands: Commands<'_>| {
            commands.entity(on.target().unwrap()).insert((Moved(1),));
        })
        .unwrap();
    let p = world.spawn((Name("p"),));
    let c = world.spawn((Name("c"),));
    world.set_parent(c, p).unwrap();
    assert_eq!(
        world.entity(c).unwrap().get::<Moved>().map(|m| m.0),
        Some(1)
    );
}

/// Reparenting by commands from several systems: the same events, in the
/// same order, on every executor and thread count.
#[test]
fn reparenting_by_commands_fires_the_same_events_on_every_executor() {
    fn run(executor: sluice::ExecutorKind, threads: usize) -> Vec<String> {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        watch_child_of(&mut world);
        let parents: Vec<Entity> = ["p0", "p1", "p2"]
            .into_iter()
            .map(|name| world.spawn((Name(name),)))
            .collect();
        let kids: Vec<Entity> = (0..6).map(|_| world.spawn((Name("kid"),))).collect();
        for node in 0..3usize {
            let (parents, kids) = (parents.clone(), kids.clone());
            world.add_system(NodeBuilder::new(format!("mover {node}")).system(
                move |commands: Commands<'_>, mut round: Local<usize>| {
                    let r = *round;
                    *round += 1;
                    for (i, &kid) in kids.iter().enumerate().skip(node).step_by(3) {
                        match (r + i) % 4 {
                            0 | 1 => {
                                commands.entity(kid).set_parent(parents[(r + i + node) % 3]);
                            }
                            2 => {
                                commands.entity(parents[(r + node) % 3]).add_child(kid);
                            }
                            _ => {
                                commands.entity(kid).remove_parent();
                            }
                        }
                    }
                    commands.entity(parents[node]).with_children(|spawner| {
                        spawner.spawn((Name("new"),));
                    });
                },
            ));
        }
        for _ in 0..4 {
            world.run_iteration().unwrap();
        }
        take(&mut world)
    }
    let reference = run(sluice::ExecutorKind::Serial, 1);
    assert!(reference.iter().any(|l| l.starts_with("observer replace")));
    assert!(reference.iter().any(|l| l.starts_with("hook remove")));
    for (executor, threads) in executors() {
        assert_eq!(
            run(executor, threads),
            reference,
            "{executor:?} on {threads}"
        );
    }
}
