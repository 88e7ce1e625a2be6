//! The read-only [`Plan`] and its edges.

use std::fmt;

use crate::access::ServiceId;
use crate::node::Label;
use crate::plan::organise::{GroupIndex, Resolved, Selection};
use crate::plan::{Diagnostic, GraphView, MarkerIndex, NodeIndex};

/// Which step of a lane walk made an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaneKind {
    /// A gate after the shared accessors since the previous gate.
    GateAfterShared,
    /// A gate right after the previous gate.
    GateAfterGate,
    /// A shared accessor after the gate before it.
    SharedAfterGate,
}

impl LaneKind {
    fn text(self) -> &'static str {
        match self {
            LaneKind::GateAfterShared => "gate after shared",
            LaneKind::GateAfterGate => "gate after gate",
            LaneKind::SharedAfterGate => "shared after gate",
        }
    }
}

/// Why an edge exists. Rendered to text on demand, never stored as text.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// The target declared `after(source)`.
    After,
    /// The source declared `before(target)`.
    Before,
    /// The two are ordered through this marker (`a -> marker -> b`).
    Marker(MarkerIndex),
    /// The source produces a service the target consumes.
    Produces(ServiceId),
    /// One of the two is exclusive (the whole-world lane).
    Exclusive,
    /// The service's lane.
    Lane {
        /// The service whose lane it is.
        service: ServiceId,
        /// Which rule of the lane walk.
        kind: LaneKind,
    },
    /// The source appends to a service the target gates (and so commits).
    Appends(ServiceId),
    /// The source is the run condition of a group, stage or set the target
    /// is in: evaluated once, before every member.
    RunCondition,
}

/// The arrays an executor runs a plan from, over *vertices*: the plan's
/// nodes in registration order, then its barriers (markers kept so that an
/// order between many nodes and many costs `m + k` edges, not `m * k`),
/// which complete the moment they are ready. For a plan of every registered
/// node and no barrier, vertex `i` is node `i`.
///
/// An iteration copies `predecessor_counts` into its atomics; a finished vertex
/// `v` decrements `successor_targets[successor_offsets[v]..successor_offsets[v + 1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompiledPlan {
    /// Start of each node's successors in `successor_targets`; one more entry
    /// than there are nodes.
    pub successor_offsets: Vec<u32>,
    /// Successors of every node, concatenated.
    pub successor_targets: Vec<u32>,
    /// How many predecessors each node waits for.
    pub predecessor_counts: Vec<u32>,
    /// Vertices in plan order (the serial executor's order), each barrier
    /// right after the last thing it waits for.
    pub order: Vec<u32>,
    /// The node each vertex runs (its registration index), `u32::MAX` for
    /// a barrier.
    pub vertex_nodes: Vec<u32>,
}

impl CompiledPlan {
    /// The successors of vertex `vertex`.
    pub fn successors(&self, vertex: u32) -> &[u32] {
        let start = self.successor_offsets[vertex as usize] as usize;
        let end = self.successor_offsets[vertex as usize + 1] as usize;
        &self.successor_targets[start..end]
    }

    /// Whether vertex `vertex` is a barrier (runs nothing).
    pub fn is_barrier(&self, vertex: u32) -> bool {
        self.vertex_nodes[vertex as usize] == u32::MAX
    }
}

/// One edge as stored: reasons are a range of the plan's reason pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EdgeRecord {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) reasons_start: u32,
    pub(crate) reasons_end: u32,
}

/// An edge of a plan with its reasons; `Display` renders
/// `spawner -> hud: after(spawner), lane Hp: shared after gate`.
#[derive(Clone, Copy)]
pub struct Edge<'p> {
    /// The node that finishes first.
    pub from: NodeIndex,
    /// The node that waits for it.
    pub to: NodeIndex,
    /// Why, in a fixed order, each reason once.
    pub reasons: &'p [Reason],
    plan: &'p Plan,
}

