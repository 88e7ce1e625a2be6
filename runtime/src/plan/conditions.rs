//! Run conditions on groups, stages and sets: which nodes each condition
//! node gates.
//!
//! A group's condition is a node of its own (registered by
//! [`World::run_group_if`](crate::World::run_group_if) and its kin), placed
//! in the group, stage or set it gates. The planner orders it before every
//! other member (an edge to each, so it reads what a serial run would have
//! left when the first member starts) and hands the executor, per member,
//! the condition nodes it waits on: a member runs only when all of them
//! held this iteration.

use crate::node::NodeState;
use crate::organise::Gated;
use crate::plan::graph::GraphView;
use crate::plan::organise::Resolved;

const NONE: u32 = u32::MAX;

/// Every `(condition node, member node)` pair the organisation declares,
/// whatever the selection: a group's condition gates every node in the
/// group at any depth (another group's condition node included), a stage's
/// or set's every node of that stage or set.
pub(crate) fn gate_pairs(graph: &GraphView<'_>, resolved: &Resolved) -> Vec<(u32, u32)> {
    let nodes = graph.nodes();
    let mut pairs = Vec::new();
    let live = |i: usize| nodes[i].state() != NodeState::Removed;
    for (cond, node) in nodes.iter().enumerate().filter(|&(i, _)| live(i)) {
        let Some(gated) = node.gated() else { continue };
        let at = |list: &[u32]| list.get(cond).copied().unwrap_or(NONE);
        let (list, target) = match gated {
            Gated::Group => (&resolved.node_group, at(&resolved.node_group)),
            Gated::Stage => (&resolved.node_stage, at(&resolved.node_stage)),
            Gated::Set => (&resolved.node_set, at(&resolved.node_set)),
        };
        if target == NONE {
            // Its group, stage or set is unknown: reported by `Resolved`.
            continue;
        }
        // Two conditions of one group, stage or set are evaluated side by
        // side (each before every member), not one after the other.
        let sibling = |m: usize| nodes[m].gated() == Some(gated) && list.get(m) == Some(&target);
        for member in (0..nodes.len()).filter(|&m| m != cond && live(m) && !sibling(m)) {
            let inside = match gated {
                Gated::Group => in_group(resolved, list.get(member).copied(), target),
                Gated::Stage | Gated::Set => list.get(member).copied() == Some(target),
            };
            if inside {
                pairs.push((cond as u32, member as u32));
            }
        }
    }
    pairs
}

/// Whether a node in `group` (`None` or `NONE`: in none) is inside
/// `target` at any depth.
fn in_group(resolved: &Resolved, group: Option<u32>, target: u32) -> bool {
    let mut group = group.unwrap_or(NONE);
    // `parent` is cut where a containment cycle was found, so this walk
    // ends; the bound is a second guard.
    for _ in 0..=resolved.parent.len() {
        if group == NONE {
            return false;
        }
        if group == target {
            return true;
        }
        group = resolved.parent.get(group as usize).copied().unwrap_or(NONE);
    }
    false
}

/// In a per-vertex gate array ([`NodeGates::per_vertex`]): no gate.
pub(crate) const NO_GATE: u32 = u32::MAX;
/// In a per-vertex gate array: more than one gate (look in [`NodeGates::of`]).
pub(crate) const MANY_GATES: u32 = u32::MAX - 1;

/// Per registered node, the condition nodes that gate it (CSR): what the
/// executor checks before it runs a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeGates {
    offsets: Box<[u32]>,
    conditions: Box<[u32]>,
}

impl NodeGates {
    /// The gates of the pairs whose both nodes `member` selects; `None`
    /// when there are none (the executor's fast path).
    pub(crate) fn new(
        nodes: usize,
        pairs: &[(u32, u32)],
        member: &dyn Fn(usize) -> bool,
    ) -> Option<Self> {
        let kept = || {
            pairs
                .iter()
                .filter(|&&(c, m)| member(c as usize) && member(m as usize))
        };
        kept().next()?;
        let mut counts = vec![0u32; nodes + 1];
        for &(_, m) in kept() {
            counts[m as usize + 1] += 1;
        }
        for i in 0..nodes {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut conditions = vec![0u32; counts[nodes] as usize];
        for &(c, m) in kept() {
            conditions[fill[m as usize] as usize] = c;
            fill[m as usize] += 1;
        }
        Some(Self {
            offsets: counts.into_boxed_slice(),
            conditions: conditions.into_boxed_slice(),
        })
    }

    /// Per vertex of an execution (`vertex_nodes`: each vertex's node,
    /// `u32::MAX` for a barrier), its one gate, [`NO_GATE`] or
    /// [`MANY_GATES`]: one load per member on the executor's path, where a
    /// lookup in the CSR arrays cost about twenty instructions.
    pub(crate) fn per_vertex(&self, vertex_nodes: &[u32]) -> Box<[u32]> {
        vertex_nodes
            .iter()
            .map(|&node| match self.of(node as usize) {
                [] => NO_GATE,
                &[one] => one,
                _ => MANY_GATES,
            })
            .collect()
    }

    /// The condition nodes gating `node` (registration index).
    #[inline]
    pub(crate) fn of(&self, node: usize) -> &[u32] {
        match (self.offsets.get(node), self.offsets.get(node + 1)) {
            (Some(&start), Some(&end)) => &self.conditions[start as usize..end as usize],
            _ => &[],
        }
    }
}
