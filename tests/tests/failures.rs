//! Random panics over 1,000 iterations: no deadlock, every failing iteration
//! names a node that really panicked in it, every other iteration runs every
//! node, and the world's state and timings stay consistent.
//!
//! A world of 20 nodes over 6 counter services (random shared and gated
//! accesses, random `after` edges to earlier nodes) on the parallel executor
//! with 2- and 4-thread pools, and on the adaptive and serial ones. Eight of
//! the nodes panic at seeded random iterations, before they touch anything;
//! every other run of a node bumps the counters it gates.
//!
//! Also panics in the places that used to go wrong: beside more ready nodes
//! than a local deque holds (the run deadlocked), and in an iteration that
//! runs the world's own plan factory (`run_iteration` itself panicked when
//! the failure kept the execution factory from starting).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};

use sluice::{Context, ExecutorKind, IterationError, NodeBuilder, NodeIndex, ThreadPool, World};
use sluice_tests::by_index;

const NODES: usize = 20;
const FRAGILE: usize = 8;
const SERVICES: usize = 6;
const ITERATIONS: u64 = 1_000;
/// The panic message prefix of planned failures (kept out of the test's output).
const PLANNED: &str = "planned failure";

/// A counter service.
#[derive(Debug, Default)]
struct Svc<const N: usize>(u64);

fn declare_read<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.reads::<Svc<N>>()
}

fn declare_gate<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.gates::<Svc<N>>()
}

fn insert<const N: usize>(world: &mut World) {
    world.insert(Svc::<N>(0));
}

fn value<const N: usize>(world: &World) -> u64 {
    world.get::<Svc<N>>().expect("every service is inserted").0
}

fn read<const N: usize>(cx: &Context<'_>) -> u64 {
    cx.read::<Svc<N>>().0
}

fn bump<const N: usize>(cx: &mut Context<'_>) {
    cx.write::<Svc<N>>().0 += 1;
}

/// SplitMix64: a seeded generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Debug, Clone, Default)]
struct NodeSpec {
    reads: Vec<usize>,
    gates: Vec<usize>,
    after: Vec<usize>,
    /// Iterations (1-based) in which the node panics.
    fails_at: Vec<u64>,
}

fn nodes(seed: u64) -> Vec<NodeSpec> {
    let mut rng = Rng(seed);
    (0..NODES)
        .map(|i| {
            let mut spec = NodeSpec::default();
            for s in 0..SERVICES {
                match rng.below(6) {
                    0 => spec.gates.push(s),
                    1 => spec.reads.push(s),
                    _ => {}
                }
            }
            if i > 0 {
                for _ in 0..rng.below(3) {
                    let target = rng.below(i as u64) as usize;
                    if !spec.after.contains(&target) {
                        spec.after.push(target);
                    }
                }
            }
            if i % (NODES / FRAGILE) == 1 {
                spec.fails_at = (1..=ITERATIONS).filter(|_| rng.below(60) == 0).collect();
            }
            spec
        })
        .collect()
}

/// What the nodes record, per node: the last iteration in which they started,
/// panicked, and finished without panicking; and how often they finished.
struct Record {
    iteration: AtomicU64,
    started: Vec<AtomicU64>,
    panicked: Vec<AtomicU64>,
    finished: Vec<AtomicU64>,
    completions: Vec<AtomicU64>,
}

fn counters() -> Vec<AtomicU64> {
    (0..NODES).map(|_| AtomicU64::new(0)).collect()
}

fn body(cx: &mut Context<'_>, index: usize, spec: &NodeSpec, record: &Record) {
    let iteration = record.iteration.load(Ordering::SeqCst);
    record.started[index].store(iteration, Ordering::SeqCst);
    for &target in &spec.after {
        assert_eq!(
            record.finished[target].load(Ordering::SeqCst),
            iteration,
            "n{index} started before n{target} finished"
        );
    }
    if spec.fails_at.contains(&iteration) {
        record.panicked[index].store(iteration, Ordering::SeqCst);
        panic!("{PLANNED}: n{index} at iteration {iteration}");
    }
    let mut _sum = 0;
    for &s in &spec.reads {
        _sum += by_index!(s, read(cx));
    }
    for &s in &spec.gates {
        by_index!(s, bump(cx));
    }
    record.completions[index].fetch_add(1, Ordering::SeqCst);
    record.finished[index].store(iteration, Ordering::SeqCst);
}

/// Keeps planned panics out of the output; everything else is reported.
fn quiet_planned_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(PLANNED) {
                default(info);
            }
        }));
    });
}