impl<'p> Edge<'p> {
    /// One reason as text: `after(spawner)`, `lane Hp: gate after shared`.
    pub fn reason_text(&self, reason: &Reason) -> String {
        let plan = self.plan;
        match *reason {
            Reason::After => format!("after({})", plan.node_name(self.from)),
            Reason::Before => format!("before({})", plan.node_name(self.to)),
            Reason::Marker(marker) => format!("via {}", plan.marker_name(marker)),
            Reason::Produces(service) => format!("produces {}", plan.service_name(service)),
            Reason::Appends(service) => format!("appends {}", plan.service_name(service)),
            Reason::Exclusive => "exclusive".to_owned(),
            Reason::RunCondition => format!("run condition {}", plan.node_name(self.from)),
            Reason::Lane { service, kind } => {
                format!("lane {}: {}", plan.service_name(service), kind.text())
            }
        }
    }

    /// All reasons as text, comma separated.
    pub fn reasons_text(&self) -> String {
        let texts: Vec<String> = self.reasons.iter().map(|r| self.reason_text(r)).collect();
        texts.join(", ")
    }
}

impl fmt::Debug for Edge<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Edge")
            .field("from", &self.from)
            .field("to", &self.to)
            .field("reasons", &self.reasons)
            .finish()
    }
}

impl fmt::Display for Edge<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}: {}",
            self.plan.node_name(self.from),
            self.plan.node_name(self.to),
            self.reasons_text()
        )
    }
}

/// A plan's copy of some names: static names are kept as references, the
/// others copied into one buffer (two allocations for any number of names).
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    text: String,
    spans: Vec<NameSpan>,
}

#[derive(Debug, Clone, Copy)]
enum NameSpan {
    Static(&'static str),
    Copied { start: u32, end: u32 },
}

impl Names {
    /// The names of `labels`, in order.
    pub(crate) fn of_labels<'a>(labels: impl ExactSizeIterator<Item = &'a Label> + Clone) -> Self {
        let copied = labels
            .clone()
            .map(|label| match label {
                Label::Borrowed(_) => 0,
                Label::Owned(name) => name.len(),
            })
            .sum();
        let mut names = Self {
            text: String::with_capacity(copied),
            spans: Vec::with_capacity(labels.len()),
        };
        labels.for_each(|label| names.push_label(label));
        names
    }

    /// Copies of `strs`, in order.
    pub(crate) fn of_strs<'a>(strs: impl ExactSizeIterator<Item = &'a str> + Clone) -> Self {
        let mut names = Self {
            text: String::with_capacity(strs.clone().map(str::len).sum()),
            spans: Vec::with_capacity(strs.len()),
        };
        strs.for_each(|name| names.copy(name));
        names
    }

    /// Room for `names` names (their text grows as pushed).
    pub(crate) fn with_capacity(names: usize) -> Self {
        Self {
            text: String::new(),
            spans: Vec::with_capacity(names),
        }
    }

    /// Appends a label's name (a static one by reference).
    pub(crate) fn push_label(&mut self, label: &Label) {
        match label {
            Label::Borrowed(name) => self.spans.push(NameSpan::Static(name)),
            Label::Owned(name) => self.copy(name),
        }
    }

    /// Appends one name written as `parts` one after the other.
    pub(crate) fn push_parts(&mut self, parts: &[&str]) {
        let start = self.text.len() as u32;
        parts.iter().for_each(|part| self.text.push_str(part));
        let end = self.text.len() as u32;
        self.spans.push(NameSpan::Copied { start, end });
    }

    fn copy(&mut self, name: &str) {
        let start = self.text.len() as u32;
        self.text.push_str(name);
        let end = self.text.len() as u32;
        self.spans.push(NameSpan::Copied { start, end });
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    pub(crate) fn get(&self, index: usize) -> &str {
        match self.spans[index] {
            NameSpan::Static(name) => name,
            NameSpan::Copied { start, end } => &self.text[start as usize..end as usize],
        }
    }
}

