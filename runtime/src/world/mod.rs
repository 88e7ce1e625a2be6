//! The world: services, registered nodes, and the plan that runs them.
//!
//! - [`World`] holds the registrations and the current plan, and runs
//!   iterations on a [`ThreadPool`] (or serially), per `run.rs`.
//! - Registrations made between iterations replan before the next one;
//!   registrations recorded by running nodes ([`Commands`]) land at the
//!   boundary and are planned by the plan factory during the next iteration
//!   (`schedule.rs`), so they run in the one after.

mod adaptive;
mod batch;
mod cadence;
#[cfg(any(debug_assertions, feature = "checked"))]
mod checked;
mod commands;
mod conditions;
mod context;
mod declared;
mod entities;
mod error;
mod group_conditions;
mod lifecycle;
mod messages;
mod node;
mod node_cell;
mod non_send;
pub mod observe;
mod one_shot;
mod par_query;
mod platform;
mod run;
mod schedule;
mod services;
mod spawned;
mod spec;
mod spikes;
mod typed_order;

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;

use crate::access::ServiceId;
use crate::exec::{
    BatchProcessor, LooseTasks, RunStats, SerialExecutor, SystemTiming, Task, ThreadPool,
};
use crate::node::{Marker, NodeBuilder};
use crate::organise::{Group, Schedule};
use crate::plan::{Graph, NodeIndex, Plan, PlanOptions, Plans};
use crate::script::SimClock;
use crate::system::{BoundaryHooks, NextValue};

#[cfg(feature = "serde")]
pub(crate) use cadence::SavedClocks;
pub use cadence::{ClockSnapshot, FixedTime};
pub(crate) use commands::CommandQueue;
pub use commands::{Commands, EntityCommands};
pub use context::Context;
pub(crate) use declared::DeclaredBody;
pub use declared::{
    Declared, DeclaredFn, DeclaredMarker, FactoryDeclaration, FactoryMarker, SystemDeclaration,
    UnbuiltDeclaration, UnbuiltMarker,
};
pub use entities::{EntityMut, EntityRef};
pub use error::{BoundaryFailure, BoundaryStep, IterationError, MissingService, NodePanic};
pub use observe::{
    Add, Event, HookContext, HookWorld, Insert, Lifecycle, ObserveError, ObserverId, On, Remove,
    Replace, Traversal, traverse,
};
pub use one_shot::{RunSystemError, SystemId};
pub(crate) use schedule::{Executions, PlanOutcome, Registrations};
pub use services::FromWorld;
pub use spawned::{CommandEntity, Spawned};
use spec::SpecBody;
pub use spec::{FunctionMarker, IntoFactory, IntoSystem, NodeSpec, WholeWorldMarker};
pub use spikes::{
    MAX_SPIKE_WINDOW, MAX_SPIKES_KEPT, Spike, SpikeHistory, SpikeWatch, SpikeWatchError,
};
pub use typed_order::{ByLabel, ChainMarker, IntoChain, OrderTarget};

use conditions::{BatchCell, RunConditions};
pub(crate) use node::NodeCursors;
use node::{WholeCell, WorldNode};
use node_cell::NodeCell;
use schedule::{ExecutionFactory, PlanFactory};

/// The world's own nodes, registered first by every world: the plan factory
/// and the execution factory.
pub(crate) const BUILTIN_NODES: usize = 2;

/// The frame clock [`World::update`] advances before each iteration.
///
/// The service is a copy of the world's own clock, which the next update
/// counts on from: writing it changes nothing. Save and restore the clock
/// with [`World::clock_snapshot`] and [`World::restore_clock`]. Its sums
/// saturate: an update of any length never panics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameTime {
    /// Time since the previous update.
    pub delta: Duration,
    /// Time summed over every update.
    pub elapsed: Duration,
    /// How many updates ran before this one.
    pub frame: u64,
}

/// Which executor runs a world's iterations. All follow the same plan and
/// give the same results (serial equivalence).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExecutorKind {
    /// Each iteration on the pool or inline, whichever ran this world's recent
    /// iterations faster, as measured by paired, warmed-up probes of both
    /// sides spaced so that probing costs about 0.5% of the run time. A
    /// frame too small to gain from threads runs inline.
    #[default]
    Adaptive,
    /// Always the world's thread pool: the calling thread is worker 0.
    Parallel,
    /// One node at a time on the calling thread, in plan order.
    Serial,
}

/// The ids of the services every world holds for its own scheduling.
#[derive(Debug, Clone, Copy)]
struct BuiltinIds {
    registrations: ServiceId,
    next_plan: ServiceId,
    next_execution: ServiceId,
    /// The entity store.
    entities: ServiceId,
    /// The queue of recorded commands, looked at by every boundary.
    commands: ServiceId,
}

/// A world's own pool, or the shared one (started by this call if need be).
fn pool_or_shared(pool: &Option<ThreadPool>) -> &ThreadPool {
    match pool {
        Some(pool) => pool,
        #[cfg(not(loom))]
        None => ThreadPool::shared(),
        #[cfg(loom)]
        None => unreachable!("under loom every world has a pool of its own"),
    }
}

/// How many threads a world's own pool has, or the shared one has or will
/// have once started (without starting it).
fn pool_threads(pool: &Option<ThreadPool>) -> usize {
    match pool {
        Some(pool) => pool.num_threads(),
        #[cfg(not(loom))]
        None => ThreadPool::shared_if_started()
            .map_or_else(ThreadPool::shared_threads, ThreadPool::num_threads),
        #[cfg(loom)]
        None => 1,
    }
}

/// A read-only handle on a world's current plan, for other threads (an
/// inspector, a debug overlay): loads are lock-free and never block the world.
#[derive(Debug, Clone)]
pub struct PlanWatch {
    current: Arc<ArcSwapOption<Plan>>,
}

impl PlanWatch {
    /// The plan the world runs now (`None` before its first iteration).
    pub fn load(&self) -> Option<Arc<Plan>> {
        self.current.load_full()
    }
}

