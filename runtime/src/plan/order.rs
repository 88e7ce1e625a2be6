//! Plan order: resolving `before`/`after` names, the produce edges, the stable
//! topological sort, and the cycles that stop it.
//!
//! Nodes and markers share one vertex space here: node `i` is vertex `i`,
//! marker `k` is vertex `n + k`, and the organisation's vertices follow.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use foldhash::HashMap;

use crate::node::{NodeDescriptor, NodeState, Point};
use crate::organise::Phase;
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level, NodeRef, Relation};
use crate::plan::organise::{self, GroupIndex, OrgVertex, Resolved, Selection};
use crate::plan::{GraphView, MarkerIndex, NodeIndex, Reason};

const NONE: u32 = u32::MAX;

/// The explicit and produce edges over nodes, markers and organisation
/// vertices, indexed both ways.
#[derive(Debug)]
pub(crate) struct Explicit {
    /// Number of nodes; vertices at or above it are markers (the user's,
    /// then the organisation's).
    pub(crate) nodes: usize,
    /// Number of user markers.
    pub(crate) markers: usize,
    /// The organisation's vertices, from `nodes + markers`.
    pub(crate) org: Vec<OrgVertex>,
    /// Per node, whether the plan is for it (`None`: every node is).
    pub(crate) member: Option<Vec<bool>>,
    pub(crate) from: Vec<u32>,
    pub(crate) to: Vec<u32>,
    pub(crate) reason: Vec<Reason>,
    succ_offsets: Vec<u32>,
    succ: Vec<u32>,
    pred_offsets: Vec<u32>,
    pred: Vec<u32>,
}

/// Counting sort of edge ids by `keys[edge]`, stable: offsets and ids.
fn csr(vertices: usize, keys: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; vertices + 1];
    for &k in keys {
        offsets[k as usize + 1] += 1;
    }
    for v in 0..vertices {
        offsets[v + 1] += offsets[v];
    }
    let mut ids = vec![0u32; keys.len()];
    // Place each id at its key's cursor; the cursors end where the next key
    // starts, so shifting them up by one gives back the offsets.
    for (edge, &k) in keys.iter().enumerate() {
        ids[offsets[k as usize] as usize] = edge as u32;
        offsets[k as usize] += 1;
    }
    offsets.copy_within(0..vertices, 1);
    offsets[0] = 0;
    (offsets, ids)
}

/// What an ordering target resolves to: where it begins and ends (the same
/// vertex for a node or marker), and the node when it is one.
#[derive(Debug, Clone, Copy)]
struct Target {
    begin: u32,
    end: u32,
}

/// Instance keys, marker labels and group names to vertices; names to every
/// node with that name (for nodes registered under a key other than their
/// name).
#[derive(Default)]
pub(crate) struct Targets<'g> {
    by_key: HashMap<&'g str, Target>,
    by_name: HashMap<&'g str, Vec<u32>>,
}

impl<'g> Targets<'g> {
    /// Every name an ordering may target, the same for every selection (an
    /// organisation vertex's number does not depend on the selection);
    /// reports duplicate keys (SL0004).
    pub(crate) fn new(
        graph: &GraphView<'g>,
        resolved: &Resolved,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let nodes = graph.nodes();
        let n = nodes.len();
        let markers = graph.markers().len();
        let org_base = (n + markers) as u32;
        let groups = graph.organisation().groups();
        let organised = organise::applies(resolved);
        let mut targets = Targets::default();
        targets.by_key.reserve(n + markers + groups.len());
        let keys = nodes
            .iter()
            .map(|node| node.key())
            .chain(graph.markers().iter().map(|marker| marker.label()));
        let removed = |v: usize| v < n && nodes[v].state() == NodeState::Removed;
        for (vertex, key) in keys.enumerate().filter(|&(v, _)| !removed(v)) {
            let vertex = vertex as u32;
            match targets.by_key.get(key) {
                Some(&first) => diagnostics.push(duplicate(graph, key, first.begin, vertex)),
                None => {
                    targets.by_key.insert(
                        key,
                        Target {
                            begin: vertex,
                            end: vertex,
                        },
                    );
                }
            }
        }
        if organised {
            for (index, group) in groups.iter().enumerate() {
                let (begin, end) = organise::group_bounds(org_base, index as u32);
                match targets.by_key.get(group.name()) {
                    // Two groups of one name are reported once, in `Resolved`.
                    Some(first) if (first.begin as usize) < n + markers => {
                        diagnostics.push(duplicate_group(graph, group.name(), first.begin, index));
                    }
                    Some(_) => {}
                    None => {
                        targets.by_key.insert(group.name(), Target { begin, end });
                    }
                }
            }
        }
        if let Some(bounds) = organise::phase_base(resolved, org_base, groups.len()) {
            for phase in [Phase::PreUpdate, Phase::Update, Phase::PostUpdate] {
                let (begin, end) = organise::phase_bounds(bounds, phase);
                targets
                    .by_key
                    .entry(phase.name())
                    .or_insert(Target { begin, end });
            }
        }
        for (i, node) in nodes.iter().enumerate().filter(|&(i, _)| !removed(i)) {
            if node.name() != node.key() {
                targets
                    .by_name
                    .entry(node.name())
                    .or_default()
                    .push(i as u32);
            }
        }

        targets
    }

