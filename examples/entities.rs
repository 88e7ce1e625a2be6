//! The guide's chapter "Entities and queries" (`docs/guide/04-entities-and-queries.md`), runnable:
//! `cargo run --example entities`.
//!
//! A squad of units steering after a frozen captain through a
//! `ComponentRef`, moved by a parallel query, damaged, despawned and
//! respawned through `Commands`. The same frames run on one thread and on
//! four, and give the same entities with the same ids. Then the query
//! vocabulary: a `Single` camera skipped until there is one player, a
//! `Populated` system skipped while nothing matches, `Has`, and the
//! captain's squad pulling on each other pair by pair
//! (`iter_combinations_mut`). Last, a `Stunned` marker kept in a sparse
//! set (`StorageType::SparseSet`) that comes and goes every frame without
//! moving any unit's row.

use sluice::exec::ThreadPool;
use sluice::{
    Changed, Commands, ComponentRef, Entity, Has, IterationError, NodeBuilder, Populated, Query,
    Single, Target, With, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
struct Vel(f32);
struct Hp(i32);
/// Where the unit's captain stands, read through its `ComponentRef<Pos>`.
struct Aim(f32);
/// Names the unit that replaced a fallen one.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Replaces(Entity);
/// Counts the units whose `Pos` changed in the last frame.
struct Moved(usize);

const UNITS: usize = 2_000;

/// Runs seven frames on a pool of `threads` and returns every unit's id,
/// position and replacement link, sorted by id.
fn battle(threads: usize) -> Result<Vec<(Entity, Pos, Option<Replaces>)>, IterationError> {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("a pool"));
    world.insert(Moved(0));
    let captain = world.spawn((Pos(100.0),));
    world.freeze(captain).expect("alive"); // a frozen entity never changes archetype
    let aim = ComponentRef::<Pos>::new(&world, captain).expect("frozen");
    world.spawn_batch(
        (0..UNITS).map(|i| (Pos(i as f32), Vel(1.0), Hp(i as i32 % 10), Aim(0.0), aim)),
    );

    world.add_system(NodeBuilder::new("steer").system(
        |mut units: Query<(&mut Aim, Target<Pos>)>| {
            units.for_each(|(mut aim, captain)| aim.0 = captain.map_or(0.0, |p| p.0));
        },
    ));
    world.add_system(NodeBuilder::new("move").after("steer").system(
        |mut units: Query<(&mut Pos, &Vel, &Aim), With<Hp>>| {
            units.par_for_each(|(mut pos, vel, aim)| pos.0 += vel.0 * (aim.0 - pos.0).signum());
        },
    ));
    world.add_system(NodeBuilder::new("wound").after("move").system(
        |mut units: Query<&mut Hp>| {
            units.for_each(|mut hp| hp.0 -= 1);
        },
    ));
    world.add_system(
        NodeBuilder::new("count_moved").after("move").system(
            |moved: Query<Entity, Changed<Pos>>, count: &mut Moved| count.0 = moved.count(),
        ),
    );
    // Structural changes land at the boundary, in plan order then record order.
    world.add_system(NodeBuilder::new("reap").after("wound").system(
        |units: Query<(Entity, &Hp, &Pos)>, commands: Commands<'_>| {
            for (unit, hp, pos) in units.iter() {
                if hp.0 < 0 {
                    commands.despawn(unit);
                    let fresh = commands.spawn((*pos, Vel(2.0), Hp(5)));
                    commands.entity(fresh).insert((Replaces(unit), Aim(0.0)));
                }
            }
        },
    ));

    for _ in 0..5 {
        world.run_iteration()?;
    }
    assert_eq!(world.get::<Moved>().map(|m| m.0), Some(UNITS));

    // A command naming an entity that is gone is refused, by name; the rest lands.
    world.despawn(captain).expect("alive");
    world.add_system(
        NodeBuilder::new("late_order").system(move |commands: Commands<'_>| {
            commands.entity(captain).insert((Hp(1),));
        }),
    );
    match world.run_iteration() {
        Err(IterationError::Boundary(failures)) => {
            if threads == 1 {
                println!("refused at the boundary: {}", failures[0]);
            }
            assert!(failures.iter().all(|f| f.refused_because().is_some()));
        }
        other => panic!("expected the late order to be refused, got {other:?}"),
    }
    world.add_system(NodeBuilder::new("check_aim").after("move").system(
        |units: Query<Target<Pos>>| {
            assert!(
                units.iter().all(|captain| captain.is_none()),
                "a despawned target reads None"
            );
        },
    ));
    let _ = world.run_iteration(); // the late order is refused again: only `check_aim` matters

    let mut units: Vec<(Entity, Pos, Option<Replaces>)> = world
        .query::<(Entity, &Pos, Option<&Replaces>)>()
        .iter()
        .map(|(e, pos, replaces)| (e, *pos, replaces.copied()))
        .collect();
    units.sort_by_key(|(e, _, _)| e.id());
    Ok(units)
}

