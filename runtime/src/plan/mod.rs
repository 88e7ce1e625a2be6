//! The planner: from registered nodes to an immutable [`Plan`].
//!
//! [`Graph`] holds what a plan is built from (the service registry, node
//! descriptors, markers); [`Graph::build`] runs the one rule of ordering:
//!
//! 1. plan order: a stable topological sort of the explicit edges
//!    (`before`/`after`, markers) and the produce edges, ties broken by
//!    registration order;
//! 2. lanes: each service's accessors walked in plan order give the edges
//!    (shared after shared: none; a gate after anything: from every accessor
//!    since the previous gate, or from that gate; shared after a gate: from the
//!    gate); exclusive nodes gate a whole-world lane every node reads;
//! 3. the stage view: longest path from the sources.
//!
//! Markers order nodes but never run: an edge `a -> marker -> b` becomes the
//! edge `a -> b` with the reason [`Reason::Marker`], so the compiled plan holds
//! real nodes only. A marker between `m` predecessors and `k` successors costs
//! `m * k` edges; phases with hundreds of nodes on both sides are a later
//! concern (a no-op node would cost `m + k`).

mod ambiguity;
mod builder;
mod diagnostics;
mod dot;
mod graph;
mod order;
mod stages;
mod view;
mod why;

pub use diagnostics::{
    AmbiguityLevel, Diagnostic, DiagnosticKind, Level, NodeRef, PlanErrors, Relation,
};
pub use graph::{Graph, GraphView, MarkerIndex, NodeIndex};
pub use view::{CompiledPlan, Edge, LaneKind, Plan, Reason};

/// How the stage view packs nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Packing {
    /// Keep registration-order semantics: plan order is the stable topological
    /// sort, and a node's stage is one more than its latest predecessor's.
    #[default]
    Order,
    /// Each node goes into the first stage whose members it does not conflict
    /// with, after its explicit predecessors; the plan order then follows the
    /// stages (denser stages, registration order no longer decides conflicts).
    FirstFit,
}

/// What [`Graph::build`] does beyond the ordering rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// How the stages are packed.
    pub packing: Packing,
    /// How to report conflicting nodes ordered only by registration order
    /// (SL0008), grouped per service. Anything but `Ignore` costs a reachability
    /// pass over the nodes in blocks of 64 (linear memory).
    pub ambiguity: AmbiguityLevel,
}
