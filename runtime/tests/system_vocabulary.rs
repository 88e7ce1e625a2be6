//! Issue 36, systems and conditions: `Local<T>` per-registration state,
//! run-condition combinators (`not`, `and`, `or`), `init_service` and
//! `service_scope`, custom commands (`Commands::queue`), and the prelude.
//! Execution is tried on every executor kind and on 1, 2 and 4 threads.

#[path = "support/executors.rs"]
mod executors;

use executors::{PLANNED, executors, quiet_planned_panics, world_on};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use sluice::prelude::*;
use sluice::{BoundaryStep, NodeIndex};

fn iterations() -> u64 {
    if cfg!(miri) { 3 } else { 20 }
}

/// Per-registration totals, written through shared access (so the systems
/// writing them run together).
struct Totals(Vec<AtomicU64>);

impl Totals {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| AtomicU64::new(0)).collect())
    }

    fn read(&self) -> Vec<u64> {
        self.0.iter().map(|t| t.load(Ordering::Relaxed)).collect()
    }
}

#[test]
fn each_registration_keeps_its_own_local_across_iterations() {
    let systems = if cfg!(miri) { 4 } else { 16 };
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Totals::new(systems));
        for i in 0..systems {
            world.add_system(NodeBuilder::new(format!("count{i}")).system(
                move |mut runs: Local<u64>, totals: &Totals| {
                    // Each registration starts at zero and steps by its own
                    // index, so a shared or reset local shows.
                    *runs += i as u64 + 1;
                    totals.0[i].store(*runs, Ordering::Relaxed);
                },
            ));
        }
        for _ in 0..iterations() {
            world.run_iteration().unwrap();
        }
        let expected: Vec<u64> = (0..systems as u64)
            .map(|i| (i + 1) * iterations())
            .collect();
        assert_eq!(
            world.get::<Totals>().unwrap().read(),
            expected,
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn locals_declare_nothing_so_they_add_no_edge() {
    let mut world = World::new();
    let first = world.add_system(NodeBuilder::new("a").system(|mut n: Local<u32>| *n += 1));
    let second = world.add_system(NodeBuilder::new("b").system(|mut n: Local<u32>| *n += 1));
    let plan = world.plan().unwrap();
    assert!(plan.edge_between(first, second).is_none());
    assert_eq!(plan.stage_of(first), plan.stage_of(second));
}

#[derive(Default)]
struct Log(Vec<(&'static str, u32)>);

fn every_other(mut calls: Local<u32>) -> bool {
    *calls += 1;
    calls.is_multiple_of(2)
}

#[test]
fn body_and_conditions_keep_their_own_locals() {
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Log::default());
        // `every_other` guards two nodes: each registration's condition
        // counts its own calls, apart from its body's runs.
        world.add_system(
            NodeBuilder::new("a")
                .system(|mut runs: Local<u32>, log: &mut Log| {
                    *runs += 1;
                    log.0.push(("a", *runs));
                })
                .run_if(every_other),
        );
        world.add_system(
            NodeBuilder::new("b")
                .system(|mut runs: Local<u32>, log: &mut Log| {
                    *runs += 1;
                    log.0.push(("b", *runs));
                })
                .run_if(every_other)
                .run_if(every_other),
        );
        for _ in 0..4 {
            world.run_iteration().unwrap();
        }
        // a: held on calls 2 and 4. b: its first condition holds on 2 and
        // 4; its second is evaluated only then (its calls 1 and 2): holds in
        // iteration 4 alone.
        assert_eq!(
            world.get::<Log>().unwrap().0,
            [("a", 1), ("a", 2), ("b", 1)],
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn two_locals_of_one_function_are_two_values() {
    #[derive(Default)]
    struct Pair(u32, u32);
    fn step(mut a: Local<u32>, mut b: Local<u32>, pair: &mut Pair) {
        *a += 1;
        *b += 10;
        *pair = Pair(*a, *b);
    }
    let mut world = World::new();
    world.insert(Pair::default());
    world.add_system(step);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    let pair = world.get::<Pair>().unwrap();
    assert_eq!((pair.0, pair.1), (2, 20));
}

static DROPPED: AtomicU32 = AtomicU32::new(0);

/// A local that counts its drops, and is `Send` but not `Sync`.
#[derive(Default)]
struct Tracked {
    runs: std::cell::Cell<u32>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct LastRun(u32);

fn tracked(state: Local<Tracked>, last: &mut LastRun) {
    state.runs.set(state.runs.get() + 1);
    last.0 = state.runs.get();
}

#[test]
fn removing_a_node_drops_its_locals_and_adding_it_again_starts_afresh() {
    for (executor, threads) in executors() {
        DROPPED.store(0, Ordering::SeqCst);
        let mut world = world_on(executor, threads);
        world.insert(LastRun::default());
        let node = world.add_system(tracked);
        for _ in 0..3 {
            world.run_iteration().unwrap();
        }
        assert_eq!(world.get::<LastRun>().unwrap().0, 3);
        world.remove_node(node).unwrap();
        assert_eq!(DROPPED.load(Ordering::SeqCst), 1, "dropped with the node");
        world.run_iteration().unwrap();
        world.add_system(tracked);
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<LastRun>().unwrap().0,
            1,
            "{executor:?} on {threads}: a new registration starts from Default"
        );
        drop(world);
        assert_eq!(
            DROPPED.load(Ordering::SeqCst),
            2,
            "the second one with the world"
        );
    }
}

#[sluice::system]
fn macro_counter(mut runs: Local<'_, u32>, last: &mut LastRun) {
    *runs += 1;
    last.0 = *runs;
}

#[test]
fn a_system_macro_takes_a_local() {
    let mut world = World::new();
    world.insert(LastRun::default());
    world.add_system(macro_counter);
    world.run_iteration().unwrap();
    world.run_iteration().unwrap();
    assert_eq!(world.get::<LastRun>().unwrap().0, 2);
}

// Combinators.

struct A(bool);
struct B(bool);
/// How many times each condition was evaluated.
#[derive(Default)]
struct Evaluated {
    a: AtomicU32,
    b: AtomicU32,
}

fn a(a: &A, seen: &Evaluated) -> bool {
    seen.a.fetch_add(1, Ordering::Relaxed);
    a.0
}

fn b(b: &B, seen: &Evaluated) -> bool {
    seen.b.fetch_add(1, Ordering::Relaxed);
    b.0
}

/// Which of the guarded systems ran.
#[derive(Default)]
struct Ran(Vec<&'static str>);

fn combined_world(executor: ExecutorKind, threads: usize, x: bool, y: bool) -> World {
    let mut world = world_on(executor, threads);
    world.insert(A(x));
    world.insert(B(y));
    world.insert(Evaluated::default());
    world.insert(Ran::default());
    let ran = |name: &'static str| move |ran: &mut Ran| ran.0.push(name);
    world.add_system(NodeBuilder::new("and").system(ran("and")).run_if(a.and(b)));
    world.add_system(NodeBuilder::new("or").system(ran("or")).run_if(a.or(b)));
    world.add_system(NodeBuilder::new("not").system(ran("not")).run_if(not(a)));
    world.add_system(
        NodeBuilder::new("nested")
            .system(ran("nested"))
            .run_if(not(a.and(b)).or(not(b))),
    );
    world
}

#[test]
fn combinators_follow_their_truth_tables_with_short_circuit() {
    for (executor, threads) in executors() {
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut world = combined_world(executor, threads, x, y);
            world.run_iteration().unwrap();
            let mut expected = Vec::new();
            if x && y {
                expected.push("and");
            }
            if x || y {
                expected.push("or");
            }
            if !x {
                expected.push("not");
            }
            // `not(a.and(b)).or(not(b))`, written as the combinators nest.
            #[allow(clippy::nonminimal_bool)]
            let nested = !(x && y) || !y;
            if nested {
                expected.push("nested");
            }
            assert_eq!(
                world.get::<Ran>().unwrap().0,
                expected,
                "{executor:?} on {threads}, a={x} b={y}"
            );
            // `a` is evaluated once by each of the four; `b` only where
            // short-circuit lets it.
            let seen = world.get::<Evaluated>().unwrap();
            assert_eq!(seen.a.load(Ordering::Relaxed), 4);
            let b_and = u32::from(x);
            let b_or = u32::from(!x);
            // nested: not(a.and(b)) evaluates b when a holds; `.or(not(b))`
            // evaluates b again when the left side is false (a and b hold).
            let b_nested = u32::from(x) + u32::from(x && y);
            assert_eq!(
                seen.b.load(Ordering::Relaxed),
                b_and + b_or + b_nested,
                "a={x} b={y}"
            );
        }
    }
}

#[test]
fn a_combination_reads_the_union_of_its_operands() {
    let mut world = World::new();
    world.insert(A(true));
    world.insert(B(true));
    world.insert(Evaluated::default());
    world.insert(Ran::default());
    let writes_b: NodeIndex = world.add_system(NodeBuilder::new("writes_b").system(|b: &mut B| {
        b.0 = true;
    }));
    // `b` is only evaluated when `a` is false, yet the node reads B every
    // iteration: it is ordered after the gate of B.
    let guarded = world.add_system(
        NodeBuilder::new("guarded")
            .system(|ran: &mut Ran| ran.0.push("guarded"))
            .run_if(a.or(b)),
    );
    let plan = world.plan().unwrap();
    assert!(plan.edge_between(writes_b, guarded).is_some());
}

fn panics(_: &A) -> bool {
    panic!("{PLANNED}: a condition");
}

fn yes() -> bool {
    true
}

#[test]
fn a_panicking_operand_fails_its_node_and_short_circuit_skips_it() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(A(true));
        world.insert(Ran::default());
        world.add_system(
            NodeBuilder::new("skipped_panic")
                .system(|ran: &mut Ran| ran.0.push("skipped_panic"))
                .run_if(yes.or(panics)),
        );
        world.add_system(
            NodeBuilder::new("fails")
                .system(|ran: &mut Ran, commands: Commands| {
                    ran.0.push("fails");
                    commands.insert(7u8);
                })
                .run_if(yes.and(not(panics))),
        );
        let error = world.run_iteration().unwrap_err();
        let IterationError::NodePanicked(panic) = &error else {
            panic!("{executor:?} on {threads}: {error}");
        };
        assert_eq!(panic.node(), "fails");
        assert_eq!(world.get::<Ran>().unwrap().0, ["skipped_panic"]);
        assert!(world.get::<u8>().is_none());
        // The next iteration runs normally (and fails the same way).
        assert!(world.run_iteration().is_err());
        assert_eq!(world.get::<Ran>().unwrap().0.len(), 2);
    }
}

// Services made from the world, and scoped.

#[derive(Default, Debug, PartialEq)]
struct Gravity(u32);

struct Fall(u32);

impl FromWorld for Fall {
    fn from_world(world: &mut World) -> Self {
        Fall(world.get::<Gravity>().map_or(0, |g| g.0) * 2)
    }
}

#[test]
fn init_service_makes_what_is_missing_and_keeps_what_is_there() {
    let mut world = World::new();
    world.init_service::<Gravity>();
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(0)));
    world.insert(Gravity(5));
    world.init_service::<Gravity>();
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(5)), "kept");
    world.init_service::<Fall>();
    assert_eq!(world.get::<Fall>().unwrap().0, 10, "made from the world");
}

