//! States in snapshots: a state's value, its pending request and its
//! driver's bookkeeping are captured when the state is added, and a
//! restored world applies the same transitions as the original run, on
//! the serial executor and on a pool of 2.

use sluice::prelude::*;
use sluice::state::{ComputedStates, NextState, OnEnter, OnExit, State, States, SubStates};
use sluice::{Local, NodeIndex, ThreadPool, World};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
enum Flow {
    #[default]
    Title,
    Battle,
    Results,
}
impl States for Flow {}

/// Exists while `Flow` is `Battle`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InBattle;
impl States for InBattle {}
impl ComputedStates for InBattle {
    type Source = Flow;
    fn compute(source: &Flow) -> Option<Self> {
        (*source == Flow::Battle).then_some(InBattle)
    }
}

/// Lives inside `Flow::Battle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Pause {
    #[default]
    Running,
}
impl States for Pause {}
impl SubStates for Pause {
    type Source = Flow;
    fn should_exist(flow: &Flow) -> Option<Self> {
        (*flow == Flow::Battle).then(Pause::default)
    }
}

/// Every schedule that ran, in order (not snapshotted: it records both
/// the original run and the replay).
#[derive(Default)]
struct Log(Vec<String>);

fn worlds() -> Vec<(&'static str, World)> {
    let mut serial = World::new();
    serial.set_executor(ExecutorKind::Serial);
    let mut pooled = World::with_pool(ThreadPool::new(2).unwrap());
    pooled.set_executor(ExecutorKind::Parallel);
    vec![("serial", serial), ("parallel-2", pooled)]
}

fn logger(text: &'static str) -> impl FnMut(&mut Log) + Send + 'static {
    move |log: &mut Log| log.0.push(text.to_owned())
}

/// A world logging the enter and exit of every `Flow` value and of
/// `InBattle` and `Pause`.
fn flow_world(mut world: World) -> World {
    world.init_service::<Log>();
    world.init_state::<Flow>();
    world.add_computed_state::<InBattle>().unwrap();
    world.add_sub_state::<Pause>().unwrap();
    for (value, enter, exit) in [
        (Flow::Title, "enter Title", "exit Title"),
        (Flow::Battle, "enter Battle", "exit Battle"),
        (Flow::Results, "enter Results", "exit Results"),
    ] {
        world.add_system(
            NodeBuilder::new(enter)
                .in_schedule(OnEnter(value))
                .system(logger(enter)),
        );
        world.add_system(
            NodeBuilder::new(exit)
                .in_schedule(OnExit(value))
                .system(logger(exit)),
        );
    }
    world.add_system(
        NodeBuilder::new("enter InBattle")
            .in_schedule(OnEnter(InBattle))
            .system(logger("enter InBattle")),
    );
    world.add_system(
        NodeBuilder::new("exit InBattle")
            .in_schedule(OnExit(InBattle))
            .system(logger("exit InBattle")),
    );
    world.add_system(
        NodeBuilder::new("enter Running")
            .in_schedule(OnEnter(Pause::Running))
            .system(logger("enter Running")),
    );
    world
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

/// The states a world holds now, with the pending request of `Flow`.
fn states_of(world: &World) -> (Option<Flow>, Option<Flow>, bool, Option<Pause>) {
    (
        world.state::<Flow>().copied(),
        world
            .get::<NextState<Flow>>()
            .and_then(|next| next.pending().copied()),
        world.state::<InBattle>().is_some(),
        world.state::<Pause>().copied(),
    )
}

#[test]
fn a_restore_gives_back_the_state_and_its_pending_request_and_replays_the_same_transitions() {
    let mut replays = Vec::new();
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.run_iteration().unwrap();
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        assert_eq!(
            states_of(&world),
            (Some(Flow::Battle), None, true, Some(Pause::Running)),
            "{name}"
        );
        // A request waits for the next state point.
        world.set_next_state(Flow::Results);
        let snapshot = world.snapshot().unwrap();
        let left_out: Vec<String> = snapshot
            .report()
            .entries()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            left_out.iter().all(|entry| !entry.contains("State<")),
            "{name}: {left_out:?}"
        );
        take_log(&mut world);

        // The original run: the request applied, then one more transition.
        world.run_iteration().unwrap();
        let original_frame = take_log(&mut world);
        let original_states = states_of(&world);
        assert_eq!(original_states, (Some(Flow::Results), None, false, None));
        world.set_next_state(Flow::Title);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Title), "{name}");
        take_log(&mut world);

        world.restore(&snapshot).unwrap();
        assert_eq!(
            states_of(&world),
            (
                Some(Flow::Battle),
                Some(Flow::Results),
                true,
                Some(Pause::Running)
            ),
            "{name}: the state and its pending request are back"
        );
        world.run_iteration().unwrap();
        let replay = take_log(&mut world);
        assert_eq!(replay, original_frame, "{name}");
        assert_eq!(states_of(&world), original_states, "{name}");
        replays.push(replay);
    }
    assert_eq!(
        replays[0],
        ["exit Battle", "enter Results", "exit InBattle"].map(str::to_owned),
        "the computed state follows its source"
    );
    assert!(replays.iter().all(|replay| *replay == replays[0]));
}

