//! Building a plan: plan order, then the lane walk that yields the edges (each
//! with its reasons), the stage view and the compiled arrays, in one pass over
//! the nodes in plan order.

use crate::access::{ServiceId, Touch};
use crate::plan::diagnostics::{Diagnostic, DiagnosticKind, Level};
use crate::plan::order::{self, Explicit};
use crate::plan::view::{EdgeRecord, Names};
use crate::plan::{
    AmbiguityLevel, CompiledPlan, GraphView, LaneKind, MarkerIndex, NodeIndex, Packing, Plan,
    PlanErrors, PlanOptions, Reason, stages,
};

const NONE: u32 = u32::MAX;

/// The real nodes each marker stands for: every node that reaches it through
/// explicit edges with only markers in between. Edges through a marker become
/// edges from these nodes.
pub(crate) struct MarkerPredecessors {
    lists: Vec<Vec<u32>>,
}

impl MarkerPredecessors {
    fn new(edges: &Explicit, released: &[u32]) -> Self {
        let n = edges.nodes;
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); edges.vertices() - n];
        for &vertex in released.iter().filter(|&&v| v as usize >= n) {
            let mut list = Vec::new();
            for &edge in edges.predecessors(vertex) {
                let from = edges.from[edge as usize];
                match (from as usize).checked_sub(n) {
                    None => list.push(from),
                    Some(marker) => list.extend_from_slice(&lists[marker]),
                }
            }
            list.sort_unstable();
            list.dedup();
            lists[vertex as usize - n] = list;
        }
        Self { lists }
    }

    /// Calls `each(predecessor, reason)` for every explicit predecessor of the
    /// real node `node`, markers replaced by the nodes they stand for.
    pub(crate) fn each(&self, edges: &Explicit, node: u32, mut each: impl FnMut(u32, Reason)) {
        let n = edges.nodes as u32;
        for &edge in edges.predecessors(node) {
            let from = edges.from[edge as usize];
            if from < n {
                each(from, edges.reason[edge as usize]);
            } else {
                let marker = from - n;
                for &real in &self.lists[marker as usize] {
                    each(real, Reason::Marker(MarkerIndex(marker)));
                }
            }
        }
    }
}

/// Every service's lane while walking them in plan order. A lane keeps its
/// last gate and the shared accessors since it, as a chain through one arena
/// shared by all lanes (no list per lane).
struct Lanes {
    /// Per service: the last gate, and the head of its readers' chain.
    lanes: Vec<(u32, u32)>,
    /// `(reader, next)` links; `next` is `NONE` at a chain's end.
    arena: Vec<(u32, u32)>,
}

impl Lanes {
    fn new(services: usize, capacity: usize) -> Self {
        Self {
            lanes: vec![(NONE, NONE); services],
            arena: Vec::with_capacity(capacity),
        }
    }

    fn shared(&mut self, node: u32, service: ServiceId, incoming: &mut Vec<(u32, Reason)>) {
        let (last_gate, readers) = &mut self.lanes[service.index()];
        if *last_gate != NONE {
            incoming.push((
                *last_gate,
                Reason::Lane {
                    service,
                    kind: LaneKind::SharedAfterGate,
                },
            ));
        }
        self.arena.push((node, *readers));
        *readers = (self.arena.len() - 1) as u32;
    }

    fn gate(&mut self, node: u32, service: ServiceId, incoming: &mut Vec<(u32, Reason)>) {
        let (last_gate, readers) = &mut self.lanes[service.index()];
        if *readers == NONE {
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
            let reason = Reason::Lane {
                service,
                kind: LaneKind::GateAfterShared,
            };
            let mut at = *readers;
            while at != NONE {
                let (reader, next) = self.arena[at as usize];
                incoming.push((reader, reason));
                at = next;
            }
            *readers = NONE;
        }
        *last_gate = node;
    }
}

pub(crate) fn build(graph: &GraphView<'_>, options: &PlanOptions) -> Result<Plan, PlanErrors> {
    let mut diagnostics = Vec::new();
    declared_twice(graph, &mut diagnostics);
    let edges = Explicit::collect(graph, &mut diagnostics);
    let sorted = match order::sort(graph, &edges) {
        Ok(sorted) => sorted,
        Err(cycles) => {
            diagnostics.extend(cycles);
            return Err(PlanErrors::new(diagnostics));
        }
    };
    let marker_preds = MarkerPredecessors::new(&edges, &sorted.vertices);
    let plan_order = match options.packing {
        Packing::Order => sorted.nodes,
        Packing::FirstFit => stages::first_fit(graph, &edges, &marker_preds, &sorted.nodes),
    };
    let plan = walk_lanes(graph, &edges, &marker_preds, plan_order);
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
        ));
    }
    finish(plan, diagnostics)
}

