//! Plan order: resolving `before`/`after` names, the produce edges, the stable
//! topological sort, and the cycles that stop it.
//!
//! Nodes and markers share one vertex space here: node `i` is vertex `i`,
//! marker `k` is vertex `n + k`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use foldhash::HashMap;

use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level, NodeRef, Relation};
use crate::plan::{GraphView, MarkerIndex, NodeIndex, Reason};

const NONE: u32 = u32::MAX;

/// The explicit and produce edges over nodes and markers, indexed both ways.
#[derive(Debug)]
pub(crate) struct Explicit {
    /// Number of nodes; vertices at or above it are markers.
    pub(crate) nodes: usize,
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

pub(crate) fn vertex_ref(nodes: usize, vertex: u32) -> NodeRef {
    if (vertex as usize) < nodes {
        NodeRef::Node(NodeIndex(vertex))
    } else {
        NodeRef::Marker(MarkerIndex(vertex - nodes as u32))
    }
}

pub(crate) fn vertex_name<'a>(graph: &GraphView<'a>, vertex: u32) -> &'a str {
    match vertex_ref(graph.nodes().len(), vertex) {
        NodeRef::Node(node) => graph.node(node).name(),
        NodeRef::Marker(marker) => graph.markers()[marker.index()].label(),
    }
}

/// Instance keys and marker labels to vertices; names to every node with that
/// name (for nodes registered under a key other than their name).
#[derive(Default)]
struct Targets<'g> {
    by_key: HashMap<&'g str, u32>,
    by_name: HashMap<&'g str, Vec<u32>>,
}

impl Targets<'_> {
    fn resolve(&self, target: &str, mut each: impl FnMut(u32)) -> bool {
        if let Some(&vertex) = self.by_key.get(target) {
            each(vertex);
            true
        } else if let Some(vertices) = self.by_name.get(target) {
            vertices.iter().for_each(|&v| each(v));
            true
        } else {
            false
        }
    }
}

impl Explicit {
    /// Resolves every ordering attribute and produce relation into edges,
    /// reporting duplicate keys (SL0004) and unknown names (SL0002).
    pub(crate) fn collect(graph: &GraphView<'_>, diagnostics: &mut Vec<Diagnostic>) -> Self {
        let nodes = graph.nodes();
        let n = nodes.len();
        let vertices = n + graph.markers().len();
        let mut targets = Targets::default();
        targets.by_key.reserve(vertices);
        let keys = nodes
            .iter()
            .map(|node| node.key())
            .chain(graph.markers().iter().map(|marker| marker.label()));
        for (vertex, key) in keys.enumerate() {
            let vertex = vertex as u32;
            match targets.by_key.get(key) {
                Some(&first) => diagnostics.push(duplicate(graph, key, first, vertex)),
                None => {
                    targets.by_key.insert(key, vertex);
                }
            }
        }
        for (i, node) in nodes.iter().enumerate() {
            if node.name() != node.key() {
                targets
                    .by_name
                    .entry(node.name())
                    .or_default()
                    .push(i as u32);
            }
        }

        // One edge per ordering target is the usual count (more when a name
        // matches several nodes, plus the produce edges).
        let declared: usize = nodes
            .iter()
            .map(|node| node.after().len() + node.before().len())
            .sum();
        let mut edges = Explicit {
            nodes: n,
            from: Vec::with_capacity(declared),
            to: Vec::with_capacity(declared),
            reason: Vec::with_capacity(declared),
            succ_offsets: Vec::new(),
            succ: Vec::new(),
            pred_offsets: Vec::new(),
            pred: Vec::new(),
        };
        let orderings = nodes
            .iter()
            .map(|node| (node.after(), node.before()))
            .chain(
                graph
                    .markers()
                    .iter()
                    .map(|marker| (marker.after_targets(), marker.before_targets())),
            );
        for (vertex, (after, before)) in orderings.enumerate() {
            let vertex = vertex as u32;
            for (relation, list) in [(Relation::After, after), (Relation::Before, before)] {
                for target in list {
                    let found = targets.resolve(target, |other| match relation {
                        Relation::After => edges.push(other, vertex, Reason::After),
                        Relation::Before => edges.push(vertex, other, Reason::Before),
                    });
                    if !found {
                        diagnostics.push(unknown(graph, vertex, target, relation));
                    }
                }
            }
        }
        edges.push_produce_edges(graph);

        (edges.succ_offsets, edges.succ) = csr(vertices, &edges.from);
        (edges.pred_offsets, edges.pred) = csr(vertices, &edges.to);
        edges
    }

    fn push(&mut self, from: u32, to: u32, reason: Reason) {
        self.from.push(from);
        self.to.push(to);
        self.reason.push(reason);
    }