#[test]
fn service_scope_lends_the_value_and_puts_it_back_even_after_a_panic() {
    quiet_planned_panics();
    let mut world = World::new();
    assert_eq!(world.service_scope(|_, _: &mut Gravity| 1), None);
    world.insert(Gravity(1));
    let seen = world.service_scope(|world, gravity: &mut Gravity| {
        assert!(world.get::<Gravity>().is_none(), "absent inside");
        // A nested scope of the same service finds nothing.
        assert_eq!(world.service_scope(|_, _: &mut Gravity| ()), None);
        gravity.0 += 1;
        gravity.0
    });
    assert_eq!(seen, Some(2));
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(2)));
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.service_scope(|_, gravity: &mut Gravity| {
            gravity.0 = 9;
            panic!("{PLANNED}: inside a scope");
        })
    }));
    assert!(unwound.is_err());
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(9)), "put back");
    // A value inserted inside is replaced by the scoped one.
    world.service_scope(|world, _: &mut Gravity| world.insert(Gravity(100)));
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(9)));
}

#[test]
fn a_node_requiring_a_scoped_service_is_reported_missing_inside() {
    let mut world = World::new();
    world.insert(Gravity(1));
    world.add_system(|g: &Gravity| assert!(g.0 > 0));
    world.run_iteration().unwrap();
    let inner = world.service_scope(|world, _: &mut Gravity| world.run_iteration());
    assert!(matches!(
        inner,
        Some(Err(IterationError::MissingServices(_)))
    ));
    world.run_iteration().unwrap();
}

