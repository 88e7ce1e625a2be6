//! States (the guide's chapter "Plugins and states",
//! `docs/guide/14-plugins-and-states.md`), runnable:
//! `cargo run --example states`.
//!
//! A game that flows from its menu to a level and on to the results: the
//! level's enemies are spawned on entering it and scoped to it, a system
//! runs only while playing, a computed state says "in game" while the
//! level or a pause holds, the pause is a same-state round trip, a
//! sub-state (the wave: calm or storm) lives inside the level and keeps
//! its value through a pause, a transition loop past the bound is
//! reported by name, and a snapshot rolls a transition back (the state,
//! its pending request and a system's `Local` come back, and the replay
//! applies the same transition).

use sluice::prelude::*;
use sluice::state::{ComputedStates, StateError, SubStates, state_exists};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Screen {
    #[default]
    Menu,
    Playing,
    Paused,
    Results,
}
impl States for Screen {}

/// Exists only while a level is loaded (playing or paused).
#[derive(Debug, Clone, PartialEq, Eq)]
struct InGame;
impl States for InGame {}
impl ComputedStates for InGame {
    type Source = Screen;
    fn compute(screen: &Screen) -> Option<Self> {
        matches!(screen, Screen::Playing | Screen::Paused).then_some(InGame)
    }
}

/// The level's weather: exists only while playing or paused, calm on
/// entry; a pause keeps it (both are values it lives in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Wave {
    #[default]
    Calm,
    Storm,
}
impl States for Wave {}
impl SubStates for Wave {
    type Source = Screen;
    fn should_exist(screen: &Screen) -> Option<Self> {
        matches!(screen, Screen::Playing | Screen::Paused).then(Wave::default)
    }
}

struct Enemy;
struct Cloud;

#[derive(Debug, Default)]
struct Frames {
    playing: u32,
    in_game: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new();
    world.init_service::<Frames>();
    world.init_state::<Screen>();
    world.add_computed_state::<InGame>()?;
    world.add_sub_state::<Wave>()?;
    // A storm's clouds go with the storm: when the wave calms down, or
    // before the screen's own exit when the level is left.
    world.add_system_to(OnEnter(Wave::Storm), |commands: Commands| {
        for _ in 0..2 {
            commands.spawn((Cloud, DespawnOnExit(Wave::Storm)));
        }
    });

    // The level's enemies live while it is loaded: spawned when the game
    // is entered, despawned when it is left (a pause does not leave it).
    world.add_system_to(OnEnter(InGame), |commands: Commands| {
        for _ in 0..3 {
            commands.spawn((Enemy, DespawnOnExit(InGame)));
        }
    });
    world.add_system(
        NodeBuilder::new("play")
            .system(|frames: &mut Frames| frames.playing += 1)
            .run_if(in_state(Screen::Playing)),
    );
    world.add_system(
        NodeBuilder::new("hud")
            .after("play")
            .system(|frames: &mut Frames| frames.in_game += 1)
            .run_if(state_exists::<InGame>),
    );

    world.run_iteration()?;
    println!("{:?}", world.state::<Screen>());
    world.set_next_state(Screen::Playing);
    world.run_iteration()?; // the menu's frame; Playing entered after it
    world.run_iteration()?;
    let enemies = world.query::<&Enemy>().iter().count();
    println!("playing, {enemies} enemies");
    assert_eq!(enemies, 3);

    assert_eq!(world.state::<Wave>(), Some(&Wave::Calm));

    // Paused, and a storm requested in the same frame: the pause keeps
    // the wave (it lives in both), then the storm is applied.
    world.set_next_state(Screen::Paused);
    world.set_next_state(Wave::Storm);
    world.run_iteration()?;
    world.run_iteration()?;
    assert_eq!(
        world.query::<&Enemy>().iter().count(),
        3,
        "a pause keeps the level"
    );
    let clouds = world.query::<&Cloud>().iter().count();
    println!(
        "paused in a {:?} with {clouds} clouds",
        world.state::<Wave>()
    );
    assert_eq!((world.state::<Wave>(), clouds), (Some(&Wave::Storm), 2));
    world.set_next_state(Screen::Playing);
    world.run_iteration()?;
    world.set_next_state(Screen::Results);
    world.run_iteration()?;
    let left = world.query::<&Enemy>().iter().count();
    let frames = world.get::<Frames>().unwrap();
    println!(
        "results: played {} frames, {} in game, enemies left {left}",
        frames.playing, frames.in_game,
    );
    assert_eq!((frames.playing, frames.in_game, left), (3, 5, 0));
    assert_eq!(world.state::<InGame>(), None);
    assert_eq!(world.state::<Wave>(), None);
    assert_eq!(world.query::<&Cloud>().iter().count(), 0);

    rollback_a_transition()?;

    // Results and Menu asking for each other: stopped at the bound.
    world.add_system_to(OnEnter(Screen::Results), |next: &mut NextState<Screen>| {
        next.set(Screen::Menu)
    });
    world.add_system_to(OnEnter(Screen::Menu), |next: &mut NextState<Screen>| {
        next.set(Screen::Results)
    });
    world.set_next_state(Screen::Menu);
    match world.run_iteration() {
        Err(IterationError::State(error @ StateError::TooManyTransitions { .. })) => {
            println!("{error}")
        }
        other => panic!("expected the bound, got {other:?}"),
    }
    Ok(())
}

/// A snapshot taken with a request waiting: transitions played on, then
/// undone, and the same transition applied again.
fn rollback_a_transition() -> Result<(), Box<dyn std::error::Error>> {
    #[derive(Default)]
    struct Entered(Vec<(Screen, u32)>);

    let mut world = World::new();
    world.init_service::<Entered>();
    world.init_state::<Screen>();
    world.add_computed_state::<InGame>()?;
    // Every node's `Local<u32>` is captured too.
    world.snapshot_local::<u32>();
    world.add_system_to(
        OnEnter(Screen::Playing),
        |mut times: Local<u32>, entered: &mut Entered| {
            *times += 1;
            entered.0.push((Screen::Playing, *times));
        },
    );
    world.run_iteration()?;
    world.set_next_state(Screen::Playing);
    let waiting = world.snapshot()?;
    world.run_iteration()?; // Playing (the first time)
    world.set_next_state(Screen::Results);
    world.run_iteration()?;
    world.restore(&waiting)?;
    assert_eq!(world.state::<Screen>(), Some(&Screen::Menu));
    assert_eq!(world.state::<InGame>(), None);
    world.run_iteration()?; // Playing again: the local counts 1 again
    assert_eq!(world.state::<InGame>(), Some(&InGame));
    let entered = &world.get::<Entered>().unwrap().0;
    println!("rolled back and replayed: {entered:?}");
    assert_eq!(entered, &[(Screen::Playing, 1), (Screen::Playing, 1)]);
    Ok(())
}
