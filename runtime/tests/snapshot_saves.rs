//! Saves of snapshots (issue 39, the `serde` feature): a world saved with
//! `Snapshot::write_to` and loaded back, into the same world after playing
//! on or into a fresh one with the same registrations, gives every query,
//! every id and every saved service as they were. Bad saves (another
//! version, an unknown type, another shape, truncated, corrupted) are
//! refused by name and change nothing; a `Serialize` that panics writes
//! nothing that loads. The checksum is the same on every executor and
//! thread count, and the divergence report names the first part that
//! differs and its entities.

#[path = "support/executors.rs"]
mod support;

use serde::{Deserialize, Serialize};
use sluice::snapshot::{LoadError, SaveError, SectionKind};
use sluice::{Commands, Entity, NodeBuilder, Query, Snapshot, World};
use support::{PLANNED, executors, quiet_planned_panics, world_on};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Pos {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Vel {
    x: f32,
    y: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Name(String);

/// A reference to another entity, kept valid by a load.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Follows(Entity);

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
struct Score {
    points: u64,
    log: Vec<String>,
}

const ENTITIES: u32 = if cfg!(miri) { 12 } else { 300 };
const FRAMES: usize = if cfg!(miri) { 3 } else { 20 };

fn register(world: &mut World) {
    world
        .save_component::<Pos>("pos")
        .save_component::<Vel>("vel")
        .save_component::<Name>("name")
        .save_component::<Follows>("follows")
        .save_service::<Score>("score");
}

fn populate(world: &mut World) -> Vec<Entity> {
    let mut spawned = Vec::new();
    for i in 0..ENTITIES {
        let pos = Pos {
            x: i as f32,
            y: -(i as f32) * 0.5,
        };
        let entity = match i % 3 {
            0 => world.spawn((pos, Vel { x: 1.0, y: 0.25 })),
            1 => world.spawn((pos, Name(format!("unit {i}")))),
            _ => world.spawn((pos, Follows(spawned[i as usize - 1]))),
        };
        spawned.push(entity);
    }
    // Holes in the slot table: the free list is part of what is saved.
    for entity in spawned.iter().step_by(5) {
        world.despawn(*entity).unwrap();
    }
    world.insert(Score {
        points: 42,
        log: vec!["start".into()],
    });
    spawned
}

/// Everything a query sees, sorted by entity.
type View = (
    Vec<(Entity, Pos)>,
    Vec<(Entity, Vel)>,
    Vec<(Entity, Name)>,
    Vec<(Entity, Follows)>,
    Option<Score>,
);

fn view(world: &mut World) -> View {
    fn sorted<T>(mut rows: Vec<(Entity, T)>) -> Vec<(Entity, T)> {
        rows.sort_by_key(|(entity, _)| *entity);
        rows
    }
    let pos = sorted(
        world
            .query::<(Entity, &Pos)>()
            .iter()
            .map(|(e, p)| (e, *p))
            .collect(),
    );
    let vel = sorted(
        world
            .query::<(Entity, &Vel)>()
            .iter()
            .map(|(e, v)| (e, *v))
            .collect(),
    );
    let name = sorted(
        world
            .query::<(Entity, &Name)>()
            .iter()
            .map(|(e, n)| (e, n.clone()))
            .collect(),
    );
    let follows = sorted(
        world
            .query::<(Entity, &Follows)>()
            .iter()
            .map(|(e, f)| (e, *f))
            .collect(),
    );
    (pos, vel, name, follows, world.get::<Score>().cloned())
}

fn save(world: &World) -> Vec<u8> {
    let mut bytes = Vec::new();
    world.snapshot().unwrap().write_to(&mut bytes).unwrap();
    bytes
}

/// Moves, renames, despawns and spawns: the world after it is not the
/// world before.
fn play_on(world: &mut World) {
    world.query::<&mut Pos>().for_each(|mut pos| pos.x += 100.0);
    let victims: Vec<Entity> = world
        .query::<(Entity, &Name)>()
        .iter()
        .map(|(e, _)| e)
        .take(3)
        .collect();
    for victim in victims {
        world.despawn(victim).unwrap();
    }
    world.spawn((Pos { x: -1.0, y: -1.0 }, Name("newcomer".into())));
    world.get_mut::<Score>().unwrap().points = 0;
}

#[test]
fn round_trip_into_the_same_world_after_playing_on() {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    let before = view(&mut world);
    let bytes = save(&world);
    let checksum = world.snapshot().unwrap().checksum();
    play_on(&mut world);
    assert_ne!(view(&mut world), before);
    world.load_from(&bytes[..]).unwrap();
    assert_eq!(view(&mut world), before);
    assert_eq!(world.snapshot().unwrap().checksum(), checksum);
    // The reference inside a component still names its target.
    for (_, follows) in &before.3 {
        let _ = world.entity(follows.0);
    }
}

#[test]
fn round_trip_into_a_fresh_world_gives_the_same_ids_and_the_next_ones() {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    let bytes = save(&world);
    let checksum = world.snapshot().unwrap().checksum();

    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    assert_eq!(view(&mut fresh), view(&mut world));
    assert_eq!(fresh.snapshot().unwrap().checksum(), checksum);
    assert_eq!(fresh.entities().len(), world.entities().len());
    // The allocator came back too: the next ids are the same.
    for _ in 0..5 {
        assert_eq!(
            fresh.spawn((Pos { x: 0.0, y: 0.0 },)),
            world.spawn((Pos { x: 0.0, y: 0.0 },))
        );
    }
}

#[test]
fn read_snapshot_changes_nothing_until_restored() {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    let bytes = save(&world);
    play_on(&mut world);
    let played = view(&mut world);
    let snapshot: Snapshot = world.read_snapshot(&bytes[..]).unwrap();
    assert_eq!(view(&mut world), played);
    world.restore(&snapshot).unwrap();
    assert_ne!(view(&mut world), played);
}

/// Rewrites the trailing checksum after an edit: a forged save that only
/// the checks after the checksum can refuse.
fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - 8;
    let digest = xxh3(&bytes[..body]);
    bytes[body..].copy_from_slice(&digest.to_le_bytes());
}

fn xxh3(bytes: &[u8]) -> u64 {
    // The checksum of an empty world's save is not what is tested here:
    // the container's trailer is plain xxh3-64, seed 0.
    xxhash_rust::xxh3::xxh3_64(bytes)
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

fn saved_world() -> (World, Vec<u8>) {
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    let bytes = save(&world);
    play_on(&mut world);
    (world, bytes)
}

#[test]
fn a_save_from_another_version_is_refused_naming_both() {
    let (mut world, mut bytes) = saved_world();
    bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
    reseal(&mut bytes);
    let error = unchanged_after(&mut world, |w| w.load_from(&bytes[..]).unwrap_err());
    let LoadError::Version { found, supported } = error else {
        panic!("{error}")
    };
    assert_eq!(found, 99);
    assert_eq!(supported, sluice::snapshot::FORMAT_VERSION);
    assert!(error.to_string().contains("99"), "{error}");
}

#[test]
fn not_a_save_truncated_and_corrupted_are_named() {
    let (mut world, bytes) = saved_world();
    let error = unchanged_after(&mut world, |w| w.load_from(&b"GIF89a..."[..]).unwrap_err());
    assert!(matches!(error, LoadError::NotASave { .. }), "{error}");
    let cut = &bytes[..bytes.len() / 2];
    let error = unchanged_after(&mut world, |w| w.load_from(cut).unwrap_err());
    assert!(matches!(error, LoadError::Truncated { .. }), "{error}");
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    let error = unchanged_after(&mut world, |w| w.load_from(&flipped[..]).unwrap_err());
    assert!(matches!(error, LoadError::Corrupted { .. }), "{error}");
}

#[test]
fn an_unknown_type_is_named() {
    #[derive(Clone, Debug, Serialize, Deserialize)]
    struct Mana(u16);
    let mut world = World::new();
    register(&mut world);
    world.save_component::<Mana>("mana");
    populate(&mut world);
    world.spawn((Mana(3),));
    let bytes = save(&world);

    let mut other = World::new();
    register(&mut other);
    populate(&mut other);
    let error = unchanged_after(&mut other, |w| w.load_from(&bytes[..]).unwrap_err());
    let LoadError::UnknownType { kind, ref name } = error else {
        panic!("{error}")
    };
    assert_eq!((kind, name.as_str()), (SectionKind::Component, "mana"));
}

#[test]
fn a_type_of_another_shape_is_named() {
    /// `Pos` with a third field, saved under the same name.
    #[derive(Clone, Copy, Debug, Serialize, Deserialize)]
    struct Pos3 {
        x: f32,
        y: f32,
        z: f32,
    }
    let (_, bytes) = saved_world();
    let mut other = World::new();
    other
        .save_component::<Pos3>("pos")
        .save_component::<Vel>("vel")
        .save_component::<Name>("name")
        .save_component::<Follows>("follows")
        .save_service::<Score>("score");
    other.spawn((Pos3 {
        x: 1.0,
        y: 2.0,
        z: 3.0,
    },));
    let before = other.snapshot().unwrap().checksum();
    let error = other.load_from(&bytes[..]).unwrap_err();
    let LoadError::Shape { kind, ref name, .. } = error else {
        panic!("{error}")
    };
    assert_eq!((kind, name.as_str()), (SectionKind::Component, "pos"));
    assert_eq!(other.snapshot().unwrap().checksum(), before);
}

/// Serializes as its value, except 13, which panics half-way.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
struct Unlucky(u32);

impl Serialize for Unlucky {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0 == 13 {
            panic!("{} unlucky thirteen", PLANNED);
        }
        serializer.serialize_u32(self.0)
    }
}

#[test]
fn a_serialize_that_panics_writes_nothing_that_loads() {
    quiet_planned_panics();
    let mut world = World::new();
    register(&mut world);
    world.save_component::<Unlucky>("unlucky");
    populate(&mut world);
    for i in 0..20 {
        world.spawn((Unlucky(i),));
    }
    let before = view(&mut world);
    let snapshot = world.snapshot().unwrap();
    let mut bytes = Vec::new();
    let error = snapshot.write_to(&mut bytes).unwrap_err();
    let SaveError::Panicked { kind, ref name, .. } = error else {
        panic!("{error}")
    };
    assert_eq!((kind, name.as_str()), (SectionKind::Component, "unlucky"));
    assert!(error.to_string().contains("unlucky thirteen"), "{error}");
    assert!(world.read_snapshot(&bytes[..]).is_err());
    assert_eq!(view(&mut world), before);
    // The world and the snapshot still work: without the thirteen, it saves.
    let thirteen: Vec<Entity> = world
        .query::<(Entity, &Unlucky)>()
        .iter()
        .filter(|(_, u)| u.0 == 13)
        .map(|(e, _)| e)
        .collect();
    world.despawn(thirteen[0]).unwrap();
    let bytes = save(&world);
    world.load_from(&bytes[..]).unwrap();
}

#[test]
fn a_name_or_a_type_registered_twice_is_refused_by_name() {
    #[derive(Clone, Debug, Serialize, Deserialize)]
    struct Other(u8);
    let mut world = World::new();
    register(&mut world);
    // Registering the same pair again is a no-op.
    register(&mut world);
    let error = world.try_save_component::<Other>("pos").unwrap_err();
    assert!(error.to_string().contains("pos"), "{error}");
    let error = world.try_save_component::<Pos>("position").unwrap_err();
    assert!(error.to_string().contains("position"), "{error}");
    // The unchecked form keeps the first registration and refuses to save
    // until the conflict is gone, naming it.
    world.save_component::<Other>("vel");
    world.spawn((Other(1),));
    let error = world.snapshot().unwrap().write_to(Vec::new()).unwrap_err();
    assert!(matches!(error, SaveError::Registration { .. }), "{error}");
}

/// A few frames of play through systems and commands: movers move,
/// spawners spawn, the doomed despawn.
fn add_game(world: &mut World) {
    world.add_system(
        NodeBuilder::new("move").system(|mut q: Query<'_, (&mut Pos, &Vel)>| {
            q.for_each(|(mut pos, vel)| {
                pos.x += vel.x;
                pos.y += vel.y;
            });
        }),
    );
    world.add_system(NodeBuilder::new("churn").system(
        |commands: Commands<'_>, q: Query<'_, (Entity, &Pos)>, score: &mut Score| {
            for (entity, pos) in q.iter() {
                if pos.x > 40.0 && entity.slot() % 4 == 0 {
                    commands.despawn(entity);
                    score.points += 1;
                }
            }
            commands.spawn((Pos { x: 0.0, y: 1.0 }, Vel { x: 3.0, y: 0.0 }));
        },
    ));
}

