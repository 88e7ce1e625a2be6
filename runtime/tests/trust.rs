//! Issue 8's other reproducers: services keyed by `TypeId`, a transactional
//! boundary, closures that are two nodes, and built-in services no user
//! signature can reach.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::{BoundaryStep, Commands, IterationError, Next, NodeBuilder, World};

mod first {
    #[derive(Debug, PartialEq)]
    pub struct S(pub u32);
}

/// Two types that `std::any::type_name` spells alike are two services.
#[test]
fn two_types_with_one_type_name_are_two_services() {
    let (a_name, b_name, mut world) = {
        let mut world = World::new();
        let a = {
            #[derive(Debug, PartialEq)]
            struct S(u32);
            world.insert(S(1));
            world.add_system(NodeBuilder::new("reader_a").system(|s: &S| assert_eq!(s.0, 1)));
            std::any::type_name::<S>()
        };
        let b = {
            #[derive(Debug, PartialEq)]
            struct S(&'static str);
            world.insert(S("two"));
            world.add_system(NodeBuilder::new("reader_b").system(|s: &S| assert_eq!(s.0, "two")));
            std::any::type_name::<S>()
        };
        (a, b, world)
    };
    assert_eq!(a_name, b_name, "the premise: one spelling for two types");
    world.insert(first::S(3));
    for _ in 0..3 {
        world
            .run_iteration()
            .expect("each reader finds its own service");
    }
    assert_eq!(world.get::<first::S>(), Some(&first::S(3)));
}

/// A value whose `Drop` panics when asked to.
struct Grenade {
    armed: bool,
}

impl Drop for Grenade {
    fn drop(&mut self) {
        if self.armed {
            panic!("grenade went off in Drop");
        }
    }
}

#[derive(Debug, PartialEq)]
struct Marker(u32);

#[test]
fn a_panicking_drop_while_commands_land_loses_nothing_else() {
    let mut world = World::new();
    world.insert(Grenade { armed: true });
    world.add_system(
        NodeBuilder::new("recorder").system(|commands: Commands<'_>| {
            commands.insert(Marker(1));
            commands.insert(Grenade { armed: false }); // drops the armed one: panics
            commands.insert(Marker(42));
        }),
    );
    let error = world
        .run_iteration()
        .expect_err("the boundary reports the panic");
    let IterationError::Boundary(failures) = &error else {
        panic!("expected a boundary failure, got {error}");
    };
    assert_eq!(failures.len(), 1);
    let BoundaryStep::Command { index, what } = failures[0].step() else {
        panic!("a command failed: {:?}", failures[0]);
    };
    assert_eq!(*index, 1);
    assert!(what.contains("Grenade"), "{what}");
    assert_eq!(failures[0].message(), Some("grenade went off in Drop"));
    assert!(error.to_string().contains("command #1"), "{error}");
    assert_eq!(
        world.get::<Marker>(),
        Some(&Marker(42)),
        "the later command landed"
    );
    assert!(
        !world.get::<Grenade>().unwrap().armed,
        "the new value is in place"
    );
    world
        .run_iteration()
        .expect("the next iteration runs normally (its grenades are disarmed)");
}

#[test]
fn a_panicking_drop_while_a_next_value_swaps_in_is_reported() {
    let mut world = World::new();
    world.insert(Grenade { armed: true });
    world.insert(Marker(0));
    world.add_system(
        NodeBuilder::new("arm")
            .system(|mut next: Next<'_, Grenade>| next.set(Grenade { armed: false })),
    );
    world.add_system(NodeBuilder::new("count").system(|commands: Commands<'_>| {
        commands.insert(Marker(42));
    }));
    let error = world
        .run_iteration()
        .expect_err("the swap's panic is reported");
    let IterationError::Boundary(failures) = &error else {
        panic!("expected a boundary failure, got {error}");
    };
    assert!(
        matches!(failures[0].step(), BoundaryStep::NextSwap { service } if service.ends_with("Grenade"))
    );
    assert!(!world.get::<Grenade>().unwrap().armed, "the swap landed");
    assert_eq!(
        world.get::<Marker>(),
        Some(&Marker(42)),
        "commands still landed"
    );
    world
        .run_iteration()
        .expect("the next iteration runs normally");
}

