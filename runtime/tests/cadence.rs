//! The fixed-timestep cadence, schedules, and organised worlds running.

use std::time::Duration;

use sluice::{
    Cadence, ExecutorKind, FixedTime, Group, IterationError, NodeBuilder, Phase, Schedule, World,
};

#[derive(Debug, Default, Clone, PartialEq)]
struct Physics {
    position: f64,
    velocity: f64,
    steps: u32,
}

#[derive(Debug, Default)]
struct Frames(Vec<(u32, u32, f64)>);

fn integrate(time: &FixedTime, physics: &mut Physics) {
    physics.velocity -= 9.81 * time.step.as_secs_f64();
    physics.position += physics.velocity * time.step.as_secs_f64();
    physics.steps += 1;
}

fn record(time: &FixedTime, physics: &Physics, frames: &mut Frames) {
    frames.0.push((time.steps, physics.steps, time.alpha));
}

fn world(executor: ExecutorKind) -> World {
    let mut world = World::new();
    world.set_executor(executor);
    world.set_fixed_timestep(Duration::from_nanos(1_000_000_000 / 60));
    world.set_max_fixed_steps(5);
    world.insert(Physics::default());
    world.insert(Frames::default());
    world.add_system(
        NodeBuilder::new("integrate")
            .cadence(Cadence::Fixed)
            .system(integrate),
    );
    world.add_system(record);
    world
}

/// With a 1/60 s step, deltas of 5, 16, 40 and 250 ms run the fixed plan
/// 0, 1, 2 and (capped) 5 times, before the variable plan of the same
/// update; the results equal running the step that many times serially.
#[test]
fn whole_steps_run_before_the_variable_plan() {
    let step = 1.0 / 60.0;
    for executor in [
        ExecutorKind::Serial,
        ExecutorKind::Parallel,
        ExecutorKind::Adaptive,
    ] {
        let mut world = world(executor);
        let mut expected = Physics::default();
        let mut accumulated = 0.0f64;
        let mut total = 0;
        for (delta, steps) in [(5, 0), (16, 1), (40, 2), (250, 5)] {
            world.update(Duration::from_millis(delta)).unwrap();
            accumulated += delta as f64 / 1000.0;
            let whole = (accumulated / step).floor();
            accumulated -= whole * step;
            for _ in 0..steps {
                let time = FixedTime {
                    step: Duration::from_nanos(1_000_000_000 / 60),
                    ..FixedTime::default()
                };
                integrate(&time, &mut expected);
            }
            total += steps;
            let frames = &world.get::<Frames>().unwrap().0;
            let &(ran, seen, alpha) = frames.last().unwrap();
            assert_eq!(ran, steps, "{executor:?}, delta {delta} ms");
            assert_eq!(seen, total, "the variable plan runs after the fixed steps");
            let expected_alpha = if steps == 5 {
                None
            } else {
                Some(accumulated / step)
            };
            if let Some(expected_alpha) = expected_alpha {
                assert!(
                    (alpha - expected_alpha).abs() < 1e-6,
                    "{alpha} vs {expected_alpha}"
                );
            } else {
                // Capped: the dropped steps took their time with them.
                assert!((0.0..1.0).contains(&alpha));
                accumulated = alpha * step;
            }
            assert_eq!(world.get::<Physics>().unwrap(), &expected);
        }
        let time = world.get::<FixedTime>().unwrap();
        assert!(time.dropped > 0, "the cap was hit and reported");
        assert_eq!(time.total, u64::from(total));
    }
}

#[test]
fn startup_runs_once_before_the_first_update_and_named_schedules_on_demand() {
    #[derive(Default)]
    struct Log(Vec<&'static str>);
    let mut world = World::new();
    world.insert(Log::default());
    world.add_system(NodeBuilder::new("frame").system(|log: &mut Log| log.0.push("frame")));
    world.add_system(
        NodeBuilder::new("boot")
            .in_schedule(Schedule::Startup)
            .system(|log: &mut Log| log.0.push("boot")),
    );
    world.add_system(
        NodeBuilder::new("save")
            .in_schedule(Schedule::named("Save"))
            .system(|log: &mut Log| log.0.push("save")),
    );
    world.update(Duration::from_millis(16)).unwrap();
    world.update(Duration::from_millis(16)).unwrap();
    world.run_schedule("Save").unwrap();
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["boot", "frame", "frame", "save", "frame"]
    );
    assert!(matches!(
        world.run_schedule("Load"),
        Err(IterationError::UnknownSchedule(name)) if name == "Load"
    ));
}

