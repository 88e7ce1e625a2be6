//! Ambiguities silenced on purpose (bevy's `ambiguous_with`,
//! `ambiguous_with_all`): per node ([`NodeBuilder::ambiguous_with`]) and per
//! group ([`Group::ambiguous_with`], for every node in it at any depth).
//!
//! A silenced pair is not dropped: SL0008 reports it at
//! [`Level::Silenced`](crate::plan::Level::Silenced), with who silenced it
//! and how, and never as a warning or an error. Naming a target twice is
//! silenced once; a name that matches no node (by key or name) or group is
//! SL0002, whatever the ambiguity level.
//!
//! [`NodeBuilder::ambiguous_with`]: crate::NodeBuilder::ambiguous_with
//! [`Group::ambiguous_with`]: crate::Group::ambiguous_with

use foldhash::{HashMap, HashMapExt, HashSet};

use crate::node::{NodeState, Silenced};
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level, NodeRef, Relation};
use crate::plan::organise::Resolved;
use crate::plan::{GraphView, GroupIndex, NodeIndex};

const NONE: u32 = u32::MAX;

/// Who silenced an ambiguous pair, and how.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SilencedBy {
    /// The node or group whose declaration silenced it.
    pub by: NodeRef,
    /// The target it named (`ambiguous_with(target)`); `None` for
    /// `ambiguous_with_all()`.
    pub with: Option<String>,
}

/// Per registered node, what silences its ambiguities.
#[derive(Debug, Default)]
pub(crate) struct Silencing {
    /// Per node: silenced with every node, and by whom.
    all: Vec<Option<SilencedBy>>,
    /// Per node: the nodes it is silenced with, and by whom (both ways).
    with: Vec<Vec<(u32, SilencedBy)>>,
}

impl Silencing {
    /// Resolves every node's and group's silencing; `None` when nothing is
    /// silenced (the pass's fast path). Reports names that match nothing
    /// (SL0002).
    pub(crate) fn new(
        graph: &GraphView<'_>,
        resolved: &Resolved,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Self> {
        let nodes = graph.nodes();
        let groups = graph.organisation().groups();
        let live = |i: usize| nodes[i].state() != NodeState::Removed;
        let any = nodes.iter().any(|n| !n.silenced().is_empty())
            || groups.iter().any(|g| !g.silenced().is_empty());
        if !any {
            return None;
        }
        let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut gone: HashSet<&str> = HashSet::default();
        for (i, node) in nodes.iter().enumerate() {
            if !live(i) {
                gone.extend([node.key(), node.name()]);
                continue;
            }
            by_name.entry(node.key()).or_default().push(i as u32);
            if node.name() != node.key() {
                by_name.entry(node.name()).or_default().push(i as u32);
            }
        }
        // Per group, its nodes at any depth.
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        for i in (0..nodes.len()).filter(|&i| live(i)) {
            let mut group = resolved.node_group.get(i).copied().unwrap_or(NONE);
            for _ in 0..=groups.len() {
                let Some(list) = members.get_mut(group as usize) else {
                    break;
                };
                list.push(i as u32);
                group = resolved.parent.get(group as usize).copied().unwrap_or(NONE);
            }
        }
        let mut silencing = Silencing {
            all: vec![None; nodes.len()],
            with: vec![Vec::new(); nodes.len()],
        };
        let node_sources = (0..nodes.len()).filter(|&i| live(i)).map(|i| {
            (
                NodeRef::Node(NodeIndex(i as u32)),
                nodes[i].silenced(),
                vec![i as u32],
            )
        });
        let group_sources = groups.iter().enumerate().map(|(g, group)| {
            (
                NodeRef::Group(GroupIndex(g as u32)),
                group.silenced(),
                members[g].clone(),
            )
        });
        for (by, silenced, own) in node_sources.chain(group_sources) {
            silencing.add(by, silenced, &own, |target| {
                let found = by_name.get(target).cloned().or_else(|| {
                    let g = *resolved.by_name.get(target)?;
                    Some(members[g as usize].clone())
                });
                if found.is_none() && !gone.contains(target) {
                    let name = match by {
                        NodeRef::Group(g) => groups[g.index()].name(),
                        NodeRef::Node(n) => nodes[n.index()].name(),
                        NodeRef::Marker(_) => "",
                    };
                    diagnostics.push(unknown(by, name, target));
                }
                found.unwrap_or_default()
            });
        }
        Some(silencing)
    }

    /// Adds what `silenced` (declared by `by`) silences for the nodes `own`.
    fn add(
        &mut self,
        by: NodeRef,
        silenced: &Silenced,
        own: &[u32],
        mut resolve: impl FnMut(&str) -> Vec<u32>,
    ) {
        if silenced.is_empty() {
            return;
        }
        for &node in own.iter().filter(|_| silenced.all) {
            self.all[node as usize].get_or_insert(SilencedBy { by, with: None });
        }
        for target in &silenced.with {
            let how = SilencedBy {
                by,
                with: Some(target.to_string()),
            };
            for other in resolve(target) {
                for &node in own.iter().filter(|&&node| node != other) {
                    self.with[node as usize].push((other, how.clone()));
                    self.with[other as usize].push((node, how.clone()));
                }
            }
        }
    }

    /// Who silenced the pair `a`, `b` (registration indices), if anyone.
    pub(crate) fn by(&self, a: u32, b: u32) -> Option<&SilencedBy> {
        let with = |x: u32, y: u32| {
            self.with[x as usize]
                .iter()
                .find(|(other, _)| *other == y)
                .map(|(_, how)| how)
        };
        self.all[a as usize]
            .as_ref()
            .or(self.all[b as usize].as_ref())
            .or_else(|| with(a, b))
    }
}

/// SL0002: `ambiguous_with` names nothing.
fn unknown(source: NodeRef, name: &str, target: &str) -> Diagnostic {
    let message = format!(
        "`{name}` is declared ambiguous_with `{target}`, which is no node or group; \
         register it, or fix the name"
    );
    let kind = DiagnosticKind::UnknownTarget {
        source,
        target: target.to_owned(),
        relation: Relation::AmbiguousWith,
    };
    Diagnostic::new(Level::Error, kind, message, vec![name.to_owned()])
}
