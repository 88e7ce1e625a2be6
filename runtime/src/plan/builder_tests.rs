//! Unit tests of the plan builder's internals (`builder.rs`).

use super::*;

/// The packed sort gives back every edge, in tuple order.
#[test]
fn sort_incoming_round_trips_in_tuple_order() {
    let lane = |service, kind| Reason::Lane {
        service: ServiceId(service),
        kind,
    };
    let edges = vec![
        (3, lane(7, LaneKind::SharedAfterGate)),
        (1, Reason::Marker(MarkerIndex(9))),
        (3, lane(7, LaneKind::GateAfterShared)),
        (3, Reason::Exclusive),
        (0, Reason::Produces(ServiceId(2))),
        (1, Reason::After),
        (3, lane(2, LaneKind::GateAfterGate)),
        (1, Reason::Before),
    ];
    let mut expected = edges.clone();
    expected.sort_unstable();
    let mut sorted = edges;
    sort_incoming(&mut sorted, &mut Vec::new());
    assert_eq!(sorted, expected);
}

/// Counted, not timed: the end of each group of a deep chain has one
/// successor (its parent's end), so folding it costs no edge, but each
/// folded end copies the whole subtree below it (quadratic entries:
/// 100,000 levels overflowed the arena's `u32` offsets into a panic).
#[test]
fn a_folded_marker_stands_for_a_bounded_number_of_vertices() {
    use crate::NodeBuilder;
    use crate::organise::Group;
    use crate::plan::Graph;

    let depth = 2_000;
    let mut graph = Graph::new();
    for i in 0..depth {
        let mut group = Group::new(format!("G{i}"));
        if i > 0 {
            group = group.in_group(format!("G{}", i - 1));
        }
        if i > 1 {
            group = group.after(format!("s{}", i - 1));
        }
        graph.add_group(group);
        graph.add_node(NodeBuilder::new(format!("s{i}")).in_group(format!("G{i}")));
    }
    let view = graph.view();
    let mut diagnostics = Vec::new();
    let resolved = Resolved::new(&view, &mut diagnostics);
    let targets = Targets::new(&view, &resolved, &mut diagnostics);
    let selection = Selection::UPDATE;
    let edges = Explicit::collect(
        &view,
        &resolved,
        &targets,
        None,
        &selection,
        true,
        &mut diagnostics,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let sorted = order::sort(&view, &resolved, &edges).expect("acyclic");
    let folded = MarkerPredecessors::new(&edges, &sorted.vertices);
    // The chain is deeper than the bound, so a fold of it would show.
    assert!(MAX_FOLDED < depth);
    let longest = folded.spans.iter().map(|&(start, end)| end - start).max();
    assert!(
        longest <= Some(MAX_FOLDED),
        "a marker stands for {longest:?}"
    );
    assert!(folded.arena.len() <= MAX_FOLDED * folded.spans.len());
    // Kept or folded, the order is the same: each node after its
    // parent group's node.
    let plan = graph.build(&PlanOptions::default()).expect("plans");
    let order: Vec<u32> = plan.order().map(|node| node.0).collect();
    assert_eq!(order, (0..depth as u32).collect::<Vec<_>>());
}
