//! What a run reports: per-frame timing (mean, p99, the window's peak from a
//! `RingHistory`, the busiest node), the plans' stage views and
//! diagnostics per cadence, and a checksum of the final world state.

use std::fmt::{self, Write as _};
use std::time::Duration;

use sluice::{ChildOf, Entity, FixedTime, FrameTime, GlobalTransform, NodeIndex, Plan, SpikeWatch};
use sluice_collections::RingHistory;

use crate::assets::AssetLibrary;
use crate::combat::Score;
use crate::feed::{InputState, Orders};
use crate::navigation::{NAV_DIM, NavBuilds, NavField, Terrain};
use crate::particles::Particles;
use crate::scripts::DirectorLog;
use crate::turrets::Turret;
use crate::units::{Captain, Census, Health, Pos, Slot, Team, Vel, Weapon};
use crate::{Config, Game, GameError};

/// Frames in the peak window.
pub const WINDOW: usize = 120;

/// The spike watch the game runs with: a node's run over four times its
/// peak of its own last [`WINDOW`] runs, and over a millisecond, is
/// reported (through `tracing`, and in the report's list of the last 16).
pub const SPIKE_WATCH: SpikeWatch = SpikeWatch {
    window: WINDOW,
    ratio: 4.0,
    min: Duration::from_millis(1),
    keep: 16,
};

/// One reported spike, as the report prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpikeLine {
    /// The node's name.
    pub node: String,
    /// The frame (iteration) it happened in.
    pub frame: u64,
    /// How long the run took, against the peak and mean of the node's
    /// last [`WINDOW`] runs before it.
    pub time: Duration,
    /// The peak.
    pub peak: Duration,
    /// The mean.
    pub mean: Duration,
}

/// One frame as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSample {
    /// Its number, from 0.
    pub frame: u64,
    /// How long its update took.
    pub time: Duration,
    /// The longest update among the last [`WINDOW`] frames, this one included.
    pub window_peak: Duration,
    /// The node that took longest in this frame, by index, and its time.
    pub busiest: Option<(usize, Duration)>,
}

/// Everything a run measured, and the final state's checksum.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The settings it ran with.
    pub config: Config,
    /// Each frame.
    pub samples: Vec<FrameSample>,
    /// Per frame, per node index: the node's time in microseconds.
    pub node_frames: Vec<Vec<f32>>,
    /// Per node index: its time summed over the run.
    pub node_totals: Vec<Duration>,
    /// Per node index: its name (empty until the run finished).
    pub node_names: Vec<String>,
    /// Both cadences' stage views, one line per stage.
    pub stages: String,
    /// The plan's diagnostics (`world.plan()?.diagnostics()`: warnings
    /// such as SL0008, found over both cadences), one line each.
    pub diagnostics: Vec<String>,
    /// The final state's checksum.
    pub checksum: u64,
    /// Wall time of the whole run (feeding included).
    pub wall: Duration,
    /// A one-paragraph summary of the final state.
    pub state: String,
    /// The lanes-and-gates picture of the game's plans (`World::plan_svg`).
    pub plan_svg: String,
    /// The last spikes the watch reported ([`SPIKE_WATCH`]), oldest first.
    pub spikes: Vec<SpikeLine>,
    /// How many it reported in all.
    pub spikes_total: u64,
    history: RingHistory<Duration>,
}

impl RunReport {
    /// An empty report for a run of `config`.
    pub fn new(config: &Config) -> Self {
        Self {
            config: config.clone(),
            samples: Vec::with_capacity(config.frames as usize),
            node_frames: Vec::with_capacity(config.frames as usize),
            node_totals: Vec::new(),
            node_names: Vec::new(),
            stages: String::new(),
            diagnostics: Vec::new(),
            checksum: 0,
            wall: Duration::ZERO,
            state: String::new(),
            plan_svg: String::new(),
            spikes: Vec::new(),
            spikes_total: 0,
            history: RingHistory::new(WINDOW),
        }
    }

