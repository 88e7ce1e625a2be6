//! Nodes pinned to the main thread (reference 003: each iteration runs on
//! "the main thread and n-1 workers"), and the rule that only they may name
//! a service whose value is not `Send`.
//!
//! A node is pinned by its builder ([`NodeBuilder::pinned`](crate::NodeBuilder::pinned),
//! or a [`NonSend`](crate::NonSend) / [`NonSendMut`](crate::NonSendMut)
//! parameter, which pins its node), or by any group it sits in, at any
//! depth ([`Group::pinned`](crate::Group::pinned)). A two-point node's
//! commit ([`NodeSpec::commit`](crate::NodeSpec::commit)) is pinned with
//! its node: one registration, pinned at both points (a window's present
//! is such a commit). Pinning changes no edge: the executor only runs the
//! node on the thread that runs the iteration.

use crate::node::Point;
use crate::plan::NodeIndex;
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level};
use crate::plan::graph::GraphView;
use crate::plan::organise::Resolved;

/// Per registered node, whether it is pinned (by itself or a group, or,
/// for a commit point, by its node).
pub(crate) fn pinned_nodes(graph: &GraphView<'_>, resolved: &Resolved) -> Vec<bool> {
    let mut pinned = pinned_points(graph, resolved);
    for (index, node) in graph.nodes().iter().enumerate() {
        if let Point::Commit { of } = node.point()
            && pinned.get(of.index()).copied().unwrap_or(false)
        {
            pinned[index] = true;
        }
    }
    pinned
}

/// Per registered node, whether it is pinned by itself or a group.
fn pinned_points(graph: &GraphView<'_>, resolved: &Resolved) -> Vec<bool> {
    let groups = graph.organisation().groups();
    graph
        .nodes()
        .iter()
        .enumerate()
        .map(|(index, node)| {
            if node.is_pinned() {
                return true;
            }
            let mut group = resolved.node_group.get(index).copied().unwrap_or(u32::MAX);
            // `parent` is cut where a containment cycle was found, so this
            // walk ends; the bound is a second guard.
            for _ in 0..=groups.len() {
                let Some(declared) = groups.get(group as usize) else {
                    return false;
                };
                if declared.is_pinned() {
                    return true;
                }
                group = resolved
                    .parent
                    .get(group as usize)
                    .copied()
                    .unwrap_or(u32::MAX);
            }
            false
        })
        .collect()
}

/// SL0011: every enabled node that names a non-`Send` service and is not
/// pinned, once per service.
pub(crate) fn unpinned_non_send(
    graph: &GraphView<'_>,
    pinned: &[bool],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let table = graph.table();
    if !table.any_non_send() {
        return;
    }
    for (index, node) in graph.nodes().iter().enumerate() {
        if !node.is_enabled() || pinned.get(index).copied().unwrap_or(false) {
            continue;
        }
        let access = node.access();
        let named = access
            .shared()
            .chain(access.gated())
            .chain(access.produced())
            .filter(|&id| table.is_non_send(id));
        for service in named {
            let name = table.name(service);
            let message = format!(
                "node `{}` names `{name}`, a service that is not `Send`, but is not pinned to \
                 the main thread: take it as `NonSend<T>` / `NonSendMut<T>` (which pin the \
                 node), or pin the node (`NodeBuilder::pinned`) or its group (`Group::pinned`)",
                node.name(),
            );
            let kind = DiagnosticKind::UnpinnedNonSend {
                node: NodeIndex(index as u32),
                service,
            };
            diagnostics.push(Diagnostic::new(
                Level::Error,
                kind,
                message,
                vec![node.name().to_owned()],
            ));
        }
    }
}