/// The immutable result of planning one selection (a cadence of a
/// schedule): order, edges with reasons, stages, barriers, warnings, and
/// the compiled arrays an executor runs.
///
/// Nodes keep their registration indices; a plan holds the nodes of its
/// selection only ([`contains`](Plan::contains)). An order between many nodes
/// and many (a phase, a large group) goes through a *barrier*: an edge's
/// `from` or `to` may then be an index at or above
/// [`registered`](Plan::registered), named after its marker, never run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub(crate) node_names: Names,
    /// The nodes that are one point of a two-point registration, ascending.
    pub(crate) points: Vec<(NodeIndex, crate::node::Point)>,
    pub(crate) marker_names: Names,
    pub(crate) service_names: Names,
    /// Per barrier (plan id `registered + k`): the marker it was kept for.
    pub(crate) barrier_markers: Vec<u32>,
    /// Per registered node: its position in plan order, `u32::MAX` when the
    /// plan is not for it.
    pub(crate) position: Vec<u32>,
    pub(crate) stage_of: Vec<u32>,
    pub(crate) stage_offsets: Vec<u32>,
    pub(crate) stage_nodes: Vec<NodeIndex>,
    /// Grouped by target in plan order, sources ascending within a target.
    pub(crate) edges: Vec<EdgeRecord>,
    pub(crate) reasons: Vec<Reason>,
    /// Successors per plan id (nodes, then barriers), CSR, with the edge id
    /// of each entry.
    pub(crate) successor_offsets: Vec<u32>,
    pub(crate) successor_targets: Vec<u32>,
    pub(crate) successor_edges: Vec<u32>,
    /// The plan's nodes (registration indices) in plan order.
    pub(crate) node_order: Vec<u32>,
    pub(crate) compiled: CompiledPlan,
    /// Per service id, the gates of its lane in plan order (CSR).
    pub(crate) barrier_offsets: Vec<u32>,
    pub(crate) barrier_nodes: Vec<NodeIndex>,
    pub(crate) exclusive_nodes: Vec<NodeIndex>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) selection: Selection,
    pub(crate) hierarchy: Hierarchy,
    /// Per registered node, whether it is pinned to the main thread (by
    /// itself or a group).
    pub(crate) pinned: Vec<bool>,
    /// Per registered node, the group, stage and set conditions it waits
    /// on; `None` when no node of the plan has one.
    pub(crate) gates: Option<std::sync::Arc<crate::plan::conditions::NodeGates>>,
}

impl Plan {
    /// The number of nodes the plan runs.
    pub fn len(&self) -> usize {
        self.node_order.len()
    }

    /// Whether the plan runs no node.
    pub fn is_empty(&self) -> bool {
        self.node_order.is_empty()
    }

    /// How many nodes were registered when the plan was built (its own and
    /// other selections'): node indices below it are nodes, those at or
    /// above it in an edge are barriers.
    pub fn registered(&self) -> usize {
        self.node_names.len()
    }

    /// Whether the plan runs `node`.
    pub fn contains(&self, node: NodeIndex) -> bool {
        self.position
            .get(node.index())
            .is_some_and(|&p| p != u32::MAX)
    }

    /// Whether `node` (from an edge) is a barrier rather than a node.
    pub fn is_barrier(&self, node: NodeIndex) -> bool {
        node.index() >= self.node_names.len()
    }

    /// The cadence and schedule the plan is for.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// Whether `node` is pinned to the main thread (the thread that runs
    /// the iteration), by its builder, a `NonSend` parameter or a pinned
    /// group it sits in; a commit point is pinned when its node is.
    pub fn is_pinned(&self, node: NodeIndex) -> bool {
        self.pinned.get(node.index()).copied().unwrap_or(false)
    }

