//! Any graph size, any growth pattern: graphs grow at random between
//! iterations and through `Commands`, worlds are dropped and rebuilt small
//! (so the process-wide pool of execution states hands big states to small
//! graphs and small ones to big graphs), on every executor, with two worlds
//! sharing one pool. Every planned node runs exactly once per iteration and
//! nothing aborts.
//!
//! Regression for issue 8, finding 2: a state pooled from a 65-node graph
//! and reused for 66..128 nodes overflowed its ready ring inside an executor
//! job, and the process aborted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use sluice::{Commands, Context, ExecutorKind, NodeBuilder, ThreadPool, World};
use sluice_tests::by_index;

const SERVICES: usize = 8;

#[derive(Debug, Default)]
struct Svc<const N: usize>(u64);

fn insert<const N: usize>(world: &mut World) {
    world.insert(Svc::<N>(0));
}

fn declare<const N: usize>(node: NodeBuilder, gated: bool) -> NodeBuilder {
    if gated {
        node.gates::<Svc<N>>()
    } else {
        node.reads::<Svc<N>>()
    }
}

fn touch<const N: usize>(cx: &mut Context<'_>, gated: bool) {
    if gated {
        cx.write::<Svc<N>>().0 += 1;
    } else {
        let _ = cx.read::<Svc<N>>().0;
    }
}

/// One world under test: its run counters, one per node, by registration.
struct Tracked {
    world: World,
    /// `(runs, iteration it must run from)`, per node this test registered.
    counters: Vec<(Arc<AtomicU64>, u64)>,
    /// Iterations run so far.
    iterations: u64,
    /// Names handed out, so every node is distinct.
    next_name: u64,
}

/// A node's shape: which services it touches, and how.
#[derive(Debug, Clone)]
struct Shape {
    touches: Vec<(usize, bool)>,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop::collection::vec((0..SERVICES, any::<bool>()), 0..3).prop_map(|mut touches| {
        touches.sort_unstable_by_key(|&(s, _)| s);
        touches.dedup_by_key(|(s, _)| *s);
        Shape { touches }
    })
}

fn node(name: String, shape: &Shape, runs: Arc<AtomicU64>) -> sluice::NodeSpec {
    let mut builder = NodeBuilder::new(name);
    for &(s, gated) in &shape.touches {
        builder = by_index!(s, declare(builder, gated));
    }
    let touches = shape.touches.clone();
    builder.run(move |cx| {
        runs.fetch_add(1, Ordering::Relaxed);
        for &(s, gated) in &touches {
            by_index!(s, touch(cx, gated));
        }
    })
}

impl Tracked {
    fn new(pool: &ThreadPool, executor: ExecutorKind) -> Self {
        let mut world = World::with_pool(pool.clone());
        world.set_executor(executor);
        for s in 0..SERVICES {
            by_index!(s, insert(&mut world));
        }
        Self {
            world,
            counters: Vec::new(),
            iterations: 0,
            next_name: 0,
        }
    }

    fn name(&mut self) -> String {
        self.next_name += 1;
        format!("n{}", self.next_name)
    }

    /// Registers `shapes` now: they run from the next iteration on.
    fn grow(&mut self, shapes: &[Shape]) {
        for shape in shapes {
            let runs = Arc::new(AtomicU64::new(0));
            let name = self.name();
            self.world.add_system(node(name, shape, Arc::clone(&runs)));
            self.counters.push((runs, self.iterations));
        }
    }

