//! Groups, stages, sets and phases as ordering edges (`plan-format.md`,
//! "Organisation").
//!
//! One mechanism under all of them: vertices that never run. A group is a
//! pair, begin and end, with `begin -> member -> end` for each child (a child
//! group nests its own pair inside) and `begin -> end`, so an empty group
//! still carries order; "X precedes Y" is `end(X) -> begin(Y)` (a node is its
//! own begin and end). `order_first` items reach a per-parent vertex every
//! other sibling waits for; `order_last` items wait for one every other
//! sibling reaches. A stage or set is an end vertex its members reach and the
//! next one of its kind (and its members) waits for. Phases are four bounds
//! in a chain (the start of `PreUpdate`, and each phase's end), each phase's
//! nodes between two; an ordering may target a phase by name. Every contradiction is a
//! cycle through such vertices, reported as SL0007.
//!
//! What does not depend on the cadence or schedule being planned (unknown
//! groups, stages and sets, duplicate ranks, groups containing themselves)
//! is resolved and checked once, in [`Resolved::new`].

use foldhash::{HashMap, HashMapExt};

use crate::node::{NodeDescriptor, NodeState};
use crate::organise::{Cadence, Phase, RankKind, Schedule, SiblingOrder};
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level, NodeRef, Relation};
use crate::plan::{GraphView, NodeIndex};

const NONE: u32 = u32::MAX;

/// A registered group: its index among the world's groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupIndex(pub u32);

impl GroupIndex {
    /// The index into per-group arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The nodes one plan is built for: one cadence of one schedule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selection {
    /// The schedule.
    pub schedule: Schedule,
    /// The cadence (only [`Schedule::Update`] runs a fixed one).
    pub cadence: Cadence,
}

impl Selection {
    /// The variable cadence of the update schedule: what a flat world runs.
    pub const UPDATE: Selection = Selection {
        schedule: Schedule::Update,
        cadence: Cadence::Variable,
    };

    /// The fixed cadence of the update schedule.
    pub const FIXED: Selection = Selection {
        schedule: Schedule::Update,
        cadence: Cadence::Fixed,
    };

    /// The selection a node belongs to.
    pub fn of(node: &NodeDescriptor) -> Selection {
        let placement = node.placement();
        let schedule = placement.schedule.canonical();
        let cadence = match schedule {
            Schedule::Update => placement.cadence,
            // Only the update schedule steps a fixed cadence; elsewhere a
            // node's cadence does not split the plan.
            _ => Cadence::Variable,
        };
        Selection { schedule, cadence }
    }

    pub(crate) fn contains(&self, node: &NodeDescriptor) -> bool {
        let placement = node.placement();
        node.is_enabled()
            && placement.schedule == self.schedule
            && (self.schedule != Schedule::Update || placement.cadence == self.cadence)
    }

    /// `Update`, `Update (fixed)`, `Startup`...
    pub fn describe(&self) -> String {
        match (self.schedule.canonical(), self.cadence) {
            (Schedule::Update, Cadence::Fixed) => "the fixed cadence".to_owned(),
            (Schedule::Update, Cadence::Variable) => "the variable cadence".to_owned(),
            (schedule, _) => format!("the schedule `{}`", schedule.name()),
        }
    }
}

/// What the organisation resolves to, independent of the selection planned.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// Per group: its parent, `NONE` at the top (or when the parent is
    /// unknown, or the group lies on a containment cycle).
    pub(crate) parent: Vec<u32>,
    /// Per node: its group, `NONE` when ungrouped or the group is unknown.
    pub(crate) node_group: Vec<u32>,
    /// Group names to indices (first declaration wins).
    pub(crate) by_name: HashMap<String, u32>,
    /// Per group: whether any order reaches it (its own `after`/`before` or
    /// first/last, an ordering naming it, or its parent's). A group no order
    /// reaches needs no edges: nothing is ordered through it.
    pub(crate) ordered: Vec<bool>,
    /// Per node: its position among the sorted stages, `NONE` for none.
    pub(crate) node_stage: Vec<u32>,
    /// Per node: its position among the sorted sets, `NONE` for none.
    pub(crate) node_set: Vec<u32>,
    /// Per sorted stage, then per sorted set: the index of its declaration.
    pub(crate) rank_decl: Vec<u32>,
    /// Per sorted stage, then set: its level, one per distinct order number
    /// of its kind (stages' levels first). Only a larger number orders, so
    /// two ranks of one number (SL0005) share a level.
    pub(crate) rank_level: Vec<u32>,
    /// Per level: its first sorted rank (for names).
    pub(crate) level_rank: Vec<u32>,
    /// How many levels the stages have.
    pub(crate) stage_levels: u32,
    pub(crate) phases: bool,
    /// Whether anything is organised at all (otherwise nothing is added).
    pub(crate) any: bool,
    /// Every `(condition node, member)` pair of the group, stage and set
    /// conditions (`plan/conditions.rs`), whatever the selection.
    pub(crate) gates: Vec<(u32, u32)>,
}

