//! States: values, requests, the state point, schedules, scoped entities,
//! computed states, the transition bound, on every executor.

use sluice::prelude::*;
use sluice::state::{
    ComputedStates, DespawnOnEnter, DespawnOnExit, DespawnWhen, MAX_TRANSITIONS, NextState,
    OnEnter, OnExit, OnTransition, State, StateError, States, SubStates, in_state, state_exists,
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

/// Lives inside `Flow::Battle`: running or paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Pause {
    #[default]
    Running,
    Paused,
}
impl States for Pause {}
impl SubStates for Pause {
    type Source = Flow;
    fn should_exist(flow: &Flow) -> Option<Self> {
        (*flow == Flow::Battle).then(Pause::default)
    }
}

/// Lives inside `Pause::Paused`: the pause menu's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum PauseMenu {
    #[default]
    Main,
    Options,
}
impl States for PauseMenu {}
impl SubStates for PauseMenu {
    type Source = Pause;
    fn should_exist(pause: &Pause) -> Option<Self> {
        (*pause == Pause::Paused).then(PauseMenu::default)
    }
}

/// Lives in Battle and Results alike: a transition between them keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Hud {
    #[default]
    Shown,
    Hidden,
}
impl States for Hud {}
impl SubStates for Hud {
    type Source = Flow;
    fn should_exist(flow: &Flow) -> Option<Self> {
        (*flow != Flow::Title).then(Hud::default)
    }
}

fn log_enter_exit<S: States + Copy>(world: &mut World, values: &[S]) {
    for &value in values {
        let enter: &'static str = Box::leak(format!("enter {value:?}").into_boxed_str());
        let exit: &'static str = Box::leak(format!("exit {value:?}").into_boxed_str());
        world.add_system_to(OnEnter(value), logger(enter));
        world.add_system_to(OnExit(value), logger(exit));
    }
}

/// `flow_world` with `Pause` and `PauseMenu` inside Battle, logged.
fn sub_state_world(world: World) -> World {
    let mut world = flow_world(world);
    world.add_sub_state::<Pause>().unwrap();
    world.add_sub_state::<PauseMenu>().unwrap();
    log_enter_exit(&mut world, &[Pause::Running, Pause::Paused]);
    log_enter_exit(&mut world, &[PauseMenu::Main, PauseMenu::Options]);
    world.add_system(
        NodeBuilder::new("tick")
            .after("fight")
            .system(logger("tick"))
            .run_if(in_state(Pause::Running)),
    );
    world
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

#[test]
fn a_sub_state_enters_after_its_source_and_leaves_before_it_deepest_first_on_every_executor() {
    let mut runs = Vec::new();
    for (name, world) in worlds() {
        let mut world = sub_state_world(world);
        let mut steps = Vec::new();
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), None, "{name}");
        steps.push(take_log(&mut world));
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Running), "{name}");
        assert_eq!(world.state::<PauseMenu>(), None, "{name}");
        steps.push(take_log(&mut world));
        world.set_next_state(Pause::Paused);
        world.run_iteration().unwrap();
        world.set_next_state(PauseMenu::Options);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<PauseMenu>(), Some(&PauseMenu::Options));
        steps.push(take_log(&mut world));
        world.set_next_state(Flow::Results);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), None, "{name}");
        assert_eq!(world.state::<PauseMenu>(), None, "{name}");
        steps.push(take_log(&mut world));
        runs.push(steps);
    }
    let expected: [&[&str]; 4] = [
        &["enter Title"],
        &[
            "exit Title",
            "transition Title->Battle",
            "enter Battle",
            "enter Running",
        ],
        &[
            "fight",
            "tick",
            "exit Running",
            "enter Paused",
            "enter Main",
            "fight",
            "exit Main",
            "enter Options",
        ],
        // Deepest first out, before the source's own exit.
        &[
            "fight",
            "exit Options",
            "exit Paused",
            "exit Battle",
            "enter Results",
        ],
    ];
    for (steps, expected) in runs[0].iter().zip(expected) {
        assert_eq!(steps, expected);
    }
    assert!(runs.iter().all(|run| *run == runs[0]), "{runs:?}");
}

#[test]
fn a_same_value_transition_of_the_source_reenters_its_sub_states_with_their_initial_value() {
    for (name, world) in worlds() {
        let mut world = sub_state_world(world);
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        world.set_next_state(Pause::Paused);
        world.run_iteration().unwrap();
        take_log(&mut world);
        // A restart of the battle is a new stay: the pause is not kept.
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Running), "{name}");
        assert_eq!(
            take_log(&mut world),
            [
                "fight",
                "exit Main",
                "exit Paused",
                "exit Battle",
                "enter Battle",
                "enter Running"
            ],
            "{name}"
        );
        // set_if_neq to the value held is dropped: the pause stays.
        world.set_next_state(Pause::Paused);
        world.run_iteration().unwrap();
        world
            .get_mut::<NextState<Flow>>()
            .unwrap()
            .set_if_neq(Flow::Battle);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Paused), "{name}");
    }
}

