//! Macro-declared systems, factories and run conditions, run in a world: the
//! signature is the declaration, and the expansion behaves exactly as the
//! hand-written `NodeBuilder` registration would.

use sluice::{Next, Out, World, factory, run_condition, system};

#[derive(Debug, Default, PartialEq)]
struct Log(Vec<&'static str>);
#[derive(Debug, Default, PartialEq)]
struct Hp(i32);
#[derive(Debug, Default, PartialEq)]
struct Armor(i32);
#[derive(Debug, Default, PartialEq)]
struct Paused(bool);

/// The world's own nodes (the plan and execution factories) are named
/// `sluice::..`; the tests look at theirs only.
fn is_ours(name: &str) -> bool {
    !name.starts_with("sluice::")
}

fn order(world: &mut World) -> Vec<String> {
    let plan = world.plan().unwrap();
    plan.order()
        .map(|n| plan.node_name(n).to_owned())
        .filter(|name| is_ours(name))
        .collect()
}

fn stage(world: &mut World, name: &str) -> usize {
    let plan = world.plan().unwrap();
    let node = plan
        .order()
        .find(|&n| plan.node_name(n) == name)
        .unwrap_or_else(|| panic!("no node `{name}`"));
    plan.stage_of(node)
}

fn node_named(plan: &sluice::Plan, name: &str) -> sluice::NodeIndex {
    plan.order()
        .find(|&n| plan.node_name(n) == name)
        .unwrap_or_else(|| panic!("no node `{name}`"))
}

/// Every node of ours `name` waits for, directly or through others.
fn ancestors(world: &mut World, name: &str) -> Vec<String> {
    let plan = world.plan().unwrap();
    let node = node_named(&plan, name);
    let mut names: Vec<String> = plan
        .order()
        .filter(|&other| other != node && plan.why(other, node).is_some())
        .map(|other| plan.node_name(other).to_owned())
        .filter(|name| is_ours(name))
        .collect();
    names.sort();
    names
}

fn predecessors(world: &mut World, name: &str) -> Vec<String> {
    let plan = world.plan().unwrap();
    let node = node_named(&plan, name);
    let mut names: Vec<String> = plan
        .edges()
        .filter(|e| e.to == node)
        .map(|e| plan.node_name(e.from).to_owned())
        .filter(|name| is_ours(name))
        .collect();
    names.sort();
    names
}

mod ordering {
    use super::*;

    /// Registered last, runs first.
    #[system(before = "second")]
    pub fn first(log: &mut Log) {
        log.0.push("first");
    }

    #[system]
    pub fn second(log: &mut Log) {
        log.0.push("second");
    }

    #[system(after = "second", name = "third_by_name")]
    pub fn third(log: &mut Log) {
        log.0.push("third");
    }

    /// A marker named by a path: its label is the last segment.
    #[system(after = self::Late)]
    pub fn after_marker(log: &mut Log) {
        log.0.push("after_marker");
    }

    /// Only its name matters, as the label of the marker.
    #[allow(dead_code)]
    pub struct Late;
}

#[test]
fn after_before_and_name_order_the_nodes() {
    let mut world = World::new();
    world.insert(Log::default());
    world.add_marker(sluice::Marker::new("Late").after("third_by_name"));
    world.add_system(ordering::after_marker);
    world.add_system(ordering::third);
    world.add_system(ordering::second);
    world.add_system(ordering::first);
    world.run_iteration().unwrap();
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["first", "second", "third", "after_marker"]
    );
    assert_eq!(
        order(&mut world),
        ["first", "second", "third_by_name", "after_marker"]
    );
}

mod silenced {
    use super::*;

    #[system(ambiguous_with = "poison")]
    pub fn health(hp: &mut Hp) {
        hp.0 += 1;
    }

    #[system]
    pub fn poison(hp: &mut Hp) {
        hp.0 -= 1;
    }

    #[system(ambiguous_with_all)]
    pub fn regen(hp: &mut Hp) {
        hp.0 += 2;
    }
}

