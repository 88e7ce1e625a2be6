//! Building a plan: plan order, then the lane walk that yields the edges (each
//! with its reasons), the stage view and the compiled arrays, in one pass over
//! the nodes in plan order.

use crate::access::{ServiceId, Touch};
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level};
use crate::plan::order::{self, Explicit, Targets};
use crate::plan::organise::{self, OrgVertex, Resolved, Selection};
use crate::plan::silence::Silencing;
use crate::plan::view::{EdgeRecord, Hierarchy, Names};
use crate::plan::{
    AmbiguityLevel, CompiledPlan, GraphView, LaneKind, MarkerIndex, NodeIndex, Packing, Plan,
    PlanErrors, PlanOptions, Plans, Reason, stages,
};

use foldhash::HashMap;

const NONE: u32 = u32::MAX;

/// How many edges a marker may cost when it is folded into direct edges
/// beyond what keeping it as a barrier vertex would (`m * k` against `m + k`
/// for `m` nodes before it and `k` after it).
const FOLD_SLACK: usize = 16;

/// How many nodes a folded marker may stand for. A marker that stands for
/// more is kept even when folding it would cost no more edges (one
/// successor): every marker after it copies its list, so a chain of folded
/// markers (the ends of groups nested 100,000 deep, each standing for its
/// whole subtree) would copy quadratically many entries.
const MAX_FOLDED: usize = 256;

/// What each marker stands for: the nodes that reach it through explicit
/// edges with only folded markers in between. A marker between few nodes is
/// folded (`a -> marker -> b` becomes `a -> b`); one between many on both
/// sides (a phase, a group of hundreds) is *kept* as a barrier vertex that
/// never runs, so it costs `m + k` edges instead of `m * k`.
pub(crate) struct MarkerPredecessors {
    /// Per marker (vertex `n + k`): where in `arena` its list is, the real
    /// nodes and kept barriers it stands for (just itself once kept), in no
    /// particular order.
    spans: Vec<(usize, usize)>,
    arena: Vec<u32>,
    /// The kept markers, in release order, with what each waits for.
    pub(crate) kept: Vec<(u32, Vec<u32>)>,
}

impl MarkerPredecessors {
    fn new(edges: &Explicit, released: &[u32]) -> Self {
        let n = edges.nodes;
        let mut spans = vec![(0usize, 0usize); edges.vertices() - n];
        let mut arena = Vec::with_capacity(edges.vertices());
        let mut kept = Vec::new();
        let mut list = Vec::new();
        // Per vertex: the marker whose list has it already.
        let mut listed = vec![NONE; edges.vertices()];
        for &vertex in released.iter().filter(|&&v| v as usize >= n) {
            // Nothing waits for a marker without successors (the last phase's
            // end, the last stage's): what it stands for is never asked.
            let out = edges.successors(vertex).len();
            if out == 0 {
                continue;
            }
            list.clear();
            let mut add = |v: u32| {
                if listed[v as usize] != vertex {
                    listed[v as usize] = vertex;
                    list.push(v);
                }
            };
            for &edge in edges.predecessors(vertex) {
                let from = edges.from[edge as usize];
                match (from as usize).checked_sub(n) {
                    None => add(from),
                    Some(marker) => {
                        let (start, end) = spans[marker];
                        arena[start..end].iter().for_each(|&v| add(v));
                    }
                }
            }
            let folded = list.len().saturating_mul(out);
            let start = arena.len();
            let cheaper_kept = list.len() > 1 && out > 1 && folded > list.len() + out + FOLD_SLACK;
            if cheaper_kept || list.len() > MAX_FOLDED {
                kept.push((vertex, list.clone()));
                arena.push(vertex);
            } else {
                arena.extend_from_slice(&list);
            }
            spans[vertex as usize - n] = (start, arena.len());
        }
        Self { spans, arena, kept }
    }

    /// Calls `each(predecessor, reason)` for every explicit predecessor of
    /// the real node `node`: a real node, or a kept marker's vertex; folded
    /// markers replaced by what they stand for.
    pub(crate) fn each(&self, edges: &Explicit, node: u32, mut each: impl FnMut(u32, Reason)) {
        let n = edges.nodes as u32;
        for &edge in edges.predecessors(node) {
            let from = edges.from[edge as usize];
            if from < n {
                each(from, edges.reason[edge as usize]);
            } else {
                let marker = from - n;
                let (start, end) = self.spans[marker as usize];
                for &real in &self.arena[start..end] {
                    each(real, Reason::Marker(MarkerIndex(marker)));
                }
            }
        }
    }
}

/// Every service's lane while walking them in plan order. A lane keeps its
/// last gate and the shared accessors since it (one chain per service).
struct Lanes {
    /// Per service: the last gate.
    last_gate: Vec<u32>,
    /// Per service: the readers since its last gate.
    readers: Chains,
}

