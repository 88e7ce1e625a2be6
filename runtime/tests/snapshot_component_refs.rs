//! Saves and restores of worlds holding references (issue 39's last gap):
//! a `ComponentRef<T>` registered with `World::save_component_ref` is
//! saved as its target entity, checked on load before the world changes,
//! and bound to the store it lands in, by a load and by a restore of
//! another world's snapshot. A world loaded into a fresh one reads every
//! target as the original does, through `Target<T>` and through `get`, and
//! plays on to the same frames and checksums, on the serial executor and
//! on a pool of 2. Forged saves (a target not frozen, lacking `T`, never
//! spawned), conflicting registrations and a world without the
//! registration are refused by name and change nothing.

#[path = "support/executors.rs"]
#[allow(dead_code)] // the executor list is not used: a pool of 2 is
mod support;

use serde::{Deserialize, Serialize};
use sluice::snapshot::{LoadError, ReferenceFault, RegistrationError, SaveError, SectionKind};
use sluice::{
    Commands, ComponentRef, Entity, ExecutorKind, NodeBuilder, Query, StorageType, Target, With,
    World,
};
use support::world_on;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Pos {
    x: f32,
    y: f32,
}

/// Marks the entities that march (the references' targets).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Leader;

/// A second archetype of targets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Banner(u32);

/// Where a follower last saw its leader.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Heading(Option<Pos>);

/// Saved as an `Entity`, exactly as a `ComponentRef<Pos>` is: it forges
/// saves whose references name any entity at all.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct ForgedRef(Entity);

const LEADERS: usize = if cfg!(miri) { 6 } else { 60 };
const FOLLOWERS: usize = if cfg!(miri) { 10 } else { 150 };
const FRAMES: usize = if cfg!(miri) { 3 } else { 12 };
const REF_NAME: &str = "follows_pos";

/// The serial executor, and the parallel one on a pool of 2.
const EXECUTORS: [(ExecutorKind, usize); 2] =
    [(ExecutorKind::Serial, 1), (ExecutorKind::Parallel, 2)];

fn register(world: &mut World) {
    world
        .save_component::<Pos>("pos")
        .save_component::<Leader>("leader")
        .save_component::<Banner>("banner")
        .save_component::<Heading>("heading")
        .save_component_ref::<Pos>(REF_NAME);
}

/// Frozen leaders in two archetypes, followers holding references to
/// them, one leader despawned (its followers' references read `None`).
fn populate(world: &mut World) -> Vec<Entity> {
    let mut leaders = Vec::new();
    for i in 0..LEADERS {
        let pos = Pos {
            x: i as f32,
            y: 0.0,
        };
        let leader = if i % 2 == 0 {
            world.spawn((pos, Leader))
        } else {
            world.spawn((pos, Leader, Banner(i as u32)))
        };
        world.freeze(leader).unwrap();
        leaders.push(leader);
    }
    let mut followers = Vec::new();
    for i in 0..FOLLOWERS {
        let follows = ComponentRef::<Pos>::new(world, leaders[(i * 7) % LEADERS]).unwrap();
        followers.push(world.spawn((Heading(None), follows)));
    }
    world.despawn(leaders[3]).unwrap();
    followers
}

/// Leaders march; followers read their leader's position through
/// `Target<Pos>`; a leader past a line is despawned (its followers then
/// read `None`), and a follower joins each frame.
fn add_game(world: &mut World) {
    world.add_system(NodeBuilder::new("march").system(
        |mut q: Query<'_, (Entity, &mut Pos), With<Leader>>| {
            q.for_each(|(entity, mut pos)| {
                pos.x += 1.0;
                pos.y += (entity.slot() % 3) as f32 * 0.5;
            });
        },
    ));
    world.add_system(NodeBuilder::new("follow").after("march").system(
        |mut q: Query<'_, (&mut Heading, Target<Pos>)>| {
            q.for_each(|(mut heading, target)| heading.0 = target.copied());
        },
    ));
    world.add_system(NodeBuilder::new("cull").after("follow").system(
        |commands: Commands<'_>, q: Query<'_, (Entity, &Pos), With<Leader>>| {
            for (entity, pos) in q.iter() {
                if pos.x > 20.0 && entity.slot() % 5 == 0 {
                    commands.despawn(entity);
                }
            }
            commands.spawn((Heading(None),));
        },
    ));
}