#[test]
fn ambiguous_with_silences_the_named_pair_and_ambiguous_with_all_every_pair() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.set_plan_options(sluice::PlanOptions {
        ambiguity: sluice::AmbiguityLevel::Warn,
        ..sluice::PlanOptions::default()
    });
    world.add_system(silenced::health);
    world.add_system(silenced::poison);
    world.add_system(silenced::regen);
    let plan = world.plan().unwrap();
    let sl0008: Vec<(sluice::Level, String)> = plan
        .diagnostics()
        .iter()
        .filter(|d| d.code == "SL0008")
        .map(|d| (d.level, d.to_string()))
        .collect();
    assert!(
        sl0008
            .iter()
            .all(|(level, _)| *level == sluice::Level::Silenced),
        "every pair is silenced, none warned: {sl0008:?}"
    );
    let text: String = sl0008.iter().map(|(_, text)| text.as_str()).collect();
    assert!(
        text.contains("`health` and `poison` (silenced by `health`: ambiguous_with(\"poison\"))"),
        "{text}"
    );
    assert!(text.contains("ambiguous_with_all()"), "{text}");
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>().unwrap().0, 2);
}

mod lanes {
    use super::*;

    #[system]
    pub fn read_a(hp: &Hp, _armor: &Armor) {
        assert!(hp.0 >= 0);
    }

    #[system]
    pub fn read_b(hp: &Hp) {
        assert!(hp.0 >= 0);
    }

    #[system]
    pub fn gate(hp: &mut Hp) {
        hp.0 += 1;
    }

    #[system]
    pub fn read_c(hp: &Hp, log: &mut Log) {
        log.0.push(if hp.0 == 1 {
            "saw the gate"
        } else {
            "missed it"
        });
    }
}

#[test]
fn shared_accessors_run_together_and_a_gate_is_a_barrier() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.insert(Armor(0));
    world.insert(Log::default());
    world.add_system(lanes::read_a);
    world.add_system(lanes::read_b);
    world.add_system(lanes::gate);
    world.add_system(lanes::read_c);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["saw the gate"]);
    assert!(
        predecessors(&mut world, "read_b").is_empty(),
        "reads pass each other"
    );
    assert_eq!(predecessors(&mut world, "gate"), ["read_a", "read_b"]);
    assert_eq!(predecessors(&mut world, "read_c"), ["gate"]);
    assert_eq!(stage(&mut world, "read_a"), stage(&mut world, "read_b"));
    assert!(stage(&mut world, "read_a") < stage(&mut world, "gate"));
    assert!(stage(&mut world, "gate") < stage(&mut world, "read_c"));
}

mod aliases {
    use super::*;

    /// `Hp` by another name: one service, whatever names it.
    pub type Health = Hp;

    /// Shared twice, once through the alias: allowed (the compile-time check
    /// refuses only pairs where one access is not shared).
    #[system]
    pub fn compare(hp: &Hp, health: &Health, log: &mut Log) {
        log.0.push(if std::ptr::eq(hp, health) {
            "one service"
        } else {
            "two services"
        });
    }

    #[system]
    pub fn read(hp: &Hp) {
        assert!(hp.0 >= 0);
    }

    #[system]
    pub fn gate(health: &mut Health) {
        health.0 += 1;
    }
}

#[test]
fn shared_access_twice_through_an_alias_is_one_shared_access() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.insert(Log::default());
    world.add_system(aliases::compare);
    world.add_system(aliases::read);
    world.add_system(aliases::gate);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["one service"]);
    assert_eq!(world.get::<Hp>(), Some(&Hp(1)));
    assert!(
        predecessors(&mut world, "read").is_empty(),
        "both reads of `compare` are one shared access, which `read` passes"
    );
    assert_eq!(predecessors(&mut world, "gate"), ["compare", "read"]);
}

mod exclusive {
    use super::*;

    #[system]
    pub fn touches_hp(hp: &Hp) {
        let _ = hp;
    }

    #[system]
    pub fn touches_nothing() {}

    #[system(exclusive)]
    pub fn everything() {}
}

#[test]
fn an_exclusive_system_conflicts_with_everything() {
    let mut world = World::new();
    world.insert(Hp(0));
    world.add_system(exclusive::touches_hp);
    world.add_system(exclusive::touches_nothing);
    world.add_system(exclusive::everything);
    world.run_iteration().unwrap();
    assert_eq!(
        predecessors(&mut world, "everything"),
        ["touches_hp", "touches_nothing"]
    );
    let last = stage(&mut world, "everything");
    assert!(stage(&mut world, "touches_nothing") < last);
    assert!(stage(&mut world, "touches_hp") < last);
}

#[derive(Debug, PartialEq)]
struct Terrain(u32);
#[derive(Debug, PartialEq)]
struct Mesh(u32);
#[derive(Debug, PartialEq)]
struct Collider(u32);
#[derive(Debug, Default)]
struct Builds(u32);
#[derive(Debug, PartialEq)]
struct Level(u32);

