//! Diagnostics: every problem found while planning, each with a stable code.

use std::fmt;

use crate::access::ServiceId;
use crate::organise::RankKind;
use crate::plan::{GroupIndex, MarkerIndex, NodeIndex};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Reported but asked for: an ambiguity (SL0008) silenced on purpose
    /// ([`NodeBuilder::ambiguous_with`](crate::NodeBuilder::ambiguous_with)),
    /// never printed as a warning nor made an error.
    Silenced,
    /// Reported; the plan is still built.
    Warning,
    /// The plan is not built.
    Error,
}

/// How to report SL0008 (conflicting nodes ordered only by registration
/// order). Warnings by default, as reference 002 reports them: a world
/// delivers each through `tracing::warn!` once per plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AmbiguityLevel {
    /// Not looked for (no pass over the lanes).
    Ignore,
    /// Reported as warnings in [`Plan::diagnostics`](crate::plan::Plan::diagnostics).
    #[default]
    Warn,
    /// Reported as errors: the plan is not built.
    Error,
}

/// A node or a marker, as diagnostics name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeRef {
    /// A registered node.
    Node(NodeIndex),
    /// A registered marker.
    Marker(MarkerIndex),
    /// A declared group.
    Group(GroupIndex),
}

/// Which ordering attribute named something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    /// `after(target)`.
    After,
    /// `before(target)`.
    Before,
    /// `in_group(target)`: membership of a group.
    InGroup,
    /// `ambiguous_with(target)`: an ambiguity silenced on purpose.
    AmbiguousWith,
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Relation::After => "after",
            Relation::Before => "before",
            Relation::InGroup => "in the group",
            Relation::AmbiguousWith => "ambiguous with",
        })
    }
}

/// What a diagnostic is about, with the registrations involved.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// SL0001: the explicit and produce edges form a cycle; `path` lists every
    /// member in order, each one ordered before the next and the last before
    /// the first.
    Cycle {
        /// The members of the cycle, in order.
        path: Vec<NodeRef>,
    },
    /// SL0002: an ordering names a node or marker that is not registered.
    UnknownTarget {
        /// Who declared the ordering.
        source: NodeRef,
        /// The name that matched nothing.
        target: String,
        /// `after` or `before`.
        relation: Relation,
    },
    /// SL0003: a node is ordered against a node of the other cadence (or of
    /// another schedule); the two run in separate plans.
    CrossCadence {
        /// The node that declared the ordering.
        source: NodeIndex,
        /// The node of the other cadence it named.
        target: NodeIndex,
        /// `after` or `before`.
        relation: Relation,
    },
    /// SL0005: two stages (or two sets) share a name or an order number.
    DuplicateRank {
        /// Stages or sets.
        kind: RankKind,
        /// The earlier declaration (an index into
        /// [`Organisation::ranks`](crate::Organisation::ranks)).
        first: u32,
        /// The later one.
        second: u32,
    },
    /// SL0005: two nodes of one plan (one schedule and cadence) have the
    /// same explicit [`order`](crate::NodeBuilder::order): reference 002's
    /// "every Run declaration requires a unique Order".
    DuplicateOrder {
        /// The earlier registration.
        first: NodeIndex,
        /// The later one.
        second: NodeIndex,
        /// The order both declare.
        order: i32,
    },
    /// SL0006: stages are declared and this node names none.
    NoStage {
        /// The node.
        node: NodeIndex,
    },
    /// SL0006: a node names a stage or set that is not declared.
    UnknownRank {
        /// The node.
        node: NodeIndex,
        /// Stage or set.
        kind: RankKind,
        /// The name that matched nothing.
        name: String,
    },
    /// SL0007: a cycle that runs through a group, stage, set, phase or
    /// first/last order: the organisation contradicts an ordering. `path`
    /// lists the nodes and groups on it, in order.
    OrganisationCycle {
        /// The nodes and groups of the cycle, in order.
        path: Vec<NodeRef>,
    },
    /// SL0004: two registrations share an instance key (or a node key and a
    /// marker label coincide).
    DuplicateKey {
        /// The shared key.
        key: String,
        /// The first registration with it (the one orderings resolve to).
        first: NodeRef,
        /// The later registration.
        second: NodeRef,
    },
    /// SL0009: a node names one service twice in ways that would alias
    /// (`&mut T` with `&T` or `&mut T`, `&T` with `Out<T>`, two `Out<T>`,
    /// `Next<T>` with `&mut NextValue<T>`, ...). Its body never runs.
    DeclaredTwice {
        /// The node.
        node: NodeIndex,
        /// The service and the two declarations that disagree.
        twice: crate::node::DeclaredTwice,
    },
    /// SL0010: a node's own declarations name one of the runtime's services
    /// (`&Entities`, `.reads::<Entities>()`): holding the entity store would
    /// reach components on lanes the node never declared. Its body never
    /// runs.
    RuntimeService {
        /// The node.
        node: NodeIndex,
        /// The service and how the node named it.
        named: crate::node::RuntimeOnly,
    },
    /// SL0011: a node names a service whose value is not `Send` (inserted
    /// with [`World::insert_non_send`](crate::World::insert_non_send)) and
    /// is not pinned to the main thread. Its body never runs.
    UnpinnedNonSend {
        /// The node.
        node: NodeIndex,
        /// The non-`Send` service.
        service: ServiceId,
    },
    /// SL0008: conflicting nodes ordered only by registration order (no path
    /// of explicit or produce edges joins them), grouped: one diagnostic per
    /// service with such pairs, then one for the pairs with an exclusive
    /// node. A pair that conflicts on several services is in each group.
    /// A world's own nodes (`sluice::plan`, `sluice::execution`) are in no
    /// pair: they always run before an exclusive node not declared ahead of
    /// them, whatever the user's registration order.
    Ambiguity {
        /// The service the pairs conflict on; `None` for the pairs with an
        /// exclusive node (which conflicts with every node).
        service: Option<ServiceId>,
        /// The first pairs (at most 8), each `(earlier, later)` in plan
        /// order, sorted by the later node's plan position, then the earlier's.
        pairs: Vec<(NodeIndex, NodeIndex)>,
        /// How many pairs in all, listed or not.
        total: u64,
    },
    /// SL0008 at [`Level::Silenced`]: conflicting nodes ordered only by
    /// registration order on purpose, grouped as [`Ambiguity`](Self::Ambiguity)
    /// is, each listed pair with who silenced it and how.
    SilencedAmbiguity {
        /// The service the pairs conflict on; `None` for the pairs with an
        /// exclusive node.
        service: Option<ServiceId>,
        /// The first pairs (at most 8), each `(earlier, later)` in plan
        /// order, with their silencer.
        pairs: Vec<(NodeIndex, NodeIndex, crate::plan::SilencedBy)>,
        /// How many silenced pairs in all, listed or not.
        total: u64,
    },
}