/// Where the camera looks: the one player's position.
struct Camera(f32);
struct Player;
/// How many frames the medic ran (it needs someone wounded).
struct Medic(u32);
struct Wounded;

/// The query vocabulary on `threads` threads: returns the camera's
/// position, the medic's runs and the pair forces.
fn vocabulary(threads: usize) -> Result<(f32, u32, Vec<f32>), IterationError> {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("a pool"));
    world.insert(Camera(-1.0));
    world.insert(Medic(0));
    let squad: Vec<Entity> = (0..5)
        .map(|i| world.spawn((Pos(i as f32 * i as f32), Vel(0.0))))
        .collect();
    world.add_system(
        NodeBuilder::new("camera")
            .system(|player: Single<&Pos, With<Player>>, camera: &mut Camera| camera.0 = player.0),
    );
    world.add_system(NodeBuilder::new("medic").system(
        |wounded: Populated<(Entity, Has<Player>), With<Wounded>>, medic: &mut Medic| {
            assert!(wounded.iter().all(|(_, is_player)| !is_player));
            medic.0 += 1;
        },
    ));
    // Every pair once: each pulls the other towards it (velocities add up
    // to zero, as forces between pairs do).
    world.add_system(
        NodeBuilder::new("cohesion").system(|mut squad: Query<(&Pos, &mut Vel)>| {
            let mut pairs = squad.iter_combinations_mut();
            while let Some([(a, mut va), (b, mut vb)]) = pairs.fetch_next() {
                let pull = (b.0 - a.0).signum();
                va.0 += pull;
                vb.0 -= pull;
            }
        }),
    );
    world.run_iteration()?; // no player, nobody wounded: camera and medic skipped
    world
        .entity_mut(squad[2])
        .unwrap()
        .insert((Player,))
        .unwrap();
    world
        .entity_mut(squad[4])
        .unwrap()
        .insert((Wounded,))
        .unwrap();
    world.run_iteration()?;
    let forces = world
        .query::<&Vel>()
        .get_many([squad[0], squad[4]])
        .expect("alive")
        .map(|v| v.0);
    Ok((
        world.get::<Camera>().unwrap().0,
        world.get::<Medic>().unwrap().0,
        forces.to_vec(),
    ))
}

fn main() -> Result<(), IterationError> {
    let (camera, medic, forces) = vocabulary(1)?;
    println!("camera on the player at {camera}, medic ran {medic} time(s), end forces {forces:?}");
    assert_eq!((camera, medic), (4.0, 1));
    assert_eq!(forces, [8.0, -8.0]); // two frames, four pulls each
    assert_eq!(vocabulary(4)?, (camera, medic, forces));

    let one = battle(1)?;
    let four = battle(4)?;
    let replaced = one.iter().filter(|(_, _, r)| r.is_some()).count();
    println!(
        "{} units after seven frames, {replaced} of them replacements",
        one.len()
    );
    if let Some((unit, pos, Some(Replaces(fallen)))) = one.iter().find(|(_, _, r)| r.is_some()) {
        println!("e.g. {unit:?} at {:.1} replaced {fallen:?}", pos.0);
    }
    assert_eq!(one.len(), UNITS);
    assert_eq!(replaced, UNITS / 10 * 7); // hp 0..=6 fell within seven frames
    assert!(one == four, "one thread and four give the same entities");
    println!("1 thread and 4 threads: the same ids, positions and links");
    change_detection()?;
    let (one, four) = (stuns(1)?, stuns(4)?);
    println!("sparse-set stuns, stunned per frame: {one:?}");
    assert_eq!(one, [0, 50, 34, 25]); // hp divisible by 2, 3, 4 the frame before
    assert_eq!(one, four, "one thread and four stun the same units");
    Ok(())
}