    /// Records frame `frame`: its update time and each node's time.
    pub fn record(&mut self, frame: u64, time: Duration, nodes: &[Duration]) -> FrameSample {
        self.history.push(time);
        if self.node_totals.len() < nodes.len() {
            self.node_totals.resize(nodes.len(), Duration::ZERO);
        }
        for (total, node) in self.node_totals.iter_mut().zip(nodes) {
            *total += *node;
        }
        self.node_frames
            .push(nodes.iter().map(|node| node.as_secs_f32() * 1e6).collect());
        let busiest = nodes
            .iter()
            .enumerate()
            .filter(|(_, time)| !time.is_zero())
            .max_by_key(|&(index, time)| (*time, std::cmp::Reverse(index)))
            .map(|(index, time)| (index, *time));
        let sample = FrameSample {
            frame,
            time,
            window_peak: self.history.max().unwrap_or(time),
            busiest,
        };
        self.samples.push(sample);
        sample
    }

    /// Names the nodes, takes the stage views and the checksum.
    ///
    /// # Errors
    /// When the world cannot be planned.
    pub fn finish(&mut self, game: &mut Game, wall: Duration) -> Result<(), GameError> {
        self.wall = wall;
        let plans = game
            .world_mut()
            .plans()
            .map_err(|error| GameError::Frame(game.frames(), error))?;
        let names = plans.variable();
        self.node_names = (0..self.node_totals.len())
            .map(|index| names.node_name(NodeIndex(index as u32)).to_owned())
            .collect();
        self.stages.clear();
        stage_view(&mut self.stages, "fixed ", plans.fixed());
        stage_view(&mut self.stages, "", plans.variable());
        self.diagnostics = diagnostic_lines(plans.variable());
        self.spikes = game
            .world()
            .spikes()
            .map(|spike| SpikeLine {
                node: spike.name.to_string(),
                frame: spike.iteration,
                time: spike.time,
                peak: spike.peak,
                mean: spike.mean,
            })
            .collect();
        self.spikes_total = game.world().spikes_total();
        self.checksum = checksum(game);
        self.state = state(game);
        self.plan_svg = game
            .world_mut()
            .plan_svg()
            .map_err(|error| GameError::Frame(game.frames(), error))?;
        Ok(())
    }

    /// The mean update time.
    pub fn mean(&self) -> Duration {
        let total: Duration = self.samples.iter().map(|sample| sample.time).sum();
        total / self.samples.len().max(1) as u32
    }

    /// The 99th percentile update time.
    pub fn p99(&self) -> Duration {
        let mut times: Vec<Duration> = self.samples.iter().map(|sample| sample.time).collect();
        times.sort_unstable();
        let rank = (times.len() * 99).div_ceil(100).max(1);
        times.get(rank - 1).copied().unwrap_or_default()
    }

    /// The longest update of the last [`WINDOW`] frames.
    pub fn window_peak(&self) -> Duration {
        self.history.max().unwrap_or_default()
    }

    /// Node indices by total time, longest first (nodes that never ran
    /// left out).
    pub fn busiest_nodes(&self) -> Vec<usize> {
        let mut nodes: Vec<usize> = (0..self.node_totals.len())
            .filter(|&node| !self.node_totals[node].is_zero())
            .collect();
        nodes.sort_by_key(|&node| (std::cmp::Reverse(self.node_totals[node]), node));
        nodes
    }

    /// A node's name.
    pub fn name(&self, node: usize) -> &str {
        self.node_names.get(node).map_or("?", String::as_str)
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |time: Duration| time.as_secs_f64() * 1e3;
        let frames = self.samples.len();
        writeln!(f, "plan stages per cadence:")?;
        write!(f, "{}", self.stages)?;
        self.write_diagnostics(f)?;
        writeln!(f)?;
        writeln!(
            f,
            "{frames} frames, {} units at the start, {} threads, in {:.2} s",
            self.config.entities,
            self.config.threads,
            self.wall.as_secs_f64()
        )?;
        writeln!(
            f,
            "frame time: mean {:.3} ms, p99 {:.3} ms, peak of the last {WINDOW} frames {:.3} ms",
            ms(self.mean()),
            ms(self.p99()),
            ms(self.window_peak())
        )?;
        let total: Duration = self.samples.iter().map(|sample| sample.time).sum();
        writeln!(
            f,
            "busiest nodes (time summed over the run, share of update time):"
        )?;
        for node in self.busiest_nodes().into_iter().take(5) {
            let time = self.node_totals[node];
            writeln!(
                f,
                "  {:<24} {:>9.2} ms  {:>5.1}%",
                self.name(node),
                ms(time),
                100.0 * time.as_secs_f64() / total.as_secs_f64().max(1e-12)
            )?;
        }
        self.write_spikes(f)?;
        writeln!(f, "{}", self.state)?;
        write!(f, "checksum {:016x}", self.checksum)
    }
}

