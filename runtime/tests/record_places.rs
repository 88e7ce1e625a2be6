//! Issue 34: where records land. Records a node makes on threads it starts
//! itself belong to it (its place, its fate); fan-outs nested in fan-outs
//! keep the order of the nested loops; records land in plan order, the
//! order of a serial run, not in registration order. Each on every
//! executor kind and on 1, 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics, world_on};

use sluice::{
    Append, AppendBuffer, Commands, IterationError, NodeBuilder, Publish, Query, Subscribe, World,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct V(u32);

/// A message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct M(u32);

/// A spawned entity's tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag(u32);

/// Every commit's values, frame by frame.
#[derive(Debug, Default)]
struct Committed(Vec<Vec<u32>>);

/// Every message read, frame by frame.
#[derive(Debug, Default)]
struct Read(Vec<Vec<u32>>);

fn commit(values: &mut AppendBuffer<V>, committed: &mut Committed) {
    committed.0.push(values.drain().map(|v| v.0).collect());
}

/// A commit of `AppendBuffer<V>` and a reader of `M`, each recording what
/// it took per frame.
fn add_collectors(world: &mut World) {
    world.insert(Committed::default());
    world.insert(Read::default());
    world.add_system(NodeBuilder::new("commit").system(commit));
    world.add_system(NodeBuilder::new("read").system(
        |mut messages: Subscribe<M>, read: &mut Read| {
            read.0.push(messages.unread().map(|m| m.0).collect());
        },
    ));
}

/// A system recording `value` three ways: appended, spawned as a tag, sent.
fn record(value: u32) -> impl Fn(Append<V>, Commands, Publish<M>) + Send + Sync + 'static {
    move |out: Append<V>, commands: Commands, messages: Publish<M>| {
        out.push(V(value));
        commands.spawn((Tag(value),));
        messages.send(M(value));
    }
}

/// The tags of the world's entities in row order, which is the order
/// their spawns landed in (one archetype).
fn tags(world: &mut World) -> Vec<u32> {
    world.query::<&Tag>().iter().map(|tag| tag.0).collect()
}

/// The repro: a node records from a scoped thread of its own, then
/// panics. Nothing it recorded lands, from any thread.
#[test]
fn a_failed_node_lands_nothing_recorded_on_its_own_threads() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        add_collectors(&mut world);
        world.add_system(NodeBuilder::new("threaded").system(
            |out: Append<V>, commands: Commands, messages: Publish<M>| {
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        out.push(V(1));
                        commands.spawn((Tag(1),));
                        messages.send(M(1));
                    });
                });
                panic!("{PLANNED}");
            },
        ));
        let failed = world.run_iteration().expect_err("the node panics");
        assert!(
            matches!(&failed, IterationError::NodePanicked(_))
                && failed.to_string().contains("threaded"),
            "{failed}"
        );
        // The next frame's commit and reader see nothing of it, and no
        // entity landed.
        let failed = world.run_iteration().expect_err("it panics again");
        assert!(failed.to_string().contains("threaded"), "{failed}");
        let case = format!("{executor:?} x{threads}");
        assert!(tags(&mut world).is_empty(), "{case}: an entity landed");
        let committed = &world.get::<Committed>().unwrap().0;
        assert!(committed.iter().all(Vec::is_empty), "{case}: {committed:?}");
        let read = &world.get::<Read>().unwrap().0;
        assert!(read.iter().all(Vec::is_empty), "{case}: {read:?}");
    }
}

