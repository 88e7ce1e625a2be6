//! One-shot systems (the guide's chapter "Systems and services",
//! `docs/guide/01-systems-and-services.md`), runnable:
//! `cargo run --example one_shot`.
//!
//! A level is set up by a system run once between frames; a "spawn wave"
//! system is registered and run by id, from the game loop and from a
//! command inside a frame, keeping its wave count in a `Local`; and the
//! errors a one-shot run can end in are shown by name.

use sluice::prelude::*;

#[derive(Debug, Clone, Copy)]
struct Enemy {
    wave: u32,
}

/// How many enemies are alive, counted each frame.
#[derive(Debug, Default)]
struct Alive(usize);

/// The id of the wave spawner, for the systems that call it.
struct Waves(SystemId);

fn spawn_wave(mut wave: Local<u32>, commands: Commands<'_>) {
    *wave += 1;
    for _ in 0..*wave * 2 {
        commands.spawn((Enemy { wave: *wave },));
    }
}

fn count(enemies: Query<&Enemy>, alive: &mut Alive) {
    alive.0 = enemies.iter().count();
}

/// Asks for a new wave once the field is clear.
fn director(alive: &Alive, waves: &Waves, commands: Commands<'_>) {
    if alive.0 == 0 {
        commands.run_system(waves.0);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    world.insert(Alive::default());

    // Set up the level once: its commands land before the call returns.
    world.run_system_once(|commands: Commands<'_>| {
        commands.spawn((Enemy { wave: 0 },));
    })?;
    println!(
        "level set up: {} enemy",
        world.query::<&Enemy>().iter().count()
    );

    let waves = world.register_system(spawn_wave);
    world.insert(Waves(waves));
    world.add_system(NodeBuilder::new("count").system(count));
    world.add_system(NodeBuilder::new("director").after("count").system(director));

    // Run by id from the game loop: its `Local` keeps the wave count.
    world.run_system(waves)?;
    world.run_iteration()?;
    println!("after wave 1: {} alive", world.get::<Alive>().unwrap().0);

    // Clear the field: the director asks for the next wave by command.
    let all: Vec<Entity> = world.query::<Entity>().iter().collect();
    for enemy in all {
        world.despawn(enemy)?;
    }
    world.run_iteration()?; // counts 0, the director's command runs wave 2
    world.run_iteration()?; // counts wave 2
    let latest = world.query::<&Enemy>().iter().map(|e| e.wave).max();
    println!(
        "after wave 2: {} alive (wave {latest:?})",
        world.get::<Alive>().unwrap().0
    );
    assert_eq!(world.get::<Alive>().unwrap().0, 4);

    // What cannot run is an error naming the system, never a panic.
    struct Absent;
    let missing = world.run_system_once(NodeBuilder::new("needs_absent").system(|_: &Absent| {}));
    println!("{}", missing.unwrap_err());
    world.unregister_system(waves)?;
    println!("{}", world.run_system(waves).unwrap_err());
    Ok(())
}
