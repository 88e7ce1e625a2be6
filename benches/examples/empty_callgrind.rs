//! One world of no-op systems run for a number of iterations, for counting
//! the executor's instructions per node under callgrind:
//!
//! ```text
//! cargo build --release -p sluice-benches --example empty_callgrind
//! valgrind --tool=callgrind target/release/examples/empty_callgrind 1000 200 serial
//! ```
//!
//! Arguments: systems (1,000), iterations (200), executor (`serial`,
//! `parallel` or `adaptive`, the default), and `touching` for the systems
//! of `empty_systems`' `touching_systems` group. The systems are
//! `empty_systems`' (mixed access over 16 services, seeded); the iterations
//! counted are after the first, which plans.

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, World};
use sluice_benches::plan_workload::systems_with;
use sluice_benches::services::{ignore_ambiguities, insert_sluice, touching_sluice, with_accesses};

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map_or(1_000, |a| a.parse().expect("systems"));
    let iterations: usize = args.next().map_or(200, |a| a.parse().expect("iterations"));
    let executor = match args.next().as_deref() {
        Some("serial") => ExecutorKind::Serial,
        Some("parallel") => ExecutorKind::Parallel,
        None | Some("adaptive") => ExecutorKind::Adaptive,
        Some(other) => panic!("unknown executor {other:?} (serial, parallel, adaptive)"),
    };
    let mut world = World::with_pool(ThreadPool::new(0).expect("pool"));
    world.set_executor(executor);
    insert_sluice(&mut world, 16);
    ignore_ambiguities(&mut world);
    let touching = args.next().as_deref() == Some("touching");
    for (i, spec) in systems_with(nodes, 16, 3, false, 0x5EED_E4E7)
        .iter()
        .enumerate()
    {
        let node = NodeBuilder::new(format!("system_{i}"));
        if touching {
            let (service, gated) = spec.accesses[0];
            touching_sluice(&mut world, node, service, gated);
        } else {
            world.add_system(with_accesses(node, &spec.accesses).run(|_cx| {}));
        }
    }
    world.run_iteration().expect("plans and runs");
    for _ in 0..iterations {
        world.run_iteration().expect("runs");
    }
    println!("{nodes} systems, {iterations} iterations, {executor:?}");
}
