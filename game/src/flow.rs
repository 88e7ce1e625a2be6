//! The game's flow through states: a title, the battle, the results.
//!
//! Headless, the title lasts no frame: entering it asks for the battle at
//! once, and both transitions happen at the first state point (right after
//! `Startup`, before the first frame). The battle is what every frame
//! simulates; on its last frame `end_battle` asks for the results, which
//! are entered after that frame's boundary and tally the [`Outcome`]. A
//! finished battle runs no more frames ([`Game::frame`](crate::Game::frame)).

use sluice::plugin::{Plugin, Requires};
use sluice::state::{NextState, OnEnter, States, in_state};
use sluice::{FrameTime, NodeBuilder, World};

use crate::combat::Score;
use crate::units::Census;

/// Where the game is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GameFlow {
    /// The title screen (no frame, headless).
    #[default]
    Title,
    /// The battle: what every frame simulates.
    Battle,
    /// The battle is over; [`Outcome`] holds its result.
    Results,
}

impl States for GameFlow {}

/// How many frames the battle lasts; 0 for no end (a game driven frame by
/// frame, as the `game` bench does, with `Config::frames` 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BattleLength(pub u64);

/// The result of a battle, tallied when the results are entered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Each team's kills.
    pub kills: [u64; 2],
    /// Each team's units alive at the end.
    pub alive: [u64; 2],
    /// Whether the results were entered.
    pub tallied: bool,
}

/// The flow's plugin: the state, its schedules, and the system that ends
/// the battle after `battle_frames` frames.
#[derive(Debug, Clone, Copy)]
pub struct FlowPlugin {
    /// Frames the battle lasts (0: no end).
    pub battle_frames: u64,
}

impl Plugin for FlowPlugin {
    fn requires(&self) -> Requires {
        Requires::new()
            .plugin::<crate::FramePlugin>()
            .plugin::<crate::combat::CombatPlugin>()
            .plugin::<crate::units::UnitsPlugin>()
    }

    fn build(&self, world: &mut World) {
        world.init_state::<GameFlow>();
        world.insert(BattleLength(self.battle_frames));
        world.init_service::<Outcome>();
        // The game declares stages, so every node names one.
        world.add_system(
            NodeBuilder::new("skip_title")
                .in_schedule(OnEnter(GameFlow::Title))
                .in_stage("Feed")
                .system(skip_title),
        );
        world.add_system(
            NodeBuilder::new("tally")
                .in_schedule(OnEnter(GameFlow::Results))
                .in_stage("Present")
                .system(tally),
        );
        world.add_system(
            NodeBuilder::new("end_battle")
                .in_stage("Present")
                .system(end_battle)
                .run_if(in_state(GameFlow::Battle)),
        );
    }
}

/// Headless, there is nobody to press start: on to the battle.
fn skip_title(next: &mut NextState<GameFlow>) {
    next.set(GameFlow::Battle);
}

/// Asks for the results on the battle's last frame.
fn end_battle(time: &FrameTime, length: &BattleLength, next: &mut NextState<GameFlow>) {
    if length.0 > 0 && time.frame + 1 >= length.0 {
        next.set(GameFlow::Results);
    }
}

/// Tallies the outcome from the score and the census.
fn tally(score: &Score, census: &Census, outcome: &mut Outcome) {
    outcome.kills = score.kills;
    outcome.alive = census.alive;
    outcome.tallied = true;
}
