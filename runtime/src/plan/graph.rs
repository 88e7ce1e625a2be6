//! The registrations a plan is built from.

use crate::access::ServiceTable;
use crate::node::{Label, Marker, NodeBuilder, NodeDescriptor, NodeState};
use crate::organise::{Group, Organisation, RankKind};
use crate::plan::{Plan, PlanErrors, PlanOptions, Plans};
use crate::registry::{Registry, ServiceSlot};

/// A registered node: its index in registration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIndex(pub u32);

impl NodeIndex {
    /// The index into per-node arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A registered marker: its index among markers, in registration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MarkerIndex(pub u32);

impl MarkerIndex {
    /// The index into per-marker arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The service registry, the node descriptors (by registration index) and the
/// markers of one world: everything [`Graph::build`] needs.
#[derive(Debug, Default)]
pub struct Graph {
    registry: Registry,
    nodes: Vec<NodeDescriptor>,
    markers: Vec<Marker>,
    organisation: Organisation,
}

impl Graph {
    /// An empty graph with an empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A graph over an existing registry.
    pub fn with_registry(registry: Registry) -> Self {
        Self {
            registry,
            ..Self::default()
        }
    }

    /// The services.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The services, mutably (to insert values).
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// The node descriptors, the id table and the service slots at once: the
    /// executor reads the first two while nodes reach into the slots.
    pub(crate) fn parts_mut(&mut self) -> (GraphView<'_>, &mut [ServiceSlot]) {
        let (table, slots) = self.registry.split_mut();
        let view = GraphView {
            table,
            nodes: &self.nodes,
            markers: &self.markers,
            organisation: &self.organisation,
        };
        (view, slots)
    }

    /// Registers a node, resolving its services to ids.
    pub fn add_node(&mut self, node: NodeBuilder) -> NodeIndex {
        let index = NodeIndex(u32::try_from(self.nodes.len()).expect("too many nodes"));
        let node = node.build(&mut self.registry);
        self.organisation.phases_named |= node.placement().phase.is_some();
        self.nodes.push(node);
        index
    }

    /// Makes `commit` the second point of `body` (one registration, two
    /// vertices: see [`Point`](crate::Point)); the caller orders `commit`
    /// after `body` (a world's [`NodeSpec::commit`](crate::NodeSpec::commit)
    /// does both).
    pub fn link_commit(&mut self, body: NodeIndex, commit: NodeIndex) {
        self.nodes[body.index()].set_point(crate::node::Point::Body { commit });
        self.nodes[commit.index()].set_point(crate::node::Point::Commit { of: body });
    }

    /// Declares a group nodes and other groups join by name.
    pub fn add_group(&mut self, group: Group) {
        self.organisation.add_group(group);
    }

    /// Declares a stage: every member of a stage precedes every member of
    /// each stage with a larger `order`; once one exists, every node names one.
    pub fn add_stage(&mut self, name: impl Into<Label>, order: i64) {
        self.organisation.add_rank(RankKind::Stage, name, order);
    }

    /// Declares a set: ordered like stages, membership optional.
    pub fn add_set(&mut self, name: impl Into<Label>, order: i64) {
        self.organisation.add_rank(RankKind::Set, name, order);
    }

    /// The groups, stages and sets.
    pub fn organisation(&self) -> &Organisation {
        &self.organisation
    }

    /// Registers a marker (`Marker::new("PreUpdate")` or just `"PreUpdate"`).
    pub fn add_marker(&mut self, marker: impl Into<Marker>) -> MarkerIndex {
        let index = MarkerIndex(u32::try_from(self.markers.len()).expect("too many markers"));
        self.markers.push(marker.into());
        index
    }

    /// The node descriptors, by registration index.
    pub fn nodes(&self) -> &[NodeDescriptor] {
        &self.nodes
    }

    /// One node's descriptor.
    pub fn node(&self, index: NodeIndex) -> &NodeDescriptor {
        &self.nodes[index.index()]
    }

    /// Enables, disables or removes a node (see [`NodeState`]); a removed
    /// node stays removed.
    pub fn set_state(&mut self, index: NodeIndex, state: NodeState) {
        let node = &mut self.nodes[index.index()];
        if node.state() != NodeState::Removed {
            node.set_state(state);
        }
    }

    /// The markers, by registration index.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// Builds the plan of the update schedule's variable cadence, or returns
    /// every error found (with the warnings).
    pub fn build(&self, options: &PlanOptions) -> Result<Plan, PlanErrors> {
        crate::plan::builder::build(&self.view(), options)
    }

    /// Builds the plan of every selection (both cadences of the update
    /// schedule, `Startup`, named schedules), or returns every error found,
    /// each once.
    pub fn build_all(&self, options: &PlanOptions) -> Result<Plans, PlanErrors> {
        crate::plan::builder::build_all(&self.view(), options)
    }

    /// What the planner reads, without the service values.
    pub fn view(&self) -> GraphView<'_> {
        self.view_over(self.registry.table())
    }

    fn view_over<'a>(&'a self, table: &'a ServiceTable) -> GraphView<'a> {
        GraphView {
            table,
            nodes: &self.nodes,
            markers: &self.markers,
            organisation: &self.organisation,
        }
    }
}

/// What a plan is built from, borrowed: the id table, the node descriptors
/// and the markers. Holds no service values, so a plan factory can read it
/// while other nodes of the running iteration write services.
#[derive(Debug, Clone, Copy)]
pub struct GraphView<'a> {
    table: &'a ServiceTable,
    nodes: &'a [NodeDescriptor],
    markers: &'a [Marker],
    organisation: &'a Organisation,
}

impl<'a> GraphView<'a> {
    /// The groups, stages and sets.
    pub fn organisation(&self) -> &'a Organisation {
        self.organisation
    }

    /// The id table.
    pub fn table(&self) -> &'a ServiceTable {
        self.table
    }

    /// The node descriptors, by registration index.
    pub fn nodes(&self) -> &'a [NodeDescriptor] {
        self.nodes
    }

    /// One node's descriptor.
    pub fn node(&self, index: NodeIndex) -> &'a NodeDescriptor {
        &self.nodes[index.index()]
    }

    /// The markers, by registration index.
    pub fn markers(&self) -> &'a [Marker] {
        self.markers
    }

    /// Builds the plan of the update schedule's variable cadence, or returns
    /// every error found (with the warnings).
    pub fn build(&self, options: &PlanOptions) -> Result<Plan, PlanErrors> {
        crate::plan::builder::build(self, options)
    }

    /// Builds the plan of every selection, or returns every error, each once.
    pub fn build_all(&self, options: &PlanOptions) -> Result<Plans, PlanErrors> {
        crate::plan::builder::build_all(self, options)
    }
}

impl From<&'static str> for Marker {
    fn from(label: &'static str) -> Self {
        Marker::new(label)
    }
}

impl From<String> for Marker {
    fn from(label: String) -> Self {
        Marker::new(label)
    }
}

impl From<Label> for Marker {
    fn from(label: Label) -> Self {
        Marker::new(label)
    }
}
