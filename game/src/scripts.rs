//! Scripts: the director's durable scripts, a wave spawner and the opening
//! cutscene, on sluice's [`Scripts`] store and the [`SimClock`].
//!
//! Both are step scripts ([`StepScript`]): state machines over plain data
//! that wait on simulation time or on the battle, so the world's
//! snapshots capture them (the rollback battle rolls them back). Every frame [`direct`] (the gather: shared access to the
//! units and the score) runs the scripts that are due on the pool, and
//! [`stage_cues`] (the collect: gated access to the log, spawns through
//! `Commands`) applies what they asked for, in script order.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sluice::script::{ScriptKind, Scripts, SimClock, Step, StepScript, Wait};
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
/// simulation time of each beat. Saved with the battle: a beat by its
/// name, read back as one of [`BEATS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectorLog {
    /// Waves spawned so far.
    pub waves: u64,
    /// Units spawned by waves.
    pub spawned: u64,
    /// The cutscene's beats, in order, with when they played.
    #[serde(with = "saved_beats")]
    pub beats: Vec<(&'static str, Duration)>,
}

/// Every beat the cutscene plays, in order.
pub const BEATS: [&str; 4] = [
    "title card",
    "first blood",
    "reinforcements",
    "the battle is joined",
];

/// The log's beats in a save: each by its name, read back as the
/// [`BEATS`] entry of that name (another name is refused).
mod saved_beats {
    use std::time::Duration;

    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        beats: &[(&'static str, Duration)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        beats.serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(&'static str, Duration)>, D::Error> {
        let saved: Vec<(String, Duration)> = Vec::deserialize(deserializer)?;
        saved
            .into_iter()
            .map(|(name, at)| {
                super::BEATS
                    .iter()
                    .find(|beat| **beat == name)
                    .map(|beat| (*beat, at))
                    .ok_or_else(|| D::Error::custom(format!("no cutscene beat is named {name:?}")))
            })
            .collect()
    }
}

/// The wave spawner's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waves {
    /// Simulation time between two waves.
    pub period: Duration,
    /// Units per team per wave.
    pub size: usize,
    /// No wave while at least this many units are alive.
    pub cap: usize,
}

/// The wave spawner: every [`Waves::period`] of simulation time, a wave,
/// unless the battle is at its cap. A step script (its state is this
/// data), so the world's snapshots capture it, and saves (serde) hold it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct WaveSpawner {
    waves: Waves,
    /// Waves asked for so far.
    wave: u64,
    /// Whether its first wait has begun.
    started: bool,
}

impl StepScript<Director> for WaveSpawner {
    fn step(&mut self, cx: &mut Step<'_, '_, Director>) -> Wait<Director> {
        if self.started && cx.view().alive < self.waves.cap {
            self.wave += 1;
            cx.emit(Cue::Wave {
                wave: self.wave,
                size: self.waves.size,
            });
        }
        self.started = true;
        Wait::For(self.waves.period)
    }
}

/// The opening cutscene: a title card after half a second, "first blood"
/// at the first kill, reinforcements two seconds later, and three
/// seconds of physics steps after that, its last beat. A step script
/// (saved: its wait for the first blood is given back by its state).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Cutscene {
    /// Units per team of the reinforcements' wave.
    size: usize,
    /// The next beat to play (0: not started).
    next: u8,
}

impl Cutscene {
    /// "First blood", then two seconds until the reinforcements.
    fn first_blood(&mut self, cx: &mut Step<'_, '_, Director>) -> Wait<Director> {
        cx.emit(Cue::Beat(BEATS[1]));
        self.next = 3;
        Wait::For(Duration::from_secs(2))
    }
}

impl StepScript<Director> for Cutscene {
    fn step(&mut self, cx: &mut Step<'_, '_, Director>) -> Wait<Director> {
        match self.next {
            0 => {
                self.next = 1;
                Wait::For(Duration::from_millis(500))
            }
            1 => {
                cx.emit(Cue::Beat(BEATS[0]));
                self.next = 2;
                // Checked at once, as the first blood may have come.
                if cx.view().kills > 0 {
                    self.first_blood(cx)
                } else {
                    until_first_blood()
                }
            }
            2 => self.first_blood(cx),
            3 => {
                cx.emit(Cue::Beat(BEATS[2]));
                cx.emit(Cue::Wave {
                    wave: u64::MAX,
                    size: self.size,
                });
                self.next = 4;
                // Counted in physics steps: the cutscene ends on the fixed clock.
                Wait::ForFixed(Duration::from_secs(3))
            }
            _ => {
                cx.emit(Cue::Beat(BEATS[3]));
                Wait::Done
            }
        }
    }

    /// Waiting for the first blood (beat 2 next) is the one wait on a
    /// condition: given back for a load.
    fn resume_wait(&self) -> Option<Wait<Director>> {
        (self.next == 2).then(until_first_blood)
    }
}

/// The cutscene's wait for the first kill (its step returns it, its state
/// gives it back for a load).
fn until_first_blood() -> Wait<Director> {
    Wait::Until(|battle| battle.kills > 0)
}

/// Puts the clock, the store (opted into the world's snapshots, and into
/// saves as `director`, its scripts as `wave_spawner` and `cutscene`) and
/// the log in `world` and starts both scripts.
pub fn start(world: &mut World, waves: Waves) {
    let mut scripts = Scripts::<Director>::new();
    scripts.start_step(
        "wave spawner",
        WaveSpawner {
            waves,
            wave: 0,
            started: false,
        },
    );
    scripts.start_step(
        "opening cutscene",
        Cutscene {
            size: waves.size,
            next: 0,
        },
    );
    world.insert(SimClock::new());
    world.insert_scripts(scripts);
    world
        .save_scripts::<Director>("director")
        .save_step_script::<Director, WaveSpawner>("wave_spawner")
        .save_step_script::<Director, Cutscene>("cutscene");
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