    fn resolve(&self, target: &str, mut each: impl FnMut(Target)) -> bool {
        if let Some(&found) = self.by_key.get(target) {
            each(found);
            true
        } else if let Some(vertices) = self.by_name.get(target) {
            vertices
                .iter()
                .for_each(|&v| each(Target { begin: v, end: v }));
            true
        } else {
            false
        }
    }
}

impl Explicit {
    pub(crate) fn is_member(&self, node: usize) -> bool {
        self.member.as_ref().is_none_or(|member| member[node])
    }

    pub(crate) fn vertex_ref(&self, vertex: u32) -> Option<NodeRef> {
        let v = vertex as usize;
        if v < self.nodes {
            Some(NodeRef::Node(NodeIndex(vertex)))
        } else if v < self.nodes + self.markers {
            Some(NodeRef::Marker(MarkerIndex((v - self.nodes) as u32)))
        } else {
            match self.org[v - self.nodes - self.markers] {
                OrgVertex::Begin(g) | OrgVertex::End(g) => Some(NodeRef::Group(GroupIndex(g))),
                _ => None,
            }
        }
    }

    pub(crate) fn vertex_name(
        &self,
        graph: &GraphView<'_>,
        resolved: &Resolved,
        vertex: u32,
    ) -> String {
        let v = vertex as usize;
        if v < self.nodes {
            graph.nodes()[v].name().to_owned()
        } else if v < self.nodes + self.markers {
            graph.markers()[v - self.nodes].label().to_owned()
        } else {
            organise::vertex_name(graph, resolved, self.org[v - self.nodes - self.markers])
        }
    }