mod factories {
    use super::*;

    /// One plain output: the runtime's factory path.
    #[factory]
    pub fn mesher(terrain: &Terrain, builds: &mut Builds) -> Mesh {
        builds.0 += 1;
        Mesh(terrain.0 * 10)
    }

    /// Two outputs from a tuple.
    #[factory]
    pub fn physics(mesh: &Mesh) -> (Collider, (Hp, Armor)) {
        (Collider(mesh.0 + 1), (Hp(mesh.0 as i32), Armor(2)))
    }

    #[system]
    pub fn draw(mesh: &Mesh, collider: &Collider, log: &mut Log) {
        log.0.push(if collider.0 == mesh.0 + 1 {
            "fresh"
        } else {
            "stale"
        });
    }

    /// An `Out<T>` parameter.
    #[factory]
    pub fn outliner(terrain: &Terrain, mut outline: Out<Collider>) {
        outline.set(Collider(terrain.0));
    }

    /// `Next<T>` in the return type: the body returns the plain value.
    #[factory]
    pub fn advance(level: &Level) -> Next<Level> {
        Level(level.0 + 1)
    }

    /// `Out<Next<T>>` and a plain output together.
    #[factory]
    pub fn advance_both(level: &Level, mut next: Out<Next<Hp>>) -> Next<Armor> {
        next.set(Hp(level.0 as i32));
        Armor(level.0 as i32 * 2)
    }

    #[system]
    pub fn watch(level: &Level, log: &mut Log) {
        log.0
            .push(["zero", "one", "two", "three"][level.0 as usize]);
    }
}

#[test]
fn factories_produce_before_their_consumers_and_skip_when_inputs_did_not_move() {
    let mut world = World::new();
    world.insert(Terrain(1));
    world.insert(Builds::default());
    world.insert(Log::default());
    // Registered before what they consume: produce edges order them.
    world.add_system(factories::draw);
    world.add_factory(factories::physics);
    world.add_factory(factories::mesher);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(10)));
    assert_eq!(world.get::<Collider>(), Some(&Collider(11)));
    assert_eq!(world.get::<Hp>(), Some(&Hp(10)));
    assert_eq!(world.get::<Armor>(), Some(&Armor(2)));
    assert_eq!(order(&mut world), ["mesher", "physics", "draw"]);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Builds>().unwrap().0, 1, "inputs did not move");
    world.get_mut::<Terrain>().unwrap().0 = 2;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Builds>().unwrap().0, 2);
    assert_eq!(world.get::<Collider>(), Some(&Collider(21)));
    assert_eq!(
        world.get::<Log>().unwrap().0,
        ["fresh", "fresh", "fresh", "fresh"]
    );
}

#[test]
fn out_parameters_produce() {
    let mut world = World::new();
    world.insert(Terrain(7));
    world.add_factory(factories::outliner);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Collider>(), Some(&Collider(7)));
}

#[test]
fn next_values_cross_the_iteration_boundary() {
    let mut world = World::new();
    world.insert(Level(0));
    world.insert(Log::default());
    world.add_factory(factories::advance);
    world.add_system(factories::watch);
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    // Each iteration's readers see the value swapped in at the last boundary.
    assert_eq!(world.get::<Log>().unwrap().0, ["zero", "one", "two"]);
    assert_eq!(world.get::<Level>(), Some(&Level(3)));
}

#[test]
fn next_outputs_from_a_parameter_and_the_return_type() {
    let mut world = World::new();
    world.insert(Level(3));
    world.add_factory(factories::advance_both);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Hp>(), Some(&Hp(3)));
    assert_eq!(world.get::<Armor>(), Some(&Armor(6)));
}

mod conditions {
    use super::*;

    #[run_condition]
    pub fn running(paused: &Paused) -> bool {
        !paused.0
    }

    #[run_condition]
    pub fn alive(hp: &Hp) -> bool {
        hp.0 > 0
    }

    #[system(run_if = running, run_if = alive)]
    pub fn tick(log: &mut Log) {
        log.0.push("tick");
    }

    #[factory(run_if = running)]
    pub fn count(hp: &Hp) -> Armor {
        Armor(hp.0)
    }
}

