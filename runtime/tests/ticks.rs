//! Change ticks for anything created late (issue 19): a query between
//! iterations, a system, a run condition, a parallel query node or a
//! `Removed` reader made after 2^31 ticks, 2^32 ticks and more sees every
//! row (and removal) it has never seen, and a system that has run all along
//! goes on seeing exactly the new ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::{
    Added, Changed, Entities, Entity, MAX_TICK_AGE, NodeBuilder, Query, Removed,
    TICK_CHECK_INTERVAL, World,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);

/// Rows spawned at every checkpoint.
fn fresh_rows() -> u32 {
    if cfg!(miri) { 2 } else { 10 }
}

/// The intervals of `TICK_CHECK_INTERVAL` ticks after which everything new
/// is checked: past 2^31 (8), 2^32 (16) and a bit more. Under Miri only
/// some, around those two.
fn checkpoints() -> Vec<u32> {
    if cfg!(miri) {
        vec![1, 8, 9, 16, 17]
    } else {
        (1..=18).collect()
    }
}

/// A counter shared with a node.
fn counter() -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(usize::MAX));
    (count.clone(), count)
}

/// How many rows hold an `A`.
fn rows(world: &World) -> usize {
    world
        .entities()
        .archetypes()
        .filter(|archetype| {
            world
                .entities()
                .components()
                .id_of::<A>()
                .is_some_and(|id| archetype.contains(id))
        })
        .map(|archetype| archetype.len())
        .sum()
}

/// Runs the world through `TICK_CHECK_INTERVAL` ticks per step (an
/// iteration between, so every check pass runs), and at each checkpoint
/// spawns fresh rows and has `check` look at them; `check` gets the
/// interval count and the fresh rows.
fn through_the_ticks(world: &mut World, mut check: impl FnMut(&mut World, u32, &[Entity])) {
    let last = *checkpoints().last().unwrap();
    let at = checkpoints();
    for interval in 1..=last {
        world.entities_mut().advance_ticks(TICK_CHECK_INTERVAL);
        world.run_iteration().expect("runs");
        if at.contains(&interval) {
            let fresh = world.spawn_batch((0..fresh_rows()).map(|i| (A(interval * 1000 + i),)));
            check(world, interval, &fresh);
        }
    }
    assert!(
        Entities::is_newer(world.entities().tick(), 0),
        "past 2^32: the tick wrapped ({:#x})",
        world.entities().tick()
    );
}

/// The finding of issue 19: `world.query_filtered` has no cursor and must
/// see every row as added and changed, however late; it saw none of the
/// fresh rows once the tick passed 2^31.
#[test]
fn a_query_between_iterations_sees_every_row_however_late() {
    let mut world = World::new();
    world.spawn_batch((0..fresh_rows()).map(|i| (A(i),)));
    through_the_ticks(&mut world, |world, interval, fresh| {
        let tick = world.entities().tick();
        let total = rows(world);
        let added: Vec<Entity> = world.query_filtered::<Entity, Added<A>>().iter().collect();
        assert_eq!(
            added.len(),
            total,
            "added at interval {interval}, tick {tick:#x}"
        );
        assert!(fresh.iter().all(|e| added.contains(e)));
        let changed = world.query_filtered::<Entity, Changed<A>>().count();
        assert_eq!(
            changed, total,
            "changed at interval {interval}, tick {tick:#x}"
        );
    });
}

/// A system registered late sees every row as added on its first run, and
/// only what is new after; one that ran all along sees exactly the fresh
/// rows at each checkpoint.
#[test]
fn a_system_registered_late_sees_every_row_on_its_first_run() {
    let mut world = World::new();
    world.spawn_batch((0..fresh_rows()).map(|i| (A(i),)));
    let (seen, counted) = counter();
    world.add_system(
        NodeBuilder::new("all along").system(move |q: Query<Entity, Added<A>>| {
            counted.store(q.iter().count(), Ordering::Relaxed);
        }),
    );
    world.run_iteration().expect("runs");
    assert_eq!(seen.load(Ordering::Relaxed), rows(&world));
    through_the_ticks(&mut world, |world, interval, fresh| {
        let tick = world.entities().tick();
        let (late, counted) = counter();
        let node = world.add_system(NodeBuilder::new(format!("late {interval}")).system(
            move |q: Query<Entity, (Added<A>, Changed<A>)>| {
                counted.store(q.iter().count(), Ordering::Relaxed);
            },
        ));
        world.run_iteration().expect("runs");
        assert_eq!(
            late.load(Ordering::Relaxed),
            rows(world),
            "first run at interval {interval}, tick {tick:#x}"
        );
        assert_eq!(
            seen.load(Ordering::Relaxed),
            fresh.len(),
            "all along, at interval {interval}"
        );
        world.run_iteration().expect("runs");
        assert_eq!(late.load(Ordering::Relaxed), 0, "nothing new since");
        world.remove_node(node).unwrap();
    });
}

