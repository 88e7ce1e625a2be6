//! One run of a compiled graph: the state its threads share, how a node is
//! run and completed, and the handles a node body sees.
//!
//! Every run lives in a [`RunSlot`], one per external seat of the registry,
//! so its memory outlives the run. A slot packs a generation and an *active*
//! count in one atomic word. The count holds:
//!
//! - 1 for the caller (the *hold*), while the run is open;
//! - 1 per node job that exists (queued or running), per deferred node not
//!   yet completed, and per batch helper job;
//! - 1 per thread visiting the run to take work from its ready ring or its
//!   loose queues.
//!
//! A visitor joins only while the count is non-zero (a compare-and-swap that
//! also checks the generation), so the run's parameters are valid whenever
//! the count it holds is. The caller closes the run by swapping the count
//! from 1 (its hold alone) to 0; after that nothing of the run is touched.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::sync::{
    Arc, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Cell, Lock, Ordering, PoisonError, UnsafeCell,
};

use crossbeam_utils::CachePadded;

use super::graph::CompiledGraph;
use super::job::JobRef;
use super::loose::{LooseShared, LooseTasks};
use super::pool::{Registry, WorkerThread};
use super::state::ExecutionState;

/// What a node body reports when it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum NodeOutcome {
    /// The node is complete: its successors may start.
    Done,
    /// The node completes later, through the [`Completion`] it took with
    /// [`NodeContext::defer`] (or a batch it scheduled): its successors are
    /// released only then.
    Deferred,
}

/// A node that panicked (or broke the deferral contract), and the payload.
///
/// The run that returns it started nothing new after the failure, let the
/// work already running finish, and left the pool ready for the next run.
///
/// One pointer: a run's `Result<(), NodeFailure>` comes back in a register,
/// where the failure's 40 bytes went through the stack on every run.
pub struct NodeFailure(Box<Failed>);

/// What a [`NodeFailure`] holds.
struct Failed {
    payload: Box<dyn Any + Send>,
    /// Every node that failed in the run, each once, the first one first
    /// (never empty).
    nodes: Vec<usize>,
}

impl NodeFailure {
    pub(crate) fn new(node: usize, payload: Box<dyn Any + Send>) -> Self {
        Self(Box::new(Failed {
            payload,
            nodes: vec![node],
        }))
    }

    /// The index of the node that failed (the first one, when several did).
    pub fn node(&self) -> usize {
        self.0.nodes[0]
    }

    /// Every node that failed in the run, each once, in the order their
    /// failures were recorded: [`node`](Self::node) first, then those that
    /// were already running and failed too (only the first one's payload
    /// is kept).
    pub fn nodes(&self) -> &[usize] {
        &self.0.nodes
    }

    /// The panic payload.
    pub fn payload(&self) -> &(dyn Any + Send) {
        &*self.0.payload
    }

    /// The panic payload, to resume the panic with `std::panic::resume_unwind`.
    pub fn into_payload(self) -> Box<dyn Any + Send> {
        self.0.payload
    }

    /// The panic message, when the payload is a string.
    pub fn message(&self) -> Option<&str> {
        panic_message(&*self.0.payload)
    }
}

/// A panic payload's message, when it is a string (`panic!("..")` makes a
/// `&'static str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

impl fmt::Debug for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeFailure")
            .field("node", &self.node())
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Some(message) => write!(f, "node {} panicked: {message}", self.node()),
            None => write!(f, "node {} panicked", self.node()),
        }
    }
}

impl std::error::Error for NodeFailure {}

const DEFERRED_WITHOUT_HANDLE: &str =
    "node returned NodeOutcome::Deferred without calling NodeContext::defer";
const PINNED_QUEUE_FULL: &str = "the run's pinned queue was full (a node became ready twice)";
const DONE_AFTER_DEFER: &str =
    "node called NodeContext::defer but returned NodeOutcome::Done (return Deferred)";

/// The type-erased call of a run's node body.
pub(crate) type BodyFn = unsafe fn(*const (), &RawContext) -> NodeOutcome;

/// What a run works on; written when the run opens, read while it is open.
#[derive(Clone, Copy)]
pub(crate) struct RunParams {
    graph: *const CompiledGraph,
    state: *const ExecutionState,
    /// Whether the run is timed (the state's timings record each node).
    timed: bool,
    body: *const (),
    call: BodyFn,
    loose: *const LooseShared,
    serial: bool,
    /// Whether the graph pins any node (see [`CompiledGraph::with_pinned`]).
    has_pinned: bool,
}

impl RunParams {
    /// Erases the parts of a run. The pointers must stay valid until the run
    /// closes (the drivers hold the borrows for longer).
    pub(crate) fn new<'scope, F>(
        graph: &CompiledGraph,
        state: &ExecutionState,
        timed: bool,
        body: &F,
        loose: Option<&LooseTasks>,
        serial: bool,
    ) -> Self
    where
        F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
    {
        Self {
            graph,
            state,
            timed,
            body: (body as *const F).cast(),
            call: call_body::<F>,
            loose: loose.map_or(std::ptr::null(), LooseTasks::shared),
            serial,
            has_pinned: graph.has_pinned(),
        }
    }
}

/// # Safety
///
/// - `body` points at a live `F`.
/// - `cx` belongs to a run whose scope is `'scope` (everything the run
///   borrows for `'scope` outlives the run).
unsafe fn call_body<'scope, F>(body: *const (), cx: &RawContext) -> NodeOutcome
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    // SAFETY:
    // - `body` points at a live `F` (the caller's contract).
    let body = unsafe { &*body.cast::<F>() };
    // SAFETY:
    // - `NodeContext` is a `repr(transparent)` wrapper of `RawContext`.
    // - The `'scope` it claims is the run's (the caller's contract).
    let cx = unsafe { &*std::ptr::from_ref(cx).cast::<NodeContext<'scope>>() };
    body(cx)
}

