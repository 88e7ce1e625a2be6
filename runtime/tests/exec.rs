//! The execution engine against its contract: every node once, after its
//! predecessors; deferral; failures; loose tasks; batches; timing; sharing.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use sluice::exec::{
    BatchBuffer, BatchNode, BatchProcessor, CompiledGraph, ExecutionState, LooseTasks, NodeContext,
    NodeOutcome, SerialExecutor, ThreadPool, ThreadPoolBuilder,
};

/// Runs `graph` and checks the order with sequence numbers: every node once,
/// each starting after all of its predecessors ended.
/// A node body, type-erased.
type Body<'a> = dyn Fn(&NodeContext<'_>) -> NodeOutcome + Sync + 'a;

fn check_order_with(
    run: &dyn Fn(&CompiledGraph, &mut ExecutionState, &Body<'_>),
    graph: &CompiledGraph,
    iterations: usize,
) {
    let n = graph.node_count();
    let mut state = ExecutionState::new(graph);
    let clock = AtomicU64::new(1);
    let starts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let ends: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    for _ in 0..iterations {
        for i in 0..n {
            starts[i].store(0, Ordering::Relaxed);
            ends[i].store(0, Ordering::Relaxed);
            runs[i].store(0, Ordering::Relaxed);
        }
        let body = |cx: &NodeContext<'_>| {
            let node = cx.node();
            starts[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
            runs[node].fetch_add(1, Ordering::Relaxed);
            std::hint::spin_loop();
            ends[node].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
            NodeOutcome::Done
        };
        run(graph, &mut state, &body);
        for node in 0..n {
            assert_eq!(
                runs[node].load(Ordering::Relaxed),
                1,
                "node {node} ran once"
            );
            for &next in graph.successors(node) {
                let end = ends[node].load(Ordering::SeqCst);
                let start = starts[next as usize].load(Ordering::SeqCst);
                assert!(
                    start > end,
                    "node {next} started ({start}) before {node} ended ({end})"
                );
            }
        }
    }
}

/// `full`, or `miri` under Miri (which runs the same code far slower).
fn scaled(full: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { full }
}

/// Pool sizes a test runs on: 1, 2 and 4 threads; under Miri 1 and 2
/// (every idle worker is interpreted too, and two already take the
/// parallel paths).
fn thread_counts() -> &'static [usize] {
    if cfg!(miri) { &[1, 2] } else { &[1, 2, 4] }
}

fn pool(threads: usize) -> ThreadPool {
    ThreadPool::new(threads).unwrap()
}