/// Services, registered nodes, and the current plan.
///
/// Register services with [`insert`](World::insert) and nodes with
/// [`add_system`](World::add_system), [`add_factory`](World::add_factory) and
/// [`add_batch_processor`](World::add_batch_processor);
/// [`run_iteration`](World::run_iteration) runs one frame.
///
/// A world is [`Send`]: it may move to another thread (a non-`Send` service
/// stays with the thread that inserted it). It is not [`Sync`]: it holds
/// boxes that are `Send` only (its nodes' `FnMut` closures, a kept panic
/// payload), so no `&World` is shared between threads (the pool's workers
/// reach its services, not the world).
///
/// ```
/// fn assert_send<T: Send>() {}
/// assert_send::<sluice::World>();
/// ```
///
/// ```compile_fail
/// fn assert_sync<T: Sync>() {}
/// assert_sync::<sluice::World>();
/// ```
pub struct World {
    /// Services (values and ids), node descriptors and markers.
    graph: Graph,
    /// Run-time side of every node, by registration index.
    nodes: Vec<WorldNode>,
    /// The `Next<T>` swaps of the registered nodes.
    hooks: BoundaryHooks,
    builtin: BuiltinIds,
    /// Its own pool, or `None`: the shared one ([`ThreadPool::shared`]),
    /// started at the first parallel run.
    pool: Option<ThreadPool>,
    /// Runs inline iterations; kept so choosing it allocates nothing.
    serial: SerialExecutor,
    executor: ExecutorKind,
    loose: LooseTasks,
    /// The variable plan now running; shared with [`PlanWatch`] handles.
    current: Arc<ArcSwapOption<Plan>>,
    /// Every plan now running (`None` until the first plan).
    plans: Option<Arc<Plans>>,
    /// Each of `plans` compiled with its run state, in the same order.
    executions: Executions,
    /// Per plan, in the same order: the most recent run's timings by
    /// registration index (kept across replans).
    timings: Vec<Vec<SystemTiming>>,
    /// Per plan, in the same order: the threads' idle time in its most
    /// recent run, all parts summed (timing on, parallel parts only).
    run_stats: Vec<RunStats>,
    /// The fixed cadence's accumulator.
    fixed: cadence::FixedClock,
    /// The last update's frame clock (`None` before the first update): the
    /// next update counts on from it; the `FrameTime` service is its copy.
    frame_time: Option<FrameTime>,
    /// Whether the `Startup` schedule has run.
    started: bool,
    /// The entity store's ticks at the last two boundaries: removal records
    /// up to the first are dropped at the next boundary.
    removal_ticks: (u32, u32),
    /// Hooks, and which nodes were created in which order.
    lifecycle: lifecycle::Lifecycle,
    /// Whether a whole-world system or a custom command is running (it may
    /// not run the world).
    running_whole: bool,
    /// Registrations changed between iterations: replan before the next one.
    stale: bool,
    /// A service was removed between iterations: check that the plans'
    /// nodes still find what they require before the next one.
    recheck_services: bool,
    /// The plan factory's last failure, reported by the next iteration.
    plan_error: Option<IterationError>,
    timing: bool,
    /// The spike watch: its setting, the watched nodes' histories, the
    /// recent spikes.
    spikes: spikes::SpikeState,
    /// How many iterations of the variable plan have run (failed ones too).
    iterations: u64,
    /// How many closures were registered under each source-location name.
    closure_names: foldhash::HashMap<crate::node::Label, u32>,
    /// Reused by [`World::query`]'s aliasing check, so a query between
    /// iterations allocates nothing.
    query_lanes: Vec<(std::any::TypeId, bool)>,
    /// This world's identity in recordings: what a node of it records is
    /// told apart from what a node of another world records on one thread.
    id: u64,
    /// The nodes (registration indices) that failed in the iteration now
    /// ending: what they recorded is dropped at its boundary. Empty outside
    /// a failed iteration.
    failed_nodes: Vec<u32>,
    /// The same nodes' positions in the order of the plan that ran, which
    /// their records carry.
    failed_ranks: Vec<u32>,
    /// What the commands landing now have spawned, for the later commands
    /// naming their [`Spawned`] handles.
    spawns: spawned::SpawnTable,
    /// The non-`Send` services inserted, and the thread each belongs to.
    non_send: Vec<(ServiceId, std::thread::ThreadId)>,
    /// The one-shot systems registered, and those running.
    one_shots: one_shot::OneShots,
    /// Hooks and observers, and the state of their delivery.
    observe: observe::Observe,
    /// The plugins added ([`crate::plugin`]).
    pub(crate) plugins: crate::plugin::PluginSet,
    /// The state types and their transitions ([`crate::state`]).
    pub(crate) states: crate::state::StateDrivers,
    /// What snapshots capture (`crate::snapshot`).
    pub(crate) snapshots: crate::snapshot::registry::SnapshotRegistry,
    #[cfg(any(debug_assertions, feature = "checked"))]
    borrows: checked::BorrowTracker,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("nodes", &self.nodes.len())
            .field("services", &self.graph.registry().table().len())
            .field("executor", &self.executor)
            .field("threads", &self.pool_threads())
            .finish_non_exhaustive()
    }
}

