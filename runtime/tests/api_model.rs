//! A model of the public API, fuzzed (issue 19): random sequences of public
//! operations run against a world and against a plain reference model
//! written here, independently of the implementation, and every observable
//! result is compared after every operation.
//!
//! The model knows only what the documentation promises:
//! - entities: spawn, spawn_batch, despawn, insert, remove, freeze (a frozen
//!   entity never gains or loses a component; an insert that only replaces
//!   is refused too), `get_mut`, and that a despawned entity is gone for
//!   good; no two spawns get one handle; a handle of another world reads
//!   exactly the entity of this world it equals, or nothing;
//! - `ComponentRef` on this world and on another (foreign: reads nothing),
//!   and `Target` in queries;
//! - systems of random signatures, registered and removed between
//!   iterations; serial equivalence: every executor gives the result of
//!   running the plan's nodes one by one in registration order (no node
//!   here orders itself explicitly);
//! - commands recorded from parallel slices land at the boundary in plan
//!   order, a refused command is reported and changes nothing;
//! - messages: one reader registered first reads, in each iteration,
//!   what writers sent in the previous one and what a sender sent before
//!   the previous one's boundary;
//! - executors switched at random (serial, parallel, adaptive) on a pool
//!   shared by two worlds;
//! - appending (issue 20): appenders push into an `AppendBuffer` from
//!   parallel slices, and two-point nodes (`NodeSpec::commit`) commit it:
//!   the first commit in registration order takes everything appended
//!   since the last commit, run by run (iterations without a commit
//!   carry theirs), each run grouped by appender in plan order (here
//!   registration order), after every appender of the iteration wherever
//!   it was registered; issue 34: an appender that fans out inside its
//!   slices records in the nested loops' order, and one that records from
//!   a thread it starts itself lands those values at its place, after its
//!   own thread's; a two-point node with an order of its own plans (its
//!   commit shares the order) and lands in plan order, and a pinned one
//!   runs both points on the calling thread;
//! - the spike watch (issue 20): which runs a node's history records, and
//!   that the spikes reported are the rule's (the `spikes` module);
//! - optional services and run conditions (issue 20, `api_model/optional.rs`):
//!   `Option<&T>` / `Option<&mut T>` over a service inserted and removed
//!   between iterations, conditions on systems, batch processors and
//!   parallel queries;
//! - the main thread (issue 20, `api_model/pinned.rs`): pinned systems run
//!   on the calling thread and touch a non-`Send` service as the model
//!   says; an unpinned node naming it is refused whole (SL0011);
//! - per-thread state in parallel queries (issue 23,
//!   `api_model/par_init.rs`): `par_for_each_init` changes the rows as a
//!   plain bump, and makes no state without rows and at most one per
//!   thread;
//! - model checking outside loom (issue 22, `api_model/model_check.rs`):
//!   `sluice::model::Builder`'s `check` and `explore` run the closure once,
//!   whatever the bound, threads and `explore_machinery`, a world built in
//!   it on the shared pool runs normally, and a closure's `Err` is a panic;
//! - idle and wake-up time (issue 21, `api_model/run_stats.rs`):
//!   `World::run_stats` is zeros with timing off, measured and within its
//!   bounds on the pool with timing on, unmeasured on the serial executor;
//! - conditions on groups and silenced ambiguities (issue 36,
//!   `api_model/organising.rs`): a group's condition is evaluated once per
//!   iteration, its members run exactly when it holds, a combinator over a
//!   panicking operand short-circuits or fails the iteration naming
//!   `run_if(<group>)`; a silenced pair is reported as silenced, an unknown
//!   name is SL0002;
//! - hierarchies (issue 37, `api_model/hierarchy.rs`): attach, reparent,
//!   detach, cycle attempts and subtree despawns against a reference
//!   forest, with the traversals' orders.
//! - hooks and observers (issue 37, `api_model/observers.rs`): a random
//!   script of changes, direct or through commands on a random executor,
//!   logs hooks and observers in the order a reference model gives.
//! - plugins and states (issue 37, `api_model/platform.rs`): requirements
//!   built first whatever the order added, duplicates refused, missing
//!   requirements and cycles reported; state transitions at the state
//!   point, chained from `OnEnter`/`OnExit`, bounded, on every executor;
//!   issue 39: a snapshot taken between frames and restored later gives
//!   back the state, its pending request and the log.
//! - snapshots (issue 39, `api_model/snapshots.rs`): everything the model
//!   knows comes back, the reader's unread messages and the counters'
//!   `Local`s included; a message from the sender (another thread) is in
//!   a snapshot once a boundary has drained it; saves (`api_model/saves.rs`)
//!   written, kept and loaded later, the counters' `Local`s by node key.
//!
//! Failures print the seed: `API_MODEL_SEED=<seed> cargo test -p sluice
//! --test api_model` replays it, and the shrunk operations are printed.
//! `API_MODEL_CASES` sets the number of cases (2,500, about a minute, by default;
//! a handful under Miri).

#[path = "api_model/spikes.rs"]
mod spikes;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::time::Duration;

use sluice::script::{
    ScriptId, ScriptKind, ScriptSnapshot, Scripts, SimClock, Step, StepScript, Wait,
};
use sluice::{
    Append, AppendBuffer, ClockSnapshot, Commands, ComponentRef, Entity, ExecutorKind, FrameTime,
    IterationError, Local, MessageSender, NodeBuilder, NodeIndex, Publish, Query, QueryEntityError,
    Subscribe, Target, ThreadPool, ThreadPoolBuilder, World,
};

#[path = "api_model/pinned.rs"]
mod pinned;

// ---------------------------------------------------------------------------
// The vocabulary: components, messages, systems, operations.

/// A position-like component, the one references point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct P(i64);
/// A second component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct V(i64);
/// A component of the other world only, whose bytes a foreign handle must
/// never read as a `P`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Name(String);
/// A component whose `Drop` panics.
#[derive(Debug)]
struct Fragile;
impl Drop for Fragile {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("{FRAGILE}");
        }
    }
}
/// The message of `Fragile`'s panic, kept out of the output.
const FRAGILE: &str = "fragile component dropped";
/// The message of an injected node panic, kept out of the output.
const INJECTED: &str = "injected node panic";
/// The `V` of the `n`th `SpawnPair`'s leader is `PAIR_LEADER + n`, its
/// follower's `PAIR_FOLLOWER + n`: apart from every other `V`, so the
/// spawned are told apart by value.
const PAIR_LEADER: i64 = 1 << 40;
const PAIR_FOLLOWER: i64 = 1 << 41;

/// The message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct M(i64);
/// What `Sys::Counter` sends: `COUNTED` plus its run count, apart from
/// every `P` a publisher sends and every sender's message.
const COUNTED: i64 = 1 << 42;
/// The scripts' kind: no view; each intent is `(tag, steps left)`.
struct Director;
impl ScriptKind for Director {
    type View<'v> = ();
    type Intent = (u8, u8);
}

/// A step script: emits `(tag, left)` at each step, then waits a tick (or
/// `wait_ms` of simulation time) until `left` reaches 0. Saved to disk
/// (`World::save_step_script`, in `saves::install`).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Ticker {
    tag: u8,
    left: u8,
    wait_ms: u8,
}

impl StepScript<Director> for Ticker {
    fn step(&mut self, cx: &mut Step<'_, '_, Director>) -> Wait<Director> {
        cx.emit((self.tag, self.left));
        if self.left == 0 {
            return Wait::Done;
        }
        self.left -= 1;
        if self.wait_ms == 0 {
            Wait::NextTick
        } else {
            Wait::For(Duration::from_millis(u64::from(self.wait_ms)))
        }
    }
}

/// Every intent the collect system applied, in order.
#[derive(Debug, Default, Clone)]
struct ScriptLog(Vec<(ScriptId, (u8, u8))>);

/// What each observer saw: `(its serial, the entities, sorted)` per run
/// (snapshotted and saved: it names entities, which a restore or a load
/// gives back as they were).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct ChangeLog(Vec<(usize, Vec<Entity>)>);

/// What the reader read, one list per iteration (sorted: the model does
/// not know the rows' order, only what was sent).
#[derive(Debug, Default)]
struct ReadLog(Vec<Vec<i64>>);

// --- issue 20: appending (begin) ---
/// What appenders append: `(the appender's serial, a value)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inst(usize, i64);
/// What each commit drained, one list per commit run.
#[derive(Debug, Default)]
struct InstanceLog(Vec<Vec<(usize, i64)>>);
/// Issue 34: the threads pinned two-point nodes ran their body and commit
/// on.
#[derive(Debug, Default)]
struct PinnedCommits(Vec<std::thread::ThreadId>);
// --- issue 20: appending (end) ---

#[path = "api_model/change.rs"]
mod change;
#[path = "api_model/entities.rs"]
mod entities;
#[path = "api_model/hierarchy.rs"]
mod hierarchy;
#[path = "api_model/messages.rs"]
mod messages;
#[path = "api_model/model_check.rs"]
mod model_check;
#[path = "api_model/observers.rs"]
mod observers;
#[path = "api_model/one_shot.rs"]
mod one_shot;
#[path = "api_model/optional.rs"]
mod optional;
#[path = "api_model/organising.rs"]
mod organising;
#[path = "api_model/par_init.rs"]
mod par_init;
#[path = "api_model/platform.rs"]
mod platform;
#[path = "api_model/queries.rs"]
mod queries;
#[path = "api_model/run_stats.rs"]
mod run_stats;
#[path = "api_model/saves.rs"]
mod saves;
#[path = "api_model/snags.rs"]
mod snags;
#[path = "api_model/snapshots.rs"]
mod snapshots;
#[path = "api_model/sparse.rs"]
mod sparse;
#[path = "api_model/systems.rs"]
mod systems;

