//! Particles: every death bursts into sparks, simulated by a batch
//! processor in parallel slices of the pool. Particles persist across
//! frames; `after_update` retires the burnt-out ones.

use std::sync::atomic::{AtomicU32, Ordering};

use sluice::exec::ClearBuffer;
use sluice::{BatchProcessor, Subscribe, system};

use crate::combat::Died;
use crate::math::{Vec2, in_disk, mix};

/// Sparks per death.
pub const SPARKS: u64 = 12;
/// Frames a spark lives.
pub const SPARK_LIFE: u32 = 40;

/// One spark. Its moving parts are atomics so that the batch slices,
/// which see the buffer shared, can advance it in place (each spark is in
/// exactly one slice).
#[derive(Debug)]
pub struct Spark {
    x: AtomicU32,
    y: AtomicU32,
    velocity: Vec2,
    life: AtomicU32,
}

impl Spark {
    fn new(at: Vec2, velocity: Vec2) -> Self {
        Self {
            x: AtomicU32::new(at.x.to_bits()),
            y: AtomicU32::new(at.y.to_bits()),
            velocity,
            life: AtomicU32::new(SPARK_LIFE),
        }
    }

    /// Where it is now.
    pub fn at(&self) -> Vec2 {
        Vec2::new(
            f32::from_bits(self.x.load(Ordering::Relaxed)),
            f32::from_bits(self.y.load(Ordering::Relaxed)),
        )
    }
}

/// The live sparks and what happened to them: the batch processor's buffer.
#[derive(Debug, Default)]
pub struct Particles {
    sparks: Vec<Spark>,
    /// Sparks ever emitted.
    pub emitted: u64,
    /// Sparks burnt out.
    pub retired: u64,
}

impl Particles {
    /// Sparks alive now.
    pub fn alive(&self) -> usize {
        self.sparks.len()
    }

    /// The live sparks, oldest first.
    pub fn sparks(&self) -> &[Spark] {
        &self.sparks
    }
}

impl ClearBuffer for Particles {
    fn clear_buffer(&mut self) {
        self.sparks.clear();
    }
}

/// Each death (read as a `Died` message) bursts into [`SPARKS`] sparks.
#[system(phase = PostUpdate, stage = "Present", group = "Effects")]
pub fn emit_sparks(mut deaths: Subscribe<Died>, particles: &mut Particles) {
    for death in deaths.unread() {
        for spark in 0..SPARKS {
            let seed = mix(particles.emitted ^ (u64::from(death.team) << 40)) ^ spark;
            particles
                .sparks
                .push(Spark::new(death.at, in_disk(seed, 30.0)));
        }
        particles.emitted += SPARKS;
    }
}

/// Advances every spark one frame, a slice of [`BATCH_SIZE`](Self::BATCH_SIZE)
/// sparks per task.
#[derive(Debug, Default)]
pub struct SparkSim;

impl BatchProcessor for SparkSim {
    type Buffer = Particles;
    type Item = Spark;
    const BATCH_SIZE: usize = 1_024;

    fn items(buffer: &Particles) -> &[Spark] {
        &buffer.sparks
    }

    fn process_batch(&self, _start: usize, batch: &[Spark]) {
        const DT: f32 = 1.0 / 60.0;
        for spark in batch {
            let at = spark.at() + spark.velocity * DT;
            spark.x.store(at.x.to_bits(), Ordering::Relaxed);
            spark.y.store(at.y.to_bits(), Ordering::Relaxed);
            spark.life.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn after_update(&mut self, buffer: &mut Particles) {
        let before = buffer.sparks.len();
        buffer
            .sparks
            .retain(|spark| spark.life.load(Ordering::Relaxed) > 0);
        buffer.retired += (before - buffer.sparks.len()) as u64;
    }
}

/// The plugin of sparks: emitted on hits, simulated by a batch processor.
#[derive(Debug, Default)]
pub struct ParticlesPlugin;

impl sluice::plugin::Plugin for ParticlesPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new()
            .plugin::<crate::FramePlugin>()
            .plugin::<crate::combat::CombatPlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.insert(Particles::default());
        world.add_system(emit_sparks);
        world.add_batch_processor(
            sluice::NodeBuilder::new("particles")
                .phase(sluice::Phase::PostUpdate)
                .in_stage("Present")
                .in_group("Effects")
                .after("emit_sparks"),
            SparkSim,
        );
    }
}