#[test]
fn the_checksum_is_the_same_on_every_executor_and_thread_count() {
    let mut runs = Vec::new();
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        register(&mut world);
        populate(&mut world);
        add_game(&mut world);
        let mut sums = Vec::new();
        for _ in 0..FRAMES {
            world.run_iteration().unwrap();
            sums.push(world.snapshot().unwrap().checksum());
        }
        runs.push(((kind, threads), sums));
    }
    let (first, expected) = &runs[0];
    assert!(expected.windows(2).all(|w| w[0] != w[1]), "the game moves");
    for (run, sums) in &runs[1..] {
        assert_eq!(sums, expected, "{run:?} against {first:?}");
    }
}

#[test]
fn divergence_names_the_first_part_and_its_entities() {
    let mut world = World::new();
    register(&mut world);
    let spawned = populate(&mut world);
    let a = world.snapshot().unwrap();
    assert!(a.divergence(&a).is_none());
    assert!(a.divergence(&world.snapshot().unwrap()).is_none());

    let moved = spawned[1];
    world.entity_mut(moved).unwrap().get_mut::<Pos>().unwrap().x = 1e9;
    let b = world.snapshot().unwrap();
    let divergence = a.divergence(&b).unwrap();
    assert_eq!(divergence.kind, SectionKind::Component);
    assert_eq!(divergence.name, "pos");
    assert_eq!(divergence.entities, [moved]);
    assert_eq!(divergence.differing, 1);
    assert!(divergence.to_string().contains("pos"), "{divergence}");

    // Many rows differ: the first 16 are listed, all are counted.
    world.query::<&mut Pos>().for_each(|mut pos| pos.y += 1.0);
    let c = world.snapshot().unwrap();
    let divergence = a.divergence(&c).unwrap();
    assert_eq!(divergence.entities.len(), 16.min(divergence.differing));
    assert_eq!(divergence.differing, world.entities().len());

    // A service alone differs.
    let mut other = World::new();
    register(&mut other);
    populate(&mut other);
    other.get_mut::<Score>().unwrap().points += 1;
    let divergence = a.divergence(&other.snapshot().unwrap()).unwrap();
    assert_eq!(
        (divergence.kind, divergence.name.as_str()),
        (SectionKind::Service, "score")
    );
    assert!(divergence.entities.is_empty());

    // An entity more: the entities part differs first, naming it.
    let extra = other.spawn((Pos { x: 0.0, y: 0.0 },));
    other.get_mut::<Score>().unwrap().points -= 1;
    let divergence = a.divergence(&other.snapshot().unwrap()).unwrap();
    assert_eq!(divergence.kind, SectionKind::Entities);
    assert_eq!(divergence.entities, [extra]);
}