impl DiagnosticKind {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            DiagnosticKind::Cycle { .. } => "SL0001",
            DiagnosticKind::UnknownTarget { .. } => "SL0002",
            DiagnosticKind::CrossCadence { .. } => "SL0003",
            DiagnosticKind::DuplicateRank { .. } | DiagnosticKind::DuplicateOrder { .. } => {
                "SL0005"
            }
            DiagnosticKind::NoStage { .. } | DiagnosticKind::UnknownRank { .. } => "SL0006",
            DiagnosticKind::OrganisationCycle { .. } => "SL0007",
            DiagnosticKind::DuplicateKey { .. } => "SL0004",
            DiagnosticKind::DeclaredTwice { .. } => "SL0009",
            DiagnosticKind::RuntimeService { .. } => "SL0010",
            DiagnosticKind::UnpinnedNonSend { .. } => "SL0011",
            DiagnosticKind::Ambiguity { .. } | DiagnosticKind::SilencedAmbiguity { .. } => "SL0008",
        }
    }
}

/// One problem: `error[SL0001]: cycle: a -> b -> a ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code (`SL0001`).
    pub code: &'static str,
    /// Warning or error.
    pub level: Level,
    /// What is wrong and what to do about it.
    pub message: String,
    /// The names of the nodes and markers involved.
    pub nodes: Vec<String>,
    /// The structured form, with indices.
    pub kind: DiagnosticKind,
}

impl Diagnostic {
    pub(crate) fn new(
        level: Level,
        kind: DiagnosticKind,
        message: String,
        nodes: Vec<String>,
    ) -> Self {
        Self {
            code: kind.code(),
            level,
            message,
            nodes,
            kind,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Silenced => "silenced",
            Level::Warning => "warning",
            Level::Error => "error",
        };
        write!(f, "{level}[{}]: {}", self.code, self.message)
    }
}

/// Why a plan was not built: every diagnostic found, errors and warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanErrors {
    diagnostics: Vec<Diagnostic>,
}

impl PlanErrors {
    pub(crate) fn new(diagnostics: Vec<Diagnostic>) -> Self {
        Self { diagnostics }
    }

    /// All diagnostics, in the order found.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The error-level diagnostics.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.level == Level::Error)
    }

    /// All diagnostics, owned.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }
}

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanErrors {}