/// SL0009: every node that names a service twice in aliasing ways.
fn declared_twice(graph: &GraphView<'_>, diagnostics: &mut Vec<Diagnostic>) {
    for (index, node) in graph.nodes().iter().enumerate() {
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
            diagnostics.push(Diagnostic::new(
                Level::Error,
                kind,
                message,
                vec![node.name().to_owned()],
            ));
        }
    }
}

fn finish(mut plan: Plan, diagnostics: Vec<Diagnostic>) -> Result<Plan, PlanErrors> {
    if diagnostics.iter().any(|d| d.level == Level::Error) {
        return Err(PlanErrors::new(diagnostics));
    }
    plan.diagnostics = diagnostics;
    Ok(plan)
}

/// The lane walk: for each node in plan order, gathers every incoming edge
/// (explicit, lanes, whole-world lane), merges the reasons per source, and
/// derives its stage from its predecessors.
fn walk_lanes(
    graph: &GraphView<'_>,
    edges: &Explicit,
    marker_preds: &MarkerPredecessors,
    plan_order: Vec<u32>,
) -> Plan {
    let nodes = graph.nodes();
    let n = nodes.len();
    let service_count = graph.table().len();
    let mut lanes = Lanes::new(service_count, n * 2);
    // The whole-world lane: every node reads it, exclusive nodes gate it. The
    // readers since its last gate are the nodes placed since that gate.
    let mut last_exclusive: Option<(u32, usize)> = None;
    let mut position = vec![0u32; n];
    let mut stage_of = vec![0u32; n];
    let mut stage_count = 0u32;
    let mut records: Vec<EdgeRecord> = Vec::with_capacity(n * 2 + edges.from.len());
    let mut reasons: Vec<Reason> = Vec::with_capacity(n * 3 + edges.from.len());
    let mut predecessor_counts = vec![0u32; n];
    let mut gates: Vec<(ServiceId, NodeIndex)> = Vec::with_capacity(n);
    let mut exclusive_nodes = Vec::new();
    let mut incoming: Vec<(u32, Reason)> = Vec::with_capacity(16);

    for (at, &node) in plan_order.iter().enumerate() {
        position[node as usize] = at as u32;
        let access = nodes[node as usize].access();
        incoming.clear();
        marker_preds.each(edges, node, |from, reason| incoming.push((from, reason)));
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
        incoming.sort_unstable();
        incoming.dedup();
        let mut stage = 0;
        let mut i = 0;
        while i < incoming.len() {
            let from = incoming[i].0;
            let start = reasons.len() as u32;
            while i < incoming.len() && incoming[i].0 == from {
                reasons.push(incoming[i].1);
                i += 1;
            }
            records.push(EdgeRecord {
                from,
                to: node,
                reasons_start: start,
                reasons_end: reasons.len() as u32,
            });
            predecessor_counts[node as usize] += 1;
            stage = stage.max(stage_of[from as usize] + 1);
        }
        stage_of[node as usize] = stage;
        stage_count = stage_count.max(stage + 1);
    }

    let (successor_offsets, successor_targets, successor_edges) = successors(n, &records);
    let (stage_offsets, stage_nodes) = stages::members(&plan_order, &stage_of, stage_count);
    let (barrier_offsets, barrier_nodes) = barriers(service_count, &gates);
    Plan {
        node_names: Names::of_labels(nodes.iter().map(|node| node.name_label())),
        marker_names: Names::of_labels(graph.markers().iter().map(|marker| marker.label_cow())),
        service_names: Names::of_strs(graph.table().names().iter().map(|name| &**name)),
        position,
        stage_of,
        stage_offsets,
        stage_nodes,
        edges: records,
        reasons,
        successor_edges,
        compiled: CompiledPlan {
            successor_offsets,
            successor_targets,
            predecessor_counts,
            order: plan_order,
        },
        barrier_offsets,
        barrier_nodes,
        exclusive_nodes,
        diagnostics: Vec::new(),
    }
}

/// Successors per node as CSR, with the edge id of each entry.
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