    /// Resolves every ordering attribute, produce relation and organisation
    /// declaration of the nodes `member` selects into edges, reporting
    /// duplicate keys (SL0004), unknown names (SL0002) and orderings that
    /// name a node of another cadence or schedule (SL0003). `shared`: nodes
    /// of one placement share their organisation edges (`organise::edges`).
    pub(crate) fn collect(
        graph: &GraphView<'_>,
        resolved: &Resolved,
        targets: &Targets<'_>,
        member: Option<Vec<bool>>,
        selection: &Selection,
        shared: bool,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let nodes = graph.nodes();
        let n = nodes.len();
        let markers = graph.markers().len();
        let is_member = |i: usize| member.as_ref().is_none_or(|m| m[i]);
        let org_base = (n + markers) as u32;
        let org = organise::edges(graph, resolved, &is_member, org_base, shared);
        let vertices = n + markers + org.vertices.len();
        let groups = graph.organisation().groups();
        let removed = |v: usize| v < n && nodes[v].state() == NodeState::Removed;

        // One edge per ordering target is the usual count (more when a name
        // matches several nodes, plus the produce and organisation edges).
        let declared: usize = nodes
            .iter()
            .map(|node| node.after().len() + node.before().len())
            .sum::<usize>()
            + org.edges.len();
        let mut edges = Explicit {
            nodes: n,
            markers,
            org: Vec::new(),
            member: None,
            from: Vec::with_capacity(declared),
            to: Vec::with_capacity(declared),
            reason: Vec::with_capacity(declared),
            succ_offsets: Vec::new(),
            succ: Vec::new(),
            pred_offsets: Vec::new(),
            pred: Vec::new(),
        };
        // Sources: nodes, markers, groups (as `(begin, end)`).
        let orderings = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (i as u32, i as u32, node.after(), node.before()))
            .chain(graph.markers().iter().enumerate().map(|(k, marker)| {
                let v = (n + k) as u32;
                (v, v, marker.after_targets(), marker.before_targets())
            }))
            .chain(
                groups
                    .iter()
                    .enumerate()
                    .filter(|_| !org.vertices.is_empty())
                    .map(|(g, group)| {
                        let (begin, end) = organise::group_bounds(org_base, g as u32);
                        (begin, end, group.after_targets(), group.before_targets())
                    }),
            );
        // The keys and names of removed nodes, gathered the first time an
        // ordering names nothing (not a scan of every node per such name).
        let mut removed_names: Option<foldhash::HashSet<&str>> = None;
        for (begin, end, after, before) in orderings {
            let source_node = (begin as usize) < n;
            if source_node && !is_member(begin as usize) {
                continue;
            }
            for (relation, list) in [(Relation::After, after), (Relation::Before, before)] {
                for target in list {
                    let found = targets.resolve(target, |other| {
                        let other_node = (other.begin as usize) < n;
                        if other_node && !is_member(other.begin as usize) {
                            // A node of another selection: an error when a
                            // node names it, nothing when a group or marker
                            // carries the order (it is simply not there). A
                            // disabled node's orderings wait for it.
                            if source_node && nodes[other.begin as usize].is_enabled() {
                                diagnostics.push(cross_selection(
                                    graph,
                                    selection,
                                    begin,
                                    other.begin,
                                    relation,
                                ));
                            }
                            return;
                        }
                        match relation {
                            Relation::After => edges.push(other.end, begin, Reason::After),
                            _ => edges.push(end, other.begin, Reason::Before),
                        }
                    });
                    // An ordering naming a removed node went with it.
                    let mut gone = || {
                        removed_names
                            .get_or_insert_with(|| {
                                (0..n)
                                    .filter(|&v| removed(v))
                                    .flat_map(|v| [nodes[v].key(), nodes[v].name()])
                                    .collect()
                            })
                            .contains(&**target)
                    };
                    if !found && !gone() {
                        let source = if (begin as usize) < n + markers {
                            edges.vertex_ref(begin)
                        } else {
                            Some(NodeRef::Group(GroupIndex((begin - org_base) / 2)))
                        };
                        let name = match source {
                            Some(NodeRef::Group(g)) => groups[g.index()].name().to_owned(),
                            _ => vertex_name(graph, begin),
                        };
                        diagnostics.push(unknown(source, &name, target, relation));
                    }
                }
            }
        }
        edges.push_produce_edges(graph, &is_member, selection, diagnostics);
        edges.push_append_edges(graph, &is_member);
        for &(condition, gated) in &resolved.gates {
            if !is_member(condition as usize) {
                continue;
            }
            if is_member(gated as usize) {
                edges.push(condition, gated, Reason::RunCondition);
            } else if nodes[gated as usize].is_enabled() {
                // A member in another plan would read a verdict its own
                // plan never evaluated.
                diagnostics.push(cross_selection(
                    graph,
                    selection,
                    gated,
                    condition,
                    Relation::InGroup,
                ));
            }
        }
        for &(from, to) in &org.edges {
            edges.push(from, to, Reason::After);
        }
        edges.org = org.vertices;
        edges.member = member;

