//! Issue 36, commands and entities: `insert_if_new`, removing a bundle the
//! entity only partly has, `spawn_empty`, and required components. Command
//! paths are tried on every executor kind and on 1, 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics, world_on};

use sluice::prelude::*;
use sluice::{CommandEntity, RequiredError};

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Armor(u32);
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Player;

fn get<C: Component + Copy>(world: &World, entity: Entity) -> Option<C> {
    world.entity(entity).unwrap().get::<C>().copied()
}

#[test]
fn insert_if_new_keeps_what_is_there_and_adds_what_is_not() {
    let mut world = World::new();
    let e = world.spawn((Pos(1.0),));
    let changed_before = world.entity(e).unwrap().ticks::<Pos>().unwrap().changed;
    world
        .entity_mut(e)
        .unwrap()
        .insert_if_new((Pos(9.0), Vel(2.0)))
        .unwrap();
    assert_eq!(get::<Pos>(&world, e), Some(Pos(1.0)), "kept");
    assert_eq!(get::<Vel>(&world, e), Some(Vel(2.0)), "added");
    assert_eq!(
        world.entity(e).unwrap().ticks::<Pos>().unwrap().changed,
        changed_before,
        "a kept component is not marked changed"
    );
    // Everything there already: nothing moves, nothing changes.
    world
        .entity_mut(e)
        .unwrap()
        .insert_if_new((Vel(5.0), Pos(5.0)))
        .unwrap();
    assert_eq!(
        (get::<Pos>(&world, e), get::<Vel>(&world, e)),
        (Some(Pos(1.0)), Some(Vel(2.0)))
    );
    world.freeze(e).unwrap();
    assert_eq!(
        world.entities_mut().insert_if_new(e, (Hp(1),)),
        Err(EntityError::Frozen { entity: e })
    );
}

#[test]
fn remove_present_removes_what_is_there_and_names_what_was_absent() {
    let mut world = World::new();
    let e = world.spawn((Pos(1.0), Hp(3)));
    let absent = world
        .entity_mut(e)
        .unwrap()
        .remove_present::<(Pos, Vel, Hp)>()
        .unwrap();
    assert_eq!(absent, [std::any::type_name::<Vel>()]);
    assert_eq!((get::<Pos>(&world, e), get::<Hp>(&world, e)), (None, None));
    // Nothing there: nothing moves, everything named.
    let absent = world
        .entity_mut(e)
        .unwrap()
        .remove_present::<(Pos, Vel)>()
        .unwrap();
    assert_eq!(absent.len(), 2);
    // The strict removal still refuses a partial bundle, naming the part
    // that is missing, even after `remove_present` cached its move.
    let f = world.spawn((Pos(2.0), Hp(1)));
    assert_eq!(
        world.entity_mut(f).unwrap().remove::<(Pos, Vel, Hp)>(),
        Err(EntityError::MissingComponent {
            entity: f,
            component: std::any::type_name::<Vel>()
        })
    );
    assert_eq!(get::<Pos>(&world, f), Some(Pos(2.0)));
    assert_eq!(world.entity_mut(f).unwrap().remove::<()>(), Ok(()));
    world.entity_mut(f).unwrap().remove_present::<()>().unwrap();
    assert_eq!(world.entity_mut(f).unwrap().remove::<()>(), Ok(()));
}

#[test]
fn commands_insert_if_new_remove_and_spawn_empty_on_every_executor() {
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        let a = world.spawn((Pos(1.0), Hp(3)));
        world.add_system(
            NodeBuilder::new("change").system(move |commands: Commands| {
                commands
                    .entity(a)
                    .insert_if_new((Pos(7.0), Vel(1.0)))
                    .remove::<(Hp, Armor)>();
                let empty = commands.spawn_empty();
                assert!(matches!(empty.id(), CommandEntity::Spawned(_)));
                empty.insert((Armor(4),));
                // The reserved entity is usable at once by later commands.
                commands
                    .spawn_empty()
                    .insert_with(empty.id(), |armored| (Target(armored),));
            }),
        );
        world.run_iteration().unwrap();
        let label = format!("{kind:?} on {threads}");
        assert_eq!(get::<Pos>(&world, a), Some(Pos(1.0)), "{label}");
        assert_eq!(get::<Vel>(&world, a), Some(Vel(1.0)), "{label}");
        assert_eq!(
            get::<Hp>(&world, a),
            None,
            "{label}: removed what was there"
        );
        let armored: Vec<Entity> = world
            .query::<(Entity, &Armor)>()
            .iter()
            .map(|(e, _)| e)
            .collect();
        let linked: Vec<Entity> = world.query::<&Target>().iter().map(|t| t.0).collect();
        assert_eq!(linked, armored, "{label}");
        assert_eq!(world.entities().len(), 3, "{label}");
    }
}

