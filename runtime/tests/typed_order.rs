//! Issue 23: orders named by the compiler. `.after_node(f)` takes a function
//! item and `add_chain((a, b, c))` orders a run of systems; both resolve to
//! the labels a string order would write (the function's instance key), so
//! the plan is the same, and a cycle they make is SL0001 naming the nodes.

use sluice::{IntoSystem, NodeBuilder, World};

#[derive(Debug, Default)]
struct Log(Vec<&'static str>);

fn read(log: &mut Log) {
    log.0.push("read");
}

fn think(log: &mut Log) {
    log.0.push("think");
}

fn act(log: &mut Log) {
    log.0.push("act");
}

fn world() -> World {
    let mut world = World::new();
    world.insert(Log::default());
    world
}

/// Every edge of the plan among our nodes, as `(from, to, reasons)` text.
fn edges(world: &mut World) -> Vec<(String, String, Vec<String>)> {
    let plan = world.plan().unwrap();
    let mut out: Vec<_> = plan
        .edges()
        .filter(|edge| !plan.node_name(edge.from).starts_with("sluice::"))
        .map(|edge| {
            (
                plan.node_name(edge.from).to_owned(),
                plan.node_name(edge.to).to_owned(),
                edge.reasons.iter().map(|r| edge.reason_text(r)).collect(),
            )
        })
        .collect();
    out.sort();
    out
}

fn log(world: &mut World) -> Vec<&'static str> {
    world.run_iteration().unwrap();
    std::mem::take(&mut world.get_mut::<Log>().unwrap().0)
}

#[test]
fn a_typed_order_is_the_string_order_by_key() {
    // Registered backwards: only the order puts `read` first.
    let mut by_string = world();
    by_string.add_system(act.into_system().after_node("typed_order::think"));
    by_string.add_system(think.into_system().after_node("typed_order::read"));
    by_string.add_system(read);
    let mut typed = world();
    typed.add_system(act.into_system().after_node(think));
    typed.add_system(think.into_system().after_node(read));
    typed.add_system(read);
    let expected = edges(&mut by_string);
    assert!(!expected.is_empty());
    assert_eq!(edges(&mut typed), expected);
    assert_eq!(log(&mut typed), ["read", "think", "act"]);
    assert_eq!(log(&mut by_string), ["read", "think", "act"]);
}

#[test]
fn before_node_orders_too() {
    let mut world = world();
    world.add_system(act);
    world.add_system(NodeBuilder::new("first").before_node(act).system(read));
    assert_eq!(log(&mut world), ["read", "act"]);
}

#[test]
fn a_chain_orders_its_systems_in_tuple_order() {
    let mut world = world();
    // The typed `after` a chain writes beats registration order.
    let nodes = world.add_chain((act, NodeBuilder::new("middle").system(think), read));
    assert_eq!(nodes.len(), 3);
    assert_eq!(log(&mut world), ["act", "think", "read"]);
    let plan = world.plan().unwrap();
    assert!(plan.why(nodes[0], nodes[1]).is_some());
    assert!(plan.why(nodes[1], nodes[2]).is_some());
    assert!(plan.why(nodes[0], nodes[2]).is_some());
}

#[test]
fn a_chain_of_one_system_twice_is_refused_by_key() {
    let mut world = world();
    world.add_chain((read, read));
    let error = world.plan().unwrap_err().to_string();
    assert!(error.contains("SL0004"), "{error}");
    assert!(error.contains("typed_order::read"), "{error}");
}

#[test]
fn a_chain_meeting_itself_is_sl0001_naming_the_nodes() {
    let mut world = world();
    // A system chained with itself under a second key: key#2 after key,
    // and key after key#2 by a typed order.
    world.add_chain((
        read.into_system().after_node("read#2"),
        read.into_system().key("read#2"),
    ));
    let error = world.plan().unwrap_err().to_string();
    assert!(error.contains("SL0001"), "{error}");
    assert!(error.contains("read -> read"), "{error}");
}

#[test]
fn a_cycle_of_typed_orders_is_sl0001_naming_the_nodes() {
    let mut world = world();
    world.add_system(read.into_system().after_node(act));
    world.add_chain((think, act.into_system().after_node(think)));
    world.add_system(
        NodeBuilder::new("tail")
            .after_node(read)
            .system(|_: &Log| {}),
    );
    let mut cyclic = self::world();
    cyclic.add_system(read.into_system().after_node(think));
    cyclic.add_chain((read, think));
    let _ = world.plan().unwrap();
    let error = cyclic.plan().unwrap_err().to_string();
    assert!(error.contains("SL0001"), "{error}");
    assert!(error.contains("cycle: "), "{error}");
    assert!(error.contains("read") && error.contains("think"), "{error}");
}

#[test]
fn a_self_order_by_function_is_sl0001() {
    let mut world = world();
    world.add_system(read.into_system().after_node(read));
    let error = world.plan().unwrap_err().to_string();
    assert_eq!(
        error,
        "the plan could not be built:\nerror[SL0001]: cycle: read -> read; remove or reverse one of these orderings"
    );
}