#[test]
fn a_sub_state_request_waiting_at_entry_is_its_first_value_and_one_while_absent_is_dropped() {
    for (name, world) in worlds() {
        let mut world = sub_state_world(world);
        world.run_iteration().unwrap();
        take_log(&mut world);
        // Asked for while it does not exist: dropped at the state point.
        world.set_next_state(Pause::Paused);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), None, "{name}");
        assert_eq!(world.get::<NextState<Pause>>().unwrap().pending(), None);
        // Asked for in the frame its source is entered: its first value.
        world.set_next_state(Flow::Battle);
        world.set_next_state(Pause::Paused);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Paused), "{name}");
        assert_eq!(
            take_log(&mut world),
            [
                "exit Title",
                "transition Title->Battle",
                "enter Battle",
                "enter Paused",
                "enter Main"
            ],
            "{name}"
        );
    }
}

#[test]
fn a_sub_state_keeps_its_value_through_a_source_transition_to_a_value_it_lives_in() {
    let mut world = flow_world(World::new());
    world.add_sub_state::<Hud>().unwrap();
    log_enter_exit(&mut world, &[Hud::Shown, Hud::Hidden]);
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    world.set_next_state(Hud::Hidden);
    world.run_iteration().unwrap();
    take_log(&mut world);
    world.set_next_state(Flow::Results);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Hud>(), Some(&Hud::Hidden));
    assert_eq!(
        take_log(&mut world),
        ["fight", "exit Battle", "enter Results"]
    );
    world.set_next_state(Flow::Title);
    world.run_iteration().unwrap();
    assert_eq!(world.state::<Hud>(), None);
    assert_eq!(
        take_log(&mut world),
        ["exit Hidden", "exit Results", "enter Title"]
    );
}

#[test]
fn a_sub_states_scoped_entities_are_gone_before_its_source_exits() {
    #[derive(Default)]
    struct SeenAtBattleExit(Option<usize>);
    struct Overlay;
    let mut world = World::new();
    world.init_service::<SeenAtBattleExit>();
    world.init_state::<Flow>();
    world.add_sub_state::<Pause>().unwrap();
    world.add_system_to(OnEnter(Pause::Paused), |commands: Commands| {
        commands.spawn((Overlay, DespawnOnExit(Pause::Paused)));
    });
    world.add_system(
        NodeBuilder::new("battle exit counts overlays")
            .in_schedule(OnExit(Flow::Battle))
            .world(|world: &mut World| {
                let overlays = world.query::<&Overlay>().iter().count();
                world.get_mut::<SeenAtBattleExit>().unwrap().0 = Some(overlays);
            }),
    );
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    world.set_next_state(Pause::Paused);
    world.run_iteration().unwrap();
    assert_eq!(world.query::<&Overlay>().iter().count(), 1);
    world.set_next_state(Flow::Title);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<SeenAtBattleExit>().unwrap().0, Some(0));
    assert!(!in_state_now(&world, Pause::Paused));
}

fn in_state_now<S: States>(world: &World, value: S) -> bool {
    world.state::<S>() == Some(&value)
}

#[test]
fn adding_a_sub_state_twice_or_before_its_source_is_refused_by_name() {
    let mut world = World::new();
    let error = world.add_sub_state::<Pause>().unwrap_err();
    assert!(matches!(error, StateError::NoSource { .. }), "{error}");
    let text = error.to_string();
    assert!(text.contains("Pause") && text.contains("Flow"), "{text}");
    world.init_state::<Flow>();
    world.add_sub_state::<Pause>().unwrap();
    let error = world.add_sub_state::<Pause>().unwrap_err();
    assert!(matches!(error, StateError::AlreadyAdded { .. }), "{error}");
    assert!(error.to_string().contains("Pause"));
    // A sub-state's sub-state needs the sub-state first, not just its root.
    let mut other = World::new();
    other.init_state::<Flow>();
    assert!(matches!(
        other.add_sub_state::<PauseMenu>(),
        Err(StateError::NoSource { .. })
    ));
}

