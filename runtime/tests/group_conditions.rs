//! Issue 36, conditions on groups, stages and sets: one evaluation per
//! iteration for every member, members skipped (not failed) when it is
//! false, the ordering a serial run gives, panics named at the boundary.
//! Execution is tried on every executor kind and on 1, 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics, world_on};
use std::sync::atomic::{AtomicU32, Ordering};

use sluice::prelude::*;
use sluice::{Cadence, IterationError};

fn iterations() -> u32 {
    if cfg!(miri) { 4 } else { 20 }
}

fn members() -> usize {
    if cfg!(miri) { 3 } else { 100 }
}

struct Paused(bool);

/// How often the condition was evaluated.
#[derive(Default)]
struct Evaluations(AtomicU32);

/// How often each member ran (shared access: the members run together).
struct Runs(Vec<AtomicU32>);

impl Runs {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| AtomicU32::new(0)).collect())
    }

    fn read(&self) -> Vec<u32> {
        self.0.iter().map(|r| r.load(Ordering::Relaxed)).collect()
    }
}

fn evaluations(world: &World) -> u32 {
    world
        .get::<Evaluations>()
        .unwrap()
        .0
        .load(Ordering::Relaxed)
}

fn counted_unpaused(paused: &Paused, evaluations: &Evaluations) -> bool {
    evaluations.0.fetch_add(1, Ordering::Relaxed);
    !paused.0
}

fn add_members(world: &mut World, n: usize, place: impl Fn(NodeBuilder) -> NodeBuilder) {
    for i in 0..n {
        world.add_system(place(NodeBuilder::new(format!("member{i}"))).system(
            move |runs: &Runs| {
                runs.0[i].fetch_add(1, Ordering::Relaxed);
            },
        ));
    }
}

/// Runs `iterations()` iterations, pausing every third; each member ran
/// exactly in the unpaused ones, and the condition was evaluated once per
/// iteration.
fn check_once_per_iteration(world: &mut World, n: usize, what: &str) {
    let mut unpaused = 0;
    for i in 0..iterations() {
        let paused = i % 3 == 2;
        world.insert(Paused(paused));
        world.run_iteration().unwrap();
        unpaused += u32::from(!paused);
    }
    let evaluations = evaluations(world);
    assert_eq!(
        evaluations,
        iterations(),
        "{what}: one evaluation per iteration"
    );
    assert_eq!(
        world.get::<Runs>().unwrap().read(),
        vec![unpaused; n],
        "{what}"
    );
}

fn world_with_counters(executor: ExecutorKind, threads: usize, n: usize) -> World {
    let mut world = world_on(executor, threads);
    world.insert(Paused(false));
    world.insert(Evaluations::default());
    world.insert(Runs::new(n));
    world
}

#[test]
fn a_group_condition_is_evaluated_once_per_iteration_for_every_member() {
    let n = members();
    for (executor, threads) in executors() {
        let mut world = world_with_counters(executor, threads, n);
        world.add_group(Group::new("Physics"));
        // Half the members registered before the condition, half after.
        add_members(&mut world, n / 2, |node| node.in_group("Physics"));
        let condition = world.run_group_if("Physics", counted_unpaused);
        for i in n / 2..n {
            world.add_system(
                NodeBuilder::new(format!("member{i}"))
                    .in_group("Physics")
                    .system(move |runs: &Runs| {
                        runs.0[i].fetch_add(1, Ordering::Relaxed);
                    }),
            );
        }
        let plan = world.plan().unwrap();
        assert_eq!(plan.node_name(condition), "run_if(Physics)");
        check_once_per_iteration(&mut world, n, &format!("{executor:?} on {threads}"));
    }
}

#[test]
fn stage_and_set_conditions_gate_their_members_once() {
    let n = members();
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_with_counters(executor, threads, n);
        world.add_stage("Early", 0);
        world.add_stage("Late", 1);
        world.run_stage_if("Late", counted_unpaused);
        add_members(&mut world, n, |node| node.in_stage("Late"));
        world.add_system(NodeBuilder::new("early").in_stage("Early").run(|_| {}));
        check_once_per_iteration(&mut world, n, &format!("stage, {what}"));

        let mut world = world_with_counters(executor, threads, n);
        world.add_set("Audio", 0);
        add_members(&mut world, n, |node| node.in_set("Audio"));
        world.run_set_if("Audio", counted_unpaused);
        check_once_per_iteration(&mut world, n, &format!("set, {what}"));
    }
}

#[derive(Default)]
struct Log(Vec<String>);