    /// Registers `shapes` through `Commands` from inside the next iteration:
    /// they are planned during the one after and run from the third on.
    fn grow_through_commands(&mut self, shapes: &[Shape]) {
        let mut specs = Vec::new();
        for shape in shapes {
            let runs = Arc::new(AtomicU64::new(0));
            let name = self.name();
            specs.push(node(name, shape, Arc::clone(&runs)));
            self.counters.push((runs, self.iterations + 2));
        }
        let specs = std::sync::Mutex::new(Some(specs));
        let name = self.name();
        // The recorder itself is registered directly and runs from the next
        // iteration; it records its nodes once.
        self.world.add_system(
            NodeBuilder::new(name).system(move |commands: Commands<'_>| {
                if let Some(specs) = specs.lock().unwrap().take() {
                    for spec in specs {
                        commands.add_system(spec);
                    }
                }
            }),
        );
    }

    /// Runs one iteration and checks every tracked node ran exactly once if
    /// it is due, and at most once otherwise.
    fn step(&mut self) -> Result<(), TestCaseError> {
        let before: Vec<u64> = self
            .counters
            .iter()
            .map(|(runs, _)| runs.load(Ordering::Relaxed))
            .collect();
        self.world
            .run_iteration()
            .map_err(|error| TestCaseError::fail(format!("iteration failed: {error}")))?;
        for (at, ((runs, due), was)) in self.counters.iter().zip(before).enumerate() {
            let ran = runs.load(Ordering::Relaxed) - was;
            prop_assert!(ran <= 1, "node #{at} ran {ran} times in one iteration");
            if self.iterations >= *due {
                prop_assert_eq!(
                    ran,
                    1,
                    "node #{} due since {} missed iteration {}",
                    at,
                    due,
                    self.iterations
                );
            }
        }
        self.iterations += 1;
        Ok(())
    }
}

#[derive(Debug, Clone)]
enum Op {
    Grow(Vec<Shape>),
    GrowThroughCommands(Vec<Shape>),
    /// Drop the world and start a small one on the same pool.
    Rebuild,
    SetExecutor(ExecutorKind),
    Run(u8),
}

fn executor() -> impl Strategy<Value = ExecutorKind> {
    prop_oneof![
        Just(ExecutorKind::Adaptive),
        Just(ExecutorKind::Parallel),
        Just(ExecutorKind::Serial),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::collection::vec(shape(), 1..48).prop_map(Op::Grow),
        2 => prop::collection::vec(shape(), 1..24).prop_map(Op::GrowThroughCommands),
        1 => Just(Op::Rebuild),
        1 => executor().prop_map(Op::SetExecutor),
        4 => (1u8..4).prop_map(Op::Run),
    ]
}

fn apply(tracked: &mut Tracked, pool: &ThreadPool, op: &Op) -> Result<(), TestCaseError> {
    match op {
        Op::Grow(shapes) => tracked.grow(shapes),
        Op::GrowThroughCommands(shapes) => tracked.grow_through_commands(shapes),
        Op::Rebuild => *tracked = Tracked::new(pool, ExecutorKind::Adaptive),
        Op::SetExecutor(kind) => tracked.world.set_executor(*kind),
        Op::Run(times) => {
            for _ in 0..*times {
                tracked.step()?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 24 },
        ..ProptestConfig::default()
    })]

    /// Two worlds on one pool, driven in turns by random operations; each
    /// operation is followed by an iteration of both, so thousands of
    /// iterations run over all cases.
    #[test]
    fn any_growth_on_any_executor_runs_every_node_once(
        ops in prop::collection::vec((op(), op()), 1..40),
    ) {
        let pool = ThreadPool::new(2).expect("a pool of two threads");
        let mut worlds = [
            Tracked::new(&pool, ExecutorKind::Parallel),
            Tracked::new(&pool, ExecutorKind::Serial),
        ];
        for (a, b) in &ops {
            apply(&mut worlds[0], &pool, a)?;
            apply(&mut worlds[1], &pool, b)?;
            for tracked in &mut worlds {
                tracked.step()?;
            }
        }
        for tracked in &mut worlds {
            tracked.step()?;
            tracked.step()?;
        }
    }
}

/// The exact shape of the report: a world of 65 nodes gives its state back,
/// a world of 66..128 nodes takes it from the pool, on the default executor
/// and the parallel one.
#[test]
fn a_state_pooled_from_65_nodes_serves_66_to_128() {
    let pool = ThreadPool::new(2).expect("a pool");
    for executor in [ExecutorKind::Adaptive, ExecutorKind::Parallel] {
        for grown in [66, 100, 128] {
            let mut tracked = Tracked::new(&pool, executor);
            // 63 user nodes + the world's 2 built-in factories = 65 nodes.
            let shapes = vec![
                Shape {
                    touches: Vec::new()
                };
                63
            ];
            tracked.grow(&shapes);
            tracked.step().unwrap();
            tracked.step().unwrap();
            let more = vec![
                Shape {
                    touches: Vec::new()
                };
                grown - 65
            ];
            tracked.grow(&more);
            for _ in 0..4 {
                tracked.step().unwrap();
            }
        }
    }
}
