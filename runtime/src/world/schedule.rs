//! Iterations that schedule themselves: the plan factory and the execution
//! factory are ordinary factory nodes of every world's plan.
//!
//! - `sluice::plan` reads [`Registrations`] and produces the next plan
//!   (`NextValue<PlanOutcome>`). Registrations move only when the ledger of
//!   commands lands at an iteration boundary, so in a steady game the factory
//!   is skipped every frame.
//! - `sluice::execution` reads the next plan and produces the next
//!   [`Execution`] (the compiled arrays and a pooled [`ExecutionState`]).
//!
//! At the boundary both are swapped in; the outgoing state goes back to the
//! pool.

use std::sync::Arc;

use sluice_collections::{Pool, Pooled, Taken};

use crate::access::ServiceId;
use crate::exec::{CompiledGraph, ExecutionState};
use crate::plan::{NodeIndex, Plan, PlanErrors, PlanOptions};
use crate::system::{NextValue, NodeBody, NodeEnv};

/// The world's registrations as a service: its version moves when commands
/// register nodes, which is what wakes the plan factory.
#[derive(Debug, Default)]
pub struct Registrations {
    /// How plans are built.
    pub(crate) options: PlanOptions,
}

/// What the plan factory produced: a plan, or every reason there is none.
pub type PlanOutcome = Result<Arc<Plan>, PlanErrors>;

/// A plan compiled for the executor: its flat arrays and the reusable state
/// an iteration runs on.
#[derive(Debug)]
pub struct Execution {
    pub(crate) graph: CompiledGraph,
    pub(crate) state: ExecutionState,
}

impl Execution {
    /// Compiles `plan`, reusing `spare`'s arrays when there is one.
    pub(crate) fn compile(plan: &Plan, spare: Option<ExecutionState>) -> Self {
        let compiled = plan.compiled();
        let graph = CompiledGraph::from_parts(
            compiled.successor_offsets.clone(),
            compiled.successor_targets.clone(),
            compiled.predecessor_counts.clone(),
        )
        .and_then(|graph| graph.with_order(compiled.order.clone()))
        .and_then(|graph| {
            graph.with_names(
                (0..plan.len() as u32).map(|node| plan.node_name(NodeIndex(node)).to_owned()),
            )
        })
        .expect("the planner's arrays form an acyclic graph");
        let state = match spare {
            Some(mut state) => {
                state.reset_for(&graph);
                state
            }
            None => ExecutionState::new(&graph),
        };
        Self { graph, state }
    }
}

/// A pooled slot for an outgoing [`ExecutionState`]: its arrays are reused by
/// the next plan of the same size.
#[derive(Debug, Default)]
pub(crate) struct SpareState(pub(crate) Option<ExecutionState>);

impl Pooled for SpareState {
    fn reset(&mut self) {}
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
        let outcome: PlanOutcome = env.graph.build(&registrations.options).map(Arc::new);
        // SAFETY: the node declares that it produces `NextValue<PlanOutcome>`,
        // and producers run before every consumer.
        unsafe { env.cells.put(self.next_plan, NextValue::new(outcome)) }
    }
}

/// The body of `sluice::execution`.
pub(crate) struct ExecutionFactory {
    pub(crate) next_plan: ServiceId,
    pub(crate) next_execution: ServiceId,
    pub(crate) spares: Arc<Pool<SpareState>>,
}

impl NodeBody for ExecutionFactory {
    unsafe fn run(&mut self, env: &NodeEnv<'_>) {
        // SAFETY: the node declares shared access to the next plan, and runs
        // after its producer.
        let next = unsafe { env.cells.get::<NextValue<PlanOutcome>>(self.next_plan) };
        let Some(Ok(plan)) = next.and_then(NextValue::get) else {
            return;
        };
        let spare = Taken::into_inner(self.spares.take()).0;
        let execution = Execution::compile(plan, spare);
        // SAFETY: the node declares that it produces `NextValue<Execution>`.
        unsafe {
            env.cells
                .put(self.next_execution, NextValue::new(execution))
        }
    }
}