fn parallel(pool: &ThreadPool) -> impl Fn(&CompiledGraph, &mut ExecutionState, &Body<'_>) + '_ {
    move |graph, state, body| pool.run(graph, state, body).unwrap()
}

fn diamond_and_more() -> CompiledGraph {
    // 0 -> {1,2} -> 3 -> 4..=20 (fan-out) -> 21 (fan-in); 22 isolated
    let mut edges = vec![(0, 1), (0, 2), (1, 3), (2, 3)];
    for i in 4..=20 {
        edges.push((3, i));
        edges.push((i, 21));
    }
    CompiledGraph::from_edges(23, &edges).unwrap()
}

#[test]
fn every_node_once_after_its_predecessors() {
    let graph = diamond_and_more();
    for &threads in thread_counts() {
        let pool = pool(threads);
        check_order_with(&parallel(&pool), &graph, scaled(50, 2));
    }
    let serial = SerialExecutor::new();
    check_order_with(
        &|g, s, b| serial.run(g, s, b).unwrap(),
        &graph,
        scaled(5, 1),
    );
}

#[test]
fn wide_graphs_overflow_without_losing_nodes() {
    // 300 roots, one of which fans out to 400 successors, all joining in one
    // (under Miri 60 and 80: still past a local deque's 48).
    let (roots, fan) = (scaled(300, 60) as u32, scaled(400, 80) as u32);
    let mut edges = Vec::new();
    for i in roots..roots + fan {
        edges.push((0, i));
        edges.push((i, roots + fan));
    }
    let graph = CompiledGraph::from_edges((roots + fan + 1) as usize, &edges).unwrap();
    for &threads in if cfg!(miri) { &[1, 2] } else { &[1, 3] } {
        let pool = pool(threads);
        check_order_with(&parallel(&pool), &graph, scaled(20, 1));
    }
}

/// Ready for more cores (issue 21): pools of 8, 16 and 64 threads (more
/// threads than this machine has cores) run wide and deep graphs with every
/// node once, after its predecessors, and shut down.
#[test]
fn pools_up_to_64_threads_keep_the_order() {
    let graph = diamond_and_more();
    for threads in if cfg!(miri) {
        &[3][..]
    } else {
        &[8, 16, 64][..]
    } {
        let pool = pool(*threads);
        assert_eq!(pool.num_threads(), *threads);
        check_order_with(&parallel(&pool), &graph, scaled(20, 1));
    }
}

/// Issue 8, finding 2: a pooled state made for 65 nodes (a 65-slot ready
/// ring, 128 pending slots) reused for a graph of 66..=128 nodes. Before the
/// fix, `reset_for` kept the short ring because the pending array was long
/// enough, and a wide fan-out overflowing the local deque pushed past the
/// ring's end inside a job: the process aborted.
#[test]
fn pooled_state_reused_for_a_bigger_graph_runs_it() {
    fn fan_out(n: u32) -> CompiledGraph {
        // Node 0 releases every other node at once: 48 fill the local deque,
        // the rest overflow into the ready ring.
        let edges: Vec<(u32, u32)> = (1..n).map(|i| (0, i)).collect();
        CompiledGraph::from_edges(n as usize, &edges).unwrap()
    }
    let pool = ThreadPool::new(2).unwrap();
    let single = ThreadPool::new(1).unwrap();
    let serial = SerialExecutor::new();
    type Run<'a> = Box<dyn Fn(&CompiledGraph, &mut ExecutionState, &Body<'_>) + 'a>;
    let executors: [(&str, Run<'_>); 3] = [
        ("pool of 2", Box::new(|g, s, b| pool.run(g, s, b).unwrap())),
        (
            "pool of 1",
            Box::new(|g, s, b| single.run(g, s, b).unwrap()),
        ),
        ("serial", Box::new(|g, s, b| serial.run(g, s, b).unwrap())),
    ];
    let small = fan_out(65);
    for (name, run) in &executors {
        let sizes: &[u32] = if cfg!(miri) {
            &[116]
        } else {
            &[66, 100, 116, 128]
        };
        for &n in sizes {
            let states = sluice_collections::Pool::<ExecutionState>::new(1);
            let mut state = states.take();
            state.reset_for(&small);
            state.enable_timing(true);
            run(&small, &mut state, &|_| NodeOutcome::Done);
            drop(state);
            // The given-back state, with its 65-node arrays, for `n` nodes.
            let mut state = states.take();
            let big = fan_out(n);
            state.reset_for(&big);
            state.enable_timing(true);
            for _ in 0..scaled(3, 1) {
                let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                run(&big, &mut state, &|cx| {
                    runs[cx.node()].fetch_add(1, Ordering::Relaxed);
                    NodeOutcome::Done
                });
                for (node, count) in runs.iter().enumerate() {
                    assert_eq!(
                        count.load(Ordering::Relaxed),
                        1,
                        "{name}, {n} nodes: node {node}"
                    );
                }
                assert_eq!(state.timings().len(), n as usize);
                assert!(state.timings().iter().all(|t| t.ran), "{name}, {n} nodes");
            }
        }
    }
}

#[test]
fn long_chain_runs_in_order() {
    let len = scaled(1000, 100) as u32;
    let edges: Vec<(u32, u32)> = (0..len - 1).map(|i| (i, i + 1)).collect();
    let graph = CompiledGraph::from_edges(len as usize, &edges).unwrap();
    let pool = pool(scaled(4, 2));
    check_order_with(&parallel(&pool), &graph, scaled(3, 1));
}

#[test]
fn serial_follows_the_given_order_on_the_calling_thread() {
    let graph = CompiledGraph::from_edges(4, &[(0, 1)])
        .unwrap()
        .with_order(vec![3, 0, 2, 1])
        .unwrap();
    let mut state = ExecutionState::new(&graph);
    let seen = Mutex::new(Vec::new());
    let me = thread::current().id();
    SerialExecutor::new()
        .run(&graph, &mut state, |cx| {
            assert_eq!(thread::current().id(), me);
            assert!(cx.is_serial());
            assert_eq!(cx.thread_count(), 1);
            seen.lock().unwrap().push(cx.node());
            NodeOutcome::Done
        })
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [3, 0, 2, 1]);
}

