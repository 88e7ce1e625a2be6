//! Issue 37, where hierarchies meet hooks and observers: a despawned
//! parent's subtree goes through the observers entity by entity, children
//! first; a hook that despawns a subtree; an event bubbling up `ChildOf`.

use sluice::prelude::*;
use sluice::{ChildOf, Entities, Event, On, Remove};

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