fn random_panics(threads: usize, executor: ExecutorKind, seed: u64) {
    quiet_planned_panics();
    let specs = nodes(seed);
    let record = Arc::new(Record {
        iteration: AtomicU64::new(0),
        started: counters(),
        panicked: counters(),
        finished: counters(),
        completions: counters(),
    });
    let mut world = World::with_pool(ThreadPool::new(threads).expect("the pool's threads start"));
    world.set_executor(executor);
    for s in 0..SERVICES {
        by_index!(s, insert(&mut world));
    }
    let mut indices: Vec<NodeIndex> = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let mut builder = NodeBuilder::new(format!("n{index}"));
        for &s in &spec.reads {
            builder = by_index!(s, declare_read(builder));
        }
        for &s in &spec.gates {
            builder = by_index!(s, declare_gate(builder));
        }
        for &target in &spec.after {
            builder = builder.after(format!("n{target}"));
        }
        let spec = spec.clone();
        let record = Arc::clone(&record);
        indices.push(world.add_system(builder.run(move |cx| body(cx, index, &spec, &record))));
    }
    world.enable_timing(true);

    let mut failures = 0;
    for iteration in 1..=ITERATIONS + 1 {
        record.iteration.store(iteration, Ordering::SeqCst);
        let planned: Vec<usize> = (0..NODES)
            .filter(|&i| specs[i].fails_at.contains(&iteration))
            .collect();
        let result = world.run_iteration();
        let started = |i: usize| record.started[i].load(Ordering::SeqCst) == iteration;
        let panicked = |i: usize| record.panicked[i].load(Ordering::SeqCst) == iteration;
        if planned.is_empty() {
            if let Err(error) = result {
                panic!("iteration {iteration} planned no panic but failed: {error}");
            }
            for i in 0..NODES {
                assert!(
                    record.finished[i].load(Ordering::SeqCst) == iteration,
                    "iteration {iteration} succeeded without running n{i}"
                );
            }
        } else {
            failures += 1;
            let error = match result {
                Ok(()) => {
                    panic!("iteration {iteration}: {planned:?} were to panic, yet it succeeded")
                }
                Err(IterationError::NodePanicked(panic)) => panic,
                Err(other) => panic!("iteration {iteration}: unexpected error {other}"),
            };
            let named: usize = error
                .node()
                .strip_prefix('n')
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("iteration {iteration}: unknown node {}", error.node()));
            assert!(
                panicked(named),
                "iteration {iteration}: the error names n{named}, which did not panic"
            );
            assert_eq!(
                error.message(),
                Some(format!("{PLANNED}: n{named} at iteration {iteration}").as_str())
            );
            // A node that did not plan to panic never does.
            for i in 0..NODES {
                assert!(!panicked(i) || planned.contains(&i));
            }
        }
        // Timings are readable after success and failure alike: a node ran
        // exactly when its body started.
        let timings = world.timings();
        for (i, index) in indices.iter().enumerate() {
            assert_eq!(
                timings[index.0 as usize].ran,
                started(i),
                "iteration {iteration}: timing of n{i}"
            );
        }
    }
    assert!(failures > 20, "the seed planned only {failures} failures");
    assert!(
        specs
            .iter()
            .all(|spec| spec.fails_at.iter().all(|&it| it <= ITERATIONS)),
        "the last iteration plans no panic"
    );

    // Every counter moved exactly once per completed run of a node gating it.
    for s in 0..SERVICES {
        let expected: u64 = (0..NODES)
            .filter(|&i| specs[i].gates.contains(&s))
            .map(|i| record.completions[i].load(Ordering::SeqCst))
            .sum();
        assert_eq!(by_index!(s, value(&world)), expected, "service {s}");
    }
}

#[test]
fn random_panics_on_two_threads() {
    for seed in 0..3 {
        random_panics(2, ExecutorKind::Parallel, 0x5EED_0200 + seed);
    }
}

#[test]
fn random_panics_on_four_threads() {
    for seed in 0..3 {
        random_panics(4, ExecutorKind::Parallel, 0x5EED_0400 + seed);
    }
}

#[test]
fn random_panics_on_the_adaptive_and_serial_executors() {
    random_panics(4, ExecutorKind::Adaptive, 0x5EED_A000);
    random_panics(1, ExecutorKind::Serial, 0x5EED_5000);
}