#[test]
fn a_snapshot_before_the_first_state_point_enters_the_initial_value_again() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        let before = world.snapshot().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(take_log(&mut world), ["enter Title"], "{name}");
        world.restore(&before).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(
            take_log(&mut world),
            ["enter Title"],
            "{name}: the driver's bookkeeping is restored"
        );
    }
}

#[test]
fn a_derived_state_recomputes_after_a_restore_when_its_source_moves_again() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.run_iteration().unwrap();
        let at_title = world.snapshot().unwrap();
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        assert!(world.state::<InBattle>().is_some(), "{name}");
        world.restore(&at_title).unwrap();
        assert!(world.state::<InBattle>().is_none(), "{name}");
        assert_eq!(world.state::<Pause>(), None, "{name}");
        // The source moves to the value it had in the undone run: the
        // computed and sub-states follow as they did then.
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        assert!(world.state::<InBattle>().is_some(), "{name}");
        assert_eq!(world.state::<Pause>(), Some(&Pause::Running), "{name}");
        world.set_next_state(Flow::Title);
        world.run_iteration().unwrap();
        assert!(world.state::<InBattle>().is_none(), "{name}");
        assert_eq!(world.state::<Pause>(), None, "{name}");
    }
}

#[test]
fn a_strict_world_with_states_takes_snapshots() {
    let mut world = World::new();
    world.init_state::<Flow>();
    world.add_computed_state::<InBattle>().unwrap();
    world.add_sub_state::<Pause>().unwrap();
    world.set_snapshot_strict(true);
    world.snapshot().unwrap();
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Results);
    let snapshot = world.snapshot().unwrap();
    assert!(snapshot.report().is_complete());
}

#[test]
fn a_saved_state_and_its_request_load_from_disk() {
    let mut world = World::new();
    world.init_state::<Flow>();
    world.save_service::<State<Flow>>("flow");
    world.save_service::<NextState<Flow>>("flow.next");
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Results);
    let mut bytes = Vec::new();
    world.snapshot().unwrap().write_to(&mut bytes).unwrap();
    world.set_next_state(Flow::Title);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Title));
    world.load_from(&bytes[..]).unwrap();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
    assert_eq!(
        world.get::<NextState<Flow>>().unwrap().pending(),
        Some(&Flow::Results)
    );
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Results));
}