impl Drop for World {
    /// Destroys every created node in reverse of the order they were
    /// created (`on_destroy`); a hook that panics is logged and the others
    /// still run.
    fn drop(&mut self) {
        for failure in self.destroy_all() {
            tracing::error!("{failure}");
        }
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// An empty world on the process's shared pool ([`ThreadPool::shared`],
    /// one thread per core), which starts at the first parallel run of any
    /// world on it and is never stopped: making and dropping a world starts
    /// and joins no thread, and hundreds of worlds share the one pool. Use
    /// [`with_pool`](World::with_pool) for a pool of its own.
    ///
    /// Under `--cfg loom` each world has a pool of its own (a model cannot
    /// share threads across its iterations).
    ///
    /// # Panics
    /// Under `--cfg loom`, outside [`sluice::model`](crate::model()).
    pub fn new() -> Self {
        #[cfg(not(loom))]
        let pool = None;
        // The one failure under loom: outside `sluice::model`.
        #[cfg(loom)]
        let pool = Some(ThreadPool::new(0).unwrap_or_else(|error| panic!("World::new: {error}")));
        Self::on_pool(pool)
    }

    /// An empty world running on `pool`, which other worlds may share (each
    /// at its own rate).
    pub fn with_pool(pool: ThreadPool) -> Self {
        Self::on_pool(Some(pool))
    }

    fn on_pool(pool: Option<ThreadPool>) -> Self {
        let mut graph = Graph::new();
        let registry = graph.registry_mut();
        // The world's own services are private: resolved by type before
        // anything else names them, never found by name, and their types are
        // not exported, so no user signature or named declaration reaches them.
        let builtin = BuiltinIds {
            registrations: registry.resolve_private::<Registrations>(),
            next_plan: registry.resolve_private::<NextValue<PlanOutcome>>(),
            next_execution: registry.resolve_private::<NextValue<Executions>>(),
            entities: registry.resolve_private::<crate::entity::Entities>(),
            commands: registry.resolve_private::<CommandQueue>(),
        };
        // The entity store (`builtin.entities`): queries read it shared
        // while systems run; only the world changes it (between iterations,
        // at the boundary).
        registry.insert(Registrations::default());
        registry.insert(CommandQueue::default());
        registry.insert(crate::entity::Entities::new());
        // Readable before the first update (no step has run yet).
        let fixed = cadence::FixedClock::default();
        registry.insert(fixed.time(cadence::Steps { run: 0, dropped: 0 }, 0));
        let mut world = Self {
            graph,
            nodes: Vec::new(),
            hooks: BoundaryHooks::default(),
            builtin,
            pool,
            serial: SerialExecutor::single_seat(),
            executor: ExecutorKind::default(),
            loose: LooseTasks::new(),
            current: Arc::new(ArcSwapOption::empty()),
            plans: None,
            executions: Executions::default(),
            timings: Vec::new(),
            run_stats: Vec::new(),
            fixed,
            frame_time: None,
            started: false,
            removal_ticks: (0, 0),
            lifecycle: lifecycle::Lifecycle::default(),
            running_whole: false,
            stale: true,
            recheck_services: false,
            plan_error: None,
            timing: false,
            spikes: spikes::SpikeState::default(),
            iterations: 0,
            closure_names: foldhash::HashMap::default(),
            query_lanes: Vec::new(),
            id: crate::recording::new_world_id(),
            failed_nodes: Vec::new(),
            failed_ranks: Vec::new(),
            spawns: spawned::SpawnTable::default(),
            non_send: Vec::new(),
            one_shots: one_shot::OneShots::default(),
            observe: observe::Observe::default(),
            plugins: crate::plugin::PluginSet::default(),
            states: crate::state::StateDrivers::default(),
            snapshots: crate::snapshot::registry::SnapshotRegistry::with_builtins(),
            #[cfg(any(debug_assertions, feature = "checked"))]
            borrows: checked::BorrowTracker::new(0),
        };
        world.add_builtin(
            NodeBuilder::new("sluice::plan")
                .reads::<Registrations>()
                .produces::<NextValue<PlanOutcome>>(),
            Box::new(PlanFactory {
                registrations: builtin.registrations,
                next_plan: builtin.next_plan,
            }),
        );
        world.add_builtin(
            NodeBuilder::new("sluice::execution")
                .reads::<NextValue<PlanOutcome>>()
                .produces::<NextValue<Executions>>(),
            Box::new(ExecutionFactory {
                next_plan: builtin.next_plan,
                next_execution: builtin.next_execution,
            }),
        );
        world
    }

    /// The pool this world runs on (clone it to share it with another
    /// world): its own, or the shared one, which this call starts if no
    /// world has yet.
    pub fn pool(&self) -> &ThreadPool {
        pool_or_shared(&self.pool)
    }

    /// How many threads the world's pool has (or the shared pool will have),
    /// without starting the shared pool.
    pub(crate) fn pool_threads(&self) -> usize {
        pool_threads(&self.pool)
    }

    /// The executor iterations run on ([`set_executor`](World::set_executor)).
    pub fn executor(&self) -> ExecutorKind {
        self.executor
    }

    /// Chooses the executor. All follow the same plan with the same results.
    pub fn set_executor(&mut self, executor: ExecutorKind) {
        self.executor = executor;
    }

    /// How plans are built (packing, ambiguity reporting); replans before the
    /// next iteration.
    pub fn set_plan_options(&mut self, options: PlanOptions) {
        self.registrations_mut().options = options;
        self.stale = true;
    }

    fn registrations_mut(&mut self) -> &mut Registrations {
        self.graph
            .registry_mut()
            .get_mut::<Registrations>()
            .expect("every world holds its Registrations")
    }

    /// Stores `value` as the service `T`, replacing any previous value.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.graph.registry_mut().insert(value);
    }

