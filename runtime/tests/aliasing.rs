//! No safe code may alias a service: a node that names one service twice in
//! conflicting ways is refused (SL0009) before its body can run, on every
//! registration path. Each test is one reproducer of issue 8; run under Miri
//! they show that nothing reaches the aliasing body.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice::{
    AccessKind, Commands, DeclaredBy, DiagnosticKind, IterationError, Next, NextValue, NodeBuilder,
    Out, World,
};

#[derive(Debug, Default)]
struct A(u64);
#[derive(Debug, Default)]
struct S(Vec<u64>);

/// Runs one iteration that must be refused with SL0009 for `node` on
/// `service` (by type name suffix), and checks the body never ran.
fn refused(world: &mut World, ran: &AtomicUsize, node: &str, service: &str) {
    let error = world.run_iteration().expect_err("the node is refused");
    let IterationError::Plan(errors) = &error else {
        panic!("expected a plan error, got {error}");
    };
    let diagnostic = errors
        .errors()
        .find(|d| d.code == "SL0009")
        .unwrap_or_else(|| panic!("no SL0009 in {errors}"));
    assert_eq!(diagnostic.nodes, [node]);
    assert!(
        diagnostic.message.contains(&format!("`{node}`")) && diagnostic.message.contains(service),
        "the message names the node and the service: {}",
        diagnostic.message
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the body never ran");
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

#[test]
fn two_gated_parameters_of_one_service() {
    let mut world = World::new();
    world.insert(A(1));
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_system(NodeBuilder::new("n").system(move |a: &mut A, b: &mut A| {
        seen.fetch_add(1, Ordering::SeqCst);
        a.0 += b.0;
    }));
    refused(&mut world, &ran, "n", "A");
    let plan_error = world.run_iteration().expect_err("still refused next time");
    let IterationError::Plan(errors) = plan_error else {
        panic!("a plan error")
    };
    let DiagnosticKind::DeclaredTwice { twice, .. } = &errors.errors().next().unwrap().kind else {
        panic!("SL0009's structured form");
    };
    assert_eq!(twice.first.kind, AccessKind::Gated);
    assert_eq!(twice.first.by, DeclaredBy::Parameter(0));
    assert_eq!(twice.second.by, DeclaredBy::Parameter(1));
}

#[test]
fn gated_and_shared_parameters_of_one_service() {
    let mut world = World::new();
    world.insert(A(1));
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_system(
        NodeBuilder::new("observer").system(move |a: &mut A, b: &A| {
            seen.fetch_add(1, Ordering::SeqCst);
            a.0 += 1;
            assert_eq!(a.0, b.0 + 1);
        }),
    );
    refused(&mut world, &ran, "observer", "A");
}

#[test]
fn an_unnamed_closure_with_gated_and_shared_parameters() {
    let mut world = World::new();
    world.insert(A(1));
    static RAN: AtomicUsize = AtomicUsize::new(0);
    let index = world.add_system(|a: &mut A, b: &A| {
        RAN.fetch_add(1, Ordering::SeqCst);
        a.0 += b.0;
    });
    let error = world.run_iteration().expect_err("refused");
    let IterationError::Plan(errors) = error else {
        panic!("a plan error")
    };
    let diagnostic = errors.errors().next().unwrap();
    assert_eq!(diagnostic.code, "SL0009");
    assert!(matches!(diagnostic.kind, DiagnosticKind::DeclaredTwice { node, .. } if node == index));
    assert_eq!(RAN.load(Ordering::SeqCst), 0);
}

#[test]
fn a_factory_reading_what_its_out_parameter_replaces() {
    let mut world = World::new();
    world.insert(S(vec![1, 2, 3]));
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_system(
        NodeBuilder::new("rebuild").system(move |s: &S, mut out: Out<'_, S>| {
            seen.fetch_add(1, Ordering::SeqCst);
            let first = &s.0[0];
            out.set(S(vec![4]));
            assert_eq!(*first, 1);
        }),
    );
    refused(&mut world, &ran, "rebuild", "S");
}

#[test]
fn two_out_parameters_of_one_service() {
    let mut world = World::new();
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_system(NodeBuilder::new("twice").system(
        move |mut a: Out<'_, S>, mut b: Out<'_, S>| {
            seen.fetch_add(1, Ordering::SeqCst);
            std::thread::scope(|scope| {
                scope.spawn(move || a.set(S(vec![1])));
                scope.spawn(move || b.set(S(vec![2])));
            });
        },
    ));
    refused(&mut world, &ran, "twice", "S");
}

#[test]
fn next_beside_its_pending_value() {
    let mut world = World::new();
    world.insert(A(0));
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_system(NodeBuilder::new("stale").system(
        move |mut next: Next<'_, A>, pending: &mut NextValue<A>| {
            seen.fetch_add(1, Ordering::SeqCst);
            next.set(A(7));
            let _ = pending.get();
        },
    ));
    refused(&mut world, &ran, "stale", "NextValue");
}

