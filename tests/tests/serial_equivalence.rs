//! Serial equivalence on random worlds: the same registrations run on the
//! serial executor and on the parallel and adaptive ones (pools of 1, 2 and
//! 4 threads, each run repeated) leave identical logs.
//!
//! A random plan has up to 40 nodes over 16 services `Svc<0>..Svc<15>`, each
//! a log of strings. A node reads some services (shared) and gates others;
//! it records what it saw (the length and last writer of every service it
//! touches) in its own observation list and appends its name and that
//! summary to the log of every service it gates. Some nodes order themselves
//! `after` others (a random DAG, so plan order differs from registration
//! order); a few are exclusive. Beyond the logs, every node checks at run
//! time that its `after` targets finished earlier in the same iteration, and
//! an exclusive node checks that it runs alone.
//!
//! Issue 20 adds appenders and two-point nodes: some nodes append to one
//! of two `AppendBuffer`s (beside their declared lanes) instead of running
//! a context body, and some register with a commit point that drains one
//! buffer into its own log, so every executor must also commit the same
//! values in the same order at the same iteration.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use proptest::prelude::*;
use sluice::{Append, AppendBuffer, Context, ExecutorKind, NodeBuilder, ThreadPool, World};
use sluice_tests::by_index;

const SERVICES: usize = 16;
const ITERATIONS: u64 = 4;
const REPEATS: usize = 4;

/// One service: a log of entries `name|summary`.
#[derive(Debug, Default)]
struct Svc<const N: usize>(Vec<String>);

fn declare_read<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.reads::<Svc<N>>()
}

fn declare_gate<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.gates::<Svc<N>>()
}

fn insert<const N: usize>(world: &mut World) {
    world.insert(Svc::<N>(Vec::new()));
}

fn insert_buffer<const K: usize>(world: &mut World) {
    world.insert(AppendBuffer::<Entry<K>>::with_capacity(4));
}

fn log_of<const N: usize>(world: &World) -> Vec<String> {
    world
        .get::<Svc<N>>()
        .expect("every service is inserted")
        .0
        .clone()
}

/// `len/last writer` of the service's log, as the node sees it now.
fn summary<const N: usize>(cx: &Context<'_>) -> String {
    let log = &cx.read::<Svc<N>>().0;
    let last = log
        .last()
        .map_or("-", |entry| entry.split('|').next().unwrap_or(entry));
    format!("s{N}={}/{last}", log.len())
}

fn append<const N: usize>(cx: &mut Context<'_>, entry: &str) {
    cx.write::<Svc<N>>().0.push(entry.to_owned());
}

/// What one appender appended: `name|iteration|k`.
#[derive(Debug)]
struct Entry<const K: usize>(String);

/// The buffers appenders append to.
const BUFFERS: usize = 2;

/// What a random node is besides its lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A context body (reads and writes its lanes).
    Plain,
    /// Appends to buffer `k` (its lanes are declared, not touched).
    Appender(usize),
    /// A context body with a commit point draining buffer `k`.
    Split(usize),
}

/// One random node.
#[derive(Debug, Clone)]
struct NodeSpec {
    reads: Vec<usize>,
    gates: Vec<usize>,
    /// Indices of the nodes this one runs after.
    after: Vec<usize>,
    exclusive: bool,
    kind: Kind,
}

/// A random plan's registrations.
#[derive(Debug, Clone)]
struct Spec {
    nodes: Vec<NodeSpec>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..=40)
        .prop_flat_map(|n| {
            let node = (
                proptest::collection::btree_set(0..SERVICES, 0..=3),
                proptest::collection::btree_set(0..SERVICES, 0..=2),
                proptest::collection::vec(any::<proptest::sample::Index>(), 0..=2),
                prop::bool::weighted(0.05),
                prop_oneof![
                    6 => Just(Kind::Plain),
                    2 => (0..BUFFERS).prop_map(Kind::Appender),
                    1 => (0..BUFFERS).prop_map(Kind::Split),
                ],
            );
            (
                proptest::collection::vec(node, n),
                // A random rank per node: `after` edges point only to lower
                // ranks, so they form a DAG whose order differs from
                // registration order.
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(nodes, ranks)| {
            let n = nodes.len();
            let nodes = nodes
                .into_iter()
                .enumerate()
                .map(|(i, (reads, gates, after, exclusive, kind))| {
                    let lower: Vec<usize> = (0..n).filter(|&j| ranks[j] < ranks[i]).collect();
                    let mut after: Vec<usize> = if lower.is_empty() {
                        Vec::new()
                    } else {
                        after
                            .iter()
                            .map(|ix| lower[ix.index(lower.len())])
                            .collect()
                    };
                    after.sort_unstable();
                    after.dedup();
                    let reads = reads.into_iter().filter(|s| !gates.contains(s)).collect();
                    NodeSpec {
                        reads,
                        gates: gates.into_iter().collect(),
                        after,
                        exclusive,
                        kind,
                    }
                })
                .collect();
            Spec { nodes }
        })
}

/// What the nodes of one world share to check themselves at run time.
struct Probe {
    /// The iteration now running (set by the test before each one).
    iteration: AtomicU64,
    /// Per node: the last iteration in which it finished.
    finished: Vec<AtomicU64>,
    /// Nodes inside their bodies now.
    in_flight: AtomicUsize,
    exclusive_running: AtomicBool,
    /// Per node: every summary it recorded, in iteration order.
    observations: Vec<Mutex<Vec<String>>>,
    /// Per node: what its commit point drained, one entry per run.
    commits: Vec<Mutex<Vec<String>>>,
}

/// The logs a run left: every service's log and every node's observations.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    logs: Vec<Vec<String>>,
    observations: Vec<Vec<String>>,
    commits: Vec<Vec<String>>,
}