/// A world with `Paused(paused)`, an empty `Log`, and the group `group`
/// run only while not paused.
fn logged_group(
    executor: ExecutorKind,
    threads: usize,
    paused: bool,
    group: &'static str,
) -> World {
    let mut world = world_on(executor, threads);
    world.insert(Paused(paused));
    world.insert(Log::default());
    world.add_group(Group::new(group));
    world.run_group_if(group, |p: &Paused| !p.0);
    world
}

#[test]
fn nested_groups_skip_inner_members_and_their_condition_when_the_outer_is_false() {
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_on(executor, threads);
        world.insert(Paused(false));
        world.insert(Log::default());
        world.add_group(Group::new("Simulation"));
        world.add_group(Group::new("Physics").in_group("Simulation"));
        world.run_group_if("Simulation", |p: &Paused| !p.0);
        world.insert(Evaluations::default());
        // Evaluated only when Simulation's holds.
        world.run_group_if("Physics", |e: &Evaluations| {
            e.0.fetch_add(1, Ordering::Relaxed);
            true
        });
        world.add_system(
            NodeBuilder::new("integrate")
                .in_group("Physics")
                .system(|log: &mut Log| log.0.push("integrate".into())),
        );
        world.add_system(
            NodeBuilder::new("outside").system(|log: &mut Log| log.0.push("outside".into())),
        );
        world.run_iteration().unwrap();
        world.insert(Paused(true));
        world.run_iteration().unwrap();
        world.insert(Paused(false));
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            ["integrate", "outside", "outside", "integrate", "outside"],
            "{what}"
        );
        let evaluations = evaluations(&world);
        assert_eq!(
            evaluations, 2,
            "{what}: not evaluated while Simulation's is false"
        );
    }
}

/// Whether the game is paused, written by a node outside the group and by
/// a member; the log shows what the condition saw.
#[derive(Default)]
struct Seen(Vec<(u32, bool)>);

struct Frame(u32);

#[test]
fn the_condition_reads_what_a_serial_run_leaves_before_the_first_member() {
    let mut expected: Option<Vec<(u32, bool)>> = None;
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Paused(false));
        world.insert(Frame(0));
        world.insert(Seen::default());
        world.insert(Runs::new(4));
        world.add_group(Group::new("Ai").after("pause_on_odd"));
        // A writer the group follows: the condition sees its write.
        world.add_system(NodeBuilder::new("pause_on_odd").system(
            |frame: &mut Frame, paused: &mut Paused| {
                frame.0 += 1;
                paused.0 = frame.0 % 2 == 1;
            },
        ));
        // A member that unpauses: the condition, before it, does not see it.
        world.add_system(
            NodeBuilder::new("unpause")
                .in_group("Ai")
                .system(|paused: &mut Paused| paused.0 = false),
        );
        world.run_group_if("Ai", |paused: &Paused, frame: &Frame, seen: &Seen| {
            let _ = seen;
            !paused.0 || frame.0 == 0
        });
        add_members(&mut world, 4, |node| node.in_group("Ai"));
        // A reader after the group records what a serial run would see.
        world.add_system(NodeBuilder::new("record").after("Ai").system(
            |frame: &Frame, paused: &Paused, seen: &mut Seen| seen.0.push((frame.0, paused.0)),
        ));
        for _ in 0..iterations() {
            world.run_iteration().unwrap();
        }
        let what = format!("{executor:?} on {threads}");
        // Paused on odd frames: the members ran on the even ones only, and
        // "unpause" with them, so `record` saw the pause stand on odd ones.
        assert_eq!(
            world.get::<Runs>().unwrap().read(),
            vec![iterations() / 2; 4],
            "{what}"
        );
        let seen = &world.get::<Seen>().unwrap().0;
        assert!(
            seen.iter()
                .all(|&(frame, paused)| paused == (frame % 2 == 1)),
            "{what}: {seen:?}"
        );
        match &expected {
            None => expected = Some(seen.clone()),
            Some(serial) => assert_eq!(seen, serial, "{what}: the serial result"),
        }
    }
}

/// The node a failed iteration names.
fn failed_node(world: &mut World, what: &str) -> String {
    let error = world.run_iteration().unwrap_err();
    let IterationError::NodePanicked(panic) = &error else {
        panic!("{what}: {error}");
    };
    panic.node().to_owned()
}

fn panics(_: &Paused) -> bool {
    panic!("{PLANNED}: a group condition");
}

fn yes(_: &Paused) -> bool {
    true
}