const ACTIVE_MASK: u64 = 0xFFFF_FFFF;

fn active_of(state: u64) -> u32 {
    (state & ACTIVE_MASK) as u32
}

/// The shared state of the run in flight at one external seat.
pub(crate) struct RunSlot {
    /// `generation << 32 | active`.
    state: CachePadded<AtomicU64>,
    seat: usize,
    aborted: AtomicBool,
    failure: Lock<Option<NodeFailure>>,
    /// End of the regular loose-task window, in nanoseconds since the loose
    /// queues' epoch; 0 until the first regular task of the run starts.
    deadline: AtomicU64,
    /// Prioritized polls taken from the run's budget (it keeps counting
    /// the refusals once the budget is spent).
    prioritized_polls: AtomicU64,
    /// Pinned nodes queued for the caller and not yet taken: a hint the
    /// caller reads between jobs without holding anything of the run
    /// (counted up before the push, down after the pop, so it is never
    /// below what the queue holds).
    pinned_queued: CachePadded<AtomicU32>,
    /// Work another thread handed to the caller (see [`CallerJob`]): a
    /// stack linked through [`CallerJob::next`], pushed by any thread,
    /// popped by the caller only. Counted in `pinned_queued` with the
    /// pinned nodes.
    caller_jobs: AtomicPtr<CallerJob>,
    params: UnsafeCell<Option<RunParams>>,
}

// SAFETY:
// - `params` is written only by `open`, while the run is closed (active count
//   0) and the caller occupies the seat; it is read only by threads holding a
//   count on the open run, which synchronize with `open` through the
//   release/acquire `state` word. So it is never written while read.
// - The pointers in `params` point at `Sync` data (`CompiledGraph`,
//   `ExecutionState`, a `Sync` body, `LooseShared`) that the run's caller
//   keeps alive until the run closes.
// - Every other field is `Sync`.
unsafe impl Sync for RunSlot {}
// SAFETY:
// - As above: nothing in the slot is tied to a thread.
unsafe impl Send for RunSlot {}

impl RunSlot {
    pub(crate) fn new(seat: usize) -> Self {
        Self {
            state: CachePadded::new(AtomicU64::new(0)),
            seat,
            aborted: AtomicBool::new(false),
            failure: Lock::new(None),
            deadline: AtomicU64::new(0),
            prioritized_polls: AtomicU64::new(0),
            pinned_queued: CachePadded::new(AtomicU32::new(0)),
            caller_jobs: AtomicPtr::new(std::ptr::null_mut()),
            params: UnsafeCell::new(None),
        }
    }

    /// Opens a run with the caller's hold and `initial_jobs` counts.
    ///
    /// # Safety
    ///
    /// - The calling thread occupies this slot's seat and the slot is closed.
    /// - Everything `params` points at stays valid until [`try_close`](Self::try_close)
    ///   succeeds.
    #[inline(always)]
    pub(crate) unsafe fn open(&self, params: RunParams, initial_jobs: u32) {
        debug_assert_eq!(active_of(self.state.load(Ordering::Relaxed)), 0);
        self.params.with_mut(|slot| {
            // SAFETY:
            // - The run is closed (active 0), so no thread holds a count and
            //   none can join: nobody reads `params` now.
            unsafe { *slot = Some(params) };
        });
        // Only a failed run leaves a failure (`fail` marks the run aborted
        // first), and only when its caller did not take it: a run that did
        // not abort costs no lock here.
        if self.aborted.load(Ordering::Relaxed) {
            self.aborted.store(false, Ordering::Relaxed);
            *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
        self.deadline.store(0, Ordering::Relaxed);
        self.prioritized_polls.store(0, Ordering::Relaxed);
        self.pinned_queued.store(0, Ordering::Relaxed);
        // Each caller job carries a count of the run, so the last run
        // closed with none left.
        debug_assert!(self.caller_jobs.load(Ordering::Relaxed).is_null());
        let generation = (self.state.load(Ordering::Relaxed) >> 32).wrapping_add(1) & ACTIVE_MASK;
        self.state.store(
            generation << 32 | u64::from(1 + initial_jobs),
            Ordering::Release,
        );
    }

    /// Closes the run if only the caller's hold is left and no loose work of
    /// the run is pending. The caller holds the hold.
    pub(crate) fn try_close(&self) -> bool {
        let state = self.state.load(Ordering::Acquire);
        if active_of(state) != 1 {
            return false;
        }
        // SAFETY:
        // - The caller holds the hold, so the run is open and its parameters
        //   are valid; `params.loose`, when set, stays valid after this call
        //   closes the run: it points at the caller's own `LooseTasks`,
        //   borrowed until the caller's run returns.
        let tasks = unsafe { self.params().loose.as_ref() };
        // Close first, then look at the loose queues. Looking first is an
        // ABA: between the look and the swap a visitor could join, pop a
        // task that wakes itself, poll it, queue it again and leave, and
        // the state word would be what the caller read, so the swap would
        // close a run with work still pending. Once closed, nobody joins,
        // and the AcqRel swap sees every push made by a visitor before it
        // gave its count back; only a waker outside the run can add more.
        if self
            .state
            .compare_exchange(
                state,
                state & !ACTIVE_MASK,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return false;
        }
        if let Some(tasks) = tasks {
            if !self.is_aborted() && self.loose_pending(tasks) {
                // Reopen for the caller's next round. Nothing wrote the word
                // while it read closed (joins refuse a closed run and only
                // this caller opens), so storing `state` back is exact.
                self.state.store(state, Ordering::Release);
                return false;
            }
            self.record_overrun_at_close(tasks);
        }
        true
    }

    /// The active count (1: only the caller's hold is left).
    /// How many runs this slot has opened (wrapping).
    pub(crate) fn generation(&self) -> u32 {
        (self.state.load(Ordering::Relaxed) >> 32) as u32
    }

    pub(crate) fn active(&self) -> u32 {
        active_of(self.state.load(Ordering::Acquire))
    }

    /// Adds `n` counts; the caller must already hold one.
    pub(crate) fn acquire(&self, n: u32) {
        self.state.fetch_add(u64::from(n), Ordering::Relaxed);
    }

    /// Gives back `n` counts. When that leaves only the hold, the caller is
    /// woken so it can close the run. Nothing of the run may be touched after.
    pub(crate) fn release(&self, n: u32, registry: &Registry, me: Option<usize>) {
        let previous = self.state.fetch_sub(u64::from(n), Ordering::AcqRel);
        if active_of(previous) == n + 1 && me != Some(self.seat) {
            registry.wake_seat(self.seat);
        }
    }

    /// Joins an open run as a visitor (one more count).
    fn try_join(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if active_of(state) == 0 {
                return false;
            }
            match self.state.compare_exchange_weak(
                state,
                state + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(current) => state = current,
            }
        }
    }