/// What the counting systems saw, in order.
#[derive(Default)]
struct Seen(Vec<(&'static str, u32)>);

fn count_a(mut runs: Local<u32>, seen: &mut Seen) {
    *runs += 1;
    seen.0.push(("a", *runs));
}

fn count_b(mut runs: Local<u32>, mut skipped: Local<Vec<u8>>, seen: &mut Seen) {
    *runs += 10;
    skipped.push(1);
    seen.0.push(("b", *runs + skipped.len() as u32 * 100));
}

/// A world counting in two nodes; the index of `b`.
fn counting_world(mut world: World) -> (World, NodeIndex) {
    world.init_service::<Seen>();
    world.add_system(NodeBuilder::new("a").system(count_a));
    let b = world.add_system(NodeBuilder::new("b").after("a").system(count_b));
    (world, b)
}

fn take_seen(world: &mut World) -> Vec<(&'static str, u32)> {
    std::mem::take(&mut world.get_mut::<Seen>().unwrap().0)
}

#[test]
fn opted_in_locals_are_restored_into_their_own_nodes() {
    let mut replays = Vec::new();
    for (name, world) in worlds() {
        let (mut world, _) = counting_world(world);
        world.snapshot_local::<u32>().snapshot_local::<Vec<u8>>();
        world.run_iteration().unwrap();
        let snapshot = world.snapshot().unwrap();
        assert!(
            snapshot
                .report()
                .entries()
                .iter()
                .all(|entry| !entry.to_string().contains("Local")),
            "{name}: {:?}",
            snapshot.report().entries()
        );
        // Never saved: named once per type.
        let not_saved = snapshot.not_saved();
        assert_eq!(
            not_saved
                .iter()
                .filter(|name| name.contains("u32>"))
                .count(),
            1,
            "{name}: {not_saved:?}"
        );
        take_seen(&mut world);
        world.run_iteration().unwrap();
        let original = take_seen(&mut world);
        world.run_iteration().unwrap();
        take_seen(&mut world);
        world.restore(&snapshot).unwrap();
        world.run_iteration().unwrap();
        let replay = take_seen(&mut world);
        assert_eq!(replay, original, "{name}");
        replays.push(replay);
    }
    assert_eq!(replays[0], [("a", 2), ("b", 220)]);
    assert!(replays.iter().all(|replay| *replay == replays[0]));
}

#[test]
fn a_local_not_opted_in_is_reported_and_kept() {
    let (mut world, _) = counting_world(World::new());
    world.snapshot_local::<u32>();
    world.run_iteration().unwrap();
    let snapshot = world.snapshot().unwrap();
    let left_out: Vec<String> = snapshot
        .report()
        .entries()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        left_out.iter().any(|entry| entry.contains("Vec<u8>")),
        "{left_out:?}"
    );
    assert!(
        left_out.iter().all(|entry| !entry.contains("u32>")),
        "{left_out:?}"
    );
    world.run_iteration().unwrap();
    world.restore(&snapshot).unwrap();
    take_seen(&mut world);
    world.run_iteration().unwrap();
    // `runs` went back to its value at the snapshot; `skipped` did not.
    assert_eq!(take_seen(&mut world), [("a", 2), ("b", 320)]);
    world.set_snapshot_strict(true);
    assert!(world.snapshot().is_err());
}

#[test]
fn a_restore_into_a_world_whose_node_was_removed_is_refused_and_changes_nothing() {
    let (mut world, b) = counting_world(World::new());
    world.snapshot_local::<u32>().snapshot_local::<Vec<u8>>();
    world.run_iteration().unwrap();
    let snapshot = world.snapshot().unwrap();
    world.remove_node(b).unwrap();
    world.run_iteration().unwrap();
    take_seen(&mut world);
    let error = world.restore(&snapshot).unwrap_err();
    assert!(
        matches!(&error, sluice::snapshot::RestoreError::NodeGone { local } if local.contains("u32")),
        "{error}"
    );
    assert!(error.to_string().contains("no longer has"), "{error}");
    world.run_iteration().unwrap();
    assert_eq!(take_seen(&mut world), [("a", 3)], "the world is unchanged");
}

#[test]
fn locals_are_not_put_into_another_world() {
    let (mut first, _) = counting_world(World::new());
    first.snapshot_local::<u32>().snapshot_local::<Vec<u8>>();
    first.run_iteration().unwrap();
    first.run_iteration().unwrap();
    let snapshot = first.snapshot().unwrap();
    let (mut second, _) = counting_world(World::new());
    second.snapshot_local::<u32>().snapshot_local::<Vec<u8>>();
    second.restore(&snapshot).unwrap();
    take_seen(&mut second);
    second.run_iteration().unwrap();
    assert_eq!(take_seen(&mut second), [("a", 1), ("b", 110)]);
}

/// A `Local` value whose `Clone` panics once armed.
#[derive(Default)]
struct Fragile(u32);

static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Clone for Fragile {
    fn clone(&self) -> Self {
        if ARMED.load(std::sync::atomic::Ordering::SeqCst) {
            panic!("fragile clone");
        }
        Fragile(self.0)
    }
}

#[test]
fn a_local_whose_clone_panics_fails_the_snapshot_and_the_node_runs_on() {
    let mut world = World::new();
    world.init_service::<Seen>();
    world.snapshot_local::<Fragile>();
    world.add_system(|mut fragile: Local<Fragile>, seen: &mut Seen| {
        fragile.0 += 1;
        seen.0.push(("fragile", fragile.0));
    });
    world.run_iteration().unwrap();
    let good = world.snapshot().unwrap();
    ARMED.store(true, std::sync::atomic::Ordering::SeqCst);
    let error = world.snapshot().unwrap_err();
    assert!(
        matches!(&error, sluice::snapshot::SnapshotError::Panicked { what } if what.contains("Fragile")),
        "{error}"
    );
    // A restore clones before it changes anything: refused, unchanged.
    world.run_iteration().unwrap();
    let refused = world.restore(&good).unwrap_err();
    assert!(
        matches!(&refused, sluice::snapshot::RestoreError::Panicked { what } if what.contains("Fragile")),
        "{refused}"
    );
    ARMED.store(false, std::sync::atomic::Ordering::SeqCst);
    // The value whose clone panicked (its lock poisoned) runs on.
    world.run_iteration().unwrap();
    assert_eq!(
        take_seen(&mut world),
        [("fragile", 1), ("fragile", 2), ("fragile", 3)]
    );
    world.restore(&good).unwrap();
    world.run_iteration().unwrap();
    assert_eq!(take_seen(&mut world), [("fragile", 2)]);
}

/// Found by the API model: a world restored to a snapshot taken before its
/// first run entered its initial state after the frame instead of before
/// it (and never ran `Startup` again). Now it replays what followed the
/// snapshot: `Startup`, the initial value entered, then the frame.
#[test]
fn a_world_restored_to_before_its_first_run_starts_again() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.add_system(
            NodeBuilder::new("startup")
                .in_schedule(sluice::Schedule::Startup)
                .system(logger("startup")),
        );
        world.add_system(NodeBuilder::new("frame").system(logger("frame")));
        let before = world.snapshot().unwrap();
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        let first = take_log(&mut world);
        assert_eq!(
            first,
            ["startup", "enter Title", "frame", "frame"],
            "{name}"
        );
        world.restore(&before).unwrap();
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        assert_eq!(take_log(&mut world), first, "{name}: the same frames again");
        // Restored to after the first run: `Startup` is not run again.
        let after = world.snapshot().unwrap();
        world.run_iteration().unwrap();
        world.restore(&after).unwrap();
        world.run_iteration().unwrap();
        assert_eq!(take_log(&mut world), ["frame", "frame"], "{name}");
    }
}