#[test]
fn a_panicking_group_condition_fails_the_iteration_by_name_and_no_member_runs() {
    quiet_planned_panics();
    let n = members().min(8);
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_with_counters(executor, threads, n);
        world.add_group(Group::new("Physics"));
        let condition = world.run_group_if("Physics", panics);
        add_members(&mut world, n, |node| node.in_group("Physics"));
        assert_eq!(failed_node(&mut world, &what), "run_if(Physics)", "{what}");
        assert_eq!(world.get::<Runs>().unwrap().read(), vec![0; n], "{what}");
        // Removed, the group runs again.
        world.remove_node(condition).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Runs>().unwrap().read(), vec![1; n], "{what}");
    }
}

#[test]
fn combinators_over_panicking_group_conditions_short_circuit_or_fail() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_with_counters(executor, threads, 2);
        world.add_group(Group::new("Short"));
        world.add_group(Group::new("Fails"));
        // `yes.or(panics)` never evaluates `panics`.
        world.run_group_if("Short", yes.or(panics));
        add_members(&mut world, 1, |node| node.in_group("Short"));
        world.run_group_if("Fails", yes.and(not(panics)));
        world.add_system(
            NodeBuilder::new("member1")
                .in_group("Fails")
                .system(|runs: &Runs| {
                    runs.0[1].fetch_add(1, Ordering::Relaxed);
                }),
        );
        assert_eq!(failed_node(&mut world, &what), "run_if(Fails)", "{what}");
        assert_eq!(world.get::<Runs>().unwrap().read()[1], 0, "{what}");
    }
}

#[test]
fn a_whole_world_member_is_skipped_with_its_group() {
    for (executor, threads) in executors() {
        let mut world = logged_group(executor, threads, true, "Save");
        world.add_system(NodeBuilder::new("save").in_group("Save").world(|world| {
            world.insert(Log(vec!["saved".into()]));
        }));
        world.run_iteration().unwrap();
        assert!(world.get::<Log>().unwrap().0.is_empty());
        world.insert(Paused(false));
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Log>().unwrap().0, ["saved"]);
    }
}

#[test]
fn two_conditions_on_one_group_must_both_hold_each_evaluated_once() {
    let mut world = World::new();
    world.insert(Paused(false));
    world.insert(Evaluations::default());
    world.insert(Runs::new(3));
    world.add_group(Group::new("G"));
    let first = world.run_group_if("G", counted_unpaused);
    let second = world.run_group_if("G", |e: &Evaluations| {
        e.0.fetch_add(1, Ordering::Relaxed);
        true
    });
    add_members(&mut world, 3, |node| node.in_group("G"));
    let plan = world.plan().unwrap();
    assert_eq!(plan.node_name(first), "run_if(G)");
    assert_eq!(plan.node_name(second), "run_if(G)#2");
    world.run_iteration().unwrap();
    assert_eq!(evaluations(&world), 2);
    world.insert(Paused(true));
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Runs>().unwrap().read(), [1, 1, 1]);
}

#[test]
fn an_unknown_group_and_a_member_in_another_cadence_are_refused_by_code() {
    let mut world = World::new();
    world.insert(Paused(false));
    world.run_group_if("Nowhere", |p: &Paused| p.0);
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("an unknown group");
    };
    let error = errors.errors().next().unwrap();
    assert_eq!(error.code, "SL0002", "{error}");
    assert!(error.message.contains("Nowhere"), "{error}");

    let mut world = World::new();
    world.insert(Paused(false));
    world.add_group(Group::new("Physics"));
    world.run_group_if("Physics", |p: &Paused| p.0);
    world.add_system(
        NodeBuilder::new("step")
            .in_group("Physics")
            .cadence(Cadence::Fixed)
            .run(|_| {}),
    );
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("a member in the fixed cadence");
    };
    let error = errors.errors().next().unwrap();
    assert_eq!(error.code, "SL0003", "{error}");
    assert!(error.message.contains("run_if(Physics)"), "{error}");
}

#[test]
fn the_plan_says_why_a_member_waits_for_its_group_condition() {
    let mut world = World::new();
    world.insert(Paused(false));
    world.add_group(Group::new("G"));
    world.run_group_if("G", |p: &Paused| !p.0);
    let member = world.add_system(NodeBuilder::new("member").in_group("G").run(|_| {}));
    let plan = world.plan().unwrap();
    let condition = (0..plan.registered() as u32)
        .map(sluice::NodeIndex)
        .find(|&n| plan.node_name(n) == "run_if(G)")
        .unwrap();
    let why = plan
        .why(condition, member)
        .expect("the member waits for it");
    let text: Vec<String> = why.iter().map(|edge| edge.reasons_text()).collect();
    assert!(
        text.iter().any(|t| t == "run condition run_if(G)"),
        "{text:?}"
    );
}

