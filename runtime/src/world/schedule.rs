//! Iterations that schedule themselves: the plan factory and the execution
//! factory are ordinary factory nodes of every world's plan.
//!
//! - `sluice::plan` reads [`Registrations`] and produces the next plan
//!   (`NextValue<PlanOutcome>`). Registrations move only when the ledger of
//!   commands lands at an iteration boundary, so in a steady game the factory
//!   is skipped every frame.
//! - `sluice::execution` reads the next plan and produces the next
//!   [`Executions`] (each plan's compiled arrays and a pooled [`ExecutionState`]).
//!
//! At the boundary both are swapped in; the outgoing state goes back to the
//! per-type pool of [`ExecutionState`]s.

use std::sync::Arc;

#[cfg(not(loom))]
use sluice_collections::{Pooled, Taken};

use crate::access::ServiceId;
use crate::exec::{CompiledGraph, ExecutionState};
use crate::plan::conditions::NodeGates;
use crate::plan::{GraphView, NodeIndex, Plan, PlanErrors, PlanOptions, Plans};
use crate::system::{NextValue, NodeBody, NodeEnv};
use crate::world::BUILTIN_NODES;
use crate::world::adaptive::Adaptive;

/// The world's registrations as a service: its version moves when commands
/// register nodes, which is what wakes the plan factory.
#[derive(Debug, Default)]
pub(crate) struct Registrations {
    /// How plans are built.
    pub(crate) options: PlanOptions,
}

/// What the plan factory produced: every plan, or every reason there is none.
///
/// A type of the runtime's own (not an alias of a public `Result`), so that no
/// user signature can name the service `NextValue<PlanOutcome>`.
#[derive(Debug)]
pub(crate) struct PlanOutcome(pub(crate) Result<Arc<Plans>, PlanErrors>);

/// A plan compiled for the executor: its flat arrays, the node each vertex
/// runs, the reusable state an iteration runs on, and the inline-or-pool
/// choice measured for it.
#[derive(Debug)]
pub(crate) struct Execution {
    pub(crate) graph: CompiledGraph,
    /// Per vertex: the node's registration index, `u32::MAX` for a barrier.
    pub(crate) vertex_nodes: Box<[u32]>,
    /// Per vertex: its position in the plan's order (the serial order),
    /// where the records of its node land.
    pub(crate) vertex_ranks: Box<[u32]>,
    /// Per vertex: the group, stage or set condition node it waits on
    /// ([`NodeGates::per_vertex`]); `None` when no vertex has one.
    pub(crate) vertex_gates: Option<Box<[u32]>>,
    pub(crate) state: ExecutionState,
    pub(crate) adaptive: Adaptive,
    /// Where the world's own factories (`sluice::plan`, `sluice::execution`)
    /// stand in the serial order, ascending: an inline run leaves them out
    /// when their inputs have not moved (every steady frame), rather than
    /// visiting them to skip their bodies.
    pub(crate) own_positions: Box<[u32]>,
    /// Under loom: the world's own factories, run serially on the caller.
    #[cfg(loom)]
    pub(crate) own: bool,
}

