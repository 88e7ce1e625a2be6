//! Snapshots, saves and rollback (the guide's chapter "Snapshots, saves
//! and rollback", `docs/guide/19-snapshots-saves-and-rollback.md`),
//! runnable: `cargo run --example snapshots`.
//!
//! A skirmish in miniature: two squads trade shots each frame, and a
//! medic (a step script, its store opted into snapshots with
//! `World::insert_scripts`) heals red every other frame. The example
//! snapshots the world, plays on (units fall, one is despawned, a
//! reinforcement spawns), restores the snapshot and shows the world back as
//! it was, ids and all; then rolls back three frames with a rollback
//! buffer and replays them to the same checksum; shows an incremental
//! capture keeping what a frame did not change; then saves the world to a
//! file, spoils it, loads the file back, and shows a truncated file
//! refused with the world untouched; last, a new world (as a new process
//! would build it) loads the file, the `Local` counting volleys
//! (`World::save_local`) counts on from the saved count, the medic
//! (its store saved with `World::save_scripts`, its type with
//! `World::save_step_script`) heals on the frames it would have, and the
//! herald reads the flag's morale through its `ComponentRef` again
//! (`World::save_component_ref`: saved as the flag's entity, bound again
//! to the new world's store by the load).

use std::fs::File;
use std::io::{BufReader, BufWriter};

use serde::{Deserialize, Serialize};
use sluice::prelude::*;
use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
use sluice::{ComponentRef, RollbackBuffer};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Hp(i32);
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Squad(u8);
/// Whom a unit shoots at: an entity id inside a component, valid again
/// after a restore because ids come back as they were.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Target(Entity);
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Frame(u64);
/// The flag's morale: the flag is frozen, so a herald can hold a
/// `ComponentRef<Morale>` to it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Morale(i32);

/// The medic's scripts: they see nothing, and ask for heals.
struct Medics;
impl ScriptKind for Medics {
    type View<'v> = ();
    type Intent = i32;
}

/// Heals red for 3 every other frame: its state is data, so a snapshot
/// captures it (and the rollback below rolls it back), and a save writes
/// it down (serde).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Medic {
    ticks: u32,
}

impl StepScript<Medics> for Medic {
    fn step(&mut self, cx: &mut Step<'_, '_, Medics>) -> Wait<Medics> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(2) {
            cx.emit(3);
        }
        Wait::NextTick
    }
}

/// The living units, by id, with their hit points and targets.
fn roster(world: &mut World) -> Vec<(Entity, i32, Entity)> {
    let mut units: Vec<_> = world
        .query::<(Entity, &Hp, &Target)>()
        .iter()
        .map(|(e, hp, target)| (e, hp.0, target.0))
        .collect();
    units.sort_by_key(|u| u.0);
    units
}

fn show(label: &str, world: &mut World) {
    let frame = world.get::<Frame>().map_or(0, |f| f.0);
    println!("{label} (frame {frame}):");
    for (unit, hp, target) in roster(world) {
        println!("  {unit}: hp {hp:>3}, aims at {target}");
    }
}

/// How many volleys were fired, kept by the `volleys` system in a
/// `Local` and shown here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Volleys(u32);

/// The registrations a game makes at every start: the types it saves and
/// its systems. A new process calls it again before loading a save.
fn skirmish_world() -> World {
    let mut world = World::new();
    world
        .save_component::<Hp>("Hp")
        .save_component::<Squad>("Squad")
        .save_component::<Target>("Target")
        .save_component::<Morale>("Morale")
        // Each reference saved as the flag's entity, bound on load.
        .save_component_ref::<Morale>("Herald")
        .save_service::<Frame>("Frame")
        .save_service::<Volleys>("Volleys")
        // A save holds the `volleys` node's count by its name.
        .save_local::<u32>("volleys")
        // And the medic's store, its medic by the type's save name.
        .save_scripts::<Medics>("medics")
        .save_step_script::<Medics, Medic>("medic")
        .set_snapshot_strict(true);
    world.insert(Frame::default());
    world.insert(Volleys::default());
    add_fire(&mut world);
    world.add_system(NodeBuilder::new("volleys").system(
        |mut fired: Local<u32>, shown: &mut Volleys| {
            *fired += 1;
            shown.0 = *fired;
        },
    ));
    world
}

