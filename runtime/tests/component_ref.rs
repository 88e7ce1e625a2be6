//! `ComponentRef<T>` and `Target<T>` (issue 10, reference 003): a unit
//! following its target reads the target's component through a reference
//! that caches the store and resolves the row on every access.

use sluice::{
    Commands, ComponentRef, Entity, EntityError, IterationError, NodeBuilder, Query, Target, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Heading(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lost(bool);

#[test]
fn building_one_refuses_what_could_move() {
    let mut world = World::new();
    let loose = world.spawn((Pos(0.0, 0.0),));
    assert_eq!(
        ComponentRef::<Pos>::new(&world, loose).err(),
        Some(EntityError::NotFrozen { entity: loose })
    );
    world.freeze(loose).unwrap();
    let reference = ComponentRef::<Pos>::new(&world, loose).unwrap();
    assert_eq!(reference.target(), loose);
    assert_eq!(reference.get(&world), Some(&Pos(0.0, 0.0)));
    assert_eq!(
        ComponentRef::<Vel>::new(&world, loose).err(),
        Some(EntityError::MissingComponent {
            entity: loose,
            component: std::any::type_name::<Vel>(),
        })
    );
    world.despawn(loose).unwrap();
    assert_eq!(reference.get(&world), None);
    assert_eq!(
        ComponentRef::<Pos>::new(&world, loose).err(),
        Some(EntityError::NoSuchEntity { entity: loose })
    );
    let message = EntityError::NotFrozen { entity: loose }.to_string();
    assert!(message.contains("not frozen"), "{message}");
}

/// Rows move under a reference (other entities despawned, the slot reused):
/// it still reads its own target, and a despawned target reads `None`, never
/// the entity that took its slot.
#[test]
fn the_row_is_resolved_on_every_access() {
    let mut world = World::new();
    let others: Vec<Entity> = (0..5).map(|i| world.spawn((Pos(i as f32, 0.0),))).collect();
    let target = world.spawn((Pos(100.0, 0.0),));
    world.freeze(target).unwrap();
    let reference = ComponentRef::<Pos>::new(&world, target).unwrap();
    for other in &others[..3] {
        world.despawn(*other).unwrap(); // swap-removes: the target's row moves
    }
    assert_eq!(reference.get(&world), Some(&Pos(100.0, 0.0)));
    world.despawn(target).unwrap();
    let newcomer = world.spawn((Pos(-1.0, -1.0),));
    assert_eq!(newcomer.slot(), target.slot(), "the slot was reused");
    assert_eq!(reference.get(&world), None, "never the newcomer's Pos");
}

/// The target's slot taken by an entity of another archetype (with or
/// without the component, at another row): the reference reads `None`.
#[test]
fn a_slot_reused_by_another_archetype_reads_nothing() {
    for newcomer_has_pos in [false, true] {
        let mut world = World::new();
        let target = world.spawn((Pos(5.0, 5.0),));
        world.freeze(target).unwrap();
        let reference = ComponentRef::<Pos>::new(&world, target).unwrap();
        world.despawn(target).unwrap();
        let newcomer = if newcomer_has_pos {
            world.spawn((Vel(0.0, 0.0), Pos(-9.0, -9.0)))
        } else {
            world.spawn((Vel(0.0, 0.0),))
        };
        assert_eq!(newcomer.slot(), target.slot(), "the slot was reused");
        assert!(
            world.entity(newcomer).unwrap().has::<Vel>(),
            "another archetype"
        );
        assert_eq!(reference.get(&world), None, "never the newcomer's data");
        assert_eq!(reference.target(), target);
    }
}

#[test]
fn followers_take_their_targets_position() {
    let mut world = World::new();
    let leader = world.spawn((Pos(10.0, 0.0), Vel(1.0, 0.0)));
    world.freeze(leader).unwrap();
    let reference = ComponentRef::<Pos>::new(&world, leader).unwrap();
    // Followers have no Pos of their own: the requirement is the reference.
    let followers: Vec<Entity> = (0..3)
        .map(|_| world.spawn((Heading(0.0, 0.0), Lost(false), reference)))
        .collect();
    let mover = world.add_system(
        NodeBuilder::new("move")
            .system(|mut q: Query<(&mut Pos, &Vel)>| q.for_each(|(mut p, v)| p.0 += v.0)),
    );
    let steer = world.add_system(NodeBuilder::new("steer").system(
        |mut q: Query<(&mut Heading, &mut Lost, Target<Pos>)>| {
            q.for_each(|(mut heading, mut lost, target)| match target {
                Some(pos) => *heading = Heading(pos.0, pos.1),
                None => lost.0 = true,
            })
        },
    ));
    let plan = world.plan().unwrap();
    assert!(
        plan.edge_between(mover, steer).is_some(),
        "reading the target's Pos waits for its writer"
    );
    world.run_iteration().unwrap();
    for follower in &followers {
        assert_eq!(
            world.entity(*follower).unwrap().get::<Heading>(),
            Some(&Heading(11.0, 0.0))
        );
    }
    world.despawn(leader).unwrap();
    world.run_iteration().unwrap();
    for follower in &followers {
        assert_eq!(
            world.entity(*follower).unwrap().get::<Lost>(),
            Some(&Lost(true))
        );
    }
}

// Handles from another world (issue 19). Entity ids restart at 0 in every
// store, so a handle of one world is, bit for bit, often a handle of
// another: what a reference caches (its target's archetype and column) must
// never be used with a store it did not come from.

#[derive(Debug, Clone, PartialEq)]
struct Name(String);

/// The reproducer of issue 19: a reference of one world, read with another
/// whose entity at the same slot and generation holds a `String`, reads nothing
/// (before the fix: the `String`'s capacity and pointer, as a `Pos`).
#[test]
fn a_reference_used_with_another_world_reads_nothing() {
    let mut a = World::new();
    let ta = a.spawn((Pos(1.5, 2.5),));
    a.freeze(ta).unwrap();
    let reference = ComponentRef::<Pos>::new(&a, ta).unwrap();
    let mut b = World::new();
    let tb = b.spawn((Name(String::from("not a position at all")),));
    b.freeze(tb).unwrap();
    assert_eq!(tb, ta, "the same handle in both worlds");
    assert_eq!(reference.get(&b), None);
    assert_eq!(reference.get(b.entities()), None);
    assert_eq!(reference.get(&a), Some(&Pos(1.5, 2.5)), "its own world");
    assert_eq!(reference.store(), a.entities().id());
    assert_ne!(a.entities().id(), b.entities().id());
}

/// The same entity in two worlds, but the component types first seen in
/// another order (so `Pos` has another id and column there, where `Vel`
/// sits): a reference of one never reads the other.
#[test]
fn a_component_registered_at_another_id_is_not_read() {
    let mut a = World::new();
    let ta = a.spawn((Vel(0.0, 0.0), Pos(1.0, 1.0)));
    a.freeze(ta).unwrap();
    let reference = ComponentRef::<Pos>::new(&a, ta).unwrap();
    let mut b = World::new();
    let tb = b.spawn((Pos(2.0, 2.0), Vel(8.0, 8.0)));
    b.freeze(tb).unwrap();
    assert_eq!(tb, ta);
    assert_eq!(reference.get(&b), None, "neither b's Vel nor b's Pos");
    assert_eq!(reference.get(&a), Some(&Pos(1.0, 1.0)));
}

/// A reference belongs to the store it came from, not to a world or an
/// address: after its world is dropped, a new world (often at the same
/// address, with the same layout) reads nothing; a store replaced inside a
/// world reads nothing; a store moved to another world goes on serving it.
#[test]
fn a_reference_belongs_to_its_store() {
    let target_world = || {
        let mut world = Box::new(World::new());
        let target = world.spawn((Pos(3.0, 4.0),));
        world.freeze(target).unwrap();
        (world, target)
    };
    let (world, target) = target_world();
    let reference = ComponentRef::<Pos>::new(&*world, target).unwrap();
    drop(world);
    for _ in 0..4 {
        let (world, again) = target_world();
        assert_eq!(again, target);
        assert_eq!(reference.get(&*world), None, "a new world is not the old");
    }

    let (mut world, target) = target_world();
    let reference = ComponentRef::<Pos>::new(&*world, target).unwrap();
    let old = std::mem::take(world.entities_mut());
    let again = world.spawn((Pos(5.0, 5.0),));
    world.freeze(again).unwrap();
    assert_eq!(again, target);
    assert_eq!(reference.get(&*world), None, "a replaced store");
    assert_eq!(
        reference.get(&old),
        Some(&Pos(3.0, 4.0)),
        "the store itself"
    );

    let (mut first, target) = target_world();
    let reference = ComponentRef::<Pos>::new(&*first, target).unwrap();
    let (mut second, _) = target_world();
    std::mem::swap(first.entities_mut(), second.entities_mut());
    assert_eq!(reference.get(&*first), None);
    assert_eq!(reference.get(&*second), Some(&Pos(3.0, 4.0)), "moved along");
}

/// `Target<Pos>` over references from another world, stored as components
/// of this one: `None`, in a system and between iterations, whatever this
/// world holds at the same slot and generation.
#[test]
fn a_target_from_another_world_is_none() {
    let mut a = World::new();
    let ta = a.spawn((Pos(1.5, 2.5),));
    a.freeze(ta).unwrap();
    let foreign = ComponentRef::<Pos>::new(&a, ta).unwrap();
    let mut b = World::new();
    let tb = b.spawn((Name(String::from("not a position at all")), Pos(9.0, 9.0)));
    b.freeze(tb).unwrap();
    assert_eq!(tb, ta);
    let own = ComponentRef::<Pos>::new(&b, tb).unwrap();
    let strangers: Vec<Entity> = (0..3)
        .map(|_| b.spawn((Heading(0.0, 0.0), Lost(false), foreign)))
        .collect();
    let friend = b.spawn((Heading(0.0, 0.0), Lost(false), own));
    b.add_system(NodeBuilder::new("steer").system(
        |mut q: Query<(&mut Heading, &mut Lost, Target<Pos>)>| {
            q.for_each(|(mut heading, mut lost, target)| match target {
                Some(pos) => *heading = Heading(pos.0, pos.1),
                None => lost.0 = true,
            })
        },
    ));
    b.run_iteration().unwrap();
    for stranger in &strangers {
        let stranger = b.entity(*stranger).unwrap();
        assert_eq!(stranger.get::<Lost>(), Some(&Lost(true)));
        assert_eq!(stranger.get::<Heading>(), Some(&Heading(0.0, 0.0)));
    }
    let friend_view = b.entity(friend).unwrap();
    assert_eq!(friend_view.get::<Heading>(), Some(&Heading(9.0, 9.0)));
    let read: Vec<Option<Pos>> = b
        .query::<Target<Pos>>()
        .iter()
        .map(|p| p.copied())
        .collect();
    assert_eq!(read, vec![None, None, None, Some(Pos(9.0, 9.0))]);
    for stranger in &strangers {
        assert_eq!(b.query::<Target<Pos>>().get(*stranger), Ok(None));
    }
}

#[derive(Debug)]
struct Probed(Entity, String);

/// One accessor applied to a handle, its outcome printed.
type Probe = fn(&mut World, Entity) -> String;

/// Every accessor that reads through a handle.
fn reading_probes() -> Vec<(&'static str, Probe)> {
    vec![
        ("entity", |w, e| {
            format!("{:?}", w.entity(e).map(|v| v.get::<Name>().cloned()))
        }),
        ("entity_mut", |w, e| {
            format!("{:?}", w.entity_mut(e).map(|v| v.get::<Name>().cloned()))
        }),
        ("get Pos", |w, e| {
            format!("{:?}", w.entities().get::<Pos>(e))
        }),
        ("get Name", |w, e| {
            format!("{:?}", w.entities().get::<Name>(e))
        }),
        ("get_mut Name", |w, e| {
            format!("{:?}", w.entities_mut().get_mut::<Name>(e))
        }),
        ("ticks", |w, e| {
            format!("{:?}", w.entities().ticks::<Name>(e).is_some())
        }),
        ("contains", |w, e| format!("{:?}", w.entities().contains(e))),
        ("archetype_of", |w, e| {
            format!("{:?}", w.entities().archetype_of(e).is_some())
        }),
        ("is_frozen", |w, e| {
            format!("{:?}", w.entities().is_frozen(e))
        }),
        ("world query get", |w, e| {
            format!("{:?}", w.query::<&Name>().get(e))
        }),
        ("world query get Pos", |w, e| {
            format!("{:?}", w.query::<&Pos>().get(e))
        }),
        ("world query get_mut", |w, e| {
            format!("{:?}", w.query::<&mut Name>().get_mut(e))
        }),
        ("component_ref", |w, e| {
            format!("{:?}", ComponentRef::<Name>::new(&*w, e).map(|_| ()))
        }),
        ("system query get", |w, e| {
            w.insert(Probed(e, String::new()));
            let node = w.add_system(NodeBuilder::new("probe").system(
                |q: Query<&Name>, probed: &mut Probed| {
                    probed.1 = format!("{:?}", q.get(probed.0));
                },
            ));
            w.run_iteration().unwrap();
            w.remove_node(node).unwrap();
            w.get::<Probed>().unwrap().1.clone()
        }),
    ]
}

/// Every accessor that changes through a handle.
fn changing_probes() -> Vec<(&'static str, Probe)> {
    vec![
        ("insert", |w, e| {
            format!("{:?}", w.entities_mut().insert(e, (Pos(0.0, 0.0),)))
        }),
        ("remove", |w, e| {
            format!("{:?}", w.entities_mut().remove::<(Name,)>(e).map(drop))
        }),
        ("entity_mut insert", |w, e| {
            format!(
                "{:?}",
                w.entity_mut(e)
                    .map(|mut v| v.insert((Pos(0.0, 0.0),)).is_ok())
            )
        }),
        ("freeze", |w, e| format!("{:?}", w.freeze(e))),
        ("despawn", |w, e| format!("{:?}", w.despawn(e))),
        ("commands", |w, e| {
            w.insert(Probed(e, String::new()));
            let node = w.add_system(NodeBuilder::new("order").system(
                |commands: Commands<'_>, probed: &Probed| {
                    let e = probed.0;
                    commands.entity(e).insert((Pos(0.0, 0.0),));
                    commands.entity(e).remove::<(Name,)>();
                    commands.entity(e).freeze();
                    commands.entity(e).despawn();
                    commands.despawn(e);
                },
            ));
            let result = w.run_iteration();
            w.remove_node(node).unwrap();
            let Err(IterationError::Boundary(failures)) = result else {
                return format!("{result:?}");
            };
            let refused: Vec<_> = failures.iter().map(|f| f.refused_because()).collect();
            format!("{refused:?}")
        }),
    ]
}

/// Everything a world holds: its entities, by handle, with their names.
fn contents(world: &World) -> Vec<(Entity, Option<Name>, bool, bool)> {
    let entities = world.entities();
    let mut all: Vec<_> = entities
        .archetypes()
        .flat_map(|archetype| archetype.entities().iter().copied())
        .map(|e| {
            (
                e,
                entities.get::<Name>(e).cloned(),
                entities.get::<Pos>(e).is_some(),
                entities.is_frozen(e),
            )
        })
        .collect();
    all.sort_by_key(|entry| entry.0);
    all
}

/// What an `Entity` of another world does in every accessor. A handle is
/// only a slot and a generation: one from another store names the live
/// entity of this store with the same slot and generation, if there is one
/// (and is then, bit for bit, that entity's own handle), and otherwise
/// nothing, exactly as a despawned handle of this store: whether its
/// generation is one this store's slot had, one it hands out next (the
/// slot is free), one it has not reached, or its slot is one this store
/// lacks. It never reaches this store's memory as another type, and an
/// accessor refusing it changes nothing.
#[test]
fn an_entity_of_another_world_names_this_worlds_entity_or_nothing() {
    let mut a = World::new();
    let mut handles: Vec<Entity> = (0..4).map(|i| a.spawn((Pos(i as f32, 0.0),))).collect();
    // Slot 1 on to generation 3, slot 2 to generation 2.
    a.despawn(handles[1]).unwrap();
    let again = a.spawn((Pos(1.0, 0.0),));
    a.despawn(again).unwrap();
    handles.push(a.spawn((Pos(1.0, 0.0),)));
    a.despawn(handles[2]).unwrap();
    handles.push(a.spawn((Pos(2.0, 0.0),)));
    let mut b = World::new();
    let resident = b.spawn((Name(String::from("resident")),));
    let churned = b.spawn((Name(String::from("churned")),));
    b.despawn(churned).unwrap();
    let reused = b.spawn((Name(String::from("reused")),));
    let spare = b.spawn((Name(String::from("spare")),));
    b.despawn(spare).unwrap();
    // a's first handle is b's resident's. The others name nothing in b:
    // the generation b's slot 1 had before `reused`, the one b's free
    // slot 2 had, a slot b lacks, a generation b's slot 1 has not reached,
    // the generation b's free slot 2 hands out next.
    assert_eq!(handles[0], resident);
    let named = |e: Entity| (e.slot(), e.generation());
    assert_eq!(named(handles[1]), named(churned));
    assert_eq!(named(handles[2]), named(spare));
    assert_eq!(named(handles[3]), (3, 1));
    assert_eq!(named(handles[4]), (reused.slot(), reused.generation() + 1));
    assert_eq!(named(handles[5]), (spare.slot(), spare.generation() + 1));
    let before = contents(&b);
    let probes: Vec<_> = reading_probes()
        .into_iter()
        .chain(changing_probes())
        .collect();
    for &foreign in &handles[1..] {
        for (what, probe) in &probes {
            let expected = probe(&mut b, churned).replace(&format!("{churned:?}"), "E");
            let got = probe(&mut b, foreign).replace(&format!("{foreign:?}"), "E");
            assert_eq!(got, expected, "{what} with {foreign:?}");
            assert_eq!(
                contents(&b),
                before,
                "{what} with {foreign:?} changed nothing"
            );
        }
        assert_eq!(
            ComponentRef::<Name>::new(&b, foreign).err(),
            Some(EntityError::NoSuchEntity { entity: foreign })
        );
    }
    // The handle that is b's resident's own reads b's resident, as b's
    // types: no `Pos` there, never a's.
    for (what, probe) in reading_probes() {
        assert_eq!(probe(&mut b, handles[0]), probe(&mut b, resident), "{what}");
    }
    assert_eq!(b.entities().get::<Pos>(handles[0]), None);
    assert_eq!(
        b.entities().get::<Name>(handles[0]),
        Some(&Name(String::from("resident")))
    );
}