/// A `Stunned` marker in a sparse set: every frame a system stuns the
/// units whose hp is a multiple of the frame number and a later system
/// wakes them; the units never change archetype. The stunned count of
/// each frame, on a pool of `threads`.
fn stuns(threads: usize) -> Result<Vec<usize>, IterationError> {
    use sluice::StorageType;
    struct Stunned;
    struct Frame(i32);
    struct Counts(Vec<usize>);
    let mut world = World::with_pool(ThreadPool::new(threads).expect("a pool"));
    world
        .register_component::<Stunned>(StorageType::SparseSet)
        .expect("not used before");
    world.insert(Frame(0));
    world.insert(Counts(Vec::new()));
    let units = world.spawn_batch((0..100).map(|hp| (Hp(hp), Pos(0.0))));
    let archetype = world.entities().archetype_of(units[0]);
    // Registered first, so its command lands first at each boundary: last
    // frame's stuns wear off before this frame's land.
    world.add_system(NodeBuilder::new("wake").system(|commands: Commands| {
        commands.queue(|world: &mut World| {
            let stunned: Vec<Entity> = world
                .query_filtered::<Entity, With<Stunned>>()
                .iter()
                .collect();
            for unit in stunned {
                let mut unit = world.entity_mut(unit).expect("alive");
                unit.remove::<(Stunned,)>().expect("stunned");
            }
        });
    }));
    world.add_system(NodeBuilder::new("stun").system(
        |units: Query<(Entity, &Hp)>, frame: &mut Frame, commands: Commands| {
            frame.0 += 1;
            for (unit, _) in units.iter().filter(|(_, hp)| hp.0 % (frame.0 + 1) == 0) {
                commands.entity(unit).insert((Stunned,));
            }
        },
    ));
    world.add_system(NodeBuilder::new("count").system(
        |stunned: Query<&Hp, With<Stunned>>, counts: &mut Counts| {
            counts.0.push(stunned.count());
        },
    ));
    for _ in 0..4 {
        world.run_iteration()?;
    }
    assert!(
        units
            .iter()
            .all(|&unit| world.entities().archetype_of(unit) == archetype),
        "a sparse marker moves no unit"
    );
    Ok(world.get::<Counts>().expect("inserted").0.clone())
}

/// Change detection: a poison system handed every `Hp` writes a third of
/// them, and `Changed<Hp>` reports exactly those; a `Tracked` service
/// reader and `service_changed` see a service change once.
fn change_detection() -> Result<(), IterationError> {
    struct Poisoned(Vec<Entity>);
    struct Difficulty(u8);
    struct Retuned(u32);

    for threads in [1, 4] {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("a pool"));
        let units = world.spawn_batch((0..30).map(|i| (Hp(i),)));
        world.insert(Poisoned(Vec::new()));
        world.insert(Difficulty(1));
        world.insert(Retuned(0));
        world.add_system(NodeBuilder::new("poison").system(|mut q: Query<&mut Hp>| {
            q.par_for_each(|mut hp| {
                if hp.0 % 3 == 0 {
                    hp.0 += 3; // marks this row; the others are only read
                }
            });
        }));
        world.add_system(NodeBuilder::new("watch").after("poison").system(
            |changed: Query<Entity, Changed<Hp>>, log: &mut Poisoned| {
                log.0 = changed.iter().collect();
            },
        ));
        world.add_system(
            NodeBuilder::new("retune")
                .system(
                    |difficulty: sluice::Tracked<Difficulty>, retuned: &mut Retuned| {
                        assert!(difficulty.is_changed());
                        retuned.0 += u32::from(difficulty.0);
                    },
                )
                .run_if(sluice::service_changed::<Difficulty>),
        );
        world.run_iteration()?;
        world.run_iteration()?;
        let poisoned = world.get::<Poisoned>().expect("inserted").0.len();
        let thirds: Vec<Entity> = units.iter().copied().step_by(3).collect();
        assert_eq!(
            world.get::<Poisoned>().expect("inserted").0,
            thirds,
            "exactly the rows written"
        );
        world.get_mut::<Difficulty>().expect("inserted").0 = 2;
        world.run_iteration()?;
        world.run_iteration()?;
        assert_eq!(world.get::<Retuned>().expect("inserted").0, 1 + 2);
        if threads == 1 {
            println!(
                "change detection: {} of {} rows written and reported; the service retuned twice",
                poisoned,
                units.len()
            );
        }
    }
    Ok(())
}