/// Every position, heading and reference (its target, and what `get`
/// reads), by entity; and what `Target<Pos>` reads per follower.
type View = (
    Vec<(Entity, Pos)>,
    Vec<(Entity, Heading)>,
    Vec<(Entity, Entity, Option<Pos>)>,
    Vec<(Entity, Option<Pos>)>,
);

fn view(world: &mut World) -> View {
    let mut pos: Vec<_> = world
        .query::<(Entity, &Pos)>()
        .iter()
        .map(|(e, p)| (e, *p))
        .collect();
    pos.sort_by_key(|row| row.0);
    let mut headings: Vec<_> = world
        .query::<(Entity, &Heading)>()
        .iter()
        .map(|(e, h)| (e, *h))
        .collect();
    headings.sort_by_key(|row| row.0);
    let refs: Vec<(Entity, ComponentRef<Pos>)> = world
        .query::<(Entity, &ComponentRef<Pos>)>()
        .iter()
        .map(|(e, r)| (e, *r))
        .collect();
    let mut refs: Vec<_> = refs
        .into_iter()
        .map(|(e, r)| (e, r.target(), r.get(&*world).copied()))
        .collect();
    refs.sort_by_key(|row| row.0);
    let mut targets: Vec<_> = world
        .query::<(Entity, Target<Pos>)>()
        .iter()
        .map(|(e, t)| (e, t.copied()))
        .collect();
    targets.sort_by_key(|row| row.0);
    (pos, headings, refs, targets)
}

fn save(world: &World) -> Vec<u8> {
    let mut bytes = Vec::new();
    world.snapshot().unwrap().write_to(&mut bytes).unwrap();
    bytes
}

/// Every live target reads through its reference exactly what the world
/// holds for it; every dead one reads `None`.
fn assert_refs_read_their_targets(world: &mut World) {
    let (_, _, refs, targets) = view(world);
    assert!(!refs.is_empty());
    for (holder, target, read) in &refs {
        let held = world
            .entity(*target)
            .and_then(|target| target.get::<Pos>().copied());
        assert_eq!(*read, held, "{holder}'s reference to {target}");
    }
    let through_queries: Vec<_> = refs.iter().map(|(h, _, read)| (*h, *read)).collect();
    assert_eq!(targets, through_queries, "Target<Pos> reads what get reads");
}

#[test]
fn a_loaded_world_reads_every_target_and_plays_on_to_the_same_frames() {
    let mut runs = Vec::new();
    for (kind, threads) in EXECUTORS {
        let mut world = world_on(kind, threads);
        register(&mut world);
        populate(&mut world);
        add_game(&mut world);
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        let bytes = save(&world);
        let checksum = world.snapshot().unwrap().checksum();

        let mut fresh = world_on(kind, threads);
        register(&mut fresh);
        add_game(&mut fresh);
        fresh.load_from(&bytes[..]).unwrap();
        assert_eq!(view(&mut fresh), view(&mut world), "{kind:?}");
        assert_refs_read_their_targets(&mut fresh);
        let (_, _, refs, _) = view(&mut fresh);
        assert!(
            refs.iter().any(|(_, _, read)| read.is_none()),
            "a dead target"
        );
        assert!(refs.iter().any(|(_, _, read)| read.is_some()), "a live one");
        // Peers compare equal: the reference is hashed as its target.
        assert_eq!(fresh.snapshot().unwrap().checksum(), checksum);
        assert_eq!(
            fresh
                .snapshot()
                .unwrap()
                .divergence(&world.snapshot().unwrap()),
            None
        );

        let mut sums = Vec::new();
        for frame in 0..FRAMES {
            world.run_iteration().unwrap();
            fresh.run_iteration().unwrap();
            assert_eq!(view(&mut fresh), view(&mut world), "{kind:?} frame {frame}");
            let sum = world.snapshot().unwrap().checksum();
            assert_eq!(fresh.snapshot().unwrap().checksum(), sum);
            sums.push(sum);
        }
        assert_refs_read_their_targets(&mut fresh);
        runs.push(sums);
    }
    assert_eq!(runs[0], runs[1], "serial and parallel agree");
}

#[test]
fn a_load_into_the_world_it_was_saved_from_binds_the_references_again() {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    add_game(&mut world);
    world.run_iteration().unwrap();
    let before = view(&mut world);
    let bytes = save(&world);
    for _ in 0..4 {
        world.run_iteration().unwrap();
    }
    assert_ne!(view(&mut world), before);
    world.load_from(&bytes[..]).unwrap();
    assert_eq!(view(&mut world), before);
    assert_refs_read_their_targets(&mut world);
}