#[test]
fn main_thread_is_worker_zero_and_one_thread_means_main_only() {
    let graph = CompiledGraph::from_edges(8, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let pool = pool(1);
    assert_eq!(pool.num_threads(), 1);
    let me = thread::current().id();
    pool.run(&graph, &mut state, |cx| {
        assert_eq!(cx.worker_index(), 0);
        assert_eq!(thread::current().id(), me);
        NodeOutcome::Done
    })
    .unwrap();
}

#[test]
fn deferred_node_releases_successors_only_when_completed() {
    let graph = CompiledGraph::from_edges(3, &[(0, 1), (1, 2)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    for &threads in thread_counts() {
        let pool = pool(threads);
        for _ in 0..scaled(20, 2) {
            let completed = Arc::new(AtomicBool::new(false));
            let successor_saw = AtomicBool::new(false);
            pool.run(&graph, &mut state, |cx| match cx.node() {
                1 => {
                    let completion = cx.defer();
                    assert_eq!(completion.node(), 1);
                    let completed = Arc::clone(&completed);
                    // Completed later, from a thread outside the pool.
                    thread::spawn(move || {
                        thread::sleep(Duration::from_millis(2));
                        completed.store(true, Ordering::SeqCst);
                        completion.complete();
                    });
                    NodeOutcome::Deferred
                }
                2 => {
                    successor_saw.store(completed.load(Ordering::SeqCst), Ordering::SeqCst);
                    NodeOutcome::Done
                }
                _ => NodeOutcome::Done,
            })
            .unwrap();
            assert!(
                successor_saw.load(Ordering::SeqCst),
                "successor ran before the completion"
            );
        }
    }
    // Serial: the same, and a completion dropped inside the body counts.
    SerialExecutor::new()
        .run(&graph, &mut state, |cx| {
            if cx.node() == 1 {
                drop(cx.defer());
                NodeOutcome::Deferred
            } else {
                NodeOutcome::Done
            }
        })
        .unwrap();
}

#[test]
fn deferral_contract_violations_fail_the_node() {
    let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let pool = pool(2);
    let err = pool
        .run(&graph, &mut state, |cx| {
            if cx.node() == 0 {
                NodeOutcome::Deferred
            } else {
                NodeOutcome::Done
            }
        })
        .unwrap_err();
    assert_eq!(err.node(), 0);
    assert!(
        err.message()
            .unwrap()
            .contains("without calling NodeContext::defer")
    );
    let err = pool
        .run(&graph, &mut state, |cx| {
            if cx.node() == 0 {
                let completion = cx.defer();
                drop(completion);
            }
            NodeOutcome::Done
        })
        .unwrap_err();
    assert_eq!(err.node(), 0);
    let err = pool
        .run(&graph, &mut state, |cx| {
            let _a = cx.defer();
            let _b = cx.defer();
            NodeOutcome::Deferred
        })
        .unwrap_err();
    assert_eq!(
        err.message(),
        Some("NodeContext::defer called twice for one node")
    );
    pool.run(&graph, &mut state, |_| NodeOutcome::Done).unwrap();
}

/// xorshift, for reproducible "random" panics.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_panics_are_caught_and_the_pool_survives() {
    // Silence the default hook's messages for the expected panics.
    std::panic::set_hook(Box::new(|_| {}));
    let mut edges = Vec::new();
    for i in 0..40u32 {
        for j in (i + 1)..40 {
            if (i * 7 + j * 13) % 9 == 0 {
                edges.push((i, j));
            }
        }
    }
    let graph = CompiledGraph::from_edges(40, &edges).unwrap();
    let mut state = ExecutionState::new(&graph);
    state.enable_timing(true);
    let pool = pool(scaled(4, 2));
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut failures = 0;
    for iteration in 0..scaled(1000, 10) {
        let victim = if iteration % 2 == 0 {
            Some((next(&mut seed) % 40) as usize)
        } else {
            None
        };
        let ran: Vec<AtomicBool> = (0..40).map(|_| AtomicBool::new(false)).collect();
        let result = pool.run(&graph, &mut state, |cx| {
            ran[cx.node()].store(true, Ordering::Relaxed);
            if Some(cx.node()) == victim {
                panic!("boom at {}", cx.node());
            }
            NodeOutcome::Done
        });
        match victim {
            Some(victim) => {
                let err = result.unwrap_err();
                failures += 1;
                assert_eq!(err.node(), victim);
                assert_eq!(err.message().unwrap(), format!("boom at {victim}"));
                // Nothing downstream of the failed node started.
                for &next in graph.successors(victim) {
                    assert!(!ran[next as usize].load(Ordering::Relaxed));
                }
                // Timings are readable after the failure.
                assert!(state.timings()[victim].ran);
            }
            None => {
                result.unwrap();
                assert!(ran.iter().all(|r| r.load(Ordering::Relaxed)));
            }
        }
    }
    let _ = std::panic::take_hook();
    assert_eq!(failures, scaled(1000, 10) / 2);
}

#[test]
fn two_threads_share_one_pool_concurrently() {
    let pool = pool(scaled(3, 2));
    let graph_a = diamond_and_more();
    let graph_b =
        CompiledGraph::from_edges(50, &(0..49).map(|i| (i / 2, i + 1)).collect::<Vec<_>>())
            .unwrap();
    thread::scope(|scope| {
        for graph in [&graph_a, &graph_b] {
            let pool = pool.clone();
            scope.spawn(move || {
                let mut state = ExecutionState::new(graph);
                let count = AtomicUsize::new(0);
                for _ in 0..scaled(300, 3) {
                    pool.run(graph, &mut state, |_| {
                        count.fetch_add(1, Ordering::Relaxed);
                        NodeOutcome::Done
                    })
                    .unwrap();
                }
                assert_eq!(
                    count.load(Ordering::Relaxed),
                    scaled(300, 3) * graph.node_count()
                );
            });
        }
        // And a third, from the main thread, with a deferred node.
        let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
        let mut state = ExecutionState::new(&graph);
        for _ in 0..scaled(300, 3) {
            pool.run(&graph, &mut state, |cx| {
                if cx.node() == 0 {
                    let completion = cx.defer();
                    thread::spawn(move || completion.complete());
                    NodeOutcome::Deferred
                } else {
                    NodeOutcome::Done
                }
            })
            .unwrap();
        }
    });
}

#[test]
fn more_concurrent_runs_than_seats_wait_for_one() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .max_concurrent_runs(1)
        .build()
        .unwrap();
    let graph = diamond_and_more();
    thread::scope(|scope| {
        for _ in 0..3 {
            let pool = &pool;
            let graph = &graph;
            scope.spawn(move || {
                let mut state = ExecutionState::new(graph);
                for _ in 0..scaled(100, 3) {
                    pool.run(graph, &mut state, |_| NodeOutcome::Done).unwrap();
                }
            });
        }
    });
}

#[test]
#[should_panic(expected = "from inside one of its own nodes")]
fn nested_run_on_the_same_pool_is_refused() {
    let pool = pool(1);
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let err = pool
        .run(&graph, &mut state, |_| {
            let mut inner = ExecutionState::new(&graph);
            pool.run(&graph, &mut inner, |_| NodeOutcome::Done).unwrap();
            NodeOutcome::Done
        })
        .unwrap_err();
    std::panic::resume_unwind(err.into_payload());
}

#[test]
fn timing_is_opt_in_and_cleared() {
    let graph = CompiledGraph::from_edges(3, &[(0, 1)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let pool = pool(2);
    let body = |cx: &NodeContext<'_>| {
        if cx.node() == 1 {
            thread::sleep(Duration::from_millis(3));
        }
        NodeOutcome::Done
    };
    pool.run(&graph, &mut state, body).unwrap();
    assert!(!state.timing_enabled());
    assert!(state.timings().iter().all(|t| *t == Default::default()));
    state.enable_timing(true);
    pool.run(&graph, &mut state, body).unwrap();
    let timings = state.timings().to_vec();
    assert_eq!(timings.len(), 3);
    assert!(timings.iter().all(|t| t.ran));
    assert!(timings[1].duration >= Duration::from_millis(3));
    assert!(timings[1].start >= timings[0].start + timings[0].duration);
    state.enable_timing(true);
    assert!(state.timings().iter().all(|t| !t.ran));
    state.enable_timing(false);
    pool.run(&graph, &mut state, body).unwrap();
    assert!(state.timings().iter().all(|t| *t == Default::default()));
    // A deferred node is timed until its completion.
    state.enable_timing(true);
    pool.run(&graph, &mut state, |cx| {
        if cx.node() == 2 {
            let completion = cx.defer();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(3));
                completion.complete();
            });
            NodeOutcome::Deferred
        } else {
            NodeOutcome::Done
        }
    })
    .unwrap();
    assert!(state.timings()[2].duration >= Duration::from_millis(3));
}