// Custom commands.

#[derive(Default)]
struct Landed(Vec<String>);

#[derive(Debug)]
struct Tag;

/// Two nodes, the later-registered one first in plan order, each
/// interleaving built-in commands with custom ones.
fn custom_commands_world(executor: ExecutorKind, threads: usize) -> World {
    let mut world = world_on(executor, threads);
    world.insert(Landed::default());
    let record = |name: &'static str| {
        move |world: &mut World| {
            let tags = world.query::<&Tag>().iter().count();
            world
                .get_mut::<Landed>()
                .unwrap()
                .0
                .push(format!("{name} after {tags} tags"));
        }
    };
    world.add_system(NodeBuilder::new("second").after("first").system(
        move |commands: Commands| {
            commands.queue(record("second.0"));
            commands.spawn((Tag,));
            commands.queue(record("second.1"));
        },
    ));
    world.add_system(NodeBuilder::new("first").system(move |commands: Commands| {
        commands.spawn((Tag,));
        commands.queue(record("first.0"));
        commands.spawn((Tag,));
        commands.queue(record("first.1"));
    }));
    world
}

#[test]
fn custom_commands_land_in_plan_order_then_record_order() {
    for (executor, threads) in executors() {
        let mut world = custom_commands_world(executor, threads);
        world.run_iteration().unwrap();
        assert_eq!(
            world.get::<Landed>().unwrap().0,
            [
                "first.0 after 1 tags",
                "first.1 after 2 tags",
                "second.0 after 2 tags",
                "second.1 after 3 tags",
            ],
            "{executor:?} on {threads}"
        );
    }
}

