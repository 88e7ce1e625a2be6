//! The guide's chapter "Batch processors" (`docs/guide/08-batch-processors.md`),
//! runnable: `cargo run --example batch`.
//!
//! An emitter fills a particle buffer; a batch processor cools the
//! particles in slices of 1,024 on every thread of the pool, one partial
//! sum per slice, and its `after_update` commits the frame's heat and
//! clears the buffer; a report reads the result. A pause condition skips
//! the whole node, slices and all.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{self, ThreadId};

use sluice::exec::{BatchProcessor, ClearBuffer, ThreadPool};
use sluice::{ExecutorKind, NodeBuilder, World};

const PARTICLES: u32 = 100_000;

/// The buffer: this frame's particles (their heat), and the last frame's total.
#[derive(Default)]
struct Particles {
    heat: Vec<u32>,
    total_heat: u64,
    frames: u32,
    /// The most threads that took part in one frame's slices.
    threads: usize,
}

impl ClearBuffer for Particles {
    fn clear_buffer(&mut self) {
        self.heat.clear();
    }
}

/// Cools every particle by a tenth: one slot per slice, so slices never
/// write the same memory, and `after_update` folds the slots serially.
#[derive(Default)]
struct Cool {
    partial: Vec<AtomicU64>,
    /// Which thread ran each slice (a lock per slot: never contended).
    ran_on: Vec<Mutex<Option<ThreadId>>>,
    /// Reused by `after_update` to count distinct threads.
    seen: Vec<ThreadId>,
}

impl BatchProcessor for Cool {
    type Buffer = Particles;
    type Item = u32;
    const BATCH_SIZE: usize = 1_024;

    fn items(buffer: &Particles) -> &[u32] {
        &buffer.heat
    }

    /// On the node's thread, before slicing: size the slots (allocates
    /// only when the buffer grew).
    fn before_update(&mut self, buffer: &mut Particles) {
        let slices = buffer.heat.len().div_ceil(Self::BATCH_SIZE);
        self.partial.resize_with(slices, AtomicU64::default);
        self.ran_on.resize_with(slices, Mutex::default);
    }

    /// On pool threads, in parallel: no allocation here.
    fn process_batch(&self, start: usize, batch: &[u32]) {
        let slice = start / Self::BATCH_SIZE;
        let cooled: u64 = batch.iter().map(|&heat| u64::from(heat - heat / 10)).sum();
        self.partial[slice].store(cooled, Ordering::Relaxed);
        *self.ran_on[slice].lock().expect("slot") = Some(thread::current().id());
    }

    /// Once, after the last slice: the serial commit.
    fn after_update(&mut self, buffer: &mut Particles) {
        buffer.total_heat = self.partial.iter_mut().map(|slot| *slot.get_mut()).sum();
        buffer.frames += 1;
        self.seen.clear();
        for slot in &mut self.ran_on {
            if let Some(id) = slot.get_mut().expect("slot").take()
                && !self.seen.contains(&id)
            {
                self.seen.push(id);
            }
        }
        buffer.threads = buffer.threads.max(self.seen.len());
        buffer.clear_buffer();
    }
}

/// The game's pause switch.
struct Paused(bool);

/// What the report saw, frame by frame.
#[derive(Default)]
struct Reports(Vec<u64>);

fn expected_heat() -> u64 {
    (0..PARTICLES).map(|heat| u64::from(heat - heat / 10)).sum()
}

fn main() -> Result<(), sluice::IterationError> {
    let mut world = World::with_pool(ThreadPool::new(4).expect("a pool of 4"));
    // Always on the pool, so the slices are spread (the adaptive default may
    // run a frame this small inline).
    world.set_executor(ExecutorKind::Parallel);
    world.insert(Particles::default());
    world.insert(Paused(false));
    world.insert(Reports::default());

    world.add_system(
        NodeBuilder::new("emit").system(|particles: &mut Particles| {
            particles.heat.extend(0..PARTICLES);
        }),
    );
    // The buffer is gated automatically: `emit` finishes first, and `report`
    // starts only after `after_update`. One condition call for the whole node.
    world.add_system(
        NodeBuilder::new("cool")
            .after("emit")
            .batch_processor(Cool::default())
            .run_if(|paused: &Paused| !paused.0),
    );
    world.add_system(NodeBuilder::new("report").after("cool").system(
        |particles: &Particles, reports: &mut Reports| {
            reports.0.push(particles.total_heat);
        },
    ));

    for _ in 0..3 {
        world.run_iteration()?;
    }
    let particles = world.get::<Particles>().unwrap();
    println!(
        "3 frames of {PARTICLES} particles in {} slices on up to {} threads: total heat {}",
        (PARTICLES as usize).div_ceil(Cool::BATCH_SIZE),
        particles.threads,
        particles.total_heat
    );
    assert!((1..=4).contains(&particles.threads), "the pool's threads");
    assert_eq!(particles.frames, 3);
    assert_eq!(
        particles.total_heat,
        expected_heat(),
        "the same as a serial loop"
    );
    assert!(particles.heat.is_empty(), "after_update cleared it");
    assert_eq!(world.get::<Reports>().unwrap().0, vec![expected_heat(); 3]);

    // Paused: no before_update, no slice, no after_update; the buffer stays.
    world.insert(Paused(true));
    world.run_iteration()?;
    let particles = world.get::<Particles>().unwrap();
    println!(
        "paused: {} particles left in the buffer, {} frames processed",
        particles.heat.len(),
        particles.frames
    );
    assert_eq!(particles.heat.len(), PARTICLES as usize);
    assert_eq!(particles.frames, 3);

    // Resumed: the two frames' particles are processed together.
    world.insert(Paused(false));
    world.run_iteration()?;
    let particles = world.get::<Particles>().unwrap();
    assert_eq!(particles.total_heat, 2 * expected_heat());
    assert!(particles.heat.is_empty());
    println!("resumed: total heat {}", particles.total_heat);
    Ok(())
}
