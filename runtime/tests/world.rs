//! The world's registration and serial iteration: signatures become
//! declarations, factories skip when their inputs did not move, `Next<T>`
//! values cross the boundary, panics are reported by node name.

use std::time::Duration;

use sluice::exec::SystemTiming;
use sluice::{FrameTime, IterationError, Next, NodeBuilder, Out, World};

#[derive(Debug, Default, PartialEq)]
struct Hp(i32);
#[derive(Debug, Default, PartialEq)]
struct Armor(i32);
#[derive(Debug, Default, PartialEq)]
struct Log(Vec<&'static str>);

fn regenerate(armor: &Armor, hp: &mut Hp, log: &mut Log) {
    hp.0 += armor.0;
    log.0.push("regenerate");
}

fn report(hp: &Hp, log: &mut Log) {
    log.0.push(if hp.0 > 10 { "healthy" } else { "hurt" });
}

#[test]
fn functions_declare_their_access_and_run_in_plan_order() {
    let mut world = World::new();
    world.insert(Hp(9));
    world.insert(Armor(2));
    world.insert(Log::default());
    world.add_system(report);
    world.add_system(regenerate);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(11)));
    assert_eq!(world.get::<Log>().unwrap().0, ["hurt", "regenerate"]);
    let plan = world.plan().unwrap();
    let names: Vec<_> = plan
        .order()
        .map(|n| plan.node_name(n).to_owned())
        .filter(|name| !name.starts_with("sluice::"))
        .collect();
    assert_eq!(
        names,
        ["report", "regenerate"],
        "the world's own factories aside"
    );
    assert_eq!(plan.stage_count(), 2, "both gate Log, so they are ordered");
}

#[derive(Debug, PartialEq)]
struct Terrain(u32);
#[derive(Debug, PartialEq)]
struct Mesh(u32);
#[derive(Debug, Default)]
struct Builds(u32);

#[test]
fn factories_run_only_when_an_input_moved() {
    let mut world = World::new();
    world.insert(Terrain(1));
    world.insert(Builds::default());
    world.add_factory(NodeBuilder::new("mesher").gates::<Builds>().factory(
        |terrain: &Terrain, builds: &mut Builds| {
            builds.0 += 1;
            Mesh(terrain.0 * 10)
        },
    ));
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(10)));
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Builds>().unwrap().0, 1, "inputs did not move");
    world.get_mut::<Terrain>().unwrap().0 = 2;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(20)));
    assert_eq!(world.get::<Builds>().unwrap().0, 2);
}

#[derive(Debug, PartialEq)]
struct Level(u32);
#[derive(Debug, Default)]
struct Seen(Vec<u32>);

#[test]
fn next_values_are_swapped_in_at_the_boundary() {
    let mut world = World::new();
    world.insert(Level(0));
    world.insert(Seen::default());
    world.add_system(NodeBuilder::new("advance").system(
        |level: &Level, seen: &mut Seen, mut next: Next<'_, Level>| {
            seen.0.push(level.0);
            next.set(Level(level.0 + 1));
        },
    ));
    world.add_system(
        NodeBuilder::new("reader")
            .after("advance")
            .system(|level: &Level, seen: &mut Seen| seen.0.push(level.0 + 100)),
    );
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    assert_eq!(world.get::<Seen>().unwrap().0, [0, 100, 1, 101, 2, 102]);
    assert_eq!(world.get::<Level>(), Some(&Level(3)));
}

#[test]
fn out_parameters_produce_before_every_consumer() {
    let mut world = World::new();
    world.insert(Terrain(3));
    world.insert(Seen::default());
    // Registered first, but consumes what the factory below produces.
    world.add_system(
        NodeBuilder::new("draw").system(|mesh: &Mesh, seen: &mut Seen| seen.0.push(mesh.0)),
    );
    world.add_system(
        NodeBuilder::new("mesher")
            .system(|terrain: &Terrain, mut mesh: Out<'_, Mesh>| mesh.set(Mesh(terrain.0 + 1))),
    );
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Seen>().unwrap().0, [4]);
}

#[test]
fn the_context_hands_out_only_what_was_declared() {
    let mut world = World::new();
    world.insert(Hp(1));
    world.insert(Armor(5));
    world.add_system(NodeBuilder::new("sneaky").reads::<Hp>().run(|cx| {
        let _ = cx.read::<Armor>();
    }));
    let error = world.run_iteration().unwrap_err();
    let IterationError::NodePanicked(panic) = &error else {
        panic!("expected a node panic, got {error}");
    };
    assert_eq!(panic.node(), "sneaky");
    assert!(
        panic.message().unwrap().contains("did not declare"),
        "{error}"
    );
}