#[test]
fn the_hierarchy_transforms_and_disabled_entities_are_saved_without_registering() {
    use sluice::{ChildOf, Children, Disabled, Transform};
    let mut world = World::new();
    register(&mut world);
    let ship = world.spawn((Pos { x: 1.0, y: 1.0 }, Transform::default()));
    let turrets: Vec<Entity> = (0..3)
        .map(|i| {
            world.spawn((Pos {
                x: i as f32,
                y: 0.0,
            },))
        })
        .collect();
    for &turret in &turrets {
        world.set_parent(turret, ship).unwrap();
    }
    world
        .entity_mut(turrets[1])
        .unwrap()
        .insert((Disabled,))
        .unwrap();
    let bytes = save(&world);

    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    let children = fresh
        .entity(ship)
        .unwrap()
        .get::<Children>()
        .unwrap()
        .clone();
    assert_eq!(children.as_slice(), turrets);
    for &turret in &turrets {
        let parent = fresh
            .entity(turret)
            .unwrap()
            .get::<ChildOf>()
            .unwrap()
            .parent();
        assert_eq!(parent, ship);
    }
    assert!(fresh.entity(turrets[1]).unwrap().has::<Disabled>());
    assert_eq!(
        fresh.entity(ship).unwrap().get::<Transform>(),
        Some(&Transform::default())
    );
    // The hierarchy works after the load: despawning the ship takes its
    // turrets with it.
    fresh.despawn(ship).unwrap();
    assert!(turrets.iter().all(|&t| fresh.entity(t).is_none()));
}

