//! SL0008: conflicting nodes ordered only by registration order.
//!
//! The only pass over all pairs of nodes in the planner; it runs only when
//! ambiguity reporting is on.

use fixedbitset::FixedBitSet;

use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level};
use crate::plan::order::Explicit;
use crate::plan::{GraphView, NodeIndex, Plan};

/// Every pair of conflicting nodes that no path of explicit or produce edges
/// joins, earlier node first, in plan order.
pub(crate) fn find(
    graph: &GraphView<'_>,
    edges: &Explicit,
    released: &[u32],
    plan: &Plan,
    level: Level,
) -> Vec<Diagnostic> {
    let vertices = edges.vertices();
    // What each vertex reaches through explicit edges, built in reverse
    // topological order so every successor's set is complete first.
    let mut reach: Vec<FixedBitSet> = vec![FixedBitSet::with_capacity(vertices); vertices];
    for &vertex in released.iter().rev() {
        let mut set = std::mem::take(&mut reach[vertex as usize]);
        for &edge in edges.successors(vertex) {
            let to = edges.to[edge as usize] as usize;
            set.insert(to);
            set.union_with(&reach[to]);
        }
        reach[vertex as usize] = set;
    }
    let nodes = graph.nodes();
    let order = &plan.compiled().order;
    let mut found = Vec::new();
    for (i, &first) in order.iter().enumerate() {
        let first_access = nodes[first as usize].access();
        for &second in &order[i + 1..] {
            let second_access = nodes[second as usize].access();
            if first_access.conflicts(second_access)
                && !reach[first as usize].contains(second as usize)
            {
                let services = first_access.conflicting_services(second_access);
                found.push(ambiguity(
                    plan,
                    NodeIndex(first),
                    NodeIndex(second),
                    services,
                    level,
                ));
            }
        }
    }
    found
}

fn ambiguity(
    plan: &Plan,
    first: NodeIndex,
    second: NodeIndex,
    services: Vec<crate::access::ServiceId>,
    level: Level,
) -> Diagnostic {
    let (a, b) = (plan.node_name(first), plan.node_name(second));
    let on = if services.is_empty() {
        "conflict (one is exclusive)".to_owned()
    } else {
        let names: Vec<&str> = services.iter().map(|&s| plan.service_name(s)).collect();
        format!("conflict on {}", names.join(", "))
    };
    let message = format!(
        "`{a}` and `{b}` {on} and are ordered only by registration order (`{a}` first); \
         declare `{b}` after `{a}` (or the reverse) to make the order intentional"
    );
    let kind = DiagnosticKind::Ambiguity {
        first,
        second,
        services,
    };
    Diagnostic::new(level, kind, message, vec![a.to_owned(), b.to_owned()])
}
