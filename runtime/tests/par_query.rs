//! Parallel queries (issue 10): a per-row body run in slices on the pool,
//! with the lanes and results of a query system; `par_for_each_init`
//! (issue 23), per-thread state reused across the slices of its thread.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::exec::ThreadPool;
use sluice::{Changed, ExecutorKind, IterationError, Mut, NodeBuilder, Query, With, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fast;
#[derive(Debug, Default)]
struct Total(f32);

fn entities() -> usize {
    if cfg!(miri) { 20 } else { 5_000 }
}

fn world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    for i in 0..entities() {
        if i % 3 == 0 {
            world.spawn((Pos(i as f32), Vel(1.0), Fast));
        } else {
            world.spawn((Pos(i as f32), Vel(0.5)));
        }
    }
    world
}
/// The executors compared with the serial run; under Miri the parallel one
/// only: the adaptive executor runs the serial path until its first probe,
/// 32 iterations in, further than a test runs under Miri.
fn parallel_kinds() -> &'static [ExecutorKind] {
    if cfg!(miri) {
        &[ExecutorKind::Parallel]
    } else {
        &[ExecutorKind::Parallel, ExecutorKind::Adaptive]
    }
}

/// Every matching row once, the same on every executor and thread count,
/// and ordered against the systems sharing its lanes.
#[test]
fn rows_once_in_slices_on_every_executor() {
    let run = |executor: ExecutorKind, threads: usize| {
        let mut world = world(executor, threads);
        world.insert(Total::default());
        let visits = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = visits.clone();
        let integrate = world.add_par_query::<(&mut Pos, &Vel), ()>(
            NodeBuilder::new("integrate"),
            if cfg!(miri) { 7 } else { 64 },
            move |(mut pos, vel): (Mut<Pos>, &Vel)| {
                pos.0 += vel.0;
                counted.fetch_add(1, Ordering::Relaxed);
            },
        );
        world.add_par_query::<&mut Vel, With<Fast>>(
            NodeBuilder::new("boost"),
            16,
            |mut vel: Mut<Vel>| vel.0 *= 2.0,
        );
        let sum = world.add_system(
            NodeBuilder::new("sum")
                .system(|q: Query<&Pos>, total: &mut Total| total.0 = q.iter().map(|p| p.0).sum()),
        );
        let plan = world.plan().unwrap();
        assert!(
            plan.edge_between(integrate, sum).is_some(),
            "the reader waits for the slices"
        );
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        assert_eq!(visits.load(Ordering::Relaxed), 3 * entities());
        let mut positions: Vec<f32> = world.query::<&Pos>().iter().map(|p| p.0).collect();
        positions.sort_by(f32::total_cmp);
        (positions, world.get::<Total>().unwrap().0)
    };
    let serial = run(ExecutorKind::Serial, 0);
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    for &threads in threads {
        for &executor in parallel_kinds() {
            assert!(
                run(executor, threads) == serial,
                "{executor:?} on {threads} threads"
            );
        }
    }
}

/// A parallel query with `Changed<T>` has its own cursor.
#[test]
fn changed_rows_only() {
    let mut world = world(ExecutorKind::Parallel, 2);
    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    world.add_par_query::<&Pos, Changed<Pos>>(NodeBuilder::new("watch"), 32, move |_: &Pos| {
        counted.fetch_add(1, Ordering::Relaxed);
    });
    world.run_iteration().unwrap();
    assert_eq!(
        seen.swap(0, Ordering::Relaxed),
        entities(),
        "first run: all new"
    );
    world.run_iteration().unwrap();
    assert_eq!(seen.swap(0, Ordering::Relaxed), 0, "nothing changed");
    world
        .query_filtered::<&mut Pos, With<Fast>>()
        .for_each(|mut p| p.0 += 1.0);
    world.run_iteration().unwrap();
    assert_eq!(seen.load(Ordering::Relaxed), entities().div_ceil(3));
}

/// A body that panics fails the iteration naming the node; the next
/// iteration runs normally.
#[test]
fn a_panicking_body_is_reported() {
    let mut world = world(ExecutorKind::Parallel, 2);
    world.add_par_query::<&Pos, ()>(NodeBuilder::new("fragile"), 8, |pos: &Pos| {
        assert!(pos.0 != 10.0, "row ten is bad");
    });
    let Err(IterationError::NodePanicked(panic)) = world.run_iteration() else {
        panic!("the body's panic is the iteration's");
    };
    assert!(panic.to_string().contains("fragile"), "{panic}");
    world.query::<&mut Pos>().for_each(|mut p| {
        if p.0 == 10.0 {
            p.0 = 11.0;
        }
    });
    world.run_iteration().unwrap();
}