impl Lanes {
    fn new(services: usize, capacity: usize) -> Self {
        Self {
            last_gate: vec![NONE; services],
            readers: Chains::new(services, capacity),
        }
    }

    fn shared(&mut self, node: u32, service: ServiceId, incoming: &mut Vec<(u32, Reason)>) {
        let last_gate = self.last_gate[service.index()];
        if last_gate != NONE {
            incoming.push((
                last_gate,
                Reason::Lane {
                    service,
                    kind: LaneKind::SharedAfterGate,
                },
            ));
        }
        self.readers.push(service.index() as u32, node);
    }

    fn gate(&mut self, node: u32, service: ServiceId, incoming: &mut Vec<(u32, Reason)>) {
        let lane = service.index() as u32;
        let last_gate = &mut self.last_gate[service.index()];
        if self.readers.len(lane) == 0 {
            if *last_gate != NONE {
                incoming.push((
                    *last_gate,
                    Reason::Lane {
                        service,
                        kind: LaneKind::GateAfterGate,
                    },
                ));
            }
        } else {
            let kind = LaneKind::GateAfterShared;
            self.readers.any(lane, |reader| {
                incoming.push((reader, Reason::Lane { service, kind }));
                false
            });
            self.readers.clear(lane);
        }
        *last_gate = node;
    }
}

/// A list per vertex (or lane), as chains through one arena (no list per
/// vertex), newest first.
struct Chains {
    /// Per vertex: its newest link, and its list's length.
    heads: Vec<(u32, u32)>,
    /// `(item, next)` links; `next` is `NONE` at a chain's end.
    arena: Vec<(u32, u32)>,
}

impl Chains {
    fn new(vertices: usize, capacity: usize) -> Self {
        Self {
            heads: vec![(NONE, 0); vertices],
            arena: Vec::with_capacity(capacity),
        }
    }

    fn push(&mut self, vertex: u32, item: u32) {
        let (head, len) = &mut self.heads[vertex as usize];
        self.arena.push((item, *head));
        *head = (self.arena.len() - 1) as u32;
        *len += 1;
    }

    fn len(&self, vertex: u32) -> usize {
        self.heads[vertex as usize].1 as usize
    }

    /// Empties `vertex`'s list (its links stay in the arena, unreachable).
    fn clear(&mut self, vertex: u32) {
        self.heads[vertex as usize] = (NONE, 0);
    }

    /// Whether `test` holds for an item of `vertex`'s list.
    fn any(&self, vertex: u32, mut test: impl FnMut(u32) -> bool) -> bool {
        let mut at = self.heads[vertex as usize].0;
        while at != NONE {
            let (item, next) = self.arena[at as usize];
            if test(item) {
                return true;
            }
            at = next;
        }
        false
    }
}

/// Sorts a node's incoming edges as `(source, reason)` tuples compare, as
/// packed integer keys when every payload fits one (source in the high
/// half, the reason's variant in the top bits of the low half, its payload
/// below; a key is decoded back into its edge), so that the many small
/// sorts of the lane walk compare integers computed once.
fn sort_incoming(incoming: &mut Vec<(u32, Reason)>, keys: &mut Vec<u64>) {
    const PAYLOAD: u32 = 1 << 26;
    let packed = |reason: Reason| -> Option<u32> {
        let (variant, payload) = match reason {
            Reason::After => (0, 0),
            Reason::Before => (1, 0),
            Reason::Marker(marker) => (2, marker.0),
            Reason::Produces(service) => (3, service.0),
            Reason::Exclusive => (4, 0),
            Reason::Lane { service, kind } if service.0 < PAYLOAD / 4 => {
                (5, service.0 * 4 + kind as u32)
            }
            Reason::Appends(service) => (6, service.0),
            _ => return None,
        };
        (payload < PAYLOAD).then_some(variant << 26 | payload)
    };
    let unpacked = |key: u32| {
        let payload = key & (PAYLOAD - 1);
        match key >> 26 {
            0 => Reason::After,
            1 => Reason::Before,
            2 => Reason::Marker(MarkerIndex(payload)),
            3 => Reason::Produces(ServiceId(payload)),
            4 => Reason::Exclusive,
            6 => Reason::Appends(ServiceId(payload)),
            _ => Reason::Lane {
                service: ServiceId(payload / 4),
                kind: match payload % 4 {
                    0 => LaneKind::GateAfterShared,
                    1 => LaneKind::GateAfterGate,
                    _ => LaneKind::SharedAfterGate,
                },
            },
        }
    };
    keys.clear();
    for &(from, reason) in incoming.iter() {
        match packed(reason) {
            Some(key) => keys.push(u64::from(from) << 32 | u64::from(key)),
            None => {
                incoming.sort_unstable();
                return;
            }
        }
    }
    keys.sort_unstable();
    incoming.clear();
    incoming.extend(
        keys.iter()
            .map(|&key| ((key >> 32) as u32, unpacked(key as u32))),
    );
}

