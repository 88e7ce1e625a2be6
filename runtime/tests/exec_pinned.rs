//! Pinned nodes in the engine (`CompiledGraph::with_pinned`): a pinned node
//! runs only on the thread that called `run` (worker 0, the main thread of
//! a game), on every executor and thread count, whoever released it; the
//! order is the ordinary one; and pinning does not serialize the rest. A
//! pinned batch node runs `before_update` and `after_update` on the caller
//! too, and only its slices on the pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use sluice::exec::{
    BatchBuffer, BatchNode, BatchProcessor, CompiledGraph, ExecutionState, GraphError, NodeContext,
    NodeOutcome, SerialExecutor, ThreadPool, ThreadPoolBuilder,
};

fn scaled(full: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { full }
}

/// A layered graph: `width` roots, then `layers` layers each wired to two
/// nodes of the previous one; every third node pinned.
fn layered(width: u32, layers: u32) -> (CompiledGraph, Vec<u32>) {
    let mut edges = Vec::new();
    for layer in 1..layers {
        for i in 0..width {
            let to = layer * width + i;
            edges.push(((layer - 1) * width + i, to));
            edges.push(((layer - 1) * width + (i + 1) % width, to));
        }
    }
    let n = width * layers;
    let pinned: Vec<u32> = (0..n).filter(|node| node % 3 == 1).collect();
    let graph = CompiledGraph::from_edges(n as usize, &edges)
        .unwrap()
        .with_pinned(pinned.iter().copied())
        .unwrap();
    (graph, pinned)
}

/// Runs `graph` through `run` and checks: every node once, after its
/// predecessors; every pinned node on the calling thread.
fn check(graph: &CompiledGraph, run: &dyn Fn(&CompiledGraph, &mut ExecutionState, &Body<'_>)) {
    let n = graph.node_count();
    let mut state = ExecutionState::new(graph);
    let clock = AtomicU64::new(1);
    let ends: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let elsewhere = AtomicUsize::new(0);
    let caller = thread::current().id();
    for _ in 0..scaled(20, 2) {
        ends.iter().for_each(|end| end.store(0, Ordering::Relaxed));
        runs.iter()
            .for_each(|count| count.store(0, Ordering::Relaxed));
        let body = |cx: &NodeContext<'_>| {
            let node = cx.node();
            for (from, end) in ends.iter().enumerate().take(n) {
                if graph.successors(from).contains(&(node as u32)) {
                    assert_ne!(end.load(Ordering::SeqCst), 0, "{node} after {from}");
                }
            }
            if graph.is_pinned(node) && thread::current().id() != caller {
                elsewhere.fetch_add(1, Ordering::Relaxed);
            }
            runs[node].fetch_add(1, Ordering::Relaxed);
            ends[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
            NodeOutcome::Done
        };
        run(graph, &mut state, &body);
        for (node, count) in runs.iter().enumerate() {
            assert_eq!(count.load(Ordering::Relaxed), 1, "node {node} ran once");
        }
    }
    assert_eq!(
        elsewhere.load(Ordering::Relaxed),
        0,
        "pinned nodes ran on another thread"
    );
}

type Body<'a> = dyn Fn(&NodeContext<'_>) -> NodeOutcome + Sync + 'a;

#[test]
fn pinned_nodes_run_on_the_caller_on_every_executor_and_thread_count() {
    let (graph, pinned) = layered(6, scaled(8, 3) as u32);
    assert!(graph.has_pinned() && pinned.iter().all(|&p| graph.is_pinned(p as usize)));
    for threads in [1, 2, 3, 4] {
        let pool = ThreadPool::new(threads).unwrap();
        check(&graph, &|graph, state, body| {
            pool.run(graph, state, body).unwrap();
        });
    }
    let serial = SerialExecutor::new();
    check(&graph, &|graph, state, body| {
        serial.run(graph, state, body).unwrap();
    });
}