impl Resolved {
    /// Resolves names and reports what is wrong whatever the selection:
    /// SL0002 (unknown parent group or node group), SL0001 (a group that
    /// contains itself), SL0004 (a group named like another group),
    /// SL0005 (duplicate stage or set names or orders) and SL0006 (stages
    /// declared and a node names none, or a stage or set nobody declared).
    pub(crate) fn new(graph: &GraphView<'_>, diagnostics: &mut Vec<Diagnostic>) -> Self {
        let organisation = graph.organisation();
        let nodes = graph.nodes();
        let groups = organisation.groups();
        let any_placement = nodes.iter().any(|node| {
            let p = node.placement();
            p.group.is_some() || p.sibling.is_some() || p.stage.is_some() || p.set.is_some()
        });
        let mut resolved = Resolved {
            phases: organisation.phases_named || phase_targeted(graph),
            any: !organisation.is_flat() || any_placement,
            ..Resolved::default()
        };
        if !resolved.any {
            return resolved;
        }
        let mut by_name: HashMap<String, u32> = HashMap::with_capacity(groups.len());
        for (index, group) in groups.iter().enumerate() {
            if let Some(&first) = by_name.get(group.name()) {
                let message = format!(
                    "the group `{}` is declared twice; give each group its own name",
                    group.name()
                );
                let kind = DiagnosticKind::DuplicateKey {
                    key: group.name().to_owned(),
                    first: NodeRef::Group(GroupIndex(first)),
                    second: NodeRef::Group(GroupIndex(index as u32)),
                };
                diagnostics.push(Diagnostic::new(
                    Level::Error,
                    kind,
                    message,
                    vec![group.name().to_owned()],
                ));
            } else {
                by_name.insert(group.name().to_owned(), index as u32);
            }
        }
        resolved.parent = groups
            .iter()
            .enumerate()
            .map(|(index, group)| match group.parent() {
                None => NONE,
                Some(parent) => match by_name.get(parent) {
                    Some(&p) => p,
                    None => {
                        diagnostics.push(unknown_group(
                            NodeRef::Group(GroupIndex(index as u32)),
                            group.name(),
                            parent,
                        ));
                        NONE
                    }
                },
            })
            .collect();
        containment_cycles(graph, &mut resolved.parent, diagnostics);
        resolved.ordered = ordered_groups(graph, &by_name, &resolved.parent);
        // Neighbours mostly share a group: the last name found is compared
        // before hashing.
        let mut last: Option<(&str, u32)> = None;
        resolved.node_group = nodes
            .iter()
            .enumerate()
            .map(|(index, node)| match &node.placement().group {
                _ if node.state() == NodeState::Removed => NONE,
                None => NONE,
                Some(group) if last.is_some_and(|(l, _)| l == &**group) => {
                    last.map_or(NONE, |(_, g)| g)
                }
                Some(group) => match by_name.get(&**group) {
                    Some(&g) => {
                        last = Some((group, g));
                        g
                    }
                    None => {
                        let source = NodeRef::Node(NodeIndex(index as u32));
                        diagnostics.push(unknown_group(source, node.name(), group));
                        NONE
                    }
                },
            })
            .collect();
        resolved.by_name = by_name;
        resolved.resolve_ranks(graph, diagnostics);
        resolved.gates = crate::plan::conditions::gate_pairs(graph, &resolved);
        resolved
    }

