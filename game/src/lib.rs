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
//! - [`report`]: timing, the spike watch's list, the stage views, the
//!   plan's diagnostics (SL0008 warnings) and a checksum of the final state.
//!
//! All of it is organised in phases, groups and stages. Every run with the
//! same [`Config`] (frames, entities) ends with the same checksum, whatever
//! the thread count.

pub mod assets;
pub mod cli;
pub mod combat;
pub mod feed;
pub mod math;
pub mod navigation;
pub mod particles;
pub mod physics;
pub mod plot;
pub mod report;
pub mod scripts;
pub mod steering;
pub mod trace;
pub mod turrets;
pub mod units;

use std::fmt;
use std::time::{Duration, Instant};

use sluice::exec::ThreadPool;
use sluice::{FixedTime, Group, IterationError, NodeBuilder, Phase, World};

use crate::combat::{BlueGrid, RedGrid, Score};
use crate::feed::{Feeders, InputState, Orders};
use crate::navigation::{NavBuilds, Terrain};
use crate::particles::{Particles, SparkSim};
use crate::report::{FrameSample, RunReport};
use crate::units::Census;

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
    /// A frame failed.
    Frame(u64, IterationError),
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::Pool(error) => write!(f, "the thread pool did not start: {error}"),
            GameError::Frame(frame, error) => write!(f, "frame {frame} failed: {error}"),
        }
    }
}

impl std::error::Error for GameError {}

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
        let pool = ThreadPool::new(config.threads.max(1)).map_err(GameError::Pool)?;
        let mut world = World::with_pool(pool);
        world.set_fixed_timestep(FIXED_STEP);
        organise(&mut world);

        world.insert(Terrain::new());
        world.insert(NavBuilds::default());
        world.insert(InputState::default());
        world.insert(Orders::default());
        world.insert(RedGrid::default());
        world.insert(BlueGrid::default());
        world.insert(Score::default());
        world.insert(Particles::default());
        world.insert(Census::default());
        scripts::start(
            &mut world,
            scripts::Waves {
                period: Duration::from_secs(2),
                size: (config.entities / 50).max(1),
                cap: config.entities + config.entities / 4,
            },
        );
        let captains = units::spawn_armies(&mut world, config.entities);
        world.insert(captains);
        assets::start_stream(&mut world);
        let feeders = Feeders::start(&mut world);
        register(&mut world);
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

/// Stages, groups: the shape of a frame.
fn organise(world: &mut World) {
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

/// Every node of the game.
fn register(world: &mut World) {
    world.add_system(feed::read_input);
    world.add_system(feed::read_network);
    world.add_system(assets::tick_stream);
    world.add_system(assets::apply_chunks);
    world.add_factory(navigation::build_navfield);
    world.add_system(scripts::direct);
    world.add_system(scripts::stage_cues);
    world.add_system(steering::lead);
    world.add_system(steering::steer);
    let grid = |name| {
        NodeBuilder::new(name)
            .in_stage("Think")
            .in_group("Combat")
            .after("lead")
    };
    world.add_system(grid("build_grid#red").system(combat::build_grid::<0>));
    world.add_system(grid("build_grid#blue").system(combat::build_grid::<1>));
    world.add_system(combat::aim);
    world.add_system(combat::fire);
    world.add_system(combat::airstrike);
    world.add_system(combat::apply_damage);
    world.add_system(combat::reap);
    world.add_system(particles::emit_sparks);
    world.add_batch_processor(
        NodeBuilder::new("particles")
            .phase(Phase::PostUpdate)
            .in_stage("Present")
            .in_group("Effects")
            .after("emit_sparks"),
        SparkSim,
    );
    world.add_system(units::take_census);
    world.add_system(physics::integrate);
    world.add_system(physics::reload);
}

/// Runs a whole game: `config.frames` frames, then the checksum. `observe`
/// sees each frame's sample as it is taken.
///
/// # Errors
/// As for [`Game::new`] and [`Game::frame`].
pub fn run(config: &Config, mut observe: impl FnMut(&FrameSample)) -> Result<RunReport, GameError> {
    let mut game = Game::new(config)?;
    let mut report = RunReport::new(config);
    let mut nodes = Vec::new();
    let started = Instant::now();
    for _ in 0..config.frames {
        let time = game.frame()?;
        game.node_times(&mut nodes);
        let sample = report.record(game.frames() - 1, time, &nodes);
        observe(&sample);
    }
    report.finish(&mut game, started.elapsed())?;
    Ok(report)
}
