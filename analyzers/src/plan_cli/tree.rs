//! `sluice plan --tree`: the group hierarchy of both cadences as one tree.
//!
//! The runtime's [`Plan::tree`](sluice::Plan::tree) orders one plan; a file
//! with fixed systems has two, so the CLI merges them by one overall plan
//! order: the fixed plan first (it runs to completion before the variable
//! one), then the variable plan. A system's position is its place in that
//! order; a group's is the position of its first system at any depth,
//! whichever cadence that system is in. Groups without any system at any
//! depth come after their non-empty siblings, in declaration order. The top
//! level is ordered like a group's children.

use std::fmt::Write;

use sluice::{Cadence, GroupIndex, NodeIndex, Plan};

/// What the tree is drawn from: the two plans and each system's cadence.
pub(super) struct Input<'a> {
    pub(super) fixed: &'a Plan,
    pub(super) variable: &'a Plan,
    /// Per node (registration order): its cadence.
    pub(super) cadences: Vec<Cadence>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Group(GroupIndex),
    Node(NodeIndex),
}

/// Writes the `--tree` text into `out` as it goes: one line per group and
/// system, two spaces of indent per level; `name STAGE`, with ` (fixed)`
/// after a fixed system.
pub(super) fn render(input: &Input<'_>, out: &mut dyn Write) -> std::fmt::Result {
    let Input {
        fixed,
        variable,
        cadences,
    } = input;
    // Both plans carry the same hierarchy (the graph's groups).
    let hierarchy = variable.hierarchy();
    let groups = hierarchy.group_count();
    // Every system in overall plan order.
    let order: Vec<NodeIndex> = fixed.order().chain(variable.order()).collect();
    // Per group: the overall position of its first system at any depth.
    // Walking the systems in order, a group already reached is reached
    // earlier, and so are its ancestors: O(systems + groups).
    let mut first = vec![usize::MAX; groups];
    for (position, &node) in order.iter().enumerate() {
        let mut group = hierarchy.group_of(node);
        while let Some(g) = group {
            if first[g.index()] != usize::MAX {
                break;
            }
            first[g.index()] = position;
            group = hierarchy.parent(g);
        }
    }
    // Children per parent (index `groups` is the top level), keyed by
    // (position, declaration): systems by their own position, groups by
    // their first system's, empty groups after all (usize::MAX) in
    // declaration order.
    let mut children: Vec<Vec<(usize, usize, Item)>> = vec![Vec::new(); groups + 1];
    for (g, &position) in first.iter().enumerate() {
        let group = GroupIndex(g as u32);
        let parent = hierarchy.parent(group).map_or(groups, |p| p.index());
        children[parent].push((position, g, Item::Group(group)));
    }
    for (position, &node) in order.iter().enumerate() {
        let parent = hierarchy.group_of(node).map_or(groups, |g| g.index());
        children[parent].push((position, 0, Item::Node(node)));
    }
    for list in &mut children {
        list.sort_unstable_by_key(|&(position, declaration, _)| (position, declaration));
    }
    // Depth first, without recursion (nesting may be deep).
    let mut stack: Vec<(usize, Item)> = children[groups]
        .iter()
        .rev()
        .map(|&(_, _, item)| (0, item))
        .collect();
    while let Some((depth, item)) = stack.pop() {
        for _ in 0..depth {
            out.write_str("  ")?;
        }
        match item {
            Item::Group(g) => {
                out.write_str(hierarchy.group_name(g))?;
                out.write_char('\n')?;
                stack.extend(
                    children[g.index()]
                        .iter()
                        .rev()
                        .map(|&(_, _, child)| (depth + 1, child)),
                );
            }
            Item::Node(node) => {
                let (plan, suffix) = match cadences[node.index()] {
                    Cadence::Fixed => (fixed, " (fixed)"),
                    Cadence::Variable => (variable, ""),
                };
                writeln!(
                    out,
                    "{} {}{suffix}",
                    plan.node_name(node),
                    plan.stage_of(node)
                )?;
            }
        }
    }
    Ok(())
}