impl RunReport {
    /// The plans' diagnostics section: every warning the planner reported,
    /// or that there was none.
    fn write_diagnostics(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.diagnostics.is_empty() {
            return writeln!(f, "plan diagnostics: none");
        }
        writeln!(f, "plan diagnostics: {}", self.diagnostics.len())?;
        for line in &self.diagnostics {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }

    fn write_spikes(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |time: Duration| time.as_secs_f64() * 1e3;
        writeln!(
            f,
            "spikes (a node's run over {}x its peak of its last {} runs and over {:.1} ms): {}",
            SPIKE_WATCH.ratio,
            SPIKE_WATCH.window,
            ms(SPIKE_WATCH.min),
            self.spikes_total
        )?;
        if self.spikes_total > self.spikes.len() as u64 {
            writeln!(f, "  (the last {}:)", self.spikes.len())?;
        }
        for spike in &self.spikes {
            writeln!(
                f,
                "  frame {:>5}: {:<24} {:>8.3} ms  (peak {:.3} ms, mean {:.3} ms, {:.1}x the peak)",
                spike.frame,
                spike.node,
                ms(spike.time),
                ms(spike.peak),
                ms(spike.mean),
                spike.time.as_secs_f64() / spike.peak.as_secs_f64().max(1e-12)
            )?;
        }
        Ok(())
    }
}

/// One line per diagnostic of `plan`, as the report prints them
/// (`warning[SL0008]: ..`). The planner looks over both cadences at once,
/// so the variable plan (the one `world.plan()` returns) holds them all.
pub fn diagnostic_lines(plan: &Plan) -> Vec<String> {
    plan.diagnostics().iter().map(ToString::to_string).collect()
}

fn stage_view(out: &mut String, label: &str, plan: &Plan) {
    for (index, stage) in plan.stages().enumerate() {
        let names: Vec<&str> = stage.iter().map(|&node| plan.node_name(node)).collect();
        let _ = writeln!(out, "{label}stage {index}: {}", names.join(" "));
    }
}

fn state(game: &Game) -> String {
    let world = game.world();
    let census = world.get::<Census>().cloned().unwrap_or_default();
    let score = world.get::<Score>().cloned().unwrap_or_default();
    let particles = world.get::<Particles>();
    let library = world.get::<AssetLibrary>().cloned().unwrap_or_default();
    let builds = world.get::<NavBuilds>().map_or(0, |builds| {
        builds.0.load(std::sync::atomic::Ordering::Relaxed)
    });
    let terrain = world.get::<Terrain>().map_or(0, |terrain| terrain.revision);
    let director = world.get::<DirectorLog>().cloned().unwrap_or_default();
    let waves = director.waves;
    let steps = world.get::<FixedTime>().map_or(0, |fixed| fixed.total);
    let input = world.get::<InputState>().cloned().unwrap_or_default();
    let orders = world.get::<Orders>().cloned().unwrap_or_default();
    format!(
        "alive: red {} blue {}; kills: red {} blue {}; hits {}; airstrikes {}; waves {}; cutscene beats {}; \
         sparks emitted {} alive {}; asset chunks {}; terrain revision {}, navigation built {} times; \
         fixed steps {}; inputs {} ({} out of step), network orders {} ({} out of step)",
        census.alive[0],
        census.alive[1],
        score.kills[0],
        score.kills[1],
        score.hits,
        score.strikes,
        waves,
        director.beats.len(),
        particles.map_or(0, |particles| particles.emitted),
        particles.map_or(0, Particles::alive),
        library.chunks,
        terrain,
        builds,
        steps,
        input.received,
        input.out_of_step,
        orders.received,
        orders.out_of_step,
    )
}

/// FNV-1a, 64 bits: a small, fixed, platform-independent hash.
#[derive(Debug, Clone, Copy)]
pub struct Checksum(u64);

impl Default for Checksum {
    fn default() -> Self {
        Self(0xCBF2_9CE4_8422_2325)
    }
}

impl Checksum {
    /// Mixes in `value`'s bytes.
    pub fn u64(&mut self, value: u64) {
        for byte in value.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }

    /// Mixes in `value`'s bits.
    pub fn f32(&mut self, value: f32) {
        self.u64(u64::from(value.to_bits()));
    }