/// A system of the random world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sys {
    /// Issue 20: optional services and run conditions (`optional.rs`).
    Optional(optional::OptSys),
    // --- issue 20: appending (begin) ---
    /// `Query<&P>` and `Append<Inst>`, in slices of one row: appends
    /// `p + k` for every p.
    Appender(i8),
    /// A two-point node: its body (`Query<&P>`, `Append<Inst>`) appends how
    /// many rows hold a `P`; its commit drains the buffer into the log.
    Instanced,
    /// Issue 34: `Instanced` with an order of its own (its serial: after
    /// every unordered node, and it and its commit one order, never its
    /// own duplicate), pinned or not (both points on the calling thread).
    TwoPoint { ordered: bool, pinned: bool },
    /// Issue 34: `Query<&P>` and `Append<Inst>`, a `for_each_slice` of
    /// three inside slices of one row: appends `4(p + k) + i` for `i` in
    /// `0..3`, in that order, for every p.
    NestedAppender(i8),
    /// Issue 34: `Query<&P>` and `Append<Inst>`: appends `p + k` for every
    /// p on its own thread, then `p + k + THREADED` for every p from a
    /// thread it starts (`std::thread::scope`).
    ThreadedAppender(i8),
    // --- issue 20: appending (end) ---
    /// `Query<&mut P>`: p += k.
    Bump(i8),
    /// Issue 23: `Query<&mut P>` through `par_for_each_init` in slices of
    /// the second number of rows (0: automatic): p += k (`par_init.rs`).
    InitBump(i8, u8),
    /// `Query<(&mut V, &P)>`: v = p.
    Copy,
    /// `Query<&P>` and `Commands`, in slices of one row: spawns `(V(p),)`
    /// for every p with `p mod m == 0`.
    Spawner(u8),
    /// `Query<(Entity, &P)>` and `Commands`, in slices of one row:
    /// despawns every entity with `p mod m == 1`.
    Despawner(u8),
    /// `Query<&P>` and `Publish<M>`, in slices: sends every p.
    Publisher,
    /// `Query<(&mut V, Target<P>)>`: v = the target's p, or -1 when the
    /// target is gone.
    Follower,
    /// `Query<Entity, Changed<P>>` (or `Added<P>`): logs what it sees.
    Observer { added: bool },
    /// Issue 20: a pinned system adding k to the non-`Send` counter (`pinned.rs`).
    Pinned(i8),
    /// Issue 36: writing some of the rows handed out, and `Ref` observers
    /// (`change.rs`).
    Change(change::ChangeSys),
    /// Issue 39: `Local<i64>` counting its runs, and `Publish<M>`: sends
    /// `COUNTED` plus the count (its local is opted into snapshots).
    Counter,
}

/// One public operation.
#[derive(Debug, Clone)]
enum Op {
    Spawn {
        p: Option<i8>,
        v: Option<i8>,
    },
    SpawnBatch {
        n: u8,
        p: i8,
    },
    Despawn(u8),
    InsertV(u8, i8),
    RemoveV(u8),
    Freeze(u8),
    SetP(u8, i8),
    /// A `ComponentRef<P>` to a main-world entity.
    MakeRef(u8),
    /// A `ComponentRef<P>` to another world's entity.
    MakeForeignRef(u8),
    /// Reads a reference in the main world.
    ReadRef(u8),
    /// Stores a reference as a component of an entity (for `Target`).
    Link(u8, u8),
    /// Spawns in the other world (a `P` or a `Name`), making ids collide.
    SpawnOther {
        p: Option<i8>,
    },
    FreezeOther(u8),
    /// Accessors of the main world called with another world's entity.
    ForeignEntity(u8),
    AddSystem(Sys),
    RemoveSystem(u8),
    Executor(u8),
    Send(i8),
    /// Moves the change ticks on by 1..=3 check intervals (a long run),
    /// then runs an iteration.
    AdvanceTicks(u8),
    /// Spawns an entity whose component panics when dropped, then
    /// despawns it: the panic reaches the caller and the store stays whole.
    DespawnPanicking(i8),
    /// Runs the other world, which shares the pool (its one system bumps
    /// every `P` by one).
    RunOther,
    /// Starts a step script between iterations.
    StartScript {
        left: u8,
        wait_ms: u8,
    },
    CancelScript(u8),
    /// Saves the scripts and the world's clocks.
    Save,
    /// Loads the last save (into the same world).
    Load,
    /// Runs an iteration with a node (in `PostUpdate`, after every other)
    /// that spawns and sends per row, then panics in its body or in a
    /// slice: it contributes nothing; the rest of the iteration lands.
    InjectPanic {
        in_slice: bool,
    },
    /// A sender whose world was dropped refuses, handing the message back.
    SendAfterDrop(i8),
    /// `World::update` by this many milliseconds (`u32::MAX`: `Duration::MAX`).
    Update(u32),
    Run,
    // --- issue 23: the API's snags ---
    /// `Query::get` on one entity, with data `(&P, &V)` and with a filter
    /// `Without<V>`: the item, or the reason there is none.
    QueryGet(u8),
    /// Runs an iteration with a node (registered last) that spawns a frozen
    /// leader `(P, V)` and a follower holding a `ComponentRef<P>` aimed at
    /// it through the leader's `Spawned` handle; the node is removed again.
    SpawnPair(i8),
    /// The spike watch's operations (issue 20).
    Spike(spikes::SpikeOp),
    /// Issue 20: inserts or removes the optional service (`optional.rs`).
    Optional(optional::OptOp),
    /// Issue 20: the non-`Send` counter replaced, or an unpinned node naming it refused.
    Pinned(pinned::PinnedOp),
    /// Two systems in one `add_chain`, the second after the first.
    Chain(Sys, Sys),
    /// Issue 22: a `sluice::model` run outside loom (`model_check.rs`).
    ModelCheck(model_check::ModelOp),
    /// Issue 21: timing on or off, an iteration, its `run_stats` (`run_stats.rs`).
    RunStats {
        timing: bool,
    },
    /// Issue 36: `get_many_mut`, `Single`, `Populated` (`queries.rs`).
    Queries(queries::QueryOp),
    /// Issue 36: `Local`, custom commands, combinators (`systems.rs`).
    Systems(systems::SystemsOp),
    /// Issue 36: `insert_if_new`, partial removal, derived bundles,
    /// required components, disabled entities (`entities.rs`).
    Entities(entities::EntityOp),
    /// Issue 36: group conditions, silenced ambiguities (`organising.rs`).
    Organising(organising::OrganisingOp),
    /// Issue 36's messages: `write_batch`, `par_read`, `clear`, `drain`.
    Messages(messages::MessagesOp),
    /// Issue 36's one-shot systems.
    OneShot(one_shot::OneShotOp),
    /// Issue 37: a hierarchy scenario on entities of its own
    /// (`api_model/hierarchy.rs`).
    Hierarchy(Vec<hierarchy::HierarchyStep>),
    /// Issue 36: sparse-set storage chosen, used and queried (`sparse.rs`).
    Sparse(sparse::SparseOp),
    /// Issue 39: snapshots and restores (`api_model/snapshots.rs`).
    Snapshot(snapshots::SnapshotOp),
    /// Issue 39: saves written, read back and loaded (`api_model/saves.rs`).
    SaveFile(saves::SaveOp),
    /// Issue 37's hooks and observers (`observers.rs`).
    Observe(observers::ObserveOp),
    /// Issue 37's plugins and states (`platform.rs`).
    Platform(platform::PlatformOp),
}

fn sys() -> impl Strategy<Value = Sys> {
    prop_oneof![
        (-3i8..4).prop_map(Sys::Bump),
        par_init::sys().prop_map(|(k, rows)| Sys::InitBump(k, rows)),
        Just(Sys::Copy),
        (2u8..5).prop_map(Sys::Spawner),
        (2u8..5).prop_map(Sys::Despawner),
        Just(Sys::Publisher),
        Just(Sys::Counter),
        Just(Sys::Follower),
        any::<bool>().prop_map(|added| Sys::Observer { added }),
        change::sys().prop_map(Sys::Change),
        // --- issue 20: appending ---
        (-3i8..4).prop_map(Sys::Appender),
        Just(Sys::Instanced),
        (any::<bool>(), any::<bool>())
            .prop_map(|(ordered, pinned)| Sys::TwoPoint { ordered, pinned }),
        (-3i8..4).prop_map(Sys::NestedAppender),
        (-3i8..4).prop_map(Sys::ThreadedAppender),
        optional::sys().prop_map(Sys::Optional),
        (-3i8..4).prop_map(Sys::Pinned),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let small = -20i8..20;
    prop_oneof![
        4 => (proptest::option::of(small.clone()), proptest::option::of(small.clone()))
            .prop_map(|(p, v)| Op::Spawn { p, v }),
        1 => (0u8..6, small.clone()).prop_map(|(n, p)| Op::SpawnBatch { n, p }),
        2 => any::<u8>().prop_map(Op::Despawn),
        2 => (any::<u8>(), small.clone()).prop_map(|(e, v)| Op::InsertV(e, v)),
        1 => any::<u8>().prop_map(Op::RemoveV),
        2 => any::<u8>().prop_map(Op::Freeze),
        1 => (any::<u8>(), small.clone()).prop_map(|(e, p)| Op::SetP(e, p)),
        2 => any::<u8>().prop_map(Op::MakeRef),
        1 => any::<u8>().prop_map(Op::MakeForeignRef),
        2 => any::<u8>().prop_map(Op::ReadRef),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(e, r)| Op::Link(e, r)),
        1 => proptest::option::of(small.clone()).prop_map(|p| Op::SpawnOther { p }),
        1 => any::<u8>().prop_map(Op::FreezeOther),
        1 => any::<u8>().prop_map(Op::ForeignEntity),
        2 => sys().prop_map(Op::AddSystem),
        1 => any::<u8>().prop_map(Op::RemoveSystem),
        1 => any::<u8>().prop_map(Op::Executor),
        1 => small.clone().prop_map(Op::Send),
        1 => (1u8..4).prop_map(Op::AdvanceTicks),
        1 => small.clone().prop_map(Op::DespawnPanicking),
        1 => Just(Op::RunOther),
        2 => (0u8..4, prop_oneof![Just(0u8), 1u8..40]).prop_map(|(left, wait_ms)| Op::StartScript { left, wait_ms }),
        1 => any::<u8>().prop_map(Op::CancelScript),
        1 => any::<bool>().prop_map(|in_slice| Op::InjectPanic { in_slice }),
        1 => small.prop_map(Op::SendAfterDrop),
        1 => Just(Op::Save),
        1 => Just(Op::Load),
        3 => prop_oneof![8 => 0u32..50, 1 => Just(u32::MAX)].prop_map(Op::Update),
        4 => Just(Op::Run),
        // --- issue 23 ---
        2 => any::<u8>().prop_map(Op::QueryGet),
        1 => (-20i8..20).prop_map(Op::SpawnPair),
        5 => spikes::op().prop_map(Op::Spike),
        2 => optional::op().prop_map(Op::Optional),
        1 => pinned::op().prop_map(Op::Pinned),
        1 => snags::chain_op(),
        // --- issue 22 ---
        1 => model_check::op(),
        // --- issue 21 ---
        1 => run_stats::op(),
        // --- issue 36 ---
        2 => queries::op().prop_map(Op::Queries),
        1 => systems::op(),
        2 => entities::op().prop_map(Op::Entities),
        1 => organising::op(),
        1 => messages::op(),
        1 => one_shot::op(),
        2 => sparse::op().prop_map(Op::Sparse),
        4 => snapshots::op().prop_map(Op::Snapshot),
        2 => saves::op().prop_map(Op::SaveFile),
        // --- issue 37 ---
        2 => hierarchy::op(),
        2 => observers::op(),
        1 => platform::op(),
    ]
}