/// How many barriers [`Ancestors`] follows at most (the first ones in
/// release order); an order-only edge from a barrier beyond them is kept
/// even when implied.
const TRACKED_BARRIERS: usize = 512;

/// Per plan id (nodes, then barriers): the barriers it waits for, directly
/// or through anything, as a bit set of the first [`TRACKED_BARRIERS`]. An
/// edge from barrier `b` to a node is implied exactly when another of the
/// node's predecessors has `b` in its set.
struct Ancestors {
    words: usize,
    rows: Vec<u64>,
}

impl Ancestors {
    fn new(ids: usize, barriers: usize) -> Self {
        let words = barriers.min(TRACKED_BARRIERS).div_ceil(64);
        Self {
            words,
            rows: vec![0; ids * words],
        }
    }

    fn tracks(&self, k: usize) -> bool {
        k < self.words * 64
    }

    /// Whether `id` waits for barrier `k` (tracked).
    fn has(&self, id: u32, k: usize) -> bool {
        self.rows[id as usize * self.words + k / 64] & (1 << (k % 64)) != 0
    }

    /// What any of `ids` waits for.
    fn union(&self, ids: &[u32]) -> Vec<u64> {
        let mut union = vec![0; self.words];
        for &id in ids {
            let row = &self.rows[id as usize * self.words..][..self.words];
            union.iter_mut().zip(row).for_each(|(u, r)| *u |= r);
        }
        union
    }

    /// Adds what `from` waits for, and `from` itself when it is a tracked
    /// barrier (`k`), to `to`'s set.
    fn inherit(&mut self, to: u32, from: u32, k: Option<usize>) {
        let (to, from) = (to as usize * self.words, from as usize * self.words);
        for w in 0..self.words {
            self.rows[to + w] |= self.rows[from + w];
        }
        if let Some(k) = k.filter(|&k| self.tracks(k)) {
            self.rows[to + k / 64] |= 1 << (k % 64);
        }
    }
}

/// What every selection's plan is built from, resolved once, with every
/// diagnostic about the registrations as a whole.
struct Prepared<'g> {
    resolved: Resolved,
    pinned: Vec<bool>,
    targets: Targets<'g>,
    silencing: Option<Silencing>,
}

impl<'g> Prepared<'g> {
    fn new(graph: &GraphView<'g>, diagnostics: &mut Vec<Diagnostic>) -> Self {
        declared_twice(graph, diagnostics);
        let resolved = Resolved::new(graph, diagnostics);
        let pinned = crate::plan::pinned::pinned_nodes(graph, &resolved);
        crate::plan::pinned::unpinned_non_send(graph, &pinned, diagnostics);
        let targets = Targets::new(graph, &resolved, diagnostics);
        let silencing = Silencing::new(graph, &resolved, diagnostics);
        Self {
            resolved,
            pinned,
            targets,
            silencing,
        }
    }

    /// One selection's plan (`None` when it has errors), and what was found.
    fn build(
        &self,
        graph: &GraphView<'_>,
        options: &PlanOptions,
        selection: &Selection,
    ) -> (Option<Plan>, Vec<Diagnostic>) {
        build_selection(
            graph,
            options,
            &self.resolved,
            &self.targets,
            &self.pinned,
            self.silencing.as_ref(),
            selection,
        )
    }
}

/// Builds the plan of the update schedule's variable cadence, with every
/// diagnostic about the registrations as a whole.
pub(crate) fn build(graph: &GraphView<'_>, options: &PlanOptions) -> Result<Plan, PlanErrors> {
    let mut diagnostics = Vec::new();
    let prepared = Prepared::new(graph, &mut diagnostics);
    let (plan, found) = prepared.build(graph, options, &Selection::UPDATE);
    diagnostics.extend(found);
    finish(plan, diagnostics)
}

