//! Whole-world systems: an exclusive node whose body takes `&mut World` and
//! runs alone between the parts of its plan.

use sluice::{ExecutorKind, IterationError, NodeBuilder, World};

#[derive(Debug, Default)]
struct Log(Vec<String>);

#[derive(Debug, Default)]
struct Spawned(u32);

fn apply_spawns(world: &mut World) {
    let queued = world.get::<Log>().map_or(0, |log| log.0.len());
    world.get_mut::<Spawned>().unwrap().0 += queued as u32;
    if world.get::<Spawned>().unwrap().0 == 1 {
        world
            .add_system(NodeBuilder::new("late").system(|log: &mut Log| log.0.push("late".into())));
    }
}

#[test]
fn runs_alone_between_the_nodes_before_and_after_it() {
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::new();
        world.set_executor(executor);
        world.insert(Log::default());
        world.insert(Spawned::default());
        world.add_system(
            NodeBuilder::new("queue").system(|log: &mut Log| log.0.push("queue".into())),
        );
        world.add_system(apply_spawns);
        world.add_system(
            NodeBuilder::new("read").system(|spawned: &Spawned, log: &mut Log| {
                log.0.push(format!("read {}", spawned.0));
            }),
        );
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            ["queue", "read 1"],
            "{executor:?}"
        );
        // What it registered runs from the next iteration on.
        world.get_mut::<Log>().unwrap().0.clear();
        world.run_iteration().unwrap();
        let log = &world.get::<Log>().unwrap().0;
        assert!(log.contains(&"late".to_owned()), "{executor:?}: {log:?}");
        assert_eq!(log[0], "queue");
        let plan = world.plan().unwrap();
        let whole = plan
            .order()
            .find(|&n| plan.node_name(n) == "apply_spawns")
            .unwrap();
        assert!(plan.exclusive_barriers().contains(&whole));
    }
}

#[test]
fn a_panic_is_reported_and_the_world_goes_on() {
    let mut world = World::new();
    world.insert(Log::default());
    // A closure whose body only diverges has the type `!` as its output
    // (edition 2024's fallback), which no system signature takes: a
    // function item says `()`.
    fn failing_save(_: &mut World) {
        panic!("save failed")
    }
    world.add_system(failing_save);
    world.add_system(NodeBuilder::new("after").system(|log: &mut Log| log.0.push("after".into())));
    let Err(IterationError::NodePanicked(panic)) = world.run_iteration() else {
        panic!("the panic is reported")
    };
    assert!(panic.to_string().contains("save failed"), "{panic}");
    assert!(
        world.get::<Log>().unwrap().0.is_empty(),
        "nothing after it started"
    );
    assert!(
        world.run_iteration().is_err(),
        "it panics every time, reported every time"
    );
}

#[test]
fn it_may_not_run_its_own_world() {
    let mut world = World::new();
    world.insert(Log::default());
    world.add_system(|world: &mut World| {
        let error = world.run_iteration().unwrap_err();
        assert!(matches!(error, IterationError::Reentrant));
        world.get_mut::<Log>().unwrap().0.push("refused".into());
    });
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["refused"]);
}

/// Asking for the plan from inside keeps the running plan in place.
#[test]
fn registering_and_asking_for_the_plan_inside_is_safe() {
    let mut world = World::new();
    world.insert(Log::default());
    world
        .add_system(NodeBuilder::new("before").system(|log: &mut Log| log.0.push("before".into())));
    world.add_system(|world: &mut World| {
        let nodes = world.plan().unwrap().len();
        world.add_system(NodeBuilder::new(format!("added{nodes}")).system(|_: &Log| {}));
        assert_eq!(world.plan().unwrap().len(), nodes, "the running plan stays");
    });
    world.add_system(NodeBuilder::new("after").system(|log: &mut Log| log.0.push("after".into())));
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["before", "after", "before", "after"]
    );
    assert_eq!(
        world.plan().unwrap().len(),
        7,
        "two built-ins, three nodes, two added"
    );
}

/// Hostile growth: a whole-world system registers more grouped, phased
/// nodes every iteration (plans in parts and barriers past every pooled
/// size), on every executor; every planned node runs exactly once.
#[test]
fn plans_grown_from_inside_run_every_node_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    // Under Miri every replan is interpreted: 15 nodes in batches of 3
    // still grow the plan each iteration, in every group and phase.
    const TOTAL: u32 = if cfg!(miri) { 15 } else { 400 };
    const BATCH: u32 = TOTAL / 5;
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let runs: Arc<Vec<AtomicU32>> = Arc::new((0..TOTAL).map(|_| AtomicU32::new(0)).collect());
        let mut world = World::new();
        world.set_executor(executor);
        world.add_group(sluice::Group::new("Early"));
        world.add_group(sluice::Group::new("Late").after("Early"));
        let added = Arc::new(AtomicU32::new(0));
        let (counter, registry) = (Arc::clone(&runs), Arc::clone(&added));
        world.add_system(move |world: &mut World| {
            let start = registry.fetch_add(BATCH, Ordering::SeqCst) as usize;
            for i in start..(start + BATCH as usize).min(TOTAL as usize) {
                let counter = Arc::clone(&counter);
                let (group, phase) = match i % 3 {
                    0 => ("Early", sluice::Phase::PreUpdate),
                    1 => ("Early", sluice::Phase::Update),
                    _ => ("Late", sluice::Phase::PostUpdate),
                };
                world.add_system(
                    NodeBuilder::new(format!("n{i}"))
                        .in_group(group)
                        .phase(phase)
                        .run(move |_| {
                            counter[i].fetch_add(1, Ordering::SeqCst);
                        }),
                );
            }
        });
        for iteration in 1..=6u32 {
            world.run_iteration().unwrap();
            let planned = (BATCH * (iteration - 1)).min(TOTAL) as usize;
            for (i, count) in runs.iter().enumerate() {
                let expected = if i < planned { 1 } else { 0 };
                assert_eq!(
                    count.swap(0, Ordering::SeqCst),
                    expected,
                    "{executor:?} n{i}"
                );
            }
        }
    }
}
