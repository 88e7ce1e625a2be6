//! A registered node's run-time state, touched only by the thread running it.

use crate::sync::UnsafeCell;

use crate::access::ServiceId;
use crate::registry::Registry;
use crate::running::BodyScope;
use crate::system::{NodeBody, NodeEnv};
use crate::world::conditions::RunConditions;

/// What only the running thread touches.
struct NodeState {
    body: Box<dyn NodeBody>,
    /// Every run condition; all must hold for the body to run.
    conditions: RunConditions,
    /// The sum of a factory's inputs' versions after its last run; `None`
    /// before its first. Versions only grow, so the sum moves exactly when at
    /// least one input moved.
    seen: Option<u64>,
    /// The body's change cursor: the tick of its last run with a query
    /// (`None`: never, so its first run sees every row), which
    /// `Changed<T>`/`Added<T>` compare against.
    last_run: Option<u32>,
    /// Whether the last run skipped the body (a run condition was false, or
    /// a factory's inputs had not moved): the spike watch records only runs
    /// of the body. Kept only when the cell is `skippable`; false otherwise.
    skipped: bool,
}

impl NodeState {
    /// Runs the body inside `scope` (entered for this run) and moves its
    /// change cursor to the run's tick, if a query took one.
    ///
    /// # Safety
    /// [`NodeBody::run`]'s contract, for `env`.
    #[inline]
    unsafe fn run_body(&mut self, env: &NodeEnv<'_>, scope: BodyScope) {
        // SAFETY: forwarded from the caller.
        unsafe { self.body.run(env) };
        if let Some(tick) = scope.finish() {
            self.last_run = Some(tick);
        }
    }
}

/// A node's body, its run conditions and its factory bookkeeping.
///
/// Shared by every thread of an iteration but entered by one at a time: the
/// executor hands each node to exactly one thread per iteration, and
/// iterations of one world never overlap (they take `&mut World`).
pub(crate) struct NodeCell {
    state: UnsafeCell<NodeState>,
    /// The services whose versions decide whether a factory runs: everything
    /// it reads or gates. Empty for systems.
    inputs: Box<[ServiceId]>,
    /// Whether the node produces something (and so is skipped when its inputs
    /// did not move).
    is_factory: bool,
    /// Whether a run can skip the body: the node is a factory or has run
    /// conditions. A plain system always runs it, and keeps no `skipped`.
    skippable: bool,
}

// SAFETY: the state is entered by one thread at a time (see the type's doc),
// and everything in it is `Send`.
unsafe impl Sync for NodeCell {}

/// What running a node did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// The body ran.
    Body,
    /// A factory whose inputs did not move: skipped.
    Unchanged,
    /// A run condition was false: skipped, change cursor left where it was.
    ConditionFalse,
}

impl NodeCell {
    /// Moves the body's and the conditions' change cursors up to the
    /// store's `MAX_TICK_AGE` before `now` (see `Entities::check_ticks`).
    pub(crate) fn clamp_cursors(&mut self, now: u32) {
        let state = self.state.get_mut();
        state.conditions.clamp_cursors(now);
        // A cursor that never ran needs none: its first run resolves it.
        if let Some(cursor) = &mut state.last_run {
            crate::entity::Entities::clamp_tick(cursor, now);
        }
    }

    /// Appends the body's and the conditions' change cursors, in that
    /// order, and returns a factory's record of its inputs' versions (a
    /// snapshot's).
    ///
    /// # Safety
    /// No thread is inside the cell (no iteration of its world runs).
    pub(crate) unsafe fn read_cursors(&self, out: &mut Vec<Option<u32>>) -> Option<u64> {
        self.state.with(|state| {
            // SAFETY: the state is entered only by the thread running the
            // node, and none does (caller).
            let state = unsafe { &*state };
            out.push(state.last_run);
            out.extend_from_slice(state.conditions.cursors());
            state.seen
        })
    }

    /// Sets what [`read_cursors`](Self::read_cursors) read, from `cursors`
    /// (as many, in its order) and `seen`.
    pub(crate) fn write_cursors(&mut self, cursors: &[Option<u32>], seen: Option<u64>) {
        let state = self.state.get_mut();
        if let Some((&body, conditions)) = cursors.split_first() {
            state.last_run = body;
            state.conditions.cursors_mut().copy_from_slice(conditions);
        }
        state.seen = seen;
    }

    pub(crate) fn new(
        body: Box<dyn NodeBody>,
        conditions: RunConditions,
        inputs: Box<[ServiceId]>,
        is_factory: bool,
    ) -> Self {
        Self {
            skippable: is_factory || !conditions.is_empty(),
            state: UnsafeCell::new(NodeState {
                body,
                conditions,
                seen: None,
                last_run: None,
                skipped: false,
            }),
            inputs: if is_factory { inputs } else { Box::new([]) },
            is_factory,
        }
    }

