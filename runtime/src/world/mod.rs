//! The world: services, registered nodes, and the plan that runs them.

mod context;
mod error;
mod node_cell;
mod spec;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use crate::node::Marker;
use crate::plan::{Graph, NodeIndex, Plan, PlanErrors, PlanOptions};
use crate::system::{BoundaryHooks, NodeEnv, ServiceCells};

pub use context::NodeContext;
pub use error::{IterationError, NodePanic};
use node_cell::NodeCell;
pub use spec::{FunctionMarker, IntoFactory, IntoSystem, NodeSpec};

/// The frame clock [`World::update`] advances before each iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameTime {
    /// Time since the previous update.
    pub delta: Duration,
    /// Time summed over every update.
    pub elapsed: Duration,
    /// How many updates have run before this one.
    pub frame: u64,
}

/// Services, entities-to-come, registered nodes, and the current plan.
///
/// Register services with [`insert`](World::insert) and nodes with
/// [`add_system`](World::add_system) / [`add_factory`](World::add_factory);
/// [`run_iteration`](World::run_iteration) plans (when registrations changed)
/// and runs one frame.
pub struct World {
    /// Services (values and ids), node descriptors and markers.
    graph: Graph,
    /// Node bodies, by registration index (parallel to `graph.nodes()`).
    cells: Vec<NodeCell>,
    /// The `Next<T>` swaps of the registered nodes.
    hooks: BoundaryHooks,
    options: PlanOptions,
    /// The plan of the current registrations; `None` when they changed since
    /// it was built.
    plan: Option<Arc<Plan>>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("nodes", &self.cells.len())
            .field("services", &self.graph.registry().table().len())
            .field("planned", &self.plan.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// An empty world.
    pub fn new() -> Self {
        Self {
            graph: Graph::new(),
            cells: Vec::new(),
            hooks: BoundaryHooks::default(),
            options: PlanOptions::default(),
            plan: None,
        }
    }

    /// How plans are built (packing, ambiguity reporting); replans next run.
    pub fn set_plan_options(&mut self, options: PlanOptions) {
        self.options = options;
        self.plan = None;
    }

    /// Stores `value` as the service `T`, replacing any previous value.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.graph.registry_mut().insert(value);
    }

    /// The service `T`, if the world holds one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.graph.registry().get()
    }

    /// The service `T`, mutably (bumps its version).
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.graph.registry_mut().get_mut()
    }

    /// Registers a system: a [`NodeSpec`] or a plain function.
    pub fn add_system<M>(&mut self, system: impl IntoSystem<M>) -> NodeIndex {
        self.add_spec(system.into_system())
    }

    /// Registers a factory: a [`NodeSpec`] or a plain function returning what
    /// it produces.
    pub fn add_factory<M>(&mut self, factory: impl IntoFactory<M>) -> NodeIndex {
        self.add_spec(factory.into_factory())
    }

    /// Registers a marker nodes can order themselves against.
    pub fn add_marker(&mut self, marker: impl Into<Marker>) {
        self.graph.add_marker(marker);
        self.plan = None;
    }

    fn add_spec(&mut self, spec: NodeSpec) -> NodeIndex {
        let index = self.graph.add_node(spec.builder);
        let body = (spec.recipe)(self.graph.registry_mut(), &mut self.hooks);
        let conditions = spec
            .conditions
            .into_iter()
            .map(|recipe| recipe(self.graph.registry_mut(), &mut self.hooks))
            .collect();
        let access = self.graph.node(index).access();
        let is_factory = access.produced().next().is_some();
        let inputs = access.shared().chain(access.gated()).collect();
        self.cells
            .push(NodeCell::new(body, conditions, inputs, is_factory));
        self.plan = None;
        index
    }

    /// The plan of the current registrations, built if they changed.
    ///
    /// # Errors
    /// Every problem the planner found ([`PlanErrors`]).
    pub fn plan(&mut self) -> Result<&Arc<Plan>, PlanErrors> {
        if self.plan.is_none() {
            self.plan = Some(Arc::new(self.graph.build(&self.options)?));
        }
        Ok(self.plan.as_ref().expect("built above"))
    }

    /// Advances [`FrameTime`] by `delta`, then runs one iteration.
    ///
    /// # Errors
    /// As for [`run_iteration`](World::run_iteration).
    pub fn update(&mut self, delta: Duration) -> Result<(), IterationError> {
        let time = match self.get::<FrameTime>() {
            Some(previous) => FrameTime {
                delta,
                elapsed: previous.elapsed + delta,
                frame: previous.frame + 1,
            },
            None => FrameTime {
                delta,
                elapsed: delta,
                frame: 0,
            },
        };
        self.insert(time);
        self.run_iteration()
    }

    /// Runs every node of the plan once, in plan order, then crosses the
    /// iteration boundary.
    ///
    /// # Errors
    /// [`IterationError::Plan`] when the registrations do not plan (nothing
    /// runs); [`IterationError::NodePanicked`] naming the node whose body
    /// panicked (nothing new starts after it; the boundary is still crossed so
    /// the world stays consistent, and the next iteration runs normally).
    pub fn run_iteration(&mut self) -> Result<(), IterationError> {
        let plan = Arc::clone(self.plan().map_err(IterationError::Plan)?);
        let result = self.run_serial(&plan);
        self.cross_boundary();
        result
    }

    fn run_serial(&mut self, plan: &Plan) -> Result<(), IterationError> {
        let (nodes, table, slots) = self.graph.parts_mut();
        let cells = ServiceCells::new(slots);
        for node in plan.order() {
            let env = NodeEnv {
                cells,
                table,
                descriptor: &nodes[node.index()],
            };
            let cell = &self.cells[node.index()];
            // SAFETY:
            // - this thread is the only one running nodes of this world (the
            //   serial executor holds `&mut self`), so it alone enters `cell`;
            // - nodes run one at a time in plan order, so no two accesses
            //   overlap at all, and `env` is this node's own.
            let outcome = catch_unwind(AssertUnwindSafe(|| unsafe { cell.run(&env) }));
            if let Err(payload) = outcome {
                return Err(IterationError::NodePanicked(NodePanic::new(
                    nodes[node.index()].name(),
                    payload,
                )));
            }
        }
        Ok(())
    }

    /// The iteration boundary: pending `Next<T>` values replace their services.
    fn cross_boundary(&mut self) {
        let (_, _, slots) = self.graph.parts_mut();
        self.hooks.apply(slots);
    }
}