#[test]
fn a_pinned_node_released_by_a_worker_or_a_foreign_thread_runs_on_the_caller() {
    // Roots 0..8 (slow, so the workers take some), each with a pinned
    // successor; node 16 defers and is completed from a thread outside the
    // pool, releasing pinned node 17.
    let mut edges: Vec<(u32, u32)> = (0..8).map(|root| (root, root + 8)).collect();
    edges.push((16, 17));
    let graph = CompiledGraph::from_edges(18, &edges)
        .unwrap()
        .with_pinned((8..16).chain([17]))
        .unwrap();
    let pool = ThreadPool::new(4).unwrap();
    let mut state = ExecutionState::new(&graph);
    let caller = thread::current().id();
    for _ in 0..scaled(20, 2) {
        let ran_elsewhere: Vec<AtomicBool> = (0..18).map(|_| AtomicBool::new(false)).collect();
        let foreign: std::sync::Mutex<Option<thread::JoinHandle<()>>> = std::sync::Mutex::new(None);
        pool.run(&graph, &mut state, |cx| {
            let node = cx.node();
            if thread::current().id() != caller {
                ran_elsewhere[node].store(true, Ordering::Relaxed);
            }
            if node < 8 {
                thread::sleep(Duration::from_micros(200));
            }
            if node == 16 {
                let completion = cx.defer();
                *foreign.lock().unwrap() = Some(thread::spawn(move || {
                    thread::sleep(Duration::from_micros(300));
                    completion.complete();
                }));
                return NodeOutcome::Deferred;
            }
            NodeOutcome::Done
        })
        .unwrap();
        foreign.lock().unwrap().take().unwrap().join().unwrap();
        for pinned in (8..16).chain([17]) {
            assert!(
                !ran_elsewhere[pinned].load(Ordering::Relaxed),
                "pinned node {pinned} ran off the caller"
            );
        }
    }
}

/// Waits until `ready` holds, up to a few seconds (a failing test must not
/// hang the suite).
fn wait_for(ready: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !ready() {
        if Instant::now() > deadline {
            return false;
        }
        thread::yield_now();
    }
    true
}

#[test]
fn a_running_pinned_node_does_not_serialize_unrelated_nodes() {
    // Three roots: 0 pinned, 1 and 2 not. Each waits until the other two
    // have started: only possible if they run on three threads at once,
    // the pinned node on the caller (and the caller takes the pinned node
    // rather than one the workers could run). Were pinning ignored, node 0
    // would land on a worker in two runs out of three: the thread check
    // below fails then.
    let graph = CompiledGraph::from_edges(3, &[])
        .unwrap()
        .with_pinned([0])
        .unwrap();
    let pool = ThreadPool::new(3).unwrap();
    let mut state = ExecutionState::new(&graph);
    let caller = thread::current().id();
    for _ in 0..scaled(10, 1) {
        let started: [AtomicBool; 3] = Default::default();
        let overlapped: [AtomicBool; 3] = Default::default();
        let on_caller: [AtomicBool; 3] = Default::default();
        pool.run(&graph, &mut state, |cx| {
            let node = cx.node();
            on_caller[node].store(thread::current().id() == caller, Ordering::SeqCst);
            started[node].store(true, Ordering::SeqCst);
            let others = || (0..3).all(|other| started[other].load(Ordering::SeqCst));
            overlapped[node].store(wait_for(others), Ordering::SeqCst);
            NodeOutcome::Done
        })
        .unwrap();
        for (node, seen) in overlapped.iter().enumerate() {
            assert!(
                seen.load(Ordering::SeqCst),
                "node {node} never saw the other two running beside it"
            );
        }
        let on_caller = on_caller.each_ref().map(|on| on.load(Ordering::SeqCst));
        assert_eq!(
            on_caller,
            [true, false, false],
            "the pinned node on the caller, the others on the workers"
        );
    }
}

#[test]
fn worlds_sharing_a_pool_each_get_their_pinned_nodes_on_their_own_caller() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .max_concurrent_runs(2)
        .build()
        .unwrap();
    let (graph, _) = layered(4, scaled(6, 2) as u32);
    let graph = Arc::new(graph);
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let pool = pool.clone();
            let graph = Arc::clone(&graph);
            thread::spawn(move || {
                let me = thread::current().id();
                let mut state = ExecutionState::new(&graph);
                let wrong = AtomicUsize::new(0);
                for _ in 0..scaled(50, 2) {
                    pool.run(&graph, &mut state, |cx| {
                        let on: ThreadId = thread::current().id();
                        if graph.is_pinned(cx.node()) && on != me {
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                        NodeOutcome::Done
                    })
                    .unwrap();
                }
                wrong.load(Ordering::Relaxed)
            })
        })
        .collect();
    for caller in callers {
        assert_eq!(
            caller.join().unwrap(),
            0,
            "a pinned node ran off its caller"
        );
    }
}

