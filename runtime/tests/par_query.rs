//! Parallel queries (issue 10): a per-row body run in slices on the pool,
//! with the lanes and results of a query system.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::exec::ThreadPool;
use sluice::{Changed, ExecutorKind, IterationError, NodeBuilder, Query, With, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fast;
#[derive(Debug, Default)]
struct Total(f32);

fn entities() -> usize {
    if cfg!(miri) { 40 } else { 5_000 }
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
            move |(pos, vel): (&mut Pos, &Vel)| {
                pos.0 += vel.0;
                counted.fetch_add(1, Ordering::Relaxed);
            },
        );
        world.add_par_query::<&mut Vel, With<Fast>>(
            NodeBuilder::new("boost"),
            16,
            |vel: &mut Vel| vel.0 *= 2.0,
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
        for executor in [ExecutorKind::Parallel, ExecutorKind::Adaptive] {
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
        .for_each(|p| p.0 += 1.0);
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
    world.query::<&mut Pos>().for_each(|p| {
        if p.0 == 10.0 {
            p.0 = 11.0;
        }
    });
    world.run_iteration().unwrap();
}