    /// Stores `value` as `T` in the slot's existing box when there is one
    /// (the clocks every update and fixed step sets: no allocation per frame),
    /// bumping its version as `insert` does.
    fn overwrite<T: Send + Sync + 'static>(&mut self, value: T) {
        match self.get_mut::<T>() {
            Some(slot) => *slot = value,
            None => self.insert(value),
        }
    }

    /// The services' registry (a snapshot reads every slot).
    pub(crate) fn graph_registry(&self) -> &crate::registry::Registry {
        self.graph.registry()
    }

    /// This world's id (unique in the process).
    pub(crate) fn world_id(&self) -> u64 {
        self.id
    }

    /// The registered (not removed) nodes whose instance key is `key`, by
    /// registration index.
    #[cfg(feature = "serde")] // saves of `Local`s only
    pub(crate) fn live_nodes_keyed(&self, key: &str) -> Vec<u32> {
        (self.graph.nodes().iter().enumerate())
            .filter(|(_, node)| {
                node.state() != crate::node::NodeState::Removed && node.key() == key
            })
            .map(|(index, _)| u32::try_from(index).expect("fewer than 2^32 nodes"))
            .collect()
    }

    /// The stable identity of the local in slot `id`: its node's instance
    /// key (the name unless set), its position among that node's locals,
    /// and how many registered nodes bear that key (more than one: the
    /// key does not tell them apart, and the world cannot plan: SL0004).
    #[cfg(feature = "serde")] // saves of `Local`s only
    pub(crate) fn local_identity(
        &self,
        id: crate::access::ServiceId,
    ) -> Option<(&str, u32, usize)> {
        let (owner, position) = self.hooks.local_owner(id)?;
        let key = self.graph.node(crate::plan::NodeIndex(owner)).key();
        Some((key, position, self.live_nodes_keyed(key).len()))
    }

    /// The slot of the local at `position` among the locals of the node
    /// registered as `node` (its registration index).
    #[cfg(feature = "serde")] // saves of `Local`s only
    pub(crate) fn local_slot_of(
        &self,
        node: u32,
        position: u32,
    ) -> Option<crate::access::ServiceId> {
        self.hooks.local_at(node, position)
    }

    /// The value of the service type `type_id`, mutably (bumping its
    /// version, as a gated access does), if the world holds one.
    pub(crate) fn service_value_mut(
        &mut self,
        type_id: std::any::TypeId,
    ) -> Option<&mut (dyn std::any::Any + Send + Sync)> {
        let registry = self.graph.registry_mut();
        let id = registry.table().id_of_type(type_id)?;
        let slot = registry.slot_mut(id)?;
        slot.version += 1;
        slot.value.as_deref_mut()
    }

    pub(crate) fn removal_ticks(&self) -> (u32, u32) {
        self.removal_ticks
    }

    /// Puts back the window of removal records a snapshot kept.
    pub(crate) fn set_removal_ticks(&mut self, ticks: (u32, u32)) {
        self.removal_ticks = ticks;
    }

    /// Whether the `Startup` schedule has run (a snapshot keeps it).
    pub(crate) fn has_started(&self) -> bool {
        self.started
    }

    /// Puts back whether `Startup` has run: a world restored to before
    /// its first run runs `Startup` and enters its states' initial values
    /// again, as the frames that followed the snapshot did.
    pub(crate) fn set_started(&mut self, started: bool) {
        self.started = started;
    }

    /// The value in the slot `id` (a snapshot's restore of a `Local`).
    pub(crate) fn slot_value_mut(
        &mut self,
        id: crate::access::ServiceId,
    ) -> Option<&mut Option<Box<dyn std::any::Any + Send + Sync>>> {
        self.graph
            .registry_mut()
            .slot_mut(id)
            .map(|slot| &mut slot.value)
    }

    /// Puts a boxed service value of type `type_id` in its slot, or
    /// empties it (a snapshot's restore); returns the old value to drop.
    pub(crate) fn replace_service_boxed(
        &mut self,
        type_id: std::any::TypeId,
        name: &str,
        value: Option<Box<dyn std::any::Any + Send + Sync>>,
    ) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        let present = value.is_some();
        let old = self
            .graph
            .registry_mut()
            .replace_boxed(type_id, name, value);
        if present != old.is_some() {
            // A node may require it: checked again before the next run.
            self.recheck_services = true;
        }
        old
    }

    /// The version and change ticks of the slot of the service type
    /// `type_id` (`None`: the entity store's), if it has a slot.
    pub(crate) fn slot_book(
        &self,
        type_id: Option<std::any::TypeId>,
    ) -> Option<(u64, crate::registry::SlotTicks)> {
        let registry = self.graph.registry();
        let id = match type_id {
            Some(type_id) => registry.table().id_of_type(type_id)?,
            None => self.builtin.entities,
        };
        registry.slot(id).map(|slot| (slot.version, slot.ticks))
    }

    /// Sets what [`slot_book`](Self::slot_book) read (a snapshot's restore:
    /// readers and factories see the slot as they saw it then).
    pub(crate) fn set_slot_book(
        &mut self,
        type_id: Option<std::any::TypeId>,
        (version, ticks): (u64, crate::registry::SlotTicks),
    ) {
        let entities = self.builtin.entities;
        let registry = self.graph.registry_mut();
        let id = match type_id {
            Some(type_id) => registry.table().id_of_type(type_id),
            None => Some(entities),
        };
        if let Some(slot) = id.and_then(|id| registry.slot_mut(id)) {
            slot.version = version;
            slot.ticks = ticks;
        }
    }

    /// Takes the service `T` out of the world, if it holds one. Nodes that
    /// take it as `Option<&T>` / `Option<&mut T>` see `None` from the next
    /// iteration on; a node that requires it (`&T`, `&mut T`) makes that
    /// iteration fail with [`IterationError::MissingServices`] naming it,
    /// until it is inserted again. The world's own services (its entity
    /// store and scheduling state) are never taken: `None`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let registry = self.graph.registry_mut();
        let id = registry.id_of::<T>()?;
        if registry.table().is_private(id) {
            return None;
        }
        let value = registry.remove::<T>()?;
        // Checked again before the next run: a node may require it.
        self.recheck_services = true;
        Some(value)
    }

    /// The service `T`, if the world holds one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.graph.registry().get()
    }

    /// The service `T`, mutably (bumps its version, as a gate would).
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.graph.registry_mut().get_mut()
    }

    /// Registers a system: a [`NodeSpec`] or a plain function.
    ///
    /// A plain function is named after itself; a closure after the function
    /// it was written in and its source location
    /// (`setup::{closure}@src/main.rs:12:9`), numbered (`#2`, `#3`...) when
    /// the same closure is registered again: two closures are two nodes.
    /// The same function item registered twice is a duplicate (SL0004): give
    /// the second a [`key`](NodeBuilder::key).
    #[track_caller]
    pub fn add_system<M>(&mut self, system: impl IntoSystem<M>) -> NodeIndex {
        self.add_spec(system.into_system())
    }

    /// Registers a factory: a [`NodeSpec`] or a plain function returning what
    /// it produces (named as for [`add_system`](World::add_system)).
    #[track_caller]
    pub fn add_factory<M>(&mut self, factory: impl IntoFactory<M>) -> NodeIndex {
        self.add_spec(factory.into_factory())
    }

    /// Registers a batch processor under `node` (name and ordering); its
    /// buffer service `P::Buffer` is gated automatically, so every writer of
    /// the buffer runs first and its successors start after `after_update`.
    /// The same as `add_system(node.batch_processor(processor))`, which
    /// also takes run conditions ([`NodeBuilder::batch_processor`]).
    pub fn add_batch_processor<P: BatchProcessor>(
        &mut self,
        node: NodeBuilder,
        processor: P,
    ) -> NodeIndex {
        self.add_spec(node.batch_processor(processor))
    }

    /// Registers a parallel query: `body` runs once per entity matching
    /// `D` and `F`, the rows cut into slices of `rows_per_slice` that run as
    /// helper jobs on the world's pool (the node completes when its last
    /// slice does). The node declares the query's lanes, as a system taking
    /// `Query<D, F>` would, and takes part in the plan like one. The same
    /// as `add_system(node.par_query::<D, F>(rows_per_slice, body))`, which
    /// also takes run conditions ([`NodeBuilder::par_query`]).
    ///
    /// ```
    /// use sluice::{NodeBuilder, World};
    ///
    /// struct Pos(f32);
    /// struct Vel(f32);
    ///
    /// let mut world = World::new();
    /// world.spawn_batch((0..1_000).map(|i| (Pos(i as f32), Vel(1.0))));
    /// world.add_par_query::<(&mut Pos, &Vel), ()>(
    ///     NodeBuilder::new("integrate"),
    ///     64,
    ///     |(mut pos, vel): (sluice::Mut<Pos>, &Vel)| pos.0 += vel.0,
    /// );
    /// world.run_iteration().unwrap();
    /// assert_eq!(world.query::<&Pos>().iter().map(|p| p.0).sum::<f32>(), 500_500.0);
    /// ```
    pub fn add_par_query<D, F>(
        &mut self,
        node: NodeBuilder,
        rows_per_slice: usize,
        body: impl for<'w> Fn(D::Item<'w>) + Send + Sync + 'static,
    ) -> NodeIndex
    where
        D: crate::entity::QueryData + 'static,
        F: crate::entity::QueryFilter + 'static,
    {
        self.add_spec(node.par_query::<D, F>(rows_per_slice, body))
    }

    /// Registers a marker nodes can order themselves against.
    pub fn add_marker(&mut self, marker: impl Into<Marker>) {
        self.graph.add_marker(marker);
        self.stale = true;
    }

    fn add_builtin(&mut self, node: NodeBuilder, body: Box<dyn crate::system::NodeBody>) {
        let index = self.graph.add_node(node.builtin());
        self.push_cell(index, body, RunConditions::new(Vec::new()));
    }

    /// Registers `spec` now: between iterations (replans before the next one)
    /// or at a boundary for a ledger command (the plan factory replans).
    fn add_spec(&mut self, mut spec: NodeSpec) -> NodeIndex {
        if spec.unnamed_closure {
            let seen = self
                .closure_names
                .entry(spec.builder.name_label().clone())
                .or_insert(0);
            *seen += 1;
            if *seen > 1 {
                let name = format!("{}#{seen}", spec.builder.name());
                spec.builder.set_name(name.into());
            }
        }
        // The commit point: named and keyed after the node, placed with it,
        // after it; registered right after it, through the same gate.
        let commit = spec.commit.take().map(|mut commit| {
            let key = spec
                .builder
                .key_label()
                .unwrap_or(spec.builder.name_label())
                .clone();
            commit
                .builder
                .set_name(format!("{}@commit", spec.builder.name()).into());
            commit.builder = commit.builder.key(format!("{key}@commit")).after(key);
            commit.builder.place_like(&spec.builder);
            // An exempt node's commit is exempt too (reference 003's
            // exempt `RenderCommitSystem` is such a commit).
            if spec.builder.is_marked_spike_exempt() {
                commit.builder = commit.builder.spike_exempt();
            }
            commit
        });
        let index = self.add_point(spec);
        if let Some(commit) = commit {
            let second = self.add_point(*commit);
            self.graph.link_commit(index, second);
        }
        index
    }

    /// Registers one point of a registration.
    fn add_point(&mut self, spec: NodeSpec) -> NodeIndex {
        let index = self.graph.add_node(spec.builder);
        if let Some(hooks) = spec.hooks {
            let slots = &mut self.lifecycle.hooks;
            slots.resize_with(index.index() + 1, || None);
            slots[index.index()] = Some(hooks);
        }
        self.stale = true;
        let node = u32::try_from(index.index()).expect("fewer than 2^32 nodes");
        self.hooks.registering = Some((node, 0));
        let body = match spec.body {
            SpecBody::WholeWorld(body) => MadeBody::Whole(body),
            SpecBody::Node(recipe) => {
                MadeBody::Node(recipe(self.graph.registry_mut(), &mut self.hooks))
            }
            SpecBody::Batch(recipe) => MadeBody::Batch(recipe(self.graph.registry_mut())),
        };
        let mut conditions = Vec::with_capacity(spec.conditions.len());
        for (part, recipe) in (1..).zip(spec.conditions) {
            self.hooks.registering = Some((node, part));
            conditions.push(recipe(self.graph.registry_mut(), &mut self.hooks));
        }
        self.hooks.registering = None;
        let conditions = RunConditions::new(conditions);
        match body {
            MadeBody::Node(body) => self.push_cell(index, body, conditions),
            MadeBody::Batch(driver) => {
                let cell = BatchCell::new(driver, conditions);
                self.nodes.push(WorldNode::Batch(cell));
            }
            MadeBody::Whole(body) => {
                let cell = WholeCell {
                    body: Some(body),
                    conditions,
                };
                let cell = sync_wrapper::SyncWrapper::new(cell);
                self.nodes.push(WorldNode::Whole(cell));
            }
        }
        index
    }

    fn push_cell(
        &mut self,
        index: NodeIndex,
        body: Box<dyn crate::system::NodeBody>,
        conditions: RunConditions,
    ) {
        let access = self.graph.node(index).access();
        let is_factory = access.produced().next().is_some();
        let inputs = access.shared().chain(access.gated()).collect();
        let cell = NodeCell::new(body, conditions, inputs, is_factory);
        self.nodes
            .push(if self.graph.node(index).gated().is_some() {
                WorldNode::Gate(node::GateCell::new(cell))
            } else {
                WorldNode::Body(cell)
            });
    }

    /// The plan the world runs now, built first if registrations changed
    /// between iterations.
    ///
    /// # Errors
    /// Every problem the planner found ([`IterationError::Plan`]), or every
    /// service nodes need that nothing provides
    /// ([`IterationError::MissingServices`]).
    pub fn plan(&mut self) -> Result<Arc<Plan>, IterationError> {
        self.ensure_plan()?;
        Ok(self.current.load_full().expect("planned above"))
    }

    /// A handle other threads can read the current plan through.
    pub fn plan_watch(&self) -> PlanWatch {
        PlanWatch {
            current: Arc::clone(&self.current),
        }
    }

    /// Spawns an async continuation: it is polled in the regular loose-task
    /// window of each iteration until it completes; waking re-queues it.
    /// (`spawn` is for entities.)
    pub fn spawn_task<F>(&self, future: F) -> Task<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.loose.spawn(future)
    }

    /// Spawns a prioritized task, drained to completion inside the next
    /// iteration, within the run's
    /// [prioritized budget](World::set_prioritized_budget).
    pub fn spawn_prioritized_task<F>(&self, future: F) -> Task<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.loose.spawn_prioritized(future)
    }

    /// How long regular loose tasks may run per iteration; the rest carry over.
    pub fn set_regular_window(&self, window: Duration) {
        self.loose.set_regular_window(window);
    }

    /// How many polls of prioritized tasks one run of a plan may make
    /// ([`LooseTasks::set_prioritized_budget`](crate::exec::LooseTasks::set_prioritized_budget),
    /// [`DEFAULT_PRIORITIZED_BUDGET`](crate::exec::DEFAULT_PRIORITIZED_BUDGET)
    /// until set); past it, the rest carry over to the next iteration.
    pub fn set_prioritized_budget(&self, polls: u64) {
        self.loose.set_prioritized_budget(polls);
    }

    /// How many runs so far spent their whole prioritized budget with
    /// prioritized tasks left over (each also logged through `tracing`).
    pub fn prioritized_overruns(&self) -> u64 {
        self.loose.prioritized_overruns()
    }

    /// Turns per-node timing on or off (clearing previous measurements).
    /// While off, no timestamps are taken and [`timings`](World::timings)
    /// reports zeros.
    pub fn enable_timing(&mut self, enabled: bool) {
        self.timing = enabled;
        for timings in &mut self.timings {
            timings.fill(SystemTiming::default());
        }
        self.run_stats.iter_mut().for_each(RunStats::clear);
        for run in &mut self.executions.0 {
            for execution in run.executions() {
                // The spike watch reads the same clocks.
                execution
                    .state
                    .set_timing(enabled || self.spikes.is_on(), enabled);
            }
        }
    }

    /// Whether runs take per-node timestamps: for
    /// [`timings`](World::timings), the spike watch, or both.
    fn clocks_on(&self) -> bool {
        self.timing || self.spikes.is_on()
    }

    /// Turns the spike watch on with `watch`'s thresholds (`Some`) or off
    /// (`None`, the default). While on, each node's run is compared with its
    /// own recent runs after every run of its plan, and a run far longer
    /// than them (defined precisely on [`SpikeWatch`]) is reported: as a
    /// `tracing` warning (fields `node`, `iteration`, `time_us`, `peak_us`,
    /// `mean_us`) and in [`spikes`](World::spikes). Mark a node whose time
    /// is not its own with [`NodeBuilder::spike_exempt`] (or its group with
    /// [`Group::spike_exempt`]).
    ///
    /// The watch reads the per-node clocks of [`enable_timing`](World::enable_timing),
    /// turning them on for itself ([`timings`](World::timings) still reports
    /// zeros unless timing is enabled too). Each watched node's history is
    /// allocated here and when a plan is installed, never while an iteration
    /// runs. Setting a watch again keeps every history, each cut to its
    /// newest `window` runs when the window shrinks; turning it off drops
    /// the histories and keeps the spikes already reported. While off, runs
    /// take no timestamp for it and touch no history.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sluice::{NodeBuilder, SpikeWatch, World};
    ///
    /// let mut world = World::new();
    /// world.add_system(NodeBuilder::new("present").spike_exempt().system(|| {}));
    /// world.set_spike_watch(Some(SpikeWatch {
    ///     window: 120,
    ///     ratio: 4.0,
    ///     min: Duration::from_micros(200),
    ///     ..SpikeWatch::default()
    /// }))?;
    /// world.run_iteration().unwrap();
    /// assert!(world.spikes().all(|spike| &*spike.name != "present"));
    /// # Ok::<(), sluice::SpikeWatchError>(())
    /// ```
    ///
    /// # Errors
    /// [`SpikeWatchError`] naming the field out of range; the watch in place
    /// stays as it was.
    pub fn set_spike_watch(&mut self, watch: Option<SpikeWatch>) -> Result<(), SpikeWatchError> {
        if let Some(watch) = &watch {
            watch.validate()?;
        }
        let nodes = &self.nodes;
        self.spikes
            .set(watch, self.plans.as_deref(), self.graph.view(), |node| {
                nodes.get(node).is_some_and(WorldNode::skippable)
            });
        let mode = (self.clocks_on(), self.timing);
        for run in &mut self.executions.0 {
            for execution in run.executions() {
                if execution.state.timing_mode() != mode {
                    execution.state.set_timing(mode.0, mode.1);
                }
            }
        }
        Ok(())
    }

    /// The spike watch in place (`None` while off).
    pub fn spike_watch(&self) -> Option<SpikeWatch> {
        self.spikes.watch()
    }

    /// The most recent spikes, oldest first: at most the watch's
    /// [`keep`](SpikeWatch::keep), kept after the watch is turned off.
    pub fn spikes(&self) -> impl DoubleEndedIterator<Item = &Spike> + ExactSizeIterator + '_ {
        self.spikes.recent().iter()
    }

    /// How many spikes were reported so far (those [`spikes`](World::spikes)
    /// no longer keeps included).
    pub fn spikes_total(&self) -> u64 {
        self.spikes.total()
    }

    /// The recent runs the spike watch compares `node`'s next run with:
    /// `Some` while the watch is on and `node` is watched in an installed
    /// plan (not exempt, not removed, disabled or yet to be planned); which
    /// runs it holds is on [`SpikeHistory`].
    pub fn spike_history(&self, node: NodeIndex) -> Option<SpikeHistory<'_>> {
        self.spikes.history(node)
    }

    /// How many iterations of the variable plan this world has run, failed
    /// ones included ([`Spike::iteration`] counts the same way).
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The most recent iteration's per-node timings of the variable plan
    /// (also after a failed iteration), indexed by [`NodeIndex`]: one entry
    /// per registered node when the plan was built (also after an iteration
    /// that swapped in a new plan, or a replan between iterations). A node
    /// that has not run yet, runs in another plan, or has left the plan
    /// (removed, disabled, moved) reads as [`SystemTiming::default`]
    /// (`ran == false`), whatever it measured before. Empty before the
    /// first plan.
    pub fn timings(&self) -> &[SystemTiming] {
        self.timings.first().map_or(&[], Vec::as_slice)
    }

    /// Where the threads' time went in the most recent iteration of the
    /// variable plan while timing is on ([`enable_timing`](World::enable_timing)):
    /// idle and parked time per thread, parks and wake-ups, and how long
    /// `par_for_each`'s helper jobs waited for a thread (see [`RunStats`]).
    /// The parts of a plan between whole-world systems add up; a part run
    /// serially adds nothing. Zeros while timing is off.
    ///
    /// ```
    /// use sluice::{ExecutorKind, NodeBuilder, World};
    ///
    /// let mut world = World::with_pool(sluice::ThreadPool::new(2).unwrap());
    /// // On the pool: an iteration the adaptive executor runs inline
    /// // measures nothing here.
    /// world.set_executor(ExecutorKind::Parallel);
    /// world.add_system(NodeBuilder::new("tick").system(|| {}));
    /// world.enable_timing(true);
    /// world.run_iteration().unwrap();
    /// let stats = world.run_stats();
    /// assert!(stats.measured);
    /// assert_eq!(stats.threads().len(), 2);
    /// assert!(stats.idle <= stats.wall * 2);
    /// ```
    pub fn run_stats(&self) -> &RunStats {
        self.run_stats.first().unwrap_or(&crate::exec::NO_RUN)
    }

    /// The most recent fixed step's [`run_stats`](World::run_stats).
    pub fn fixed_run_stats(&self) -> &RunStats {
        self.run_stats.get(1).unwrap_or(&crate::exec::NO_RUN)
    }

    /// The most recent fixed step's per-node timings, as for
    /// [`timings`](World::timings).
    pub fn fixed_timings(&self) -> &[SystemTiming] {
        self.timings.get(1).map_or(&[], Vec::as_slice)
    }

    /// Every plan the world runs: both cadences of the update schedule,
    /// `Startup` and named schedules (built first if registrations changed).
    ///
    /// # Errors
    /// As for [`plan`](World::plan).
    pub fn plans(&mut self) -> Result<Arc<Plans>, IterationError> {
        self.ensure_plan()?;
        Ok(Arc::clone(self.plans.as_ref().expect("planned above")))
    }

    /// The lanes-and-gates picture of this world's plans (reference 003's
    /// way of reading a plan; see [`Plan::to_svg`]): the fixed cadence's
    /// panel above the variable one's when the fixed plan has nodes.
    ///
    /// # Errors
    /// As for [`plan`](World::plan): the graph does not plan.
    pub fn plan_svg(&mut self) -> Result<String, IterationError> {
        let plans = self.plans()?;
        let mut panels: Vec<(&str, &Plan)> = Vec::with_capacity(2);
        if !plans.fixed().is_empty() {
            panels.push(("fixed cadence", plans.fixed()));
            panels.push(("variable cadence", plans.variable()));
        } else {
            panels.push(("", plans.variable()));
        }
        Ok(crate::plan::to_svg(self.graph.view(), &panels))
    }

    /// Declares a group nodes and other groups join by name
    /// ([`NodeBuilder::in_group`], [`Group::in_group`]); replans before the
    /// next iteration.
    pub fn add_group(&mut self, group: Group) {
        self.graph.add_group(group);
        self.stale = true;
    }

    /// Declares a stage: every member of a stage precedes every member of
    /// each stage with a larger `order`; once one exists, every node names
    /// one ([`NodeBuilder::in_stage`]).
    pub fn add_stage(&mut self, name: impl Into<crate::node::Label>, order: i64) {
        self.graph.add_stage(name, order);
        self.stale = true;
    }

    /// Declares a set: ordered like stages, membership optional
    /// ([`NodeBuilder::in_set`]).
    pub fn add_set(&mut self, name: impl Into<crate::node::Label>, order: i64) {
        self.graph.add_set(name, order);
        self.stale = true;
    }

    /// Removes `node`: its `on_destroy` runs now if it was created, its
    /// body is dropped, and the next plan leaves it out (its edges go with
    /// it; orderings naming it are dropped). Its index is never reused.
    ///
    /// # Errors
    /// [`IterationError::Boundary`] when `on_destroy` panicked (the node is
    /// removed all the same).
    pub fn remove_node(&mut self, node: NodeIndex) -> Result<(), IterationError> {
        if node.index() < BUILTIN_NODES || node.index() >= self.nodes.len() {
            return Ok(());
        }
        let commit = self.other_point(node);
        let failure = self.remove_point(node);
        let commit_failure = commit.and_then(|commit| self.remove_point(commit));
        match (failure, commit_failure) {
            (None, None) => Ok(()),
            (first, second) => Err(IterationError::Boundary(
                first.into_iter().chain(second).collect(),
            )),
        }
    }

    /// The other point of `node`'s registration, if it has two (see
    /// [`NodeSpec::commit`]).
    fn other_point(&self, node: NodeIndex) -> Option<NodeIndex> {
        match self.graph.node(node).point() {
            crate::node::Point::Body { commit } => Some(commit),
            crate::node::Point::Commit { of } => Some(of),
            _ => None,
        }
    }

    /// Removes one point of a registration; the `on_destroy` panic, if any.
    fn remove_point(&mut self, node: NodeIndex) -> Option<BoundaryFailure> {
        if self.graph.node(node).state() == crate::node::NodeState::Removed {
            return None;
        }
        let failure = self.destroy(node);
        self.graph.set_state(node, crate::node::NodeState::Removed);
        self.nodes[node.index()] = WorldNode::Removed;
        // Its locals go with its body: registered again, it starts afresh.
        let registry = self.graph.registry_mut();
        let node_index = u32::try_from(node.index()).expect("fewer than 2^32 nodes");
        self.hooks.remove_locals(node_index, |id| {
            if let Some(slot) = registry.slot_mut(id) {
                drop(slot.value.take());
            }
        });
        self.spikes.forget(node);
        if let Some(hooks) = self.lifecycle.hooks.get_mut(node.index()) {
            *hooks = None;
        }
        self.stale = true;
        failure
    }

    /// Leaves `node` out of plans (`false`) or puts it back (`true`) from
    /// the next plan on; a disabled node stays created and keeps its key.
    pub fn set_enabled(&mut self, node: NodeIndex, enabled: bool) {
        if node.index() < BUILTIN_NODES || node.index() >= self.nodes.len() {
            return;
        }
        let state = if enabled {
            crate::node::NodeState::Enabled
        } else {
            crate::node::NodeState::Disabled
        };
        self.graph.set_state(node, state);
        if let Some(other) = self.other_point(node) {
            self.graph.set_state(other, state);
            if !enabled {
                self.spikes.forget(other);
            }
        }
        if !enabled {
            // Out of the watch at once, not only from the next plan.
            self.spikes.forget(node);
        }
        self.stale = true;
    }

    /// The nodes created so far, in the order their `on_create` ran.
    pub fn creation_order_so_far(&self) -> &[NodeIndex] {
        &self.lifecycle.order
    }

    /// Sets the fixed cadence's step (1/60 s by default).
    ///
    /// # Panics
    /// When `step` is zero.
    pub fn set_fixed_timestep(&mut self, step: Duration) {
        assert!(!step.is_zero(), "a fixed timestep must be longer than zero");
        self.fixed.step = step;
        if let Some(time) = self.get_mut::<FixedTime>() {
            time.step = step;
        }
    }

    /// Caps the fixed steps one update runs (8 by default): when a slow frame
    /// accrued more, the rest are dropped with their time and counted in
    /// [`FixedTime::dropped`] (and a `tracing` warning), so a game that falls
    /// behind does not fall further behind (the spiral of death).
    pub fn set_max_fixed_steps(&mut self, max: u32) {
        self.fixed.max_steps = max;
    }

    /// Advances [`FrameTime`] by `delta`, runs the fixed plan once per whole
    /// fixed step accrued (at most the cap, each to completion, with
    /// [`FixedTime`] updated before each), then one iteration of the variable
    /// plan. The `Startup` schedule runs first, once, before the first update.
    /// A [`SimClock`] service, when the world holds one, advances by `delta`
    /// and by each fixed step (scaled, unless paused).
    ///
    /// # Errors
    /// As for [`run_iteration`](World::run_iteration); a failed fixed step
    /// stops the update there (the variable plan does not run).
    pub fn update(&mut self, delta: Duration) -> Result<(), IterationError> {
        if self.running_whole {
            return Err(IterationError::Reentrant);
        }
        let time = match self.frame_time {
            // Saturating: an update of any length is taken (time stops at
            // `Duration::MAX` rather than panicking or wrapping).
            Some(previous) => FrameTime {
                delta,
                elapsed: previous.elapsed.saturating_add(delta),
                frame: previous.frame.saturating_add(1),
            },
            None => FrameTime {
                delta,
                elapsed: delta,
                frame: 0,
            },
        };
        self.frame_time = Some(time);
        self.overwrite(time);
        self.ensure_plan()?;
        self.run_startup()?;
        if let Some(clock) = self.get_mut::<SimClock>() {
            clock.advance(delta);
        }
        let steps = self.fixed.advance(delta);
        if steps.dropped > 0 {
            tracing::warn!(
                dropped = steps.dropped,
                ran = steps.run,
                "the fixed cadence fell behind: {} steps dropped this update (cap {})",
                steps.dropped,
                self.fixed.max_steps
            );
        }
        let has_fixed = self
            .plans
            .as_ref()
            .is_some_and(|plans| !plans.fixed().is_empty());
        if has_fixed {
            for index in 0..steps.run {
                self.overwrite(self.fixed.time(steps, index));
                self.fixed.total = self.fixed.total.saturating_add(1);
                let step = self.fixed.step;
                if let Some(clock) = self.get_mut::<SimClock>() {
                    clock.advance_fixed(step);
                }
                self.run_plan(1)?;
            }
        } else {
            self.fixed.total = self.fixed.total.saturating_add(u64::from(steps.run));
            let step = self.fixed.step;
            if let Some(clock) = self.get_mut::<SimClock>() {
                clock.advance_fixed_steps(step, steps.run);
            }
        }
        self.overwrite(self.fixed.time(steps, steps.run));
        self.run_iteration()
    }

    /// Runs the named schedule `name` once (its plan to completion, then a
    /// boundary), sharing the world's services and pool. `"Startup"` is
    /// [`Schedule::Startup`]: it runs again (or, before the first update, in
    /// place of the run the first update would give it).
    ///
    /// # Errors
    /// [`IterationError::UnknownSchedule`] when no node is in a schedule of
    /// that name; [`IterationError::UpdateSchedule`] for `"Update"`;
    /// otherwise as for [`run_iteration`](World::run_iteration).
    pub fn run_schedule(&mut self, name: &str) -> Result<(), IterationError> {
        if self.running_whole {
            return Err(IterationError::Reentrant);
        }
        let schedule = Schedule::named(name.to_owned());
        if schedule == Schedule::Update {
            return Err(IterationError::UpdateSchedule);
        }
        self.ensure_plan()?;
        let plans = self.plans.as_ref().expect("planned above");
        let index = plans
            .iter()
            .position(|(selection, _)| selection.schedule == schedule)
            .ok_or_else(|| IterationError::UnknownSchedule(name.to_owned()))?;
        if schedule == Schedule::Startup {
            self.started = true;
        }
        self.run_plan(index)
    }
}

/// A registration's body, made once its services have ids.
enum MadeBody {
    Node(Box<dyn crate::system::NodeBody>),
    Batch(Box<dyn batch::BatchDriver>),
    Whole(node::WholeWorldBody),
}
