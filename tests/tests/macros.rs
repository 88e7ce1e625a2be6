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

fn predecessors(world: &mut World, name: &str) -> Vec<String> {
    let plan = world.plan().unwrap();
    let node = plan
        .order()
        .find(|&n| plan.node_name(n) == name)
        .unwrap_or_else(|| panic!("no node `{name}`"));
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
    ordering::first::run(&mut log);
    assert_eq!(log.0, ["first"]);
    assert_eq!(
        factories::mesher::run(&Terrain(3), &mut Builds::default()),
        Mesh(30)
    );
    assert_eq!(factories::advance::run(&Level(1)), Level(2));
    assert!(conditions::running(&Paused(false)));
}