    /// The run's parameters.
    ///
    /// # Safety
    ///
    /// - The calling thread holds a count on the open run.
    pub(crate) unsafe fn params(&self) -> &RunParams {
        // SAFETY:
        // - A count is held, so the run is open and `params` is not written
        //   until it closes, which cannot happen before the count is given back.
        match self.params.with(|params| unsafe { &*params }) {
            Some(params) => params,
            None => unreachable!("an open run has parameters"),
        }
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Records a failure (the first one's payload is kept, every failed
    /// node is listed once) and stops new work. Allocates only on the
    /// second failed node of a run.
    pub(crate) fn fail(&self, node: u32, payload: Box<dyn Any + Send>) {
        self.aborted.store(true, Ordering::Release);
        let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *failure {
            None => *failure = Some(NodeFailure::new(node as usize, payload)),
            Some(first) => {
                if !first.0.nodes.contains(&(node as usize)) {
                    first.0.nodes.push(node as usize);
                }
                // A later payload is dropped outside the lock: its `Drop`
                // may panic, and nothing inside a job may.
                drop(failure);
                let dropped = panic::catch_unwind(AssertUnwindSafe(move || drop(payload)));
                // A payload whose `Drop` panics has a panicking payload
                // too: leak that one rather than unwind out of a job.
                if let Err(again) = dropped {
                    std::mem::forget(again);
                }
            }
        }
    }

    /// Takes the run's failure; call after closing, before leaving the seat.
    pub(crate) fn take_failure(&self) -> Option<NodeFailure> {
        // `fail` marks the run aborted before it records, and the close
        // synchronized with every thread that did: not aborted, no failure.
        if !self.is_aborted() {
            return None;
        }
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// A job that runs `node` of this run.
    pub(crate) fn node_job(&self, node: u32) -> JobRef {
        // SAFETY:
        // - The slot lives in the registry, which outlives every queue (the
        //   queues are the registry's) and every thread running jobs (they
        //   hold the registry).
        // - `execute_node` is sound to run once per queued node: every node
        //   job is created with a count on the open run, which keeps the
        //   parameters valid until the job gives it back.
        unsafe { JobRef::new(std::ptr::from_ref(self).cast(), node, execute_node) }
    }

    /// Queues `node`, whose count the caller has already added: the local
    /// deque, the run's ready ring when that is full, or the injector from a
    /// thread outside the pool; a pinned node goes to the run's pinned
    /// queue, which only the run's caller takes from.
    ///
    /// # Safety
    ///
    /// - The calling thread holds a count on the open run.
    /// - `worker`, if any, belongs to `registry`.
    pub(crate) unsafe fn push_node(
        &self,
        node: u32,
        worker: Option<&WorkerThread>,
        registry: &Registry,
    ) {
        // SAFETY:
        // - A count is held (the caller's contract).
        if unsafe { self.is_pinned(node) } {
            // SAFETY:
            // - A count is held, and `params.state` is valid while the run
            //   is open.
            let state = unsafe { &*self.params().state };
            self.pinned_queued.fetch_add(1, Ordering::Relaxed);
            if !state.pinned.push(node) {
                // The queue has a slot per node (`prepare` checked it), so
                // this cannot happen; were it to, the node fails (giving its
                // count back) rather than run on the wrong thread or panic
                // inside a job.
                self.pinned_queued.fetch_sub(1, Ordering::Relaxed);
                self.fail(node, Box::new(PINNED_QUEUE_FULL));
                self.release(1, registry, worker.map(|worker| worker.index));
                return;
            }
            // The caller may be parked: wake it directly (its parker keeps
            // the token, so a wake before it parks is not lost; the push
            // above comes first, so its recheck or its next round sees it).
            if worker.is_none_or(|worker| worker.index != self.seat) {
                registry.wake_seat(self.seat);
            }
            return;
        }
        let job = self.node_job(node);
        match worker {
            Some(worker) => {
                if !worker.push_local(job) {
                    // SAFETY:
                    // - A count is held (the caller's contract).
                    let state = unsafe { &*self.params().state };
                    // The ring has a slot per node (`prepare` checked it);
                    // were it full anyway, the deque takes the job (it may
                    // allocate), rather than a panic inside a job.
                    if !state.ring.push(node) {
                        worker.push(job);
                    }
                }
            }
            None => registry.inject(job),
        }
    }

    /// Completes `node` and gives back its count: records its end, releases
    /// its successors (pushing them all).
    ///
    /// # Safety
    ///
    /// - The caller holds the node's count on the open run, and gives it up:
    ///   after this returns, nothing of the run may be touched.
    /// - `worker`, if any, belongs to `registry`.
    pub(crate) unsafe fn complete_node(
        &self,
        node: u32,
        worker: Option<&WorkerThread>,
        registry: &Registry,
    ) {
        let mut held = 1;
        // SAFETY:
        // - The node's count is held and is one of `held` (the caller's
        //   contract); `worker` belongs to `registry`.
        let kept = unsafe { self.complete_node_holding(node, worker, registry, false, &mut held) };
        debug_assert!(kept.is_none());
        self.release(held, registry, worker.map(|worker| worker.index));
    }

    /// Completes `node`: records its end and releases its successors,
    /// keeping the first one that became ready for the calling thread when
    /// `keep` (a continuation) and pushing the others. Returns the kept
    /// successor.
    ///
    /// `held` is the number of counts the caller holds on the run, the
    /// node's own included (so at least 1). Each pushed successor takes one
    /// of them; when only one is left, more are acquired first (as many as
    /// successors remain, in one step), so the caller keeps at least one
    /// throughout. On return `held >= 1` still: with a kept successor, one of
    /// them is its count (the finished node's, inherited); the rest are the
    /// caller's to use for later pushes or to give back.
    ///
    /// # Safety
    ///
    /// - The caller holds `*held >= 1` counts on the open run, the node's
    ///   own among them.
    /// - `worker`, if any, belongs to `registry`.
    pub(crate) unsafe fn complete_node_holding(
        &self,
        node: u32,
        worker: Option<&WorkerThread>,
        registry: &Registry,
        keep: bool,
        held: &mut u32,
    ) -> Option<u32> {
        debug_assert!(*held >= 1);
        // SAFETY:
        // - The node's count is held (the caller's contract).
        let params = unsafe { self.params() };
        // SAFETY:
        // - `params.state` is valid while the run is open.
        let state = unsafe { &*params.state };
        if params.timed {
            state.timings.end(node);
        }
        let mut kept = None;
        if !params.serial && !self.is_aborted() {
            // SAFETY:
            // - `params.graph` is valid while the run is open.
            let graph = unsafe { &*params.graph };
            let predecessors = graph.predecessor_counts();
            let pending = state.pending_counts();
            let successors = graph.successors(node as usize);
            let mut pushed = 0;
            // A ready successor that fans out, held back from `kept`.
            let mut fanning = None;
            for (i, &next) in successors.iter().enumerate() {
                // A successor whose only predecessor this is is ready now:
                // nobody else touches its count, so it is left alone.
                // Otherwise AcqRel: the last predecessor to finish sees every
                // other predecessor's effects, and hands them to the successor.
                if predecessors[next as usize] != 1
                    && pending.get(next).fetch_sub(1, Ordering::AcqRel) != 1
                {
                    continue;
                }
                // A pinned successor is kept only by the run's caller: any
                // other thread hands it over through the pinned queue.
                if keep
                    && kept.is_none()
                    && (!params.has_pinned
                        || !graph.is_pinned(next as usize)
                        || worker.is_some_and(|worker| worker.index == self.seat))
                {
                    // One-thread nodes first: a successor that fans out is
                    // kept only when no other is ready (see `FanOuts`).
                    if fanning.is_none() && state.fan_outs().get(next) {
                        fanning = Some(next);
                        continue;
                    }
                    kept = Some(next);
                    continue;
                }
                if *held == 1 {
                    // Keep one for this node (or the kept successor):
                    // acquire for every successor that may still be pushed.
                    let more = (successors.len() - i) as u32;
                    self.acquire(more);
                    *held += more;
                }
                *held -= 1;
                // SAFETY:
                // - A count is still held (`*held >= 1`) and one was set
                //   aside for this job; `worker` belongs to `registry` (the
                //   caller's contract).
                unsafe { self.push_node(next, worker, registry) };
                pushed += 1;
            }
            if let Some(next) = fanning {
                if kept.is_none() {
                    kept = Some(next);
                } else {
                    // The loop's acquisitions covered the successors after
                    // this one, not it.
                    if *held == 1 {
                        self.acquire(1);
                        *held += 1;
                    }
                    *held -= 1;
                    // SAFETY:
                    // - As for the pushes above: a count is still held and
                    //   one was set aside for this job.
                    unsafe { self.push_node(next, worker, registry) };
                    pushed += 1;
                }
            }
            registry.notify(pushed);
        }
        kept
    }

    /// Records the end of `node` in the run's timings, when it is timed.
    ///
    /// # Safety
    ///
    /// - The calling thread holds a count on the open run.
    #[inline]
    unsafe fn end_timing(&self, node: u32) {
        // SAFETY:
        // - A count is held (the caller's contract), so the run is open.
        unsafe { end_timing_with(self.params(), node) }
    }

    /// Runs the body of `node` on `worker`.
    ///
    /// # Safety
    ///
    /// - `worker` holds the node's count on the open run.
    unsafe fn run_body(&self, node: u32, worker: &WorkerThread) -> BodyEnd {
        // SAFETY:
        // - The node's count is held (the caller's contract).
        let params = unsafe { self.params() };
        let fan_outs = worker.fan_outs();
        // SAFETY:
        // - The node's count is held (the caller's contract).
        // - `params.body` and `params.call` were erased together from the
        //   run's body, which outlives the run; `cx` belongs to this run.
        let end = unsafe {
            self.run_body_with(params, node, worker, |cx| (params.call)(params.body, cx))
        };
        // A body that waits for its slices runs no other node meanwhile, so
        // the difference is this node's alone. The node's count is still
        // held (a deferred node's by its completion), so the run is open.
        // SAFETY:
        // - `params.state` is valid while the run is open.
        let state = unsafe { &*params.state };
        state.fan_outs().note(node, worker.fan_outs() != fan_outs);
        end
    }

    /// [`run_body`](Self::run_body) with the run's body called through
    /// `call`: the erased call, or the body itself where the caller knows
    /// its type (the serial loop, which then calls it without indirection).
    ///
    /// # Safety
    ///
    /// - `worker` holds the node's count on the open run.
    /// - `params` are this run's ([`params`](Self::params)).
    /// - `call` runs the run's body for the context it is given (the
    ///   context belongs to this run).
    #[inline(always)]
    unsafe fn run_body_with(
        &self,
        params: &RunParams,
        node: u32,
        worker: &WorkerThread,
        call: impl FnOnce(&RawContext) -> NodeOutcome,
    ) -> BodyEnd {
        // SAFETY:
        // - `params.state` is valid while the run is open.
        let state = unsafe { &*params.state };
        if params.timed {
            state.timings.start(node);
        }
        let cx = RawContext {
            slot: self,
            node,
            worker,
            deferred: Cell::new(false),
        };
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            // SAFETY:
            // - `params.graph` is valid while the run is open.
            let graph = unsafe { &*params.graph };
            let span = tracing::info_span!("node", name = graph.name(node as usize), index = node);
            let _entered = span.enter();
            let _user = crate::sync::coarse::user();
            call(&cx)
        }));
        let deferred = cx.deferred.get();
        let payload: Option<Box<dyn Any + Send>> = match (&result, deferred) {
            (Ok(NodeOutcome::Done), false) => return BodyEnd::Complete,
            (Ok(NodeOutcome::Deferred), true) => return BodyEnd::Handed,
            (Ok(NodeOutcome::Done), true) => Some(Box::new(DONE_AFTER_DEFER)),
            (Ok(NodeOutcome::Deferred), false) => Some(Box::new(DEFERRED_WITHOUT_HANDLE)),
            (Err(_), _) => None,
        };
        let payload = payload.unwrap_or_else(|| match result {
            Err(payload) => payload,
            Ok(_) => unreachable!(),
        });
        self.fail(node, payload);
        if deferred {
            BodyEnd::Handed
        } else {
            BodyEnd::Failed
        }
    }

