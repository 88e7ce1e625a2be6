//! The guide's chapter "Durable scripts" (`docs/guide/06-scripts.md`),
//! runnable: `cargo run --example scripts`.
//!
//! A wave spawner (a step script, so it can be saved) and an opening
//! cutscene (an `async` script) wait on one simulation clock; gather runs
//! them, collect applies their intents. The clock is paused and stepped,
//! then the game is saved, played on, and loaded into a fresh world, which
//! replays the same intents at the same frames.

use std::time::Duration;

use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
use sluice::{NodeBuilder, World};

/// The kind: scripts see the arena, and ask for spawns or lines of text.
struct Director;

impl ScriptKind for Director {
    type View<'v> = &'v Arena;
    type Intent = Ask;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Spawn(u32),
    Say(&'static str),
}

/// The game's state: enemies alive, and what happened, frame by frame.
#[derive(Debug, Default, Clone, PartialEq)]
struct Arena {
    frame: u64,
    alive: u32,
    log: Vec<(u64, Ask)>,
}

/// Spawns a wave when the arena is clear, then rests two seconds.
#[derive(Clone)]
struct Spawner {
    wave: u32,
}

impl StepScript<Director> for Spawner {
    fn step(&mut self, cx: &mut Step<'_, '_, Director>) -> Wait<Director> {
        if cx.view().alive > 0 {
            // A plain `fn` (no captures): the wait is data, so it can be saved.
            return Wait::Until(|arena| arena.alive == 0);
        }
        self.wave += 1;
        cx.emit(Ask::Spawn(self.wave * 3));
        Wait::For(Duration::from_secs(2))
    }
}

const FRAME: Duration = Duration::from_millis(100);

fn arena_world() -> World {
    let mut world = World::new();
    world.insert(SimClock::new());
    world.insert(Arena::default());
    world.insert(Scripts::<Director>::new());
    // Gather: shared access to what the view borrows; scripts run in parallel.
    world.add_system(NodeBuilder::new("director.gather").system(
        |scripts: &mut Scripts<Director>, clock: &SimClock, arena: &Arena| {
            scripts.gather(clock, &arena);
        },
    ));
    // Collect: gated access to what intents change; start order, then emission order.
    world.add_system(
        NodeBuilder::new("director.collect")
            .after("director.gather")
            .system(|scripts: &mut Scripts<Director>, arena: &mut Arena| {
                arena.frame += 1;
                for (_script, ask) in scripts.drain_intents() {
                    if let Ask::Spawn(n) = ask {
                        arena.alive += n;
                    }
                    arena.log.push((arena.frame, ask));
                }
                // The player kills one enemy a frame.
                arena.alive = arena.alive.saturating_sub(1);
            }),
    );
    world
}

fn main() -> Result<(), sluice::IterationError> {
    let mut world = arena_world();
    let scripts = world.get_mut::<Scripts<Director>>().expect("inserted");
    scripts.start("intro", |cx| async move {
        cx.emit(Ask::Say("the gates open"));
        cx.wait(Duration::from_millis(500)).await;
        cx.emit(Ask::Say("fight!"));
    });
    scripts.start_step("waves", Spawner { wave: 0 });

    for _ in 0..10 {
        world.update(FRAME)?;
    }
    let arena = world.get::<Arena>().unwrap();
    println!("after 1 s: {:?}", arena.log);
    assert_eq!(arena.log[0], (1, Ask::Say("the gates open")));
    assert_eq!(arena.log[1], (1, Ask::Spawn(3)), "same gather: start order");
    assert!(arena.log.contains(&(6, Ask::Say("fight!"))));

    // Paused: no time passes, no script wakes; a step runs one gather.
    world.get_mut::<SimClock>().unwrap().pause();
    let before = world.get::<Arena>().unwrap().log.len();
    for _ in 0..30 {
        world.update(FRAME)?;
    }
    assert_eq!(world.get::<Arena>().unwrap().log.len(), before, "paused");
    world
        .get_mut::<SimClock>()
        .unwrap()
        .step(Duration::from_secs(3));
    world.update(FRAME)?;
    let stepped = &world.get::<Arena>().unwrap().log[before..];
    println!("one step of 3 s while paused: {stepped:?}");
    assert_eq!(stepped.len(), 1, "the spawner's rest was over: wave 2");
    world.get_mut::<SimClock>().unwrap().resume();

    // A save: the clock, the scripts (all step scripts by now), the game.
    let clock = world.clock_snapshot();
    let scripts = world.get_mut::<Scripts<Director>>().unwrap();
    let waiting: Vec<String> = scripts
        .iter()
        .map(|s| format!("{} {:?}", s.name, s.waiting))
        .collect();
    println!("saving, scripts waiting: {waiting:?}");
    let saved_scripts = scripts.snapshot().expect("the cutscene has ended");
    let saved_arena = world.get::<Arena>().unwrap().clone();

    for _ in 0..60 {
        world.update(FRAME)?;
    }
    let played = world.get::<Arena>().unwrap().clone();

    // Load into a fresh world: the same intents at the same frames.
    let mut loaded = arena_world();
    loaded.restore_clock(&clock);
    loaded
        .get_mut::<Scripts<Director>>()
        .unwrap()
        .restore(&saved_scripts);
    loaded.insert(saved_arena);
    for _ in 0..60 {
        loaded.update(FRAME)?;
    }
    let replayed = loaded.get::<Arena>().unwrap();
    println!(
        "played on and replayed from the save: {} events each, the last {:?}",
        played.log.len(),
        played.log.last()
    );
    assert_eq!(*replayed, played);
    assert!(played.log.len() > before + 2, "waves kept coming");
    Ok(())
}