        (edges.succ_offsets, edges.succ) = csr(vertices, &edges.from);
        (edges.pred_offsets, edges.pred) = csr(vertices, &edges.to);
        edges
    }

    fn push(&mut self, from: u32, to: u32, reason: Reason) {
        self.from.push(from);
        self.to.push(to);
        self.reason.push(reason);
    }

    /// A producer before every consumer of what it produces. A producer and
    /// a consumer in different selections are not ordered: the consumer
    /// reads what the producer left (its own cadence or schedule runs the
    /// producer).
    fn push_produce_edges(
        &mut self,
        graph: &GraphView<'_>,
        is_member: &dyn Fn(usize) -> bool,
        _selection: &Selection,
        _diagnostics: &mut [Diagnostic],
    ) {
        let nodes = graph.nodes();
        if nodes
            .iter()
            .all(|node| node.access().produced().next().is_none())
        {
            return;
        }
        let mut producers: Vec<Vec<u32>> = vec![Vec::new(); graph.table().len()];
        for (i, node) in nodes.iter().enumerate().filter(|&(i, _)| is_member(i)) {
            for service in node.access().produced() {
                producers[service.index()].push(i as u32);
            }
        }
        for (consumer, node) in nodes.iter().enumerate().filter(|&(i, _)| is_member(i)) {
            let access = node.access();
            for service in access.shared().chain(access.gated()) {
                for &producer in &producers[service.index()] {
                    if producer != consumer as u32 {
                        self.push(producer, consumer as u32, Reason::Produces(service));
                    }
                }
            }
        }
    }

    /// An appender before every gate of what it appends to (reference 003:
    /// the commit waits for every recorder), wherever either was
    /// registered; the lane walk then adds the same edge as a gate after
    /// shared. Selections are kept apart as for produce edges.
    fn push_append_edges(&mut self, graph: &GraphView<'_>, is_member: &dyn Fn(usize) -> bool) {
        let nodes = graph.nodes();
        let appends =
            |node: &crate::node::NodeDescriptor| node.access().appended().next().is_some();
        if !nodes.iter().any(appends) {
            return;
        }
        let mut appenders: Vec<Vec<u32>> = vec![Vec::new(); graph.table().len()];
        for (i, node) in nodes.iter().enumerate().filter(|&(i, _)| is_member(i)) {
            for service in node.access().appended() {
                appenders[service.index()].push(i as u32);
            }
        }
        for (gate, node) in nodes.iter().enumerate().filter(|&(i, _)| is_member(i)) {
            for service in node.access().gated() {
                for &appender in &appenders[service.index()] {
                    self.push(appender, gate as u32, Reason::Appends(service));
                }
            }
        }
    }

    /// Number of vertices (nodes and markers).
    pub(crate) fn vertices(&self) -> usize {
        self.succ_offsets.len() - 1
    }

    /// Ids of the edges leaving `vertex`.
    pub(crate) fn successors(&self, vertex: u32) -> &[u32] {
        let v = vertex as usize;
        &self.succ[self.succ_offsets[v] as usize..self.succ_offsets[v + 1] as usize]
    }

    /// Ids of the edges entering `vertex`.
    pub(crate) fn predecessors(&self, vertex: u32) -> &[u32] {
        let v = vertex as usize;
        &self.pred[self.pred_offsets[v] as usize..self.pred_offsets[v + 1] as usize]
    }
}

/// A node or user marker (vertices below `nodes + markers`).
fn vertex_ref(nodes: usize, vertex: u32) -> NodeRef {
    if (vertex as usize) < nodes {
        NodeRef::Node(NodeIndex(vertex))
    } else {
        NodeRef::Marker(MarkerIndex(vertex - nodes as u32))
    }
}

/// The name of a node or user marker.
fn vertex_name(graph: &GraphView<'_>, vertex: u32) -> String {
    match vertex_ref(graph.nodes().len(), vertex) {
        NodeRef::Node(node) => graph.node(node).name().to_owned(),
        NodeRef::Marker(marker) => graph.markers()[marker.index()].label().to_owned(),
        NodeRef::Group(_) => unreachable!("only nodes and markers are below the groups"),
    }
}

fn duplicate(graph: &GraphView<'_>, key: &str, first: u32, second: u32) -> Diagnostic {
    let n = graph.nodes().len();
    let message = format!(
        "`{key}` is registered twice ({} and {}); give one of them its own instance key",
        describe(graph, first),
        describe(graph, second),
    );
    let kind = DiagnosticKind::DuplicateKey {
        key: key.to_owned(),
        first: vertex_ref(n, first),
        second: vertex_ref(n, second),
    };
    let names = vec![vertex_name(graph, first), vertex_name(graph, second)];
    Diagnostic::new(Level::Error, kind, message, names)
}