#[test]
fn a_load_leaves_the_holders_ticks_as_saved() {
    let mut world = World::new();
    register(&mut world);
    let followers = populate(&mut world);
    world.entities_mut().advance_ticks(5);
    let ticks = world
        .entities()
        .ticks::<ComponentRef<Pos>>(followers[0])
        .unwrap();
    let bytes = save(&world);
    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    assert_eq!(
        fresh.entities().ticks::<ComponentRef<Pos>>(followers[0]),
        Some(ticks),
        "binding a reference is no change of the game's state"
    );
    assert_refs_read_their_targets(&mut fresh);
    let (_, _, refs, _) = view(&mut fresh);
    assert!(refs.iter().any(|(_, _, read)| read.is_some()), "bound");
}

#[test]
fn a_restore_of_another_worlds_snapshot_binds_the_references() {
    for (kind, threads) in EXECUTORS {
        let mut source = world_on(kind, threads);
        register(&mut source);
        populate(&mut source);
        add_game(&mut source);
        source.run_iteration().unwrap();
        let snapshot = source.snapshot().unwrap();

        // Registered through `snapshot_component_ref` only, no saves.
        let mut other = world_on(kind, threads);
        other
            .snapshot_component::<Pos>()
            .snapshot_component::<Leader>()
            .snapshot_component::<Banner>()
            .snapshot_component::<Heading>()
            .snapshot_component_ref::<Pos>();
        other.spawn((Pos { x: -5.0, y: -5.0 },));
        add_game(&mut other);
        other.restore(&snapshot).unwrap();
        assert_eq!(view(&mut other), view(&mut source), "{kind:?}");
        assert_refs_read_their_targets(&mut other);
        for frame in 0..FRAMES {
            source.run_iteration().unwrap();
            other.run_iteration().unwrap();
            assert_eq!(
                view(&mut other),
                view(&mut source),
                "{kind:?} frame {frame}"
            );
        }
        // And back into the source, whose own snapshot is bound already.
        source.restore(&snapshot).unwrap();
        assert_refs_read_their_targets(&mut source);
    }
}

#[test]
fn references_snapshotted_as_plain_components_come_back_reading_none_elsewhere() {
    // Without `snapshot_component_ref` a reference is a plain component:
    // restored into another world it keeps its store, and reads nothing
    // from any other (the documented rule; the targets are still named).
    let mut source = World::new();
    source.snapshot_component::<Pos>();
    source.snapshot_component::<ComponentRef<Pos>>();
    let leader = source.spawn((Pos { x: 1.0, y: 2.0 },));
    source.freeze(leader).unwrap();
    let follower = source.spawn((ComponentRef::<Pos>::new(&source, leader).unwrap(),));
    let snapshot = source.snapshot().unwrap();
    let mut other = World::new();
    other.snapshot_component::<Pos>();
    other.snapshot_component::<ComponentRef<Pos>>();
    other.restore(&snapshot).unwrap();
    let follows = *other
        .entity(follower)
        .unwrap()
        .get::<ComponentRef<Pos>>()
        .unwrap();
    assert_eq!(follows.target(), leader);
    assert_eq!(follows.get(&other), None);
    assert_eq!(follows.store(), source.entities().id());
}

/// A world whose state after a failed load must equal its state before.
fn unchanged_after(world: &mut World, load: impl FnOnce(&mut World) -> LoadError) -> LoadError {
    let before = view(world);
    let checksum = world.snapshot().unwrap().checksum();
    let error = load(world);
    assert_eq!(view(world), before, "a failed load changed the world");
    assert_eq!(world.snapshot().unwrap().checksum(), checksum);
    error
}

/// A world to load forged saves into: populated and played, so a load
/// that changed anything would show.
fn bystander() -> World {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    add_game(&mut world);
    world.run_iteration().unwrap();
    world
}

/// A save whose reference section names `target` for one holder:
/// written by a world that saves a [`ForgedRef`] under the reference's
/// name, so the target may be anything. `build` spawns the entities and
/// returns the target.
fn forged(build: impl FnOnce(&mut World) -> Entity) -> (Vec<u8>, Entity, Entity) {
    let mut world = World::new();
    world
        .save_component::<Pos>("pos")
        .save_component::<Leader>("leader")
        .save_component::<Banner>("banner")
        .save_component::<Heading>("heading")
        .save_component::<ForgedRef>(REF_NAME);
    let target = build(&mut world);
    let holder = world.spawn((Heading(None), ForgedRef(target)));
    (save(&world), holder, target)
}

