//! Read-only gates: a barrier in a lane that does not write.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use sluice::{ExecutorKind, Gate, NodeBuilder, World};

#[derive(Debug, Default)]
struct Log(Vec<&'static str>);

#[derive(Debug, Default)]
struct Summary(usize);

/// A gate is a barrier: readers before it finish first, readers after it
/// wait; it reads what the writer before it wrote.
#[test]
fn a_read_only_gate_is_a_barrier_in_its_lane() {
    let mut world = World::new();
    world.insert(Log::default());
    let writer = world.add_system(|log: &mut Log| log.0.push("write"));
    let before = world.add_system(NodeBuilder::new("before").system(|_: &Log| {}));
    let gate = world.add_system(|log: Gate<&Log>| assert_eq!(log.0.last(), Some(&"write")));
    let after = world.add_system(NodeBuilder::new("after").system(|_: &Log| {}));
    let plan = world.plan().unwrap();
    assert!(plan.why(writer, gate).is_some());
    assert!(
        plan.edge_between(before, gate).is_some(),
        "gate after shared"
    );
    assert!(
        plan.edge_between(gate, after).is_some(),
        "shared after gate"
    );
    world.run_iteration().unwrap();
}

/// A factory reading a service reruns after a writer, not after a gate.
#[test]
fn a_gate_does_not_wake_factories() {
    for executor in [ExecutorKind::Serial, ExecutorKind::Parallel] {
        let runs = Arc::new(AtomicU32::new(0));
        let mut world = World::new();
        world.set_executor(executor);
        world.insert(Log::default());
        world.add_system(|log: Gate<&Log>| {
            let _ = log.0.len();
        });
        let counter = Arc::clone(&runs);
        world.add_factory(NodeBuilder::new("summarise").factory(move |log: &Log| {
            counter.fetch_add(1, Ordering::SeqCst);
            Summary(log.0.len())
        }));
        for _ in 0..4 {
            world.run_iteration().unwrap();
        }
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "{executor:?}: only the first run"
        );
        world.get_mut::<Log>().unwrap().0.push("changed");
        world.run_iteration().unwrap();
        assert_eq!(
            runs.load(Ordering::SeqCst),
            2,
            "{executor:?}: a write wakes it"
        );
        assert_eq!(world.get::<Summary>().unwrap().0, 1);
    }
}
