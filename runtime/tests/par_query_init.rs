//! `Query::par_for_each_init` (issue 23): per-thread scratch state for a
//! parallel query, made once by each thread that takes part and reused
//! across every slice that thread runs, with the same results as a
//! sequential `for_each` on every executor and thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use sluice::exec::ThreadPool;
use sluice::{ExecutorKind, NodeBuilder, Query, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marked;

fn entities() -> usize {
    if cfg!(miri) { 30 } else { 5_000 }
}

fn world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    // Two archetypes, so slices never span one and the runs cross both.
    for i in 0..entities() {
        if i % 4 == 0 {
            world.spawn((Pos(i as f32), Spread(0.0), Marked));
        } else {
            world.spawn((Pos(i as f32), Spread(0.0)));
        }
    }
    world
}

/// What the scratch computes for a row: the spread of a few samples
/// around `pos`, written through a scratch list so the state is used.
fn spread(scratch: &mut Vec<f32>, pos: f32) -> f32 {
    scratch.clear();
    scratch.extend((0..4).map(|k| pos * 0.5 + k as f32));
    scratch.iter().sum::<f32>() - scratch[0]
}

/// The state one thread makes: its scratch, who made it, and how many rows
/// it served. Dropping it checks that it never left its thread and files
/// its row count.
struct Scratch {
    list: Vec<f32>,
    made_on: ThreadId,
    rows: usize,
    served: Arc<AtomicUsize>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        assert_eq!(
            std::thread::current().id(),
            self.made_on,
            "the state dropped on the thread that made it"
        );
        self.served.fetch_add(self.rows, Ordering::Relaxed);
    }
}

/// The per-frame record of `init` calls.
#[derive(Default)]
struct Inits {
    threads: Mutex<Vec<ThreadId>>,
}

/// Runs three frames of a `par_for_each_init` system (slices of `rows`, 0
/// for the automatic size) and returns the final spreads in entity order;
/// checks, in each frame, that every row was served by some thread's state,
/// that no thread made two states and that no more states were made than
/// the pool has threads.
fn run(executor: ExecutorKind, threads: usize, rows: usize) -> Vec<f32> {
    let mut world = world(executor, threads);
    let inits = Arc::new(Inits::default());
    let served = Arc::new(AtomicUsize::new(0));
    let pool_threads = world.pool().num_threads();
    let (made, filed) = (inits.clone(), served.clone());
    world.add_system(NodeBuilder::new("spread").system(
        move |mut q: Query<(&Pos, &mut Spread)>| {
            made.threads.lock().unwrap().clear();
            filed.store(0, Ordering::Relaxed);
            let init = || {
                made.threads
                    .lock()
                    .unwrap()
                    .push(std::thread::current().id());
                Scratch {
                    list: Vec::new(),
                    made_on: std::thread::current().id(),
                    rows: 0,
                    served: filed.clone(),
                }
            };
            let body = |state: &mut Scratch, (pos, out): (&Pos, &mut Spread)| {
                state.rows += 1;
                out.0 += spread(&mut state.list, pos.0);
            };
            if rows == 0 {
                q.par_for_each_init(init, body);
            } else {
                q.par_for_each_init_sliced(rows, init, body);
            }
            let made = made.threads.lock().unwrap().clone();
            assert!(!made.is_empty(), "some thread made a state");
            assert!(
                made.len() <= pool_threads,
                "{} states on {pool_threads} threads",
                made.len()
            );
            let distinct: std::collections::HashSet<ThreadId> = made.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                made.len(),
                "a thread made its state twice in one call"
            );
            assert_eq!(
                filed.load(Ordering::Relaxed),
                entities(),
                "every row served once by a state"
            );
        },
    ));
    for _ in 0..3 {
        world.run_iteration().expect("runs");
    }
    let mut out: Vec<(u64, f32)> = world
        .query::<(sluice::Entity, &Spread)>()
        .iter()
        .map(|(entity, spread)| (entity.id(), spread.0))
        .collect();
    out.sort_by_key(|&(id, _)| id);
    out.into_iter().map(|(_, spread)| spread).collect()
}