// ---------------------------------------------------------------------------
// The reference model: plain data and the documented rules.

#[derive(Debug, Clone, Default)]
struct Ent {
    alive: bool,
    frozen: bool,
    p: Option<i64>,
    v: Option<i64>,
    /// The reference stored on it (an index into `Model::refs`).
    link: Option<usize>,
    /// When its `P` was added and last written (model stamps, from 1).
    p_added: u64,
    p_changed: u64,
}

/// A reference: to which entity of which world.
#[derive(Debug, Clone, Copy)]
struct Ref {
    target: usize,
    foreign: bool,
}

#[derive(Debug, Default)]
struct Model {
    ents: Vec<Ent>,
    /// The other world's entities: `(alive, frozen, p)`.
    other: Vec<(bool, Option<i64>)>,
    refs: Vec<Ref>,
    /// The registered systems with their serials, in registration order.
    systems: Vec<(Sys, usize)>,
    /// Each observer's cursor: the stamp of its last run (0: never ran).
    cursors: std::collections::HashMap<usize, u64>,
    /// The last stamp handed out: every write and every system run takes a
    /// fresh one, as the documentation's change ticks do.
    stamp: u64,
    observed: Vec<(usize, Vec<usize>)>,
    /// Sent by writers in the last iteration: read in the next.
    sent_by_nodes: Vec<i64>,
    /// Sent by the sender since the last boundary: drained at the next,
    /// read in the iteration after it.
    sent_by_sender: Vec<i64>,
    /// Drained from the sender at the last boundary: read in the next.
    drained: Vec<i64>,
    read: Vec<Vec<i64>>,
    scripts: ModelScripts,
    /// The last save: the scripts and the clock.
    save: Option<(ModelScripts, Duration)>,
    /// Simulation time (`SimClock::now`), saturating.
    now: Duration,
    /// Every intent collected, in order.
    intents: Vec<(usize, (u8, u8))>,
    /// How many `SpawnPair`s ran: each pair's `V`s are unique.
    pairs: i64,
    // --- issue 20: appending (begin) ---
    /// Appended since the last commit: `((run, the appender's position in
    /// plan order), its serial, part, value)`, the part 1 for what a
    /// thread the appender started pushed (after its own thread's, part 0).
    appended: Vec<Appended>,
    /// What each commit drained.
    committed: Vec<Vec<Appended>>,
    /// Iterations run, numbering the runs of `appended`.
    runs: u64,
    // --- issue 20: appending (end) ---
    spikes: spikes::SpikeModel,
    optional: optional::OptModel,
    /// Issue 36: the sparse-storage component (`sparse.rs`).
    sparse: sparse::SparseModel,
    /// Issue 20: the non-`Send` counter.
    pinned: pinned::PinnedModel,
    /// Issue 23: the runs of the `par_for_each_init` systems.
    par_init: par_init::InitModel,
    /// `systems::Tally`'s value, once `init_service` made it.
    tally: Option<i64>,
    /// Issue 36: the required-component graph.
    entities: entities::EntityModel,
    /// Issue 39: the model as the last snapshot kept it.
    snapshot: Option<snapshots::SavedModel>,
    /// Issue 39: each `Sys::Counter`'s local (by serial; absent: never ran,
    /// `Default` 0).
    locals: std::collections::HashMap<usize, i64>,
    /// Issue 39: the model as the kept save held it (`saves.rs`).
    kept_save: Option<snapshots::SavedModel>,
}

/// One appended value in the model: `((run, the appender's position in
/// plan order), its serial, part, value)`.
type Appended = ((u64, usize), usize, u8, i64);

/// The live scripts, in start order: `(model id, state, due)`; `due` is
/// `None` for the next gather (new, or waiting a tick).
#[derive(Debug, Clone, Default)]
struct ModelScripts(Vec<(usize, Ticker, Option<Duration>)>);

impl ModelScripts {
    /// One gather at `now`: every due script steps, in start order.
    fn gather(&mut self, now: Duration, intents: &mut Vec<(usize, (u8, u8))>) {
        self.0.retain_mut(|(id, ticker, due)| {
            if due.is_some_and(|at| at > now) {
                return true;
            }
            intents.push((*id, (ticker.tag, ticker.left)));
            if ticker.left == 0 {
                return false;
            }
            ticker.left -= 1;
            *due = (ticker.wait_ms > 0)
                .then(|| now.saturating_add(Duration::from_millis(u64::from(ticker.wait_ms))));
            true
        });
    }
}

impl Model {
    /// The systems in plan order: registration order (no system here
    /// orders itself explicitly but a chain's second, right after its
    /// first), but for ordered two-point nodes, whose order (their serial)
    /// puts them after every unordered one, by serial.
    fn plan_order(&self) -> Vec<(Sys, usize)> {
        let mut systems = self.systems.clone();
        systems.sort_by_key(|&(system, serial)| match system {
            Sys::TwoPoint { ordered: true, .. } => (serial, serial),
            _ => (0, serial),
        });
        systems
    }

    fn fresh(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }

    fn pick(&self, at: u8) -> Option<usize> {
        (!self.ents.is_empty()).then(|| at as usize % self.ents.len())
    }

    /// The value a reference reads in the main world.
    fn read_ref(&self, r: Ref) -> Option<i64> {
        if r.foreign {
            return None;
        }
        let target = &self.ents[r.target];
        target.alive.then_some(target.p).flatten()
    }