    fn resolve_ranks(&mut self, graph: &GraphView<'_>, diagnostics: &mut Vec<Diagnostic>) {
        let ranks = graph.organisation().ranks();
        let nodes = graph.nodes();
        for kind in [RankKind::Stage, RankKind::Set] {
            let mut declared: Vec<u32> = (0..ranks.len() as u32)
                .filter(|&r| ranks[r as usize].kind == kind)
                .collect();
            declared.sort_by_key(|&r| (ranks[r as usize].order, r));
            // SL0005: the same name or order number twice.
            for (i, &a) in declared.iter().enumerate() {
                for &b in &declared[i + 1..] {
                    let (first, second) = (a.min(b), a.max(b));
                    let (x, y) = (&ranks[first as usize], &ranks[second as usize]);
                    let clash = if x.name == y.name {
                        Some(format!("the name `{}`", x.name))
                    } else if x.order == y.order {
                        Some(format!("the order {}", x.order))
                    } else {
                        None
                    };
                    if let Some(clash) = clash {
                        let message = format!(
                            "the {kind}s `{}` and `{}` have {clash}; {kind} names and orders \
                             must be unique",
                            x.name,
                            y.name,
                            kind = kind.name(),
                        );
                        let kind = DiagnosticKind::DuplicateRank {
                            kind,
                            first,
                            second,
                        };
                        let names = vec![x.name.to_string(), y.name.to_string()];
                        diagnostics.push(Diagnostic::new(Level::Error, kind, message, names));
                    }
                }
            }
            // A name declared twice (SL0005) means its first declaration.
            let mut position: HashMap<&str, (u32, u32)> = HashMap::new();
            for (at, &r) in declared.iter().enumerate() {
                let entry = position
                    .entry(&*ranks[r as usize].name)
                    .or_insert((r, at as u32));
                if r < entry.0 {
                    *entry = (r, at as u32);
                }
            }
            let position: HashMap<&str, u32> = position
                .into_iter()
                .map(|(name, (_, at))| (name, at))
                .collect();
            let base = self.rank_decl.len() as u32;
            self.rank_decl.extend_from_slice(&declared);
            let mut previous = None;
            for (at, &r) in declared.iter().enumerate() {
                let order = ranks[r as usize].order;
                if previous != Some(order) {
                    self.level_rank.push(base + at as u32);
                    previous = Some(order);
                }
                self.rank_level.push(self.level_rank.len() as u32 - 1);
            }
            if kind == RankKind::Stage {
                self.stage_levels = self.level_rank.len() as u32;
            }
            // Neighbours mostly name one rank: the last name found is
            // compared before hashing.
            let mut last: Option<(&str, u32)> = None;
            let memberships: Vec<u32> = nodes
                .iter()
                .enumerate()
                .map(|(index, node)| {
                    let placement = node.placement();
                    let named = match kind {
                        RankKind::Stage => &placement.stage,
                        RankKind::Set => &placement.set,
                    };
                    let node_ref = NodeIndex(index as u32);
                    if node.state() == NodeState::Removed || node.is_builtin() {
                        return NONE;
                    }
                    match named {
                        Some(name) if last.is_some_and(|(l, _)| l == &**name) => {
                            last.map_or(NONE, |(_, at)| base + at)
                        }
                        Some(name) => match position.get(&**name) {
                            Some(&at) => {
                                last = Some((name, at));
                                base + at
                            }
                            None => {
                                diagnostics.push(unknown_rank(node, node_ref, kind, name));
                                NONE
                            }
                        },
                        // A group's or set's condition node stands
                        // before its members, in whatever stages they are.
                        None if kind == RankKind::Stage
                            && !declared.is_empty()
                            && !matches!(
                                node.gated(),
                                Some(crate::organise::Gated::Group | crate::organise::Gated::Set)
                            ) =>
                        {
                            diagnostics.push(no_stage(node, node_ref));
                            NONE
                        }
                        None => NONE,
                    }
                })
                .collect();
            match kind {
                RankKind::Stage => self.node_stage = memberships,
                RankKind::Set => self.node_set = memberships,
            }
        }
    }
}

/// Every name an `after`/`before` of a node, group or marker targets.
fn ordering_targets<'g>(graph: &GraphView<'g>) -> impl Iterator<Item = &'g crate::node::Label> {
    let groups = graph.organisation().groups();
    graph
        .nodes()
        .iter()
        .flat_map(|node| node.after().iter().chain(node.before()))
        .chain(
            groups
                .iter()
                .flat_map(|g| g.after_targets().iter().chain(g.before_targets())),
        )
        .chain(
            graph
                .markers()
                .iter()
                .flat_map(|m| m.after_targets().iter().chain(m.before_targets())),
        )
}

/// Whether an ordering names a phase (`after("PreUpdate")`) that no node,
/// marker or group of that name shadows: naming a phase as a target puts
/// the world in phases as naming one on a node does.
fn phase_targeted(graph: &GraphView<'_>) -> bool {
    let is_phase = |target: &crate::node::Label| Phase::from_name(target).is_some();
    let nodes = graph.nodes();
    let groups = graph.organisation().groups();
    let markers = graph.markers();
    let targets = ordering_targets(graph);
    let mut named = targets.filter(|t| is_phase(t)).peekable();
    if named.peek().is_none() {
        return false;
    }
    let shadowed = |name: &str| {
        nodes.iter().any(|node| node.key() == name)
            || markers.iter().any(|marker| marker.label() == name)
            || groups.iter().any(|group| group.name() == name)
    };
    named.any(|target| !shadowed(target))
}

