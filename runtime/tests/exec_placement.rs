//! A worker put on the core of a caller running on the pool moves off it
//! (`exec/placement.rs`), and stays where it was put when the pool was
//! built with `keep_off_callers_cores(false)`. Linux, at least two cores.
//!
//! The test pins the caller (a thread of its own) to one core, then finds
//! the worker by name in `/proc/self/task` and pins it to the same core:
//! there the worker's yields come back late (the caller spins in a node),
//! which is what sends it looking.

#![cfg(target_os = "linux")]

use std::fs;
use std::mem;
use std::time::{Duration, Instant};

use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, ThreadPool, ThreadPoolBuilder};

/// The calling thread's allowed cores.
fn allowed_cores() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is a plain bit array, valid all zeros.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; `set` is live and of that size.
    let result = unsafe { libc::sched_getaffinity(0, mem::size_of_val(&set), &mut set) };
    assert_eq!(result, 0, "sched_getaffinity");
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below `CPU_SETSIZE`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Pins thread `tid` (0: the calling thread) to `cpu`.
fn pin(tid: libc::pid_t, cpu: usize) {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: `cpu` is below `CPU_SETSIZE` (an allowed core).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is live and of that size.
    let result = unsafe { libc::sched_setaffinity(tid, mem::size_of_val(&set), &set) };
    assert_eq!(result, 0, "sched_setaffinity({tid}, {cpu})");
}

/// The thread id and current core of the one thread named `name`.
fn thread_named(name: &str) -> (libc::pid_t, usize) {
    for task in fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path();
        let Ok(comm) = fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if comm.trim_end() != name {
            continue;
        }
        let stat = fs::read_to_string(path.join("stat")).unwrap();
        // Fields after the parenthesized name: `processor` is field 39.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        let tid = path.file_name().unwrap().to_str().unwrap().parse().unwrap();
        return (tid, fields[36].parse().unwrap());
    }
    panic!("no thread named {name}");
}

/// Builds a two-thread pool (`keep_off` as told), pins the caller and the
/// worker to one core, runs iterations whose one node spins 2 ms on the
/// caller, and returns the pool's moves and the worker's core at the end
/// (`None` with fewer than two cores).
fn run_pinned_together(prefix: &str, keep_off: bool) -> Option<(u64, usize, usize)> {
    let cores = allowed_cores();
    if cores.len() < 2 {
        return None;
    }
    let prefix = prefix.to_owned();
    std::thread::spawn(move || {
        let pool: ThreadPool = ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name_prefix(&prefix)
            .keep_off_callers_cores(keep_off)
            .build()
            .unwrap();
        // Two independent nodes, so that each run wakes the worker: one
        // spins 2 ms, the other 0.1 ms; whoever takes the short one then
        // looks for work beside the other.
        let graph = CompiledGraph::from_edges(2, &[]).unwrap();
        let mut state = ExecutionState::new(&graph);
        let mut spin_runs = |runs: usize| {
            for _ in 0..runs {
                pool.run(&graph, &mut state, |cx| {
                    let spin = Duration::from_micros(if cx.node() == 0 { 2_000 } else { 100 });
                    let start = Instant::now();
                    while start.elapsed() < spin {
                        std::hint::spin_loop();
                    }
                    NodeOutcome::Done
                })
                .unwrap();
            }
        };
        // The worker reads the cores it may use as it starts: pinned before
        // that, it would know no other. It has started once it has parked.
        spin_runs(1);
        while pool.stats().sleeping_workers == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let core = cores[0];
        pin(0, core);
        let worker = format!("{prefix}-1");
        let (tid, _) = thread_named(&worker);
        pin(tid, core);
        // Enough runs for the caller to record its core (every 16th) and
        // for the worker to look for work beside it many times over.
        spin_runs(64);
        let (_, now) = thread_named(&worker);
        Some((pool.stats().moves, core, now))
    })
    .join()
    .unwrap()
}

#[test]
fn a_worker_on_its_callers_core_moves_off_it() {
    let Some((moves, core, now)) = run_pinned_together("placement-on", true) else {
        return;
    };
    assert!(moves >= 1, "the worker never moved off core {core}");
    assert_ne!(now, core, "the worker is back on the caller's core");
}

#[test]
fn a_pool_told_not_to_leaves_its_workers_where_they_are() {
    let Some((moves, core, now)) = run_pinned_together("placement-off", false) else {
        return;
    };
    assert_eq!(moves, 0);
    assert_eq!(now, core, "the worker left the core it was pinned to");
}