#[test]
fn a_sub_state_loop_past_the_bound_is_named_and_its_source_stands() {
    let mut world = sub_state_world(World::new());
    world.add_system_to(OnEnter(Pause::Paused), |next: &mut NextState<Pause>| {
        next.set(Pause::Running)
    });
    world.add_system_to(OnEnter(Pause::Running), |next: &mut NextState<Pause>| {
        next.set(Pause::Paused)
    });
    world.set_next_state(Flow::Battle);
    let error = world.run_iteration().unwrap_err();
    let IterationError::State(StateError::TooManyTransitions { state, chain }) = &error else {
        panic!("{error}");
    };
    assert!(state.ends_with("Pause"), "{state}");
    assert_eq!(chain[0], "none");
    assert_eq!(chain.len(), MAX_TRANSITIONS + 1);
    assert_eq!(world.state::<Flow>(), Some(&Flow::Battle));
}

#[test]
fn a_sub_state_requested_twice_in_one_frame_or_from_its_own_on_exit_on_every_executor() {
    let mut logs = Vec::new();
    for (name, world) in worlds() {
        // Two requests in plan order: the later wins.
        let mut world = sub_state_world(world);
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        world.add_system(
            NodeBuilder::new("pause").system(|next: &mut NextState<Pause>| next.set(Pause::Paused)),
        );
        world.add_system(
            NodeBuilder::new("resume")
                .after("pause")
                .system(|next: &mut NextState<Pause>| next.set(Pause::Running)),
        );
        take_log(&mut world);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Running), "{name}");
        let twice = take_log(&mut world);

        // Running's exit asks for Paused (if not already): a restart of
        // Running is followed, at the same state point, by the pause.
        let (_, world) = worlds()
            .into_iter()
            .find(|(other, _)| *other == name)
            .expect("the same executor");
        let mut world = sub_state_world(world);
        world.add_system_to(OnExit(Pause::Running), |next: &mut NextState<Pause>| {
            next.set_if_neq(Pause::Paused)
        });
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        take_log(&mut world);
        world.set_next_state(Pause::Running);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Pause>(), Some(&Pause::Paused), "{name}");
        logs.push((twice, take_log(&mut world)));
    }
    let (twice, from_exit) = &logs[0];
    assert_eq!(twice, &["fight", "tick", "exit Running", "enter Running"]);
    assert_eq!(
        from_exit,
        &[
            "fight",
            "tick",
            "exit Running",
            "enter Running",
            "exit Running",
            "enter Paused",
            "enter Main"
        ]
    );
    assert!(logs.iter().all(|log| *log == logs[0]), "{logs:?}");
}

#[test]
fn a_sub_states_exit_asking_its_source_for_another_value_is_applied_after_the_transition() {
    for (name, world) in worlds() {
        let mut world = sub_state_world(world);
        world.add_system_to(OnExit(Pause::Running), |next: &mut NextState<Flow>| {
            next.set(Flow::Results)
        });
        world.set_next_state(Flow::Battle);
        world.run_iteration().unwrap();
        take_log(&mut world);
        // Battle -> Title: Running leaves first and asks for Results,
        // which is applied once Title is entered.
        world.set_next_state(Flow::Title);
        world.run_iteration().unwrap();
        assert_eq!(world.state::<Flow>(), Some(&Flow::Results), "{name}");
        assert_eq!(
            take_log(&mut world),
            [
                "fight",
                "tick",
                "exit Running",
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
fn a_sub_states_panicking_exit_is_named_and_its_source_still_leaves() {
    let mut world = World::new();
    world.init_service::<Log>();
    world.init_state::<Flow>();
    world.add_sub_state::<Pause>().unwrap();
    world.add_system(
        NodeBuilder::new("boom")
            .in_schedule(OnExit(Pause::Running))
            .system(|| panic!("the pause cannot end")),
    );
    world.add_system_to(OnExit(Flow::Battle), logger("exit Battle"));
    world.add_system_to(OnEnter(Flow::Title), logger("enter Title"));
    world.set_next_state(Flow::Battle);
    world.run_iteration().unwrap();
    take_log(&mut world);
    world.set_next_state(Flow::Title);
    let error = world.run_iteration().unwrap_err();
    let IterationError::State(StateError::ScheduleFailed {
        state, schedule, ..
    }) = &error
    else {
        panic!("{error}");
    };
    assert!(state.ends_with("Pause"), "{state}");
    assert!(schedule.ends_with("Pause::Running)"), "{schedule}");
    // The source's transition completed all the same.
    assert_eq!(world.state::<Flow>(), Some(&Flow::Title));
    assert_eq!(world.state::<Pause>(), None);
    assert_eq!(take_log(&mut world), ["exit Battle", "enter Title"]);
    world.run_iteration().unwrap();
}