impl Execution {
    /// Compiles the vertices `vertices` of `plan` (in serial order; edges to
    /// vertices outside them dropped) onto a state from the per-type pool
    /// (whose arrays are reused when a plan of the same size gave it back).
    fn compile(plan: &Plan, vertices: &[u32]) -> Self {
        let compiled = plan.compiled();
        let all = compiled.vertex_nodes.len();
        let whole = vertices.len() == all;
        let mut local = vec![u32::MAX; if whole { 0 } else { all }];
        for (at, &v) in vertices.iter().enumerate().filter(|_| !whole) {
            local[v as usize] = at as u32;
        }
        let map = |v: u32| {
            if whole {
                Some(v)
            } else {
                Some(local[v as usize]).filter(|&l| l != u32::MAX)
            }
        };
        let (offsets, targets, counts, order) = if whole {
            (
                compiled.successor_offsets.clone(),
                compiled.successor_targets.clone(),
                compiled.predecessor_counts.clone(),
                compiled.order.clone(),
            )
        } else {
            let mut offsets = Vec::with_capacity(vertices.len() + 1);
            let mut targets = Vec::new();
            let mut counts = vec![0u32; vertices.len()];
            offsets.push(0);
            for &v in vertices {
                for &to in compiled.successors(v) {
                    if let Some(to) = map(to) {
                        targets.push(to);
                        counts[to as usize] += 1;
                    }
                }
                offsets.push(targets.len() as u32);
            }
            (
                offsets,
                targets,
                counts,
                (0..vertices.len() as u32).collect(),
            )
        };
        let vertex_nodes: Box<[u32]> = if whole {
            compiled.vertex_nodes.clone().into_boxed_slice()
        } else {
            vertices
                .iter()
                .map(|&v| compiled.vertex_nodes[v as usize])
                .collect()
        };
        let ranks = plan_ranks(plan);
        let vertex_ranks: Box<[u32]> = if whole {
            ranks.clone().into_boxed_slice()
        } else {
            vertices.iter().map(|&v| ranks[v as usize]).collect()
        };
        let registered = plan.registered() as u32;
        // A barrier's id in the plan's edges counts from `registered`, in
        // vertex order.
        let first_barrier = compiled
            .vertex_nodes
            .iter()
            .position(|&n| n == u32::MAX)
            .unwrap_or(0) as u32;
        let barrier_id = |v: u32| registered + v - first_barrier;
        let name = |v: u32| {
            let node = compiled.vertex_nodes[v as usize];
            let id = if node == u32::MAX {
                barrier_id(v)
            } else {
                node
            };
            plan.node_name(NodeIndex(id)).to_owned()
        };
        // In the execution graph's vertex order. Compiled whole, execution
        // vertex `at` is the plan's vertex `at` (`vertices` is then the
        // serial order, where a kept barrier comes before the nodes after
        // it); compiled in part, it is `vertices[at]`.
        let source = |at: usize| if whole { at as u32 } else { vertices[at] };
        let names = (0..vertices.len()).map(|at| name(source(at)));
        let pinned = vertex_nodes
            .iter()
            .enumerate()
            .filter(|&(_, &node)| node != u32::MAX && plan.is_pinned(NodeIndex(node)))
            .map(|(vertex, _)| vertex as u32);
        let graph = CompiledGraph::from_parts(offsets, targets, counts)
            .and_then(|graph| graph.with_order(order))
            .and_then(|graph| graph.with_names(names))
            .and_then(|graph| graph.with_pinned(pinned))
            .expect("the planner's arrays form an acyclic graph");
        // Under loom there are no per-type pools (their atomics would
        // outlive the model's execution): a fresh state each plan.
        #[cfg(not(loom))]
        let mut state = Taken::into_inner(ExecutionState::pool().take());
        #[cfg(loom)]
        let mut state = ExecutionState::default();
        state.reset_for(&graph);
        let own_positions = graph
            .order()
            .iter()
            .enumerate()
            .filter(|&(_, &v)| (vertex_nodes[v as usize] as usize) < BUILTIN_NODES)
            .map(|(at, _)| at as u32)
            .collect();
        let vertex_gates = plan.gates.as_ref().map(|g| g.per_vertex(&vertex_nodes));
        Self {
            graph,
            vertex_nodes,
            vertex_ranks,
            vertex_gates,
            state,
            adaptive: Adaptive::default(),
            own_positions,
            #[cfg(loom)]
            own: false,
        }
    }
}

/// One part of a plan's run: compiled nodes run by an executor, or a
/// whole-world system the world runs alone between two such parts.
#[derive(Debug)]
pub(crate) enum Part {
    Nodes(Box<Execution>),
    /// The whole-world system's registration index and its position in
    /// the plan's order.
    Whole(u32, u32),
}

/// Per vertex of `plan`: its position in the plan's order.
fn plan_ranks(plan: &Plan) -> Vec<u32> {
    let order = &plan.compiled().order;
    let mut ranks = vec![u32::MAX; order.len()];
    for (rank, &vertex) in order.iter().enumerate() {
        ranks[vertex as usize] = rank as u32;
    }
    ranks
}

/// A plan compiled for running: its parts in order. A plan with no
/// whole-world system is one part.
#[derive(Debug)]
pub(crate) struct PlanRun {
    pub(crate) parts: Vec<Part>,
    /// Per node, the group, stage and set conditions it waits on.
    pub(crate) gates: Option<Arc<NodeGates>>,
}

impl PlanRun {
    /// Splits `plan` at its whole-world systems. Every node before one in
    /// plan order precedes it and every node after it follows it (it is
    /// exclusive), so no edge is lost between parts.
    pub(crate) fn compile(plan: &Plan, graph: &GraphView<'_>) -> Self {
        let compiled = plan.compiled();
        let whole_world = |v: u32| {
            let node = compiled.vertex_nodes[v as usize];
            node != u32::MAX && graph.nodes()[node as usize].needs_world()
        };
        let mut parts = Vec::new();
        #[cfg(loom)]
        let order = &own_part_first(plan, &mut parts);
        #[cfg(not(loom))]
        let order = &compiled.order;
        if parts.is_empty() && !order.iter().any(|&v| whole_world(v)) {
            return Self {
                parts: vec![Part::Nodes(Box::new(Execution::compile(plan, order)))],
                gates: plan.gates.clone(),
            };
        }
        let ranks = plan_ranks(plan);
        let mut current = Vec::new();
        for &v in order {
            if whole_world(v) {
                if !current.is_empty() {
                    parts.push(Part::Nodes(Box::new(Execution::compile(plan, &current))));
                    current.clear();
                }
                parts.push(Part::Whole(
                    compiled.vertex_nodes[v as usize],
                    ranks[v as usize],
                ));
            } else {
                current.push(v);
            }
        }
        if !current.is_empty() {
            parts.push(Part::Nodes(Box::new(Execution::compile(plan, &current))));
        }
        Self {
            parts,
            gates: plan.gates.clone(),
        }
    }