/// `Query::par_for_each` inside a system: every matching row exactly once,
/// for slice sizes that split archetypes unevenly, on every executor and
/// thread count, with the same final world as a sequential `for_each`.
#[test]
fn par_for_each_visits_every_row_once() {
    let run =
        |executor: ExecutorKind, threads: usize, rows: usize| {
            let mut world = world(executor, threads);
            world.spawn_batch((0..entities() / 7).map(|i| (Pos(i as f32),)));
            world.add_system(NodeBuilder::new("integrate").system(
                move |mut q: Query<(&mut Pos, &Vel)>| {
                    let visited = AtomicUsize::new(0);
                    let body = |(mut pos, vel): (Mut<Pos>, &Vel)| {
                        pos.0 += vel.0;
                        visited.fetch_add(1, Ordering::Relaxed);
                    };
                    if rows == 0 {
                        q.par_for_each(body);
                    } else {
                        q.par_for_each_sliced(rows, body);
                    }
                    assert_eq!(visited.into_inner(), entities(), "every row once");
                },
            ));
            world.add_system(NodeBuilder::new("boost").system(
                |mut q: Query<&mut Vel, With<Fast>>| q.par_for_each(|mut vel| vel.0 *= 2.0),
            ));
            for _ in 0..3 {
                world.run_iteration().expect("runs");
            }
            let mut positions: Vec<f32> = world.query::<&Pos>().iter().map(|p| p.0).collect();
            positions.sort_by(f32::total_cmp);
            positions
        };
    let reference = run(ExecutorKind::Serial, 1, 0);
    assert_everywhere(parallel_kinds(), &reference, run);
}

/// Asserts that `run(executor, threads, rows per slice)` gives `reference`
/// for each of `executors` on 1, 2 and 4 threads, with automatic (0),
/// one-row, uneven and whole-archetype slices.
fn assert_everywhere<T: PartialEq + std::fmt::Debug>(
    executors: &[ExecutorKind],
    reference: &T,
    run: impl Fn(ExecutorKind, usize, usize) -> T,
) {
    let (threads_list, rows_list): (&[usize], &[usize]) = if cfg!(miri) {
        (&[2], &[0, 7])
    } else {
        (&[1, 2, 4], &[0, 1, 7, 100_000])
    };
    for &executor in executors {
        for &threads in threads_list {
            for &rows in rows_list {
                assert_eq!(
                    &run(executor, threads, rows),
                    reference,
                    "{executor:?}, {threads} threads, {rows} rows per slice"
                );
            }
        }
    }
}

