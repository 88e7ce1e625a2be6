//! One signature, two points in the schedule (issue 20, reference 003's
//! "Instanced appears twice"): recorders append to an instance buffer in
//! parallel, `instanced` reads the quad factory and sprite UVs beside the
//! other readers, and its commit (the gate on the buffer) starts only after
//! every appender has finished. One registration, two vertices.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics};

use sluice::exec::ThreadPool;
use sluice::{
    Append, AppendBuffer, ExecutorKind, IntoSystem, IterationError, NodeBuilder, NodeIndex, Point,
    World,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instance(u32);
#[derive(Debug, Default)]
struct QuadFactory(u32);
#[derive(Debug, Default)]
struct SpriteUvs(u32);
#[derive(Debug, Default)]
struct Committed(Vec<Vec<u32>>);

fn terrain(quads: &QuadFactory, uvs: &SpriteUvs, instances: Append<'_, Instance>) {
    instances.push(Instance(quads.0 + uvs.0));
}

fn instanced(quads: &QuadFactory, uvs: &SpriteUvs, instances: Append<'_, Instance>) {
    instances.extend([Instance(100 + quads.0), Instance(200 + uvs.0)]);
}

fn commit_instances(instances: &mut AppendBuffer<Instance>, committed: &mut Committed) {
    committed.0.push(instances.drain().map(|i| i.0).collect());
}

/// Reference 003's picture: recorders registered before and after the
/// two-point node, a plain reader beside them.
fn reference_world(executor: ExecutorKind, threads: usize, recorders: u32) -> World {
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(executor);
    world.insert(QuadFactory(1));
    world.insert(SpriteUvs(2));
    world.insert(Committed::default());
    world.insert(AppendBuffer::<Instance>::with_capacity(4));
    world.add_system(terrain);
    world.add_system(instanced.commit(commit_instances));
    for r in 0..recorders {
        world.add_system(NodeBuilder::new(format!("recorder{r}")).system(
            move |out: Append<'_, Instance>| {
                for k in 0..3 {
                    out.push(Instance(1000 * (r + 1) + k));
                }
            },
        ));
    }
    world
}

/// What every iteration commits: by appending node (registration order),
/// then push order.
fn expected(recorders: u32) -> Vec<u32> {
    let mut all = vec![3, 101, 202];
    for r in 0..recorders {
        all.extend((0..3).map(|k| 1000 * (r + 1) + k));
    }
    all
}

#[test]
fn the_commit_waits_for_every_appender_on_every_executor() {
    let recorders = if cfg!(miri) { 3 } else { 6 };
    for (executor, threads) in executors() {
        let mut world = reference_world(executor, threads, recorders);
        let iterations = if cfg!(miri) { 2 } else { 20 };
        for _ in 0..iterations {
            world.run_iteration().expect("runs");
        }
        let committed = &world.get::<Committed>().expect("committed").0;
        assert_eq!(committed.len(), iterations, "{executor:?} x{threads}");
        for frame in committed {
            // Everything appended in the frame, nothing of another frame,
            // in the same order for every executor, even past the arena's
            // capacity of 4 (the overflow grows it).
            assert_eq!(frame, &expected(recorders), "{executor:?} x{threads}");
        }
        assert!(world.get::<AppendBuffer<Instance>>().unwrap().capacity() >= 8);
    }
}

#[test]
fn one_registration_is_two_vertices_named_in_every_view() {
    let mut world = reference_world(ExecutorKind::Serial, 1, 2);
    let plan = world.plan().expect("plans");
    let names: Vec<&str> = plan.order().map(|n| plan.node_name(n)).collect();
    let at = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("{name} in {names:?}"))
    };
    let index = |name: &str| plan.order().find(|&n| plan.node_name(n) == name).unwrap();
    let (body, commit) = (index("instanced"), index("instanced@commit"));
    assert_eq!(plan.point(body), Point::Body { commit });
    assert_eq!(plan.point(commit), Point::Commit { of: body });
    assert_eq!(plan.point(index("terrain")), Point::Only);
    // Every appender before the commit in plan order, the last registered
    // included; the readers of the quad factory run together.
    for appender in ["terrain", "instanced", "recorder0", "recorder1"] {
        assert!(at(appender) < at("instanced@commit"), "{names:?}");
        assert!(plan.stage_of(index(appender)) < plan.stage_of(commit));
    }
    assert_eq!(plan.stage_of(index("terrain")), plan.stage_of(body));
    // `why` explains the wait by the appending.
    let why = plan
        .why(index("recorder1"), commit)
        .expect("the commit waits for the last recorder");
    let text: Vec<String> = why.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|t| t.starts_with("recorder1 -> instanced@commit:") && t.contains("appends ")),
        "{text:?}"
    );
    let why = plan.why(body, commit).expect("the commit follows its body");
    assert!(
        why[0].to_string().contains("after(instanced)"),
        "{}",
        why[0]
    );
    // No edge between two appenders: they run together.
    assert!(plan.why(index("recorder0"), index("recorder1")).is_none());
}

