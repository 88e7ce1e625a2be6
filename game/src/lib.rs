//! A headless game on sluice, and the README's first command:
//! `cargo run --release -p sluice-game`.
//!
//! Two armies of tens of thousands of units fight across an arena. Each
//! frame is one iteration of a plan built from the systems' signatures:
//!
//! - [`feed`]: the player's input and a network peer's orders arrive from
//!   two other threads through `World::sender`, stamped with their frame
//!   and handed over by a handshake, so results do not depend on timing;
//! - [`assets`]: an async continuation streams terrain chunks in;
//! - [`navigation`]: a factory rebuilds the flow fields only when the
//!   terrain changed;
//! - [`steering`]: captains walk to their rally points, units follow their
//!   captain through a `ComponentRef`;
//! - [`physics`]: movement on the fixed-timestep cadence;
//! - [`combat`]: damage as messages, deaths and respawns through `Commands`;
//! - [`particles`]: a batch processor;
//! - [`scripts`]: durable scripts on the simulation clock: the wave
//!   spawner and the opening cutscene;
//! - [`turrets`]: a turret riding every fifth unit of the opening armies,
//!   a child whose world transform is propagated down the hierarchy;
//! - [`report`]: timing, the spike watch's list, the stage views, the
//!   plan's diagnostics (SL0008 warnings) and a checksum of the final state;
//! - [`rollback`]: the battle cut to what snapshots capture, played by two
//!   peers over ggrs with rollback (`sluice-game rollback`), recorded and
//!   replayed (`--record`, `--replay`).
//!
//! Each module is a plugin ([`GamePlugins`] lists them in the order they
//! register their systems, which is the order the plan breaks ties in), and
//! the game flows through states ([`flow`]): a title (no frame, headless),
//! the battle, the results.
//!
//! All of it is organised in phases, groups and stages. Every run with the
//! same [`Config`] (frames, entities) ends with the same checksum, whatever
//! the thread count.

pub mod assets;
pub mod cli;
pub mod combat;
pub mod feed;
pub mod flow;
pub mod inspect;
pub mod math;
pub mod navigation;
pub mod particles;
pub mod physics;
pub mod plot;
pub mod progress;
pub mod report;
pub mod rollback;
pub mod scripts;
pub mod steering;
pub mod trace;
pub mod turrets;
pub mod units;

use std::fmt;
use std::time::{Duration, Instant};

use sluice::exec::ThreadPool;
use sluice::plugin::{Plugin, PluginGroup, PluginGroupBuilder};
use sluice::{FixedTime, Group, IterationError, World};

use crate::feed::Feeders;
use crate::flow::{FlowPlugin, GameFlow};
use crate::report::{FrameSample, RunReport};

/// The fixed cadence's step: physics at 60 Hz.
pub const FIXED_STEP: Duration = Duration::from_nanos(16_666_667);

/// The update deltas, repeated: mostly 60 Hz with some jitter and a hitch,
/// so that frames run zero, one or two fixed steps. The same every run.
const DELTAS_US: [u64; 8] = [
    16_667, 16_667, 15_000, 18_333, 16_667, 33_333, 8_333, 16_667,
];

/// The delta of update `frame`.
pub fn fake_delta(frame: u64) -> Duration {
    Duration::from_micros(DELTAS_US[(frame % DELTAS_US.len() as u64) as usize])
}

/// How a game runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Threads of the world's pool, the calling thread included.
    pub threads: usize,
    /// Frames to run.
    pub frames: u64,
    /// Units at the start (half per team).
    pub entities: usize,
    /// Whether to measure per-node times.
    pub timing: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            frames: 1_000,
            entities: 20_000,
            timing: true,
        }
    }
}