/// Between iterations (no pool running the caller) it runs on the calling
/// thread, and `Changed<T>` still filters by the query's cursor.
#[test]
fn par_for_each_outside_a_system_and_with_changed() {
    let mut world = world(ExecutorKind::Adaptive, 2);
    let doubled = AtomicUsize::new(0);
    world.query::<&mut Pos>().par_for_each(|mut pos| {
        pos.0 *= 2.0;
        doubled.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(doubled.into_inner(), entities());
    let changed = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = changed.clone();
    world.add_system(
        NodeBuilder::new("seen").system(move |mut q: Query<&Pos, Changed<Pos>>| {
            q.par_for_each_sliced(5, |_| {
                seen.fetch_add(1, Ordering::Relaxed);
            })
        }),
    );
    world.run_iteration().expect("runs");
    assert_eq!(changed.swap(0, Ordering::Relaxed), entities(), "first run");
    world.run_iteration().expect("runs");
    assert_eq!(changed.load(Ordering::Relaxed), 0, "nothing changed since");
}

/// A panic in a parallel body (or in `par_for_each_init`'s `init`) fails
/// the system naming it, after the slices in flight finish; the world and
/// the pool go on working.
#[test]
fn par_for_each_panic_fails_the_system() {
    for (threads, in_init) in [(1, false), (3, false), (1, true), (3, true)] {
        let mut world = world(ExecutorKind::Parallel, threads);
        let trip = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let armed = trip.clone();
        world.add_system(
            NodeBuilder::new("fragile").system(move |mut q: Query<&mut Pos>| {
                let refuse = |pos: &Pos| {
                    if pos.0 == 7.0 && armed.load(Ordering::Relaxed) {
                        panic!("row 7 refused");
                    }
                };
                if in_init {
                    let init = || assert!(!armed.load(Ordering::Relaxed), "no scratch today");
                    q.par_for_each_init_sliced(3, init, |(), pos| refuse(&pos));
                } else {
                    q.par_for_each_sliced(3, |pos| refuse(&pos));
                }
            }),
        );
        let error = world.run_iteration().expect_err("the body panicked");
        let text = error.to_string();
        let message = if in_init {
            "no scratch today"
        } else {
            "row 7 refused"
        };
        assert!(text.contains("fragile") && text.contains(message), "{text}");
        trip.store(false, Ordering::Relaxed);
        world.run_iteration().expect("runs once disarmed");
    }
}

/// Commands recorded inside `par_for_each` land in row order, between the
/// system's commands before and after the call: entity ids come out the
/// same for every thread count and slice size.
#[test]
fn par_for_each_commands_land_in_row_order() {
    use sluice::Commands;
    let run = |executor: ExecutorKind, threads: usize, rows: usize| {
        let mut world = world(executor, threads);
        world.add_system(NodeBuilder::new("spawner").system(
            move |mut q: Query<&Pos>, commands: Commands<'_>| {
                commands.spawn((Pos(-1.0),));
                q.par_for_each_sliced(rows, |pos| {
                    if (pos.0 as usize).is_multiple_of(5) {
                        commands.spawn((Pos(pos.0 + 0.5),));
                    }
                });
                commands.spawn((Pos(-2.0),));
            },
        ));
        world.run_iteration().expect("runs");
        let mut spawned: Vec<(u64, f32)> = world
            .query::<(sluice::Entity, &Pos)>()
            .iter()
            .filter(|(_, pos)| pos.0 < 0.0 || pos.0.fract() != 0.0)
            .map(|(entity, pos)| (entity.id(), pos.0))
            .collect();
        // Nothing is despawned, so slots, and so ids, come in spawn order.
        spawned.sort_by_key(|&(id, _)| id);
        spawned
            .into_iter()
            .map(|(_, pos)| pos)
            .collect::<Vec<f32>>()
    };
    let reference = run(ExecutorKind::Serial, 1, 100_000);
    assert_eq!(reference.first(), Some(&-1.0));
    assert_eq!(reference.last(), Some(&-2.0));
    assert_eq!(reference.len(), entities().div_ceil(5) + 2);
    for threads in if cfg!(miri) { &[2][..] } else { &[1, 2, 4][..] } {
        for rows in [1, 3, 64] {
            assert_eq!(
                run(ExecutorKind::Parallel, *threads, rows),
                reference,
                "{threads} threads, {rows} rows per slice"
            );
        }
    }
}

// --- `Query::par_for_each_init` (issue 23): per-thread scratch state, made
// once by each thread that takes part and reused across every slice that
// thread runs.

/// What the scratch computes for a row: a sum of samples around `pos`,
/// written through the scratch list so the state is used.
fn spread(scratch: &mut Vec<f32>, pos: f32) -> f32 {
    scratch.clear();
    scratch.extend((0..4).map(|k| pos * 0.5 + k as f32));
    scratch.iter().sum::<f32>() - scratch[0]
}

/// One thread's state: its scratch, who made it, and how many rows it
/// served. Dropping it checks that it never left its thread and files its
/// row count.
struct Scratch {
    list: Vec<f32>,
    made_on: std::thread::ThreadId,
    rows: usize,
    served: std::sync::Arc<AtomicUsize>,
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

/// Every `Vel`, in entity order.
fn velocities(world: &mut World) -> Vec<f32> {
    let mut out: Vec<(u64, f32)> = world
        .query::<(sluice::Entity, &Vel)>()
        .iter()
        .map(|(entity, vel)| (entity.id(), vel.0))
        .collect();
    out.sort_by_key(|&(id, _)| id);
    out.into_iter().map(|(_, vel)| vel).collect()
}

/// Three frames of a `par_for_each_init` system (slices of `rows`, 0 for
/// the automatic size); checks in each frame that every row was served by
/// one state, that no thread made two states and that no more states were
/// made than the pool has threads.
fn run_init(executor: ExecutorKind, threads: usize, rows: usize) -> Vec<f32> {
    let mut world = world(executor, threads);
    let made = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    let pool_threads = world.pool().num_threads();
    world.add_system(
        NodeBuilder::new("spread").system(move |mut q: Query<(&Pos, &mut Vel)>| {
            made.lock().unwrap().clear();
            served.store(0, Ordering::Relaxed);
            let init = || {
                made.lock().unwrap().push(std::thread::current().id());
                Scratch {
                    list: Vec::new(),
                    made_on: std::thread::current().id(),
                    rows: 0,
                    served: served.clone(),
                }
            };
            let body = |state: &mut Scratch, (pos, mut vel): (&Pos, Mut<Vel>)| {
                state.rows += 1;
                vel.0 += spread(&mut state.list, pos.0);
            };
            if rows == 0 {
                q.par_for_each_init(init, body);
            } else {
                q.par_for_each_init_sliced(rows, init, body);
            }
            let made = made.lock().unwrap().clone();
            assert!(
                (1..=pool_threads).contains(&made.len()),
                "{} states on {pool_threads} threads",
                made.len()
            );
            let distinct: std::collections::HashSet<_> = made.iter().collect();
            assert_eq!(distinct.len(), made.len(), "a thread made two states");
            assert_eq!(served.load(Ordering::Relaxed), entities(), "rows served");
        }),
    );
    for _ in 0..3 {
        world.run_iteration().expect("runs");
    }
    velocities(&mut world)
}

/// Every executor at 1, 2 and 4 threads, automatic and uneven slices: the
/// results of a sequential `for_each` with one scratch list.
#[test]
fn par_for_each_init_serves_every_slice_of_its_thread() {
    let mut sequential = world(ExecutorKind::Serial, 1);
    let mut scratch = Vec::new();
    for _ in 0..3 {
        sequential
            .query::<(&Pos, &mut Vel)>()
            .for_each(|(pos, mut vel)| vel.0 += spread(&mut scratch, pos.0));
    }
    let reference = velocities(&mut sequential);
    assert_everywhere(
        &[
            ExecutorKind::Serial,
            ExecutorKind::Parallel,
            ExecutorKind::Adaptive,
        ],
        &reference,
        run_init,
    );
}

/// With slices of one row, thousands of slices share at most one state per
/// thread: `init` is not called per slice (nor per row).
#[test]
fn par_for_each_init_runs_per_thread_not_per_slice() {
    for threads in if cfg!(miri) { &[2][..] } else { &[2, 4][..] } {
        let mut world = world(ExecutorKind::Parallel, *threads);
        let calls = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        world.add_system(
            NodeBuilder::new("ones").system(move |mut q: Query<&mut Vel>| {
                q.par_for_each_init_sliced(
                    1,
                    || counted.fetch_add(1, Ordering::Relaxed),
                    |_, mut vel| vel.0 += 1.0,
                );
            }),
        );
        let before: f32 = world.query::<&Vel>().iter().map(|v| v.0).sum();
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
        let after: f32 = world.query::<&Vel>().iter().map(|v| v.0).sum();
        assert_eq!(after - before, (frames * entities()) as f32);
    }
}

/// Outside a system (no pool running the caller) one state serves every
/// row; a query that matches nothing makes none.
#[test]
fn par_for_each_init_outside_a_system_and_on_no_rows() {
    let mut world = world(ExecutorKind::Adaptive, 2);
    let calls = AtomicUsize::new(0);
    world.query::<&mut Vel>().par_for_each_init(
        || {
            calls.fetch_add(1, Ordering::Relaxed);
            0usize
        },
        |seen, mut vel| {
            *seen += 1;
            vel.0 = *seen as f32;
        },
    );
    assert_eq!(calls.swap(0, Ordering::Relaxed), 1);
    let mut seen: Vec<f32> = world.query::<&Vel>().iter().map(|v| v.0).collect();
    seen.sort_by(f32::total_cmp);
    assert_eq!(seen, (1..=entities()).map(|n| n as f32).collect::<Vec<_>>());
    struct Nobody;
    world
        .query_filtered::<&mut Vel, With<Nobody>>()
        .par_for_each_init(|| calls.fetch_add(1, Ordering::Relaxed), |_, _| {});
    assert_eq!(calls.load(Ordering::Relaxed), 0, "no rows, no state");
}