/// Builds a plan for every selection the nodes name (and always both
/// cadences of the update schedule); each problem is reported once.
pub(crate) fn build_all(graph: &GraphView<'_>, options: &PlanOptions) -> Result<Plans, PlanErrors> {
    let mut diagnostics = Vec::new();
    let prepared = Prepared::new(graph, &mut diagnostics);
    let mut selections = vec![Selection::UPDATE, Selection::FIXED];
    let mut seen: HashMap<Selection, ()> = HashMap::default();
    seen.extend(selections.iter().map(|selection| (selection.clone(), ())));
    for node in graph.nodes() {
        let selection = Selection::of(node);
        if !seen.contains_key(&selection) {
            seen.insert(selection.clone(), ());
            selections.push(selection);
        }
    }
    let mut plans = Vec::with_capacity(selections.len());
    // The diagnostics so far by message, to find one again without
    // comparing it with every other (thousands of errors are thousands).
    let mut by_message: HashMap<String, Vec<usize>> = HashMap::default();
    for (at, diagnostic) in diagnostics.iter().enumerate() {
        by_message
            .entry(diagnostic.message.clone())
            .or_default()
            .push(at);
    }
    for selection in selections {
        let (plan, found) = prepared.build(graph, options, &selection);
        for diagnostic in found {
            // A cycle among groups alone, or a duplicate key, is found by
            // every selection: report it once.
            let same = by_message.entry(diagnostic.message.clone()).or_default();
            if !same.iter().any(|&at| diagnostics[at] == diagnostic) {
                same.push(diagnostics.len());
                diagnostics.push(diagnostic);
            }
        }
        if let Some(plan) = plan {
            plans.push((selection, plan));
        }
    }
    if diagnostics.iter().any(|d| d.level == Level::Error) {
        return Err(PlanErrors::new(diagnostics));
    }
    for (_, plan) in &mut plans {
        plan.diagnostics.clone_from(&diagnostics);
    }
    Ok(Plans::new(plans))
}

/// One selection's plan (`None` when it has errors), and what was found.
fn build_selection(
    graph: &GraphView<'_>,
    options: &PlanOptions,
    resolved: &Resolved,
    targets: &Targets<'_>,
    pinned: &[bool],
    silencing: Option<&Silencing>,
    selection: &Selection,
) -> (Option<Plan>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    order::duplicate_orders(graph, selection, &mut diagnostics);
    let nodes = graph.nodes();
    let member = if nodes.iter().all(|node| selection.contains(node)) {
        None
    } else {
        Some(nodes.iter().map(|node| selection.contains(node)).collect())
    };
    let edges = Explicit::collect(
        graph,
        resolved,
        targets,
        member,
        selection,
        true,
        &mut diagnostics,
    );
    let sorted = match order::sort(graph, resolved, &edges) {
        Ok(sorted) => sorted,
        Err(cycles) => {
            // The same cycles, found again on the organisation's edges per
            // node, so that each names what the user wrote.
            let edges = Explicit::collect(
                graph,
                resolved,
                targets,
                edges.member.clone(),
                selection,
                false,
                &mut Vec::new(),
            );
            diagnostics.extend(order::sort(graph, resolved, &edges).err().unwrap_or(cycles));
            return (None, diagnostics);
        }
    };
    let marker_preds = MarkerPredecessors::new(&edges, &sorted.vertices);
    let plan_order = match options.packing {
        Packing::Order => sorted.nodes,
        Packing::FirstFit => stages::first_fit(graph, &edges, &marker_preds, &sorted.nodes),
    };
    let mut plan = walk_lanes(graph, &edges, &marker_preds, plan_order);
    plan.selection = selection.clone();
    plan.hierarchy = Hierarchy::new(graph, resolved);
    plan.pinned = pinned.to_vec();
    plan.gates = crate::plan::conditions::NodeGates::new(nodes.len(), &resolved.gates, &|i| {
        selection.contains(&nodes[i])
    })
    .map(std::sync::Arc::new);
    plan.marker_names = marker_names(graph, resolved, &edges);
    if options.ambiguity != AmbiguityLevel::Ignore {
        let level = match options.ambiguity {
            AmbiguityLevel::Error => Level::Error,
            _ => Level::Warning,
        };
        diagnostics.extend(crate::plan::ambiguity::find(
            graph,
            &edges,
            &sorted.vertices,
            &plan,
            level,
            silencing,
        ));
    }
    if diagnostics.iter().any(|d| d.level == Level::Error) {
        (None, diagnostics)
    } else {
        (Some(plan), diagnostics)
    }
}

/// The names of the user's markers, then of the organisation's vertices
/// (a group's two written straight into the names' buffer).
fn marker_names(graph: &GraphView<'_>, resolved: &Resolved, edges: &Explicit) -> Names {
    let groups = graph.organisation().groups();
    let mut names = Names::with_capacity(edges.markers + edges.org.len());
    for marker in graph.markers() {
        names.push_label(marker.label_cow());
    }
    for &vertex in &edges.org {
        match vertex {
            OrgVertex::Begin(g) => names.push_parts(&[groups[g as usize].name(), " (begin)"]),
            OrgVertex::End(g) => names.push_parts(&[groups[g as usize].name(), " (end)"]),
            _ => organise::vertex_name_parts(graph, resolved, vertex, |parts| {
                names.push_parts(parts);
            }),
        }
    }
    names
}

