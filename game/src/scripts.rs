//! Scripts: the director's durable scripts, a wave spawner and the opening
//! cutscene, on sluice's [`Scripts`] store and the [`SimClock`].
//!
//! Both are straight-line `async` code that waits on simulation time or on
//! the battle. Every frame [`direct`] (the gather: shared access to the
//! units and the score) runs the scripts that are due on the pool, and
//! [`stage_cues`] (the collect: gated access to the log, spawns through
//! `Commands`) applies what they asked for, in script order.

use std::time::Duration;

use sluice::script::{ScriptKind, Scripts, SimClock};
use sluice::{Commands, Query, World, system};

use crate::combat::Score;
use crate::math::mix;
use crate::units::{Captains, Team, unit};

/// The director's kind of script.
#[derive(Debug)]
pub struct Director;

/// What a director script sees of the battle.
#[derive(Debug, Clone, Copy)]
pub struct Battle {
    /// Units alive.
    pub alive: usize,
    /// Kills so far, both teams.
    pub kills: u64,
}

/// What a director script asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cue {
    /// Spawn a wave of `size` units per team.
    Wave {
        /// The wave's number (from 1), which seeds its units.
        wave: u64,
        /// Units per team.
        size: usize,
    },
    /// A cutscene beat, logged.
    Beat(&'static str),
}

impl ScriptKind for Director {
    type View<'v> = Battle;
    type Intent = Cue;
}

/// What the director did: waves spawned and the cutscene's beats, with the
/// simulation time of each beat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectorLog {
    /// Waves spawned so far.
    pub waves: u64,
    /// Units spawned by waves.
    pub spawned: u64,
    /// The cutscene's beats, in order, with when they played.
    pub beats: Vec<(&'static str, Duration)>,
}

/// The wave spawner's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waves {
    /// Simulation time between two waves.
    pub period: Duration,
    /// Units per team per wave.
    pub size: usize,
    /// No wave while at least this many units are alive.
    pub cap: usize,
}

/// Puts the clock, the store and the log in `world` and starts both
/// scripts.
pub fn start(world: &mut World, waves: Waves) {
    let mut scripts = Scripts::<Director>::new();
    scripts.start("wave spawner", move |cx| async move {
        let mut wave = 0;
        loop {
            cx.wait(waves.period).await;
            if cx.view(|battle| battle.alive) < waves.cap {
                wave += 1;
                cx.emit(Cue::Wave {
                    wave,
                    size: waves.size,
                });
            }
        }
    });
    scripts.start("opening cutscene", move |cx| async move {
        cx.wait(Duration::from_millis(500)).await;
        cx.emit(Cue::Beat("title card"));
        cx.wait_until(|battle| battle.kills > 0).await;
        cx.emit(Cue::Beat("first blood"));
        cx.wait(Duration::from_secs(2)).await;
        cx.emit(Cue::Beat("reinforcements"));
        cx.emit(Cue::Wave {
            wave: u64::MAX,
            size: waves.size,
        });
        // Counted in physics steps: the cutscene ends on the fixed clock.
        cx.wait_fixed(Duration::from_secs(3)).await;
        cx.emit(Cue::Beat("the battle is joined"));
    });
    world.insert(SimClock::new());
    world.insert(scripts);
    world.insert(DirectorLog::default());
}

/// The gather: runs every due director script against the battle.
#[system(stage = "Think", group = "Scripts")]
pub fn direct(
    scripts: &mut Scripts<Director>,
    clock: &SimClock,
    units: Query<&Team>,
    score: &Score,
) {
    let battle = Battle {
        alive: units.count(),
        kills: score.kills[0] + score.kills[1],
    };
    scripts.gather(clock, &battle);
}

/// The collect: spawns the waves asked for and logs the beats, in script
/// order.
#[system(stage = "Think", group = "Scripts", after = "direct")]
pub fn stage_cues(
    scripts: &mut Scripts<Director>,
    clock: &SimClock,
    log: &mut DirectorLog,
    captains: &Captains,
    commands: Commands<'_>,
) {
    for (_script, cue) in scripts.drain_intents() {
        match cue {
            Cue::Wave { wave, size } => {
                log.waves += 1;
                for index in 0..size as u64 {
                    for team in 0..2u8 {
                        let seed = mix((wave << 32) ^ (index << 1) ^ u64::from(team));
                        commands.spawn(unit(seed, team, captains));
                        log.spawned += 1;
                    }
                }
            }
            Cue::Beat(beat) => log.beats.push((beat, clock.now())),
        }
    }
}

/// The plugin of the systems that run the durable scripts (started with the scene: `start`).
#[derive(Debug, Default)]
pub struct ScriptsPlugin;

impl sluice::plugin::Plugin for ScriptsPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new().plugin::<crate::FramePlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.add_system(direct);
        world.add_system(stage_cues);
    }
}