    /// Whether part `part` is the world's own factories, which a model runs
    /// on the caller (see [`own_part_first`]).
    #[cfg(loom)]
    pub(crate) fn is_own(&self, part: usize) -> bool {
        matches!(&self.parts[part], Part::Nodes(execution) if execution.own)
    }

    /// The compiled parts.
    pub(crate) fn executions(&mut self) -> impl Iterator<Item = &mut Execution> {
        self.parts.iter_mut().filter_map(|part| match part {
            Part::Nodes(execution) => Some(&mut **execution),
            Part::Whole(..) => None,
        })
    }
}

/// Under loom: when no other vertex precedes the world's own factories
/// (`sluice::plan`, `sluice::execution`), as in every plan without an
/// exclusive node ordered before them, pushes them to `parts` as a part of
/// their own, run first, serially on the caller, and returns the rest of the
/// plan order (all of it, pushing nothing, otherwise).
///
/// A model then explores the user's nodes without the factories' vertices
/// beside them: they touch only the world's private services, so no user
/// node overlaps them, and running them first is one of the orders the plan
/// permits; their interleavings with the user's nodes are the executor's to
/// prove (its own models), and multiplied a user's model several times.
#[cfg(loom)]
fn own_part_first(plan: &Plan, parts: &mut Vec<Part>) -> Vec<u32> {
    let compiled = plan.compiled();
    let own = |v: u32| (compiled.vertex_nodes[v as usize] as usize) < BUILTIN_NODES;
    let (first, rest): (Vec<u32>, Vec<u32>) = compiled.order.iter().partition(|&&v| own(v));
    let closed = rest
        .iter()
        .all(|&v| !compiled.successors(v).iter().any(|&to| own(to)));
    if first.is_empty() || !closed {
        return compiled.order.clone();
    }
    let mut execution = Execution::compile(plan, &first);
    execution.own = true;
    parts.push(Part::Nodes(Box::new(execution)));
    rest
}

/// Every plan of a world compiled, in the order of [`Plans::iter`].
#[derive(Debug, Default)]
pub(crate) struct Executions(pub(crate) Vec<PlanRun>);

impl Executions {
    pub(crate) fn compile(plans: &Plans, graph: &GraphView<'_>) -> Self {
        Self(
            plans
                .iter()
                .map(|(_, plan)| PlanRun::compile(plan, graph))
                .collect(),
        )
    }
}

/// The body of `sluice::plan`.
pub(crate) struct PlanFactory {
    pub(crate) registrations: ServiceId,
    pub(crate) next_plan: ServiceId,
}

impl NodeBody for PlanFactory {
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        // SAFETY: the node declares shared access to `Registrations`; only the
        // boundary changes it.
        let registrations = unsafe { env.cells.get::<Registrations>(self.registrations) }
            .expect("every world holds its Registrations");
        let outcome = PlanOutcome(env.graph.build_all(&registrations.options).map(Arc::new));
        // SAFETY: the node declares that it produces `NextValue<PlanOutcome>`,
        // and producers run before every consumer.
        unsafe { env.cells.put(self.next_plan, NextValue::new(outcome)) }
    }
}

/// The body of `sluice::execution`.
pub(crate) struct ExecutionFactory {
    pub(crate) next_plan: ServiceId,
    pub(crate) next_execution: ServiceId,
}

impl NodeBody for ExecutionFactory {
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        // SAFETY: the node declares shared access to the next plan, and runs
        // after its producer.
        let next = unsafe { env.cells.get::<NextValue<PlanOutcome>>(self.next_plan) };
        let Some(PlanOutcome(Ok(plans))) = next.and_then(NextValue::get) else {
            return;
        };
        let executions = Executions::compile(plans, env.graph);
        // SAFETY: the node declares that it produces `NextValue<Executions>`.
        unsafe {
            env.cells
                .put(self.next_execution, NextValue::new(executions))
        }
    }
}
