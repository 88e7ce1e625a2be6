//! Snapshots, saves and rollback (the guide's chapter "Snapshots, saves
//! and rollback", `docs/guide/19-snapshots-saves-and-rollback.md`),
//! runnable: `cargo run --example snapshots`.
//!
//! A skirmish in miniature: two squads trade shots each frame. The example
//! snapshots the world, plays on (units fall, one is despawned, a
//! reinforcement spawns), restores the snapshot and shows the world back as
//! it was, ids and all; then rolls back three frames with a rollback
//! buffer and replays them to the same checksum; shows an incremental
//! capture keeping what a frame did not change; then saves the world to a
//! file, spoils it, loads the file back, and shows a truncated file
//! refused with the world untouched.

use std::fs::File;
use std::io::{BufReader, BufWriter};

use serde::{Deserialize, Serialize};
use sluice::RollbackBuffer;
use sluice::prelude::*;

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    world
        .save_component::<Hp>("Hp")
        .save_component::<Squad>("Squad")
        .save_component::<Target>("Target")
        .save_service::<Frame>("Frame")
        .set_snapshot_strict(true);
    world.insert(Frame::default());

    // Two squads of three, each unit aiming at its opposite number.
    let red: Vec<Entity> = (0..3).map(|_| world.spawn((Hp(100), Squad(0)))).collect();
    let blue: Vec<Entity> = (0..3).map(|_| world.spawn((Hp(100), Squad(1)))).collect();
    for (&r, &b) in red.iter().zip(&blue) {
        world.entity_mut(r).unwrap().insert((Target(b),))?;
        world.entity_mut(b).unwrap().insert((Target(r),))?;
    }

    // Each frame every unit hits its target for 7 (squad 1 for 5).
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
    // the frame writes `Hp`; `Squad` and `Target` are kept as they were.
    let mut steady = sluice::Snapshot::new();
    world.snapshot_into(&mut steady)?;
    world.run_iteration()?;
    world.snapshot_into(&mut steady)?;
    println!(
        "an incremental capture kept {} of 3 component types (Squad, Target)",
        steady.reused_components()
    );
    assert_eq!(steady.reused_components(), 2);

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
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
