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
//! Markers order nodes but never run. Groups, stages, sets and phases are
//! markers too (`organise.rs`). An edge `a -> marker -> b` becomes the edge
//! `a -> b` with the reason [`Reason::Marker`] while that is cheap; a marker
//! between many predecessors and many successors is kept as a *barrier*
//! vertex that completes the moment it is ready (`m + k` edges, not `m * k`).
//!
//! Each plan is for one [`Selection`] (a cadence of a schedule):
//! [`Graph::build`] plans the update schedule's variable cadence,
//! [`Graph::build_all`] every selection at once.

mod ambiguity;
mod builder;
pub(crate) mod conditions;
pub(crate) use builder::gate_verdicts;
mod diagnostics;
mod dot;
mod graph;
mod order;
mod organise;
mod pinned;
mod plans;
mod silence;
mod stages;
mod svg;
mod view;
mod why;

pub use diagnostics::{
    AmbiguityLevel, Diagnostic, DiagnosticKind, Level, NodeRef, PlanErrors, Relation,
};
pub use graph::{Graph, GraphView, MarkerIndex, NodeIndex};
pub use organise::{GroupIndex, Selection};
pub use plans::Plans;
pub use silence::SilencedBy;
pub use svg::to_svg;
pub use view::{CompiledPlan, Edge, Hierarchy, LaneKind, Plan, Reason, TreeItem};

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