fn unknown_group(source: NodeRef, name: &str, group: &str) -> Diagnostic {
    let message = format!(
        "`{name}` is in the group `{group}`, which is not declared; declare it with \
         `Group::new(\"{group}\")` or check the spelling"
    );
    let kind = DiagnosticKind::UnknownTarget {
        source,
        target: group.to_owned(),
        relation: Relation::InGroup,
    };
    Diagnostic::new(Level::Error, kind, message, vec![name.to_owned()])
}

fn unknown_rank(node: &NodeDescriptor, index: NodeIndex, kind: RankKind, name: &str) -> Diagnostic {
    let message = format!(
        "`{}` is in the {} `{name}`, which is not declared",
        node.name(),
        kind.name()
    );
    let kind = DiagnosticKind::UnknownRank {
        node: index,
        kind,
        name: name.to_owned(),
    };
    Diagnostic::new(Level::Error, kind, message, vec![node.name().to_owned()])
}

fn no_stage(node: &NodeDescriptor, index: NodeIndex) -> Diagnostic {
    let message = format!(
        "stages are declared, so every node must name one; `{}` names none",
        node.name()
    );
    Diagnostic::new(
        Level::Error,
        DiagnosticKind::NoStage { node: index },
        message,
        vec![node.name().to_owned()],
    )
}

/// Which groups an order reaches (see [`Resolved::ordered`]).
fn ordered_groups(
    graph: &GraphView<'_>,
    by_name: &HashMap<String, u32>,
    parent: &[u32],
) -> Vec<bool> {
    let groups = graph.organisation().groups();
    let nodes = graph.nodes();
    // Per parent (the top level last): whether a child is first or last,
    // which orders every sibling.
    let top = groups.len();
    let mut sibling_ordered = vec![false; top + 1];
    for (g, group) in groups.iter().enumerate() {
        if group.sibling_order().is_some() {
            let slot = if parent[g] == NONE {
                top
            } else {
                parent[g] as usize
            };
            sibling_ordered[slot] = true;
        }
    }
    for node in nodes
        .iter()
        .filter(|node| node.placement().sibling.is_some())
    {
        let slot = node
            .placement()
            .group
            .as_deref()
            .and_then(|name| by_name.get(name))
            .map_or(top, |&g| g as usize);
        sibling_ordered[slot] = true;
    }
    let mut ordered: Vec<bool> = groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            let slot = if parent[g] == NONE {
                top
            } else {
                parent[g] as usize
            };
            sibling_ordered[slot]
                || !group.after_targets().is_empty()
                || !group.before_targets().is_empty()
        })
        .collect();
    let mut settled = Vec::new();
    inherit_order(&mut ordered, parent, &mut settled);
    // Orderings naming a group: only looked up (a hash of every `after` and
    // `before` name) when some group is not ordered already.
    if ordered.iter().all(|&o| o) {
        return ordered;
    }
    for target in ordering_targets(graph) {
        if let Some(&g) = by_name.get(&**target) {
            ordered[g as usize] = true;
        }
    }
    inherit_order(&mut ordered, parent, &mut settled);
    ordered
}

/// An order on a parent reaches its children: makes every group whose
/// parent (at any height) is `ordered` ordered too. Returns how many steps
/// up the parent links it took.
///
/// Each chain is walked upwards only as far as the first group already
/// settled, so each group is stepped over once however deep the nesting
/// (parents were cut on containment cycles, so every walk ends).
/// `settled` is scratch space.
fn inherit_order(ordered: &mut [bool], parent: &[u32], settled: &mut Vec<bool>) -> usize {
    let mut steps = 0;
    settled.clear();
    settled.resize(ordered.len(), false);
    let mut walk = Vec::new();
    for g in 0..ordered.len() {
        let mut at = g as u32;
        let mut reached = false;
        while at != NONE {
            if settled[at as usize] || ordered[at as usize] {
                reached = ordered[at as usize];
                break;
            }
            walk.push(at);
            steps += 1;
            at = parent[at as usize];
        }
        for &on in &walk {
            ordered[on as usize] = reached;
            settled[on as usize] = true;
        }
        walk.clear();
        if at != NONE {
            settled[at as usize] = true;
        }
    }
    steps
}

