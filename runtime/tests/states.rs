//! States: values, requests, the state point, schedules, scoped entities,
//! computed states, the transition bound, on every executor.

use sluice::prelude::*;
use sluice::state::{
    ComputedStates, DespawnOnEnter, DespawnOnExit, DespawnWhen, MAX_TRANSITIONS, NextState,
    OnEnter, OnExit, OnTransition, State, StateError, States, in_state, state_exists,
};
use sluice::{ThreadPool, World};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Flow {
    #[default]
    Title,
    Battle,
    Results,
}
impl States for Flow {}

/// Everything that ran, in order.
#[derive(Default)]
struct Log(Vec<String>);

fn worlds() -> Vec<(&'static str, World)> {
    let serial = {
        let mut world = World::new();
        world.set_executor(ExecutorKind::Serial);
        world
    };
    // Under Miri one pool of 2 threads is enough to interleave (the
    // serial path is plain code, covered by the ordinary run).
    let mut out = if cfg!(miri) {
        Vec::new()
    } else {
        vec![("serial", serial)]
    };
    let counts: &[usize] = if cfg!(miri) { &[2] } else { &[2, 4] };
    for &threads in counts {
        let mut world = World::with_pool(ThreadPool::new(threads).unwrap());
        world.set_executor(ExecutorKind::Parallel);
        out.push((
            if threads == 2 {
                "parallel-2"
            } else {
                "parallel-4"
            },
            world,
        ));
    }
    out
}

fn logger(text: &'static str) -> impl FnMut(&mut Log) + Send + 'static {
    move |log: &mut Log| log.0.push(text.to_owned())
}

/// A world logging every schedule of `Flow` and an Update system in Battle.
fn flow_world(mut world: World) -> World {
    world.init_service::<Log>();
    world.init_state::<Flow>();
    for (value, name) in [
        (Flow::Title, "Title"),
        (Flow::Battle, "Battle"),
        (Flow::Results, "Results"),
    ] {
        let enter: &'static str = Box::leak(format!("enter {name}").into_boxed_str());
        let exit: &'static str = Box::leak(format!("exit {name}").into_boxed_str());
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
        NodeBuilder::new("title->battle")
            .in_schedule(OnTransition {
                from: Flow::Title,
                to: Flow::Battle,
            })
            .system(logger("transition Title->Battle")),
    );
    world.add_system(
        NodeBuilder::new("fight")
            .system(logger("fight"))
            .run_if(in_state(Flow::Battle)),
    );
    world
}

#[test]
fn initial_enter_requests_and_the_order_of_a_transition_on_every_executor() {
    let mut logs = Vec::new();
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Title), "{name}");
        world.set_next_state(Flow::Battle);
        // Applied at the end of the next iteration, after its boundary.
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Battle), "{name}");
        world.run_iteration().unwrap();
        world.set_next_state(Flow::Results);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Results), "{name}");
        logs.push(std::mem::take(&mut world.get_mut::<Log>().unwrap().0));
    }
    assert_eq!(
        logs[0],
        [
            "enter Title",
            "exit Title",
            "transition Title->Battle",
            "enter Battle",
            "fight",
            "fight",
            "exit Battle",
            "enter Results"
        ]
    );
    assert!(logs.iter().all(|log| *log == logs[0]), "{logs:?}");
}

#[test]
fn a_request_from_on_enter_is_applied_at_the_same_state_point() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        // Title goes straight on to Battle: the title lasts no frame.
        world.add_system(
            NodeBuilder::new("skip title")
                .in_schedule(OnEnter(Flow::Title))
                .system(|next: &mut NextState<Flow>| next.set(Flow::Battle)),
        );
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Battle), "{name}");
        let log = &world.get::<Log>().unwrap().0;
        assert_eq!(
            log,
            &[
                "enter Title",
                "exit Title",
                "transition Title->Battle",
                "enter Battle",
                "fight"
            ],
            "{name}"
        );
    }
}

#[test]
fn a_state_changed_twice_in_one_frame_takes_the_later_request_in_plan_order() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.run_iteration().unwrap();
        world.add_system(
            NodeBuilder::new("first").system(|next: &mut NextState<Flow>| next.set(Flow::Battle)),
        );
        world.add_system(
            NodeBuilder::new("second")
                .after("first")
                .system(|next: &mut NextState<Flow>| next.set(Flow::Results)),
        );
        world.get_mut::<Log>().unwrap().0.clear();
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Results), "{name}");
        assert_eq!(
            world.get::<Log>().unwrap().0,
            ["exit Title", "enter Results"],
            "{name}"
        );
    }
}

#[test]
fn a_state_changed_from_its_own_on_exit_moves_on_after_the_transition() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.add_system(
            NodeBuilder::new("exit battle: results")
                .in_schedule(OnExit(Flow::Battle))
                .system(|next: &mut NextState<Flow>| next.set(Flow::Results)),
        );
        world.run_iteration().unwrap();
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        world.get_mut::<Log>().unwrap().0.clear();
        // Battle -> Title is requested; Battle's exit asks for Results:
        // Title is entered, then left for Results, at one state point.
        world.set_next_state(Flow::Title);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Results), "{name}");
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [
                "fight",
                "exit Battle",
                "enter Title",
                "exit Title",
                "enter Results"
            ],
            "{name}"
        );
    }
}