/// Why a game stopped.
#[derive(Debug)]
pub enum GameError {
    /// The pool's threads could not start.
    Pool(std::io::Error),
    /// The live inspector did not start.
    Inspect(sluice_inspect::InspectError),
    /// A frame failed.
    Frame(u64, IterationError),
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::Pool(error) => write!(f, "the thread pool did not start: {error}"),
            GameError::Inspect(error) => write!(f, "{error}"),
            GameError::Frame(frame, error) => write!(f, "frame {frame} failed: {error}"),
        }
    }
}

impl std::error::Error for GameError {}

/// The battle's world as both the game and its rollback start it: a pool
/// of `threads`, the fixed step, the frame plugin, the director's scripts
/// and the two armies of `entities` units with their captains.
///
/// # Errors
/// When the pool's threads do not start.
pub(crate) fn battle_world(threads: usize, entities: usize) -> Result<World, GameError> {
    let pool = ThreadPool::new(threads.max(1)).map_err(GameError::Pool)?;
    let mut world = World::with_pool(pool);
    world.set_fixed_timestep(FIXED_STEP);
    world
        .add_plugin(FramePlugin)
        .expect("a new world holds no plugin");
    scripts::start(
        &mut world,
        scripts::Waves {
            period: Duration::from_secs(2),
            size: (entities / 50).max(1),
            cap: entities + entities / 4,
        },
    );
    let captains = units::spawn_armies(&mut world, entities);
    world.insert(captains);
    Ok(world)
}

/// A game in progress: the world, the feeding threads, the frame counter.
#[derive(Debug)]
pub struct Game {
    world: World,
    feeders: Feeders,
    frame: u64,
}

impl Game {
    /// Builds the world: services, armies, the asset stream, the feeders,
    /// the organisation and every node.
    ///
    /// # Errors
    /// When the pool's threads do not start.
    pub fn new(config: &Config) -> Result<Self, GameError> {
        // The scene first (scripts, armies, the asset stream, the feeding
        // threads), then the plugins, in the order that registers the
        // systems as the game always has.
        let mut world = battle_world(config.threads, config.entities)?;
        assets::start_stream(&mut world);
        let feeders = Feeders::start(&mut world);
        world
            .add_plugins((
                GamePlugins.build(),
                FlowPlugin {
                    battle_frames: config.frames,
                },
            ))
            .expect("the game's plugins are added once");
        world
            .finish_plugins()
            .expect("every plugin the game's plugins require is added");
        world.enable_timing(config.timing);
        world
            .set_spike_watch(Some(report::SPIKE_WATCH))
            .expect("the game's spike watch is in range");
        Ok(Self {
            world,
            feeders,
            frame: 0,
        })
    }

    /// Runs the next frame: the feeders queue its input, then the world
    /// updates by [`fake_delta`]. Returns how long the update took.
    ///
    /// # Errors
    /// When the frame fails (a node panicked, the plan is invalid).
    pub fn frame(&mut self) -> Result<Duration, GameError> {
        // A finished battle runs no more frames.
        if self.flow() == GameFlow::Results {
            return Ok(Duration::ZERO);
        }
        let frame = self.frame;
        self.feeders.feed(frame);
        let _span = tracing::info_span!("frame", frame).entered();
        let begin = Instant::now();
        self.world
            .update(fake_delta(frame))
            .map_err(|error| GameError::Frame(frame, error))?;
        let elapsed = begin.elapsed();
        self.frame += 1;
        Ok(elapsed)
    }

    /// Where the game's flow is ([`GameFlow::Title`] before the first
    /// frame).
    pub fn flow(&self) -> GameFlow {
        self.world.state::<GameFlow>().copied().unwrap_or_default()
    }