#[test]
fn run_conditions_skip_the_body_when_false() {
    let mut world = World::new();
    world.insert(Paused(false));
    world.insert(Hp(1));
    world.insert(Log::default());
    world.add_system(conditions::tick);
    world.add_factory(conditions::count);
    world.run_iteration().unwrap();
    world.get_mut::<Paused>().unwrap().0 = true;
    world.get_mut::<Hp>().unwrap().0 = 5;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Armor>(), Some(&Armor(1)), "paused: not counted");
    world.get_mut::<Paused>().unwrap().0 = false;
    world.get_mut::<Hp>().unwrap().0 = 0;
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["tick"]);
    assert_eq!(world.get::<Armor>(), Some(&Armor(0)));
}

#[derive(Debug, Default)]
struct Counter {
    ticks: u32,
}

impl Counter {
    /// `&mut self` gates the service `Counter`.
    #[system(after = "seed")]
    fn tick(&mut self, hp: &Hp) {
        self.ticks += hp.0 as u32;
    }

    /// `&self` reads it; the factory's registration is `total_factory()`.
    #[factory]
    fn total(&self) -> (Level, Next<Mesh>) {
        (Level(self.ticks), Mesh(self.ticks * 2))
    }

    #[run_condition]
    fn started(&self) -> bool {
        self.ticks > 0
    }
}

#[system]
fn seed(hp: &mut Hp) {
    hp.0 = 2;
}

#[system(run_if = Counter::started)]
fn after_start(log: &mut Log) {
    log.0.push("started");
}

#[test]
fn methods_are_systems_with_self_as_a_service() {
    let mut world = World::new();
    world.insert(Counter::default());
    world.insert(Hp(0));
    world.insert(Log::default());
    world.add_system(after_start);
    world.add_system(Counter::tick_system());
    world.add_system(seed);
    world.add_factory(Counter::total_factory());
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Counter>().unwrap().ticks, 2);
    assert_eq!(order(&mut world), ["after_start", "seed", "tick", "total"]);
    assert_eq!(world.get::<Level>(), Some(&Level(2)));
    // `Next<Mesh>` landed at the boundary that ended the iteration.
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(4)));
    assert!(world.get::<Log>().unwrap().0.is_empty());
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Mesh>(), Some(&Mesh(8)));
    assert_eq!(world.get::<Log>().unwrap().0, ["started"]);
}

#[test]
fn the_function_is_still_callable_as_written() {
    let mut log = Log::default();
    ordering::first(&mut log);
    assert_eq!(log.0, ["first"]);
    // A factory returns what it produced inside its `Declared`.
    assert_eq!(
        factories::mesher(&Terrain(3), &mut Builds::default()).into_inner(),
        Mesh(30)
    );
    assert_eq!(factories::advance(&Level(1)).into_inner(), Level(2));
    assert!(conditions::running(&Paused(false)));
}

/// A world holding an empty [`Log`].
fn log_world() -> World {
    let mut world = World::new();
    world.insert(Log::default());
    world
}

/// What the nodes wrote to the [`Log`].
fn logged(world: &World) -> &[&'static str] {
    &world.get::<Log>().unwrap().0
}

/// The names of `plan`'s nodes in plan order (ours only).
fn names_in(plan: &sluice::Plan) -> Vec<String> {
    plan.order()
        .map(|n| plan.node_name(n).to_owned())
        .filter(|name| is_ours(name))
        .collect()
}

/// The codes and messages of the plan's errors.
fn plan_errors(world: &mut World) -> Vec<(&'static str, String)> {
    match world.plan() {
        Err(sluice::IterationError::Plan(errors)) => errors
            .errors()
            .map(|d| (d.code, d.message.clone()))
            .collect(),
        other => panic!("expected plan errors, got {other:?}"),
    }
}

mod phases {
    use super::*;

    #[system(phase = PostUpdate)]
    pub fn present(log: &mut Log) {
        log.0.push("present");
    }

    /// No phase: `Update`, once anything names a phase.
    #[system]
    pub fn simulate(log: &mut Log) {
        log.0.push("simulate");
    }

    /// A path: its last segment is the phase.
    #[system(phase = sluice::Phase::PreUpdate)]
    pub fn input(log: &mut Log) {
        log.0.push("input");
    }

    #[factory(phase = Update)]
    pub fn level(log: &Log) -> Level {
        Level(log.0.len() as u32)
    }

    /// A phase is a marker an ordering may target (this one is in
    /// `Update`, after the end of `PreUpdate` twice over).
    #[system(after = PreUpdate)]
    pub fn after_input(log: &mut Log) {
        log.0.push("after_input");
    }
}

