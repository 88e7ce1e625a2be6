//! Issue 9, "timing survives replans": after an iteration that swapped in a
//! new plan, `timings()` still has one entry per node of `plan()`.

use std::sync::Arc;
use std::time::Duration;

use sluice::{Commands, ExecutorKind, IterationError, NodeBuilder, NodeIndex, Plan, World};

/// Every scenario runs on both executors.
const EXECUTORS: [ExecutorKind; 2] = [ExecutorKind::Serial, ExecutorKind::Parallel];

/// The two scheduling factories every world registers first.
const BUILTIN: usize = 2;

#[derive(Debug, Default)]
struct Hp(i32);
#[derive(Debug, Default)]
struct Armor(i32);
/// How many iterations the spawner has seen.
#[derive(Debug, Default)]
struct Frame(u32);
/// `boom` panics while this is set.
#[derive(Debug, Default)]
struct Fuse(bool);

/// How long `slow` sleeps: long enough that its measured duration is
/// recognisable, and that a parallel run's plan factory (a root) has long
/// finished before `boom` (after `slow`) panics.
const SLOW: Duration = Duration::from_millis(10);

/// The node of `plan` named `name`.
fn index_of(plan: &Plan, name: &str) -> Option<NodeIndex> {
    plan.order().find(|&node| plan.node_name(node) == name)
}

/// The current plan, after checking that `timings()` has exactly one entry
/// per node of it and that every node of it can index them.
fn plan_and_timings_agree(world: &mut World, context: &str) -> Arc<Plan> {
    let plan = world.plan().unwrap();
    let timings = world.timings();
    assert_eq!(timings.len(), plan.len(), "{context}: one timing per node");
    for node in plan.order() {
        let timing = timings[node.index()];
        assert!(
            timing.ran || timing == Default::default(),
            "{context}: `{}` did not run but has a measurement",
            plan.node_name(node)
        );
    }
    plan
}

/// Asserts that exactly the user nodes of `plan` below index `ran_below` ran
/// (every user node is a system that runs every iteration), and that `slow`
/// kept its measured duration.
fn assert_ran(world: &World, plan: &Plan, ran_below: usize, context: &str) {
    let timings = world.timings();
    for node in plan.order().filter(|node| node.index() >= BUILTIN) {
        assert_eq!(
            timings[node.index()].ran,
            node.index() < ran_below,
            "{context}: `{}`",
            plan.node_name(node)
        );
    }
    let slow = index_of(plan, "slow").expect("`slow` is registered first");
    assert!(
        timings[slow.index()].duration >= SLOW,
        "{context}: slow's measurement was lost: {:?}",
        timings[slow.index()]
    );
}

/// A timed world with `spawner` (registers `late_a` in its first iteration,
/// `late_b` and `late_c` in its third), `slow`, and `boom` (panics while
/// [`Fuse`] is set).
fn growing_world(executor: ExecutorKind) -> World {
    let mut world = World::new();
    world.set_executor(executor);
    world.enable_timing(true);
    world.insert(Hp(0));
    world.insert(Frame(0));
    world.insert(Fuse(false));
    world.add_system(NodeBuilder::new("slow").system(|_: &Hp| std::thread::sleep(SLOW)));
    world.add_system(NodeBuilder::new("spawner").system(
        |commands: Commands<'_>, frame: &mut Frame| {
            match frame.0 {
                0 => commands.add_system(NodeBuilder::new("late_a").system(|hp: &mut Hp| {
                    hp.0 += 1;
                })),
                2 => {
                    commands.add_system(NodeBuilder::new("late_b").system(|_: &Hp| {}));
                    commands.add_system(NodeBuilder::new("late_c").system(|_: &Frame| {}));
                }
                _ => {}
            }
            frame.0 += 1;
        },
    ));
    world.add_system(
        NodeBuilder::new("boom")
            .after("slow")
            .system(|fuse: &Fuse| assert!(!fuse.0, "boom")),
    );
    world
}

/// User nodes of [`growing_world`] before anything is spawned.
const GROWING_USER_NODES: usize = 3;

/// Nodes registered through `Commands` are planned by the plan factory and
/// installed at a boundary: `timings()` grows with the plan, and what ran keeps
/// its measurement.
#[test]
fn timings_follow_plans_grown_by_commands() {
    for executor in EXECUTORS {
        timings_follow_plans_grown_by_commands_on(executor);
    }
}