#[test]
fn a_panicking_node_is_named_and_the_next_iteration_runs() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.add_system(NodeBuilder::new("fragile").system(|hp: &mut Hp| {
        hp.0 += 1;
        assert!(hp.0 != 2, "hp reached two");
    }));
    world.run_iteration().unwrap();
    let error = world.run_iteration().unwrap_err();
    assert_eq!(error.to_string(), "node `fragile` panicked: hp reached two");
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(3)));
}

#[test]
fn update_advances_the_frame_clock() {
    let mut world = World::new();
    world.update(Duration::from_millis(16)).unwrap();
    world.update(Duration::from_millis(17)).unwrap();
    let time = world.get::<FrameTime>().unwrap();
    assert_eq!(time.frame, 1);
    assert_eq!(time.elapsed, Duration::from_millis(33));
}

#[test]
fn a_plan_error_runs_nothing() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.add_system(
        NodeBuilder::new("a")
            .after("ghost")
            .system(|hp: &mut Hp| hp.0 += 1),
    );
    let error = world.run_iteration().unwrap_err();
    assert!(matches!(error, IterationError::Plan(_)));
    assert!(error.to_string().contains("SL0002"), "{error}");
    assert_eq!(world.get::<Hp>(), Some(&Hp(0)));
}

#[derive(Debug, Default)]
struct Paused(bool);

fn not_paused(paused: &Paused) -> bool {
    !paused.0
}

#[test]
fn run_conditions_skip_the_body_and_keep_the_factory_cursor() {
    let mut world = World::new();
    world.insert(Paused(false));
    world.insert(Hp(0));
    world.insert(Terrain(1));
    world.insert(Builds::default());
    world.add_system(
        NodeBuilder::new("tick")
            .system(|hp: &mut Hp| hp.0 += 1)
            .run_if(not_paused),
    );
    world.add_factory(
        NodeBuilder::new("mesher")
            .gates::<Builds>()
            .factory(|terrain: &Terrain, builds: &mut Builds| {
                builds.0 += 1;
                Mesh(terrain.0)
            })
            .run_if(not_paused),
    );
    world.run_iteration().unwrap();
    world.get_mut::<Paused>().unwrap().0 = true;
    world.get_mut::<Terrain>().unwrap().0 = 7;
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Hp>(),
        Some(&Hp(1)),
        "paused: the body was skipped"
    );
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(1)));
    world.get_mut::<Paused>().unwrap().0 = false;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(2)));
    assert_eq!(
        world.get::<Mesh>(),
        Some(&Mesh(7)),
        "the skipped runs did not advance the factory's cursor past Terrain's change"
    );
    assert_eq!(world.get::<Builds>().unwrap().0, 2);
}

#[derive(Debug, Default)]
struct Spawned(u32);

#[test]
fn nodes_registered_by_commands_join_the_plan_of_a_later_iteration() {
    use sluice::Commands;
    let mut world = World::new();
    world.insert(Spawned::default());
    world.insert(Hp(0));
    world.add_system(NodeBuilder::new("spawner").system(
        |commands: Commands<'_>, spawned: &mut Spawned| {
            if spawned.0 == 0 {
                commands.add_system(NodeBuilder::new("late").system(|hp: &mut Hp| hp.0 += 1));
            }
            spawned.0 += 1;
        },
    ));
    let watch = world.plan_watch();
    world.run_iteration().unwrap(); // records the command; lands at the boundary
    let first = watch.load().unwrap();
    assert!(!(0..first.len()).any(|n| first.node_name(sluice::NodeIndex(n as u32)) == "late"));
    world.run_iteration().unwrap(); // the plan factory plans `late`
    assert_eq!(world.get::<Hp>(), Some(&Hp(0)));
    world.run_iteration().unwrap(); // `late` runs
    assert_eq!(world.get::<Hp>(), Some(&Hp(1)));
    let current = watch.load().unwrap();
    assert!((0..current.len()).any(|n| current.node_name(sluice::NodeIndex(n as u32)) == "late"));
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(2)));
}

#[test]
fn serial_and_parallel_executors_agree() {
    use sluice::ExecutorKind;
    fn build(executor: ExecutorKind) -> World {
        let mut world = World::new();
        world.set_executor(executor);
        world.insert(Hp(1));
        world.insert(Armor(1));
        world.insert(Log::default());
        world.add_system(regenerate);
        world.add_system(report);
        world.add_system(NodeBuilder::new("double").system(|hp: &mut Hp| hp.0 *= 2));
        world
    }
    let mut serial = build(ExecutorKind::Serial);
    let mut parallel = build(ExecutorKind::Parallel);
    for _ in 0..if cfg!(miri) { 4 } else { 20 } {
        serial.run_iteration().unwrap();
        parallel.run_iteration().unwrap();
    }
    assert_eq!(serial.get::<Hp>(), parallel.get::<Hp>());
    assert_eq!(serial.get::<Log>(), parallel.get::<Log>());
}