#[test]
fn set_to_the_same_value_runs_exit_and_enter_set_if_neq_does_not() {
    let mut world = flow_world(World::new());
    world.run_iteration().unwrap();
    world.get_mut::<Log>().unwrap().0.clear();
    world.get_mut::<NextState<Flow>>().unwrap().set(Flow::Title);
    world.apply_state_transitions().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["exit Title", "enter Title"]);
    world.get_mut::<Log>().unwrap().0.clear();
    world
        .get_mut::<NextState<Flow>>()
        .unwrap()
        .set_if_neq(Flow::Title);
    world.apply_state_transitions().unwrap();
    assert!(world.get::<Log>().unwrap().0.is_empty());
    assert_eq!(world.get::<NextState<Flow>>().unwrap().pending(), None);
}

#[test]
fn a_transition_loop_past_the_bound_is_an_error_naming_the_state_and_loses_nothing() {
    for (name, world) in worlds() {
        let mut world = flow_world(world);
        world.run_iteration().unwrap();
        // Battle and Results ask for each other forever.
        world.add_system(
            NodeBuilder::new("to results")
                .in_schedule(OnEnter(Flow::Battle))
                .system(|next: &mut NextState<Flow>| next.set(Flow::Results)),
        );
        world.add_system(
            NodeBuilder::new("to battle")
                .in_schedule(OnEnter(Flow::Results))
                .system(|next: &mut NextState<Flow>| next.set(Flow::Battle)),
        );
        world.add_system(NodeBuilder::new("count").system(|log: &mut Log| {
            log.0.push("frame".to_owned());
        }));
        world.set_next_state(Flow::Battle);
        let error = world.run_iteration().unwrap_err();
        let IterationError::State(StateError::TooManyTransitions { state, chain }) = &error else {
            panic!("{name}: {error}");
        };
        assert!(state.ends_with("Flow"), "{state}");
        assert_eq!(chain.len(), MAX_TRANSITIONS + 1, "{name}");
        assert_eq!(chain[0], "Title");
        assert_eq!(chain[1], "Battle");
        assert_eq!(chain[2], "Results");
        let text = error.to_string();
        assert!(
            text.contains("Flow") && text.contains("Battle -> Results"),
            "{text}"
        );
        // Nothing of the frame is lost: its system ran, the transitions
        // made stand, the last request waits.
        let log = &world.get::<Log>().unwrap().0;
        assert_eq!(log.iter().filter(|line| *line == "frame").count(), 1);
        assert_eq!(world.state::<Flow>(), Some(&Flow::Results), "{name}");
        assert_eq!(
            world.get::<NextState<Flow>>().unwrap().pending(),
            Some(&Flow::Battle)
        );
    }
}

#[test]
fn scoped_entities_go_with_their_state() {
    #[derive(Debug, PartialEq)]
    struct Tag(&'static str);
    let mut world = World::new();
    world.init_state::<Flow>();
    world.run_iteration().unwrap();
    let menu = world.spawn((Tag("menu"), DespawnOnExit(Flow::Title)));
    let banner = world.spawn((Tag("banner"), DespawnOnEnter(Flow::Results)));
    let leaving_battle = world.spawn((
        Tag("battle only"),
        DespawnWhen::<Flow>(|from, to| *from == Flow::Battle && *to != Flow::Battle),
    ));
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    assert!(world.entity(menu).is_none());
    assert!(world.entity(banner).is_some());
    assert!(world.entity(leaving_battle).is_some());
    world.set_next_state(Flow::Results);
    world.run_iteration().unwrap();
    assert!(world.entity(banner).is_none());
    assert!(world.entity(leaving_battle).is_none());
}

#[test]
fn what_on_enter_spawns_scoped_lives_until_the_exit() {
    let mut world = World::new();
    world.init_state::<Flow>();
    world.add_system(
        NodeBuilder::new("spawn hud")
            .in_schedule(OnEnter(Flow::Battle))
            .system(|commands: Commands| {
                commands.spawn((7u32, DespawnOnExit(Flow::Battle)));
            }),
    );
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    assert_eq!(world.query::<&u32>().iter().count(), 1);
    world.set_next_state(Flow::Results);
    world.run_iteration().unwrap();
    assert_eq!(world.query::<&u32>().iter().count(), 0);
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct InBattle;
impl States for InBattle {}
impl ComputedStates for InBattle {
    type Source = Flow;
    fn compute(source: &Flow) -> Option<Self> {
        (*source == Flow::Battle).then_some(InBattle)
    }
}

#[test]
fn a_computed_state_exists_only_while_its_source_gives_it_a_value() {
    let mut world = World::new();
    world.init_service::<Log>();
    world.init_state::<Flow>();
    world.add_computed_state::<InBattle>().unwrap();
    world.add_system_to(OnEnter(InBattle), logger("enter InBattle"));
    world.add_system_to(OnExit(InBattle), logger("exit InBattle"));
    world.add_system(
        NodeBuilder::new("while in battle")
            .system(logger("in battle"))
            .run_if(state_exists::<InBattle>),
    );
    world.run_iteration().unwrap();
    assert_eq!(world.state::<InBattle>(), None);
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<InBattle>(), Some(&InBattle));
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Results);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<InBattle>(), None);
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["enter InBattle", "in battle", "in battle", "exit InBattle"]
    );
    // Requests for a computed state do nothing; adding it twice is refused.
    assert!(matches!(
        world.add_computed_state::<InBattle>(),
        Err(StateError::AlreadyAdded { .. })
    ));
}