fn node_name(i: usize) -> String {
    format!("n{i}")
}

/// An appender's body: the checks of `run_body`, then two values.
fn append_body<const K: usize>(
    out: &Append<'_, Entry<K>>,
    index: usize,
    node: &NodeSpec,
    probe: &Probe,
) {
    let iteration = enter(index, node, probe);
    out.push(Entry(format!("{}|it{iteration}|0", node_name(index))));
    out.push(Entry(format!("{}|it{iteration}|1", node_name(index))));
    probe.observations[index]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(format!("it{iteration}:appended"));
    leave(index, node, probe, iteration);
}

fn add_appender<const K: usize>(
    world: &mut World,
    builder: NodeBuilder,
    index: usize,
    node: NodeSpec,
    probe: Arc<Probe>,
) {
    world.add_system(builder.system(move |out: Append<'_, Entry<K>>| {
        append_body(&out, index, &node, &probe);
    }));
}

fn add_split<const K: usize>(
    world: &mut World,
    body: sluice::NodeSpec,
    index: usize,
    probe: Arc<Probe>,
) {
    world.add_system(body.commit(move |buffer: &mut AppendBuffer<Entry<K>>| {
        let drained: Vec<String> = buffer.drain().map(|entry| entry.0).collect();
        probe.commits[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(drained.join(","));
    }));
}

/// The run-time checks on entry: exclusivity and `after` targets; the
/// iteration running.
fn enter(index: usize, node: &NodeSpec, probe: &Probe) -> u64 {
    let before = probe.in_flight.fetch_add(1, Ordering::SeqCst);
    let iteration = probe.iteration.load(Ordering::SeqCst);
    if node.exclusive {
        assert_eq!(before, 0, "exclusive node n{index} started beside others");
        probe.exclusive_running.store(true, Ordering::SeqCst);
    } else {
        assert!(
            !probe.exclusive_running.load(Ordering::SeqCst),
            "n{index} started while an exclusive node ran"
        );
    }
    for &target in &node.after {
        assert_eq!(
            probe.finished[target].load(Ordering::SeqCst),
            iteration,
            "n{index} runs after n{target}, which has not finished this iteration"
        );
    }
    iteration
}

/// The run-time checks on exit.
fn leave(index: usize, node: &NodeSpec, probe: &Probe, iteration: u64) {
    if node.exclusive {
        std::thread::yield_now();
        assert_eq!(
            probe.in_flight.load(Ordering::SeqCst),
            1,
            "exclusive node n{index} ran beside others"
        );
        probe.exclusive_running.store(false, Ordering::SeqCst);
    }
    probe.finished[index].store(iteration, Ordering::SeqCst);
    probe.in_flight.fetch_sub(1, Ordering::SeqCst);
}

fn run_body(cx: &mut Context<'_>, index: usize, node: &NodeSpec, probe: &Probe) {
    let iteration = enter(index, node, probe);
    let mut seen = Vec::new();
    for &s in node.reads.iter().chain(&node.gates) {
        seen.push(by_index!(s, summary(cx)));
    }
    let summary = seen.join(",");
    let entry = format!("{}|it{iteration}:{summary}", node_name(index));
    for &s in &node.gates {
        by_index!(s, append(cx, &entry));
    }
    probe.observations[index]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(format!("it{iteration}:{summary}"));
    leave(index, node, probe, iteration);
}

fn build(spec: &Spec, pool: &ThreadPool, executor: ExecutorKind) -> (World, Arc<Probe>) {
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    for s in 0..SERVICES {
        by_index!(s, insert(&mut world));
    }
    // A commit with no appender still needs its buffer (an appender would
    // insert it).
    for k in 0..BUFFERS {
        by_index!(k, insert_buffer(&mut world));
    }
    let probe = Arc::new(Probe {
        iteration: AtomicU64::new(0),
        finished: spec.nodes.iter().map(|_| AtomicU64::new(0)).collect(),
        in_flight: AtomicUsize::new(0),
        exclusive_running: AtomicBool::new(false),
        observations: spec.nodes.iter().map(|_| Mutex::default()).collect(),
        commits: spec.nodes.iter().map(|_| Mutex::default()).collect(),
    });
    for (index, node) in spec.nodes.iter().enumerate() {
        let mut builder = NodeBuilder::new(node_name(index));
        for &s in &node.reads {
            builder = by_index!(s, declare_read(builder));
        }
        for &s in &node.gates {
            builder = by_index!(s, declare_gate(builder));
        }
        for &target in &node.after {
            builder = builder.after(node_name(target));
        }
        if node.exclusive {
            builder = builder.exclusive();
        }
        let probe = Arc::clone(&probe);
        let kind = node.kind;
        if let Kind::Appender(k) = kind {
            by_index!(
                k,
                add_appender(&mut world, builder, index, node.clone(), probe)
            );
            continue;
        }
        let node = node.clone();
        let body_probe = Arc::clone(&probe);
        let body = builder.run(move |cx| run_body(cx, index, &node, &body_probe));
        match kind {
            Kind::Split(k) => by_index!(k, add_split(&mut world, body, index, probe)),
            _ => {
                world.add_system(body);
            }
        }
    }
    (world, probe)
}

fn run(spec: &Spec, pool: &ThreadPool, executor: ExecutorKind) -> Outcome {
    let (mut world, probe) = build(spec, pool, executor);
    for iteration in 1..=ITERATIONS {
        probe.iteration.store(iteration, Ordering::SeqCst);
        if let Err(error) = world.run_iteration() {
            panic!("{executor:?} on {} threads: {error}", pool.num_threads());
        }
    }
    let logs = (0..SERVICES)
        .map(|s| by_index!(s, log_of(&world)))
        .collect();
    let observations = probe
        .observations
        .iter()
        .map(|o| o.lock().unwrap_or_else(PoisonError::into_inner).clone())
        .collect();
    let commits = probe
        .commits
        .iter()
        .map(|c| c.lock().unwrap_or_else(PoisonError::into_inner).clone())
        .collect();
    Outcome {
        logs,
        observations,
        commits,
    }
}

/// Pools of 1, 2 and 4 threads, shared by every case.
fn pools() -> &'static [ThreadPool; 3] {
    static POOLS: OnceLock<[ThreadPool; 3]> = OnceLock::new();
    POOLS.get_or_init(|| {
        [1, 2, 4].map(|threads| ThreadPool::new(threads).expect("the pool's threads start"))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parallel_runs_match_the_serial_run(spec in spec()) {
        let serial = run(&spec, &pools()[0], ExecutorKind::Serial);
        // Every node observed something in every iteration.
        for observations in &serial.observations {
            prop_assert_eq!(observations.len(), ITERATIONS as usize);
        }
        // Every commit ran each iteration, after every appender of its
        // buffer: the commits of a buffer together drained all of that
        // iteration's values, none of another.
        for k in 0..BUFFERS {
            let appenders = spec.nodes.iter().filter(|n| n.kind == Kind::Appender(k)).count();
            let commits: Vec<usize> = (0..spec.nodes.len())
                .filter(|&i| spec.nodes[i].kind == Kind::Split(k))
                .collect();
            if commits.is_empty() {
                continue;
            }
            for it in 0..ITERATIONS as usize {
                let tag = format!("|it{}|", it + 1);
                let mut values = 0;
                for &index in &commits {
                    prop_assert_eq!(serial.commits[index].len(), ITERATIONS as usize);
                    let drained = &serial.commits[index][it];
                    for value in drained.split(',').filter(|v| !v.is_empty()) {
                        prop_assert!(value.contains(&tag), "{} in iteration {}", value, it + 1);
                        values += 1;
                    }
                }
                prop_assert_eq!(values, 2 * appenders);
            }
        }
        for pool in pools() {
            for executor in [ExecutorKind::Parallel, ExecutorKind::Adaptive] {
                for repeat in 0..REPEATS {
                    let other = run(&spec, pool, executor);
                    prop_assert_eq!(
                        &other,
                        &serial,
                        "{:?} on {} threads, repeat {}",
                        executor,
                        pool.num_threads(),
                        repeat
                    );
                }
            }
        }
    }
}

/// A fixed plan with a known answer: the serial executor follows plan order
/// (here registration order, refined by `after`), and the logs say so.
#[test]
fn the_logs_record_plan_order() {
    let gate0 = |after: Vec<usize>| NodeSpec {
        reads: vec![],
        gates: vec![0],
        after,
        exclusive: false,
        kind: Kind::Plain,
    };
    let spec = Spec {
        nodes: vec![
            gate0(vec![1]),
            gate0(vec![]),
            NodeSpec {
                reads: vec![0],
                gates: vec![1],
                after: vec![],
                exclusive: false,
                kind: Kind::Plain,
            },
        ],
    };
    let serial = run(&spec, &pools()[0], ExecutorKind::Serial);
    // n1 gates Svc<0> first (n0 runs after it), then n0, then n2 reads it.
    assert_eq!(
        serial.logs[0][..2],
        ["n1|it1:s0=0/-".to_owned(), "n0|it1:s0=1/n1".to_owned()]
    );
    assert_eq!(serial.logs[1][0], "n2|it1:s0=2/n0,s1=0/-");
    assert_eq!(serial.logs[0].len(), 2 * ITERATIONS as usize);
    for pool in pools() {
        assert_eq!(run(&spec, pool, ExecutorKind::Parallel), serial);
        assert_eq!(run(&spec, pool, ExecutorKind::Adaptive), serial);
    }
}