fn duplicate_group(graph: &GraphView<'_>, key: &str, first: u32, group: usize) -> Diagnostic {
    let n = graph.nodes().len();
    let message = format!(
        "`{key}` names both {} and a group; nodes and groups share one namespace: \
         rename one of them",
        describe(graph, first),
    );
    let kind = DiagnosticKind::DuplicateKey {
        key: key.to_owned(),
        first: vertex_ref(n, first),
        second: NodeRef::Group(GroupIndex(group as u32)),
    };
    let names = vec![vertex_name(graph, first), key.to_owned()];
    Diagnostic::new(Level::Error, kind, message, names)
}

fn describe(graph: &GraphView<'_>, vertex: u32) -> String {
    match vertex_ref(graph.nodes().len(), vertex) {
        NodeRef::Node(node) => format!("node #{} `{}`", node.0, graph.node(node).name()),
        NodeRef::Marker(marker) => format!("marker `{}`", graph.markers()[marker.index()].label()),
        NodeRef::Group(_) => unreachable!("only nodes and markers are below the groups"),
    }
}

fn unknown(source: Option<NodeRef>, name: &str, target: &str, relation: Relation) -> Diagnostic {
    let message = format!(
        "`{name}` is ordered {relation} `{target}`, which is not a registered node, group or \
         marker; check the spelling or register it"
    );
    let kind = DiagnosticKind::UnknownTarget {
        source: source.unwrap_or(NodeRef::Marker(MarkerIndex(u32::MAX))),
        target: target.to_owned(),
        relation,
    };
    Diagnostic::new(Level::Error, kind, message, vec![name.to_owned()])
}

/// SL0003: a node ordered against a node of another cadence or schedule.
fn cross_selection(
    graph: &GraphView<'_>,
    selection: &Selection,
    source: u32,
    target: u32,
    relation: Relation,
) -> Diagnostic {
    let nodes = graph.nodes();
    let (a, b) = (&nodes[source as usize], &nodes[target as usize]);
    let other = Selection::of(b);
    let message = format!(
        "`{}` ({}) is ordered {relation} `{}` ({}); the two run in separate plans, so the \
         order means nothing: remove it, or move both into one cadence",
        a.name(),
        selection.describe(),
        b.name(),
        other.describe(),
    );
    let kind = DiagnosticKind::CrossCadence {
        source: NodeIndex(source),
        target: NodeIndex(target),
        relation,
    };
    let names = vec![a.name().to_owned(), b.name().to_owned()];
    Diagnostic::new(Level::Error, kind, message, names)
}

/// SL0005 for orders: every pair of registrations in `selection`'s plan
/// that declare the same explicit `order(n)`, each later one against the
/// first that declared it (reference 002: "Every Run declaration requires
/// a unique Order"). Nodes without an order are not compared. A commit
/// point that shares its node's order (it is placed like its node) is that
/// registration's one declaration, not a second one: it is left out, so a
/// node is never its own commit's duplicate, and a registration that
/// repeats another's order is reported once, against its first point.
pub(crate) fn duplicate_orders(
    graph: &GraphView<'_>,
    selection: &Selection,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let nodes = graph.nodes();
    let declares_own_order = |node: &NodeDescriptor| match node.point() {
        Point::Commit { of } => !nodes.get(of.index()).is_some_and(|body| {
            selection.contains(body) && body.placement().order == node.placement().order
        }),
        Point::Only | Point::Body { .. } => true,
    };
    let mut ordered: Vec<(i32, u32)> = nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| selection.contains(node) && declares_own_order(node))
        .filter_map(|(index, node)| Some((node.placement().order?, index as u32)))
        .collect();
    if ordered.len() < 2 {
        return;
    }
    ordered.sort_unstable();
    for run in ordered.chunk_by(|a, b| a.0 == b.0) {
        let &[(order, first), ref later @ ..] = run else {
            continue;
        };
        for &(_, second) in later {
            let (a, b) = (&nodes[first as usize], &nodes[second as usize]);
            let message = format!(
                "the nodes `{}` and `{}` both have order {order} in {}; every Run \
                 declaration requires a unique Order (reference 002): an order breaks \
                 ties within its plan, so two equal ones decide nothing. Give one of \
                 them another order, or order the two with `after`/`before`",
                a.name(),
                b.name(),
                selection.describe(),
            );
            let kind = DiagnosticKind::DuplicateOrder {
                first: NodeIndex(first),
                second: NodeIndex(second),
                order,
            };
            let names = vec![a.name().to_owned(), b.name().to_owned()];
            diagnostics.push(Diagnostic::new(Level::Error, kind, message, names));
        }
    }
}

