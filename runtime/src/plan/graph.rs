//! The registrations a plan is built from.

use crate::access::ServiceTable;
use crate::node::{Label, Marker, NodeBuilder, NodeDescriptor};
use crate::plan::{Plan, PlanErrors, PlanOptions};
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
        (GraphView::new(table, &self.nodes, &self.markers), slots)
    }

    /// Registers a node, resolving its services to ids.
    pub fn add_node(&mut self, node: NodeBuilder) -> NodeIndex {
        let index = NodeIndex(u32::try_from(self.nodes.len()).expect("too many nodes"));
        self.nodes.push(node.build(&mut self.registry));
        index
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

    /// The markers, by registration index.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// Builds the plan, or returns every error found (with the warnings).
    pub fn build(&self, options: &PlanOptions) -> Result<Plan, PlanErrors> {
        crate::plan::builder::build(&self.view(), options)
    }

    /// What the planner reads, without the service values.
    pub fn view(&self) -> GraphView<'_> {
        GraphView {
            table: self.registry.table(),
            nodes: &self.nodes,
            markers: &self.markers,
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
}

impl<'a> GraphView<'a> {
    /// A view over parts held elsewhere.
    pub fn new(
        table: &'a ServiceTable,
        nodes: &'a [NodeDescriptor],
        markers: &'a [Marker],
    ) -> Self {
        Self {
            table,
            nodes,
            markers,
        }
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

    /// Builds the plan, or returns every error found (with the warnings).
    pub fn build(&self, options: &PlanOptions) -> Result<Plan, PlanErrors> {
        crate::plan::builder::build(self, options)
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