#[test]
fn an_out_parameter_beside_a_return_value_of_one_service() {
    let mut world = World::new();
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_factory(
        NodeBuilder::new("double").factory(move |mut out: Out<'_, A>| {
            seen.fetch_add(1, Ordering::SeqCst);
            out.set(A(1));
            A(2)
        }),
    );
    refused(&mut world, &ran, "double", "A");
}

/// Builder calls hand out nothing: `.reads` with `.gates` merges (gating
/// subsumes reading), and the context lends one borrow at a time.
#[test]
fn builder_calls_merge_for_a_context_body() {
    let mut world = World::new();
    world.insert(A(1));
    world.add_system(NodeBuilder::new("ctx").reads::<A>().gates::<A>().run(|cx| {
        let before = cx.read::<A>().0;
        cx.write::<A>().0 = before + 1;
    }));
    world.run_iteration().expect("merged declarations run");
    assert_eq!(world.get::<A>().unwrap().0, 2);
}

#[test]
fn a_node_registered_by_commands_is_refused_before_it_runs() {
    let mut world = World::new();
    world.insert(A(1));
    static RAN: AtomicUsize = AtomicUsize::new(0);
    world.add_system(
        NodeBuilder::new("spawner").system(|commands: Commands<'_>| {
            commands.add_system(NodeBuilder::new("late").system(|a: &mut A, b: &mut A| {
                RAN.fetch_add(1, Ordering::SeqCst);
                a.0 += b.0;
            }));
        }),
    );
    let mut refusal = None;
    for _ in 0..4 {
        if let Err(error) = world.run_iteration() {
            refusal = Some(error);
            break;
        }
    }
    let Some(IterationError::Plan(errors)) = refusal else {
        panic!("the late node's plan is refused, got {refusal:?}");
    };
    assert!(
        errors
            .errors()
            .any(|d| d.code == "SL0009" && d.nodes == ["late"])
    );
    assert_eq!(RAN.load(Ordering::SeqCst), 0);
}

/// What may repeat: shared with shared, a builder call restating a
/// parameter, and a run condition reading what the body gates.
#[test]
fn sound_repetitions_still_run() {
    let mut world = World::new();
    world.insert(A(1));
    world.insert(S(vec![1]));
    world.add_system(NodeBuilder::new("twice_shared").system(|a: &A, b: &A| {
        assert_eq!(a.0, b.0);
    }));
    world.add_system(
        NodeBuilder::new("restated")
            .gates::<A>()
            .after("twice_shared")
            .system(|a: &mut A| a.0 += 1),
    );
    world.add_system(
        NodeBuilder::new("guarded")
            .after("restated")
            .system(|a: &mut A| a.0 *= 10)
            .run_if(|a: &A| a.0 > 0),
    );
    world.add_system(NodeBuilder::new("step").system(|s: &mut S| {
        let next = s.0.len() as u64 + 1;
        s.0.push(next);
    }));
    world
        .run_iteration()
        .expect("sound repetitions are accepted");
    assert_eq!(world.get::<A>().unwrap().0, 20);
    assert_eq!(world.get::<S>().unwrap().0, [1, 2]);
}

/// A factory consuming what it produces contradicts producer-before-consumer,
/// as the macros say at compile time.
#[test]
fn a_factory_reading_what_it_returns() {
    let mut world = World::new();
    world.insert(S(vec![1]));
    let ran = counter();
    let seen = Arc::clone(&ran);
    world.add_factory(NodeBuilder::new("remesh").factory(move |previous: &S| {
        seen.fetch_add(1, Ordering::SeqCst);
        S(previous.0.clone())
    }));
    refused(&mut world, &ran, "remesh", "S");
}