/// The result of the topological sort.
#[derive(Debug)]
pub(crate) struct Sorted {
    /// Real nodes in plan order.
    pub(crate) nodes: Vec<u32>,
    /// Every vertex (markers too) in the order released.
    pub(crate) vertices: Vec<u32>,
}

/// Kahn's algorithm with a min-heap on `(order, registration index)`.
/// Markers are released the moment they are ready: they emit nothing, so the
/// nodes waiting on them compete on their keys alone. Nodes the plan is not
/// for are never released. On a cycle, returns every SL0001 and SL0007.
pub(crate) fn sort(
    graph: &GraphView<'_>,
    resolved: &Resolved,
    edges: &Explicit,
) -> Result<Sorted, Vec<Diagnostic>> {
    let n = edges.nodes;
    let vertices = edges.vertices();
    let nodes = graph.nodes();
    let mut waiting: Vec<u32> = (0..vertices as u32)
        .map(|v| edges.predecessors(v).len() as u32)
        .collect();
    let tie_break = |v: u32| nodes[v as usize].placement().order.unwrap_or(0);
    // Without tie-break orders, nodes with no predecessor are ready from the
    // start in index order: a cursor walks them and only nodes released later
    // go through the heap. With orders, every ready node goes through it.
    let ordered = nodes
        .iter()
        .any(|node| node.placement().order.is_some_and(|order| order != 0));
    let initially_ready =
        |v: usize| edges.pred_offsets[v] == edges.pred_offsets[v + 1] && edges.is_member(v);
    let next_initial = |mut v: usize| {
        while v < n && !initially_ready(v) {
            v += 1;
        }
        v
    };
    let mut ready_nodes: BinaryHeap<Reverse<(i32, u32)>> = BinaryHeap::new();
    let mut cursor = if ordered {
        for v in (0..n).filter(|&v| initially_ready(v)) {
            ready_nodes.push(Reverse((tie_break(v as u32), v as u32)));
        }
        n
    } else {
        next_initial(0)
    };
    let mut ready_markers: Vec<u32> = (n..vertices)
        .filter(|&v| waiting[v] == 0)
        .map(|v| v as u32)
        .collect();
    let members = match &edges.member {
        Some(member) => member.iter().filter(|&&m| m).count(),
        None => n,
    };
    let mut sorted = Sorted {
        nodes: Vec::with_capacity(members),
        vertices: Vec::with_capacity(vertices - n + members),
    };
    loop {
        let vertex = match ready_markers.pop() {
            Some(marker) => marker,
            None => {
                let node = match ready_nodes.peek() {
                    Some(&Reverse((_, released)))
                        if cursor >= n || (released as usize) < cursor =>
                    {
                        ready_nodes.pop();
                        released
                    }
                    _ if cursor < n => {
                        let node = cursor as u32;
                        cursor = next_initial(cursor + 1);
                        node
                    }
                    _ => break,
                };
                sorted.nodes.push(node);
                node
            }
        };
        sorted.vertices.push(vertex);
        for &edge in edges.successors(vertex) {
            let to = edges.to[edge as usize];
            waiting[to as usize] -= 1;
            if waiting[to as usize] == 0 {
                if (to as usize) < n {
                    ready_nodes.push(Reverse((tie_break(to), to)));
                } else {
                    ready_markers.push(to);
                }
            }
        }
    }
    if sorted.vertices.len() == vertices - n + members {
        return Ok(sorted);
    }
    let stuck: Vec<bool> = waiting.iter().map(|&w| w > 0).collect();
    Err(find_cycles(edges, &stuck)
        .into_iter()
        .map(|cycle| cycle_diagnostic(graph, resolved, edges, &cycle))
        .collect())
}