/// A link from one entity to another.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Target(Entity);

#[test]
fn world_spawn_empty_builds_up() {
    let mut world = World::new();
    let mut view = world.spawn_empty();
    view.insert((Hp(2),)).unwrap();
    let e = view.id();
    assert_eq!(get::<Hp>(&world, e), Some(Hp(2)));
}

#[test]
fn required_components_are_inserted_unless_given_and_transitively() {
    let mut world = World::new();
    world.register_required::<Player, Hp>().unwrap();
    world
        .register_required_with::<Hp, Armor>(|| Armor(10))
        .unwrap();
    let plain = world.spawn((Player,));
    assert_eq!(get::<Hp>(&world, plain), Some(Hp(0)));
    assert_eq!(get::<Armor>(&world, plain), Some(Armor(10)), "transitive");
    let given = world.spawn((Player, Hp(50)));
    assert_eq!(get::<Hp>(&world, given), Some(Hp(50)), "given, kept");
    assert_eq!(get::<Armor>(&world, given), Some(Armor(10)));
    let had = world.spawn((Armor(1),));
    world.entity_mut(had).unwrap().insert((Player,)).unwrap();
    assert_eq!(get::<Armor>(&world, had), Some(Armor(1)), "had, kept");
    assert_eq!(get::<Hp>(&world, had), Some(Hp(0)));
    let batch = world.spawn_batch([(Player,), (Player,)]);
    assert!(
        batch
            .iter()
            .all(|&e| get::<Armor>(&world, e) == Some(Armor(10)))
    );
    // A derived bundle's nested fields require too.
    #[derive(Bundle)]
    struct Spawnable {
        pos: Pos,
        #[bundle]
        who: (Player,),
    }
    let nested = world.spawn(Spawnable {
        pos: Pos(0.0),
        who: (Player,),
    });
    assert_eq!(get::<Armor>(&world, nested), Some(Armor(10)));
}

#[test]
fn a_required_cycle_is_refused_by_name_and_changes_nothing() {
    let mut world = World::new();
    world.register_required::<Player, Hp>().unwrap();
    world.register_required::<Hp, Armor>().unwrap();
    let name = std::any::type_name::<Player>;
    let cycle = world.register_required::<Armor, Player>().unwrap_err();
    let (player, hp, armor) = (
        name(),
        std::any::type_name::<Hp>(),
        std::any::type_name::<Armor>(),
    );
    assert_eq!(
        cycle,
        RequiredError::Cycle {
            path: vec![armor, player, hp, armor]
        }
    );
    assert!(cycle.to_string().contains("requires"), "{cycle}");
    assert_eq!(
        world.register_required::<Vel, Vel>(),
        Err(RequiredError::Cycle {
            path: vec![std::any::type_name::<Vel>(); 2]
        })
    );
    assert_eq!(
        world.register_required::<Player, Hp>(),
        Err(RequiredError::AlreadyRequired {
            component: player,
            required: hp
        })
    );
    // The refused ones changed nothing.
    let e = world.spawn((Armor(3),));
    assert_eq!(get::<Player>(&world, e), None);
    let v = world.spawn((Vel(1.0),));
    assert_eq!(get::<Vel>(&world, v), Some(Vel(1.0)));
}

#[test]
fn a_panicking_required_constructor_leaves_the_insert_done() {
    quiet_planned_panics();
    let mut world = World::new();
    world
        .register_required_with::<Player, Hp>(|| panic!("{PLANNED}: no hp today"))
        .unwrap();
    let e = world.spawn((Pos(1.0),));
    let insert = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.entities_mut().insert(e, (Player,))
    }));
    assert!(insert.is_err());
    assert_eq!(get::<Player>(&world, e), Some(Player));
    assert_eq!(get::<Hp>(&world, e), None);
    assert_eq!(world.entities().len(), 1);
    // Through a command: the boundary reports it, the commands after land.
    world.add_system(NodeBuilder::new("arm").system(move |commands: Commands| {
        commands.spawn((Player,));
        commands.entity(e).insert((Vel(2.0),));
    }));
    let result = world.run_iteration();
    assert!(result.is_err(), "the panic is reported");
    assert_eq!(
        get::<Vel>(&world, e),
        Some(Vel(2.0)),
        "the later command landed"
    );
}