#[test]
fn services_nothing_provides_are_all_reported_before_anything_runs() {
    let mut world = World::new();
    world.insert(Hp(1));
    world.add_system(NodeBuilder::new("a").system(|_: &Armor, hp: &mut Hp| hp.0 += 1));
    world.add_system(NodeBuilder::new("b").system(|_: &mut Log| {}));
    world.add_system(NodeBuilder::new("c").system(|_: &Mesh| {}));
    world.add_factory(NodeBuilder::new("mesher").factory(|hp: &Hp| Mesh(hp.0 as u32)));
    let error = world.run_iteration().unwrap_err();
    let IterationError::MissingServices(missing) = &error else {
        panic!("expected missing services, got {error}");
    };
    let found: Vec<(&str, bool)> = missing.iter().map(|m| (m.node.as_str(), m.gated)).collect();
    assert_eq!(
        found,
        [("a", false), ("b", true)],
        "Mesh is produced, so `c` is fine"
    );
    assert!(
        error.to_string().contains("node `a` reads `world::Armor`"),
        "{error}"
    );
    assert_eq!(world.get::<Hp>(), Some(&Hp(1)), "nothing ran");
    world.insert(Armor(0));
    world.insert(Log::default());
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(2)));
}

#[test]
fn timings_are_readable_after_every_iteration_including_replans() {
    use sluice::Commands;
    let mut world = World::new();
    world.insert(Hp(0));
    world.enable_timing(true);
    let tick = world.add_system(NodeBuilder::new("tick").system(|hp: &mut Hp| hp.0 += 1));
    world.add_system(
        NodeBuilder::new("register").system(|commands: Commands<'_>, hp: &Hp| {
            if hp.0 == 1 {
                commands.add_system(NodeBuilder::new("late").system(|_: &Hp| {}));
            }
        }),
    );
    for iteration in 0..5 {
        world.run_iteration().unwrap();
        let timing = world.timings()[tick.index()];
        assert!(timing.ran, "iteration {iteration}: tick's timing was lost");
    }
    world.enable_timing(false);
    assert!(
        world.timings().iter().all(|t| !t.ran),
        "turning timing off clears it"
    );
}

fn whole_world(_world: &mut World) {}

/// `timings()` speaks only for the plan's own nodes: a node that left the
/// plan (removed, disabled) reads as the default, not as its last run, and
/// a whole-world system of the variable plan never reads as run in the
/// fixed plan's timings.
#[test]
fn timings_of_a_node_outside_the_plan_read_as_the_default() {
    let mut world = World::new();
    world.enable_timing(true);
    let removed = world.add_system(NodeBuilder::new("removed").system(|| {}));
    let disabled = world.add_system(NodeBuilder::new("disabled").system(|| {}));
    let stays = world.add_system(NodeBuilder::new("stays").system(|| {}));
    let whole = world.add_system(whole_world);
    world.run_iteration().unwrap();
    for node in [removed, disabled, stays, whole] {
        assert!(world.timings()[node.index()].ran, "{node:?} ran");
    }
    assert!(
        !world.fixed_timings()[whole.index()].ran,
        "the whole-world system is not in the fixed plan"
    );

    world.remove_node(removed).unwrap();
    world.set_enabled(disabled, false);
    // Replanned between iterations: the left nodes read as the default at
    // once, before anything runs.
    world.plan().unwrap();
    assert_eq!(world.timings()[removed.index()], SystemTiming::default());
    assert_eq!(world.timings()[disabled.index()], SystemTiming::default());
    assert!(
        world.timings()[stays.index()].ran,
        "kept until it runs again"
    );
    world.run_iteration().unwrap();
    assert_eq!(world.timings()[removed.index()], SystemTiming::default());
    assert_eq!(world.timings()[disabled.index()], SystemTiming::default());
    assert!(world.timings()[stays.index()].ran);

    // Back in the plan: it reads as not run until it runs again.
    world.set_enabled(disabled, true);
    world.plan().unwrap();
    assert_eq!(world.timings()[disabled.index()], SystemTiming::default());
    world.run_iteration().unwrap();
    assert!(world.timings()[disabled.index()].ran);
}