    /// Looks at this run's shared work (its ready ring, and its loose queues
    /// when `loose`) from `worker`; with `take`, runs one unit of it. Returns
    /// whether there was work. `owner` is the run's caller (holding the hold).
    pub(crate) fn visit(
        &self,
        worker: &WorkerThread,
        owner: bool,
        loose: bool,
        take: bool,
    ) -> bool {
        if !owner && !self.try_join() {
            return false;
        }
        // SAFETY:
        // - A count is held: the caller's hold, or the one just joined.
        let params = unsafe { self.params() };
        let mut found = false;
        let mut job = None;
        if owner || !params.serial {
            // SAFETY:
            // - `params.state` is valid while the run is open.
            let state = unsafe { &*params.state };
            // The rings are drained also after a failure: each queued node
            // holds a count, which its job gives back without running it.
            // Pinned nodes first, and only by the caller; before them the
            // work handed to the caller (a pinned batch's finish, which
            // only a pinned node hands over).
            if owner && params.has_pinned {
                if take {
                    if let Some(handed) = self.pop_caller_job() {
                        job = Some(handed);
                        found = true;
                    } else if let Some(node) = state.pinned.pop() {
                        self.pinned_queued.fetch_sub(1, Ordering::Relaxed);
                        job = Some(self.node_job(node));
                        found = true;
                    }
                } else {
                    found = !self.caller_jobs.load(Ordering::Relaxed).is_null()
                        || !state.pinned.is_empty();
                }
            }
            if !found && take {
                if let Some(node) = state.ring.pop() {
                    job = Some(self.node_job(node));
                    found = true;
                }
            } else if !found {
                found = !state.ring.is_empty();
            }
            if !found && loose && !self.is_aborted() {
                // SAFETY:
                // - `params.loose`, when set, is valid while the run is open.
                let tasks = unsafe { params.loose.as_ref() };
                if let Some(tasks) = tasks {
                    found = if take {
                        self.run_loose(tasks)
                    } else {
                        self.loose_pending(tasks)
                    };
                }
            }
        }
        if !owner {
            self.release(1, &worker.registry, Some(worker.index));
        }
        if let Some(job) = job {
            // SAFETY:
            // - The job was just popped (a node from a ring, or a caller
            //   job from its stack): this is its only execution; it
            //   carries its own count.
            unsafe { worker.execute(job) };
        }
        found
    }