/// SL0001 for every group that contains itself through its parents; the
/// parent links on each such cycle are cut so planning can go on.
fn containment_cycles(
    graph: &GraphView<'_>,
    parent: &mut [u32],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let groups = graph.organisation().groups();
    // 0: unvisited, 1: on the current walk, 2: done.
    let mut state = vec![0u8; parent.len()];
    let mut cycles = Vec::new();
    for start in 0..parent.len() {
        let mut walk = Vec::new();
        let mut at = start as u32;
        while at != NONE && state[at as usize] == 0 {
            state[at as usize] = 1;
            walk.push(at);
            at = parent[at as usize];
        }
        if at != NONE && state[at as usize] == 1 {
            let from = walk.iter().position(|&g| g == at).unwrap_or(0);
            cycles.push(walk[from..].to_vec());
        }
        for g in walk {
            state[g as usize] = 2;
        }
    }
    for cycle in cycles {
        // The walk went child -> parent; name it in containment order.
        let mut members: Vec<u32> = cycle.iter().rev().copied().collect();
        let lowest = (0..members.len())
            .min_by_key(|&i| groups[members[i] as usize].name())
            .unwrap_or(0);
        members.rotate_left(lowest);
        let names: Vec<String> = members
            .iter()
            .map(|&g| groups[g as usize].name().to_owned())
            .collect();
        let path = format!("{} -> {}", names.join(" -> "), names[0]);
        let message = format!(
            "the group `{}` contains itself: {path} (each contains the next); \
             a group cannot be its own ancestor",
            names[0]
        );
        let kind = DiagnosticKind::Cycle {
            path: members
                .iter()
                .map(|&g| NodeRef::Group(GroupIndex(g)))
                .collect(),
        };
        diagnostics.push(Diagnostic::new(Level::Error, kind, message, names));
        for g in cycle {
            parent[g as usize] = NONE;
        }
    }
}

/// A vertex that never runs, added for the organisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OrgVertex {
    /// Where a group begins: its members wait for it.
    Begin(u32),
    /// Where a group ends: it waits for its members.
    End(u32),
    /// The `order_first` items of a parent (`NONE`: the top level) are done.
    FirstDone(u32),
    /// Every sibling but the `order_last` items of a parent is done.
    LastDue(u32),
    /// The end of a level of stages or sets (every rank of one order
    /// number; stages' levels first, then sets').
    RankEnd(u32),
    /// The start of `PreUpdate`.
    PhaseStart,
    /// The end of a phase (and the start of the next).
    PhaseEnd(Phase),
    /// Where the nodes of one placement begin (one group, sibling order,
    /// stage, set and phase; the group, `NONE` at the top level): they wait
    /// for it, and it for everything their placement puts before them.
    Members(u32),
    /// Where the nodes of one placement end: it waits for them, and
    /// everything their placement puts after them waits for it.
    MembersDone(u32),
}

/// The organisation vertices of one selection and the edges among them and
/// the selected nodes, in the vertex space of `order::Explicit`: nodes first,
/// then user markers, then these (from `base`).
pub(crate) struct OrgEdges {
    pub(crate) vertices: Vec<OrgVertex>,
    pub(crate) edges: Vec<(u32, u32)>,
    /// The first of the four phase bounds (the start of `PreUpdate`, the
    /// ends of `PreUpdate`, `Update` and `PostUpdate`), when phases apply.
    pub(crate) phases: Option<u32>,
}