#[test]
fn the_picture_draws_the_node_twice() {
    let mut graph = sluice::Graph::new();
    graph.add_node(
        NodeBuilder::new("terrain")
            .reads_named("Quads")
            .appends_named("Instances"),
    );
    graph.add_node(NodeBuilder::new("instanced").reads_named("Quads"));
    graph.add_node(
        NodeBuilder::new("instanced@commit")
            .gates_named("Instances")
            .after("instanced"),
    );
    let plan = graph.build(&sluice::PlanOptions::default()).expect("plans");
    let svg = plan.to_svg(graph.view());
    assert!(svg.contains("<title>instanced (stage 0)</title>"), "{svg}");
    assert!(
        svg.contains("<title>instanced@commit (stage 1)</title>"),
        "{svg}"
    );
    assert!(svg.contains("class=\"append\""), "the appender's ring");
    assert!(svg.contains("appends (Append&lt;T&gt;)"), "the legend");
}

#[test]
fn removing_or_disabling_the_node_takes_both_points() {
    let mut world = reference_world(ExecutorKind::Serial, 1, 1);
    let body = NodeIndex(3); // the two built-ins, then `terrain`
    assert_eq!(world.plan().unwrap().node_name(body), "instanced");
    world.set_enabled(body, false);
    let plan = world.plan().unwrap();
    assert!(
        !plan
            .order()
            .any(|n| plan.node_name(n).starts_with("instanced"))
    );
    world.set_enabled(body, true);
    assert_eq!(world.plan().unwrap().len(), 6);
    world.remove_node(body).expect("no hook");
    let plan = world.plan().unwrap();
    assert!(
        !plan
            .order()
            .any(|n| plan.node_name(n).starts_with("instanced"))
    );
    // With no commit left, the appends wait in the buffer.
    world.run_iteration().expect("runs");
    assert_eq!(world.get::<AppendBuffer<Instance>>().unwrap().len(), 4);
}

#[test]
fn a_failed_appender_contributes_nothing_it_appended() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = reference_world(executor, threads, 2);
        let fail = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let failing = fail.clone();
        world.add_system(
            NodeBuilder::new("flaky").system(move |out: Append<'_, Instance>| {
                out.push(Instance(7));
                out.push(Instance(8));
                if failing.load(std::sync::atomic::Ordering::SeqCst) {
                    panic!("{PLANNED}");
                }
            }),
        );
        let error = world.run_iteration().expect_err("flaky fails");
        assert!(
            matches!(&error, IterationError::NodePanicked(_))
                && error.to_string().contains("flaky"),
            "{error}"
        );
        // The commit waited for `flaky`, so it did not run.
        assert!(world.get::<Committed>().unwrap().0.is_empty());
        fail.store(false, std::sync::atomic::Ordering::SeqCst);
        world.run_iteration().expect("runs");
        let committed = &world.get::<Committed>().unwrap().0;
        assert_eq!(committed.len(), 1, "{executor:?} x{threads}");
        let frame = &committed[0];
        // This iteration's `flaky` values, once; the failed run's, never.
        assert_eq!(
            frame.iter().filter(|&&v| v == 7).count(),
            1,
            "{executor:?} x{threads}: {frame:?}"
        );
        // What the nodes that succeeded in the failed iteration appended
        // (those that ran before the panic stopped new work) is committed
        // now, before this iteration's values: run by run, each in plan
        // order and each node's values in push order, as running the two
        // in turn pushes them.
        let per_node: Vec<Vec<u32>> = [vec![3], vec![101, 202]]
            .into_iter()
            .chain((0..2).map(|r| (0..3).map(|k| 1000 * (r + 1) + k).collect()))
            .chain([vec![7, 8]])
            .collect();
        let this_run = per_node.concat();
        assert!(
            frame.ends_with(&this_run),
            "{executor:?} x{threads}: {frame:?}"
        );
        // The failed run's: whole nodes, in plan order, `flaky` never.
        let mut rest = &frame[..frame.len() - this_run.len()];
        for values in &per_node[..per_node.len() - 1] {
            if rest.starts_with(values) {
                rest = &rest[values.len()..];
            }
        }
        assert!(rest.is_empty(), "{executor:?} x{threads}: {frame:?}");
    }
}