    /// Runs one iteration: the systems in registration order (serial
    /// equivalence), then the boundary. Returns how many commands were
    /// refused.
    fn run(&mut self) -> usize {
        // The reader, registered first, reads before every writer.
        let mut read: Vec<i64> = std::mem::take(&mut self.sent_by_nodes);
        read.append(&mut self.drained);
        read.sort_unstable();
        self.read.push(read);
        // The gather and collect systems, registered second and third, run
        // before the user's (none of which touches the scripts).
        let now = self.now;
        self.scripts.gather(now, &mut self.intents);
        let mut spawns: Vec<i64> = Vec::new();
        let mut despawns: Vec<usize> = Vec::new();
        for (position, (system, serial)) in self.plan_order().into_iter().enumerate() {
            let at = (self.runs, position);
            let tick = self.fresh();
            match system {
                Sys::Optional(system) => self.optional.run(system, serial, &self.ents),
                Sys::Bump(k) | Sys::InitBump(k, _) => {
                    let mut rows = 0;
                    for e in self.ents.iter_mut().filter(|e| e.alive) {
                        if let Some(p) = &mut e.p {
                            *p = p.wrapping_add(i64::from(k));
                            e.p_changed = tick;
                            rows += 1;
                        }
                    }
                    if matches!(system, Sys::InitBump(..)) {
                        self.par_init.ran(serial, rows);
                    }
                }
                Sys::Change(system) => change::run(
                    system,
                    serial,
                    tick,
                    &mut self.ents,
                    &mut self.cursors,
                    &mut self.observed,
                ),
                Sys::Observer { added } => {
                    let last = self.cursors.get(&serial).copied().unwrap_or(0);
                    let seen: Vec<usize> = (0..self.ents.len())
                        .filter(|&i| {
                            let e = &self.ents[i];
                            let at = if added { e.p_added } else { e.p_changed };
                            e.alive && e.p.is_some() && at > last
                        })
                        .collect();
                    self.observed.push((serial, seen));
                    self.cursors.insert(serial, tick);
                }
                Sys::Copy => {
                    for e in self.ents.iter_mut().filter(|e| e.alive) {
                        if let (Some(v), Some(p)) = (&mut e.v, e.p) {
                            *v = p;
                        }
                    }
                }
                Sys::Spawner(m) => {
                    let m = i64::from(m);
                    for e in self.ents.iter().filter(|e| e.alive) {
                        if let Some(p) = e.p.filter(|p| p.rem_euclid(m) == 0) {
                            spawns.push(p);
                        }
                    }
                }
                Sys::Despawner(m) => {
                    let m = i64::from(m);
                    for (i, e) in self.ents.iter().enumerate().filter(|(_, e)| e.alive) {
                        if e.p.is_some_and(|p| p.rem_euclid(m) == 1) {
                            despawns.push(i);
                        }
                    }
                }
                Sys::Publisher => {
                    for e in self.ents.iter().filter(|e| e.alive) {
                        self.sent_by_nodes.extend(e.p);
                    }
                }
                Sys::Counter => {
                    let runs = self.locals.entry(serial).or_insert(0);
                    *runs += 1;
                    self.sent_by_nodes.push(COUNTED + *runs);
                }
                // --- issue 20: appending (begin) ---
                Sys::Appender(k) => {
                    for e in self.ents.iter().filter(|e| e.alive) {
                        if let Some(p) = e.p {
                            self.appended.push((at, serial, 0, p + i64::from(k)));
                        }
                    }
                }
                Sys::Instanced | Sys::TwoPoint { .. } => {
                    let rows = self
                        .ents
                        .iter()
                        .filter(|e| e.alive && e.p.is_some())
                        .count();
                    self.appended.push((at, serial, 0, rows as i64));
                }
                Sys::NestedAppender(k) => {
                    for e in self.ents.iter().filter(|e| e.alive) {
                        if let Some(p) = e.p {
                            let base = nested_base(p, k);
                            for i in 0..3 {
                                self.appended.push((at, serial, 0, base + i));
                            }
                        }
                    }
                }
                Sys::ThreadedAppender(k) => {
                    for part in [0, 1] {
                        for e in self.ents.iter().filter(|e| e.alive) {
                            if let Some(p) = e.p {
                                let value = threaded_value(p, k, part);
                                self.appended.push((at, serial, part, value));
                            }
                        }
                    }
                }
                // --- issue 20: appending (end) ---
                Sys::Pinned(k) => self.pinned.run(k),
                Sys::Follower => {
                    for i in 0..self.ents.len() {
                        let e = &self.ents[i];
                        if let (true, Some(_), Some(link)) = (e.alive, e.v, e.link) {
                            let seen = self.read_ref(self.refs[link]).unwrap_or(-1);
                            self.ents[i].v = Some(seen);
                        }
                    }
                }
            }
        }
        // --- issue 20: the commits, after every appender: the first takes
        // everything, the others nothing.
        for (system, _) in self.plan_order() {
            if matches!(system, Sys::Instanced | Sys::TwoPoint { .. }) {
                self.committed.push(std::mem::take(&mut self.appended));
            }
        }
        self.runs += 1;
        // The boundary: commands in plan order. Spawns and despawns of one
        // iteration touch different entities (the spawned are new), so
        // only the despawns' own order matters: a second despawn of one
        // entity is refused.
        self.drained = std::mem::take(&mut self.sent_by_sender);
        let mut refused = 0;
        for target in despawns {
            if self.ents[target].alive {
                self.ents[target].alive = false;
            } else {
                refused += 1;
            }
        }
        for v in spawns {
            self.ents.push(Ent {
                alive: true,
                v: Some(v),
                ..Ent::default()
            });
        }
        refused
    }
}

// ---------------------------------------------------------------------------
// The real side.

struct Real {
    world: World,
    other: World,
    /// Model entity index -> the world's handle.
    ents: Vec<Entity>,
    other_ents: Vec<Entity>,
    refs: Vec<ComponentRef<P>>,
    /// The registered systems, in the model's order.
    systems: Vec<NodeIndex>,
    sender: MessageSender<M>,
    /// Model script id -> the store's id.
    script_ids: Vec<ScriptId>,
    /// Ids a script had before a load or a restore gave it another (the
    /// intent log still names it by them), with its model id.
    old_script_ids: Vec<(ScriptId, usize)>,
    /// The store's `ScriptSnapshot`, the clocks, and the ids then.
    save: Option<(ScriptSnapshot<Director>, ClockSnapshot, Vec<ScriptId>)>,
    pool: ThreadPool,
    spikes: spikes::SpikeReal,
    optional: optional::OptReal,
    /// Issue 39: the last snapshot, with the handles there were then.
    snapshot: Option<snapshots::SavedReal>,
    /// Issue 39: the kept save's bytes, with the entity and reference
    /// handles there were then.
    kept_save: Option<saves::KeptSave>,
}

impl Real {
    /// The model's script `index` now has the id `id` in the store (a
    /// load or a restore gave it): its old id is kept for the log.
    fn rename_script(&mut self, index: usize, id: ScriptId) {
        let old = self.script_ids[index];
        if old != id {
            self.old_script_ids.push((old, index));
            self.script_ids[index] = id;
        }
    }

    /// The model's scripts `0..ids.len()` have the ids `ids` again (a
    /// restore or a load of a save from then gave them back); with
    /// `forget_since`, the handles made since are forgotten, as the
    /// entities' are. Every id replaced is kept for the log.
    fn reset_script_ids(&mut self, ids: &[ScriptId], forget_since: bool) {
        for (index, &old) in self.script_ids.iter().enumerate() {
            let replaced = match ids.get(index) {
                Some(&id) => id != old,
                None => forget_since,
            };
            if replaced {
                self.old_script_ids.push((old, index));
            }
        }
        if forget_since {
            self.script_ids.truncate(ids.len());
        }
        for (index, &id) in ids.iter().enumerate() {
            match self.script_ids.get_mut(index) {
                Some(known) => *known = id,
                None => self.script_ids.push(id),
            }
        }
    }

    /// After a load from disk: the store's live scripts, by id (the load
    /// placed them in their saved order), are the model's, in start order.
    fn adopt_loaded_scripts(&mut self, model: &Model) -> Result<(), TestCaseError> {
        let mut live: Vec<ScriptId> = self
            .world
            .get::<Scripts<Director>>()
            .expect("the store")
            .iter()
            .map(|info| info.id)
            .collect();
        live.sort_unstable();
        check(live.len() == model.scripts.0.len(), || {
            format!(
                "{} scripts loaded, the model has {}",
                live.len(),
                model.scripts.0.len()
            )
        })?;
        for ((index, _, _), id) in model.scripts.0.iter().zip(live) {
            self.rename_script(*index, id);
        }
        Ok(())
    }