/// Adds the organisation of the nodes `member` selects.
///
/// With `shared`, the nodes of one placement (the same group, sibling
/// order, stage, set and phase) share a pair of vertices, [`Members`] and
/// [`MembersDone`]: two edges per node and the placement's own edges once,
/// instead of every edge of the placement per node. The order among nodes
/// (and among the other vertices) is the same either way: the pair's only
/// successors, or only predecessors, are its nodes. Without it, each node
/// gets its edges itself, which is what cycles are reported on (a cycle
/// then names what the user wrote, not a pair).
///
/// [`Members`]: OrgVertex::Members
/// [`MembersDone`]: OrgVertex::MembersDone
pub(crate) fn edges(
    graph: &GraphView<'_>,
    resolved: &Resolved,
    member: &dyn Fn(usize) -> bool,
    base: u32,
    shared: bool,
) -> OrgEdges {
    let gates = &resolved.gates;
    let groups = graph.organisation().groups();
    let nodes = graph.nodes();
    let mut out = OrgEdges {
        vertices: Vec::new(),
        edges: Vec::new(),
        phases: None,
    };
    if !applies(resolved) {
        return out;
    }
    let g = groups.len() as u32;
    // Begin(i) = base + 2i, End(i) = base + 2i + 1.
    for i in 0..g {
        out.vertices.push(OrgVertex::Begin(i));
        out.vertices.push(OrgVertex::End(i));
        if !resolved.ordered[i as usize] {
            continue;
        }
        out.edges.push((base + 2 * i, base + 2 * i + 1));
        let parent = resolved.parent[i as usize];
        if parent != NONE {
            out.edges.push((base + 2 * parent, base + 2 * i));
            out.edges.push((base + 2 * i + 1, base + 2 * parent + 1));
        }
    }
    // The world's own scheduling nodes stand outside the organisation: no
    // group, sibling order, stage, set or phase applies to them.
    let organised = |i: usize| member(i) && !nodes[i].is_builtin();
    let begin_of_group = |i: u32| base + 2 * i;
    let end_of_group = |i: u32| base + 2 * i + 1;

    // Phases, only once something names one: four bounds in a chain, each
    // phase's nodes between two of them (edges below). The bounds follow
    // the groups' vertices, so that every vertex an ordering can name has
    // the same number in every selection.
    out.phases = phase_base(resolved, base, groups.len());
    // A group's, stage's or set's condition naming no phase sits in the
    // earliest phase of its members: evaluated when the first of them is
    // due, never ordered against their phases.
    let mut gate_phase: Vec<Option<Phase>> = Vec::new();
    if out.phases.is_some() && !gates.is_empty() {
        gate_phase = vec![None; nodes.len()];
        for &(gate, gated) in gates {
            let (gate, gated) = (gate as usize, gated as usize);
            if member(gate) && member(gated) && nodes[gated].gated().is_none() {
                let phase = nodes[gated].placement().phase.unwrap_or(Phase::Update);
                let earliest = gate_phase[gate].map_or(phase, |p| p.min(phase));
                gate_phase[gate] = Some(earliest);
            }
        }
    }
    let phase_of = |index: usize| {
        let node = &nodes[index];
        node.placement()
            .phase
            .or_else(|| gate_phase.get(index).copied().flatten())
            .unwrap_or(Phase::Update)
    };
    if out.phases.is_some() {
        out.vertices.push(OrgVertex::PhaseStart);
        for phase in [Phase::PreUpdate, Phase::Update, Phase::PostUpdate] {
            out.vertices.push(OrgVertex::PhaseEnd(phase));
        }
    }
    for (index, _) in nodes
        .iter()
        .enumerate()
        .filter(|&(i, _)| !shared && organised(i))
    {
        let group = resolved.node_group.get(index).copied().unwrap_or(NONE);
        if group != NONE && resolved.ordered[group as usize] {
            out.edges.push((begin_of_group(group), index as u32));
            out.edges.push((index as u32, end_of_group(group)));
        }
    }

    // Siblings: per parent (the top level is `g`), the first and last items.
    // An item is a member node or a group: (begin, end, order).
    let mut siblings: Vec<Vec<(u32, u32, Option<SiblingOrder>)>> = vec![Vec::new(); g as usize + 1];
    for (i, group) in groups.iter().enumerate() {
        let parent = resolved.parent[i];
        let slot = if parent == NONE { g } else { parent };
        siblings[slot as usize].push((
            begin_of_group(i as u32),
            end_of_group(i as u32),
            group.sibling_order(),
        ));
    }
    for (index, node) in nodes.iter().enumerate().filter(|&(i, _)| organised(i)) {
        let sibling = node.placement().sibling;
        if shared && sibling.is_none() {
            // Its edges go through its placement's pair: only whether a
            // parent has first or last items matters here.
            continue;
        }
        let group = resolved.node_group.get(index).copied().unwrap_or(NONE);
        let slot = if group == NONE { g } else { group };
        siblings[slot as usize].push((index as u32, index as u32, sibling));
    }
    // Per parent: its first/last vertices (`NONE` when it has none); the
    // nodes' edges to them go through their placement's pair when shared.
    let mut first_done = vec![NONE; g as usize + 1];
    let mut last_due = vec![NONE; g as usize + 1];
    let own = |item: u32| !shared || item >= base;
    for (parent, items) in siblings.iter().enumerate() {
        let has = |which| items.iter().any(|&(_, _, o)| o == Some(which));
        if has(SiblingOrder::First) {
            let done = base + out.vertices.len() as u32;
            first_done[parent] = done;
            out.vertices.push(OrgVertex::FirstDone(parent as u32));
            for &(begin, end, order) in items.iter().filter(|item| own(item.0)) {
                if order == Some(SiblingOrder::First) {
                    out.edges.push((end, done));
                } else {
                    out.edges.push((done, begin));
                }
            }
        }
        if has(SiblingOrder::Last) {
            let due = base + out.vertices.len() as u32;
            last_due[parent] = due;
            out.vertices.push(OrgVertex::LastDue(parent as u32));
            for &(begin, end, order) in items.iter().filter(|item| own(item.0)) {
                if order == Some(SiblingOrder::Last) {
                    out.edges.push((due, begin));
                } else {
                    out.edges.push((end, due));
                }
            }
        }
    }

    // Stages, then sets: each kind a chain of end vertices, one per level
    // (distinct order number).
    let level_base = base + out.vertices.len() as u32;
    let levels = resolved.level_rank.len() as u32;
    let first_of_kind = |level: u32| level == 0 || level == resolved.stage_levels;
    for level in 0..levels {
        out.vertices.push(OrgVertex::RankEnd(level));
        if !first_of_kind(level) {
            out.edges.push((level_base + level - 1, level_base + level));
        }
    }
    for (index, _) in nodes
        .iter()
        .enumerate()
        .filter(|&(i, _)| !shared && organised(i))
    {
        for rank in [resolved.node_stage.get(index), resolved.node_set.get(index)] {
            let Some(&rank) = rank else { continue };
            if rank == NONE {
                continue;
            }
            let level = resolved.rank_level[rank as usize];
            out.edges.push((index as u32, level_base + level));
            if !first_of_kind(level) {
                out.edges.push((level_base + level - 1, index as u32));
            }
        }
    }

    if let Some(bounds) = out.phases {
        for k in 0..3 {
            out.edges.push((bounds + k, bounds + k + 1));
        }
        for index in (0..nodes.len()).filter(|&i| !shared && organised(i)) {
            let k = phase_of(index) as u32;
            out.edges.push((bounds + k, index as u32));
            out.edges.push((index as u32, bounds + k + 1));
        }
    }
    if !shared {
        return out;
    }

    // The placements: each node to its pair, then each pair's edges once.
    let mut placements: HashMap<Placed, u32> = HashMap::new();
    let mut pairs: Vec<Placed> = Vec::new();
    let mut last: Option<(Placed, u32)> = None;
    for (index, node) in nodes.iter().enumerate().filter(|&(i, _)| organised(i)) {
        let level = |rank: Option<&u32>| match rank {
            Some(&rank) if rank != NONE => resolved.rank_level[rank as usize],
            _ => NONE,
        };
        let placed = Placed {
            group: resolved.node_group.get(index).copied().unwrap_or(NONE),
            sibling: node.placement().sibling,
            stage: level(resolved.node_stage.get(index)),
            set: level(resolved.node_set.get(index)),
            phase: out.phases.map_or(NONE, |_| phase_of(index) as u32),
        };
        let pair = match last {
            Some((previous, pair)) if previous == placed => pair,
            _ => *placements.entry(placed).or_insert_with(|| {
                let pair = base + out.vertices.len() as u32;
                out.vertices.push(OrgVertex::Members(placed.group));
                out.vertices.push(OrgVertex::MembersDone(placed.group));
                pairs.push(placed);
                pair
            }),
        };
        last = Some((placed, pair));
        out.edges.push((pair, index as u32));
        out.edges.push((index as u32, pair + 1));
    }
    let first_pair = base + out.vertices.len() as u32 - 2 * pairs.len() as u32;
    for (p, placed) in pairs.iter().enumerate() {
        let (start, done) = (first_pair + 2 * p as u32, first_pair + 2 * p as u32 + 1);
        let group = placed.group;
        if group != NONE && resolved.ordered[group as usize] {
            out.edges.push((begin_of_group(group), start));
            out.edges.push((done, end_of_group(group)));
        }
        let parent = if group == NONE { g } else { group } as usize;
        if first_done[parent] != NONE {
            match placed.sibling {
                Some(SiblingOrder::First) => out.edges.push((done, first_done[parent])),
                _ => out.edges.push((first_done[parent], start)),
            }
        }
        if last_due[parent] != NONE {
            match placed.sibling {
                Some(SiblingOrder::Last) => out.edges.push((last_due[parent], start)),
                _ => out.edges.push((done, last_due[parent])),
            }
        }
        for level in [placed.stage, placed.set] {
            if level == NONE {
                continue;
            }
            out.edges.push((done, level_base + level));
            if !first_of_kind(level) {
                out.edges.push((level_base + level - 1, start));
            }
        }
        if let Some(bounds) = out.phases {
            out.edges.push((bounds + placed.phase, start));
            out.edges.push((done, bounds + placed.phase + 1));
        }
    }
    out
}

