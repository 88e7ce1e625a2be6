//! sluice: a runtime that runs a game's frame as a graph.
//!
//! Systems and factories declare the services they touch; the planner turns
//! those declarations into a plan whose edges carry their reasons.

pub mod access;
pub mod exec;
pub mod node;
pub mod registry;
pub mod system;
pub mod world;

pub use access::{AccessKind, AccessSet, ServiceId, ServiceTable};
pub use node::{Label, Marker, NodeBuilder, NodeDescriptor};
pub use registry::{Registry, ServiceSlot};
pub use sluice_macros::{factory, run_condition, system};
pub mod plan;
pub use exec::{
    BatchNode, BatchProcessor, CompiledGraph, ExecutionState, LooseTasks, SerialExecutor,
    SystemTiming, ThreadPool, ThreadPoolBuilder,
};
pub use plan::{
    AmbiguityLevel, CompiledPlan, Diagnostic, DiagnosticKind, Edge, Graph, LaneKind, Level,
    MarkerIndex, NodeIndex, NodeRef, Packing, Plan, PlanErrors, PlanOptions, Reason, Relation,
};
pub use system::{
    BoundaryHooks, ConditionBody, ConditionFn, FactoryFn, Next, NextValue, NodeBody, NodeEnv, Out,
    Param, ParamItem, ReadOnlyParam, Service, ServiceCells, SystemFn,
};
pub use world::{
    CommandQueue, Commands, Context, Execution, ExecutorKind, FrameTime, FunctionMarker,
    IntoFactory, IntoSystem, IterationError, MissingService, NodePanic, NodeSpec, PlanOutcome,
    PlanWatch, Registrations, World,
};