    /// Whether `worker` is this run's caller (worker 0 of the run: the
    /// thread its pinned nodes run on).
    #[inline]
    pub(crate) fn is_caller(&self, worker: &WorkerThread) -> bool {
        worker.index == self.seat
    }

    /// Hands `job` to this run's caller through `handoff`: the caller runs
    /// it from its work loop, with the pinned nodes, before anything else,
    /// and is woken for it if it sleeps. For work that must run on the
    /// thread that runs the iteration (a pinned batch's `after_update`).
    ///
    /// # Safety
    ///
    /// - `job` carries a count on the open run (given back when it runs),
    ///   is sound to run once on the caller, and `handoff` stays valid and
    ///   is handed over again by nobody until `job` has run.
    /// - `worker` belongs to this slot's registry and is not the caller.
    pub(crate) unsafe fn hand_to_caller(
        &self,
        handoff: &CallerJob,
        job: JobRef,
        worker: &WorkerThread,
    ) {
        handoff.job.with_mut(|slot| {
            // SAFETY:
            // - Nobody else holds `handoff` until it is pushed below (the
            //   caller's contract), and the caller reads it only after
            //   popping it, which the `Release` push orders after this.
            unsafe { *slot = Some(job) };
        });
        // Counted before the push, like a pinned node: never below what
        // the stack holds.
        self.pinned_queued.fetch_add(1, Ordering::Relaxed);
        let this = std::ptr::from_ref(handoff).cast_mut();
        let mut head = self.caller_jobs.load(Ordering::Relaxed);
        loop {
            handoff.next.store(head, Ordering::Relaxed);
            match self.caller_jobs.compare_exchange_weak(
                head,
                this,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(current) => head = current,
            }
        }
        // The caller may be parked: wake it directly (its parker keeps the
        // token, so a wake before it parks is not lost).
        worker.registry.wake_seat(self.seat);
    }

