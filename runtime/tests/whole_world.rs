//! Whole-world systems: an exclusive node whose body takes `&mut World` and
//! runs alone between the parts of its plan.

use sluice::{
    AmbiguityLevel, ExecutorKind, IterationError, NodeBuilder, PlanOptions, ThreadPool, World,
};

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

/// Every executor kind; under Miri the serial and the parallel one (the
/// adaptive executor runs the serial path until its first probe, 32
/// iterations in, further than a test here runs: see
/// `support/executors.rs`).
fn executor_kinds() -> &'static [ExecutorKind] {
    if cfg!(miri) {
        &[ExecutorKind::Serial, ExecutorKind::Parallel]
    } else {
        &[
            ExecutorKind::Serial,
            ExecutorKind::Parallel,
            ExecutorKind::Adaptive,
        ]
    }
}

#[test]
fn runs_alone_between_the_nodes_before_and_after_it() {
    for &executor in executor_kinds() {
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
    for &executor in executor_kinds() {
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

/// The kinds of exclusive node a world runs: one whose body takes
/// `&mut World` (run alone between the parts of its plan), and one declared
/// `.exclusive()` (run by the executor, with nothing beside it).
#[derive(Debug, Clone, Copy)]
enum Exclusive {
    WholeWorld,
    Declared,
}

/// Registers the exclusive node `name` of `kind`, which logs its name.
fn add_exclusive(world: &mut World, kind: Exclusive, name: &'static str) {
    match kind {
        Exclusive::WholeWorld => {
            world.add_system(NodeBuilder::new(name).world(move |world: &mut World| {
                world.get_mut::<Log>().unwrap().0.push(name.into());
            }));
        }
        Exclusive::Declared => {
            world.add_system(
                NodeBuilder::new(name)
                    .exclusive()
                    .system(move |log: &mut Log| log.0.push(name.into())),
            );
        }
    }
}

fn ambiguity(level: AmbiguityLevel) -> PlanOptions {
    PlanOptions {
        ambiguity: level,
        ..PlanOptions::default()
    }
}

/// Every node name the diagnostics of `world`'s plan mention, or of the
/// errors that keep it from planning.
fn diagnosed_nodes(world: &mut World) -> Vec<String> {
    let diagnostics = match world.plan() {
        Ok(plan) => plan.diagnostics().to_vec(),
        Err(IterationError::Plan(errors)) => errors.diagnostics().to_vec(),
        Err(other) => panic!("not a planning error: {other}"),
    };
    diagnostics.into_iter().flat_map(|d| d.nodes).collect()
}

/// The world's own factories (`sluice::plan`, `sluice::execution`) conflict
/// with an exclusive node only through the whole world: the user never
/// registered them, so no diagnostic names them, and a world with an
/// exclusive node plans at every ambiguity level; the factories still come
/// first, joined to it by an edge, on every executor and thread count.
#[test]
fn an_exclusive_node_plans_at_every_ambiguity_level_without_naming_the_runtimes_nodes() {
    // Under Miri the strictest level only: the level changes what the
    // planner reports (safe code), not how the plan runs.
    let levels: &[AmbiguityLevel] = if cfg!(miri) {
        &[AmbiguityLevel::Error]
    } else {
        &[
            AmbiguityLevel::Ignore,
            AmbiguityLevel::Warn,
            AmbiguityLevel::Error,
        ]
    };
    for kind in [Exclusive::WholeWorld, Exclusive::Declared] {
        for &level in levels {
            for &executor in executor_kinds() {
                // Under Miri one pool of 2 (at least 2, so the pool's
                // threads still meet) and two iterations.
                let thread_counts: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
                for &threads in thread_counts {
                    let case = format!("{kind:?} {level:?} {executor:?} {threads} threads");
                    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
                    world.set_executor(executor);
                    world.set_plan_options(ambiguity(level));
                    world.insert(Log::default());
                    world.add_system(
                        NodeBuilder::new("before")
                            .before("exclusive")
                            .system(|log: &mut Log| log.0.push("before".into())),
                    );
                    add_exclusive(&mut world, kind, "exclusive");
                    world.add_system(
                        NodeBuilder::new("after")
                            .after("exclusive")
                            .system(|log: &mut Log| log.0.push("after".into())),
                    );
                    assert_eq!(diagnosed_nodes(&mut world), [] as [String; 0], "{case}");
                    let plan = world.plan().unwrap();
                    let position = |name: &str| {
                        plan.order()
                            .position(|n| plan.node_name(n) == name)
                            .unwrap_or_else(|| panic!("{case}: {name} is planned"))
                    };
                    let node = |name: &str| plan.order().nth(position(name)).unwrap();
                    // Both factories first, and the executors wait on the
                    // whole world's lane between them and the node.
                    assert_eq!(position("sluice::plan"), 0, "{case}");
                    assert_eq!(position("sluice::execution"), 1, "{case}");
                    assert!(
                        plan.edge_between(node("sluice::execution"), node("exclusive"))
                            .is_some(),
                        "{case}: the whole world's lane orders them"
                    );
                    for iteration in 0..if cfg!(miri) { 2 } else { 4 } {
                        world.get_mut::<Log>().unwrap().0.clear();
                        world
                            .run_iteration()
                            .unwrap_or_else(|e| panic!("{case}: {e}"));
                        assert_eq!(
                            world.get::<Log>().unwrap().0,
                            ["before", "exclusive", "after"],
                            "{case}, iteration {iteration}"
                        );
                    }
                }
            }
        }
    }
}

/// A world with an exclusive node replans at the `Error` level, both ways a
/// registration is planned: a whole-world system's own registration,
/// planned before the next iteration, and one landed from `Commands`, which
/// the world's own factories plan during the next iteration (their plan is
/// refused if it names them); what was added then runs every iteration.
#[test]
fn a_world_with_an_exclusive_node_replans_at_the_error_level() {
    use sluice::Commands;
    fn late() -> sluice::NodeSpec {
        NodeBuilder::new("late")
            .after("grow")
            .system(|log: &mut Log| log.0.push("late".into()))
    }
    for kind in [Exclusive::WholeWorld, Exclusive::Declared] {
        for &executor in executor_kinds() {
            let case = format!("{kind:?} {executor:?}");
            let mut world = World::new();
            world.set_executor(executor);
            world.set_plan_options(ambiguity(AmbiguityLevel::Error));
            world.insert(Log::default());
            world.insert(Spawned::default());
            match kind {
                Exclusive::WholeWorld => {
                    world.add_system(NodeBuilder::new("grow").world(|world: &mut World| {
                        let spawned = &mut world.get_mut::<Spawned>().unwrap().0;
                        *spawned += 1;
                        if *spawned == 1 {
                            world.add_system(late());
                        }
                    }));
                }
                Exclusive::Declared => {
                    world.add_system(NodeBuilder::new("grow").exclusive().system(
                        |commands: Commands<'_>, spawned: &mut Spawned| {
                            spawned.0 += 1;
                            if spawned.0 == 1 {
                                commands.add_system(late());
                            }
                        },
                    ));
                }
            }
            // Planned before the second iteration, or by the factories
            // during it (then run from the third).
            let first_run = match kind {
                Exclusive::WholeWorld => 2,
                Exclusive::Declared => 3,
            };
            // Four iterations see the added node run twice either way.
            for iteration in 1..=if cfg!(miri) { 4usize } else { 5 } {
                world
                    .run_iteration()
                    .unwrap_or_else(|e| panic!("{case}, iteration {iteration}: {e}"));
                let runs = world.get::<Log>().unwrap().0.len();
                let expected = (iteration + 1).saturating_sub(first_run);
                assert_eq!(runs, expected, "{case}, iteration {iteration}");
            }
            assert_eq!(diagnosed_nodes(&mut world), [] as [String; 0], "{case}");
        }
    }
}

/// Suppressing the world's own nodes does not hide a user's ambiguity: an
/// exclusive node and a node of the user's own, unordered, are reported
/// (as a warning, or as the error that keeps the world from planning), and
/// only they are named.
#[test]
fn an_exclusive_nodes_ambiguity_with_a_users_node_is_still_reported() {
    for kind in [Exclusive::WholeWorld, Exclusive::Declared] {
        for level in [AmbiguityLevel::Warn, AmbiguityLevel::Error] {
            let mut world = World::new();
            world.set_plan_options(ambiguity(level));
            world.insert(Log::default());
            add_exclusive(&mut world, kind, "exclusive");
            world.add_system(NodeBuilder::new("idle").run(|_| {}));
            assert_eq!(
                diagnosed_nodes(&mut world),
                ["exclusive", "idle"],
                "{kind:?} {level:?}"
            );
            match level {
                AmbiguityLevel::Error => {
                    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
                        panic!("{kind:?}: the ambiguity keeps the world from planning")
                    };
                    let codes: Vec<_> = errors.errors().map(|d| d.code).collect();
                    assert_eq!(codes, ["SL0008"], "{kind:?}");
                }
                _ => world.run_iteration().unwrap(),
            }
        }
    }
}