/// The reference: a sequential `for_each` with one scratch list.
fn reference() -> Vec<f32> {
    let mut world = world(ExecutorKind::Serial, 1);
    let mut scratch = Vec::new();
    for _ in 0..3 {
        world
            .query::<(&Pos, &mut Spread)>()
            .for_each(|(pos, out)| out.0 += spread(&mut scratch, pos.0));
    }
    let mut out: Vec<(u64, f32)> = world
        .query::<(sluice::Entity, &Spread)>()
        .iter()
        .map(|(entity, spread)| (entity.id(), spread.0))
        .collect();
    out.sort_by_key(|&(id, _)| id);
    out.into_iter().map(|(_, spread)| spread).collect()
}

#[test]
fn init_state_serves_every_slice_of_its_thread_on_every_executor() {
    let reference = reference();
    let (threads_list, rows_list): (&[usize], &[usize]) = if cfg!(miri) {
        (&[2], &[0, 3])
    } else {
        (&[1, 2, 4], &[0, 1, 7, 100_000])
    };
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        for &threads in threads_list {
            for &rows in rows_list {
                assert_eq!(
                    run(executor, threads, rows),
                    reference,
                    "{executor:?}, {threads} threads, {rows} rows per slice"
                );
            }
        }
    }
}

/// With slices of one row, thousands of slices share at most one state per
/// thread: `init` is not called per slice (nor per row).
#[test]
fn init_runs_per_thread_not_per_slice() {
    for threads in if cfg!(miri) { &[2][..] } else { &[2, 4][..] } {
        let mut world = world(ExecutorKind::Parallel, *threads);
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        world.add_system(
            NodeBuilder::new("ones").system(move |mut q: Query<&mut Spread>| {
                q.par_for_each_init_sliced(
                    1,
                    || counted.fetch_add(1, Ordering::Relaxed),
                    |_, spread| spread.0 += 1.0,
                );
            }),
        );
        let frames = 5;
        for _ in 0..frames {
            world.run_iteration().expect("runs");
        }
        let calls = calls.load(Ordering::Relaxed);
        assert!(
            (frames..=frames * threads).contains(&calls),
            "{calls} inits in {frames} frames of {} one-row slices on {threads} threads",
            entities()
        );
        assert!(
            world
                .query::<&Spread>()
                .iter()
                .all(|s| s.0 == frames as f32)
        );
    }
}

/// Outside a system (no pool running the caller) one state serves every
/// row; a query that matches nothing makes none.
#[test]
fn init_outside_a_system_and_on_no_rows() {
    let mut world = world(ExecutorKind::Adaptive, 2);
    let calls = AtomicUsize::new(0);
    world.query::<&mut Spread>().par_for_each_init(
        || {
            calls.fetch_add(1, Ordering::Relaxed);
            0usize
        },
        |seen, spread| {
            *seen += 1;
            spread.0 = *seen as f32;
        },
    );
    assert_eq!(calls.swap(0, Ordering::Relaxed), 1);
    let mut seen: Vec<f32> = world.query::<&Spread>().iter().map(|s| s.0).collect();
    seen.sort_by(f32::total_cmp);
    assert_eq!(seen, (1..=entities()).map(|n| n as f32).collect::<Vec<_>>());
    struct Nobody;
    world
        .query_filtered::<&mut Spread, sluice::With<Nobody>>()
        .par_for_each_init(|| calls.fetch_add(1, Ordering::Relaxed), |_, _| {});
    assert_eq!(calls.load(Ordering::Relaxed), 0, "no rows, no state");
}

/// A panic in `init` fails the system naming it; the next iteration runs.
#[test]
fn a_panicking_init_fails_the_system() {
    for threads in [1, 3] {
        let mut world = world(ExecutorKind::Parallel, threads);
        let armed = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let trip = armed.clone();
        world.add_system(NodeBuilder::new("fragile init").system(
            move |mut q: Query<&mut Spread>| {
                q.par_for_each_init_sliced(
                    3,
                    || assert!(!trip.load(Ordering::Relaxed), "no scratch today"),
                    |(), spread| spread.0 += 1.0,
                )
            },
        ));
        let text = world
            .run_iteration()
            .expect_err("init panicked")
            .to_string();
        assert!(
            text.contains("fragile init") && text.contains("no scratch today"),
            "{text}"
        );
        armed.store(false, Ordering::Relaxed);
        world.run_iteration().expect("runs once disarmed");
    }
}