/// Yields to the executor `n` times, waking itself each time.
struct YieldTimes(usize);

impl Future for YieldTimes {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Pending until a node fires it.
#[derive(Default)]
struct Signal {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    fn fire(&self) {
        self.fired.store(true, Ordering::SeqCst);
        if let Some(waker) = self.waker.lock().unwrap().take() {
            waker.wake();
        }
    }

    fn wait(self: Arc<Self>) -> impl Future<Output = ()> {
        std::future::poll_fn(move |cx| {
            let mut waker = self.waker.lock().unwrap();
            if self.fired.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            *waker = Some(cx.waker().clone());
            Poll::Pending
        })
    }
}

#[test]
fn loose_tasks_none_lost_none_twice_across_iterations() {
    let graph = CompiledGraph::from_edges(4, &[(0, 1), (1, 2)]).unwrap();
    for &threads in thread_counts() {
        let pool = pool(threads);
        let loose = LooseTasks::new();
        loose.set_regular_window(Duration::from_millis(50));
        let mut state = ExecutionState::new(&graph);
        let polls = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        let count = scaled(100, 6);
        let signals: Vec<Arc<Signal>> = (0..count).map(|_| Arc::new(Signal::default())).collect();
        let mut tasks = Vec::new();
        for (i, signal) in signals.iter().enumerate() {
            let (polls, finished, signal) = (polls.clone(), finished.clone(), signal.clone());
            let future = async move {
                polls.fetch_add(1, Ordering::SeqCst);
                YieldTimes(i % 5).await;
                signal.wait().await;
                finished.fetch_add(1, Ordering::SeqCst);
                i
            };
            tasks.push(if i % 3 == 0 {
                loose.spawn_prioritized(future)
            } else {
                loose.spawn(future)
            });
        }
        for iteration in 0..count + 20 {
            pool.run_with_loose(&graph, &mut state, &loose, |cx| {
                // Node 1 fires one signal per iteration: a task pending across
                // frames is resumed later.
                if cx.node() == 1 && iteration < signals.len() {
                    signals[iteration].fire();
                }
                NodeOutcome::Done
            })
            .unwrap();
            // Prioritized work never outlives its iteration.
            assert_eq!(loose.queued_prioritized(), 0);
        }
        assert_eq!(
            polls.load(Ordering::SeqCst),
            count,
            "each task started once"
        );
        assert_eq!(
            finished.load(Ordering::SeqCst),
            count,
            "each task finished once"
        );
        for (i, task) in tasks.into_iter().enumerate() {
            assert!(task.is_finished());
            assert_eq!(futures_block_on(task), i);
        }
    }
}

/// A tiny `block_on` for finished tasks.
fn futures_block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        thread::yield_now();
    }
}

