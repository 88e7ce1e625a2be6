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

use sluice_collections::{Pooled, Taken};

use crate::access::ServiceId;
use crate::exec::{CompiledGraph, ExecutionState};
use crate::plan::{NodeIndex, Plan, PlanErrors, PlanOptions, Plans};
use crate::system::{NextValue, NodeBody, NodeEnv};
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
    pub(crate) state: ExecutionState,
    pub(crate) adaptive: Adaptive,
}

impl Execution {
    /// Compiles `plan` onto a state from the per-type pool (whose arrays are
    /// reused when a plan of the same size gave it back).
    pub(crate) fn compile(plan: &Plan) -> Self {
        let compiled = plan.compiled();
        let graph = CompiledGraph::from_parts(
            compiled.successor_offsets.clone(),
            compiled.successor_targets.clone(),
            compiled.predecessor_counts.clone(),
        )
        .and_then(|graph| graph.with_order(compiled.order.clone()))
        .and_then(|graph| {
            let registered = plan.registered() as u32;
            let mut barriers = registered..;
            graph.with_names(compiled.vertex_nodes.iter().map(|&node| {
                // A barrier's id in the plan's edges counts from `registered`.
                let id = if node == u32::MAX {
                    barriers.next().unwrap_or(u32::MAX)
                } else {
                    node
                };
                plan.node_name(NodeIndex(id)).to_owned()
            }))
        })
        .expect("the planner's arrays form an acyclic graph");
        let mut state = Taken::into_inner(ExecutionState::pool().take());
        state.reset_for(&graph);
        Self {
            graph,
            vertex_nodes: compiled.vertex_nodes.clone().into_boxed_slice(),
            state,
            adaptive: Adaptive::default(),
        }
    }
}

/// Every plan of a world compiled, in the order of [`Plans::iter`].
#[derive(Debug, Default)]
pub(crate) struct Executions(pub(crate) Vec<Execution>);

impl Executions {
    pub(crate) fn compile(plans: &Plans) -> Self {
        Self(
            plans
                .iter()
                .map(|(_, plan)| Execution::compile(plan))
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
        let executions = Executions::compile(plans);
        // SAFETY: the node declares that it produces `NextValue<Executions>`.
        unsafe {
            env.cells
                .put(self.next_execution, NextValue::new(executions))
        }
    }
}