/// What places a node in the organisation (see [`edges`]): its group, its
/// order among its siblings, its stage's and set's levels and its phase
/// (`NONE` for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Placed {
    group: u32,
    sibling: Option<SiblingOrder>,
    stage: u32,
    set: u32,
    phase: u32,
}

/// Whether any organisation vertex exists (something is organised or names
/// a phase).
pub(crate) fn applies(resolved: &Resolved) -> bool {
    resolved.any || resolved.phases
}

/// The first of the four phase bounds, right after the groups' vertices,
/// when phases apply.
pub(crate) fn phase_base(resolved: &Resolved, base: u32, groups: usize) -> Option<u32> {
    resolved.phases.then_some(base + 2 * groups as u32)
}

/// The bounds of `phase` among the four phase vertices from `bounds`.
pub(crate) fn phase_bounds(bounds: u32, phase: Phase) -> (u32, u32) {
    let k = phase as u32;
    (bounds + k, bounds + k + 1)
}

/// The begin and end vertices of a group, for orderings that name it.
pub(crate) fn group_bounds(base: u32, group: u32) -> (u32, u32) {
    (base + 2 * group, base + 2 * group + 1)
}

/// The name an organisation vertex goes by in a cycle: the group, stage,
/// set or phase (first/last vertices name the parent's first/last items).
pub(crate) fn vertex_name(graph: &GraphView<'_>, resolved: &Resolved, vertex: OrgVertex) -> String {
    vertex_name_parts(graph, resolved, vertex, |parts| parts.concat())
}

