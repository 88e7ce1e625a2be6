//! The worlds the spike-watch measurements run: `NODES` no-op systems on
//! the serial executor, in each state of the watch. Shared by the `spikes`
//! bench and the `spikes_callgrind` example, so both measure the same thing.

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, SpikeWatch, World};

/// How many no-op systems a world holds.
pub const NODES: usize = 1_000;

/// A state of the spike watch (and of the per-node timing it turns on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// A world that never had the watch.
    Never,
    /// The watch turned on, run, and turned off again.
    Off,
    /// The watch on, default thresholds: every node is judged and recorded,
    /// none is reported.
    On,
    /// `enable_timing(true)` alone: the per-node clocks the watch turns on.
    Timing,
    /// Timing and the watch: `On` over `Timing` is the watch's own work.
    TimingAndOn,
}

impl Watch {
    /// Every state, `Never` first (the one the others are compared with).
    pub const ALL: [Watch; 5] = [
        Watch::Never,
        Watch::Off,
        Watch::On,
        Watch::Timing,
        Watch::TimingAndOn,
    ];

    /// Its name in the figures.
    pub fn name(self) -> &'static str {
        match self {
            Watch::Never => "never",
            Watch::Off => "off",
            Watch::On => "on",
            Watch::Timing => "timing",
            Watch::TimingAndOn => "timing_and_on",
        }
    }

    /// The state named `name`.
    pub fn from_name(name: &str) -> Option<Watch> {
        Watch::ALL.into_iter().find(|watch| watch.name() == name)
    }
}

/// A world of [`NODES`] no-op systems on the serial executor in `watch`'s
/// state, planned and run past the watch's window, so that every further
/// run judges every node and evicts its oldest sample.
pub fn world(watch: Watch) -> World {
    let mut world = World::with_pool(ThreadPool::new(0).expect("a pool without workers"));
    world.set_executor(ExecutorKind::Serial);
    for i in 0..NODES {
        world.add_system(NodeBuilder::new(format!("system_{i}")).system(|| {}));
    }
    let on = Some(SpikeWatch::default());
    match watch {
        Watch::Never => {}
        Watch::Off => {
            world.set_spike_watch(on).expect("valid");
            world.run_iteration().expect("runs");
            world.set_spike_watch(None).expect("valid");
        }
        Watch::On => world.set_spike_watch(on).expect("valid"),
        Watch::Timing => world.enable_timing(true),
        Watch::TimingAndOn => {
            world.enable_timing(true);
            world.set_spike_watch(on).expect("valid");
        }
    }
    for _ in 0..=SpikeWatch::default().window {
        world.run_iteration().expect("runs");
    }
    world
}