fn reference_error(bytes: &[u8]) -> (Entity, Entity, &'static str, ReferenceFault) {
    let mut world = bystander();
    let error = unchanged_after(&mut world, |w| w.load_from(bytes).unwrap_err());
    assert!(error.to_string().contains("ComponentRef"), "{error}");
    match error {
        LoadError::Reference {
            holder,
            target,
            component,
            fault,
        } => (holder, target, component, fault),
        other => panic!("not a reference error: {other}"),
    }
}

#[test]
fn a_forged_save_is_valid_when_the_target_could_have_been_referenced() {
    // The forging itself is sound: a frozen target with a `Pos` loads.
    let (bytes, holder, target) = forged(|world| {
        let target = world.spawn((Pos { x: 3.0, y: 4.0 }, Leader));
        world.freeze(target).unwrap();
        target
    });
    let mut world = bystander();
    world.load_from(&bytes[..]).unwrap();
    let follows = *world
        .entity(holder)
        .unwrap()
        .get::<ComponentRef<Pos>>()
        .unwrap();
    assert_eq!(follows.target(), target);
    assert_eq!(follows.get(&world), Some(&Pos { x: 3.0, y: 4.0 }));
}

#[test]
fn a_target_not_frozen_is_refused_naming_holder_target_and_type() {
    let (bytes, holder, target) = forged(|world| world.spawn((Pos { x: 0.0, y: 0.0 },)));
    let found = reference_error(&bytes);
    assert_eq!(
        found,
        (
            holder,
            target,
            std::any::type_name::<Pos>(),
            ReferenceFault::NotFrozen
        )
    );
}

#[test]
fn a_target_whose_archetype_lacks_the_component_is_refused() {
    let (bytes, holder, target) = forged(|world| {
        let target = world.spawn((Leader,));
        world.freeze(target).unwrap();
        target
    });
    assert_eq!(
        reference_error(&bytes),
        (
            holder,
            target,
            std::any::type_name::<Pos>(),
            ReferenceFault::LacksComponent
        )
    );
}

#[test]
fn a_target_id_never_handed_out_is_refused() {
    // Past the save's slot table: an entity of a larger world.
    let mut larger = World::new();
    let far: Vec<Entity> = (0..50).map(|_| larger.spawn((Leader,))).collect();
    let far = *far.last().unwrap();
    let (bytes, _, target) = forged(move |world| {
        world.spawn((Leader,));
        far
    });
    assert_eq!(target.slot(), 49);
    let (_, named, _, fault) = reference_error(&bytes);
    assert_eq!((named, fault), (far, ReferenceFault::NeverSpawned));

    // A generation its slot never reached: slot 0's third entity, where
    // the save's slot 0 holds its first.
    let mut churned = World::new();
    for _ in 0..2 {
        let gone = churned.spawn((Leader,));
        churned.despawn(gone).unwrap();
    }
    let later = churned.spawn((Leader,));
    assert_eq!((later.slot(), later.generation()), (0, 3));
    let (bytes, _, _) = forged(move |world| {
        world.spawn((Pos { x: 0.0, y: 0.0 },));
        later
    });
    let (_, named, _, fault) = reference_error(&bytes);
    assert_eq!((named, fault), (later, ReferenceFault::NeverSpawned));
}

#[test]
fn a_target_despawned_before_the_save_reads_none_after_the_load() {
    // A dead target's generation was handed out: the reference saves as
    // that target, loads, and reads `None`, as it did before the save.
    let mut world = World::new();
    register(&mut world);
    let leader = world.spawn((Pos { x: 1.0, y: 1.0 }, Leader));
    world.freeze(leader).unwrap();
    let follower = world.spawn((ComponentRef::<Pos>::new(&world, leader).unwrap(),));
    world.despawn(leader).unwrap();
    // The slot is reused: the new entity there is not the target.
    let successor = world.spawn((Pos { x: 9.0, y: 9.0 }, Leader));
    world.freeze(successor).unwrap();
    assert_eq!(successor.slot(), leader.slot());
    let bytes = save(&world);
    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    let follows = *fresh
        .entity(follower)
        .unwrap()
        .get::<ComponentRef<Pos>>()
        .unwrap();
    assert_eq!(follows.target(), leader);
    assert_eq!(follows.get(&fresh), None);
    assert_eq!(fresh.query::<Target<Pos>>().iter().next(), Some(None));
}