#[test]
fn adding_states_twice_or_without_a_source_is_refused_by_name() {
    let mut world = World::new();
    world.insert_state(Flow::Battle).unwrap();
    let error = world.insert_state(Flow::Title).unwrap_err();
    assert!(error.to_string().contains("Flow"), "{error}");
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
    world.init_state::<Flow>(); // does nothing
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
    let mut other = World::new();
    let error = other.add_computed_state::<InBattle>().unwrap_err();
    assert!(matches!(error, StateError::NoSource { .. }));
    assert!(error.to_string().contains("Flow"));
}

#[test]
fn a_failing_on_enter_system_is_reported_by_schedule_and_the_transition_completes() {
    let mut world = World::new();
    world.init_service::<Log>();
    world.init_state::<Flow>();
    world.add_system(
        NodeBuilder::new("boom")
            .in_schedule(OnEnter(Flow::Battle))
            .system(|| panic!("no battle today")),
    );
    world.add_system_to(OnEnter(Flow::Battle), logger("enter Battle"));
    world.add_system_to(
        OnTransition {
            from: Flow::Title,
            to: Flow::Battle,
        },
        logger("t"),
    );
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Battle);
    let error = world.run_iteration().unwrap_err();
    let IterationError::State(StateError::ScheduleFailed { schedule, .. }) = &error else {
        panic!("{error}");
    };
    assert!(
        schedule.starts_with("OnEnter(") && schedule.ends_with("Flow::Battle)"),
        "{schedule}"
    );
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
    // The failed schedule stopped where a failed plan stops (nothing new
    // started after the panic); the transition's earlier steps ran.
    assert_eq!(world.get::<Log>().unwrap().0, ["t"]);
    // The next frame runs normally.
    world.run_iteration().unwrap();
}

#[test]
fn a_failed_frame_applies_no_transition_until_the_next_state_point() {
    let mut world = World::new();
    world.init_state::<Flow>();
    world.insert(true);
    world.add_system(NodeBuilder::new("fails once").system(
        |fail: &mut bool, next: &mut NextState<Flow>| {
            next.set(Flow::Battle);
            if std::mem::take(fail) {
                panic!("once");
            }
        },
    ));
    world.run_iteration().unwrap_err();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Title));
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
}

#[test]
fn update_enters_the_initial_state_before_the_first_fixed_step() {
    let mut world = World::new();
    world.init_service::<Log>();
    world.init_state::<Flow>();
    world.add_system_to(OnEnter(Flow::Title), logger("enter Title"));
    world.add_system(
        NodeBuilder::new("fixed")
            .cadence(Cadence::Fixed)
            .system(logger("fixed"))
            .run_if(in_state(Flow::Title)),
    );
    world.update(std::time::Duration::from_millis(20)).unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["enter Title", "fixed"]);
    let state: &State<Flow> = world.get().unwrap();
    assert_eq!(**state, Flow::Title);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Menu {
    #[default]
    Closed,
}
impl States for Menu {}

#[test]
fn states_added_by_a_state_schedule_are_checked_and_enter_at_the_next_point() {
    #[derive(Default)]
    struct Seen(Vec<String>);
    let mut world = World::new();
    world.init_service::<Seen>();
    world.init_state::<Flow>();
    world.add_system(
        NodeBuilder::new("adds states")
            .in_schedule(OnEnter(Flow::Battle))
            .world(|world: &mut World| {
                // Flow is being settled right now: still refused by name.
                let again = world.insert_state(Flow::Results);
                let menu = world.insert_state(Menu::Closed);
                let seen = &mut world.get_mut::<Seen>().unwrap().0;
                seen.push(format!("{}", again.is_err()));
                seen.push(format!("{}", menu.is_ok()));
            }),
    );
    world.add_system_to(OnEnter(Menu::Closed), |seen: &mut Seen| {
        seen.0.push("menu entered".to_owned());
    });
    world.run_iteration().unwrap();
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
    assert_eq!(world.get::<Seen>().unwrap().0, ["true", "true"]);
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Seen>().unwrap().0,
        ["true", "true", "menu entered"]
    );
}