#[test]
fn a_panicking_custom_command_is_reported_by_name_and_the_others_land() {
    quiet_planned_panics();
    for (executor, threads) in executors() {
        let mut world = world_on(executor, threads);
        world.insert(Landed::default());
        world.add_system(NodeBuilder::new("queues").system(|commands: Commands| {
            commands.queue(|world: &mut World| {
                world.get_mut::<Landed>().unwrap().0.push("before".into())
            });
            commands.queue(|world: &mut World| {
                world.get_mut::<Landed>().unwrap().0.push("half".into());
                panic!("{PLANNED}: a custom command");
            });
            commands.insert(3u16);
            commands.queue(|world: &mut World| {
                world.get_mut::<Landed>().unwrap().0.push("after".into())
            });
        }));
        let error = world.run_iteration().unwrap_err();
        let IterationError::Boundary(failures) = &error else {
            panic!("{executor:?} on {threads}: {error}");
        };
        assert_eq!(failures.len(), 1);
        let BoundaryStep::Command { index, what } = failures[0].step() else {
            panic!("{:?}", failures[0].step());
        };
        assert_eq!(*index, 1);
        assert!(what.starts_with("custom command `"), "{what}");
        assert!(
            what.contains("system_vocabulary.rs:"),
            "names where: {what}"
        );
        assert_eq!(
            world.get::<Landed>().unwrap().0,
            ["before", "half", "after"]
        );
        assert_eq!(world.get::<u16>(), Some(&3));
        // The next iteration runs normally.
        assert!(world.run_iteration().is_err());
        assert_eq!(world.get::<Landed>().unwrap().0.len(), 6);
    }
}

#[test]
fn a_custom_command_may_change_the_world_but_not_run_it() {
    let mut world = World::new();
    world.insert(Landed::default());
    world.add_system(NodeBuilder::new("queues").system(|commands: Commands| {
        commands.queue(|world: &mut World| {
            let refused = world.run_iteration();
            let text = match refused {
                Err(IterationError::Reentrant) => "refused",
                _ => "ran",
            };
            world.get_mut::<Landed>().unwrap().0.push(text.into());
            world.insert(Gravity(4));
        });
    }));
    world.run_iteration().unwrap();
    assert_eq!(world.get::<Landed>().unwrap().0, ["refused"]);
    assert_eq!(world.get::<Gravity>(), Some(&Gravity(4)));
    // After the command, the world runs again.
    world.run_iteration().unwrap();
}

#[test]
fn a_failed_nodes_custom_commands_never_run() {
    quiet_planned_panics();
    let mut world = World::new();
    world.insert(Landed::default());
    world.add_system(NodeBuilder::new("fails").system(|commands: Commands| {
        commands.queue(|world: &mut World| world.get_mut::<Landed>().unwrap().0.push("ran".into()));
        panic!("{PLANNED}: after queueing");
    }));
    assert!(world.run_iteration().is_err());
    assert!(world.get::<Landed>().unwrap().0.is_empty());
}
