//! Lifecycle (reference 004): creation order, destruction in reverse of the
//! actual creation order, removing and disabling nodes.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use sluice::{BoundaryStep, IterationError, NodeBuilder, NodeSpec, World};

type Log = Arc<Mutex<Vec<String>>>;

fn logged(log: &Log, name: &str, node: NodeBuilder) -> NodeSpec {
    let (created, destroyed) = (Arc::clone(log), Arc::clone(log));
    let (a, b) = (format!("create {name}"), format!("destroy {name}"));
    node.run(|_| {})
        .on_create(move |_| created.lock().unwrap().push(a.clone()))
        .on_destroy(move |_| destroyed.lock().unwrap().push(b.clone()))
}

fn entries(log: &Log, prefix: &str) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|e| e.strip_prefix(prefix).map(str::to_owned))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 64 },
        // Miri isolates the file system proptest keeps failures in.
        failure_persistence: if cfg!(miri) { None } else { ProptestConfig::default().failure_persistence },
        ..ProptestConfig::default()
    })]

    /// Random `create_after`/`create_before` constraints (acyclic: each
    /// node names only nodes of a lower rank) are all honoured; destruction
    /// reverses creation.
    #[test]
    fn creation_follows_its_constraints(
        ranks in proptest::collection::vec(0u8..6, 1..24),
        links in proptest::collection::vec((0usize..24, 0usize..24, any::<bool>()), 0..40),
    ) {
        let log: Log = Arc::default();
        let n = ranks.len();
        let mut constraints = Vec::new();
        {
            let mut world = World::new();
            let mut builders: Vec<NodeBuilder> =
                (0..n).map(|i| NodeBuilder::new(format!("n{i}"))).collect();
            for &(a, b, after) in &links {
                let (a, b) = (a % n, b % n);
                if ranks[a] <= ranks[b] {
                    continue;
                }
                // `a` (higher rank) is created after `b`.
                let node = std::mem::replace(&mut builders[a], NodeBuilder::new("x"));
                builders[a] = if after {
                    node.create_after(format!("n{b}"))
                } else {
                    let other = std::mem::replace(&mut builders[b], NodeBuilder::new("x"));
                    builders[b] = other.create_before(format!("n{a}"));
                    node
                };
                constraints.push((b, a));
            }
            for (i, builder) in builders.into_iter().enumerate() {
                world.add_system(logged(&log, &format!("n{i}"), builder));
            }
            world.run_iteration().unwrap();
            let created = entries(&log, "create n");
            prop_assert_eq!(created.len(), n);
            let at = |i: usize| created.iter().position(|c| c == &i.to_string()).unwrap();
            for &(first, then) in &constraints {
                prop_assert!(at(first) < at(then), "n{} before n{}", first, then);
            }
        }
        let mut destroyed = entries(&log, "destroy n");
        destroyed.reverse();
        prop_assert_eq!(destroyed, entries(&log, "create n"));
    }
}

/// A node registered after the node it should precede is created after it
/// all the same; destruction still reverses what actually happened.
#[test]
fn destruction_reverses_actual_creation_even_when_it_broke_the_order() {
    let log: Log = Arc::default();
    {
        let mut world = World::new();
        world.add_system(logged(&log, "renderer", NodeBuilder::new("renderer")));
        world.run_iteration().unwrap();
        world.add_system(logged(
            &log,
            "device",
            NodeBuilder::new("device").create_before("renderer"),
        ));
        world.run_iteration().unwrap();
    }
    assert_eq!(
        *log.lock().unwrap(),
        [
            "create renderer",
            "create device",
            "destroy device",
            "destroy renderer"
        ]
    );
}

#[test]
fn removing_destroys_and_disabling_only_leaves_out() {
    let log: Log = Arc::default();
    let mut world = World::new();
    let a = world.add_system(logged(&log, "a", NodeBuilder::new("a")));
    let b = world.add_system(logged(&log, "b", NodeBuilder::new("b").after("a")));
    world.run_iteration().unwrap();
    world.set_enabled(b, false);
    assert!(!world.plan().unwrap().contains(b));
    world.set_enabled(b, true);
    assert!(world.plan().unwrap().contains(b));
    world.remove_node(a).unwrap();
    let plan = world.plan().unwrap();
    assert!(
        !plan.contains(a) && plan.contains(b),
        "b's edge went with a"
    );
    world.run_iteration().unwrap();
    // A new node may take the removed one's name.
    world.add_system(logged(&log, "a2", NodeBuilder::new("a")));
    world.run_iteration().unwrap();
    drop(world);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "create a",
            "create b",
            "destroy a",
            "create a2",
            "destroy a2",
            "destroy b"
        ]
    );
}

#[derive(Debug, Default)]
struct Device(u32);

/// Hooks reach the services their node declares, writing even what the
/// body only reads; a panicking `on_create` is reported and its node is
/// not created (so never destroyed).
#[test]
fn hooks_have_exclusive_access_and_panics_are_reported() {
    let log: Log = Arc::default();
    let mut world = World::new();
    world.insert(Device::default());
    world.add_system(
        NodeBuilder::new("opens")
            .reads::<Device>()
            .run(|_| {})
            .on_create(|cx| cx.write::<Device>().0 = 7),
    );
    let destroyed = Arc::clone(&log);
    world.add_system(
        NodeBuilder::new("fails")
            .run(|_| {})
            .on_create(|_| panic!("no device"))
            .on_destroy(move |_| destroyed.lock().unwrap().push("never".into())),
    );
    let Err(IterationError::Boundary(failures)) = world.run_iteration() else {
        panic!("the hook's panic is reported")
    };
    assert!(matches!(&failures[0].step(), BoundaryStep::Create { node } if node == "fails"));
    assert_eq!(world.get::<Device>().unwrap().0, 7);
    world.run_iteration().unwrap();
    drop(world);
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn creation_cycles_and_unknown_names_are_errors() {
    let mut world = World::new();
    world.add_system(NodeBuilder::new("a").create_after("b").run(|_| {}));
    world.add_system(NodeBuilder::new("b").create_after("a").run(|_| {}));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("a creation cycle is an error")
    };
    assert_eq!(errors.diagnostics()[0].code, "SL0001");
    let mut world = World::new();
    world.add_system(NodeBuilder::new("a").create_after("ghost").run(|_| {}));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("an unknown name is an error")
    };
    assert_eq!(errors.diagnostics()[0].code, "SL0002");
}