/// [`vertex_name`] in parts, handed to `name` (no allocation).
pub(crate) fn vertex_name_parts<R>(
    graph: &GraphView<'_>,
    resolved: &Resolved,
    vertex: OrgVertex,
    name: impl FnOnce(&[&str]) -> R,
) -> R {
    let groups = graph.organisation().groups();
    let ranks = graph.organisation().ranks();
    match vertex {
        OrgVertex::Begin(g) | OrgVertex::End(g) => name(&[groups[g as usize].name()]),
        OrgVertex::RankEnd(level) => {
            let first = resolved.level_rank[level as usize];
            let rank = &ranks[resolved.rank_decl[first as usize] as usize];
            name(&["(", rank.kind.name(), " ", &rank.name, ")"])
        }
        OrgVertex::PhaseStart => name(&["(phase PreUpdate)"]),
        OrgVertex::PhaseEnd(phase) => name(&["(phase ", phase.name(), ")"]),
        OrgVertex::FirstDone(p)
        | OrgVertex::LastDue(p)
        | OrgVertex::Members(p)
        | OrgVertex::MembersDone(p) => {
            let what = match vertex {
                OrgVertex::FirstDone(_) => "order_first items of ",
                OrgVertex::LastDue(_) => "order_last items of ",
                OrgVertex::Members(_) => "members of ",
                _ => "members done of ",
            };
            match groups.get(p as usize) {
                Some(group) => name(&["(", what, "group ", group.name(), ")"]),
                None => name(&["(", what, "the top level)"]),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parent` of a chain `depth` deep: group `i` inside group `i - 1`.
    fn chain(depth: usize) -> Vec<u32> {
        (0..depth as u32)
            .map(|g| g.checked_sub(1).unwrap_or(NONE))
            .collect()
    }

    /// Counted, not timed: a walk from every group to the top of a deep
    /// chain is quadratic (100,000 levels: five billion steps).
    #[test]
    fn order_reaches_a_deep_chain_in_linear_steps() {
        let depth = 100_000;
        let parent = chain(depth);
        let mut settled = Vec::new();
        // Nothing ordered: nothing is reached.
        let mut ordered = vec![false; depth];
        let steps = inherit_order(&mut ordered, &parent, &mut settled);
        assert!(ordered.iter().all(|&o| !o));
        assert!(steps <= 2 * depth, "{steps} steps for {depth} groups");
        // The top ordered: every group below it is.
        let mut ordered = vec![false; depth];
        ordered[0] = true;
        let steps = inherit_order(&mut ordered, &parent, &mut settled);
        assert!(ordered.iter().all(|&o| o));
        assert!(steps <= 2 * depth, "{steps} steps for {depth} groups");
        // A group halfway down ordered: it and what is below it, only.
        let mut ordered = vec![false; depth];
        ordered[depth / 2] = true;
        let steps = inherit_order(&mut ordered, &parent, &mut settled);
        assert!(ordered[..depth / 2].iter().all(|&o| !o));
        assert!(ordered[depth / 2..].iter().all(|&o| o));
        assert!(steps <= 2 * depth, "{steps} steps for {depth} groups");
        // Declared deepest first (children before their parents).
        let reversed: Vec<u32> = (0..depth as u32)
            .map(|g| if g + 1 == depth as u32 { NONE } else { g + 1 })
            .collect();
        let mut ordered = vec![false; depth];
        ordered[depth - 1] = true;
        let steps = inherit_order(&mut ordered, &reversed, &mut settled);
        assert!(ordered.iter().all(|&o| o));
        assert!(steps <= 2 * depth, "{steps} steps for {depth} groups");
    }
}
