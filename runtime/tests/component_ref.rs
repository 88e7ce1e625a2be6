//! `ComponentRef<T>` and `Target<T>` (issue 10, reference 003): a unit
//! following its target reads the target's component through a reference
//! that caches the store and resolves the row on every access.

use sluice::{ComponentRef, Entity, EntityError, NodeBuilder, Query, Target, World};

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
            .system(|mut q: Query<(&mut Pos, &Vel)>| q.for_each(|(p, v)| p.0 += v.0)),
    );
    let steer = world.add_system(NodeBuilder::new("steer").system(
        |mut q: Query<(&mut Heading, &mut Lost, Target<Pos>)>| {
            q.for_each(|(heading, lost, target)| match target {
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