/// SL0009 and SL0010, the gate's verdicts: every node that names a service
/// twice in aliasing ways, or names one of the runtime's own services.
fn declared_twice(graph: &GraphView<'_>, diagnostics: &mut Vec<Diagnostic>) {
    let active = graph
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.is_enabled());
    for (index, _) in active {
        gate_verdicts(graph, index, diagnostics);
    }
}

/// The gate's verdicts (SL0009, SL0010) on node `index` alone, enabled or
/// not: what a plan would refuse it for (a one-shot system, run outside
/// any plan, is refused for the same).
pub(crate) fn gate_verdicts(
    graph: &GraphView<'_>,
    index: usize,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let node = &graph.nodes()[index];
    let mut refuse = |kind, message| {
        let nodes = vec![node.name().to_owned()];
        diagnostics.push(Diagnostic::new(Level::Error, kind, message, nodes));
    };
    for twice in node.declared_twice() {
        let service = graph.table().name(twice.service);
        let message = format!(
            "node `{}` names `{service}` twice in ways that would alias: {} and {}; \
             a node may name a service more than once only as shared `&T`: take it \
             once (as `&mut T` if any use writes it)",
            node.name(),
            twice.first,
            twice.second,
        );
        let kind = DiagnosticKind::DeclaredTwice {
            node: NodeIndex(index as u32),
            twice: *twice,
        };
        refuse(kind, message);
    }
    for named in node.runtime_only() {
        let service = graph.table().name(named.service);
        let message = format!(
            "node `{}` names `{service}` ({}), which only the runtime may declare: \
             holding it would reach data on lanes the node never declared; read \
             entities through `Query`, `Target<T>` or `Removed<T>` and change them \
             through `Commands`",
            node.name(),
            named.declaration,
        );
        let kind = DiagnosticKind::RuntimeService {
            node: NodeIndex(index as u32),
            named: *named,
        };
        refuse(kind, message);
    }
}

fn finish(plan: Option<Plan>, diagnostics: Vec<Diagnostic>) -> Result<Plan, PlanErrors> {
    match plan {
        Some(mut plan) if diagnostics.iter().all(|d| d.level != Level::Error) => {
            plan.diagnostics = diagnostics;
            Ok(plan)
        }
        _ => Err(PlanErrors::new(diagnostics)),
    }
}