    fn new(pool: &ThreadPool) -> Self {
        let mut world = World::with_pool(pool.clone());
        let mut other = World::with_pool(pool.clone());
        other.add_system(
            NodeBuilder::new("other bump").system(|mut q: Query<'_, &mut P>| {
                q.par_for_each(|mut p| p.0 = p.0.wrapping_add(1));
            }),
        );
        world.insert(ReadLog::default());
        world.insert(ChangeLog::default());
        world.insert(InstanceLog::default());
        world.insert(PinnedCommits::default());
        optional::install(&mut world);
        snapshots::install(&mut world);
        saves::install(&mut world);
        world.add_system(NodeBuilder::new("reader").system(
            |mut messages: Subscribe<'_, M>, log: &mut ReadLog| {
                let mut read: Vec<i64> = messages.unread().map(|m| m.0).collect();
                read.sort_unstable();
                log.0.push(read);
            },
        ));
        world.insert(SimClock::new());
        pinned::install(&mut world);
        par_init::install(&mut world);
        // Opted into snapshots: `Take` and `Restore` cover the scripts.
        world.insert_scripts(Scripts::<Director>::new());
        world.insert(ScriptLog::default());
        world.add_system(NodeBuilder::new("gather").system(
            |scripts: &mut Scripts<Director>, clock: &SimClock| scripts.gather(clock, &()),
        ));
        world.add_system(NodeBuilder::new("collect").system(
            |scripts: &mut Scripts<Director>, log: &mut ScriptLog| {
                log.0.extend(scripts.drain_intents());
            },
        ));
        let sender = world.sender::<M>();
        Self {
            world,
            other,
            ents: Vec::new(),
            other_ents: Vec::new(),
            refs: Vec::new(),
            systems: Vec::new(),
            sender,
            script_ids: Vec::new(),
            old_script_ids: Vec::new(),
            save: None,
            pool: pool.clone(),
            spikes: spikes::SpikeReal::default(),
            optional: optional::OptReal::default(),
            snapshot: None,
            kept_save: None,
        }
    }

    fn add_system(&mut self, system: Sys, serial: usize) -> NodeIndex {
        let spec = self.system_spec(system, serial);
        self.world.add_system(spec)
    }

    fn system_spec(&mut self, system: Sys, serial: usize) -> sluice::NodeSpec {
        let node = NodeBuilder::new(format!("{system:?}#{serial}"));
        match system {
            Sys::Optional(system) => self.optional.spec(system, serial, node),
            Sys::Bump(k) => node.system(move |mut q: Query<'_, &mut P>| {
                q.par_for_each(|mut p| p.0 = p.0.wrapping_add(i64::from(k)));
            }),
            Sys::Copy => node.system(|mut q: Query<'_, (&mut V, &P)>| {
                q.for_each(|(mut v, p)| v.0 = p.0);
            }),
            Sys::Spawner(m) => node.system(move |mut q: Query<'_, &P>, commands: Commands<'_>| {
                let m = i64::from(m);
                q.par_for_each_sliced(1, |p| {
                    if p.0.rem_euclid(m) == 0 {
                        commands.spawn((V(p.0),));
                    }
                });
            }),
            Sys::Despawner(m) => node.system(
                move |mut q: Query<'_, (Entity, &P)>, commands: Commands<'_>| {
                    let m = i64::from(m);
                    q.par_for_each_sliced(1, |(e, p)| {
                        if p.0.rem_euclid(m) == 1 {
                            commands.despawn(e);
                        }
                    });
                },
            ),
            Sys::Publisher => node.system(|mut q: Query<'_, &P>, out: Publish<'_, M>| {
                q.par_for_each_sliced(2, |p| out.send(M(p.0)));
            }),
            Sys::Counter => node.system(|mut runs: Local<'_, i64>, out: Publish<'_, M>| {
                *runs += 1;
                out.send(M(COUNTED + *runs));
            }),
            // --- issue 20: appending (begin) ---
            Sys::Appender(k) => node.system(move |mut q: Query<'_, &P>, out: Append<'_, Inst>| {
                q.par_for_each_sliced(1, |p| out.push(Inst(serial, p.0 + i64::from(k))));
            }),
            Sys::NestedAppender(k) => {
                node.system(move |mut q: Query<'_, &P>, out: Append<'_, Inst>| {
                    q.par_for_each_sliced(1, |p| {
                        let base = nested_base(p.0, k);
                        sluice::exec::for_each_slice(3, &|slices| {
                            for i in slices {
                                out.push(Inst(serial, base + i as i64));
                            }
                        });
                    });
                })
            }
            Sys::ThreadedAppender(k) => {
                node.system(move |q: Query<'_, &P>, out: Append<'_, Inst>| {
                    let rows: Vec<i64> = q.iter().map(|p| p.0).collect();
                    for &p in &rows {
                        out.push(Inst(serial, threaded_value(p, k, 0)));
                    }
                    std::thread::scope(|scope| {
                        scope.spawn(|| {
                            for &p in &rows {
                                out.push(Inst(serial, threaded_value(p, k, 1)));
                            }
                        });
                    });
                })
            }
            Sys::TwoPoint { ordered, pinned } => {
                let node = if ordered {
                    node.order(i32::try_from(serial).expect("few systems"))
                } else {
                    node
                };
                let node = if pinned { node.pinned() } else { node };
                node.system(
                    move |q: Query<'_, &P>, out: Append<'_, Inst>, threads: &mut PinnedCommits| {
                        out.push(Inst(serial, q.iter().count() as i64));
                        if pinned {
                            threads.0.push(std::thread::current().id());
                        }
                    },
                )
                .commit(
                    move |buffer: &mut AppendBuffer<Inst>,
                          log: &mut InstanceLog,
                          threads: &mut PinnedCommits| {
                        log.0.push(buffer.drain().map(|i| (i.0, i.1)).collect());
                        if pinned {
                            threads.0.push(std::thread::current().id());
                        }
                    },
                )
            }
            Sys::Instanced => node
                .system(move |q: Query<'_, &P>, out: Append<'_, Inst>| {
                    out.push(Inst(serial, q.iter().count() as i64));
                })
                .commit(|buffer: &mut AppendBuffer<Inst>, log: &mut InstanceLog| {
                    log.0.push(buffer.drain().map(|i| (i.0, i.1)).collect());
                }),
            // --- issue 20: appending (end) ---
            Sys::Pinned(k) => pinned::system(node, k),
            Sys::Change(system) => change::spec(system, serial, node),
            Sys::InitBump(k, rows) => par_init::system(node, serial, k, rows),
            Sys::Follower => node.system(|mut q: Query<'_, (&mut V, Target<P>)>| {
                q.for_each(|(mut v, target)| v.0 = target.map_or(-1, |p| p.0));
            }),
            Sys::Observer { added: false } => node.system(
                move |q: Query<'_, Entity, sluice::Changed<P>>, log: &mut ChangeLog| {
                    let mut seen: Vec<Entity> = q.iter().collect();
                    seen.sort_unstable();
                    log.0.push((serial, seen));
                },
            ),
            Sys::Observer { added: true } => node.system(
                move |q: Query<'_, Entity, sluice::Added<P>>, log: &mut ChangeLog| {
                    let mut seen: Vec<Entity> = q.iter().collect();
                    seen.sort_unstable();
                    log.0.push((serial, seen));
                },
            ),
        }
    }

    /// Entities of the world the model does not know yet (spawned by
    /// commands), matched to the model's new ones by content: they hold
    /// only a `V`, so equal values are interchangeable.
    fn adopt_spawned(&mut self, model: &Model) {
        let known: std::collections::HashSet<Entity> = self.ents.iter().copied().collect();
        let mut fresh: Vec<(i64, Entity)> = self
            .world
            .query::<(Entity, &V)>()
            .iter()
            .filter(|(e, _)| !known.contains(e))
            .map(|(e, v)| (v.0, e))
            .collect();
        fresh.sort_unstable_by_key(|&(v, _)| v);
        let mut expected: Vec<(i64, usize)> = model.ents[self.ents.len()..]
            .iter()
            .enumerate()
            .map(|(i, e)| {
                (
                    e.v.expect("a spawned entity holds a V"),
                    self.ents.len() + i,
                )
            })
            .collect();
        expected.sort_by_key(|&(v, _)| v);
        assert_eq!(
            fresh.iter().map(|f| f.0).collect::<Vec<_>>(),
            expected.iter().map(|e| e.0).collect::<Vec<_>>(),
            "the entities spawned by commands"
        );
        let mut handles = vec![None; expected.len()];
        for ((_, entity), (_, index)) in fresh.into_iter().zip(expected) {
            handles[index - self.ents.len()] = Some(entity);
        }
        self.ents
            .extend(handles.into_iter().map(|h| h.expect("matched")));
    }
}

// ---------------------------------------------------------------------------
// Applying one operation to both, and comparing.

fn check(condition: bool, what: impl FnOnce() -> String) -> Result<(), TestCaseError> {
    if condition {
        Ok(())
    } else {
        Err(TestCaseError::fail(what()))
    }
}

/// Each spawned entity's handle to its model index, checking that handles
/// are never reused: every entity the run spawned has its own.
fn handle_index(real: &Real) -> Result<std::collections::HashMap<Entity, usize>, TestCaseError> {
    let index: std::collections::HashMap<Entity, usize> =
        real.ents.iter().enumerate().map(|(i, e)| (*e, i)).collect();
    check(index.len() == real.ents.len(), || {
        format!(
            "{} handles for {} spawned entities",
            index.len(),
            real.ents.len()
        )
    })?;
    Ok(index)
}

/// Compares every entity's observable state, and the references.
fn compare_all(real: &mut Real, model: &Model) -> Result<(), TestCaseError> {
    let world = &real.world;
    for (i, (e, handle)) in model.ents.iter().zip(&real.ents).enumerate() {
        let view = world.entity(*handle);
        check(view.is_some() == e.alive, || {
            format!("entity #{i}: alive {} in the model", e.alive)
        })?;
        let Some(view) = view else { continue };
        let p = view.get::<P>().map(|p| p.0);
        let v = view.get::<V>().map(|v| v.0);
        check((p, v) == (e.p, e.v), || {
            format!(
                "entity #{i}: (p, v) {:?} in the world, {:?} in the model",
                (p, v),
                (e.p, e.v)
            )
        })?;
        check(view.is_frozen() == e.frozen, || {
            format!("entity #{i}: frozen")
        })?;
    }
    let alive = model.ents.iter().filter(|e| e.alive).count();
    let counted = real.world.query::<Entity>().iter().count();
    check(counted == alive, || {
        format!("{counted} entities in the world, {alive} in the model")
    })?;
    // A query made between iterations has seen nothing: every row with a
    // `P` is added and changed for it, however many ticks have passed.
    let with_p = model
        .ents
        .iter()
        .filter(|e| e.alive && e.p.is_some())
        .count();
    let changed = real
        .world
        .query_filtered::<Entity, sluice::Changed<P>>()
        .iter()
        .count();
    let added = real
        .world
        .query_filtered::<Entity, sluice::Added<P>>()
        .iter()
        .count();
    check((changed, added) == (with_p, with_p), || {
        format!("a fresh query sees {changed} changed and {added} added of {with_p} rows with P")
    })?;
    // `Target` between iterations: every linked entity reads its target.
    let index = handle_index(real)?;
    for (entity, target) in real.world.query::<(Entity, Target<P>)>().iter() {
        let i = index[&entity];
        let link = model.ents[i]
            .link
            .expect("only linked entities match Target");
        let expected = model.read_ref(model.refs[link]);
        check(target.map(|p| p.0) == expected, || {
            format!(
                "Target<P> of #{i} reads {:?}, the model {expected:?}",
                target.map(|p| p.0)
            )
        })?;
    }
    let linked = model
        .ents
        .iter()
        .filter(|e| e.alive && e.link.is_some())
        .count();
    let matched = real.world.query::<Target<P>>().iter().count();
    check(linked == matched, || {
        format!("{matched} rows match Target<P>, {linked} are linked")
    })?;
    for (i, (r, handle)) in model.refs.iter().zip(&real.refs).enumerate() {
        let got = handle.get(&real.world).map(|p| p.0);
        check(got == model.read_ref(*r), || {
            format!(
                "reference #{i} ({r:?}) reads {got:?}, the model {:?}",
                model.read_ref(*r)
            )
        })?;
    }
    Ok(())
}