    /// The groups of the world the plan was built from.
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.hierarchy
    }

    /// A node's name (a barrier's is its marker's).
    pub fn node_name(&self, node: NodeIndex) -> &str {
        match node.index().checked_sub(self.node_names.len()) {
            None => self.node_names.get(node.index()),
            Some(k) => self.marker_name(MarkerIndex(self.barrier_markers[k])),
        }
    }

    /// Which point of its registration `node` is: reference 003's
    /// `Instanced` is one registration at two points of the plan, its body
    /// and its commit (`instanced@commit`).
    pub fn point(&self, node: NodeIndex) -> crate::node::Point {
        match self.points.binary_search_by_key(&node, |&(n, _)| n) {
            Ok(at) => self.points[at].1,
            Err(_) => crate::node::Point::Only,
        }
    }

    /// A marker's label.
    pub fn marker_name(&self, marker: MarkerIndex) -> &str {
        self.marker_names.get(marker.index())
    }

    /// A service's name.
    pub fn service_name(&self, service: ServiceId) -> &str {
        self.service_names.get(service.index())
    }

    /// The nodes in plan order (the serial order every executor is
    /// observably equivalent to).
    pub fn order(&self) -> impl ExactSizeIterator<Item = NodeIndex> + '_ {
        self.node_order.iter().map(|&n| NodeIndex(n))
    }

    /// A node's position in plan order.
    ///
    /// # Panics
    /// When the plan does not run `node` (see [`contains`](Plan::contains)).
    pub fn position(&self, node: NodeIndex) -> usize {
        assert!(
            self.contains(node),
            "`{}` is not in this plan ({})",
            self.node_name(node),
            self.selection.describe()
        );
        self.position[node.index()] as usize
    }

    /// Every edge, grouped by target in plan order.
    pub fn edges(&self) -> impl ExactSizeIterator<Item = Edge<'_>> + '_ {
        (0..self.edges.len()).map(|i| self.edge(i as u32))
    }

    pub(crate) fn edge(&self, id: u32) -> Edge<'_> {
        let record = self.edges[id as usize];
        Edge {
            from: NodeIndex(record.from),
            to: NodeIndex(record.to),
            reasons: &self.reasons[record.reasons_start as usize..record.reasons_end as usize],
            plan: self,
        }
    }

    /// The edge from `from` to `to`, if the plan has one.
    pub fn edge_between(&self, from: NodeIndex, to: NodeIndex) -> Option<Edge<'_>> {
        let start = *self.successor_offsets.get(from.index())? as usize;
        let end = self.successor_offsets[from.index() + 1] as usize;
        (start..end)
            .find(|&i| self.successor_targets[i] == to.0)
            .map(|i| self.edge(self.successor_edges[i]))
    }

    /// The number of stages.
    pub fn stage_count(&self) -> usize {
        self.stage_offsets.len() - 1
    }

    /// The members of stage `stage`, in plan order.
    pub fn stage(&self, stage: usize) -> &[NodeIndex] {
        let start = self.stage_offsets[stage] as usize;
        let end = self.stage_offsets[stage + 1] as usize;
        &self.stage_nodes[start..end]
    }

    /// Every stage's members, in stage order.
    pub fn stages(&self) -> impl ExactSizeIterator<Item = &[NodeIndex]> + '_ {
        (0..self.stage_count()).map(|s| self.stage(s))
    }

    /// The stage a node is in.
    ///
    /// # Panics
    /// When the plan does not run `node`.
    pub fn stage_of(&self, node: NodeIndex) -> usize {
        assert!(
            self.contains(node),
            "`{}` is not in this plan",
            self.node_name(node)
        );
        self.stage_of[node.index()] as usize
    }

    /// The gates of a service's lane, in plan order: the barriers everything
    /// before them in the lane finishes before.
    pub fn barriers(&self, service: ServiceId) -> &[NodeIndex] {
        match self.barrier_offsets.get(service.index() + 1) {
            Some(&end) => {
                &self.barrier_nodes[self.barrier_offsets[service.index()] as usize..end as usize]
            }
            None => &[],
        }
    }

    /// The exclusive nodes: the barriers of the whole-world lane.
    pub fn exclusive_barriers(&self) -> &[NodeIndex] {
        &self.exclusive_nodes
    }

    /// Warnings found while planning (errors make `build` fail instead).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The flat arrays an executor runs.
    pub fn compiled(&self) -> &CompiledPlan {
        &self.compiled
    }
}

