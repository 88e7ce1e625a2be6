//! Assets streamed by an async continuation: a task (`World::spawn_task`)
//! waits on the frame clock, "decodes" one terrain chunk every
//! [`CHUNK_PERIOD`] frames on whichever pool thread polls it, and sends it
//! into the world as an `AssetChunk` message. A system applies each chunk
//! to the terrain, which makes the navigation factory rebuild once.
//!
//! Reproducible: the task is woken in the frame it waits for and polled in
//! that frame's loose-task window (it is the only regular task, and the
//! first task of a window always starts), its chunk is drained at that
//! frame's boundary and applied at the start of the next.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use atomic_waker::AtomicWaker;
use sluice::{FrameTime, MessageSender, Subscribe, World, run_condition, system};

use crate::math::mix;
use crate::navigation::{NAV_DIM, Terrain};

/// Frames between two chunks.
pub const CHUNK_PERIOD: u64 = 100;
/// Chunks in the stream.
pub const CHUNKS: u64 = 8;

/// A decoded terrain chunk: cells to turn into walls or open ground.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetChunk {
    /// Its number in the stream, from 1.
    pub index: u64,
    /// The frame it was decoded in.
    pub frame: u64,
    /// `(x, y, wall)` per changed cell.
    pub cells: Vec<(u16, u16, bool)>,
}

/// What has streamed in so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssetLibrary {
    /// Chunks applied.
    pub chunks: u64,
    /// Cells changed by them.
    pub cells: u64,
    /// A running digest of their contents.
    pub digest: u64,
}

/// The frame clock the stream waits on: a system ticks it, a task awaits it.
#[derive(Debug, Default)]
pub struct FrameClock {
    frame: AtomicU64,
    waker: AtomicWaker,
}

impl FrameClock {
    /// A future resolving once the clock reaches `frame`.
    pub fn until(self: &Arc<Self>, frame: u64) -> impl Future<Output = ()> + Send + use<> {
        let clock = Arc::clone(self);
        std::future::poll_fn(move |cx| {
            clock.waker.register(cx.waker());
            if clock.frame.load(Ordering::Acquire) >= frame {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

/// The clock as a service.
#[derive(Debug, Default)]
pub struct StreamClock(pub Arc<FrameClock>);

/// Chunk `index`: moves the gaps of one of the two middle walls.
pub fn decode(index: u64, frame: u64) -> AssetChunk {
    let column = if index % 2 == 1 { 26 } else { 37 };
    let shift = (mix(index) % 12) as usize;
    let cells = (0..NAV_DIM)
        .map(|y| (column as u16, y as u16, (y + shift) % 12 >= 3))
        .collect();
    AssetChunk {
        index,
        frame,
        cells,
    }
}

/// Starts the stream: inserts the clock and spawns the task.
pub fn start_stream(world: &mut World) {
    let clock = Arc::new(FrameClock::default());
    world.insert(StreamClock(Arc::clone(&clock)));
    world.insert(AssetLibrary::default());
    // Generous: a window is time-boxed, and the stream's one poll per chunk
    // takes microseconds.
    world.set_regular_window(Duration::from_millis(50));
    let sender = world.sender_with_capacity::<AssetChunk>(16);
    world
        .spawn_task(async move {
            for index in 1..=CHUNKS {
                let frame = index * CHUNK_PERIOD;
                clock.until(frame).await;
                send(&sender, decode(index, frame), &clock, frame).await;
            }
        })
        .detach();
}

async fn send(
    sender: &MessageSender<AssetChunk>,
    chunk: AssetChunk,
    clock: &Arc<FrameClock>,
    frame: u64,
) {
    let mut chunk = chunk;
    let mut next = frame;
    while let Err(full) = sender.send(chunk) {
        if !full.is_full() {
            return; // the world is gone
        }
        chunk = full.into_inner();
        next += 1;
        clock.until(next).await;
    }
}

/// Tells the stream which frame this is.
#[system(phase = PreUpdate, stage = "Feed", group = "Assets")]
pub fn tick_stream(time: &FrameTime, clock: &StreamClock) {
    clock.0.frame.store(time.frame, Ordering::Release);
    clock.0.waker.wake();
}

/// Only in frames a chunk arrived (so the terrain's version, and with it the
/// navigation factory, moves only then).
#[run_condition]
pub fn chunk_arrived(mut chunks: Subscribe<AssetChunk>) -> bool {
    chunks.unread().count() > 0
}

/// Applies the chunks that streamed in.
#[system(phase = PreUpdate, stage = "Feed", group = "Assets", run_if = chunk_arrived)]
pub fn apply_chunks(
    mut chunks: Subscribe<AssetChunk>,
    terrain: &mut Terrain,
    library: &mut AssetLibrary,
) {
    for chunk in chunks.unread() {
        for &(x, y, wall) in &chunk.cells {
            terrain.set(usize::from(x), usize::from(y), wall);
            let cell = (u64::from(x) << 17) | (u64::from(y) << 1) | u64::from(wall);
            library.digest = mix(library.digest ^ cell);
        }
        library.chunks += 1;
        library.cells += chunk.cells.len() as u64;
        library.digest = mix(library.digest ^ chunk.index ^ (chunk.frame << 32));
    }
    terrain.revision += 1;
}

/// The plugin of the asset stream's systems (the stream itself starts with the scene: `start_stream`).
#[derive(Debug, Default)]
pub struct AssetsPlugin;

impl sluice::plugin::Plugin for AssetsPlugin {
    fn requires(&self) -> sluice::plugin::Requires {
        use sluice::plugin::Requires;
        Requires::new().plugin::<crate::FramePlugin>()
    }

    fn build(&self, world: &mut sluice::World) {
        world.add_system(tick_stream);
        world.add_system(apply_chunks);
    }
}