    /// Takes the latest job handed to the caller. Called by the caller
    /// only, holding its hold.
    fn pop_caller_job(&self) -> Option<JobRef> {
        let mut head = self.caller_jobs.load(Ordering::Acquire);
        loop {
            // SAFETY:
            // - A pushed handoff stays valid until its job has run (the
            //   pusher's contract), which happens only after this pop.
            let handoff = unsafe { head.as_ref() }?;
            // Only this thread pops, so `head` stays on the stack until
            // the exchange below: its `next` is what its push wrote (no
            // ABA), and pushes since only make the exchange fail.
            let next = handoff.next.load(Ordering::Relaxed);
            match self.caller_jobs.compare_exchange_weak(
                head,
                next,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.pinned_queued.fetch_sub(1, Ordering::Relaxed);
                    // SAFETY:
                    // - Written before the push this pop acquired, and not
                    //   written again until the job has run.
                    return handoff.job.with(|job| unsafe { *job });
                }
                Err(current) => head = current,
            }
        }
    }

    /// Whether `node` is pinned to this run's caller.
    ///
    /// # Safety
    ///
    /// - The calling thread holds a count on the open run.
    pub(crate) unsafe fn is_pinned(&self, node: u32) -> bool {
        // SAFETY:
        // - A count is held (the caller's contract).
        let params = unsafe { self.params() };
        // SAFETY:
        // - `params.graph` is valid while the run is open.
        params.has_pinned && unsafe { &*params.graph }.is_pinned(node as usize)
    }

    /// Whether pinned nodes of this run wait for its caller (a hint, read
    /// without holding a count: the caller reads it between jobs).
    #[inline]
    pub(crate) fn pinned_waiting(&self) -> bool {
        self.pinned_queued.load(Ordering::Relaxed) != 0
    }

    fn run_loose(&self, tasks: &LooseShared) -> bool {
        if tasks.has_prioritized()
            && self.take_prioritized_poll(tasks)
            && let Some(task) = tasks.pop_prioritized()
        {
            LooseShared::run_task(task);
            return true;
        }
        if tasks.has_regular()
            && self.window_open(tasks, true)
            && let Some(task) = tasks.pop_regular()
        {
            LooseShared::run_task(task);
            return true;
        }
        false
    }

    fn loose_pending(&self, tasks: &LooseShared) -> bool {
        (tasks.has_prioritized() && self.prioritized_budget_left(tasks))
            || (tasks.has_regular() && self.window_open(tasks, false))
    }

    /// Whether this run may still poll a prioritized task.
    fn prioritized_budget_left(&self, tasks: &LooseShared) -> bool {
        self.prioritized_polls.load(Ordering::Relaxed) < tasks.prioritized_budget()
    }

    /// Takes one poll from the run's prioritized budget; `false` once it is
    /// spent. A poll taken and then not made (another thread popped the
    /// task first) is lost: the budget bounds the polls, it does not
    /// promise them. The overrun is recorded when the run closes
    /// ([`record_overrun_at_close`](Self::record_overrun_at_close)).
    fn take_prioritized_poll(&self, tasks: &LooseShared) -> bool {
        let budget = tasks.prioritized_budget();
        self.prioritized_polls.fetch_add(1, Ordering::Relaxed) < budget
    }

    /// At the close of a run: a run that spent its prioritized budget with
    /// prioritized tasks still queued (one that woke itself included) is an
    /// overrun. Counted here, once per run by the closing caller, because
    /// the thread that took the budget's last poll may have found the
    /// queue empty for a moment (another thread was polling its task).
    fn record_overrun_at_close(&self, tasks: &LooseShared) {
        let budget = tasks.prioritized_budget();
        if tasks.has_prioritized() && self.prioritized_polls.load(Ordering::Relaxed) >= budget {
            tasks.record_overrun(budget);
        }
    }

    /// Whether the regular window of this run is still open; `start` opens it
    /// (the first regular task of a run starts the clock).
    fn window_open(&self, tasks: &LooseShared, start: bool) -> bool {
        let window = tasks.window_nanos();
        if window == 0 {
            return false;
        }
        let now = tasks.now_nanos();
        let mut deadline = self.deadline.load(Ordering::Relaxed);
        if deadline == 0 {
            if !start {
                return true;
            }
            let proposed = now.saturating_add(window).max(1);
            deadline = match self.deadline.compare_exchange(
                0,
                proposed,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => proposed,
                Err(current) => current,
            };
        }
        now < deadline
    }
}

