//! Property: on random DAGs, every executor (parallel with 1, 2 and 4
//! threads, serial) runs every node exactly once and never before all of its
//! predecessors finished, run after run. Some nodes defer their completion;
//! some fan slices out in some runs and not in others, so the executor's
//! fan-out hints (which successor a thread keeps) flip between runs.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use sluice::exec::{
    CompiledGraph, ExecutionState, NodeOutcome, SerialExecutor, ThreadPool, for_each_slice,
};

fn pools() -> &'static [ThreadPool; 3] {
    static POOLS: OnceLock<[ThreadPool; 3]> = OnceLock::new();
    POOLS.get_or_init(|| [1, 2, 4].map(|threads| ThreadPool::new(threads).unwrap()))
}

/// A random DAG of up to 60 nodes whose indices are shuffled, so index
/// order is not a topological order, with the nodes that defer their
/// completion and those that fan out (every other run).
fn dag() -> impl Strategy<Value = (CompiledGraph, Vec<bool>, Vec<bool>)> {
    (1usize..=60)
        .prop_flat_map(|n| {
            let pairs = n * (n - 1) / 2;
            (
                Just(n),
                proptest::collection::vec(any::<bool>(), pairs),
                Just((0..n as u32).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(prop::bool::weighted(0.15), n),
                proptest::collection::vec(prop::bool::weighted(0.3), n),
                0u8..4,
            )
        })
        .prop_map(|(n, present, permutation, deferred, fans, density)| {
            let mut edges = Vec::new();
            let mut k = 0;
            for i in 0..n {
                for j in (i + 1)..n {
                    // Keep roughly 1/(density+1) of the candidate edges.
                    if present[k] && (k % (density as usize + 1) == 0) {
                        edges.push((permutation[i], permutation[j]));
                    }
                    k += 1;
                }
            }
            (
                CompiledGraph::from_edges(n, &edges).unwrap(),
                deferred,
                fans,
            )
        })
}

/// Runs iteration `iteration` and returns, per node, (runs, start, end)
/// sequence numbers taken from a global clock.
fn run_once(
    graph: &CompiledGraph,
    state: &mut ExecutionState,
    (deferred, fans): (&[bool], &[bool]),
    iteration: usize,
    pool: Option<&ThreadPool>,
) -> Vec<(usize, u64, u64)> {
    let n = graph.node_count();
    let clock = Arc::new(AtomicU64::new(1));
    let starts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let ends: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let body = |cx: &sluice::exec::NodeContext<'_>| {
        let node = cx.node();
        runs[node].fetch_add(1, Ordering::SeqCst);
        starts[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
        if fans[node] && (node + iteration).is_multiple_of(2) {
            let slices = AtomicUsize::new(0);
            for_each_slice(5, &|run| {
                slices.fetch_add(run.len(), Ordering::Relaxed);
            });
            assert_eq!(slices.into_inner(), 5, "node {node}: every slice once");
        }
        if deferred[node] {
            let completion = cx.defer();
            let (clock, ends) = (Arc::clone(&clock), Arc::clone(&ends));
            let complete = move || {
                ends[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                completion.complete();
            };
            if node.is_multiple_of(2) {
                // From a thread outside the pool, a little later.
                completer().send(Box::new(complete)).unwrap();
            } else {
                // Before the body even returns.
                complete();
            }
            return NodeOutcome::Deferred;
        }
        ends[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
        NodeOutcome::Done
    };
    match pool {
        Some(pool) => pool.run(graph, state, body).unwrap(),
        None => SerialExecutor::new().run(graph, state, body).unwrap(),
    }
    (0..n)
        .map(|i| {
            (
                runs[i].load(Ordering::SeqCst),
                starts[i].load(Ordering::SeqCst),
                ends[i].load(Ordering::SeqCst),
            )
        })
        .collect()
}

type Job = Box<dyn FnOnce() + Send>;

/// A thread outside every pool that completes deferred nodes.
fn completer() -> &'static Sender<Job> {
    static COMPLETER: OnceLock<Sender<Job>> = OnceLock::new();
    COMPLETER.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        std::thread::spawn(move || {
            for job in receiver {
                std::thread::yield_now();
                job();
            }
        });
        sender
    })
}

fn assert_contract(graph: &CompiledGraph, record: &[(usize, u64, u64)]) {
    for (node, &(runs, start, end)) in record.iter().enumerate() {
        assert_eq!(runs, 1, "node {node} ran {runs} times");
        assert!(start < end, "node {node}: start {start} end {end}");
        for &next in graph.successors(node) {
            let next_start = record[next as usize].1;
            assert!(
                next_start > end,
                "node {next} started at {next_start} before its predecessor {node} ended at {end}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_dags_run_every_node_once_after_its_predecessors(
        (graph, deferred, fans) in dag()
    ) {
        let mut state = ExecutionState::new(&graph);
        let nodes = (deferred.as_slice(), fans.as_slice());
        for pool in pools() {
            for iteration in 0..10 {
                let record = run_once(&graph, &mut state, nodes, iteration, Some(pool));
                assert_contract(&graph, &record);
            }
        }
        let record = run_once(&graph, &mut state, nodes, 0, None);
        assert_contract(&graph, &record);
    }
}