#[test]
fn a_condition_sits_in_the_earliest_phase_of_its_members() {
    for (executor, threads) in executors() {
        let mut world = logged_group(executor, threads, false, "Input");
        world.add_system(
            NodeBuilder::new("late")
                .in_group("Input")
                .phase(Phase::PostUpdate)
                .system(|log: &mut Log| log.0.push("late".into())),
        );
        world.add_system(
            NodeBuilder::new("early")
                .in_group("Input")
                .phase(Phase::PreUpdate)
                .system(|log: &mut Log| log.0.push("early".into())),
        );
        // In `Update`: after the condition, which is in `PreUpdate` with
        // `early`, so pausing here skips `late` only from the next frame.
        world.add_system(
            NodeBuilder::new("pause").system(|p: &mut Paused, log: &mut Log| {
                p.0 = true;
                log.0.push("pause".into());
            }),
        );
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Log>().unwrap().0,
            ["early", "pause", "late", "pause"],
            "{executor:?} on {threads}"
        );
    }
}

/// Whether the roof is closed (read by the piped condition).
struct Roof(bool);

fn raining(paused: &Paused, evaluations: &Evaluations) -> bool {
    evaluations.0.fetch_add(1, Ordering::Relaxed);
    paused.0
}

fn wet(raining: bool, roof: &Roof, evaluations: &Evaluations) -> bool {
    evaluations.0.fetch_add(1, Ordering::Relaxed);
    raining && !roof.0
}

#[test]
fn a_condition_reads_another_conditions_result_each_evaluated_once() {
    let n = members().min(10);
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_with_counters(executor, threads, n);
        world.insert(Roof(false));
        world.add_group(Group::new("Puddles"));
        world.run_group_if("Puddles", raining.pipe(wet));
        add_members(&mut world, n, |node| node.in_group("Puddles"));
        let mut ran = 0;
        for i in 0..iterations() {
            let (rain, roof) = (i % 2 == 0, i % 4 == 0);
            world.insert(Paused(rain));
            world.insert(Roof(roof));
            world.run_iteration().unwrap();
            ran += u32::from(rain && !roof);
        }
        let evaluations = evaluations(&world);
        assert_eq!(
            evaluations,
            2 * iterations(),
            "{what}: each part once per iteration"
        );
        assert_eq!(world.get::<Runs>().unwrap().read(), vec![ran; n], "{what}");
    }
}

fn decides_or_panics(input: bool, _: &Paused) -> bool {
    if input {
        panic!("{PLANNED}: a piped condition");
    }
    input
}

#[test]
fn a_piped_condition_that_panics_fails_the_iteration_by_name() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let what = format!("{executor:?} on {threads}");
        let mut world = world_with_counters(executor, threads, 1);
        world.add_group(Group::new("G"));
        world.run_group_if("G", yes.pipe(decides_or_panics));
        add_members(&mut world, 1, |node| node.in_group("G"));
        assert_eq!(failed_node(&mut world, &what), "run_if(G)", "{what}");
        assert_eq!(world.get::<Runs>().unwrap().read(), [0], "{what}");
        // On a single node: `not(yes).pipe(..)` hands it `false`, no panic,
        // and `.or(yes)` lets the node run.
        let mut world = world_with_counters(executor, threads, 1);
        world.add_system(
            NodeBuilder::new("single")
                .system(|runs: &Runs| {
                    runs.0[0].fetch_add(10, Ordering::Relaxed);
                })
                .run_if(not(yes).pipe(decides_or_panics).or(yes)),
        );
        world.run_iteration().unwrap();
        assert_eq!(world.get::<Runs>().unwrap().read(), [10], "{what}");
    }
}

#[test]
fn disabling_the_condition_node_lifts_it() {
    let mut world = world_with_counters(ExecutorKind::Serial, 1, 2);
    world.insert(Paused(true));
    world.add_group(Group::new("G"));
    let condition = world.run_group_if("G", counted_unpaused);
    add_members(&mut world, 2, |node| node.in_group("G"));
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Runs>().unwrap().read(), [0, 0]);
    world.set_enabled(condition, false);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Runs>().unwrap().read(), [1, 1], "no condition");
    assert_eq!(evaluations(&world), 1, "not evaluated while disabled");
    world.set_enabled(condition, true);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Runs>().unwrap().read(), [1, 1], "paused again");
}