#[test]
fn phase_puts_the_node_in_its_phase() {
    let mut world = log_world();
    world.add_system(phases::present);
    world.add_system(phases::simulate);
    world.add_factory(phases::level);
    world.add_system(phases::after_input);
    world.add_system(phases::input);
    world.run_iteration().unwrap();
    assert_eq!(
        logged(&world),
        ["input", "simulate", "after_input", "present"]
    );
    // Within `Update`, registration order: `level` reads the log between
    // the two gates.
    assert_eq!(
        order(&mut world),
        ["input", "simulate", "level", "after_input", "present"]
    );
    assert_eq!(world.get::<Level>(), Some(&Level(2)));
}

mod groups {
    use super::*;

    #[system(group = "Render")]
    pub fn draw(log: &mut Log) {
        log.0.push("draw");
    }

    #[system(group = "Physics", order_last)]
    pub fn integrate(log: &mut Log) {
        log.0.push("integrate");
    }

    #[system(group = "Physics")]
    pub fn step(log: &mut Log) {
        log.0.push("step");
    }

    #[system(group = "Physics", order_first)]
    pub fn collide(log: &mut Log) {
        log.0.push("collide");
    }
}

#[test]
fn group_order_first_and_order_last_place_the_node_among_its_siblings() {
    let mut world = log_world();
    world.add_group(sluice::Group::new("Render").after("Physics"));
    world.add_group(sluice::Group::new("Physics"));
    world.add_system(groups::draw);
    world.add_system(groups::integrate);
    world.add_system(groups::step);
    world.add_system(groups::collide);
    world.run_iteration().unwrap();
    assert_eq!(logged(&world), ["collide", "step", "integrate", "draw"]);
    let plan = world.plan().unwrap();
    let group_of = |name: &str| {
        let node = plan.order().find(|&n| plan.node_name(n) == name).unwrap();
        let hierarchy = plan.hierarchy();
        hierarchy
            .group_of(node)
            .map(|g| hierarchy.group_name(g).to_owned())
    };
    assert_eq!(group_of("draw").as_deref(), Some("Render"));
    assert_eq!(group_of("collide").as_deref(), Some("Physics"));
    assert_eq!(group_of("integrate").as_deref(), Some("Physics"));
}

mod ranks {
    use super::*;

    #[system(set = "Audio")]
    pub fn mix(log: &Log) {
        let _ = log;
    }

    #[system(set = "Music")]
    pub fn compose(log: &Log) {
        let _ = log;
    }

    #[system]
    pub fn read_input(log: &Log) {
        let _ = log;
    }

    #[system(stage = "Late")]
    pub fn late(log: &Log) {
        let _ = log;
    }

    #[system(stage = "Early")]
    pub fn early(log: &Log) {
        let _ = log;
    }

    #[system(stage = "Erly")]
    pub fn misspelt(log: &Log) {
        let _ = log;
    }
}

#[test]
fn set_makes_the_node_a_member() {
    let mut world = log_world();
    world.add_set("Audio", 2);
    world.add_set("Music", 1);
    world.add_system(ranks::mix);
    world.add_system(ranks::read_input);
    world.add_system(ranks::compose);
    world.run_iteration().unwrap();
    // Readers only: no lane orders them; the sets do, and membership is
    // optional.
    assert_eq!(order(&mut world), ["read_input", "compose", "mix"]);
    assert_eq!(predecessors(&mut world, "read_input"), Vec::<String>::new());
    assert_eq!(predecessors(&mut world, "mix"), ["compose"]);
}

#[test]
fn stage_makes_the_node_a_member() {
    let mut world = log_world();
    world.add_stage("Late", 1);
    world.add_stage("Early", 0);
    world.add_system(ranks::late);
    world.add_system(ranks::early);
    world.add_system(ranks::misspelt);
    world.add_system(ranks::read_input);
    // Once stages are declared every node names a known one (SL0006): the
    // one naming none and the misspelt one (the world's own nodes need none).
    let ours: Vec<String> = plan_errors(&mut world)
        .into_iter()
        .map(|(code, message)| format!("{code}: {message}"))
        .collect();
    assert_eq!(ours.len(), 2, "{ours:#?}");
    assert!(ours.iter().all(|e| e.starts_with("SL0006")), "{ours:#?}");
    assert!(ours[0].contains("`read_input`") || ours[1].contains("`read_input`"));
    assert!(
        ours.iter()
            .any(|e| e.contains("`misspelt`") && e.contains("`Erly`"))
    );
}