#[test]
fn regular_window_is_time_boxed_and_carries_over() {
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let loose = LooseTasks::new();
    loose.set_regular_window(Duration::from_millis(2));
    let polls = Arc::new(AtomicUsize::new(0));
    {
        let polls = polls.clone();
        // Never finishes: wakes itself forever.
        loose
            .spawn(async move {
                loop {
                    polls.fetch_add(1, Ordering::Relaxed);
                    YieldTimes(1).await;
                }
            })
            .detach();
    }
    let pool = pool(2);
    let mut last = 0;
    for _ in 0..5 {
        pool.run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
            .unwrap();
        let now = polls.load(Ordering::Relaxed);
        assert!(now > last, "the task progressed in this iteration's window");
        last = now;
        assert_eq!(loose.queued_regular(), 1, "what is left carries over");
    }
    loose.set_regular_window(Duration::ZERO);
    pool.run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
        .unwrap();
    assert_eq!(
        polls.load(Ordering::Relaxed),
        last,
        "a zero window runs nothing"
    );
    // The serial executor follows the same rules.
    loose.set_regular_window(Duration::from_millis(1));
    SerialExecutor::new()
        .run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
        .unwrap();
    assert!(polls.load(Ordering::Relaxed) > last);
}

#[test]
fn panicking_loose_task_does_not_fail_the_run() {
    std::panic::set_hook(Box::new(|_| {}));
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let loose = LooseTasks::new();
    let task = loose.spawn_prioritized(async { panic!("task panic") });
    pool(2)
        .run_with_loose(&graph, &mut state, &loose, |_| NodeOutcome::Done)
        .unwrap();
    let _ = std::panic::take_hook();
    assert!(task.is_finished());
}