#[derive(Debug, Default)]
struct Tick(u32);

#[test]
fn two_unnamed_closures_are_two_nodes() {
    let mut world = World::new();
    world.insert(Tick(0));
    let first = world.add_system(|t: &mut Tick| t.0 += 1);
    let second = world.add_system(|t: &mut Tick| t.0 += 10);
    world.run_iteration().expect("two closures do not collide");
    assert_eq!(world.get::<Tick>().unwrap().0, 11);
    let plan = world.plan().unwrap();
    let (a, b) = (plan.node_name(first), plan.node_name(second));
    assert_ne!(a, b);
    for name in [a, b] {
        assert!(
            name.starts_with("two_unnamed_closures_are_two_nodes::{closure}@")
                && name.contains("trust.rs:"),
            "a closure is named after where it was written: {name}"
        );
    }
}

#[test]
fn one_closure_registered_again_and_again_gets_numbered_names() {
    let mut world = World::new();
    world.insert(Tick(0));
    for _ in 0..3 {
        world.add_system(|t: &mut Tick| t.0 += 1);
    }
    world.run_iteration().expect("numbered, not duplicates");
    assert_eq!(world.get::<Tick>().unwrap().0, 3);
    let plan = world.plan().unwrap();
    let names: Vec<&str> = plan.order().map(|n| plan.node_name(n)).collect();
    assert!(names.iter().any(|name| name.ends_with("#2")), "{names:?}");
    assert!(names.iter().any(|name| name.ends_with("#3")), "{names:?}");
}

#[test]
fn a_closure_registered_through_commands_every_frame_joins_each_time() {
    let mut world = World::new();
    world.insert(Tick(0));
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            commands.add_system(|t: &mut Tick| t.0 += 1);
        }),
    );
    for _ in 0..6 {
        world
            .run_iteration()
            .expect("closures registered per frame never collide");
    }
    assert!(world.get::<Tick>().unwrap().0 > 0);
}

#[test]
fn the_same_function_item_twice_is_still_a_duplicate() {
    fn bump(t: &mut Tick) {
        t.0 += 1;
    }
    let mut world = World::new();
    world.insert(Tick(0));
    world.add_system(bump);
    world.add_system(bump);
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("SL0004 for a real duplicate");
    };
    assert!(errors.errors().any(|d| d.code == "SL0004"));
}

/// Names of the built-in services reach nothing: a node declaring them by
/// name gets a service of its own, and the scheduling still runs.
#[test]
fn built_in_services_are_unreachable_by_name() {
    let mut world = World::new();
    world.insert(Tick(0));
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&ran);
    let thief = world.add_system(
        NodeBuilder::new("thief")
            .produces_named(
                "sluice::system::output::NextValue<sluice::world::schedule::PlanOutcome>",
            )
            .produces_named("sluice::world::schedule::Registrations")
            .produces_named("sluice::world::commands::CommandQueue")
            .run(move |_| {
                seen.fetch_add(1, Ordering::SeqCst);
            }),
    );
    static LATE: AtomicUsize = AtomicUsize::new(0);
    static SPAWNED: AtomicUsize = AtomicUsize::new(0);
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            if SPAWNED.fetch_add(1, Ordering::SeqCst) == 0 {
                commands.add_system(NodeBuilder::new("late").system(|t: &mut Tick| {
                    LATE.fetch_add(1, Ordering::SeqCst);
                    t.0 += 1;
                }));
            }
        }),
    );
    for _ in 0..4 {
        world
            .run_iteration()
            .expect("the thief touches nothing of the world's");
    }
    // A node that produces is a factory: it ran once, then had nothing new.
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // Had the names reached the built-in services, the thief would be a
    // producer in their lanes: before `sluice::plan` (index 0, which reads
    // the registrations) and before `sluice::execution` (index 1, which
    // reads the next plan).
    let plan = world.plan().expect("planned");
    for builtin in [sluice::NodeIndex(0), sluice::NodeIndex(1)] {
        assert!(
            plan.why(thief, builtin).is_none(),
            "the thief orders a built-in node: {:?}",
            plan.why(thief, builtin)
        );
    }
    assert!(
        LATE.load(Ordering::SeqCst) > 0,
        "nodes registered through commands still run"
    );
}