/// The lane walk: for each node in plan order, gathers every incoming edge
/// (explicit, lanes, whole-world lane), merges the reasons per source, and
/// derives its stage from its predecessors. Kept markers become barrier
/// vertices: plan ids `n..n + b` (after the registered nodes), never run.
fn walk_lanes(
    graph: &GraphView<'_>,
    edges: &Explicit,
    marker_preds: &MarkerPredecessors,
    plan_order: Vec<u32>,
) -> Plan {
    let nodes = graph.nodes();
    let n = nodes.len();
    let kept = &marker_preds.kept;
    let service_count = graph.table().len();
    let mut lanes = Lanes::new(service_count, plan_order.len() * 2);
    // Kept markers by explicit vertex: their plan ids.
    let mut barrier_id = vec![NONE; edges.vertices() - n];
    for (k, (vertex, _)) in kept.iter().enumerate() {
        barrier_id[*vertex as usize - n] = (n + k) as u32;
    }
    let plan_id = |vertex: u32| {
        if (vertex as usize) < n {
            vertex
        } else {
            barrier_id[vertex as usize - n]
        }
    };
    // One more than the largest stage a barrier waits for (0: none), filled
    // in as the first node after it asks: everything it waits for is placed.
    let mut barrier_level = vec![NONE; kept.len()];
    // The whole-world lane: every node reads it, exclusive nodes gate it. The
    // readers since its last gate are the nodes placed since that gate.
    let mut last_exclusive: Option<(u32, usize)> = None;
    let mut position = vec![NONE; n];
    let mut stage_of = vec![0u32; n];
    let mut stage_count = 0u32;
    let mut records: Vec<EdgeRecord> = Vec::with_capacity(plan_order.len() * 2 + edges.from.len());
    let mut reasons: Vec<Reason> = Vec::with_capacity(plan_order.len() * 3 + edges.from.len());
    let mut gates: Vec<(ServiceId, NodeIndex)> = Vec::with_capacity(plan_order.len());
    let mut exclusive_nodes = Vec::new();
    let mut incoming: Vec<(u32, Reason)> = Vec::with_capacity(16);
    let mut keys: Vec<u64> = Vec::with_capacity(16);
    let mut froms: Vec<(u32, bool, u32)> = Vec::with_capacity(16);
    // Per plan id: the nodes that wait for it directly, so far.
    let mut successors_so_far = Chains::new(n + kept.len(), plan_order.len() * 6);
    // Per node: its incoming records (a contiguous run, as they are pushed).
    let mut pred_range = vec![(0u32, 0u32); n];
    let mut ancestors = Ancestors::new(n + kept.len(), kept.len());
    // Per plan id: the last node it is a barrier predecessor of.
    let mut is_pred = vec![NONE; n + kept.len()];
    // Per barrier: what it waits for, as plan ids; sorted the first time a
    // search asks (most never are: only the survivors of the barriers'
    // own inputs are sorted, below).
    let barrier_inputs: Vec<Vec<u32>> = kept
        .iter()
        .map(|(_, inputs)| inputs.iter().map(|&v| plan_id(v)).collect())
        .collect();
    let sorted_inputs: Vec<std::cell::OnceCell<Vec<u32>>> =
        kept.iter().map(|_| std::cell::OnceCell::new()).collect();
    let inputs_of = |k: usize| {
        sorted_inputs[k].get_or_init(|| {
            let mut ids = barrier_inputs[k].clone();
            ids.sort_unstable();
            ids
        })
    };
    let mut survivors: Vec<u32> = Vec::new();

    for (at, &node) in plan_order.iter().enumerate() {
        position[node as usize] = at as u32;
        let access = nodes[node as usize].access();
        incoming.clear();
        marker_preds.each(edges, node, |from, reason| {
            incoming.push((plan_id(from), reason))
        });
        // A gate and a produce of one service are one barrier in its lane; a
        // node that reads and produces a service reads first.
        for touch in access.touches() {
            let service = touch.service();
            if touch.is(Touch::SHARED) {
                lanes.shared(node, service, &mut incoming);
            }
            if touch.is(Touch::WRITES) {
                lanes.gate(node, service, &mut incoming);
                gates.push((service, NodeIndex(node)));
            }
        }
        if access.is_exclusive() {
            let since = last_exclusive.map_or(0, |(_, gate_at)| gate_at + 1);
            if since == at {
                if let Some((gate, _)) = last_exclusive {
                    incoming.push((gate, Reason::Exclusive));
                }
            } else {
                incoming.extend(
                    plan_order[since..at]
                        .iter()
                        .map(|&reader| (reader, Reason::Exclusive)),
                );
            }
            last_exclusive = Some((node, at));
            exclusive_nodes.push(NodeIndex(node));
        } else if let Some((gate, _)) = last_exclusive {
            incoming.push((gate, Reason::Exclusive));
        }

        // A node that reads and produces one service meets itself in its lane.
        incoming.retain(|&(from, _)| from != node);
        sort_incoming(&mut incoming, &mut keys);
        incoming.dedup();
        // An order-only edge (after/before, a marker, a barrier) that another
        // predecessor already implies (`from -> p -> node`) is left out: the
        // organisation gives every node a few such edges, and an executor
        // pays for each.
        froms.clear();
        let mut i = 0;
        while i < incoming.len() {
            let from = incoming[i].0;
            let mut order_only = true;
            while i < incoming.len() && incoming[i].0 == from {
                order_only &= matches!(
                    incoming[i].1,
                    Reason::After | Reason::Before | Reason::Marker(_)
                );
                i += 1;
            }
            // The least stage a node waiting for `from` can have.
            let bound = if (from as usize) < n {
                stage_of[from as usize] + 1
            } else {
                level(
                    from as usize - n,
                    kept,
                    &plan_id,
                    &stage_of,
                    &mut barrier_level,
                    &mut ancestors,
                    n,
                )
            };
            froms.push((from, order_only, bound));
        }
        for &(from, ..) in &froms {
            let k = (from as usize).checked_sub(n);
            ancestors.inherit(node, from, k);
        }
        // A barrier predecessor is implied when another predecessor waits
        // for it, directly or not (its set of ancestors). A node predecessor
        // is implied when another node predecessor waits for it directly,
        // or when it is an input of a barrier among the predecessors (no
        // node waits for itself). Only order-only edges are candidates, so
        // only nodes with one pay for the search, which for a node looks
        // wherever is shortest: in its own successors so far when they are
        // few, else by binary search in each predecessor's records (sorted
        // by source).
        let has_order_only = froms.len() > 1 && froms.iter().any(|&(_, order_only, _)| order_only);
        if has_order_only {
            for &(p, ..) in &froms {
                is_pred[p as usize] = node;
            }
        }
        let skip = |successors_so_far: &Chains, records: &[EdgeRecord], from: u32| {
            if let Some(k) = (from as usize)
                .checked_sub(n)
                .filter(|&k| ancestors.tracks(k))
            {
                return froms.iter().any(|&(p, ..)| ancestors.has(p, k));
            }
            let input_of = |p: u32| {
                (p as usize)
                    .checked_sub(n)
                    .is_some_and(|k| p != from && inputs_of(k).binary_search(&from).is_ok())
            };
            if froms.iter().any(|&(p, ..)| input_of(p)) {
                return true;
            }
            let records_of = |p: u32| {
                let (start, end) = pred_range[p as usize];
                &records[start as usize..end as usize]
            };
            if from as usize >= n {
                // A barrier beyond those followed: only the direct checks.
                false
            } else if successors_so_far.len(from) <= 4 * froms.len() {
                successors_so_far.any(from, |to| {
                    (to as usize) < n && to != from && is_pred[to as usize] == node
                })
            } else {
                froms.iter().any(|&(p, ..)| {
                    (p as usize) < n
                        && p != from
                        && records_of(p)
                            .binary_search_by_key(&from, |record| record.from)
                            .is_ok()
                })
            }
        };
        let first_record = records.len() as u32;
        let mut stage = 0;
        let mut i = 0;
        for &(from, order_only, bound) in &froms {
            let skipped = has_order_only && order_only && skip(&successors_so_far, &records, from);
            let start = reasons.len() as u32;
            while i < incoming.len() && incoming[i].0 == from {
                if !skipped {
                    reasons.push(incoming[i].1);
                }
                i += 1;
            }
            stage = stage.max(bound);
            if skipped {
                continue;
            }
            successors_so_far.push(from, node);
            records.push(EdgeRecord {
                from,
                to: node,
                reasons_start: start,
                reasons_end: reasons.len() as u32,
            });
        }
        pred_range[node as usize] = (first_record, records.len() as u32);
        stage_of[node as usize] = stage;
        stage_count = stage_count.max(stage + 1);
    }
    // What each barrier waits for, after the nodes' edges; an input that
    // another input waits for is implied by it: a barrier input by its
    // ancestors, a node input when a node input waits for it directly
    // (searched from the input's side, stopping at the first such
    // successor).
    for (k, (vertex, _)) in kept.iter().enumerate() {
        let inputs = &barrier_inputs[k];
        let stamp = (n + k) as u32;
        for &input in inputs {
            is_pred[input as usize] = stamp;
        }
        let reason = Reason::Marker(MarkerIndex(*vertex - n as u32));
        // What the inputs wait for, together: no input waits for itself, so
        // a barrier input in it is one another input waits for.
        let waited = ancestors.union(inputs);
        survivors.clear();
        survivors.extend(inputs.iter().copied().filter(|&input| {
            !match (input as usize).checked_sub(n) {
                Some(j) if ancestors.tracks(j) => waited[j / 64] & (1 << (j % 64)) != 0,
                _ => successors_so_far.any(input, |to| {
                    (to as usize) < n && is_pred[to as usize] == stamp
                }),
            }
        }));
        // Sources ascending within a target, as every node's records.
        survivors.sort_unstable();
        for &input in &survivors {
            let start = reasons.len() as u32;
            reasons.push(reason);
            records.push(EdgeRecord {
                from: input,
                to: (n + k) as u32,
                reasons_start: start,
                reasons_end: start + 1,
            });
        }
    }

    let ids = n + kept.len();
    let (successor_offsets, successor_targets, successor_edges) = successors(ids, &records);
    let (stage_offsets, stage_nodes) = stages::members(&plan_order, &stage_of, stage_count);
    let (barrier_offsets, barrier_nodes) = barriers(service_count, &gates);
    let compiled = compile(n, kept, &plan_order, &records, &plan_id);
    Plan {
        node_names: Names::of_labels(nodes.iter().map(|node| node.name_label())),
        points: (0..)
            .zip(nodes)
            .filter(|(_, node)| node.point() != crate::node::Point::Only)
            .map(|(i, node)| (NodeIndex(i), node.point()))
            .collect(),
        marker_names: Names::default(),
        service_names: Names::of_strs(graph.table().names().iter().map(|name| &**name)),
        barrier_markers: kept.iter().map(|(vertex, _)| *vertex - n as u32).collect(),
        position,
        stage_of,
        stage_offsets,
        stage_nodes,
        edges: records,
        reasons,
        successor_offsets,
        successor_targets,
        successor_edges,
        node_order: plan_order,
        compiled,
        barrier_offsets,
        barrier_nodes,
        exclusive_nodes,
        diagnostics: Vec::new(),
        selection: Selection::UPDATE,
        hierarchy: Hierarchy::default(),
        pinned: Vec::new(),
        gates: None,
    }
}