/// Each frame every unit hits its target for 7 (squad 1 for 5), and the
/// medic heals red.
fn add_fire(world: &mut World) {
    world.add_system(NodeBuilder::new("fire").system(
        |shooters: Query<(&Squad, &Target)>, mut hp: Query<&mut Hp>, frame: &mut Frame| {
            frame.0 += 1;
            let shots: Vec<(Entity, i32)> = shooters
                .iter()
                .map(|(squad, target)| (target.0, if squad.0 == 0 { 7 } else { 5 }))
                .collect();
            for (target, damage) in shots {
                if let Ok(mut hp) = hp.get_mut(target) {
                    hp.0 -= damage;
                }
            }
        },
    ));
    // The medic: gathered after the shots, its heals applied to red.
    world.insert(SimClock::new());
    let mut medics = Scripts::<Medics>::new();
    medics.start_step("medic", Medic { ticks: 0 });
    world.insert_scripts(medics);
    world.add_system(
        NodeBuilder::new("medic.gather")
            .after("fire")
            .system(|scripts: &mut Scripts<Medics>, clock: &SimClock| scripts.gather(clock, &())),
    );
    world.add_system(NodeBuilder::new("medic.heal").after("medic.gather").system(
        |scripts: &mut Scripts<Medics>, mut units: Query<(&Squad, &mut Hp)>| {
            for (_medic, heal) in scripts.drain_intents() {
                units.for_each(|(squad, mut hp)| {
                    if squad.0 == 0 {
                        hp.0 += heal;
                    }
                });
            }
        },
    ));
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = skirmish_world();

    // Two squads of three, each unit aiming at its opposite number.
    let red: Vec<Entity> = (0..3).map(|_| world.spawn((Hp(100), Squad(0)))).collect();
    let blue: Vec<Entity> = (0..3).map(|_| world.spawn((Hp(100), Squad(1)))).collect();
    for (&r, &b) in red.iter().zip(&blue) {
        world.entity_mut(r).unwrap().insert((Target(b),))?;
        world.entity_mut(b).unwrap().insert((Target(r),))?;
    }
    // Red's flag, frozen, and a herald who reads its morale.
    let flag = world.spawn((Morale(80),));
    world.freeze(flag)?;
    let herald = world.spawn((ComponentRef::<Morale>::new(&world, flag)?,));
    world.run_iteration()?;
    show("the skirmish", &mut world);

    // 1. Snapshot, play on, restore.
    let snapshot = world.snapshot()?;
    println!(
        "\nsnapshot: {} entities, {} bytes held, left out: {:?}",
        snapshot.entity_count(),
        snapshot.heap_bytes(),
        snapshot.report().left_out().collect::<Vec<_>>()
    );
    for _ in 0..3 {
        world.run_iteration()?;
    }
    let reinforcement = world.spawn((Hp(60), Squad(1), Target(red[1])));
    world.despawn(red[0])?;
    show(
        "\nplayed on, a reinforcement, red's first unit despawned",
        &mut world,
    );

    world.restore(&snapshot)?;
    show("\nrestored", &mut world);
    assert!(world.entity(red[0]).is_some(), "the despawned unit is back");
    assert!(
        world.entity(reinforcement).is_none(),
        "the reinforcement never was"
    );
    let next = world.spawn((Hp(1), Squad(0), Target(blue[0])));
    println!("the next id spawned is {next}, the reinforcement's, as after the snapshot");
    assert_eq!(next, reinforcement);
    world.despawn(next)?;
    world.restore(&snapshot)?;

    // 2. Roll back three frames and replay them: the same checksum.
    let mut buffer = RollbackBuffer::new(8);
    for frame in 0..6 {
        buffer.save(frame, &world)?;
        world.run_iteration()?;
    }
    buffer.save(6, &world)?;
    let checksum = buffer.get(6).expect("kept").checksum();
    buffer.load(3, &mut world)?;
    for frame in 3..6 {
        buffer.save(frame, &world)?;
        world.run_iteration()?;
    }
    let replayed = world.snapshot()?.checksum();
    println!("\nframe 6's checksum {checksum:016x}, after a 3-frame rollback {replayed:016x}");
    assert_eq!(checksum, replayed);

    // 2b. A snapshot reused frame after frame copies only what changed:
    // the frame writes `Hp`; `Squad`, `Target`, `Morale` and the herald's
    // reference are kept as they were.
    let mut steady = sluice::Snapshot::new();
    world.snapshot_into(&mut steady)?;
    world.run_iteration()?;
    world.snapshot_into(&mut steady)?;
    println!(
        "an incremental capture kept {} of 5 component types (all but Hp)",
        steady.reused_components()
    );
    assert_eq!(steady.reused_components(), 4);

    // 3. Save to a file and load it back.
    let dir = std::env::temp_dir().join(format!("sluice-snapshots-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("skirmish.save");
    world
        .snapshot()?
        .write_to(BufWriter::new(File::create(&path)?))?;
    println!(
        "\nsaved to {} ({} bytes)",
        path.display(),
        std::fs::metadata(&path)?.len()
    );
    let saved = roster(&mut world);
    for _ in 0..4 {
        world.run_iteration()?;
    }
    world.load_from(BufReader::new(File::open(&path)?))?;
    show("loaded", &mut world);
    assert_eq!(roster(&mut world), saved);

    // A truncated save: a named error, and the world as it was.
    let bytes = std::fs::read(&path)?;
    let refused = world.load_from(&bytes[..bytes.len() / 2]).unwrap_err();
    println!("\na truncated save: {refused}");
    assert_eq!(roster(&mut world), saved);

    // 4. A new process: the same registrations, then the file. The
    // `volleys` node's `Local` comes back by the node's name.
    let volleys = world.get::<Volleys>().map_or(0, |v| v.0);
    let mut restarted = skirmish_world();
    restarted.load_from(BufReader::new(File::open(&path)?))?;
    assert_eq!(roster(&mut restarted), saved);
    restarted.run_iteration()?;
    let counted = restarted.get::<Volleys>().map_or(0, |v| v.0);
    println!(
        "\nrestarted from the save: volley {counted} (the save was taken after volley {volleys})"
    );
    assert_eq!(counted, volleys + 1);
    let follows = *restarted
        .entity(herald)
        .and_then(|herald| herald.get::<ComponentRef<Morale>>())
        .expect("the herald is back");
    println!(
        "the herald follows {}: morale {:?}",
        follows.target(),
        follows.get(&restarted)
    );
    assert_eq!(follows.get(&restarted), Some(&Morale(80)));
    // The medic came back with its count of frames: the restarted world
    // heals on the frames the saved one does (one frame played on both
    // already, two more here).
    world.run_iteration()?;
    for _ in 0..2 {
        world.run_iteration()?;
        restarted.run_iteration()?;
    }
    show("restarted, three frames after the save", &mut restarted);
    assert_eq!(roster(&mut restarted), roster(&mut world));
    // The checksum covers the medic's state: the same on both.
    let (ours, theirs) = (world.snapshot()?, restarted.snapshot()?);
    println!(
        "checksums, medic included: {:016x} and {:016x}",
        ours.checksum(),
        theirs.checksum()
    );
    assert_eq!(ours.checksum(), theirs.checksum());
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