fn apply(
    op: &Op,
    real: &mut Real,
    model: &mut Model,
    serial: &mut usize,
) -> Result<(), TestCaseError> {
    match *op {
        Op::Spawn { p, v } => {
            let (p, v) = (p.map(i64::from), v.map(i64::from));
            let entity = match (p, v) {
                (Some(p), Some(v)) => real.world.spawn((P(p), V(v))),
                (Some(p), None) => real.world.spawn((P(p),)),
                (None, Some(v)) => real.world.spawn((V(v),)),
                (None, None) => real.world.spawn(()),
            };
            real.ents.push(entity);
            let stamp = model.fresh();
            model.ents.push(Ent {
                alive: true,
                p,
                v,
                p_added: stamp,
                p_changed: stamp,
                ..Ent::default()
            });
        }
        Op::SpawnBatch { n, p } => {
            let p = i64::from(p);
            let spawned = real
                .world
                .spawn_batch((0..n).map(|i| (P(p + i64::from(i)),)));
            check(spawned.len() == n as usize, || "spawn_batch's count".into())?;
            real.ents.extend(spawned);
            for i in 0..n {
                let stamp = model.fresh();
                model.ents.push(Ent {
                    alive: true,
                    p: Some(p + i64::from(i)),
                    p_added: stamp,
                    p_changed: stamp,
                    ..Ent::default()
                });
            }
        }
        Op::Despawn(at) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let result = real.world.despawn(real.ents[i]);
            check(result.is_ok() == model.ents[i].alive, || {
                format!("despawn #{i}: {result:?}")
            })?;
            model.ents[i].alive = false;
        }
        Op::InsertV(at, v) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let v = i64::from(v);
            let result = real
                .world
                .entity_mut(real.ents[i])
                .map(|mut e| e.insert((V(v),)).map(drop));
            let e = &mut model.ents[i];
            let expected = match (e.alive, e.frozen) {
                (false, _) => "gone",
                (true, true) => "frozen",
                (true, false) => "ok",
            };
            let got = match &result {
                None => "gone",
                Some(Err(sluice::EntityError::Frozen { .. })) => "frozen",
                Some(Ok(())) => "ok",
                Some(Err(other)) => return Err(TestCaseError::fail(format!("insert: {other}"))),
            };
            check(got == expected, || {
                format!("insert V on #{i}: {got}, model {expected}")
            })?;
            if expected == "ok" {
                e.v = Some(v);
            }
        }
        Op::RemoveV(at) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let result = real
                .world
                .entity_mut(real.ents[i])
                .map(|mut e| e.remove::<(V,)>().map(|(v,)| v.0));
            let e = &mut model.ents[i];
            let expected = match (e.alive, e.frozen, e.v) {
                (false, _, _) => None,
                (true, true, _) => Some(Err("frozen")),
                (true, false, None) => Some(Err("missing")),
                (true, false, Some(v)) => Some(Ok(v)),
            };
            let got = result.map(|r| {
                r.map_err(|error| match error {
                    sluice::EntityError::Frozen { .. } => "frozen",
                    sluice::EntityError::MissingComponent { .. } => "missing",
                    _ => "other",
                })
            });
            check(got == expected, || {
                format!("remove V on #{i}: {got:?}, model {expected:?}")
            })?;
            if let Some(Ok(_)) = expected {
                e.v = None;
            }
        }
        Op::Freeze(at) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let result = real.world.freeze(real.ents[i]);
            check(result.is_ok() == model.ents[i].alive, || {
                format!("freeze #{i}")
            })?;
            if model.ents[i].alive {
                model.ents[i].frozen = true;
            }
        }
        // --- issue 23 ---
        Op::SpawnPair(p) => {
            let (p, n) = (i64::from(p), model.pairs);
            model.pairs += 1;
            let (leader_v, follower_v) = (PAIR_LEADER + n, PAIR_FOLLOWER + n);
            let node = real
                .world
                .add_system(NodeBuilder::new(format!("pair#{n}")).system(
                    move |commands: Commands<'_>| {
                        let leader = commands.spawn((P(p), V(leader_v)));
                        commands.entity(leader).freeze();
                        let follower = commands.spawn((V(follower_v),));
                        commands
                            .entity(follower)
                            .insert_ref::<P, _>(leader, |aim| (aim,));
                    },
                ));
            let result = real.world.run_iteration();
            real.world
                .remove_node(node)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            run_and_compare_then(result, real, model, |model| {
                // The node is registered after every other: its spawns land last.
                let stamp = model.fresh();
                model.ents.push(Ent {
                    alive: true,
                    frozen: true,
                    p: Some(p),
                    v: Some(leader_v),
                    p_added: stamp,
                    p_changed: stamp,
                    ..Ent::default()
                });
                model.refs.push(Ref {
                    target: model.ents.len() - 1,
                    foreign: false,
                });
                model.ents.push(Ent {
                    alive: true,
                    v: Some(follower_v),
                    link: Some(model.refs.len() - 1),
                    ..Ent::default()
                });
            })?;
            let follower = *real.ents.last().expect("adopted");
            let aim = *real
                .world
                .entity(follower)
                .and_then(|e| e.get::<ComponentRef<P>>())
                .ok_or_else(|| TestCaseError::fail("the follower holds no reference"))?;
            real.refs.push(aim);
            check(aim.get(&real.world).map(|p| p.0) == Some(p), || {
                "the follower's reference reads its leader".into()
            })?;
        }
        Op::QueryGet(at) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let entity = real.ents[i];
            let e = &model.ents[i];
            let missing = |component| QueryEntityError::MissingComponent { entity, component };
            let expected = match (e.alive, e.p, e.v) {
                (false, ..) => Err(QueryEntityError::NoSuchEntity(entity)),
                (true, None, _) => Err(missing(std::any::type_name::<P>())),
                (true, Some(_), None) => Err(missing(std::any::type_name::<V>())),
                (true, Some(p), Some(v)) => Ok((p, v)),
            };
            let got = real
                .world
                .query::<(&P, &V)>()
                .get(entity)
                .map(|(p, v)| (p.0, v.0));
            check(got == expected, || {
                format!("query get #{i}: {got:?}, the model says {expected:?}")
            })?;
            let expected = match (e.alive, e.p, e.v) {
                (false, ..) => Err(QueryEntityError::NoSuchEntity(entity)),
                (true, None, _) => Err(missing(std::any::type_name::<P>())),
                (true, Some(_), Some(_)) => Err(QueryEntityError::FilteredOut {
                    entity,
                    filter: std::any::type_name::<sluice::Without<V>>(),
                }),
                (true, Some(p), None) => Ok(p),
            };
            let got = real
                .world
                .query_filtered::<&P, sluice::Without<V>>()
                .get(entity)
                .map(|p| p.0);
            check(got == expected, || {
                format!("filtered query get #{i}: {got:?}, the model says {expected:?}")
            })?;
        }
        Op::SetP(at, p) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let p = i64::from(p);
            let changed = real
                .world
                .entity_mut(real.ents[i])
                .and_then(|mut e| e.get_mut::<P>().map(|slot| slot.0 = p))
                .is_some();
            let stamp = model.fresh();
            let e = &mut model.ents[i];
            check(changed == (e.alive && e.p.is_some()), || {
                format!("get_mut P on #{i}")
            })?;
            if changed {
                e.p = Some(p);
                e.p_changed = stamp;
            }
        }
        Op::MakeRef(at) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            let result = ComponentRef::<P>::new(&real.world, real.ents[i]);
            let e = &model.ents[i];
            let expected = e.alive && e.frozen && e.p.is_some();
            check(result.is_ok() == expected, || {
                format!("ComponentRef::new on #{i}: {result:?}, model {expected}")
            })?;
            if let Ok(r) = result {
                real.refs.push(r);
                model.refs.push(Ref {
                    target: i,
                    foreign: false,
                });
            }
        }
        Op::MakeForeignRef(at) => {
            if model.other.is_empty() {
                return Ok(());
            }
            let i = at as usize % model.other.len();
            let result = ComponentRef::<P>::new(&real.other, real.other_ents[i]);
            let (frozen, p) = model.other[i];
            check(result.is_ok() == (frozen && p.is_some()), || {
                format!("ComponentRef::new on the other world's #{i}: {result:?}")
            })?;
            if let Ok(r) = result {
                // Read in its own world first: it works there.
                check(r.get(&real.other).map(|p| p.0) == p, || {
                    "a reference in its own world".into()
                })?;
                real.refs.push(r);
                model.refs.push(Ref {
                    target: i,
                    foreign: true,
                });
            }
        }
        Op::ReadRef(at) => {
            if model.refs.is_empty() {
                return Ok(());
            }
            let r = at as usize % model.refs.len();
            let got = real.refs[r].get(&real.world).map(|p| p.0);
            let expected = model.read_ref(model.refs[r]);
            check(got == expected, || {
                format!(
                    "reference #{r} ({:?}) reads {got:?}, model {expected:?}",
                    model.refs[r]
                )
            })?;
        }
        Op::Link(at, r) => {
            let Some(i) = model.pick(at) else {
                return Ok(());
            };
            if model.refs.is_empty() {
                return Ok(());
            }
            let r = r as usize % model.refs.len();
            let result = real
                .world
                .entity_mut(real.ents[i])
                .map(|mut e| e.insert((real.refs[r],)).is_ok());
            let e = &mut model.ents[i];
            let expected = e.alive.then_some(!e.frozen);
            check(result == expected, || {
                format!("link #{i} to reference #{r}: {result:?}")
            })?;
            if expected == Some(true) {
                e.link = Some(r);
            }
        }
        Op::SpawnOther { p } => {
            let p = p.map(i64::from);
            let entity = match p {
                Some(p) => real.other.spawn((P(p),)),
                None => real
                    .other
                    .spawn((Name(String::from("not a position at all")),)),
            };
            real.other_ents.push(entity);
            model.other.push((false, p));
        }
        Op::FreezeOther(at) => {
            if model.other.is_empty() {
                return Ok(());
            }
            let i = at as usize % model.other.len();
            real.other
                .freeze(real.other_ents[i])
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            model.other[i].0 = true;
        }
        Op::ForeignEntity(at) => {
            if model.other.is_empty() {
                return Ok(());
            }
            // Another world's entity in this world's accessors: handles are
            // per world, so it is, bit for bit, the handle of a live entity
            // of this world, and reads exactly that entity, or it names
            // nothing.
            let foreign = real.other_ents[at as usize % model.other.len()];
            let same = real
                .ents
                .iter()
                .position(|&e| e == foreign)
                .filter(|&i| model.ents[i].alive);
            let expected = same.map(|i| model.ents[i].p);
            let read = real
                .world
                .entity(foreign)
                .map(|e| e.get::<P>().map(|p| p.0));
            check(read == expected, || {
                format!("a foreign entity read {read:?}, the model {expected:?}")
            })?;
            let queried = real.world.query::<&P>().get(foreign).ok().map(|p| p.0);
            check(queried == expected.flatten(), || {
                format!("a foreign entity's query read {queried:?}, the model {expected:?}")
            })?;
        }
        Op::Chain(first, second) => snags::chain(real, model, serial, first, second),
        Op::AddSystem(system) => {
            *serial += 1;
            let node = real.add_system(system, *serial);
            real.systems.push(node);
            model.systems.push((system, *serial));
        }
        Op::RemoveSystem(at) => {
            if model.systems.is_empty() {
                return Ok(());
            }
            let i = at as usize % model.systems.len();
            let node = real.systems.remove(i);
            let (_, serial) = model.systems.remove(i);
            model.cursors.remove(&serial);
            model.locals.remove(&serial);
            real.world
                .remove_node(node)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        Op::Executor(kind) => {
            real.world.set_executor(match kind % 3 {
                0 => ExecutorKind::Serial,
                1 => ExecutorKind::Parallel,
                _ => ExecutorKind::Adaptive,
            });
        }
        Op::Send(m) => {
            // From another thread: outside every frame, drained at the next
            // boundary (and only then part of a snapshot).
            let m = i64::from(m);
            let sender = real.sender.clone();
            std::thread::scope(|scope| scope.spawn(move || sender.send(M(m))).join())
                .map_err(|_| TestCaseError::fail("the sending thread panicked"))?
                .map_err(|_| TestCaseError::fail("the sender's queue is full"))?;
            model.sent_by_sender.push(m);
        }
        Op::Optional(op) => optional::apply(op, &mut real.world, &mut model.optional)?,
        Op::Queries(op) => queries::apply(op, real, model)?,
        Op::Entities(op) => entities::apply(op, real, model)?,
        Op::Hierarchy(ref steps) => hierarchy::apply(steps, real)?,
        Op::Sparse(op) => sparse::apply(op, real, model)?,
        Op::Snapshot(op) => snapshots::apply(op, real, model)?,
        Op::SaveFile(op) => saves::apply(op, real, model)?,
        Op::Run => {
            let result = real.world.run_iteration();
            run_and_compare(result, real, model)?;
        }
        Op::DespawnPanicking(p) => {
            let p = i64::from(p);
            let entity = real.world.spawn((P(p), Fragile));
            let stamp = model.fresh();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                real.world.despawn(entity)
            }));
            let message = outcome
                .as_ref()
                .err()
                .and_then(|payload| payload.downcast_ref::<String>().cloned());
            check(message.as_deref() == Some(FRAGILE), || {
                format!("the Drop's panic reaches the caller: {message:?}")
            })?;
            real.ents.push(entity);
            model.ents.push(Ent {
                alive: false,
                p: Some(p),
                p_added: stamp,
                p_changed: stamp,
                ..Ent::default()
            });
            compare_all(real, model)?;
        }
        Op::RunOther => {
            real.other
                .run_iteration()
                .map_err(|e| TestCaseError::fail(format!("the other world: {e}")))?;
            for (_, p) in &mut model.other {
                if let Some(p) = p {
                    *p = p.wrapping_add(1);
                }
            }
            for (i, (&(_, p), entity)) in model.other.iter().zip(&real.other_ents).enumerate() {
                let got = real
                    .other
                    .entity(*entity)
                    .and_then(|e| e.get::<P>().map(|p| p.0));
                check(got == p, || {
                    format!("the other world's #{i}: {got:?}, the model {p:?}")
                })?;
            }
        }
        Op::InjectPanic { in_slice } => {
            let node = real.world.add_system(
                NodeBuilder::new("injected")
                    .phase(sluice::Phase::PostUpdate)
                    .system(
                        move |mut q: Query<'_, &P>, commands: Commands<'_>, out: Publish<'_, M>| {
                            q.par_for_each_sliced(1, |p| {
                                commands.spawn((V(p.0),));
                                out.send(M(p.0));
                                if in_slice && p.0.rem_euclid(2) == 0 {
                                    std::panic::panic_any(INJECTED);
                                }
                            });
                            std::panic::panic_any(INJECTED);
                        },
                    ),
            );
            let result = real.world.run_iteration();
            let refused = model.run();
            model.spikes.injected = true;
            check_panicked(&result, refused, |nodes| nodes == ["injected"])?;
            real.world
                .remove_node(node)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            compare_iteration(real, model)?;
        }
        Op::SendAfterDrop(m) => {
            let mut world = World::with_pool(real.pool.clone());
            let sender = world.sender::<M>();
            check(sender.send(M(0)).is_ok(), || {
                "a live world's sender sends".into()
            })?;
            drop(world);
            match sender.send(M(i64::from(m))) {
                Err(error) if error.is_disconnected() => {
                    check(error.into_inner() == M(i64::from(m)), || {
                        "the message comes back".into()
                    })?;
                }
                other => {
                    return Err(TestCaseError::fail(format!(
                        "a send after the world dropped returned {other:?}"
                    )));
                }
            }
        }
        Op::StartScript { left, wait_ms } => {
            let tag = model.scripts.0.len() as u8;
            let ticker = Ticker { tag, left, wait_ms };
            let id = real
                .world
                .get_mut::<Scripts<Director>>()
                .expect("the store")
                .start_step("ticker", ticker);
            check(!real.script_ids.contains(&id), || {
                format!("{id:?} was handed out before: an id never names another script")
            })?;
            model.scripts.0.push((real.script_ids.len(), ticker, None));
            real.script_ids.push(id);
        }
        Op::CancelScript(at) => {
            if real.script_ids.is_empty() {
                return Ok(());
            }
            let i = at as usize % real.script_ids.len();
            let cancelled = real
                .world
                .get_mut::<Scripts<Director>>()
                .expect("the store")
                .cancel(real.script_ids[i]);
            let live = model.scripts.0.iter().position(|(id, _, _)| *id == i);
            check(cancelled == live.is_some(), || {
                format!(
                    "cancel of script #{i}: {cancelled}, the model {}",
                    live.is_some()
                )
            })?;
            if let Some(at) = live {
                model.scripts.0.remove(at);
            }
        }
        Op::Save => {
            let scripts = real
                .world
                .get_mut::<Scripts<Director>>()
                .expect("the store")
                .snapshot()
                .map_err(|e| TestCaseError::fail(format!("step scripts save: {e}")))?;
            real.save = Some((
                scripts,
                real.world.clock_snapshot(),
                real.script_ids.clone(),
            ));
            model.save = Some((model.scripts.clone(), model.now));
        }
        Op::Load => {
            let (Some((scripts, clock, ids)), Some((saved, now))) = (&real.save, &model.save)
            else {
                return Ok(());
            };
            real.world
                .get_mut::<Scripts<Director>>()
                .expect("the store")
                .restore(scripts);
            real.world.restore_clock(clock);
            // The store's own snapshot: its scripts have their ids of
            // then (a load from disk since may have renamed them).
            let ids = ids.clone();
            real.reset_script_ids(&ids, false);
            model.scripts = saved.clone();
            model.now = *now;
        }
        Op::Update(ms) => {
            let delta = if ms == u32::MAX {
                Duration::MAX
            } else {
                Duration::from_millis(u64::from(ms))
            };
            model.now = model.now.saturating_add(delta);
            let result = real.world.update(delta);
            // An update is an iteration with the clocks moved first.
            run_and_compare(result, real, model)?;
            let now = real.world.get::<SimClock>().expect("the clock").now();
            check(now == model.now, || {
                format!("SimClock reads {now:?}, the model {:?}", model.now)
            })?;
            let frame = real.world.get::<FrameTime>().expect("the frame clock");
            check(frame.delta <= delta, || {
                format!("FrameTime's delta {:?} beyond {delta:?}", frame.delta)
            })?;
        }
        Op::Spike(ref op) => spikes::apply(op, real, model)?,
        Op::Pinned(ref op) => pinned::apply(op, real, model)?,
        Op::ModelCheck(ref op) => model_check::apply(op, &real.pool)?,
        Op::RunStats { timing } => run_stats::apply(timing, real, model, serial)?,
        Op::Systems(ref op) => systems::apply(op, real, model, serial)?,
        Op::Organising(ref op) => organising::apply(op, real, model, serial)?,
        Op::Messages(ref op) => messages::apply(op, real, model)?,
        Op::OneShot(ref op) => one_shot::apply(op, real, model, serial)?,
        Op::Observe(ref op) => observers::apply(op, &real.pool)?,
        Op::Platform(ref op) => platform::apply(op, &real.pool)?,
        Op::AdvanceTicks(times) => {
            real.world
                .entities_mut()
                .advance_ticks(sluice::TICK_CHECK_INTERVAL * u32::from(times));
            apply(&Op::Run, real, model, serial)?;
        }
    }
    Ok(())
}

