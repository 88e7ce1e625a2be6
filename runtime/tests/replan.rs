//! Issue 9, "timing survives replans" and "ambiguity warnings delivered":
//! after an iteration that swapped in a new plan, `timings()` still has one
//! entry per node of `plan()`; SL0008 warnings reach `tracing` once per plan.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice::{
    AmbiguityLevel, Commands, ExecutorKind, IterationError, NodeBuilder, NodeIndex, Plan,
    PlanOptions, World,
};

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
/// Gated by one node only.
#[derive(Debug, Default)]
struct Score(u32);
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

/// An inline frame leaves the two scheduling factories out unless the
/// registrations moved at the boundary before it (then they plan and
/// compile the next plan): their timings say they ran only in the frames
/// after `spawner`'s registrations landed, and those frames grew the plan.
#[test]
fn inline_frames_run_the_scheduling_factories_only_after_registrations() {
    let mut world = growing_world(ExecutorKind::Serial);
    // `spawner` registers in iterations 0 and 2; each lands at that
    // iteration's boundary, and the next iteration plans it.
    let factories_ran = [false, true, false, true, false, false];
    for (iteration, &expected) in factories_ran.iter().enumerate() {
        world.run_iteration().unwrap();
        for (builtin, timing) in world.timings()[..BUILTIN].iter().enumerate() {
            assert_eq!(
                timing.ran, expected,
                "iteration {iteration}: scheduling factory {builtin}"
            );
        }
    }
    let plan = world.plan().unwrap();
    assert!(
        index_of(&plan, "late_c").is_some(),
        "every registration was planned"
    );
    assert!(world.timings()[index_of(&plan, "late_c").unwrap().index()].ran);
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

/// Counts `tracing` warnings whose `code` field is `SL0008`, and keeps their
/// messages. Spans and other events are disabled.
#[derive(Clone, Default)]
struct AmbiguityWarnings {
    count: Arc<AtomicUsize>,
    messages: Arc<Mutex<Vec<String>>>,
}

/// Collects an event's `code` and `message` fields.
#[derive(Default)]
struct Fields {
    code: Option<String>,
    message: String,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "code" {
            self.code = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for AmbiguityWarnings {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.is_event() && *metadata.level() == tracing::Level::WARN
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.code.as_deref() == Some("SL0008") {
            self.count.fetch_add(1, Ordering::Relaxed);
            self.messages.lock().unwrap().push(fields.message);
        }
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// `left` and `right` both gate `Hp` and nothing orders them: SL0008.
fn ambiguous_world(executor: ExecutorKind, ambiguity: AmbiguityLevel) -> World {
    let mut world = World::new();
    world.set_executor(executor);
    world.set_plan_options(PlanOptions {
        ambiguity,
        ..Default::default()
    });
    world.insert(Hp(0));
    world.insert(Armor(0));
    world.insert(Frame(0));
    world.add_system(NodeBuilder::new("left").system(|hp: &mut Hp| hp.0 += 1));
    world.add_system(NodeBuilder::new("right").system(|hp: &mut Hp| hp.0 *= 2));
    world.add_system(NodeBuilder::new("spawner").system(
        |commands: Commands<'_>, frame: &mut Frame| {
            if frame.0 == 3 {
                commands.add_system(NodeBuilder::new("quiet").system(|_: &Armor| {}));
            }
            frame.0 += 1;
        },
    ));
    world
}

/// SL0008 reaches `tracing::warn!` once per installed plan: not again while the
/// plan factory is skipped, again after a replan that keeps the ambiguity.
#[test]
fn ambiguity_warns_once_per_plan() {
    for executor in EXECUTORS {
        ambiguity_warns_once_per_plan_on(executor);
    }
}

fn ambiguity_warns_once_per_plan_on(executor: ExecutorKind) {
    let warnings = AmbiguityWarnings::default();
    let count = || warnings.count.load(Ordering::Relaxed);
    tracing::subscriber::with_default(warnings.clone(), || {
        let mut world = ambiguous_world(executor, AmbiguityLevel::Warn);
        for iteration in 0..4 {
            world.run_iteration().unwrap();
            assert_eq!(
                count(),
                1,
                "{executor:?}, iteration {iteration}: first plan"
            );
        }
        let plan = world.plan().unwrap();
        assert!(plan.diagnostics().iter().any(|d| d.code == "SL0008"));
        assert!(index_of(&plan, "quiet").is_none());
        {
            let messages = warnings.messages.lock().unwrap();
            assert!(
                messages[0].contains("left") && messages[0].contains("right"),
                "the warning names both nodes: {messages:?}"
            );
        }

        // Iteration 3 registered `quiet`: the plan factory replans in
        // iteration 4, and the ambiguity is still there.
        for iteration in 4..9 {
            world.run_iteration().unwrap();
            assert_eq!(count(), 2, "{executor:?}, iteration {iteration}: replanned");
        }
        assert!(index_of(&world.plan().unwrap(), "quiet").is_some());

        // A replan between iterations warns again, once.
        // (`scorer` conflicts with nothing: the plan has the one ambiguity.)
        world.insert(Score(0));
        world.add_system(NodeBuilder::new("scorer").system(|score: &mut Score| score.0 += 1));
        for iteration in 9..12 {
            world.run_iteration().unwrap();
            assert_eq!(
                count(),
                3,
                "{executor:?}, iteration {iteration}: add_system"
            );
        }
        assert_eq!(world.get::<Score>().unwrap().0, 3);
        let plan = world.plan().unwrap();
        let ambiguities = plan.diagnostics().iter().filter(|d| d.code == "SL0008");
        assert_eq!(ambiguities.count(), 1, "{:?}", plan.diagnostics());
    });
}

/// No warning when the plan has no ambiguity, or when ambiguities are ignored.
#[test]
fn no_warning_without_an_ambiguity_or_when_ignored() {
    let warnings = AmbiguityWarnings::default();
    tracing::subscriber::with_default(warnings.clone(), || {
        let mut ignored = ambiguous_world(ExecutorKind::Serial, AmbiguityLevel::Ignore);
        for _ in 0..6 {
            ignored.run_iteration().unwrap();
        }
        assert!(ignored.plan().unwrap().diagnostics().is_empty());

        let mut clean = World::new();
        clean.set_plan_options(PlanOptions {
            ambiguity: AmbiguityLevel::Warn,
            ..Default::default()
        });
        clean.insert(Hp(0));
        clean.add_system(NodeBuilder::new("left").system(|hp: &mut Hp| hp.0 += 1));
        clean.add_system(
            NodeBuilder::new("right")
                .after("left")
                .system(|hp: &mut Hp| hp.0 *= 2),
        );
        for _ in 0..3 {
            clean.run_iteration().unwrap();
        }
        assert!(clean.plan().unwrap().diagnostics().is_empty());
        assert_eq!(clean.get::<Hp>().unwrap().0, 14);
    });
    assert_eq!(warnings.count.load(Ordering::Relaxed), 0);
}

#[derive(Debug, Default)]
struct Points(u64);

#[derive(Debug)]
struct Shield;

/// A command that only inserts a service does not replan: the plan is the
/// same object frame after frame.
#[test]
fn inserting_through_commands_does_not_replan() {
    let mut world = World::new();
    world.insert(Points::default());
    world.add_system(|score: &Points, commands: Commands<'_>| {
        commands.insert(Points(score.0 + 1));
    });
    world.run_iteration().unwrap();
    let first = world.plan().unwrap();
    for _ in 0..5 {
        world.run_iteration().unwrap();
        assert!(Arc::ptr_eq(&first, &world.plan().unwrap()), "replanned");
    }
    assert_eq!(world.get::<Points>().unwrap().0, 6);
}

/// A node registered through commands that needs a missing service is
/// reported once; inserting the service lets the next iteration plan it.
#[test]
fn a_missing_service_is_reported_then_recovered() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let counter = Arc::clone(&ran);
    let registered = std::sync::atomic::AtomicBool::new(false);
    world.add_system(move |commands: Commands<'_>| {
        if registered.swap(true, Ordering::SeqCst) {
            return;
        }
        let counter = Arc::clone(&counter);
        commands.add_system(
            sluice::NodeBuilder::new("holds_shield")
                .reads::<Shield>()
                .run(move |_| {
                    counter.fetch_add(1, Ordering::SeqCst);
                }),
        );
    });
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    let error = world.run_iteration().unwrap_err();
    assert!(
        matches!(error, sluice::IterationError::MissingServices(_)),
        "{error}"
    );
    world.insert(Shield);
    world.run_iteration().unwrap();
    assert!(
        ran.load(Ordering::SeqCst) >= 1,
        "the node ran once its service was there"
    );
}