#[test]
fn a_world_without_the_registration_refuses_by_name() {
    let mut source = World::new();
    register(&mut source);
    populate(&mut source);
    let bytes = save(&source);
    let mut world = World::new();
    world
        .save_component::<Pos>("pos")
        .save_component::<Leader>("leader")
        .save_component::<Banner>("banner")
        .save_component::<Heading>("heading");
    world.spawn((Pos { x: 1.0, y: 1.0 },));
    let before = world.snapshot().unwrap().checksum();
    let error = world.load_from(&bytes[..]).unwrap_err();
    let LoadError::UnknownType { kind, name } = &error else {
        panic!("{error}")
    };
    assert_eq!((*kind, name.as_str()), (SectionKind::Component, REF_NAME));
    assert_eq!(world.snapshot().unwrap().checksum(), before);
    // And a world holding references it does not save refuses to save.
    let mut unsaved = World::new();
    unsaved.save_component::<Pos>("pos");
    let leader = unsaved.spawn((Pos { x: 0.0, y: 0.0 },));
    unsaved.freeze(leader).unwrap();
    unsaved.spawn((ComponentRef::<Pos>::new(&unsaved, leader).unwrap(),));
    let error = unsaved
        .snapshot()
        .unwrap()
        .write_to(Vec::new())
        .unwrap_err();
    assert!(error.to_string().contains("ComponentRef"), "{error}");
}

#[test]
fn conflicting_registrations_are_refused_and_a_repeat_is_not() {
    let mut world = World::new();
    world.save_component::<Pos>("pos");
    world.try_save_component_ref::<Pos>(REF_NAME).unwrap();
    // The same type under the same name again: a no-op.
    world.try_save_component_ref::<Pos>(REF_NAME).unwrap();
    let error = world
        .try_save_component_ref::<Pos>("another_name")
        .unwrap_err();
    assert!(
        matches!(error, RegistrationError::AlreadyNamed { name, refused, .. }
            if name == REF_NAME && refused == "another_name"),
        "{error}"
    );
    // A name another type has, either way round.
    let error = world.try_save_component_ref::<Heading>("pos").unwrap_err();
    assert!(
        matches!(error, RegistrationError::NameTaken { name: "pos", .. }),
        "{error}"
    );
    let error = world.try_save_component::<Heading>(REF_NAME).unwrap_err();
    assert!(
        matches!(error, RegistrationError::NameTaken { name, .. } if name == REF_NAME),
        "{error}"
    );
    // The world still saves and loads with its first registrations.
    let leader = world.spawn((Pos { x: 2.0, y: 0.0 },));
    world.freeze(leader).unwrap();
    let follower = world.spawn((ComponentRef::<Pos>::new(&world, leader).unwrap(),));
    let bytes = save(&world);
    let mut fresh = World::new();
    fresh
        .save_component::<Pos>("pos")
        .save_component_ref::<Pos>(REF_NAME);
    fresh.load_from(&bytes[..]).unwrap();
    let follows = *fresh
        .entity(follower)
        .unwrap()
        .get::<ComponentRef<Pos>>()
        .unwrap();
    assert_eq!(follows.get(&fresh), Some(&Pos { x: 2.0, y: 0.0 }));
    // The non-`try` form records a conflict: saves are refused until fixed.
    world.save_component_ref::<Pos>("third_name");
    assert!(world.snapshot().unwrap().write_to(Vec::new()).is_err());
}

#[test]
fn the_checksum_and_divergence_see_a_reference_as_its_target() {
    let build = |retarget: bool| {
        let mut world = World::new();
        register(&mut world);
        let a = world.spawn((Pos { x: 1.0, y: 0.0 }, Leader));
        let b = world.spawn((Pos { x: 1.0, y: 0.0 }, Leader));
        world.freeze(a).unwrap();
        world.freeze(b).unwrap();
        let target = if retarget { b } else { a };
        world.spawn((ComponentRef::<Pos>::new(&world, target).unwrap(),));
        world
    };
    let (one, two, other) = (build(false), build(false), build(true));
    // Two worlds (two stores, two caches) holding the same references.
    assert_eq!(
        one.snapshot().unwrap().checksum(),
        two.snapshot().unwrap().checksum()
    );
    let ours = one.snapshot().unwrap();
    let theirs = other.snapshot().unwrap();
    assert_ne!(ours.checksum(), theirs.checksum());
    let divergence = ours.divergence(&theirs).unwrap();
    assert_eq!(divergence.kind, SectionKind::Component);
    assert_eq!(divergence.name, REF_NAME);
    assert_eq!(divergence.entities.len(), 1);
}