#[test]
fn a_panicking_pinned_node_fails_the_run_and_the_next_run_is_normal() {
    let graph = CompiledGraph::from_edges(4, &[(0, 1), (1, 2), (0, 3)])
        .unwrap()
        .with_pinned([1, 3])
        .unwrap();
    let pool = ThreadPool::new(3).unwrap();
    let mut state = ExecutionState::new(&graph);
    let failure = pool
        .run(&graph, &mut state, |cx| {
            assert_ne!(cx.node(), 1, "pinned boom");
            NodeOutcome::Done
        })
        .unwrap_err();
    assert_eq!(failure.node(), 1);
    let ran = AtomicUsize::new(0);
    pool.run(&graph, &mut state, |_| {
        ran.fetch_add(1, Ordering::Relaxed);
        NodeOutcome::Done
    })
    .unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 4);
}

#[test]
fn pinning_a_node_that_does_not_exist_is_refused() {
    let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
    assert_eq!(
        graph.clone().with_pinned([2]).unwrap_err(),
        GraphError::PinnedOutOfRange { node: 2 }
    );
    assert!(!graph.clone().with_pinned([]).unwrap().has_pinned());
    assert!(!graph.is_pinned(0));
}

/// Logs the thread of each `before_update` and `after_update`; its slices
/// take a while, so that the workers share them and often finish last.
#[derive(Default)]
struct PinnedUpload {
    before_on: Vec<ThreadId>,
    after_on: Vec<ThreadId>,
    items: AtomicUsize,
}

impl BatchProcessor for PinnedUpload {
    type Buffer = Vec<u32>;
    type Item = u32;
    const BATCH_SIZE: usize = 2;

    fn items(buffer: &Vec<u32>) -> &[u32] {
        buffer
    }

    fn before_update(&mut self, buffer: &mut Vec<u32>) {
        self.before_on.push(thread::current().id());
        buffer.extend(0..24);
    }

    fn process_batch(&self, _start: usize, batch: &[u32]) {
        thread::sleep(Duration::from_micros(20));
        self.items.fetch_add(batch.len(), Ordering::Relaxed);
    }

    fn after_update(&mut self, buffer: &mut Vec<u32>) {
        self.after_on.push(thread::current().id());
        buffer.clear();
    }
}

/// Fixes a body's scope from its use (a body scheduling a batch borrows
/// the batch for the run's scope).
fn scoped<'scope, F>(body: F) -> F
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    body
}

/// Issue 34, finding 3, in the engine: a pinned batch node (0) runs
/// `before_update` and `after_update` on the caller, whichever thread's
/// slices finish last (a worker hands the finish over); only the slices go
/// to the pool. Its successor (1) runs after `after_update`; two unpinned
/// roots keep the workers busy beside it. On 1, 2 and 4 threads, and
/// serially.
#[test]
fn a_pinned_batch_node_runs_before_and_after_update_on_the_caller() {
    let graph = CompiledGraph::from_edges(4, &[(0, 1)])
        .unwrap()
        .with_pinned([0])
        .unwrap();
    let caller = thread::current().id();
    let runs = scaled(40, 2);
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    let mut executors: Vec<(String, Option<ThreadPool>)> = threads
        .iter()
        .map(|&threads| {
            let pool = ThreadPool::new(threads).unwrap();
            (format!("parallel on {threads} threads"), Some(pool))
        })
        .collect();
    executors.push(("serial".to_owned(), None));
    let serial = SerialExecutor::new();
    for (what, pool) in executors {
        let mut state = ExecutionState::new(&graph);
        let mut batch = BatchNode::new(PinnedUpload::default());
        let mut buffer = BatchBuffer::new(Vec::new());
        let successor_ran = AtomicUsize::new(0);
        for _ in 0..runs {
            let body = scoped(|cx| match cx.node() {
                0 => batch.schedule(cx, &buffer),
                1 => {
                    successor_ran.fetch_add(1, Ordering::Relaxed);
                    NodeOutcome::Done
                }
                _ => {
                    thread::sleep(Duration::from_micros(50));
                    NodeOutcome::Done
                }
            });
            match &pool {
                Some(pool) => pool.run(&graph, &mut state, body).unwrap(),
                None => serial.run(&graph, &mut state, body).unwrap(),
            }
        }
        assert!(buffer.get_mut().is_empty(), "{what}: after_update ran");
        assert_eq!(successor_ran.load(Ordering::Relaxed), runs, "{what}");
        let upload = batch.processor_mut();
        assert_eq!(upload.items.load(Ordering::Relaxed), 24 * runs, "{what}");
        for (phase, threads) in [
            ("before_update", &upload.before_on),
            ("after_update", &upload.after_on),
        ] {
            assert_eq!(threads.len(), runs, "{what}: {phase} once a run");
            let elsewhere = threads.iter().filter(|&&id| id != caller).count();
            assert_eq!(
                elsewhere, 0,
                "{what}: {phase} ran off the caller in {elsewhere} of {runs} runs"
            );
        }
    }
}
