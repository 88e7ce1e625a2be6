//! Issue 34, "the two-point node": a registration with a commit
//! (`NodeSpec::commit`, reference 003's `Instanced`) is two vertices of
//! one registration, so what the registration declares holds for both:
//!
//! - its `order(n)` is one declaration, not two: the commit point shares
//!   it and is never refused as its node's duplicate (SL0005), while two
//!   distinct registrations of one order still are;
//! - `pinned()` pins both points: the commit (a window's present) runs on
//!   the thread that runs the iteration, like its body.
//!
//! Each is checked on every executor kind, on 1, 2 and 4 threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use sluice::exec::ThreadPool;
use sluice::{
    Append, AppendBuffer, ExecutorKind, IterationError, NodeBuilder, NodeIndex, Plan, Point, World,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instance(u32);

/// What each commit drained, one entry a frame.
#[derive(Debug, Default)]
struct Committed(Vec<Vec<u32>>);

/// Every executor kind on 1, 2 and 4 threads.
fn worlds() -> Vec<(String, World)> {
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };
    let mut worlds = Vec::new();
    for &threads in threads {
        for executor in [
            ExecutorKind::Serial,
            ExecutorKind::Parallel,
            ExecutorKind::Adaptive,
        ] {
            let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
            world.set_executor(executor);
            worlds.push((format!("{executor:?} on {threads} threads"), world));
        }
    }
    worlds
}

fn frames(full: usize) -> usize {
    if cfg!(miri) { 3 } else { full }
}

/// The node of `plan` called `name`.
fn node_named(plan: &Plan, name: &str) -> NodeIndex {
    plan.order()
        .find(|&node| plan.node_name(node) == name)
        .unwrap_or_else(|| panic!("`{name}` in the plan"))
}

fn instanced(out: Append<'_, Instance>) {
    out.push(Instance(1));
}

fn commit_instances(instances: &mut AppendBuffer<Instance>, committed: &mut Committed) {
    committed.0.push(instances.drain().map(|i| i.0).collect());
}

fn insert_buffers(world: &mut World) {
    world.insert(AppendBuffer::<Instance>::with_capacity(4));
    world.insert(Committed::default());
}

/// Finding 1: `NodeBuilder::new("instanced").order(5).system(..).commit(..)`
/// was refused with SL0005 ("`instanced` and `instanced@commit` both have
/// order 5"). The commit shares its node's order (it is placed like it) and
/// is one registration with it: the world plans, both points run every
/// frame, the commit after every appender.
#[test]
fn an_ordered_two_point_node_is_not_its_own_duplicate_order() {
    for (what, mut world) in worlds() {
        insert_buffers(&mut world);
        world.add_system(
            NodeBuilder::new("instanced")
                .order(5)
                .system(instanced)
                .commit(commit_instances),
        );
        world.add_system(NodeBuilder::new("recorder").order(6).system(
            |out: Append<'_, Instance>| {
                out.push(Instance(2));
            },
        ));
        let plan = world
            .plan()
            .unwrap_or_else(|error| panic!("{what}: an ordered two-point node plans: {error}"));
        let (body, commit) = (
            node_named(&plan, "instanced"),
            node_named(&plan, "instanced@commit"),
        );
        assert_eq!(plan.point(body), Point::Body { commit }, "{what}");
        assert_eq!(plan.point(commit), Point::Commit { of: body }, "{what}");
        for _ in 0..frames(10) {
            world
                .run_iteration()
                .unwrap_or_else(|error| panic!("{what}: {error}"));
        }
        let committed = &world.get::<Committed>().unwrap().0;
        assert_eq!(committed.len(), frames(10), "{what}: a commit a frame");
        for frame in committed {
            assert_eq!(frame, &[1, 2], "{what}: every appender before the commit");
        }
    }
}

/// The exemption is for a node and its own commit only: a second
/// registration with the same order is still refused, once, against the
/// first registration (not against its commit too), whichever of the two
/// is the two-point one.
#[test]
fn two_registrations_of_one_order_are_still_refused_once() {
    for two_point_first in [true, false] {
        let mut world = World::new();
        insert_buffers(&mut world);
        let two_point = NodeBuilder::new("instanced")
            .order(5)
            .system(instanced)
            .commit(commit_instances);
        let plain = NodeBuilder::new("other").order(5).run(|_| {});
        if two_point_first {
            world.add_system(two_point);
            world.add_system(plain);
        } else {
            world.add_system(plain);
            world.add_system(two_point);
        }
        let error = world.run_iteration().unwrap_err();
        let IterationError::Plan(errors) = &error else {
            panic!("a plan error, got {error}");
        };
        let found: Vec<(&str, Vec<String>)> =
            errors.errors().map(|d| (d.code, d.nodes.clone())).collect();
        let expected = if two_point_first {
            ["instanced", "other"]
        } else {
            ["other", "instanced"]
        };
        assert_eq!(found, [("SL0005", expected.map(String::from).to_vec())]);
    }
}