    /// A producer before every consumer of what it produces.
    fn push_produce_edges(&mut self, graph: &GraphView<'_>) {
        let nodes = graph.nodes();
        if nodes
            .iter()
            .all(|node| node.access().produced().next().is_none())
        {
            return;
        }
        let mut producers: Vec<Vec<u32>> = vec![Vec::new(); graph.table().len()];
        for (i, node) in nodes.iter().enumerate() {
            for service in node.access().produced() {
                producers[service.index()].push(i as u32);
            }
        }
        for (consumer, node) in nodes.iter().enumerate() {
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
    let names = vec![
        vertex_name(graph, first).to_owned(),
        vertex_name(graph, second).to_owned(),
    ];
    Diagnostic::new(Level::Error, kind, message, names)
}

fn describe(graph: &GraphView<'_>, vertex: u32) -> String {
    match vertex_ref(graph.nodes().len(), vertex) {
        NodeRef::Node(node) => format!("node #{} `{}`", node.0, graph.node(node).name()),
        NodeRef::Marker(marker) => format!("marker `{}`", graph.markers()[marker.index()].label()),
    }
}

fn unknown(graph: &GraphView<'_>, vertex: u32, target: &str, relation: Relation) -> Diagnostic {
    let source = vertex_name(graph, vertex);
    let message = format!(
        "`{source}` is ordered {relation} `{target}`, which is not a registered node or marker; \
         check the spelling or register it"
    );
    let kind = DiagnosticKind::UnknownTarget {
        source: vertex_ref(graph.nodes().len(), vertex),
        target: target.to_owned(),
        relation,
    };
    Diagnostic::new(Level::Error, kind, message, vec![source.to_owned()])
}

/// The result of the topological sort.
#[derive(Debug)]
pub(crate) struct Sorted {
    /// Real nodes in plan order.
    pub(crate) nodes: Vec<u32>,
    /// Every vertex (markers too) in the order released.
    pub(crate) vertices: Vec<u32>,
}

/// Kahn's algorithm with a min-heap on registration index. Markers are released
/// the moment they are ready: they emit nothing, so the nodes waiting on them
/// compete on registration index alone. On a cycle, returns every SL0001.
pub(crate) fn sort(graph: &GraphView<'_>, edges: &Explicit) -> Result<Sorted, Vec<Diagnostic>> {
    let n = edges.nodes;
    let vertices = edges.vertices();
    let mut waiting: Vec<u32> = (0..vertices as u32)
        .map(|v| edges.predecessors(v).len() as u32)
        .collect();
    // Nodes with no predecessor are ready from the start, in index order: a
    // cursor walks them; only nodes released later go through the heap.
    let initially_ready = |v: usize| edges.pred_offsets[v] == edges.pred_offsets[v + 1];
    let next_initial = |mut v: usize| {
        while v < n && !initially_ready(v) {
            v += 1;
        }
        v
    };
    let mut cursor = next_initial(0);
    let mut ready_nodes = BinaryHeap::new();
    let mut ready_markers: Vec<u32> = (n..vertices)
        .filter(|&v| waiting[v] == 0)
        .map(|v| v as u32)
        .collect();
    let mut sorted = Sorted {
        nodes: Vec::with_capacity(n),
        vertices: Vec::with_capacity(vertices),
    };
    loop {
        let vertex = match ready_markers.pop() {
            Some(marker) => marker,
            None => {
                let node = match ready_nodes.peek() {
                    Some(&Reverse(released)) if cursor >= n || (released as usize) < cursor => {
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
                    ready_nodes.push(Reverse(to));
                } else {
                    ready_markers.push(to);
                }
            }
        }
    }
    if sorted.vertices.len() == vertices {
        return Ok(sorted);
    }
    let stuck: Vec<bool> = waiting.iter().map(|&w| w > 0).collect();
    Err(find_cycles(edges, &stuck)
        .into_iter()
        .map(|cycle| cycle_diagnostic(graph, &cycle))
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

fn cycle_diagnostic(graph: &GraphView<'_>, cycle: &[u32]) -> Diagnostic {
    let names: Vec<String> = cycle
        .iter()
        .map(|&v| vertex_name(graph, v).to_owned())
        .collect();
    let mut path = names.join(" -> ");
    path.push_str(" -> ");
    path.push_str(&names[0]);
    let message = format!("cycle: {path}; remove or reverse one of these orderings");
    let n = graph.nodes().len();
    let kind = DiagnosticKind::Cycle {
        path: cycle.iter().map(|&v| vertex_ref(n, v)).collect(),
    };
    Diagnostic::new(Level::Error, kind, message, names)
}