/// That an iteration failed with a node panic naming the nodes `named`
/// accepts, beside as many refused commands as the model refused.
fn check_panicked(
    result: &Result<(), IterationError>,
    refused: usize,
    named: impl FnOnce(&[String]) -> bool,
) -> Result<(), TestCaseError> {
    let Err(IterationError::NodePanicked(panic)) = result else {
        return Err(TestCaseError::fail(format!(
            "an iteration with a panicking node returned {result:?}"
        )));
    };
    check(named(panic.nodes()), || {
        format!("the failure names {:?}", panic.nodes())
    })?;
    check(panic.boundary_failures().len() == refused, || {
        format!(
            "{} refused commands beside the panic, the model {refused}",
            panic.boundary_failures().len()
        )
    })
}

/// Runs the model's iteration beside the world's (which returned
/// `result`) and compares what the iteration changed.
fn run_and_compare(
    result: Result<(), IterationError>,
    real: &mut Real,
    model: &mut Model,
) -> Result<(), TestCaseError> {
    run_and_compare_then(result, real, model, |_| {})
}

/// As [`run_and_compare`], with `landed` applying to the model what a
/// node registered after every other landed at the boundary.
fn run_and_compare_then(
    result: Result<(), IterationError>,
    real: &mut Real,
    model: &mut Model,
    landed: impl FnOnce(&mut Model),
) -> Result<(), TestCaseError> {
    let refused = model.run();
    landed(model);
    match (&result, refused) {
        (Ok(()), 0) => {}
        (Err(IterationError::Boundary(failures)), n) if n > 0 => {
            check(failures.len() == n, || {
                format!("{} refused commands, the model {n}", failures.len())
            })?;
            check(
                failures.iter().all(|f| f.refused_because().is_some()),
                || "every boundary failure is a refused despawn".into(),
            )?;
        }
        (result, n) => {
            return Err(TestCaseError::fail(format!(
                "the iteration returned {result:?}; the model refused {n} commands"
            )));
        }
    }
    compare_iteration(real, model)
}