/// Finding 2: `pinned()` pinned only the first point; the commit ran off
/// the calling thread in most frames on the parallel executor. A window's
/// present is such a commit: both points are pinned in the plan, and both
/// run on the thread that calls `run_iteration`, every frame, on every
/// executor and thread count, with unpinned appenders (slow enough that
/// the workers take them, and release the commit) beside them.
#[test]
fn a_pinned_two_point_node_runs_both_points_on_the_calling_thread() {
    let main = thread::current().id();
    for (what, mut world) in worlds() {
        insert_buffers(&mut world);
        let body_threads: Arc<Mutex<Vec<ThreadId>>> = Arc::default();
        let commit_threads: Arc<Mutex<Vec<ThreadId>>> = Arc::default();
        let body = {
            let threads = Arc::clone(&body_threads);
            move |out: Append<'_, Instance>| {
                threads.lock().unwrap().push(thread::current().id());
                out.push(Instance(0));
            }
        };
        let commit = {
            let threads = Arc::clone(&commit_threads);
            move |instances: &mut AppendBuffer<Instance>, committed: &mut Committed| {
                threads.lock().unwrap().push(thread::current().id());
                committed.0.push(instances.drain().map(|i| i.0).collect());
            }
        };
        world.add_system(
            NodeBuilder::new("present")
                .pinned()
                .system(body)
                .commit(commit),
        );
        let appended = Arc::new(AtomicUsize::new(0));
        for r in 1..=4 {
            let appended = Arc::clone(&appended);
            world.add_system(NodeBuilder::new(format!("recorder{r}")).system(
                move |out: Append<'_, Instance>| {
                    thread::sleep(Duration::from_micros(100));
                    appended.fetch_add(1, Ordering::Relaxed);
                    out.push(Instance(r));
                },
            ));
        }
        let plan = world
            .plan()
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        for point in ["present", "present@commit"] {
            assert!(
                plan.is_pinned(node_named(&plan, point)),
                "{what}: `{point}` is pinned"
            );
        }
        let frames = frames(40);
        for _ in 0..frames {
            world
                .run_iteration()
                .unwrap_or_else(|error| panic!("{what}: {error}"));
        }
        assert_eq!(appended.load(Ordering::Relaxed), 4 * frames, "{what}");
        for (point, threads) in [("body", &body_threads), ("commit", &commit_threads)] {
            let threads = threads.lock().unwrap();
            assert_eq!(threads.len(), frames, "{what}: the {point} ran every frame");
            let elsewhere = threads.iter().filter(|&&id| id != main).count();
            assert_eq!(
                elsewhere, 0,
                "{what}: the pinned node's {point} ran off the calling thread in \
                 {elsewhere} of {frames} frames"
            );
        }
        let committed = &world.get::<Committed>().unwrap().0;
        for frame in committed {
            assert_eq!(frame, &[0, 1, 2, 3, 4], "{what}: every appender first");
        }
    }
}

/// A node's pin reaches its own commit only: another two-point node's
/// points stay free.
#[test]
fn the_commit_is_pinned_with_its_node_and_only_with_it() {
    let mut world = World::new();
    insert_buffers(&mut world);
    world.insert(AppendBuffer::<u32>::with_capacity(4));
    world.add_system(
        NodeBuilder::new("present")
            .pinned()
            .system(instanced)
            .commit(commit_instances),
    );
    world.add_system(
        NodeBuilder::new("free")
            .system(|out: Append<'_, u32>| out.push(1))
            .commit(|buffer: &mut AppendBuffer<u32>| buffer.drain().for_each(drop)),
    );
    let plan = world.plan().expect("plans");
    let pinned: Vec<&str> = plan
        .order()
        .filter(|&node| plan.is_pinned(node))
        .map(|node| plan.node_name(node))
        .collect();
    assert_eq!(pinned, ["present", "present@commit"]);
}