/// One more than the largest stage barrier `k` waits for (0 when it waits
/// for no node), memoised; fills in its ancestors on the way (everything it
/// waits for is placed by the time a node asks).
fn level(
    k: usize,
    kept: &[(u32, Vec<u32>)],
    plan_id: &dyn Fn(u32) -> u32,
    stage_of: &[u32],
    memo: &mut [u32],
    ancestors: &mut Ancestors,
    n: usize,
) -> u32 {
    if memo[k] != NONE {
        return memo[k];
    }
    let mut highest = 0;
    for &input in &kept[k].1 {
        let id = plan_id(input);
        let bound = match (id as usize).checked_sub(n) {
            None => stage_of[id as usize] + 1,
            Some(j) => level(j, kept, plan_id, stage_of, memo, ancestors, n),
        };
        highest = highest.max(bound);
        ancestors.inherit((n + k) as u32, id, (id as usize).checked_sub(n));
    }
    memo[k] = highest;
    highest
}

/// The executor's arrays: the plan's nodes numbered in registration order,
/// then its barriers, in a serial order that is the plan order with each
/// barrier right after the last thing it waits for.
fn compile(
    n: usize,
    kept: &[(u32, Vec<u32>)],
    plan_order: &[u32],
    records: &[EdgeRecord],
    plan_id: &dyn Fn(u32) -> u32,
) -> CompiledPlan {
    let members = plan_order.len();
    let mut vertex_of = vec![NONE; n + kept.len()];
    let mut vertex_nodes = Vec::with_capacity(members + kept.len());
    let mut sorted_members = plan_order.to_vec();
    sorted_members.sort_unstable();
    for &node in &sorted_members {
        vertex_of[node as usize] = vertex_nodes.len() as u32;
        vertex_nodes.push(node);
    }
    for k in 0..kept.len() {
        vertex_of[n + k] = vertex_nodes.len() as u32;
        vertex_nodes.push(NONE);
    }
    let vertices = vertex_nodes.len();
    let compact: Vec<EdgeRecord> = records
        .iter()
        .map(|record| EdgeRecord {
            from: vertex_of[record.from as usize],
            to: vertex_of[record.to as usize],
            ..*record
        })
        .collect();
    let (successor_offsets, successor_targets, _) = successors(vertices, &compact);
    let mut predecessor_counts = vec![0u32; vertices];
    for record in &compact {
        predecessor_counts[record.to as usize] += 1;
    }
    let order = if kept.is_empty() {
        plan_order
            .iter()
            .map(|&node| vertex_of[node as usize])
            .collect()
    } else {
        // A barrier goes right after the last of what it waits for (in
        // release order among barriers at one spot), before anything that
        // waits for it: the barriers sorted by spot, merged into plan order.
        let mut placed = vec![-1i64; n + kept.len()];
        for (p, &node) in plan_order.iter().enumerate() {
            placed[node as usize] = p as i64;
        }
        let mut barriers: Vec<(i64, u32)> = Vec::with_capacity(kept.len());
        for (k, (_, inputs)) in kept.iter().enumerate() {
            let spot = inputs
                .iter()
                .map(|&input| placed[plan_id(input) as usize])
                .max()
                .unwrap_or(-1);
            placed[n + k] = spot;
            barriers.push((spot, (n + k) as u32));
        }
        barriers.sort_unstable();
        let mut order = Vec::with_capacity(vertices);
        let mut next = barriers.iter().peekable();
        let mut flush = |order: &mut Vec<u32>, up_to: i64| {
            while let Some(&&(spot, id)) = next.peek() {
                if spot > up_to {
                    break;
                }
                order.push(vertex_of[id as usize]);
                next.next();
            }
        };
        flush(&mut order, -1);
        for (p, &node) in plan_order.iter().enumerate() {
            order.push(vertex_of[node as usize]);
            flush(&mut order, p as i64);
        }
        order
    };
    CompiledPlan {
        successor_offsets,
        successor_targets,
        predecessor_counts,
        order,
        vertex_nodes,
    }
}