#[test]
fn a_reference_made_in_another_world_is_refused_by_a_save() {
    // It reads nothing in its holder's world; saved as its target's id it
    // would name this world's entity of that id once loaded.
    let mut elsewhere = World::new();
    let stranger = elsewhere.spawn((Pos { x: 5.0, y: 5.0 },));
    elsewhere.freeze(stranger).unwrap();
    let mut world = World::new();
    register(&mut world);
    let local = world.spawn((Pos { x: 1.0, y: 1.0 }, Leader));
    world.freeze(local).unwrap();
    assert_eq!(local, stranger, "the same id in both worlds");
    let foreign = ComponentRef::<Pos>::new(&elsewhere, stranger).unwrap();
    let holder = world.spawn((foreign,));
    assert_eq!(foreign.get(&world), None);
    let error = world.snapshot().unwrap().write_to(Vec::new()).unwrap_err();
    assert!(error.to_string().contains("another world"), "{error}");
    let SaveError::ForeignReference {
        holder: named,
        target,
        component,
    } = error
    else {
        panic!("{error}")
    };
    assert_eq!((named, target), (holder, stranger));
    assert_eq!(component, std::any::type_name::<Pos>());
    // Made in the holder's world, it saves.
    let own = ComponentRef::<Pos>::new(&world, local).unwrap();
    world.entities_mut().insert(holder, (own,)).unwrap();
    assert!(world.snapshot().unwrap().write_to(Vec::new()).is_ok());
}

#[test]
fn a_dead_targets_reference_restored_elsewhere_still_saves() {
    // A restore into another world leaves a dead target's reference
    // unbound (not the source's store): the other world saves it.
    let mut source = World::new();
    register(&mut source);
    let leader = source.spawn((Pos { x: 1.0, y: 1.0 }, Leader));
    source.freeze(leader).unwrap();
    let follower = source.spawn((ComponentRef::<Pos>::new(&source, leader).unwrap(),));
    source.despawn(leader).unwrap();
    let snapshot = source.snapshot().unwrap();
    let mut other = World::new();
    register(&mut other);
    other.restore(&snapshot).unwrap();
    let bytes = save(&other);
    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    let follows = *fresh
        .entity(follower)
        .unwrap()
        .get::<ComponentRef<Pos>>()
        .unwrap();
    assert_eq!((follows.target(), follows.get(&fresh)), (leader, None));
}

#[test]
fn a_target_whose_component_is_sparse_is_refused() {
    // A reference caches a table column: a `T` kept in a sparse set is
    // no target (`ComponentRef::new` refuses it), and neither is it in a
    // save.
    let sparse = |world: &mut World| {
        world
            .register_component::<Pos>(StorageType::SparseSet)
            .unwrap();
    };
    let (bytes, holder, target) = forged(|world| {
        sparse(world);
        let target = world.spawn((Pos { x: 1.0, y: 1.0 }, Leader));
        world.freeze(target).unwrap();
        target
    });
    let mut world = World::new();
    sparse(&mut world);
    register(&mut world);
    let error = world.load_from(&bytes[..]).unwrap_err();
    let LoadError::Reference {
        holder: named,
        target: names,
        fault,
        ..
    } = error
    else {
        panic!("{error}")
    };
    assert_eq!(
        (named, names, fault),
        (holder, target, ReferenceFault::LacksComponent)
    );
    assert_eq!(world.entities().len(), 0, "nothing changed");
}

#[test]
fn references_held_in_a_sparse_set_are_saved_and_bound() {
    let build = || {
        let mut world = World::new();
        world
            .register_component::<ComponentRef<Pos>>(StorageType::SparseSet)
            .unwrap();
        register(&mut world);
        world
    };
    let mut world = build();
    populate(&mut world);
    let bytes = save(&world);
    let mut fresh = build();
    fresh.load_from(&bytes[..]).unwrap();
    assert_eq!(view(&mut fresh), view(&mut world));
    // Read through `get` (`Target<T>` walks table columns of references
    // only, here as before the save).
    let (_, _, refs, _) = view(&mut fresh);
    for (holder, target, read) in &refs {
        let held = fresh
            .entity(*target)
            .and_then(|target| target.get::<Pos>().copied());
        assert_eq!(*read, held, "{holder}'s reference to {target}");
    }
    assert_eq!(refs.len(), FOLLOWERS);
    assert!(refs.iter().any(|(_, _, read)| read.is_some()));
}