/// The order the stages give (the world's own scheduling nodes need none).
#[test]
fn stage_orders_its_members() {
    let mut world = log_world();
    world.add_stage("Late", 1);
    world.add_stage("Early", 0);
    world.add_system(ranks::late);
    world.add_system(ranks::early);
    world.run_iteration().unwrap();
    assert_eq!(order(&mut world), ["early", "late"]);
    assert_eq!(predecessors(&mut world, "late"), ["early"]);
}

#[derive(Debug, Default, PartialEq)]
struct Steps(u32);

mod cadences {
    use super::*;

    #[system(cadence = Fixed)]
    pub fn physics(steps: &mut Steps) {
        steps.0 += 1;
    }

    #[factory(cadence = Variable)]
    pub fn seen(steps: &Steps) -> Level {
        Level(steps.0)
    }

    #[system(cadence = sluice::Cadence::Fixed, after = "physics")]
    pub fn after_physics(steps: &Steps) {
        assert!(steps.0 > 0);
    }
}

#[test]
fn cadence_fixed_puts_the_node_in_the_fixed_plan() {
    let mut world = World::new();
    world.insert(Steps(0));
    world.add_system(cadences::physics);
    world.add_system(cadences::after_physics);
    world.add_factory(cadences::seen);
    let plans = world.plans().unwrap();
    assert_eq!(names_in(plans.fixed()), ["physics", "after_physics"]);
    assert_eq!(names_in(plans.variable()), ["seen"]);
    // 40 ms of 1/60 s steps: two fixed steps, then the variable plan.
    world.update(std::time::Duration::from_millis(40)).unwrap();
    assert_eq!(world.get::<Steps>(), Some(&Steps(2)));
    assert_eq!(world.get::<Level>(), Some(&Level(2)));
}

#[derive(Debug, Default, PartialEq)]
struct Saves(u32);

mod schedules {
    use super::*;

    #[system(schedule = Startup)]
    pub fn boot(log: &mut Log) {
        log.0.push("boot");
    }

    #[system(schedule = "Save")]
    pub fn save(saves: &mut Saves) {
        saves.0 += 1;
    }

    #[system(schedule = Update)]
    pub fn frame(log: &mut Log) {
        log.0.push("frame");
    }
}

#[test]
fn schedule_puts_the_node_in_startup_or_a_named_schedule() {
    let mut world = log_world();
    world.insert(Saves(0));
    world.add_system(schedules::save);
    world.add_system(schedules::frame);
    world.add_system(schedules::boot);
    let plans = world.plans().unwrap();
    assert_eq!(names_in(plans.variable()), ["frame"]);
    let startup = plans.schedule(&sluice::Schedule::Startup).unwrap();
    assert_eq!(names_in(startup), ["boot"]);
    let save = plans.schedule(&sluice::Schedule::named("Save")).unwrap();
    assert_eq!(names_in(save), ["save"]);
    world.update(std::time::Duration::ZERO).unwrap();
    world.update(std::time::Duration::ZERO).unwrap();
    assert_eq!(logged(&world), ["boot", "frame", "frame"]);
    assert_eq!(world.get::<Saves>(), Some(&Saves(0)));
    world.run_schedule("Save").unwrap();
    assert_eq!(world.get::<Saves>(), Some(&Saves(1)));
}

mod tie_breaks {
    use super::*;

    #[system(order = 3)]
    pub fn last(log: &Log) {
        let _ = log;
    }

    #[system]
    pub fn middle(log: &Log) {
        let _ = log;
    }

    #[system(order = -1)]
    pub fn first(log: &Log) {
        let _ = log;
    }

    /// `order` never overrides a dependency.
    #[system(order = -5, after = "last")]
    pub fn after_last(log: &Log) {
        let _ = log;
    }
}

#[test]
fn order_breaks_ties_before_registration_order() {
    let mut world = log_world();
    world.add_system(tie_breaks::last);
    world.add_system(tie_breaks::after_last);
    world.add_system(tie_breaks::middle);
    world.add_system(tie_breaks::first);
    assert_eq!(order(&mut world), ["first", "middle", "last", "after_last"]);
}

/// Two systems of one name in two modules: two instance keys.
mod ai {
    use super::*;

    #[system]
    pub fn update(log: &mut Log) {
        log.0.push("ai");
    }
}

mod audio {
    use super::*;

    #[system]
    pub fn update(log: &mut Log) {
        log.0.push("audio");
    }

    /// A second instance of `ai::update`: the same name, its own key.
    #[system(name = "update", key = "update#2")]
    pub fn update_again(log: &mut Log) {
        super::ai::update(log);
    }
}