    /// The hash so far.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// A hash of the final state: every unit's components in entity order, the
/// captains, the sparks, and every resource and counter of the game.
pub fn checksum(game: &mut Game) -> u64 {
    let mut hash = Checksum::default();
    let world = game.world_mut();
    let mut units: Vec<(Entity, Pos, Vel, Health, Team, Slot, Weapon)> = world
        .query::<(Entity, &Pos, &Vel, &Health, &Team, &Slot, &Weapon)>()
        .iter()
        .map(|(entity, pos, vel, health, team, slot, weapon)| {
            (entity, *pos, *vel, *health, *team, *slot, *weapon)
        })
        .collect();
    units.sort_by_key(|unit| unit.0);
    hash.u64(units.len() as u64);
    for (entity, pos, vel, health, team, slot, weapon) in units {
        hash.u64(entity.id());
        for value in [pos.0.x, pos.0.y, vel.0.x, vel.0.y, slot.0.x, slot.0.y] {
            hash.f32(value);
        }
        hash.u64(health.0 as u64);
        hash.u64(u64::from(team.0));
        hash.u64(u64::from(weapon.cooldown));
        hash.u64(weapon.target.map_or(u64::MAX, Entity::id));
    }
    let mut captains: Vec<(Entity, Pos)> = world
        .query::<(Entity, &Pos, &Captain)>()
        .iter()
        .map(|(entity, pos, _)| (entity, *pos))
        .collect();
    captains.sort_by_key(|captain| captain.0);
    for (entity, pos) in captains {
        hash.u64(entity.id());
        hash.f32(pos.0.x);
        hash.f32(pos.0.y);
    }
    // Each turret: its carrier and its propagated world position.
    let mut turrets: Vec<(Entity, Entity, [f32; 3])> = world
        .query::<(Entity, &ChildOf, &GlobalTransform, &Turret)>()
        .iter()
        .map(|(entity, of, global, _)| (entity, of.parent(), global.translation().to_array()))
        .collect();
    turrets.sort_by_key(|turret| turret.0);
    hash.u64(turrets.len() as u64);
    for (entity, carrier, at) in turrets {
        hash.u64(entity.id());
        hash.u64(carrier.id());
        for value in at {
            hash.f32(value);
        }
    }
    if let Some(particles) = world.get::<Particles>() {
        hash.u64(particles.emitted);
        hash.u64(particles.retired);
        for spark in particles.sparks() {
            hash.f32(spark.at().x);
            hash.f32(spark.at().y);
        }
    }
    if let Some(score) = world.get::<Score>() {
        for value in [score.kills[0], score.kills[1], score.hits, score.strikes] {
            hash.u64(value);
        }
    }
    if let Some(census) = world.get::<Census>() {
        for value in census.alive.iter().chain(&census.wounded) {
            hash.u64(*value);
        }
    }
    if let Some(input) = world.get::<InputState>() {
        hash.f32(input.rally.x);
        hash.f32(input.rally.y);
        hash.u64(input.received);
        hash.u64(input.out_of_step);
    }
    if let Some(orders) = world.get::<Orders>() {
        for waypoint in orders.waypoints {
            hash.f32(waypoint.x);
            hash.f32(waypoint.y);
        }
        hash.u64(orders.received);
        hash.u64(orders.out_of_step);
    }
    if let Some(terrain) = world.get::<Terrain>() {
        hash.u64(u64::from(terrain.revision));
        for y in 0..NAV_DIM {
            for x in 0..NAV_DIM {
                hash.u64(u64::from(terrain.is_wall(x, y)));
            }
        }
    }
    if let Some(nav) = world.get::<NavField>() {
        hash.u64(u64::from(nav.revision));
    }
    if let Some(builds) = world.get::<NavBuilds>() {
        hash.u64(u64::from(
            builds.0.load(std::sync::atomic::Ordering::Relaxed),
        ));
    }
    if let Some(library) = world.get::<AssetLibrary>() {
        hash.u64(library.chunks);
        hash.u64(library.cells);
        hash.u64(library.digest);
    }
    if let Some(log) = world.get::<DirectorLog>() {
        hash.u64(log.waves);
        hash.u64(log.spawned);
        for (beat, at) in &log.beats {
            hash.u64(beat.len() as u64);
            hash.u64(at.as_nanos() as u64);
        }
    }
    if let Some(fixed) = world.get::<FixedTime>() {
        hash.u64(fixed.total);
    }
    if let Some(time) = world.get::<FrameTime>() {
        hash.u64(time.frame);
    }
    hash.finish()
}