fn timings_follow_plans_grown_by_commands_on(executor: ExecutorKind) {
    let mut world = growing_world(executor);
    let base = BUILTIN + GROWING_USER_NODES;
    // (plan length after the iteration, nodes that ran in it): the plan
    // factory plans what the ledger registered one iteration later, and the
    // boundary of that iteration installs it.
    let expected = [
        (base, base),
        (base + 1, base),
        (base + 1, base + 1),
        (base + 3, base + 1),
        (base + 3, base + 3),
        (base + 3, base + 3),
    ];
    let mut before = world.plan().unwrap();
    for (iteration, &(len, ran)) in expected.iter().enumerate() {
        let context = format!("{executor:?}, iteration {iteration}");
        world.run_iteration().unwrap();
        let plan = plan_and_timings_agree(&mut world, &context);
        assert_eq!(plan.len(), len, "{context}: plan length");
        if len != before.len() {
            assert!(
                !Arc::ptr_eq(&plan, &before),
                "{context}: a new plan was installed at the boundary"
            );
        }
        assert_ran(&world, &plan, ran, &context);
        before = plan;
    }
    assert_eq!(
        world.get::<Hp>().unwrap().0,
        4,
        "late_a ran from iteration 2"
    );
    let late_c = index_of(&before, "late_c").unwrap();
    assert!(world.timings()[late_c.index()].ran);
}

/// `add_system` between iterations replans before the next one (here through
/// `plan()`, twice): `timings()` follows, keeping the last iteration's values.
#[test]
fn timings_follow_plans_grown_between_iterations() {
    for executor in EXECUTORS {
        timings_follow_plans_grown_between_iterations_on(executor);
    }
}

fn timings_follow_plans_grown_between_iterations_on(executor: ExecutorKind) {
    let mut world = World::new();
    world.set_executor(executor);
    world.enable_timing(true);
    world.insert(Hp(0));
    world.insert(Armor(0));
    world.add_system(NodeBuilder::new("slow").system(|_: &Hp| std::thread::sleep(SLOW)));
    world.add_system(NodeBuilder::new("regen").system(|hp: &mut Hp| hp.0 += 1));
    world.run_iteration().unwrap();
    let ran = BUILTIN + 2;
    let plan = plan_and_timings_agree(&mut world, "first plan");
    assert_ran(&world, &plan, ran, "first plan");

    // Two replans before the next iteration: the second must keep what the
    // first kept, although the plan it replaces never ran.
    world.add_system(NodeBuilder::new("armor").system(|armor: &mut Armor| armor.0 += 1));
    let plan = plan_and_timings_agree(&mut world, "one replan");
    assert_eq!(plan.len(), ran + 1);
    assert_ran(&world, &plan, ran, "one replan");
    world.add_system(NodeBuilder::new("report").system(|_: &Hp, _: &Armor| {}));
    let plan = plan_and_timings_agree(&mut world, "two replans");
    assert_eq!(plan.len(), ran + 2);
    assert_ran(&world, &plan, ran, "two replans");

    for iteration in 0..3 {
        let context = format!("{executor:?}, iteration {iteration} after the replans");
        world.run_iteration().unwrap();
        let plan = plan_and_timings_agree(&mut world, &context);
        assert_ran(&world, &plan, plan.len(), &context);
    }
    assert_eq!(world.get::<Hp>().unwrap().0, 4);
    assert_eq!(world.get::<Armor>().unwrap().0, 3);
}

/// A node's panic does not stop the boundary from installing the plan the
/// factories built: `timings()` follows it, with the failed run's values.
#[test]
fn timings_follow_a_plan_installed_by_a_failed_iteration() {
    for executor in EXECUTORS {
        timings_follow_a_plan_installed_by_a_failed_iteration_on(executor);
    }
}

fn timings_follow_a_plan_installed_by_a_failed_iteration_on(executor: ExecutorKind) {
    let mut world = growing_world(executor);
    let base = BUILTIN + GROWING_USER_NODES;
    world.run_iteration().unwrap(); // spawner registers late_a
    let plan = plan_and_timings_agree(&mut world, "before the failure");
    assert_eq!(plan.len(), base);

    // The plan factory plans late_a in this iteration; boom panics after
    // slow, long after the factories (which precede it in plan order, and
    // are roots of the graph) finished, so the boundary installs the plan.
    world.get_mut::<Fuse>().unwrap().0 = true;
    let error = world.run_iteration().unwrap_err();
    let IterationError::NodePanicked(panic) = &error else {
        panic!("expected boom's panic, got {error}");
    };
    assert!(error.to_string().contains("boom"), "{panic:?}");
    let context = format!("{executor:?}, after the failed iteration");
    let plan = plan_and_timings_agree(&mut world, &context);
    assert_eq!(plan.len(), base + 1, "{context}: late_a was planned");
    assert_ran(&world, &plan, base, &context);

    // The next iteration runs normally; spawner (which ran in the failed
    // one) registers late_b and late_c in it, and the one after installs
    // them.
    world.get_mut::<Fuse>().unwrap().0 = false;
    let expected = [
        (base + 1, base + 1),
        (base + 3, base + 1),
        (base + 3, base + 3),
    ];
    for (iteration, &(len, ran)) in expected.iter().enumerate() {
        let context = format!("{executor:?}, iteration {iteration} after the failure");
        world.run_iteration().unwrap();
        let plan = plan_and_timings_agree(&mut world, &context);
        assert_eq!(plan.len(), len, "{context}: plan length");
        assert_ran(&world, &plan, ran, &context);
    }
}