/// In a good frame, what a node records on its own threads lands at its
/// place: after the node before it and before the node after it, after
/// what the node recorded on its own thread, each thread's records in the
/// order it made them.
#[test]
fn records_from_a_nodes_own_threads_land_at_its_place() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        add_collectors(&mut world);
        world.add_system(NodeBuilder::new("first").system(record(1)));
        world.add_system(NodeBuilder::new("threaded").after("first").system(
            |out: Append<V>, commands: Commands, messages: Publish<M>| {
                let both = |value: u32| {
                    out.push(V(value));
                    commands.spawn((Tag(value),));
                    messages.send(M(value));
                };
                both(10);
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        both(20);
                        both(21);
                    });
                });
                both(11);
            },
        ));
        world.add_system(
            NodeBuilder::new("last")
                .after("threaded")
                .system(record(100)),
        );
        let frames = if cfg!(miri) { 2 } else { 10 };
        for _ in 0..frames {
            world.run_iteration().expect("runs");
        }
        let expected = [1, 10, 11, 20, 21, 100];
        let case = format!("{executor:?} x{threads}");
        for frame in &world.get::<Committed>().unwrap().0 {
            assert_eq!(frame, &expected, "{case}: appended");
        }
        // Each frame's messages are read in the next.
        for frame in &world.get::<Read>().unwrap().0[1..] {
            assert_eq!(frame, &expected, "{case}: messages");
        }
        let spawned = tags(&mut world);
        assert_eq!(spawned, expected.repeat(frames), "{case}: spawns");
    }
}

/// `for_each_slice` inside a parallel query's slice records in the order
/// of the nested loops, not grouped by inner slice (the repro),
/// and so does a third level inside those.
#[test]
fn nested_fan_outs_keep_the_order_of_the_nested_loops() {
    let rows = if cfg!(miri) { 3 } else { 6 };
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        add_collectors(&mut world);
        for r in 0..rows {
            world.spawn((Tag(r),));
        }
        world.add_system(NodeBuilder::new("nested").system(
            |mut query: Query<&Tag>, out: Append<V>, messages: Publish<M>| {
                query.par_for_each_sliced(1, |tag| {
                    sluice::exec::for_each_slice(3, &|slices| {
                        for i in slices {
                            let value = tag.0 * 100 + i as u32 * 10;
                            out.push(V(value));
                            messages.send(M(value));
                            // A third level: in order, inside slice `i`.
                            sluice::exec::for_each_slice(2, &|inner| {
                                for k in inner {
                                    out.push(V(value + 1 + k as u32));
                                    messages.send(M(value + 1 + k as u32));
                                }
                            });
                        }
                    });
                });
            },
        ));
        let frames = if cfg!(miri) { 2 } else { 10 };
        for _ in 0..frames {
            world.run_iteration().expect("runs");
        }
        let expected: Vec<u32> = (0..rows)
            .flat_map(|r| (0..3).flat_map(move |i| (0..3).map(move |k| r * 100 + i * 10 + k)))
            .collect();
        let case = format!("{executor:?} x{threads}");
        for frame in &world.get::<Committed>().unwrap().0 {
            assert_eq!(frame, &expected, "{case}: appended");
        }
        for frame in &world.get::<Read>().unwrap().0[1..] {
            assert_eq!(frame, &expected, "{case}: messages");
        }
    }
}

/// Records land in plan order: `b` runs after `a` though registered
/// before it, so `a`'s commands, messages and values land first, as a
/// serial run of the plan makes them.
#[test]
fn records_land_in_plan_order_not_registration_order() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        add_collectors(&mut world);
        world.add_system(NodeBuilder::new("b").after("a").system(record(2)));
        world.add_system(NodeBuilder::new("a").system(record(1)));
        let frames = if cfg!(miri) { 2 } else { 5 };
        for _ in 0..frames {
            world.run_iteration().expect("runs");
        }
        let case = format!("{executor:?} x{threads}");
        assert_eq!(tags(&mut world), [1, 2].repeat(frames), "{case}: spawns");
        for frame in &world.get::<Committed>().unwrap().0 {
            assert_eq!(frame, &[1, 2], "{case}: appended");
        }
        for frame in &world.get::<Read>().unwrap().0[1..] {
            assert_eq!(frame, &[1, 2], "{case}: messages");
        }
    }
}

/// The two-point node's commit lands what it drained in plan order too:
/// an appender ordered after another but registered first.
#[test]
fn a_two_point_nodes_commit_drains_in_plan_order() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Committed::default());
        world.add_system(
            NodeBuilder::new("late")
                .after("early")
                .system(|out: Append<V>| out.push(V(2))),
        );
        world.add_system(
            NodeBuilder::new("early")
                .system(|out: Append<V>| out.push(V(1)))
                .commit(commit),
        );
        world.run_iteration().expect("runs");
        assert_eq!(
            world.get::<Committed>().unwrap().0,
            [vec![1, 2]],
            "{executor:?} x{threads}"
        );
    }
}