/// The groups of a world as a plan saw them: names, parents, and each
/// node's group (the Systems window of reference 004).
#[derive(Debug, Clone, Default)]
pub struct Hierarchy {
    names: Names,
    /// Per group: its parent, `u32::MAX` at the top.
    parent: Vec<u32>,
    /// Per registered node: its group, `u32::MAX` when ungrouped (empty
    /// when there are no groups).
    node_group: Vec<u32>,
}

impl Hierarchy {
    pub(crate) fn new(graph: &GraphView<'_>, resolved: &Resolved) -> Self {
        let groups = graph.organisation().groups();
        if groups.is_empty() {
            return Self::default();
        }
        Self {
            names: Names::of_labels(groups.iter().map(|group| group.name_label())),
            parent: resolved.parent.clone(),
            node_group: resolved.node_group.clone(),
        }
    }

    /// How many groups there are.
    pub fn group_count(&self) -> usize {
        self.parent.len()
    }

    /// A group's name.
    pub fn group_name(&self, group: GroupIndex) -> &str {
        self.names.get(group.index())
    }

    /// The group a group is a child of.
    pub fn parent(&self, group: GroupIndex) -> Option<GroupIndex> {
        match self.parent[group.index()] {
            u32::MAX => None,
            parent => Some(GroupIndex(parent)),
        }
    }

    /// The group a node is a child of.
    pub fn group_of(&self, node: NodeIndex) -> Option<GroupIndex> {
        match self.node_group.get(node.index()) {
            Some(&group) if group != u32::MAX => Some(GroupIndex(group)),
            _ => None,
        }
    }
}

/// One line of a plan's tree: a group or a node, at a depth (0 at the top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeItem {
    /// A group.
    Group(GroupIndex),
    /// A node of the plan.
    Node(NodeIndex),
}

impl Plan {
    /// The plan as a tree, depth first: each group followed by its children
    /// (one level deeper), children in plan order (a group at the position
    /// of its first node; groups without a node of this plan after the
    /// others, in declaration order).
    pub fn tree(&self) -> Vec<(usize, TreeItem)> {
        let hierarchy = &self.hierarchy;
        let groups = hierarchy.group_count();
        // Per group: the earliest plan position of a node inside it.
        let mut first = vec![u32::MAX; groups];
        for (position, &node) in self.node_order.iter().enumerate() {
            let mut group = hierarchy.group_of(NodeIndex(node));
            while let Some(g) = group {
                if first[g.index()] <= position as u32 {
                    break;
                }
                first[g.index()] = position as u32;
                group = hierarchy.parent(g);
            }
        }
        // Children per parent (`groups` is the top level), keyed by position.
        let mut children: Vec<Vec<(u32, u32, TreeItem)>> = vec![Vec::new(); groups + 1];
        for (g, &position) in first.iter().enumerate() {
            let group = GroupIndex(g as u32);
            let parent = hierarchy.parent(group).map_or(groups, |p| p.index());
            children[parent].push((position, g as u32, TreeItem::Group(group)));
        }
        for (position, &node) in self.node_order.iter().enumerate() {
            let parent = hierarchy
                .group_of(NodeIndex(node))
                .map_or(groups, |g| g.index());
            children[parent].push((position as u32, 0, TreeItem::Node(NodeIndex(node))));
        }
        for list in &mut children {
            list.sort_unstable_by_key(|&(position, tie, _)| (position, tie));
        }
        let mut out = Vec::with_capacity(groups + self.node_order.len());
        let mut stack: Vec<(usize, TreeItem)> = children[groups]
            .iter()
            .rev()
            .map(|&(_, _, item)| (0, item))
            .collect();
        while let Some((depth, item)) = stack.pop() {
            out.push((depth, item));
            if let TreeItem::Group(g) = item {
                stack.extend(
                    children[g.index()]
                        .iter()
                        .rev()
                        .map(|&(_, _, child)| (depth + 1, child)),
                );
            }
        }
        out
    }
}
