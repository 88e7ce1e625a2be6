//! The guide's chapter "Systems and services" (`docs/guide/01-systems-and-services.md`), runnable:
//! `cargo run --example systems`.
//!
//! A small frame of systems and a factory over a few services: order from
//! the signatures, a run condition, a factory skipped while its input holds
//! still, `Next<T>` swapped in at the boundary, `Commands`, and a failing
//! node that lands nothing it recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use sluice::{Commands, IterationError, Next, NodeBuilder, World, factory, run_condition, system};

/// Whether the player holds the fire button.
struct Input {
    fire: bool,
}
/// The player's hit points.
struct Hp(f32);
/// The streamed terrain; its version decides whether the navmesh rebuilds.
struct Terrain(u32);
/// What the navigation factory builds from the terrain.
struct NavMesh(u32);
/// Next frame's weather, produced one frame ahead.
struct Weather(u32);
/// Set by the frame's failing node, never landed.
struct Reward(u32);
/// While present, `fragile` panics.
struct Armed;

#[system]
fn regenerate(hp: &mut Hp) {
    hp.0 += 1.0;
}

#[run_condition]
fn firing(input: &Input) -> bool {
    input.fire
}

#[system(after = "regenerate", run_if = firing)]
fn damage(hp: &mut Hp) {
    hp.0 -= 5.0;
}

/// Counts its own runs, so the example can show the skipped frames.
static NAVMESH_BUILDS: AtomicU32 = AtomicU32::new(0);

#[factory]
fn navmesh(terrain: &Terrain) -> NavMesh {
    NAVMESH_BUILDS.fetch_add(1, Ordering::Relaxed);
    NavMesh(terrain.0 * 3)
}

/// Keeps the planned panic's message and backtrace out of the output.
fn quiet_planned_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let planned = info
            .payload()
            .downcast_ref::<&str>()
            .is_some_and(|message| message.contains("planned failure"));
        if !planned {
            default(info);
        }
    }));
}

fn main() -> Result<(), IterationError> {
    quiet_planned_panics();
    let mut world = World::new();
    world.insert(Input { fire: true });
    world.insert(Hp(10.0));
    world.insert(Terrain(4));
    world.insert(Weather(0));
    world.add_system(regenerate);
    world.add_system(damage);
    world.add_factory(navmesh);

    // A reader of what both systems gate and the factory produces: it runs
    // after them either way; `after` says so, which silences SL0008.
    let hud_frames = Arc::new(AtomicU32::new(0));
    let hud_seen = Arc::clone(&hud_frames);
    world.add_system(NodeBuilder::new("hud").after("damage").system(
        move |hp: &Hp, mesh: &NavMesh, weather: &Weather| {
            println!(
                "  hud: hp {} navmesh {} weather {}",
                hp.0, mesh.0, weather.0
            );
            hud_seen.fetch_add(1, Ordering::Relaxed);
        },
    ));
    // Produces next frame's weather: this frame's readers still see the old one.
    world.add_system(NodeBuilder::new("forecast").system(
        |terrain: &Terrain, mut next: Next<'_, Weather>| {
            next.set(Weather(terrain.0 + 100));
        },
    ));

    println!("frame 1: regenerate, then damage (firing), then hud");
    world.run_iteration()?;
    assert_eq!(world.get::<Hp>().map(|hp| hp.0), Some(6.0));
    assert_eq!(world.get::<Weather>().map(|w| w.0), Some(104)); // swapped in at the boundary

    println!("frame 2: not firing; the terrain held still, so the navmesh is not rebuilt");
    world.get_mut::<Input>().expect("inserted").fire = false;
    world.run_iteration()?;
    assert_eq!(world.get::<Hp>().map(|hp| hp.0), Some(7.0));
    assert_eq!(NAVMESH_BUILDS.load(Ordering::Relaxed), 1);

    println!("frame 3: new terrain streamed in: the navmesh rebuilds");
    world.get_mut::<Terrain>().expect("inserted").0 = 5;
    world.run_iteration()?;
    assert_eq!(NAVMESH_BUILDS.load(Ordering::Relaxed), 2);
    assert_eq!(world.get::<NavMesh>().map(|m| m.0), Some(15));

    // A node that writes in place, records a command, then fails.
    world.insert(Armed);
    world.add_system(NodeBuilder::new("fragile").after("hud").system(
        |hp: &mut Hp, armed: Option<&Armed>, commands: Commands<'_>| {
            hp.0 = 0.0;
            commands.insert(Reward(100));
            if armed.is_some() {
                panic!("fragile: planned failure");
            }
        },
    ));
    println!("frame 4: `fragile` panics");
    match world.run_iteration() {
        Err(IterationError::NodePanicked(failure)) => {
            println!("  failed as planned: {failure}");
            assert_eq!(failure.node(), "fragile");
        }
        other => panic!("expected `fragile` to fail, got {other:?}"),
    }
    assert_eq!(world.get::<Hp>().map(|hp| hp.0), Some(0.0)); // written in place: stays
    assert!(world.get::<Reward>().is_none()); // recorded: dropped with the failure

    println!("frame 5: disarmed, everything runs and lands");
    world.remove::<Armed>();
    world.run_iteration()?;
    assert_eq!(world.get::<Reward>().map(|r| r.0), Some(100));
    assert_eq!(hud_frames.load(Ordering::Relaxed), 5);
    println!("ok: five frames, two navmesh builds, one failure that landed nothing");
    vocabulary()
}

/// Issue 36's vocabulary: `Local<T>`, combined run conditions,
/// `init_service` / `service_scope`, and a custom command.
fn vocabulary() -> Result<(), IterationError> {
    use sluice::prelude::*;

    #[derive(Default)]
    struct Tally(Vec<u32>);
    struct Paused(bool);
    struct Deck(Vec<u32>);

    fn paused(p: &Paused) -> bool {
        p.0
    }
    fn every_other(mut calls: Local<u32>) -> bool {
        *calls += 1;
        calls.is_multiple_of(2)
    }

    let mut world = World::new();
    world.init_service::<Tally>();
    world.insert(Paused(false));
    world.insert(Deck(vec![7, 8, 9]));
    world.add_system(
        NodeBuilder::new("tally")
            .system(
                |mut runs: Local<u32>, tally: &mut Tally, commands: Commands| {
                    *runs += 1;
                    tally.0.push(*runs);
                    // Lands at the boundary, after what `tally` recorded before it.
                    commands.queue(|world: &mut World| {
                        world.service_scope(|world, deck: &mut Deck| {
                            let card = deck.0.pop().unwrap_or(0);
                            world.get_mut::<Tally>().unwrap().0.push(card * 100);
                        });
                    });
                },
            )
            .run_if(not(paused).and(every_other)),
    );
    for _ in 0..4 {
        world.run_iteration()?;
    }
    world.insert(Paused(true));
    world.run_iteration()?; // paused: `every_other` is not even evaluated
    let tally = &world.get::<Tally>().expect("initialised").0;
    println!("vocabulary: the local counted, the custom commands drew: {tally:?}");
    assert_eq!(*tally, [1, 900, 2, 800]);
    assert_eq!(world.get::<Deck>().expect("put back").0, [7]);
    Ok(())
}