/// The byte range of the payload of the section saved as `name`.
fn payload_of(bytes: &[u8], name: &str) -> std::ops::Range<usize> {
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    let mut at = 16;
    for _ in 0..count {
        let name_len = u16::from_le_bytes(bytes[at + 1..at + 3].try_into().unwrap()) as usize;
        let section = &bytes[at + 3..at + 3 + name_len];
        let len_at = at + 3 + name_len;
        let len = u64::from_le_bytes(bytes[len_at..len_at + 8].try_into().unwrap()) as usize;
        if section == name.as_bytes() {
            return len_at + 8..len_at + 8 + len;
        }
        at = len_at + 8 + len;
    }
    panic!("no section {name}");
}

#[test]
fn a_forged_hierarchy_is_refused() {
    let mut world = World::new();
    register(&mut world);
    let parent = world.spawn((Pos { x: 0.0, y: 0.0 },));
    let stranger = world.spawn((Pos { x: 1.0, y: 0.0 },));
    let child = world.spawn((Pos { x: 2.0, y: 0.0 },));
    world.set_parent(child, parent).unwrap();
    let mut bytes = save(&world);
    // The child's ChildOf names the stranger, whose Children does not
    // list it (both ids take 5 bytes: generation 1).
    let payload = payload_of(&bytes, "sluice::ChildOf");
    let mut id = Vec::new();
    let mut value = stranger.id();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            id.push(byte);
            break;
        }
        id.push(byte | 0x80);
    }
    let at = payload.start + 1;
    bytes[at..at + id.len()].copy_from_slice(&id);
    reseal(&mut bytes);
    let mut fresh = World::new();
    register(&mut fresh);
    let error = unchanged_after(&mut fresh, |w| w.load_from(&bytes[..]).unwrap_err());
    assert!(matches!(error, LoadError::Inconsistent { .. }), "{error}");
    assert!(error.to_string().contains("ChildOf"), "{error}");
}