/// Sums `x * 2` over the items into `total`; records threads and phases.
#[derive(Default)]
struct Summer {
    total: AtomicU64,
    slices: AtomicUsize,
    covered: Mutex<Vec<(usize, usize)>>,
    before_thread: Mutex<Option<thread::ThreadId>>,
    after_calls: AtomicUsize,
    last_total: u64,
    panic_at: Option<usize>,
}

impl BatchProcessor for Summer {
    type Buffer = Vec<u64>;
    type Item = u64;
    const BATCH_SIZE: usize = 64;

    fn items(buffer: &Vec<u64>) -> &[u64] {
        buffer
    }

    fn before_update(&mut self, buffer: &mut Vec<u64>) {
        *self.before_thread.get_mut().unwrap() = Some(thread::current().id());
        self.total = AtomicU64::new(0);
        self.covered.get_mut().unwrap().clear();
        buffer.push(1); // the scheduling thread may still mutate the buffer
    }

    fn process_batch(&self, start: usize, batch: &[u64]) {
        if self
            .panic_at
            .is_some_and(|at| (start..start + batch.len()).contains(&at))
        {
            panic!("slice panic");
        }
        self.slices.fetch_add(1, Ordering::Relaxed);
        self.covered.lock().unwrap().push((start, batch.len()));
        self.total
            .fetch_add(batch.iter().map(|x| x * 2).sum(), Ordering::Relaxed);
    }

    fn after_update(&mut self, buffer: &mut Vec<u64>) {
        self.after_calls.fetch_add(1, Ordering::Relaxed);
        self.last_total = *self.total.get_mut();
        buffer.clear();
    }
}

/// Runs on the pool, or serially without one. (The closure's parameter type
/// is inferred from this bound: annotating it `&NodeContext<'_>` would make it
/// generic over every scope, and a batch needs the run's.)
fn run_on<'scope, F>(
    pool: Option<&ThreadPool>,
    serial: &SerialExecutor,
    graph: &CompiledGraph,
    state: &mut ExecutionState,
    body: F,
) -> Result<(), sluice::exec::NodeFailure>
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    match pool {
        Some(pool) => pool.run(graph, state, body),
        None => serial.run(graph, state, body),
    }
}