#[test]
fn appenders_in_a_later_registration_still_precede_the_gate() {
    // A gate registered first, an appender last: plan order puts the
    // appender before it anyway (the one rule, through the append edge).
    let mut world = World::new();
    world.insert(Committed::default());
    world.add_system(commit_instances);
    world.add_system(|out: Append<'_, Instance>| out.push(Instance(5)));
    world.run_iteration().expect("runs");
    assert_eq!(world.get::<Committed>().unwrap().0, [vec![5]]);
}

#[test]
fn an_appender_ordered_after_the_commit_is_a_cycle() {
    let mut world = World::new();
    world.insert(Committed::default());
    world.add_system(NodeBuilder::new("commit").system(commit_instances));
    world.add_system(
        NodeBuilder::new("late")
            .after("commit")
            .system(|out: Append<'_, Instance>| out.push(Instance(5))),
    );
    let error = world.run_iteration().expect_err("a cycle");
    let IterationError::Plan(errors) = &error else {
        panic!("a plan error, got {error}");
    };
    assert!(errors.errors().any(|d| d.code == "SL0001"), "{errors}");
}

#[derive(Debug, Clone, Copy)]
struct Row(u32);

/// More threads than a buffer has shards (so some threads share one), and
/// pushes from `par_for_each` slices that helpers take as well as from
/// whole nodes: every frame commits the same values in the same order (by
/// node, then slice, then push), from a buffer made with room for one.
#[test]
fn threads_beyond_the_shards_commit_in_place_order() {
    let threads = if cfg!(miri) { 3 } else { 12 };
    let rows: u32 = if cfg!(miri) { 8 } else { 3_000 };
    let nodes: u32 = 4;
    let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
    world.set_executor(ExecutorKind::Parallel);
    world.insert(Committed::default());
    world.insert(AppendBuffer::<Instance>::with_capacity(1));
    world.spawn_batch((0..rows).map(|i| (Row(i),)));
    for node in 0..nodes {
        world.add_system(NodeBuilder::new(format!("slices{node}")).system(
            move |mut rows: sluice::Query<'_, &Row>, out: Append<'_, Instance>| {
                rows.par_for_each_sliced(16, |row| out.push(Instance(node * 100_000 + row.0)));
            },
        ));
    }
    world.add_system(commit_instances);
    let expected: Vec<u32> = (0..nodes)
        .flat_map(|node| (0..rows).map(move |row| node * 100_000 + row))
        .collect();
    let frames = if cfg!(miri) { 2 } else { 10 };
    for _ in 0..frames {
        world.run_iteration().expect("runs");
    }
    let committed = &world.get::<Committed>().expect("committed").0;
    assert_eq!(committed.len(), frames);
    for frame in committed {
        assert_eq!(frame, &expected);
    }
    // The shards that overflowed grew to hold what they were given.
    assert!(world.get::<AppendBuffer<Instance>>().unwrap().capacity() > 8);
}

/// A value whose `Drop` panics when `loud`.
#[derive(Debug)]
struct Loud(u32, bool);

impl Drop for Loud {
    fn drop(&mut self) {
        if self.1 && !std::thread::panicking() {
            panic!("{PLANNED}: dropping {}", self.0);
        }
    }
}

#[derive(Debug, Default)]
struct Drained(Vec<Vec<u32>>);

/// A failed node's values are dropped at the boundary, and the first of
/// them panics in `Drop`: the panic is caught there, the node's other value
/// is dropped all the same (never committed), and what the node that
/// succeeded appended waits for the next commit.
#[test]
fn a_panicking_drop_of_a_failed_nodes_value_loses_nothing_kept() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = World::with_pool(ThreadPool::new(threads).expect("pool"));
        world.set_executor(executor);
        world.insert(Drained::default());
        let fail = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        fn good(out: Append<'_, Loud>) {
            out.push(Loud(1, false));
        }
        fn commit(buffer: &mut AppendBuffer<Loud>, drained: &mut Drained) {
            drained.0.push(buffer.drain().map(|loud| loud.0).collect());
        }
        world.add_system(good.commit(commit));
        let failing = fail.clone();
        world.add_system(
            NodeBuilder::new("bad").system(move |out: Append<'_, Loud>| {
                if failing.load(std::sync::atomic::Ordering::SeqCst) {
                    out.push(Loud(2, true));
                    out.push(Loud(4, false));
                    panic!("{PLANNED}");
                }
                out.push(Loud(3, false));
            }),
        );
        assert!(world.run_iteration().is_err(), "{executor:?} x{threads}");
        assert!(world.get::<Drained>().unwrap().0.is_empty());
        fail.store(false, std::sync::atomic::Ordering::SeqCst);
        world.run_iteration().expect("runs");
        assert_eq!(
            world.get::<Drained>().unwrap().0,
            [vec![1, 1, 3]],
            "{executor:?} x{threads}"
        );
    }
}
