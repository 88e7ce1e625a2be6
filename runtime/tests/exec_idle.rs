//! Between iterations nobody burns a core for longer than the pool's spin:
//! the pool's worker threads use no CPU time once parked, and look for work
//! as long as they were told to before parking (Linux: per-thread times
//! from `/proc/self/task/*/stat`).

#![cfg(target_os = "linux")]

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use sluice::exec::{CompiledGraph, ExecutionState, NodeOutcome, ThreadPoolBuilder};

const PREFIX: &str = "idle-probe";

/// User + system CPU time, in clock ticks, of every thread named `PREFIX-*`,
/// and how many there are.
fn worker_cpu_ticks() -> (u64, usize) {
    cpu_ticks_of(PREFIX)
}

/// The same for threads named `prefix-*`.
fn cpu_ticks_of(prefix: &str) -> (u64, usize) {
    let mut total = 0;
    let mut threads = 0;
    for task in fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path();
        let Ok(comm) = fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if !comm.starts_with(prefix) {
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

#[test]
fn idle_workers_look_for_work_as_long_as_told() {
    // A minute, and a spin past the clock's range.
    look_for_work_for(Duration::from_secs(60), "spin-probe");
    look_for_work_for(Duration::MAX, "spin-max");
}

/// A pool whose idle worker looks for work for `spin` (threads named
/// `name`-N) keeps it busy and still drops at once.
fn look_for_work_for(spin: Duration, name: &'static str) {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name_prefix(name)
        .spin_while_running(spin)
        .spin_between_runs(spin)
        .build()
        .unwrap();
    let graph = CompiledGraph::from_edges(2, &[]).unwrap();
    let mut state = ExecutionState::new(&graph);
    pool.run(&graph, &mut state, |_| NodeOutcome::Done).unwrap();
    // The worker names itself when it starts, which may be after the run.
    let started = Instant::now();
    let before = loop {
        match cpu_ticks_of(name) {
            (ticks, 1) => break ticks,
            (_, threads) => assert!(
                threads == 0 && started.elapsed() < Duration::from_secs(10),
                "{threads} worker threads named {name}, not 1"
            ),
        }
        thread::sleep(Duration::from_millis(1));
    };
    // Within its spin (a minute or more), the worker neither parks nor
    // stops using the CPU. 300 ms of yielding is tens of ticks on an idle
    // machine; on a loaded one a yielding thread may go a while without
    // being scheduled, so wait (up to 10 s) for its first tick: a parked
    // worker would never get one.
    thread::sleep(Duration::from_millis(300));
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let (ticks, _) = cpu_ticks_of(name);
        if ticks > before || Instant::now() > deadline {
            break ticks;
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(pool.stats().sleeping_workers, 0, "{:?}", pool.stats());
    assert!(after > before, "the spinning worker used no CPU");
    // It still looks at the pool's end while spinning: the drop joins it
    // at once, not after its spin.
    let dropped = Instant::now();
    drop(pool);
    assert!(
        dropped.elapsed() < Duration::from_secs(10),
        "dropping a spinning pool took {:?}",
        dropped.elapsed()
    );
}
