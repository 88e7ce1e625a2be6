//! The peer of `empty_callgrind`: bevy's single-threaded executor running
//! the same no-op systems (the same accesses over 16 resources), for
//! counting its instructions per node under callgrind:
//!
//! ```text
//! cargo build --release -p sluice-benches --example bevy_empty_callgrind
//! valgrind --tool=callgrind target/release/examples/bevy_empty_callgrind 10 2000
//! ```
//!
//! Arguments: systems (1,000), iterations (200), and `touching` for
//! `Res`/`ResMut` systems (`empty_systems`' `touching_systems`). Subtract two runs'
//! totals (say 1,000 and 2,000 iterations) for the cost of one.

use bevy_ecs::schedule::{Schedule, SingleThreadedExecutor};
use bevy_ecs::world::World;
use sluice_benches::plan_workload::systems_with;
use sluice_benches::services::{bevy_system, register_bevy, touching_bevy};

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map_or(1_000, |a| a.parse().expect("systems"));
    let iterations: usize = args.next().map_or(200, |a| a.parse().expect("iterations"));
    let mut world = World::new();
    let ids = register_bevy(&mut world, 16);
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    let touching = args.next().as_deref() == Some("touching");
    for spec in systems_with(nodes, 16, 3, false, 0x5EED_E4E7) {
        if touching {
            let (service, gated) = spec.accesses[0];
            touching_bevy(&mut schedule, service, gated);
        } else {
            schedule.add_systems(bevy_system(&mut world, &ids, &spec.accesses, || {}));
        }
    }
    schedule.run(&mut world);
    for _ in 0..iterations {
        schedule.run(&mut world);
    }
    println!("{nodes} systems, {iterations} iterations, bevy single-threaded");
}