#[test]
fn sparse_set_components_and_frozen_entities_come_back() {
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    struct Stunned(u8);
    let build = || {
        let mut world = World::new();
        register(&mut world);
        world
            .register_component::<Stunned>(sluice::StorageType::SparseSet)
            .unwrap();
        world.save_component::<Stunned>("stunned");
        world
    };
    let mut world = build();
    let spawned = populate(&mut world);
    let live: Vec<Entity> = spawned
        .iter()
        .copied()
        .filter(|&e| world.entity(e).is_some())
        .collect();
    for (i, &entity) in live.iter().enumerate().step_by(3) {
        world
            .entity_mut(entity)
            .unwrap()
            .insert((Stunned(i as u8),))
            .unwrap();
    }
    world.freeze(live[1]).unwrap();
    let bytes = save(&world);
    let stunned = |world: &mut World| {
        let mut rows: Vec<(Entity, Stunned)> = world
            .query::<(Entity, &Stunned)>()
            .iter()
            .map(|(e, s)| (e, *s))
            .collect();
        rows.sort_by_key(|(e, _)| *e);
        rows
    };
    let mut fresh = build();
    fresh.load_from(&bytes[..]).unwrap();
    assert!(!stunned(&mut world).is_empty());
    assert_eq!(stunned(&mut fresh), stunned(&mut world));
    assert_eq!(view(&mut fresh), view(&mut world));
    assert!(fresh.entity(live[1]).unwrap().is_frozen());
    assert!(!fresh.entity(live[0]).unwrap().is_frozen());
    assert_eq!(
        fresh.snapshot().unwrap().checksum(),
        world.snapshot().unwrap().checksum()
    );
}