    /// Evaluates the run conditions, then runs the node, or skips a factory
    /// whose inputs did not move.
    ///
    /// # Safety
    /// - No other thread is inside this cell (the executor runs each node on
    ///   one thread at a time).
    /// - `env` is the world's environment for this node, and the node runs as
    ///   a node of the world's current plan ([`NodeBody::run`]'s contract).
    ///
    /// It runs as node `node` (registration index) of world `world`, at
    /// position `rank` of its plan's order: what it records lands there.
    ///
    /// Inlined into the node runner: the call's own prologue and epilogue
    /// were 17 instructions a node. Always, as a condition node's
    /// ([`GateCell`](super::node::GateCell)) run is a second caller, with
    /// which the compiler kept it (and the node runner) out of line: 41
    /// instructions a node (`empty_callgrind 1000 100 serial`).
    #[inline(always)]
    pub(crate) unsafe fn run(&self, env: &NodeEnv<'_>, world: u64, node: u32, rank: u32) -> Ran {
        if !self.skippable {
            // A plain system (no run conditions, not a factory): its body,
            // and nothing to look at before or to remember after.
            // SAFETY: only this thread is inside the cell (the caller's
            // guarantee): the only borrow of its state while it runs.
            let state = self.state.with_mut(|state| unsafe { &mut *state });
            let scope = BodyScope::enter(world, node, rank, state.last_run);
            // SAFETY: forwarded from the caller.
            unsafe { state.run_body(env, scope) };
            return Ran::Body;
        }
        // SAFETY: forwarded from the caller.
        let ran = unsafe { self.run_once(env, world, node, rank) };
        // SAFETY: as in `run_once`, which has returned: the only borrow.
        let state = self.state.with_mut(|state| unsafe { &mut *state });
        state.skipped = ran != Ran::Body;
        ran
    }

    /// Whether a run can skip the body (a factory, or run conditions).
    pub(crate) fn skippable(&self) -> bool {
        self.skippable
    }

    /// Whether the last run skipped the body (read between runs; false for
    /// a cell that is not [`skippable`](Self::skippable)).
    pub(crate) fn skipped(&mut self) -> bool {
        self.state.get_mut().skipped
    }

    /// [`run`](Self::run) without the bookkeeping of what it did.
    ///
    /// # Safety
    /// As for [`run`](Self::run).
    #[inline]
    unsafe fn run_once(&self, env: &NodeEnv<'_>, world: u64, node: u32, rank: u32) -> Ran {
        // SAFETY: only this thread is inside the cell (caller's guarantee),
        // so this is the only borrow of its state while the node runs.
        let state = self.state.with_mut(|state| unsafe { &mut *state });
        // The node's recording, reader part and change cursor at once; the
        // conditions enter their own part and cursor inside it.
        let scope = BodyScope::enter(world, node, rank, state.last_run);
        // SAFETY: the conditions' reads are part of this node's declared
        // access, and the node runs under the plan (caller's guarantee).
        if !unsafe { state.conditions.hold(env) } {
            return Ran::ConditionFalse;
        }
        if !self.is_factory {
            // SAFETY: the body's contract is the caller's guarantee.
            unsafe { state.run_body(env, scope) };
            return Ran::Body;
        }
        // SAFETY: the inputs are declared by this node, so no gate of them
        // runs now (the plan orders gates against accessors).
        let before = unsafe { self.input_versions(env) };
        if state.seen == Some(before) {
            return Ran::Unchanged;
        }
        // SAFETY: the body's contract is the caller's guarantee.
        unsafe { state.run_body(env, scope) };
        // The factory's own gates moved some inputs: remember the state it
        // left, so the next iteration runs it only if someone else moves one.
        // SAFETY: as for `before`.
        state.seen = Some(unsafe { self.input_versions(env) });
        Ran::Body
    }

    /// Records the inputs' current versions as seen, so a factory skips until
    /// one of them moves.
    pub(crate) fn mark_current(&mut self, registry: &Registry) {
        if self.is_factory {
            let versions = self.registry_versions(registry);
            self.state.get_mut().seen = Some(versions);
        }
    }

    /// The sum of the inputs' versions, read between runs.
    fn registry_versions(&self, registry: &Registry) -> u64 {
        self.inputs
            .iter()
            .map(|&id| registry.version(id))
            .fold(0u64, u64::wrapping_add)
    }

    /// Whether a run now would skip the body because the factory's inputs
    /// have not moved since its last run (always false for a system, or a
    /// node with run conditions, which must be evaluated); when so, records
    /// the run as skipped, so the executor may leave the node out.
    pub(crate) fn skip_unchanged(&mut self, registry: &Registry) -> bool {
        if !self.is_factory {
            return false;
        }
        let versions = self.registry_versions(registry);
        let state = self.state.get_mut();
        let unchanged = state.conditions.is_empty() && state.seen == Some(versions);
        if unchanged {
            state.skipped = true;
        }
        unchanged
    }

    /// # Safety
    /// The node declared every input, and runs under the plan.
    unsafe fn input_versions(&self, env: &NodeEnv<'_>) -> u64 {
        self.inputs
            .iter()
            // SAFETY: declared inputs (caller's guarantee).
            .map(|&id| unsafe { env.cells.version(id) })
            .fold(0u64, u64::wrapping_add)
    }
}