/// Successors per plan id as CSR, with the edge id of each entry.
fn successors(n: usize, records: &[EdgeRecord]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; n + 1];
    for record in records {
        offsets[record.from as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut targets = vec![NONE; records.len()];
    let mut edge_ids = vec![NONE; records.len()];
    // Each node's cursor ends where the next node's successors start.
    for (id, record) in records.iter().enumerate() {
        let slot = &mut offsets[record.from as usize];
        targets[*slot as usize] = record.to;
        edge_ids[*slot as usize] = id as u32;
        *slot += 1;
    }
    offsets.copy_within(0..n, 1);
    offsets[0] = 0;
    (offsets, targets, edge_ids)
}

/// The gates of every lane as CSR over service ids, in plan order.
fn barriers(services: usize, gates: &[(ServiceId, NodeIndex)]) -> (Vec<u32>, Vec<NodeIndex>) {
    let mut offsets = vec![0u32; services + 1];
    for (service, _) in gates {
        offsets[service.index() + 1] += 1;
    }
    for i in 0..services {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut nodes = vec![NodeIndex(NONE); gates.len()];
    for &(service, node) in gates {
        nodes[next[service.index()] as usize] = node;
        next[service.index()] += 1;
    }
    (offsets, nodes)
}

#[cfg(test)]
#[path = "builder_tests.rs"]
mod tests;