/// `&Commands` in a signature is refused with the fix, not as an unknown
/// service.
#[test]
fn commands_by_reference_says_to_take_them_by_value() {
    let mut world = World::new();
    world.add_system(NodeBuilder::new("records").system(|_: &Commands<'static>| {}));
    let error = world.run_iteration().unwrap_err();
    assert!(
        error.to_string().contains("take `Commands<'_>` by value"),
        "{error}"
    );
}

/// The order the loggers ran in, one entry per run.
#[derive(Debug, Default)]
struct RunLog(Vec<&'static str>);

/// Issue 20: a group added between iterations re-sorts the plan, and its
/// order applies from the next iteration. `first` and `second` share a
/// lane, so each iteration runs them in plan order on every executor; an
/// empty group declared after the first iteration (after `second`, before
/// `first`) reverses that order from the next iteration on, and a second
/// group (`Tail`, after `first`) moves `tail` behind it one iteration later.
#[test]
fn a_group_added_between_iterations_reorders_the_next() {
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = World::new();
        world.set_executor(executor);
        world.insert(RunLog::default());
        world.add_system(NodeBuilder::new("tail").system(|log: &mut RunLog| log.0.push("tail")));
        world.add_system(NodeBuilder::new("first").system(|log: &mut RunLog| log.0.push("first")));
        world
            .add_system(NodeBuilder::new("second").system(|log: &mut RunLog| log.0.push("second")));
        let take = |world: &mut World| {
            world.run_iteration().unwrap();
            std::mem::take(&mut world.get_mut::<RunLog>().unwrap().0)
        };
        assert_eq!(
            take(&mut world),
            ["tail", "first", "second"],
            "{executor:?}"
        );
        world.add_group(sluice::Group::new("Swap").after("second").before("first"));
        assert_eq!(
            take(&mut world),
            ["tail", "second", "first"],
            "{executor:?}"
        );
        world.add_group(sluice::Group::new("Tail").after("first").before("tail"));
        assert_eq!(
            take(&mut world),
            ["second", "first", "tail"],
            "{executor:?}"
        );
        assert_eq!(
            take(&mut world),
            ["second", "first", "tail"],
            "{executor:?}"
        );
    }
}
