//! The spike watch's instructions per node, under callgrind: runs
//! `ITERATIONS` iterations of the `spikes` bench's world (1,000 no-op
//! systems, serial) in one state of the watch, inside `measured`, which is
//! all callgrind counts when told so:
//!
//! ```text
//! cargo build --release -p sluice-benches --example spikes_callgrind
//! for watch in never off on timing timing_and_on; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$watch \
//!     --collect-atstart=no --toggle-collect='*measured*' \
//!     target/release/examples/spikes_callgrind $watch 100
//! done
//! ```
//!
//! Each run prints callgrind's total in its summary (`Collected : N`);
//! instructions per node are `(N(watch) - N(never)) / (100 × 1,000)`.
//! Instructions are what a clock read undercounts: `rdtsc` is one
//! instruction and some twenty cycles, so the nanoseconds come from the
//! `spikes` bench, and this says how much of them is the watch's own work.

use std::hint::black_box;

use sluice::World;
use sluice_benches::spike_worlds::{Watch, world};

/// The iterations run when the command line names none.
const ITERATIONS: u32 = 100;

/// The only code callgrind counts (`--toggle-collect='*measured*'`).
#[inline(never)]
fn measured(world: &mut World, iterations: u32) {
    for _ in 0..iterations {
        world.run_iteration().expect("runs");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "on".to_owned());
    let Some(watch) = Watch::from_name(&name) else {
        let names: Vec<&str> = Watch::ALL.iter().map(|w| w.name()).collect();
        eprintln!("spikes_callgrind: unknown state `{name}`; one of {names:?}");
        std::process::exit(2);
    };
    let iterations = match args.next().map(|arg| arg.parse()) {
        None => ITERATIONS,
        Some(Ok(iterations)) => iterations,
        Some(Err(error)) => {
            eprintln!("spikes_callgrind: the iteration count: {error}");
            std::process::exit(2);
        }
    };
    let mut world = world(watch);
    measured(black_box(&mut world), iterations);
    println!(
        "{}: {iterations} iterations, {} spikes",
        watch.name(),
        world.spikes_total()
    );
}
