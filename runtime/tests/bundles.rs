//! `#[derive(Bundle)]` (issue 36): named, tuple and unit structs, nested
//! bundles, duplicates refused by name, and a panicking `Drop` in a field.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::{Bundle, Entity, EntityError, World};

#[path = "support/executors.rs"]
mod executors;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Name(&'static str);

#[derive(Bundle, Debug, PartialEq)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle, Debug, PartialEq)]
struct Unit {
    hp: Hp,
    #[bundle]
    body: Body,
    name: Name,
}

#[derive(Bundle, Debug, PartialEq)]
struct Pair(Hp, #[bundle] (Pos, Vel));

#[derive(Bundle, Debug, PartialEq)]
struct Nothing;

#[derive(Bundle)]
struct Generic<T: Send + Sync + 'static> {
    value: T,
    hp: Hp,
}

fn unit() -> Unit {
    Unit {
        hp: Hp(3),
        body: Body {
            pos: Pos(1.0),
            vel: Vel(2.0),
        },
        name: Name("scout"),
    }
}

fn components_of(world: &World, entity: Entity) -> (Option<Pos>, Option<Vel>, Option<Hp>) {
    let view = world.entity(entity).unwrap();
    (
        view.get::<Pos>().copied(),
        view.get::<Vel>().copied(),
        view.get::<Hp>().copied(),
    )
}

#[test]
fn a_nested_bundle_spawns_every_component_and_comes_back_whole() {
    let mut world = World::new();
    let e = world.spawn(unit());
    assert_eq!(
        components_of(&world, e),
        (Some(Pos(1.0)), Some(Vel(2.0)), Some(Hp(3)))
    );
    assert_eq!(world.entity(e).unwrap().get::<Name>(), Some(&Name("scout")));
    let archetype_len = world
        .entities()
        .archetypes()
        .find(|a| a.entities().contains(&e))
        .unwrap()
        .components()
        .len();
    assert_eq!(archetype_len, 4, "the nested bundle is flattened");
    let taken = world.entity_mut(e).unwrap().remove::<Unit>().unwrap();
    assert_eq!(taken, unit());
    assert_eq!(components_of(&world, e), (None, None, None));
}

#[test]
fn tuple_unit_and_generic_structs_derive() {
    let mut world = World::new();
    let e = world.spawn(Pair(Hp(7), (Pos(0.5), Vel(-1.0))));
    assert_eq!(
        components_of(&world, e),
        (Some(Pos(0.5)), Some(Vel(-1.0)), Some(Hp(7)))
    );
    world.entity_mut(e).unwrap().insert(Nothing).unwrap();
    assert_eq!(
        world.entity_mut(e).unwrap().remove::<Nothing>(),
        Ok(Nothing)
    );
    let g = world.spawn(Generic {
        value: 9u64,
        hp: Hp(1),
    });
    assert_eq!(world.entity(g).unwrap().get::<u64>(), Some(&9));
    assert_eq!(
        world.entity_mut(e).unwrap().remove::<Pair>(),
        Ok(Pair(Hp(7), (Pos(0.5), Vel(-1.0))))
    );
}

#[test]
fn inserting_a_derived_bundle_overwrites_what_is_there() {
    let mut world = World::new();
    let e = world.spawn((Pos(9.0), Hp(1)));
    world
        .entity_mut(e)
        .unwrap()
        .insert(Body {
            pos: Pos(1.0),
            vel: Vel(1.0),
        })
        .unwrap();
    assert_eq!(
        components_of(&world, e),
        (Some(Pos(1.0)), Some(Vel(1.0)), Some(Hp(1)))
    );
}

/// Names `Pos` twice: once itself, once inside its nested bundle.
#[derive(Bundle)]
struct NestedTwice {
    pos: Pos,
    #[bundle]
    body: Body,
}

/// Names `Pos` twice through an alias the macro cannot see through.
type Position = Pos;
#[derive(Bundle)]
struct AliasTwice {
    pos: Pos,
    again: Position,
}

#[test]
fn a_type_named_twice_is_refused_by_name_and_changes_nothing() {
    let mut world = World::new();
    let e = world.spawn((Hp(1),));
    let twice = NestedTwice {
        pos: Pos(0.0),
        body: Body {
            pos: Pos(1.0),
            vel: Vel(1.0),
        },
    };
    let refused = EntityError::DuplicateComponent {
        component: std::any::type_name::<Pos>(),
    };
    assert_eq!(world.entities_mut().insert(e, twice), Err(refused));
    assert_eq!(
        world.entities_mut().try_spawn(AliasTwice {
            pos: Pos(0.0),
            again: Pos(1.0)
        }),
        Err(refused)
    );
    assert_eq!(
        world.entity_mut(e).unwrap().remove::<NestedTwice>().err(),
        Some(refused)
    );
    assert_eq!(components_of(&world, e), (None, None, Some(Hp(1))));
    assert_eq!(world.entities().len(), 1);
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

/// A component whose `Drop` panics (after counting itself).
struct Grenade(u32);

impl Drop for Grenade {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
        if self.0 == 0 {
            panic!("planned failure: grenade {} went off", self.0);
        }
    }
}

#[derive(Bundle)]
struct Armed {
    hp: Hp,
    #[bundle]
    load: (Grenade, Vel),
}

#[test]
fn a_panicking_drop_in_a_bundle_field_loses_nothing_already_done() {
    executors::quiet_planned_panics();
    let mut world = World::new();
    let e = world.spawn(Armed {
        hp: Hp(2),
        load: (Grenade(0), Vel(1.0)),
    });
    // Overwriting the grenade drops the old one, which panics: the insert
    // is complete all the same and the store consistent.
    let before = DROPS.load(Ordering::SeqCst);
    let insert = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.entities_mut().insert(
            e,
            Armed {
                hp: Hp(5),
                load: (Grenade(1), Vel(3.0)),
            },
        )
    }));
    assert!(insert.is_err(), "the old grenade's drop panicked");
    assert_eq!(DROPS.load(Ordering::SeqCst), before + 1);
    assert_eq!(
        components_of(&world, e),
        (None, Some(Vel(3.0)), Some(Hp(5)))
    );
    assert_eq!(world.entity(e).unwrap().get::<Grenade>().unwrap().0, 1);
    // A refused bundle (named twice) is dropped whole, every field once.
    #[derive(Bundle)]
    struct Twice {
        hp: Hp,
        #[bundle]
        again: (Hp, Grenade),
    }
    let dropped = DROPS.load(Ordering::SeqCst);
    let refused = world.entities_mut().insert(
        e,
        Twice {
            hp: Hp(0),
            again: (Hp(0), Grenade(2)),
        },
    );
    assert!(matches!(
        refused,
        Err(EntityError::DuplicateComponent { .. })
    ));
    assert_eq!(DROPS.load(Ordering::SeqCst), dropped + 1);
    world.despawn(e).unwrap();
    assert_eq!(DROPS.load(Ordering::SeqCst), dropped + 2);
}

#[test]
fn commands_spawn_insert_and_partly_remove_derived_bundles_on_every_executor() {
    for (kind, threads) in executors::executors() {
        let mut world = executors::world_on(kind, threads);
        let e = world.spawn((Hp(1),));
        world.add_system(sluice::NodeBuilder::new("bundles").system(
            move |commands: sluice::Commands| {
                commands.spawn(unit());
                commands
                    .entity(e)
                    .insert(Body {
                        pos: Pos(4.0),
                        vel: Vel(4.0),
                    })
                    // `e` has no `Name`: the rest of `Unit` is removed.
                    .remove::<Unit>();
            },
        ));
        world.run_iteration().unwrap();
        let label = format!("{kind:?} on {threads}");
        assert_eq!(components_of(&world, e), (None, None, None), "{label}");
        assert!(world.entity(e).is_some(), "{label}");
        let spawned: Vec<Entity> = world
            .query_filtered::<Entity, sluice::With<Name>>()
            .iter()
            .collect();
        assert_eq!(spawned.len(), 1, "{label}");
        assert_eq!(
            components_of(&world, spawned[0]),
            (Some(Pos(1.0)), Some(Vel(2.0)), Some(Hp(3))),
            "{label}"
        );
    }
}