/// Hundreds of nodes on both sides of a phase and of two groups run in
/// order through barriers, on every executor.
#[test]
fn organised_worlds_run_every_node_once_in_order() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    for executor in [ExecutorKind::Serial, ExecutorKind::Parallel] {
        let mut world = World::new();
        world.set_executor(executor);
        world.add_group(Group::new("Early"));
        world.add_group(Group::new("Late").after("Early"));
        let clock = Arc::new(AtomicU32::new(0));
        let seen: Arc<Vec<AtomicU32>> = Arc::new((0..400).map(|_| AtomicU32::new(0)).collect());
        for i in 0..400usize {
            let (clock, seen) = (Arc::clone(&clock), Arc::clone(&seen));
            let (group, phase) = match i % 4 {
                0 => ("Early", Phase::PreUpdate),
                1 => ("Early", Phase::Update),
                2 => ("Late", Phase::Update),
                _ => ("Late", Phase::PostUpdate),
            };
            world.add_system(
                NodeBuilder::new(format!("n{i}"))
                    .in_group(group)
                    .phase(phase)
                    .run(move |_| {
                        let tick = clock.fetch_add(1, Ordering::SeqCst) + 1;
                        seen[i].store(tick, Ordering::SeqCst);
                    }),
            );
        }
        for _ in 0..3 {
            clock.store(0, Ordering::SeqCst);
            world.run_iteration().unwrap();
            let tick = |i: usize| seen[i].load(Ordering::SeqCst);
            assert!((0..400).all(|i| tick(i) > 0));
            // Phases: every pre before every update before every post;
            // groups: Early before Late.
            let max = |k: usize| (0..400).filter(|i| i % 4 == k).map(tick).max().unwrap();
            let min = |k: usize| (0..400).filter(|i| i % 4 == k).map(tick).min().unwrap();
            assert!(max(0) < min(1), "PreUpdate before Update");
            assert!(max(1) < min(2), "Early before Late");
            assert!(max(2) < min(3), "Update before PostUpdate");
        }
        let plan = world.plan().unwrap();
        assert!(plan.edges().len() < 4000, "{} edges", plan.edges().len());
    }
}

/// `FixedTime` is readable before the first update, with the step set.
#[test]
fn fixed_time_is_there_before_the_first_update() {
    let mut world = World::new();
    assert_eq!(
        world.get::<FixedTime>().map(|t| t.step),
        Some(Duration::from_nanos(16_666_667))
    );
    world.set_fixed_timestep(Duration::from_millis(10));
    let time = *world.get::<FixedTime>().unwrap();
    assert_eq!(
        (time.step, time.steps, time.total),
        (Duration::from_millis(10), 0, 0)
    );
}

/// A built-in schedule's name reaches the built-in schedule, however it is
/// spelled: `run_schedule("Startup")` runs the nodes `in_schedule(
/// Schedule::Startup)`, and a node `in_schedule(Schedule::named("Startup"))`
/// is one of them (once, before the first update, like the rest).
#[test]
fn startup_by_name_is_the_built_in_startup_schedule() {
    #[derive(Default)]
    struct Log(Vec<&'static str>);
    let mut world = World::new();
    world.insert(Log::default());
    world.add_system(NodeBuilder::new("frame").system(|log: &mut Log| log.0.push("frame")));
    world.add_system(
        NodeBuilder::new("boot")
            .in_schedule(Schedule::Startup)
            .system(|log: &mut Log| log.0.push("boot")),
    );
    world.add_system(
        NodeBuilder::new("boot_by_name")
            .in_schedule(Schedule::named("Startup"))
            .system(|log: &mut Log| log.0.push("boot_by_name")),
    );
    world.run_schedule("Startup").unwrap();
    // Startup ran by name: the first update does not run it again.
    world.update(Duration::from_millis(16)).unwrap();
    world.run_schedule("Startup").unwrap();
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["boot", "boot_by_name", "frame", "boot", "boot_by_name"]
    );
    let plans = world.plans().unwrap();
    let startups = plans
        .iter()
        .filter(|(selection, _)| selection.schedule == Schedule::Startup)
        .count();
    assert_eq!(
        startups, 1,
        "one Startup plan, not a built-in and a named one"
    );
}

/// `run_schedule("Update")` is refused with advice that works, and a
/// `Startup` nobody is in advises the built-in schedule.
#[test]
fn built_in_schedule_names_get_advice_that_works() {
    let mut world = World::new();
    world.add_system(NodeBuilder::new("frame").system(|| {}));
    let update = world.run_schedule("Update").unwrap_err();
    assert!(matches!(update, IterationError::UpdateSchedule));
    assert!(update.to_string().contains("World::update"), "{update}");
    let startup = world.run_schedule("Startup").unwrap_err();
    assert!(
        matches!(&startup, IterationError::UnknownSchedule(name) if name == "Startup"),
        "{startup:?}"
    );
    let advice = startup.to_string();
    assert!(
        advice.contains("in_schedule(Schedule::Startup)"),
        "{advice}"
    );
    assert!(!advice.contains("named"), "{advice}");
    let load = world.run_schedule("Lo\"ad").unwrap_err().to_string();
    assert!(load.contains(r#"Schedule::named("Lo\"ad")"#), "{load}");
    // Nothing ran for any of them.
    world.run_iteration().unwrap();
}
