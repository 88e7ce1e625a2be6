//! Random panics over 1,000 iterations: no deadlock, every failing iteration
//! names a node that really panicked in it, every other iteration runs every
//! node, and the world's state and timings stay consistent.
//!
//! A world of 20 nodes over 6 counter services (random shared and gated
//! accesses, random `after` edges to earlier nodes) on a 2- and a 4-thread
//! pool. Eight of the nodes panic at seeded random iterations, before they
//! touch anything; every other run of a node bumps the counters it gates.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};

use sluice::{Context, IterationError, NodeBuilder, NodeIndex, ThreadPool, World};

const NODES: usize = 20;
const FRAGILE: usize = 8;
const SERVICES: usize = 6;
const ITERATIONS: u64 = 1_000;
/// The panic message prefix of planned failures (kept out of the test's output).
const PLANNED: &str = "planned failure";

/// A counter service.
#[derive(Debug, Default)]
struct Svc<const N: usize>(u64);

/// Calls `$f::<K>(args)` for the runtime service index `$i` in `0..6`.
macro_rules! by_index {
    ($i:expr, $f:ident ( $($arg:expr),* )) => {
        match $i {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            other => unreachable!("service index {other} out of range"),
        }
    };
}

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
                // Not in iteration 1, which also runs the world's own plan
                // and execution factories: a panic there that keeps the
                // execution factory from starting makes `run_iteration`
                // itself panic (a known runtime bug, reported separately).
                spec.fails_at = (2..=ITERATIONS).filter(|_| rng.below(60) == 0).collect();
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

fn random_panics(threads: usize, seed: u64) {
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
        // exactly when its body started. (Iteration 1 is skipped: its
        // boundary installs the plan factory's plan, whose timings are fresh.)
        if iteration == 1 {
            continue;
        }
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
        random_panics(2, 0x5EED_0200 + seed);
    }
}

#[test]
fn random_panics_on_four_threads() {
    for seed in 0..3 {
        random_panics(4, 0x5EED_0400 + seed);
    }
}