/// Work that only a run's caller may do, handed to it by another thread
/// ([`RunSlot::hand_to_caller`]): the finish of a pinned batch, whose last
/// slice ended on a worker. Embedded in what it finishes (so handing it over
/// allocates nothing) and linked into the run slot's stack while it waits.
pub(crate) struct CallerJob {
    /// The job below this one on the slot's stack.
    next: AtomicPtr<CallerJob>,
    /// The job to run, written by the thread handing it over.
    job: UnsafeCell<Option<JobRef>>,
}

// SAFETY:
// - `job` is written only by the thread handing the job over, before its
//   `Release` push, and read only by the caller after the `Acquire` pop
//   that took it; it is not written again until the job has run.
// - `next` is atomic.
unsafe impl Sync for CallerJob {}

impl CallerJob {
    /// A job not handed over.
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicPtr::new(std::ptr::null_mut()),
            job: UnsafeCell::new(None),
        }
    }
}

enum BodyEnd {
    /// Completed on return.
    Complete,
    /// A completion handle owns the node's completion.
    Handed,
    /// Failed without a handle: the node is over.
    Failed,
}

/// Runs a node job: the body, then the completion, then the kept successor,
/// and so on (a continuation loop).
///
/// # Safety
///
/// - `data` is a [`RunSlot`] of `worker`'s registry and the job holds the
///   node's count on its open run (see [`RunSlot::node_job`]).
pub(crate) unsafe fn execute_node(data: *const (), node: u32, worker: &WorkerThread) {
    // SAFETY:
    // - `data` is a `RunSlot` in the registry `worker` keeps alive.
    let slot = unsafe { &*data.cast::<RunSlot>() };
    let registry = &*worker.registry;
    let mut node = node;
    // Counts this thread holds on the run: the running node's, and spare
    // ones (a finished node's count that no successor inherited), used for
    // later pushes instead of touching the shared word. Given back, all at
    // once, when this loop ends.
    let mut held: u32 = 1;
    loop {
        if slot.is_aborted() {
            // Nothing new starts after a failure: drop the job.
            slot.release(held, registry, Some(worker.index));
            return;
        }
        // SAFETY:
        // - This job holds the node's count.
        match unsafe { slot.run_body(node, worker) } {
            BodyEnd::Complete => {
                // SAFETY:
                // - `held` counts are held, the node's among them; `worker`
                //   belongs to `registry`.
                let kept = unsafe {
                    slot.complete_node_holding(node, Some(worker), registry, true, &mut held)
                };
                if let Some(next) = kept {
                    // A run's caller with pinned nodes waiting for it hands
                    // `next` to the others and goes back to its work loop,
                    // which takes the pinned nodes first: a pinned node
                    // waits at most for the node running when it got ready.
                    // SAFETY:
                    // - A count is held (`held >= 1`).
                    if worker.pinned_waiting() && !unsafe { slot.is_pinned(next) } {
                        // Keep a count of our own while pushing.
                        if held == 1 {
                            slot.acquire(1);
                            held += 1;
                        }
                        // SAFETY:
                        // - `held >= 2` counts are held, `next`'s among
                        //   them, which passes to the pushed job.
                        unsafe { slot.push_node(next, Some(worker), registry) };
                        held -= 1;
                        registry.notify(1);
                        slot.release(held, registry, Some(worker.index));
                        return;
                    }
                    // The finished node's count passes to `next`.
                    node = next;
                    continue;
                }
                // No continuation: every held count is spare. Run the job on
                // top of the local deque next if it is a node of this run
                // (it brings its own count), keeping the spare counts; a
                // caller with pinned nodes waiting takes those first.
                // SAFETY:
                // - A count is held (`held >= 1`).
                if !unsafe { slot.params() }.serial
                    && !worker.pinned_waiting()
                    && let Some(job) = worker.pop_local()
                {
                    if let Some(next) = job.node_of(slot) {
                        node = next;
                        held += 1;
                        continue;
                    }
                    // Another run's job or a batch helper: back on top, for
                    // the work loop, once the counts are given back.
                    worker.push(job);
                }
                slot.release(held, registry, Some(worker.index));
                return;
            }
            BodyEnd::Handed => {
                // The completion took its own count in `defer`; these are the job's.
                slot.release(held, registry, Some(worker.index));
                return;
            }
            BodyEnd::Failed => {
                // SAFETY:
                // - The node's count is still held.
                unsafe { slot.end_timing(node) };
                slot.release(held, registry, Some(worker.index));
                return;
            }
        }
    }
}