/// Compares what an iteration changed (run on both sides already).
fn compare_iteration(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    real.adopt_spawned(model);
    let log = real.world.get::<ReadLog>().expect("the log");
    check(log.0 == model.read, || {
        format!("the reader read {:?}, the model {:?}", log.0, model.read)
    })?;
    let ids = &real.script_ids;
    let collected: Vec<(usize, (u8, u8))> = real
        .world
        .get::<ScriptLog>()
        .expect("the script log")
        .0
        .iter()
        .map(|(id, intent)| {
            (
                ids.iter()
                    .position(|known| known == id)
                    .or_else(|| {
                        (real.old_script_ids.iter().rev())
                            .find(|(old, _)| old == id)
                            .map(|(_, index)| *index)
                    })
                    .unwrap_or(usize::MAX),
                *intent,
            )
        })
        .collect();
    check(collected == model.intents, || {
        format!(
            "the scripts emitted {collected:?}, the model {:?}",
            model.intents
        )
    })?;
    compare_observed(real, model)?;
    compare_committed(real, model)?;
    spikes::after_iteration(real, model)?;
    optional::compare(&real.world, Some(&real.optional), &model.optional)?;
    pinned::compare(&real.world, &model.pinned)?;
    par_init::compare(&real.world, &model.par_init, real.pool.num_threads())?;
    compare_all(real, model)
}

/// What `Sys::NestedAppender(k)` appends first for a row holding `p`.
fn nested_base(p: i64, k: i8) -> i64 {
    p.wrapping_add(i64::from(k)).wrapping_mul(4)
}

/// What `Sys::ThreadedAppender(k)` appends for a row holding `p`, from its
/// own thread (part 0) or the thread it starts (part 1).
fn threaded_value(p: i64, k: i8, part: u8) -> i64 {
    const THREADED: i64 = 1 << 40;
    p.wrapping_add(i64::from(k))
        .wrapping_add(i64::from(part) * THREADED)
}

// --- issue 20: appending (begin) ---
/// What the commits drained, against the model: the same values per
/// commit, run by run, each run grouped by appender in registration order
/// (serials grow with registration); within one appender the rows' order
/// is the store's.
fn compare_committed(real: &mut Real, model: &Model) -> Result<(), TestCaseError> {
    let caller = std::thread::current().id();
    let threads = &real.world.get::<PinnedCommits>().expect("the threads").0;
    check(threads.iter().all(|&thread| thread == caller), || {
        format!(
            "a pinned two-point node ran off the calling thread: {threads:?}, caller {caller:?}"
        )
    })?;
    let log = &real.world.get::<InstanceLog>().expect("the log").0;
    check(log.len() == model.committed.len(), || {
        format!(
            "{} commits ran, the model {}",
            log.len(),
            model.committed.len()
        )
    })?;
    for (i, (got, expected)) in log.iter().zip(&model.committed).enumerate() {
        let mut expected = expected.clone();
        expected.sort_by_key(|&(run, serial, part, _)| (run, serial, part));
        check(got.len() == expected.len(), || {
            format!("commit #{i} drained {got:?}, the model {expected:?}")
        })?;
        // Group by group (one appender's part in one run): the same
        // appender, the same values in some order (the rows' order is the
        // store's), in the order of the loops where the model knows it.
        let mut at = 0;
        let mut previous: &[(usize, i64)] = &[];
        for group in expected.chunk_by(|a, b| (a.0, a.1, a.2) == (b.0, b.1, b.2)) {
            let (run, serial, part, _) = group[0];
            let span = &got[at..at + group.len()];
            match model.systems.iter().find(|&&(_, s)| s == serial) {
                Some((Sys::NestedAppender(_), _)) => {
                    check(
                        span.chunks(3)
                            .all(|row| row[1].1 == row[0].1 + 1 && row[2].1 == row[0].1 + 2),
                        || format!("commit #{i}: nested fan-outs out of loop order in {span:?}"),
                    )?;
                }
                Some((Sys::ThreadedAppender(k), _)) if part == 1 => {
                    // The started thread pushes the rows in its node's order.
                    let again: Vec<i64> = previous
                        .iter()
                        .map(|&(_, v)| threaded_value(v.wrapping_sub(i64::from(*k)), *k, 1))
                        .collect();
                    let thread: Vec<i64> = span.iter().map(|&(_, v)| v).collect();
                    check(again == thread, || {
                        format!("commit #{i}: the thread's values {thread:?} after {previous:?}")
                    })?;
                }
                _ => {}
            }
            previous = span;
            let mut real: Vec<(usize, i64)> = span.to_vec();
            let mut model: Vec<(usize, i64)> = group.iter().map(|&(_, s, _, v)| (s, v)).collect();
            real.sort_unstable();
            model.sort_unstable();
            check(real == model, || {
                format!(
                    "commit #{i} drained {got:?}: at {at}, {real:?} where the model has \
                     run and position {run:?}'s appender {serial} (part {part}) append {model:?}"
                )
            })?;
            at += group.len();
        }
    }
    Ok(())
}
// --- issue 20: appending (end) ---

/// What the observers saw, this iteration, against the model.
fn compare_observed(real: &mut Real, model: &Model) -> Result<(), TestCaseError> {
    let index = handle_index(real)?;
    let log = real.world.get::<ChangeLog>().expect("the change log");
    let seen: Vec<(usize, Vec<usize>)> = log
        .0
        .iter()
        .map(|(serial, entities)| {
            let mut ids: Vec<usize> = entities.iter().map(|e| index[e]).collect();
            ids.sort_unstable();
            (*serial, ids)
        })
        .collect();
    check(seen == model.observed, || {
        format!("the observers saw {seen:?}, the model {:?}", model.observed)
    })
}

/// Keeps the planned panics (`Fragile`'s) out of the test's output.
fn quiet_planned_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info.payload().downcast_ref::<String>().map(String::as_str);
            let planned = info.payload().downcast_ref::<&str>().copied();
            if message != Some(FRAGILE) && planned != Some(INJECTED) {
                previous(info);
            }
        }));
    });
}

fn run_case(pool: &ThreadPool, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut real = Real::new(pool);
    let mut model = Model::default();
    let mut serial = 0;
    for op in ops {
        apply(op, &mut real, &mut model, &mut serial)?;
    }
    // A last iteration and a full comparison, whatever the sequence ended on.
    apply(&Op::Run, &mut real, &mut model, &mut serial)?;
    compare_all(&mut real, &model)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn the_public_api_matches_its_model() {
    let seed = env_u64("API_MODEL_SEED").unwrap_or_else(|| {
        // Miri's isolation hides the wall clock: a fixed seed there.
        if cfg!(miri) {
            return 19;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let cases = env_u64("API_MODEL_CASES").unwrap_or(if cfg!(miri) { 2 } else { 2_500 }) as u32;
    let length = if cfg!(miri) { 12 } else { 60 };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: if cfg!(miri) { 0 } else { 2_000 },
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    // Two pools, each case on one: idle threads that park at once (and
    // move off their callers' cores), and ones that look for work for
    // milliseconds first and never move (the pool's spin and placement
    // settings change when and where threads take work, never what a run
    // does).
    // Under Miri, where spinning is interpretation time, both park at once.
    let spin = |d: Duration| if cfg!(miri) { Duration::ZERO } else { d };
    let pools = [
        ThreadPoolBuilder::new()
            .num_threads(2)
            .spin_while_running(Duration::ZERO)
            .spin_between_runs(Duration::ZERO)
            .build(),
        ThreadPoolBuilder::new()
            .num_threads(2)
            .spin_while_running(spin(Duration::from_millis(5)))
            .spin_between_runs(spin(Duration::from_millis(1)))
            .keep_off_callers_cores(false)
            .build(),
    ]
    .map(|pool| pool.expect("a pool"));
    quiet_planned_panics();
    let case = (any::<bool>(), proptest::collection::vec(op(), 1..length));
    let result = runner.run(&case, |(spinning, ops)| {
        run_case(&pools[usize::from(spinning)], &ops)
    });
    if let Err(error) = result {
        panic!(
            "the public API disagrees with its model (seed {seed}; replay with \
             API_MODEL_SEED={seed}):\n{error}"
        );
    }
}