/// More ready nodes than a thread's local deque holds (the rest wait in the
/// run's ready ring): a panic among them ends the iteration, and the next
/// ones run every node.
#[test]
fn a_panic_beside_many_ready_nodes_ends_the_iteration() {
    quiet_planned_panics();
    for threads in [1, 4] {
        let mut world =
            World::with_pool(ThreadPool::new(threads).expect("the pool's threads start"));
        world.set_executor(ExecutorKind::Parallel);
        world.insert(Svc::<0>(0));
        world.insert(Svc::<1>(0));
        let runs = Arc::new(AtomicU64::new(0));
        for filler in 0..300 {
            let runs = Arc::clone(&runs);
            world.add_system(NodeBuilder::new(format!("filler{filler}")).system(
                move |_: &Svc<0>| {
                    runs.fetch_add(1, Ordering::SeqCst);
                },
            ));
        }
        world.add_system(NodeBuilder::new("boom").system(|count: &mut Svc<1>| {
            count.0 += 1;
            assert!(count.0 != 2, "{PLANNED}: boom");
        }));
        world.run_iteration().expect("iteration 1 runs");
        match world.run_iteration() {
            Err(IterationError::NodePanicked(panic)) => assert_eq!(panic.node(), "boom"),
            other => panic!("{threads} threads: {other:?}"),
        }
        for _ in 0..3 {
            let before = runs.load(Ordering::SeqCst);
            world
                .run_iteration()
                .expect("later iterations run normally");
            assert_eq!(
                runs.load(Ordering::SeqCst) - before,
                300,
                "{threads} threads"
            );
        }
    }
}

/// A node that panics in the first iteration, beside the world's own plan
/// and execution factories, may stop the execution factory from starting
/// after the plan factory finished: the iteration still reports the panic,
/// and the next one runs normally.
#[test]
fn a_panic_in_the_first_iteration_is_reported() {
    quiet_planned_panics();
    let pool = ThreadPool::new(4).expect("the pool's threads start");
    for round in 0..100 {
        let mut world = World::with_pool(pool.clone());
        world.set_executor(ExecutorKind::Parallel);
        world.insert(Svc::<0>(0));
        world.add_system(NodeBuilder::new("boom").system(|count: &mut Svc<0>| {
            count.0 += 1;
            assert!(count.0 != 1, "{PLANNED}: boom");
        }));
        match world.run_iteration() {
            Err(IterationError::NodePanicked(panic)) => assert_eq!(panic.node(), "boom"),
            other => panic!("round {round}: {other:?}"),
        }
        world
            .run_iteration()
            .expect("the next iteration runs normally");
        world.run_iteration().expect("and the one after");
        assert_eq!(by_index!(0, value(&world)), 3, "round {round}");
    }
}

/// The same while the plan factory replans for a node registered through
/// `Commands`: a node panics in the iteration that replans, often while the
/// plan factory runs; the new node joins within two iterations of the
/// failure.
#[test]
fn a_panic_while_the_plan_factory_replans_is_reported() {
    use sluice::Commands;
    quiet_planned_panics();
    let pool = ThreadPool::new(4).expect("the pool's threads start");
    for round in 0..100 {
        let mut world = World::with_pool(pool.clone());
        world.set_executor(ExecutorKind::Parallel);
        world.insert(Svc::<0>(0));
        world.insert(Svc::<1>(0));
        world.insert(Svc::<2>(0));
        world.insert(Svc::<3>(0));
        world.add_system(NodeBuilder::new("spawner").system(
            |commands: Commands<'_>, runs: &mut Svc<0>| {
                runs.0 += 1;
                if runs.0 == 1 {
                    commands.add_system(
                        NodeBuilder::new("late").system(|late: &mut Svc<1>| late.0 += 1),
                    );
                }
            },
        ));
        // Fillers make planning take a while, so that `boom` often panics
        // while the plan factory runs, before the execution factory starts.
        for filler in 0..200 {
            world.add_system(NodeBuilder::new(format!("filler{filler}")).system(|_: &Svc<3>| {}));
        }
        world.add_system(NodeBuilder::new("boom").system(|runs: &mut Svc<2>| {
            runs.0 += 1;
            // Iteration 2 is the one the plan factory replans in.
            assert!(runs.0 != 2, "{PLANNED}: boom");
        }));
        world.run_iteration().expect("iteration 1 runs");
        match world.run_iteration() {
            Err(IterationError::NodePanicked(panic)) => assert_eq!(panic.node(), "boom"),
            other => panic!("round {round}: {other:?}"),
        }
        for _ in 0..3 {
            world
                .run_iteration()
                .expect("later iterations run normally");
        }
        let late = by_index!(1, value(&world));
        assert!(
            (2..=3).contains(&late),
            "round {round}: `late` ran {late} times in the three iterations after the failure"
        );
    }
}
