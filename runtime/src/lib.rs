//! sluice: a runtime that runs a game's frame as a graph.
//!
//! Systems and factories declare the services they touch in their
//! signatures: `&T` is shared access, `&mut T` gated, a factory's return value
//! (or `Out<T>` / `Next<T>` parameter) is what it produces. The planner turns
//! those declarations into edges with reasons; the executor runs each
//! iteration on the calling thread plus the pool's workers. Parallel is the
//! default, order comes from sharing a service, and a gate is a barrier.
//!
//! Start with [the guide](https://example.invalid/sluice/blob/main/docs/guide/README.md),
//! fourteen chapters from a first system to plugins and states, each with a
//! runnable example; how the crate is put together (the gate every
//! registration passes, the planner, the engine in [`exec`], the boundary)
//! is in [ARCHITECTURE.md](https://example.invalid/sluice/blob/main/ARCHITECTURE.md).
//!
//! ```
//! use sluice::{NodeBuilder, World};
//!
//! struct Armor(u32);
//! struct Hp(u32);
//! struct Log(Vec<String>);
//!
//! fn regenerate(armor: &Armor, hp: &mut Hp) {
//!     hp.0 += armor.0;
//! }
//!
//! fn report(hp: &Hp, log: &mut Log) {
//!     log.0.push(format!("hp {}", hp.0));
//! }
//!
//! let mut world = World::new();
//! world.insert(Armor(2));
//! world.insert(Hp(10));
//! world.insert(Log(Vec::new()));
//! world.add_system(regenerate); // gates Hp: runs before every later reader of Hp
//! world.add_system(report);
//! world.add_system(NodeBuilder::new("audit").after("report").system(|log: &Log| {
//!     assert_eq!(log.0.last().map(String::as_str), Some("hp 12"));
//! }));
//! world.run_iteration()?;
//!
//! let plan = world.plan()?;
//! let why = plan.why(sluice::NodeIndex(2), sluice::NodeIndex(3)).expect("ordered");
//! let reason = why[0].to_string(); // "regenerate -> report: lane ..::Hp: shared after gate"
//! assert!(reason.starts_with("regenerate -> report: lane ") && reason.ends_with("Hp: shared after gate"));
//! # Ok::<(), sluice::IterationError>(())
//! ```
//!
//! Node indices count the world's two built-in factories (`sluice::plan` and
//! `sluice::execution`, which build the next iteration's plan) first.

pub mod access;
pub mod entity;
pub mod exec;
pub mod message;
pub mod model;
pub mod node;
mod non_send;
pub mod organise;
pub mod plugin;
pub mod prelude;
mod recording;
pub mod registry;
mod running;
pub mod script;
pub mod snapshot;
pub mod state;
pub mod sync;
pub mod system;
mod tuples;
pub mod world;

pub use access::{AccessKind, AccessSet, ServiceId, ServiceTable};
pub use entity::{
    Added, Archetype, ArchetypeId, Bundle, Changed, Component, ComponentId, ComponentInfo,
    ComponentRef, ComponentTicks, Components, Entities, Entity, EntityError, MAX_TICK_AGE, Mut,
    Query, QueryData, QueryEntityError, QueryFilter, QueryIter, ReadOnlyQueryData, Ref, Removed,
    RunTicks, StoreId, TICK_CHECK_INTERVAL, Target, With, Without,
};
pub use entity::{Allow, Disabled, RequiredError};
pub use entity::{AnyOf, Has, Or, Populated, Single};
pub use entity::{
    ChildOf, ChildSpawner, Children, GlobalTransform, Transform, TransformPropagation,
    propagate_transforms,
};
pub use entity::{ComponentError, StorageType};
/// The vector math [`Transform`] and [`GlobalTransform`] are made of.
pub use glam;
pub use message::{MessageSender, Messages, ParRead, Publish, SendError, Subscribe};
pub use model::model;
pub use node::{
    Declaration, DeclaredBy, DeclaredTwice, Label, Marker, NodeBuilder, NodeDescriptor, NodeState,
    Point, RuntimeOnly, Silenced,
};
pub use organise::{
    Cadence, Group, Organisation, Phase, Placement, Rank, RankKind, Schedule, SiblingOrder,
};
pub use registry::{Registry, ServiceSlot};
pub use sluice_macros::{Bundle, factory, run_condition, system};
pub use snapshot::{
    LeftOut, PartKind, RestoreError, RollbackBuffer, Snapshot, SnapshotError, SnapshotReport,
};
pub mod plan;
pub use exec::{
    BatchNode, BatchProcessor, CompiledGraph, ExecutionState, LooseTasks, RunStats, SerialExecutor,
    SystemTiming, ThreadIdle, ThreadPool, ThreadPoolBuilder,
};
pub use plan::{
    AmbiguityLevel, CompiledPlan, Diagnostic, DiagnosticKind, Edge, Graph, GroupIndex, Hierarchy,
    LaneKind, Level, MarkerIndex, NodeIndex, NodeRef, Packing, Plan, PlanErrors, PlanOptions,
    Plans, Reason, Relation, Selection, SilencedBy, TreeItem,
};
pub use system::{
    AndCondition, Append, AppendBuffer, BoundaryHooks, ConditionBody, ConditionExt, ConditionFn,
    FactoryFn, Gate, Local, Next, NextValue, NodeBody, NodeEnv, NonSend, NonSendMut, NotCondition,
    OrCondition, Out, Param, ParamItem, PipeCondition, PipedConditionFn, ReadOnlyParam, Service,
    ServiceCells, SystemFn, Tracked, not, service_added, service_changed, service_exists,
};
pub use world::{
    Add, Event, HookContext, HookWorld, Insert, Lifecycle, ObserveError, ObserverId, On, Remove,
    Replace, Traversal, traverse,
};
pub use world::{
    BoundaryFailure, BoundaryStep, ByLabel, ChainMarker, ClockSnapshot, CommandEntity, Commands,
    Context, Declared, DeclaredFn, DeclaredMarker, EntityCommands, EntityMut, EntityRef,
    ExecutorKind, FactoryDeclaration, FactoryMarker, FixedTime, FrameTime, FromWorld,
    FunctionMarker, IntoChain, IntoFactory, IntoSystem, IterationError, MAX_SPIKE_WINDOW,
    MAX_SPIKES_KEPT, MissingService, NodePanic, NodeSpec, OrderTarget, PlanWatch, RunSystemError,
    Spawned, Spike, SpikeHistory, SpikeWatch, SpikeWatchError, SystemDeclaration, SystemId,
    UnbuiltDeclaration, UnbuiltMarker, World,
};