/// Runs `node` of a serial run on the run's caller, under the caller's
/// hold: no count is taken or given back for it (nothing else runs, and the
/// caller waits for a deferred node before the next). Whether the node
/// deferred (its completion holds a count of its own until it finishes).
///
/// # Safety
///
/// - `slot` is a serial run, open, of `worker`'s registry; `worker` is its
///   caller and holds the hold.
/// - `body` is the body the run was opened with (called here directly,
///   not through the run's erased call).
/// - `params` are the run's ([`RunSlot::params`], read once by the serial
///   loop: the hold keeps them in place for the whole run).
#[inline]
pub(crate) unsafe fn execute_serial_node<'scope, F>(
    slot: &RunSlot,
    params: &RunParams,
    node: u32,
    worker: &WorkerThread,
    body: &F,
) -> bool
where
    F: Fn(&NodeContext<'scope>) -> NodeOutcome + Sync,
{
    // SAFETY:
    // - The caller's hold stands in for the node's count.
    // - `body` is the run's body (the caller's contract), so the context
    //   handed to it belongs to the run whose scope is `'scope`.
    let end = unsafe {
        slot.run_body_with(params, node, worker, |cx| {
            call_body::<F>(std::ptr::from_ref(body).cast(), cx)
        })
    };
    match end {
        BodyEnd::Handed => true,
        BodyEnd::Complete | BodyEnd::Failed => {
            // SAFETY:
            // - The hold is held, so the run is open and `params` its own.
            unsafe { end_timing_with(params, node) };
            false
        }
    }
}

/// Records the end of `node` in the run's timings, when it is timed.
///
/// # Safety
///
/// - `params` are those of an open run on which the calling thread holds a
///   count.
#[inline]
unsafe fn end_timing_with(params: &RunParams, node: u32) {
    if params.timed {
        // SAFETY:
        // - `params.state` is valid while the run is open (the caller's
        //   contract).
        unsafe { &*params.state }.timings.end(node);
    }
}

/// The lifetime-free part of a [`NodeContext`].
pub(crate) struct RawContext {
    slot: *const RunSlot,
    node: u32,
    worker: *const WorkerThread,
    deferred: Cell<bool>,
}

/// What a node body gets: which node it is, which thread runs it, and the
/// means to complete later.
///
/// `'scope` is the run's scope: everything borrowed for it outlives the run,
/// so work that finishes after the body returns (a batch) may use it. It is
/// invariant, so a body cannot pass off a local as living that long.
#[repr(transparent)]
pub struct NodeContext<'scope> {
    raw: RawContext,
    _scope: PhantomData<fn(&'scope ()) -> &'scope ()>,
}

impl<'scope> NodeContext<'scope> {
    /// The index of the running node.
    pub fn node(&self) -> usize {
        self.raw.node as usize
    }

    /// The seat of the running thread (0: the thread that called `run`, when
    /// it is the only run on the pool).
    pub fn worker_index(&self) -> usize {
        self.worker().index
    }

    /// Threads that may work on this run at once (1 for the serial executor).
    pub fn thread_count(&self) -> usize {
        if self.is_serial() {
            1
        } else {
            self.worker().registry.thread_count()
        }
    }

    /// Whether the run is the serial executor's.
    pub fn is_serial(&self) -> bool {
        // SAFETY:
        // - The context exists only during the node's body, while the node's
        //   count is held.
        unsafe { self.slot().params() }.serial
    }

    /// Takes this node's completion: the node is complete when the returned
    /// handle is completed (or dropped), not when the body returns. The body
    /// must then return [`NodeOutcome::Deferred`].
    ///
    /// # Panics
    ///
    /// When called twice for one node.
    pub fn defer(&self) -> Completion {
        let (slot, node) = self.defer_raw();
        Completion {
            slot,
            node,
            registry: Arc::clone(&self.worker().registry),
        }
    }

    /// Whether the node already took its completion.
    pub(crate) fn is_deferred(&self) -> bool {
        self.raw.deferred.get()
    }

    /// Marks the node deferred and adds the completion's count.
    pub(crate) fn defer_raw(&self) -> (NonNull<RunSlot>, u32) {
        assert!(
            !self.raw.deferred.replace(true),
            "NodeContext::defer called twice for one node"
        );
        self.slot().acquire(1);
        (NonNull::from(self.slot()), self.raw.node)
    }

    pub(crate) fn worker(&self) -> &WorkerThread {
        // SAFETY:
        // - The worker runs the body that borrows this context, so it
        //   outlives the borrow.
        unsafe { &*self.raw.worker }
    }

    pub(crate) fn slot(&self) -> &RunSlot {
        // SAFETY:
        // - The slot lives in the registry, which the running worker holds.
        unsafe { &*self.raw.slot }
    }
}

impl fmt::Debug for NodeContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeContext")
            .field("node", &self.node())
            .field("worker_index", &self.worker_index())
            .finish_non_exhaustive()
    }
}

/// The completion of a deferred node: completing it (or dropping it)
/// releases the node's successors, from any thread.
///
/// The run that the node belongs to does not return until every completion
/// is completed, so hold it only as long as the node's work takes.
pub struct Completion {
    slot: NonNull<RunSlot>,
    node: u32,
    registry: Arc<Registry>,
}

// SAFETY:
// - The slot is `Sync` and lives in the registry, which the handle keeps
//   alive; the handle holds a count on the run, so completing it from any
//   thread is sound (`complete_node` works from outside the pool through
//   the injector).
unsafe impl Send for Completion {}
// SAFETY:
// - `&Completion` only reads `node`.
unsafe impl Sync for Completion {}

impl Completion {
    /// The node this completes.
    pub fn node(&self) -> usize {
        self.node as usize
    }

    /// Completes the node (same as dropping the handle).
    pub fn complete(self) {}
}

impl Drop for Completion {
    fn drop(&mut self) {
        let _machinery = crate::sync::coarse::machinery();
        let worker = WorkerThread::current_of(&self.registry);
        // SAFETY:
        // - The slot lives in the registry this handle keeps alive.
        let slot = unsafe { self.slot.as_ref() };
        // SAFETY:
        // - The handle holds the count `defer` added, and gives it up here;
        //   `worker` belongs to `registry` (`current_of`).
        unsafe { slot.complete_node(self.node, worker, &self.registry) };
    }
}

impl fmt::Debug for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completion")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}