    /// Frames run so far.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, to query or inspect plans.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The time each node took in the last frame, by node index: the
    /// variable plan's nodes, and the fixed plan's last step times the
    /// steps that frame ran (the runtime keeps only the last step's).
    pub fn node_times(&self, into: &mut Vec<Duration>) {
        let steps = self.world.get::<FixedTime>().map_or(0, |fixed| fixed.steps);
        let variable = self.world.timings();
        let fixed = self.world.fixed_timings();
        into.clear();
        into.resize(variable.len().max(fixed.len()), Duration::ZERO);
        for (slot, timing) in into.iter_mut().zip(variable) {
            if timing.ran {
                *slot += timing.duration;
            }
        }
        if steps > 0 {
            for (slot, timing) in into.iter_mut().zip(fixed) {
                if timing.ran {
                    *slot += timing.duration * steps;
                }
            }
        }
    }
}

/// The shape of a frame: stages and groups, which every other plugin
/// places its systems in.
#[derive(Debug, Default)]
pub struct FramePlugin;

impl Plugin for FramePlugin {
    fn build(&self, world: &mut World) {
        // The variable cadence's stages, in order; the fixed cadence has one.
        for (order, stage) in ["Feed", "Think", "Fight", "Resolve", "Present"]
            .into_iter()
            .enumerate()
        {
            world.add_stage(stage, order as i64);
        }
        world.add_stage("Simulate", -1);
        world.add_group(Group::new("Input"));
        world.add_group(Group::new("Feed").in_group("Input"));
        world.add_group(Group::new("Assets").in_group("Input"));
        world.add_group(Group::new("Simulation"));
        world.add_group(Group::new("Physics").in_group("Simulation"));
        world.add_group(Group::new("Scripts").in_group("Simulation"));
        world.add_group(Group::new("Ai").in_group("Simulation"));
        world.add_group(Group::new("Combat").in_group("Simulation"));
        world.add_group(Group::new("Effects"));
    }
}

/// Every plugin of the battle, in the order they register their systems
/// (the plan breaks ties among unordered systems by that order, so it is
/// part of the game's result). [`FramePlugin`] is added first, on its own.
#[derive(Debug, Default)]
pub struct GamePlugins;

impl PluginGroup for GamePlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(feed::FeedPlugin)
            .add(assets::AssetsPlugin)
            .add(navigation::NavigationPlugin)
            .add(scripts::ScriptsPlugin)
            .add(steering::SteeringPlugin)
            .add(combat::CombatPlugin)
            .add(particles::ParticlesPlugin)
            .add(units::UnitsPlugin)
            .add(physics::PhysicsPlugin)
            .add(turrets::TurretsPlugin::default())
    }
}

/// Runs a whole game: `config.frames` frames, then the checksum. `observe`
/// sees each frame's sample as it is taken.
///
/// # Errors
/// As for [`Game::new`] and [`Game::frame`].
pub fn run(config: &Config, observe: impl FnMut(&FrameSample)) -> Result<RunReport, GameError> {
    run_inspected(config, None, observe)
}

/// As [`run`], with the live inspector ([`inspect`]) serving the world on
/// `inspect` when it is `Some` (a loopback address): its page can pause,
/// step and resume the game between frames.
///
/// # Errors
/// As for [`run`], and [`GameError::Inspect`] when the inspector does not
/// start.
pub fn run_inspected(
    config: &Config,
    inspect: Option<&str>,
    mut observe: impl FnMut(&FrameSample),
) -> Result<RunReport, GameError> {
    let mut game = Game::new(config)?;
    let mut inspector = match inspect {
        Some(address) => {
            let inspector = inspect::start(address).map_err(GameError::Inspect)?;
            println!("inspector: http://{}", inspector.local_addr());
            Some(inspector)
        }
        None => None,
    };
    let mut report = RunReport::new(config);
    let mut nodes = Vec::new();
    let started = Instant::now();
    for _ in 0..config.frames {
        let time = game.frame()?;
        game.node_times(&mut nodes);
        let sample = report.record(game.frames() - 1, time, &nodes);
        observe(&sample);
        if let Some(inspector) = &mut inspector {
            inspector.frame(game.world_mut());
        }
    }
    report.finish(&mut game, started.elapsed())?;
    Ok(report)
}
