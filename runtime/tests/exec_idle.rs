//! Between iterations nobody burns a core: the pool's worker threads use
//! no CPU time while no run is in flight (Linux: per-thread times from
//! `/proc/self/task/*/stat`).

#![cfg(target_os = "linux")]

use std::fs;
use std::thread;
use std::time::Duration;

use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, ThreadPoolBuilder};

const PREFIX: &str = "idle-probe";

/// User + system CPU time, in clock ticks, of every thread named `PREFIX-*`,
/// and how many there are.
fn worker_cpu_ticks() -> (u64, usize) {
    let mut total = 0;
    let mut threads = 0;
    for task in fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path();
        let Ok(comm) = fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if !comm.starts_with(PREFIX) {
            continue;
        }
        let Ok(stat) = fs::read_to_string(path.join("stat")) else {
            continue;
        };
        // Fields after the parenthesized name: state is field 3, utime 14, stime 15.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let utime: u64 = fields[11].parse().unwrap();
        let stime: u64 = fields[12].parse().unwrap();
        total += utime + stime;
        threads += 1;
    }
    (total, threads)
}

#[test]
fn idle_workers_use_no_cpu_between_iterations() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(4)
        .thread_name_prefix(PREFIX)
        .build()
        .unwrap();
    let edges: Vec<(u32, u32)> = (1..64).map(|i| (0, i)).collect();
    let graph = CompiledGraph::from_edges(64, &edges).unwrap();
    let mut state = ExecutionState::new(&graph);
    for _ in 0..200 {
        pool.run(&graph, &mut state, |_| {
            std::hint::black_box((0..1000).sum::<u64>());
            NodeOutcome::Done
        })
        .unwrap();
    }
    // Let the workers finish spinning and park.
    let mut waited = 0;
    while pool.stats().sleeping_workers < 3 {
        thread::sleep(Duration::from_millis(1));
        waited += 1;
        assert!(waited < 5000, "workers never parked: {:?}", pool.stats());
    }
    let (before, threads) = worker_cpu_ticks();
    assert_eq!(threads, 3, "three worker threads");
    let parks = pool.stats().parks;
    thread::sleep(Duration::from_millis(500));
    let (after, _) = worker_cpu_ticks();
    // Half a second of busy-waiting by three threads would be ~150 ticks;
    // parked threads accrue none (one tick of rounding allowed).
    assert!(
        after - before <= 1,
        "idle workers used {} ticks of CPU",
        after - before
    );
    assert_eq!(pool.stats().parks, parks, "no worker woke up");
    assert_eq!(pool.stats().sleeping_workers, 3);
    // And they wake up for the next run.
    pool.run(&graph, &mut state, |_| NodeOutcome::Done).unwrap();
}