/// After every node named `update`: names find every instance.
#[system(after = "update")]
fn listen(log: &mut Log) {
    log.0.push("listen");
}

/// After one instance: a key finds exactly one.
#[system(before = "macros::ai::update")]
fn before_ai(log: &mut Log) {
    log.0.push("before_ai");
}

#[test]
fn the_default_instance_key_is_the_qualified_path() {
    let mut world = log_world();
    world.add_system(listen);
    world.add_system(ai::update);
    world.add_system(audio::update);
    world.add_system(before_ai);
    world.run_iteration().unwrap();
    assert_eq!(logged(&world), ["audio", "before_ai", "ai", "listen"]);
    let plan = world.plan().unwrap();
    assert!(
        plan.diagnostics().iter().all(|d| d.code != "SL0004"),
        "{:?}",
        plan.diagnostics()
    );
    assert_eq!(
        ancestors(&mut world, "listen"),
        ["before_ai", "update", "update"]
    );
}

#[test]
fn the_same_function_registered_twice_is_sl0004_until_a_key_sets_them_apart() {
    let mut world = log_world();
    world.add_system(ai::update);
    world.add_system(audio::update);
    world.add_system(ai::update);
    let errors = plan_errors(&mut world);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "SL0004");
    assert!(
        errors[0]
            .1
            .starts_with("`macros::ai::update` is registered twice"),
        "{}",
        errors[0].1
    );

    let mut world = log_world();
    world.add_system(ai::update);
    world.add_system(audio::update);
    world.add_system(audio::update_again);
    world.add_system(listen);
    world.run_iteration().unwrap();
    assert_eq!(logged(&world), ["ai", "audio", "ai", "listen"]);
    assert_eq!(
        ancestors(&mut world, "listen"),
        ["update", "update", "update"]
    );
}

/// A method's key is its path through its type.
#[system(after = "macros::Counter::tick")]
fn after_tick(log: &mut Log, counter: &Counter) {
    log.0.push(if counter.ticks > 0 {
        "ticked"
    } else {
        "not yet"
    });
}

#[test]
fn a_method_is_keyed_by_its_path_through_its_type() {
    let mut world = World::new();
    world.insert(Counter::default());
    world.insert(Hp(1));
    world.insert(Log::default());
    world.add_system(after_tick);
    world.add_system(Counter::tick_system());
    world.add_system(seed);
    world.run_iteration().unwrap();
    assert_eq!(logged(&world), ["ticked"]);
    assert_eq!(order(&mut world), ["seed", "tick", "after_tick"]);
}

mod gates {
    use sluice::{Gate, system};

    #[derive(Debug, Default)]
    pub struct Ledger(pub Vec<u32>);

    #[system]
    pub fn append(ledger: &mut super::gates::Ledger) {
        ledger.0.push(1);
    }

    #[system]
    pub fn audit(ledger: Gate<&Ledger>) {
        assert_eq!(ledger.0.len(), 1);
    }
}

/// `Gate<&T>` in a `#[system]` signature is a read-only gate.
#[test]
fn a_read_only_gate_in_a_system() {
    let mut world = sluice::World::new();
    world.insert(gates::Ledger::default());
    let append = world.add_system(gates::append);
    let audit = world.add_system(gates::audit);
    world.run_iteration().unwrap();
    let plan = world.plan().unwrap();
    assert_eq!(plan.barriers(plan_service(&plan, "Ledger")).len(), 2);
    assert!(plan.edge_between(append, audit).is_some());
}

fn plan_service(plan: &sluice::Plan, suffix: &str) -> sluice::ServiceId {
    (0..)
        .map(sluice::ServiceId)
        .find(|&id| plan.service_name(id).ends_with(suffix))
        .expect("the service is in the plan")
}

mod queries {
    use sluice::{Entity, Query, With};

    pub struct Pos(pub f32);
    pub struct Vel(pub f32);
    pub struct Player;

    /// A query parameter in a `#[system]`: its components are lanes.
    #[sluice::system(phase = Update)]
    pub fn integrate(mut moving: Query<(&mut Pos, &Vel)>) {
        moving.for_each(|(mut pos, vel)| pos.0 += vel.0);
    }

    #[sluice::system]
    pub fn follow(players: Query<(Entity, &Pos), With<Player>>, mut all: Query<&mut Vel>) {
        let target = players.iter().map(|(_, pos)| pos.0).next().unwrap_or(0.0);
        all.for_each(|mut vel| vel.0 = target.signum());
    }
}

