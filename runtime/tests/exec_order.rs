//! One-thread nodes first: when a node finishes with several successors
//! ready, its thread goes on with one that runs on one thread and leaves a
//! successor that fans out (`for_each_slice`, `par_for_each`, a batch) to
//! the queue, where a thread that comes free can start it and the others
//! can still join it. Kept the other way round, the one-thread successor
//! would start only after the fan-out, on whatever thread is left: a tail
//! nobody can help with.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use sluice::exec::{
    CompiledGraph, ExecutionState, NodeContext, NodeOutcome, ThreadPool, for_each_slice,
};

const BLOCKER: usize = 0;
const FINISHER: usize = 1;
/// Fans out; its index is below the one-thread successor's, so the graph's
/// own successor order would keep it.
const FANNING: usize = 2;
const ONE_THREAD: usize = 3;

#[test]
fn a_one_thread_successor_is_kept_before_one_that_fans_out() {
    // The blocker holds the other thread until the one-thread successor
    // starts (or two seconds pass), so nobody can steal the fan-out: the
    // finisher's thread decides the order alone.
    let graph = CompiledGraph::from_edges(
        4,
        &[(FINISHER as u32, FANNING as u32), (1, ONE_THREAD as u32)],
    )
    .unwrap();
    let pool = ThreadPool::new(2).unwrap();
    let mut state = ExecutionState::new(&graph);
    let clock = AtomicU64::new(1);
    let fanning_started = AtomicU64::new(0);
    let one_thread_started = AtomicU64::new(0);
    let one_thread_ran = AtomicBool::new(false);
    let body = |cx: &NodeContext<'_>| {
        match cx.node() {
            BLOCKER => {
                let deadline = Instant::now() + Duration::from_secs(2);
                while !one_thread_ran.load(Ordering::Acquire) && Instant::now() < deadline {
                    thread::yield_now();
                }
            }
            FANNING => {
                fanning_started.store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                for_each_slice(4, &|slices| {
                    std::hint::black_box(slices);
                });
            }
            ONE_THREAD => {
                one_thread_started.store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                one_thread_ran.store(true, Ordering::Release);
            }
            _ => {}
        }
        NodeOutcome::Done
    };
    // The first run learns which node fans out; the later ones use it.
    let runs = if cfg!(miri) { 3 } else { 10 };
    for run in 0..runs {
        one_thread_ran.store(false, Ordering::Relaxed);
        pool.run(&graph, &mut state, body).unwrap();
        if run == 0 {
            continue;
        }
        let (fanning, one_thread) = (
            fanning_started.load(Ordering::SeqCst),
            one_thread_started.load(Ordering::SeqCst),
        );
        assert!(
            one_thread < fanning,
            "run {run}: the one-thread successor started at {one_thread}, after the one that \
             fans out ({fanning})"
        );
    }
}

#[test]
fn a_successor_that_fans_out_is_still_kept_when_it_is_alone() {
    // A chain: each fanning node's only successor fans out too, and the
    // thread that finishes one goes straight on with the next (no queue):
    // every node of the chain runs on the same thread as its predecessor.
    let len = 6u32;
    let edges: Vec<(u32, u32)> = (0..len - 1).map(|i| (i, i + 1)).collect();
    let graph = CompiledGraph::from_edges(len as usize, &edges).unwrap();
    let pool = ThreadPool::new(2).unwrap();
    let mut state = ExecutionState::new(&graph);
    let workers: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(u64::MAX)).collect();
    let body = |cx: &NodeContext<'_>| {
        workers[cx.node()].store(cx.worker_index() as u64, Ordering::Relaxed);
        for_each_slice(2, &|slices| {
            std::hint::black_box(slices);
        });
        NodeOutcome::Done
    };
    for _ in 0..3 {
        pool.run(&graph, &mut state, body).unwrap();
    }
    let first = workers[0].load(Ordering::Relaxed);
    for (node, worker) in workers.iter().enumerate() {
        assert_eq!(
            worker.load(Ordering::Relaxed),
            first,
            "node {node} left the chain's thread"
        );
    }
}