#[test]
fn batch_node_processes_every_slice_then_after_update_once() {
    let graph = CompiledGraph::from_edges(3, &[(0, 1), (1, 2)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let serial = SerialExecutor::new();
    let counts: &[usize] = if cfg!(miri) {
        &[0, 1, 2]
    } else {
        &[0, 1, 2, 4]
    };
    for &threads in counts {
        let pool = (threads > 0).then(|| pool(threads));
        let mut batch = BatchNode::new(Summer::default());
        let mut buffer = BatchBuffer::new(Vec::new());
        for iteration in 0..scaled(30, 3) as u64 {
            let len = iteration * 97 % 1000;
            buffer.get_mut().extend(0..len);
            let node_thread = Mutex::new(None);
            let successor_ran = AtomicBool::new(false);
            run_on(pool.as_ref(), &serial, &graph, &mut state, |cx| {
                match cx.node() {
                    1 => {
                        *node_thread.lock().unwrap() = Some(thread::current().id());
                        let outcome = batch.schedule(cx, &buffer);
                        assert_eq!(outcome, NodeOutcome::Deferred);
                        outcome
                    }
                    2 => {
                        successor_ran.store(true, Ordering::SeqCst);
                        NodeOutcome::Done
                    }
                    _ => NodeOutcome::Done,
                }
            })
            .unwrap();
            assert!(successor_ran.load(Ordering::SeqCst));
            assert!(
                buffer.get_mut().is_empty(),
                "after_update cleared the buffer"
            );
            let summer = batch.processor_mut();
            assert_eq!(
                *summer.before_thread.get_mut().unwrap(),
                *node_thread.lock().unwrap()
            );
            assert_eq!(
                summer.after_calls.load(Ordering::Relaxed) as u64,
                iteration + 1
            );
        }
        let summer = batch.processor_mut();
        // Last iteration: 29 * 97 % 1000 = 813 items (under Miri 2 * 97),
        // plus the one before_update pushed.
        let items = (scaled(30, 3) as u64 - 1) * 97 % 1000;
        let expected: u64 = (0..items).map(|x| x * 2).sum::<u64>() + 2;
        assert_eq!(summer.last_total, expected);
        let mut covered = summer.covered.get_mut().unwrap().clone();
        covered.sort_unstable();
        let mut next = 0;
        for (start, len) in covered {
            assert_eq!(start, next);
            next += len;
        }
        assert_eq!(next as u64, items + 1);
    }
}

#[test]
fn batch_panic_fails_the_node_and_the_next_run_works() {
    std::panic::set_hook(Box::new(|_| {}));
    let graph = CompiledGraph::from_edges(3, &[(0, 1), (1, 2)]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let pool = pool(scaled(4, 2));
    let mut batch = BatchNode::new(Summer {
        panic_at: Some(500),
        ..Summer::default()
    });
    let mut buffer = BatchBuffer::new(Vec::new());
    for round in 0..scaled(50, 2) {
        buffer.get_mut().clear();
        buffer.get_mut().extend(0..1000);
        let successor_ran = AtomicBool::new(false);
        let result = pool.run(&graph, &mut state, |cx| match cx.node() {
            1 => batch.schedule(cx, &buffer),
            2 => {
                successor_ran.store(true, Ordering::SeqCst);
                NodeOutcome::Done
            }
            _ => NodeOutcome::Done,
        });
        let err = result.unwrap_err();
        assert_eq!(err.node(), 1, "round {round}");
        assert_eq!(err.message(), Some("slice panic"));
        assert!(!successor_ran.load(Ordering::SeqCst));
        // The batch is usable again: after_update was skipped, flags freed.
        assert_eq!(buffer.get_mut().len(), 1001);
    }
    let _ = std::panic::take_hook();
    batch.processor_mut().panic_at = None;
    buffer.get_mut().clear();
    pool.run(&graph, &mut state, |cx| {
        if cx.node() == 1 {
            batch.schedule(cx, &buffer)
        } else {
            NodeOutcome::Done
        }
    })
    .unwrap();
    assert!(buffer.get_mut().is_empty());
    assert_eq!(batch.processor_mut().last_total, 2);
}

#[test]
fn empty_batch_completes_at_once() {
    struct Nothing(usize);
    impl BatchProcessor for Nothing {
        type Buffer = Vec<u8>;
        type Item = u8;
        const BATCH_SIZE: usize = 8;
        fn items(buffer: &Vec<u8>) -> &[u8] {
            buffer
        }
        fn process_batch(&self, _: usize, _: &[u8]) {
            unreachable!()
        }
        fn after_update(&mut self, _: &mut Vec<u8>) {
            self.0 += 1;
        }
    }
    let graph = CompiledGraph::from_edges(1, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    let mut batch = BatchNode::new(Nothing(0));
    let buffer = BatchBuffer::new(Vec::new());
    pool(2)
        .run(&graph, &mut state, |cx| {
            let outcome = batch.schedule(cx, &buffer);
            assert_eq!(outcome, NodeOutcome::Done);
            outcome
        })
        .unwrap();
    assert_eq!(batch.processor_mut().0, 1);
}

#[test]
fn pool_stats_show_parked_workers_and_drop_joins() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name_prefix("stats-test")
        .build()
        .unwrap();
    let graph = diamond_and_more();
    let mut state = ExecutionState::new(&graph);
    for _ in 0..scaled(20, 2) {
        pool.run(&graph, &mut state, |_| NodeOutcome::Done).unwrap();
    }
    // Between iterations both workers end up parked...
    // A worker announces its sleep (`sleeping_workers`) a moment before it
    // parks and counts the park, and a wake-up token left from the last run
    // lets one park return at once (the worker looks for work and parks
    // again): wait until both workers are announced and the counters stand
    // still over three samples in a row (one was not enough under Miri's
    // scheduler).
    let (mut waited, mut still) = (0, 0);
    while still < 3 {
        let before = pool.stats();
        thread::sleep(Duration::from_millis(5));
        if before.sleeping_workers == 2 && pool.stats() == before {
            still += 1;
        } else {
            still = 0;
        }
        waited += 1;
        assert!(waited < 1000, "workers never parked: {:?}", pool.stats());
    }
    // ...and stay parked: nothing wakes them while no run is in flight.
    let before = pool.stats();
    thread::sleep(Duration::from_millis(50));
    let after = pool.stats();
    assert_eq!(after.sleeping_workers, 2);
    assert_eq!(after.parks, before.parks);
    assert_eq!(after.wakes, before.wakes);
    let clone = pool.clone();
    drop(pool);
    clone
        .run(&graph, &mut state, |_| NodeOutcome::Done)
        .unwrap();
    drop(clone); // joins the threads
}

#[test]
fn shared_serial_executor_keeps_every_run_on_its_calling_thread() {
    struct Where(Mutex<HashSet<thread::ThreadId>>);
    impl BatchProcessor for Where {
        type Buffer = Vec<u8>;
        type Item = u8;
        const BATCH_SIZE: usize = 4;
        fn items(buffer: &Vec<u8>) -> &[u8] {
            buffer
        }
        fn process_batch(&self, _: usize, _: &[u8]) {
            self.0.lock().unwrap().insert(thread::current().id());
        }
        fn after_update(&mut self, _: &mut Vec<u8>) {}
    }
    let serial = SerialExecutor::new();
    let graph = CompiledGraph::from_edges(2, &[(0, 1)]).unwrap();
    thread::scope(|scope| {
        for _ in 0..2 {
            let (serial, graph) = (serial.clone(), &graph);
            scope.spawn(move || {
                let me = thread::current().id();
                let mut state = ExecutionState::new(graph);
                let mut batch = BatchNode::new(Where(Mutex::new(HashSet::new())));
                let buffer = BatchBuffer::new(vec![0u8; scaled(4000, 40)]);
                for _ in 0..scaled(50, 2) {
                    serial
                        .run(graph, &mut state, |cx| {
                            assert_eq!(thread::current().id(), me);
                            if cx.node() == 1 {
                                batch.schedule(cx, &buffer)
                            } else {
                                NodeOutcome::Done
                            }
                        })
                        .unwrap();
                }
                let threads = batch.processor_mut().0.get_mut().unwrap().clone();
                assert_eq!(threads, HashSet::from([me]));
            });
        }
    });
}