#[test]
fn rows_left_out_or_not_registered_for_saving_refuse_the_save_by_name() {
    // Sized, so that their rows are state (the byte is never read).
    #[derive(Clone, Debug)]
    struct Secret(#[allow(dead_code)] u8);
    #[derive(Clone, Debug)]
    struct Cached(#[allow(dead_code)] u8);
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    // Opted into snapshots, not into saves.
    world.snapshot_component::<Cached>();
    world.spawn((Secret(1), Cached(2)));
    let snapshot = world.snapshot().unwrap();
    let error = snapshot.write_to(Vec::new()).unwrap_err();
    let SaveError::NotSaved { ref names } = error else {
        panic!("{error}")
    };
    let secret = std::any::type_name::<Secret>();
    let cached = std::any::type_name::<Cached>();
    assert!(names.iter().any(|n| n == secret), "{names:?}");
    assert!(names.iter().any(|n| n == cached), "{names:?}");
    assert!(snapshot.not_saved().contains(&cached));
    assert!(error.to_string().contains("Secret"), "{error}");
}

#[test]
fn the_clocks_come_back_with_a_load() {
    use std::time::Duration;
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    world.set_fixed_timestep(Duration::from_millis(10));
    for _ in 0..3 {
        world.update(Duration::from_millis(16)).unwrap();
    }
    let clock = world.clock_snapshot();
    assert!(clock.fixed_accumulated() > Duration::ZERO);
    let bytes = save(&world);
    for _ in 0..4 {
        world.update(Duration::from_millis(7)).unwrap();
    }
    assert_ne!(world.clock_snapshot(), clock);
    world.load_from(&bytes[..]).unwrap();
    assert_eq!(world.clock_snapshot(), clock);
    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    assert_eq!(fresh.clock_snapshot(), clock);
    assert_eq!(
        fresh.get::<sluice::FixedTime>(),
        world.get::<sluice::FixedTime>()
    );
}

#[test]
fn the_checksum_ignores_ticks_and_sees_every_value() {
    let mut world = World::new();
    register(&mut world);
    let spawned = populate(&mut world);
    let before = world.snapshot().unwrap().checksum();
    // The same value written again: its changed tick moves, the state not.
    let target = spawned[1];
    let pos = *world.entity(target).unwrap().get::<Pos>().unwrap();
    *world.entity_mut(target).unwrap().get_mut::<Pos>().unwrap() = pos;
    world.run_iteration().unwrap();
    assert_eq!(world.snapshot().unwrap().checksum(), before);
    // One bit of one float: another checksum.
    world
        .entity_mut(target)
        .unwrap()
        .get_mut::<Pos>()
        .unwrap()
        .y = f32::from_bits(pos.y.to_bits() ^ 1);
    assert_ne!(world.snapshot().unwrap().checksum(), before);
}

#[test]
fn the_checksum_of_a_small_world_is_pinned() {
    // Fixed state, fixed checksum, on every machine: a change of the
    // checksum's scheme (its parts, their fixed-width encoding, how their
    // hashes combine) shows here, and peers on two builds would disagree.
    for (kind, threads) in executors() {
        let mut world = world_on(kind, threads);
        world
            .save_component::<Pos>("pos")
            .save_component::<Name>("name")
            .save_service::<Score>("score");
        world.spawn((Pos { x: 1.5, y: -2.0 },));
        let gone = world.spawn((Pos { x: 0.0, y: 3.0 }, Name("b".into())));
        world.spawn((Name("c".into()),));
        world.despawn(gone).unwrap();
        world.insert(Score {
            points: 7,
            log: vec!["first".into()],
        });
        world.run_iteration().unwrap();
        let checksum = world.snapshot().unwrap().checksum();
        assert_eq!(
            checksum, PINNED_CHECKSUM,
            "{kind:?} on {threads} threads: {checksum:#018x}"
        );
    }
    // An empty snapshot's is the xxh3-64 of nothing.
    assert_eq!(Snapshot::new().checksum(), 0x2D06_8005_38D3_94C2);
}

/// The checksum of `the_checksum_of_a_small_world_is_pinned`'s world.
const PINNED_CHECKSUM: u64 = 0xDC0B_F53C_D4FF_A9E9;

/// Serializes as its value, except 0, which fails.
#[derive(Clone, Copy, Debug, Deserialize)]
struct Refused(u8);

impl Serialize for Refused {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0 == 0 {
            return Err(serde::ser::Error::custom("zero is not saved"));
        }
        serializer.serialize_u8(self.0)
    }
}

/// A writer that fails after `left` bytes.
struct Full {
    left: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("the disk is full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A reader that fails at once.
struct Unplugged;

impl std::io::Read for Unplugged {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("the drive is gone"))
    }
}

#[test]
fn encoder_and_io_errors_are_named() {
    let mut world = World::new();
    register(&mut world);
    world.save_component::<Refused>("refused");
    populate(&mut world);
    let zero = world.spawn((Refused(0),));
    let error = world.snapshot().unwrap().write_to(Vec::new()).unwrap_err();
    let SaveError::Encode { kind, ref name, .. } = error else {
        panic!("{error}")
    };
    assert_eq!((kind, name.as_str()), (SectionKind::Component, "refused"));
    // postcard keeps no custom message: the type's save name is the lead.
    assert!(error.to_string().contains("`refused`"), "{error}");
    world.despawn(zero).unwrap();

    let snapshot = world.snapshot().unwrap();
    for left in [0, 10, 100] {
        let error = snapshot.write_to(Full { left }).unwrap_err();
        assert!(matches!(error, SaveError::Io(_)), "{error}");
    }
    let error = unchanged_after(&mut world, |w| w.load_from(Unplugged).unwrap_err());
    assert!(matches!(error, LoadError::Io(_)), "{error}");
    assert!(error.to_string().contains("the drive is gone"), "{error}");
}

#[test]
fn a_large_world_round_trips() {
    let count: u32 = if cfg!(miri) { 40 } else { 50_000 };
    let mut world = World::new();
    register(&mut world);
    let spawned: Vec<Entity> = (0..count)
        .map(|i| {
            world.spawn((
                Pos {
                    x: i as f32,
                    y: 0.5,
                },
                Vel { x: 0.0, y: 1.0 },
            ))
        })
        .collect();
    for entity in spawned.iter().step_by(3) {
        world.despawn(*entity).unwrap();
    }
    let bytes = save(&world);
    let mut fresh = World::new();
    register(&mut fresh);
    fresh.load_from(&bytes[..]).unwrap();
    assert_eq!(fresh.entities().len(), world.entities().len());
    assert_eq!(view(&mut fresh), view(&mut world));
    assert_eq!(
        fresh.snapshot().unwrap().checksum(),
        world.snapshot().unwrap().checksum()
    );
}

#[test]
fn message_queues_are_named_as_not_saved_and_left_as_they_are() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Hit(u32);
    let mut world = World::new();
    register(&mut world);
    populate(&mut world);
    world.snapshot_messages::<Hit>();
    world.add_system(
        NodeBuilder::new("shout").system(|hits: sluice::Publish<'_, Hit>| hits.send(Hit(7))),
    );
    world.run_iteration().unwrap();
    let snapshot = world.snapshot().unwrap();
    let hit = std::any::type_name::<Hit>();
    assert!(
        snapshot.not_saved().iter().any(|name| name.contains(hit)),
        "{:?}",
        snapshot.not_saved()
    );
    let mut bytes = Vec::new();
    snapshot.write_to(&mut bytes).unwrap();
    let queued = world.messages_mut::<Hit>().len();
    world.run_iteration().unwrap();
    let after = world.messages_mut::<Hit>().len();
    world.load_from(&bytes[..]).unwrap();
    assert_eq!(world.messages_mut::<Hit>().len(), after, "{queued} before");
}

/// Two peers whose plugin sets differ (issue 39's hostile list).
///
/// One adds a `Wind` plugin the other lacks, which keeps its count in a
/// `Local` (not saved state). Run in lockstep, their checksums agree until
/// the wind first blows, and the divergence report names the part (`vel`)
/// and exactly the entities the wind touched. A third peer's `Tags` plugin
/// saves a component type of its own: its save is refused by the plain
/// peer, naming the type, and changes nothing there.
#[test]
fn peers_with_different_plugin_sets_diverge_by_name() {
    use sluice::Local;
    use sluice::plugin::Plugin;

    /// Every peer: the units move.
    struct Movement;
    impl Plugin for Movement {
        fn build(&self, world: &mut World) {
            register(world);
            world.add_system(NodeBuilder::new("move").system(
                |mut q: Query<'_, (&mut Pos, &Vel)>| {
                    q.for_each(|(mut pos, vel)| {
                        pos.x += vel.x;
                        pos.y += vel.y;
                    });
                },
            ));
        }
    }

    /// From its third run on, a gust halves the speed of the units right
    /// of x = 100.
    struct Wind;
    impl Plugin for Wind {
        fn build(&self, world: &mut World) {
            world.add_system(NodeBuilder::new("wind").system(
                |mut runs: Local<u32>, mut q: Query<'_, (&Pos, &mut Vel)>| {
                    *runs += 1;
                    if *runs >= 3 {
                        q.for_each(|(pos, mut vel)| {
                            if pos.x > 100.0 {
                                vel.x *= 0.5;
                            }
                        });
                    }
                },
            ));
        }
    }

    /// Saves a component type the other peers do not know.
    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    struct Tag(u8);
    struct Tags;
    impl Plugin for Tags {
        fn build(&self, world: &mut World) {
            world.save_component::<Tag>("tag");
        }
    }

    let mut plain = World::new();
    plain.add_plugin(Movement).unwrap();
    let mut windy = World::new();
    windy.add_plugins((Movement, Wind)).unwrap();
    populate(&mut plain);
    populate(&mut windy);

    let mut first_difference = None;
    for frame in 0..FRAMES.max(4) {
        let (ours, theirs) = (plain.snapshot().unwrap(), windy.snapshot().unwrap());
        if ours.checksum() != theirs.checksum() {
            let divergence = ours.divergence(&theirs).expect("the checksums differ");
            first_difference = Some((frame, divergence));
            break;
        }
        plain.run_iteration().unwrap();
        windy.run_iteration().unwrap();
    }
    let (frame, divergence) = first_difference.expect("the wind makes the peers diverge");
    // The wind first blows in the third iteration: seen after it.
    assert_eq!(frame, 3, "{divergence}");
    assert_eq!(
        (divergence.kind, divergence.name.as_str()),
        (SectionKind::Component, "vel"),
        "{divergence}"
    );
    // The wind ran after or before the move: either way it touched the
    // units right of 100 at the start or the end of that iteration.
    let mut blown: Vec<Entity> = windy
        .query::<(Entity, &Vel)>()
        .iter()
        .filter(|(_, vel)| vel.x != 1.0)
        .map(|(entity, _)| entity)
        .collect();
    blown.sort();
    assert!(!blown.is_empty());
    assert_eq!(divergence.differing, blown.len(), "{divergence}");
    let listed = blown.len().min(16);
    assert_eq!(divergence.entities[..], blown[..listed], "{divergence}");

    // A peer with a saved type of its own: its save is refused by name.
    let mut tagged = World::new();
    tagged.add_plugins((Movement, Tags)).unwrap();
    let units = populate(&mut tagged);
    tagged
        .entity_mut(units[1])
        .unwrap()
        .insert((Tag(7),))
        .unwrap();
    let before = plain.snapshot().unwrap().checksum();
    let error = plain.load_from(&save(&tagged)[..]).unwrap_err();
    assert!(
        matches!(&error, LoadError::UnknownType { name, .. } if name == "tag"),
        "{error}"
    );
    assert_eq!(plain.snapshot().unwrap().checksum(), before);
}