/// A run condition added late has its own cursor, which sees every row on
/// its first evaluation.
#[test]
fn a_run_condition_registered_late_sees_every_row() {
    let mut world = World::new();
    world.spawn_batch((0..fresh_rows()).map(|i| (A(i),)));
    through_the_ticks(&mut world, |world, interval, _| {
        let tick = world.entities().tick();
        let (late, counted) = counter();
        let node = world.add_system(
            NodeBuilder::new(format!("guarded {interval}"))
                .system(|| {})
                .run_if(move |q: Query<Entity, Added<A>>| {
                    counted.store(q.iter().count(), Ordering::Relaxed);
                    true
                }),
        );
        world.run_iteration().expect("runs");
        assert_eq!(
            late.load(Ordering::Relaxed),
            rows(world),
            "first evaluation at interval {interval}, tick {tick:#x}"
        );
        world.remove_node(node).unwrap();
    });
}

/// A parallel query node, and `Query::par_for_each` in a system, added
/// late see every row on their first run.
#[test]
fn parallel_queries_registered_late_see_every_row() {
    let mut world = World::new();
    world.spawn_batch((0..fresh_rows()).map(|i| (A(i),)));
    through_the_ticks(&mut world, |world, interval, _| {
        let tick = world.entities().tick();
        let node_rows = Arc::new(AtomicUsize::new(0));
        let counted = node_rows.clone();
        let node = world.add_par_query::<Entity, Added<A>>(
            NodeBuilder::new(format!("par node {interval}")),
            3,
            move |_| {
                counted.fetch_add(1, Ordering::Relaxed);
            },
        );
        let system_rows = Arc::new(AtomicUsize::new(0));
        let counted = system_rows.clone();
        let system = world.add_system(NodeBuilder::new(format!("par system {interval}")).system(
            move |mut q: Query<Entity, Changed<A>>| {
                q.par_for_each_sliced(3, |_| {
                    counted.fetch_add(1, Ordering::Relaxed);
                });
            },
        ));
        world.run_iteration().expect("runs");
        let total = rows(world);
        let at = format!("at interval {interval}, tick {tick:#x}");
        assert_eq!(node_rows.load(Ordering::Relaxed), total, "par node {at}");
        assert_eq!(
            system_rows.load(Ordering::Relaxed),
            total,
            "par_for_each {at}"
        );
        world.run_iteration().expect("runs");
        assert_eq!(
            node_rows.load(Ordering::Relaxed),
            total,
            "nothing new since"
        );
        world.remove_node(node).unwrap();
        world.remove_node(system).unwrap();
    });
}

/// A `Removed<A>` reader added late sees every removal the world still
/// keeps (those of the last two iterations) on its first run.
#[test]
fn a_removed_reader_registered_late_sees_the_kept_removals() {
    let mut world = World::new();
    world.spawn_batch((0..fresh_rows()).map(|i| (A(i),)));
    through_the_ticks(&mut world, |world, interval, fresh| {
        let tick = world.entities().tick();
        world.despawn(fresh[0]).unwrap();
        // Every record kept: none is older than `MAX_TICK_AGE`.
        let kept: Vec<Entity> = world
            .entities()
            .removed_since::<A>(tick.wrapping_sub(MAX_TICK_AGE))
            .collect();
        assert!(kept.contains(&fresh[0]));
        let gone = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = gone.clone();
        let node = world.add_system(
            NodeBuilder::new(format!("reader {interval}"))
                .system(move |removed: Removed<A>| record.lock().unwrap().extend(removed.iter())),
        );
        world.run_iteration().expect("runs");
        assert_eq!(
            *gone.lock().unwrap(),
            kept,
            "at interval {interval}, tick {tick:#x}"
        );
        world.remove_node(node).unwrap();
    });
}