/// One real cycle per strongly connected component of the vertices the sort
/// could not release (Kosaraju), each starting at its lowest vertex.
fn find_cycles(edges: &Explicit, stuck: &[bool]) -> Vec<Vec<u32>> {
    let vertices = stuck.len();
    // Pass 1: finish order over successors.
    let mut visited = vec![false; vertices];
    let mut finished = Vec::new();
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for start in 0..vertices {
        if !stuck[start] || visited[start] {
            continue;
        }
        visited[start] = true;
        stack.push((start as u32, 0));
        while let Some((v, i)) = stack.last_mut() {
            let out = edges.successors(*v);
            if *i < out.len() {
                let to = edges.to[out[*i] as usize] as usize;
                *i += 1;
                if stuck[to] && !visited[to] {
                    visited[to] = true;
                    stack.push((to as u32, 0));
                }
            } else {
                finished.push(*v);
                stack.pop();
            }
        }
    }
    // Pass 2: components over predecessors, in reverse finish order.
    let mut component = vec![NONE; vertices];
    let mut lowest: Vec<u32> = Vec::new();
    let mut work = Vec::new();
    for &root in finished.iter().rev() {
        if component[root as usize] != NONE {
            continue;
        }
        let id = lowest.len() as u32;
        lowest.push(root);
        component[root as usize] = id;
        work.push(root);
        while let Some(v) = work.pop() {
            lowest[id as usize] = lowest[id as usize].min(v);
            for &edge in edges.predecessors(v) {
                let from = edges.from[edge as usize];
                if stuck[from as usize] && component[from as usize] == NONE {
                    component[from as usize] = id;
                    work.push(from);
                }
            }
        }
    }
    let mut starts = lowest.clone();
    starts.sort_unstable();
    let mut seen_at = vec![NONE; vertices];
    let mut cycles = Vec::new();
    for start in starts {
        let id = component[start as usize];
        // Walk successors inside the component until a vertex repeats: in a
        // strongly connected component every vertex has such a successor,
        // except a lone vertex without a self edge, which is no cycle.
        let mut path = Vec::new();
        let mut v = start;
        let cycle = loop {
            if seen_at[v as usize] != NONE {
                break Some(path.split_off(seen_at[v as usize] as usize));
            }
            seen_at[v as usize] = path.len() as u32;
            path.push(v);
            let next = edges
                .successors(v)
                .iter()
                .map(|&e| edges.to[e as usize])
                .find(|&to| component[to as usize] == id);
            match next {
                Some(to) => v = to,
                None => break None,
            }
        };
        for &v in &path {
            seen_at[v as usize] = NONE;
        }
        if let Some(mut cycle) = cycle {
            cycle.iter().for_each(|&v| seen_at[v as usize] = NONE);
            let lowest_at = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(lowest_at);
            cycles.push(cycle);
        }
    }
    cycles
}

/// SL0001 for a cycle of nodes and user markers; SL0007 when it runs
/// through the organisation (a group, stage, set, phase or first/last
/// order), naming each node and group on it once, in order.
fn cycle_diagnostic(
    graph: &GraphView<'_>,
    resolved: &Resolved,
    edges: &Explicit,
    cycle: &[u32],
) -> Diagnostic {
    let plain = edges.nodes + edges.markers;
    let organised = cycle.iter().any(|&v| v as usize >= plain);
    let mut names: Vec<String> = Vec::with_capacity(cycle.len());
    let mut path: Vec<NodeRef> = Vec::with_capacity(cycle.len());
    for &v in cycle {
        let name = edges.vertex_name(graph, resolved, v);
        // A group's begin and end are one name on the path.
        if names.last() == Some(&name) {
            continue;
        }
        names.push(name);
        if let Some(node) = edges.vertex_ref(v) {
            path.push(node);
        }
    }
    if names.len() > 1 && names.first() == names.last() {
        names.pop();
    }
    let mut text = names.join(" -> ");
    text.push_str(" -> ");
    text.push_str(&names[0]);
    if organised {
        let message = format!(
            "cycle through the organisation: {text}; a group, stage, set, phase or \
             first/last order contradicts another ordering: remove or reverse one of them"
        );
        let kind = DiagnosticKind::OrganisationCycle { path };
        Diagnostic::new(Level::Error, kind, message, names)
    } else {
        let message = format!("cycle: {text}; remove or reverse one of these orderings");
        let kind = DiagnosticKind::Cycle { path };
        Diagnostic::new(Level::Error, kind, message, names)
    }
}