#[test]
fn queries_in_macro_systems() {
    use queries::{Player, Pos, Vel};
    let mut world = World::new();
    let player = world.spawn((Pos(5.0), Vel(0.0), Player));
    let other = world.spawn((Pos(-1.0), Vel(0.0)));
    world.add_system(queries::integrate);
    world.add_system(queries::follow);
    let plan = world.plan().unwrap();
    let (integrate, follow) = (node_named(&plan, "integrate"), node_named(&plan, "follow"));
    assert!(
        plan.edge_between(integrate, follow).is_some()
            || plan.edge_between(follow, integrate).is_some(),
        "both touch Pos and Vel, one of them mutably: ordered"
    );
    for _ in 0..3 {
        world.run_iteration().unwrap();
    }
    let pos = |e| world.entity(e).unwrap().get::<Pos>().unwrap().0;
    assert!(
        pos(player) > 5.0 && pos(other) > -1.0,
        "{} {}",
        pos(player),
        pos(other)
    );
}

/// Issue 23: a `#[system]` or free `#[factory]` adds nothing to the value
/// namespace, so in the same module a parameter or a local with the node's
/// name is an ordinary binding (it was E0308, "`stats` is interpreted as a
/// unit struct", and the same for a factory's name).
mod bindings {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    pub struct Stats(pub u32);
    #[derive(Debug, PartialEq)]
    pub struct Banner(pub String);

    #[system]
    pub fn stats(score: &mut Stats) {
        score.0 += 1;
    }

    /// A factory whose parameter is named like the system.
    #[factory]
    pub fn banner(stats: &Stats) -> Banner {
        Banner(format!("banner: {} frames", stats.0))
    }

    /// A parameter named like the system.
    pub fn report(stats: &Stats) -> String {
        format!("{} frames", stats.0)
    }

    /// A parameter named like the factory.
    pub fn shout(banner: &Banner) -> String {
        banner.0.to_uppercase()
    }

    /// Locals named like the system and the factory, beside their
    /// registrations.
    pub fn run_twice() -> String {
        let mut world = World::new();
        world.insert(Stats(0));
        world.add_system(stats);
        world.add_factory(banner);
        world.run_iteration().unwrap();
        world.run_iteration().unwrap();
        let stats = world.get::<Stats>().unwrap();
        let banner = world.get::<Banner>().unwrap();
        format!("{}, {}", report(stats), shout(banner))
    }
}

#[test]
fn a_node_does_not_capture_a_binding_of_its_name() {
    assert_eq!(bindings::run_twice(), "2 frames, BANNER: 2 FRAMES");
    let mut score = bindings::Stats(5);
    bindings::stats(&mut score);
    assert_eq!(bindings::report(&score), "6 frames");
    let banner = bindings::banner(&score).into_inner();
    assert_eq!(bindings::shout(&banner), "BANNER: 6 FRAMES");
}

/// A typed order names a `#[factory]` by its function item too: its key.
#[test]
fn a_typed_order_reads_a_factory_declaration() {
    let mut world = World::new();
    world.insert(bindings::Stats(1));
    world.insert(Log::default());
    // The system shares nothing with the factory: only the typed order
    // puts it after.
    let after = world.add_system(
        sluice::NodeBuilder::new("after banner")
            .system(|log: &mut Log| log.0.push("after"))
            .after_node(bindings::banner),
    );
    let made = world.add_factory(bindings::banner);
    let plan = world.plan().unwrap();
    assert!(plan.edge_between(made, after).is_some(), "ordered by key");
}

/// A typed order names a `#[system]` by its function item: the key its
/// declaration carries (here a custom one).
mod typed {
    use super::*;

    #[system(key = "typed::first#custom")]
    pub fn first(log: &mut Log) {
        log.0.push("first");
    }

    #[system]
    pub fn second(log: &mut Log) {
        log.0.push("second");
    }
}

#[test]
fn a_typed_order_reads_a_system_declaration() {
    use sluice::IntoSystem;
    let mut world = log_world();
    world.add_system(typed::second.into_system().after_node(typed::first));
    world.add_system(typed::first);
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Log>().unwrap().0, ["first", "second"]);
    let mut chained = log_world();
    chained.add_chain((typed::second, typed::first));
    chained.run_iteration().unwrap();
    assert_eq!(chained.get::<Log>().unwrap().0, ["second", "first"]);
}
