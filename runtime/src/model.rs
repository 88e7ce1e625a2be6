//! Model-check your own frame with [loom](https://docs.rs/loom): run a
//! world's iterations under every interleaving of its threads that the plan
//! permits.
//!
//! Build your crate's tests with `--cfg loom` (which switches sluice, its
//! collections and [`sluice::sync`](crate::sync) to loom's primitives) and
//! wrap the test's body in [`model`]:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release --test my_loom_test
//! ```
//!
//! ```
//! use sluice::sync::atomic::{AtomicU32, Ordering};
//! use sluice::World;
//!
//! struct Counter(AtomicU32);
//!
//! fn add_one(counter: &Counter) {
//!     counter.0.fetch_add(1, Ordering::Relaxed);
//! }
//!
//! sluice::model(|| {
//!     let mut world = World::new();
//!     world.insert(Counter(AtomicU32::new(0)));
//!     world.add_system(add_one);
//!     world.add_system(sluice::NodeBuilder::new("add_one_again").system(add_one));
//!     world.run_iteration().unwrap();
//!     assert_eq!(world.get::<Counter>().unwrap().0.load(Ordering::Relaxed), 2);
//! });
//! ```
//!
//! Without `--cfg loom`, [`model`] runs the closure once, on real threads:
//! the same test is an ordinary test in an ordinary build.
//!
//! # What is explored
//!
//! Under `--cfg loom` a world built inside the model runs on a pool of loom
//! threads: the calling thread plus [`Builder::threads`]` - 1` workers (2 in
//! all by default), one run at a time (a pool's default under loom; set
//! [`max_concurrent_runs`](crate::ThreadPoolBuilder::max_concurrent_runs)
//! to model worlds sharing a pool), and the
//! [`Adaptive`](crate::ExecutorKind::Adaptive) executor always chooses that
//! pool. Every atomic, lock and cell of the executor (`exec/`), of sluice's
//! collections and of your services (through [`sluice::sync`](crate::sync))
//! is loom's.
//!
//! loom runs one thread at a time. It may switch to another thread
//!
//! - at each operation of your code on a loom primitive: the atomics,
//!   locks, `Arc` and threads of [`sluice::sync`](crate::sync), and
//!   sluice's collections used from your code; for each of your atomic
//!   loads it also explores every value the memory model lets it read;
//! - where your code starts or ends: each node body, batch slice
//!   ([`process_batch`](crate::BatchProcessor::process_batch), and
//!   `before_update`/`after_update`), parallel-query slice
//!   ([`World::add_par_query`](crate::World::add_par_query),
//!   [`Query::par_for_each`](crate::Query::par_for_each)) and loose-task
//!   poll;
//! - where sluice's machinery blocks: a thread parking, waiting for a lock
//!   another holds, yielding, joining.
//!
//! Between those points sluice's own machinery (the executor's queues and
//! counts, its sleep protocol, batch and slice claims, a pool starting and
//! stopping) runs each step without a preemption inside it, and each of its
//! atomic loads reads one value loom allows rather than each in turn. That
//! is what keeps a world's model small; the machinery's own correctness
//! under every interleaving is what sluice's models of the executor check,
//! with [`Builder::explore_machinery`]`(true)`, which you can ask for too.
//!
//! So nodes with no edge between them run on different threads (the
//! executor's sleep protocol makes an idle thread see every ready node and
//! slice helper published: it is woken for it, or finds it before it
//! parks) and their operations interleave in every order the preemption
//! bound allows;
//! ordered nodes never overlap (a node starts only after the release of
//! every predecessor, which loom checks as a happens-before edge: an
//! unordered access to a cell between them would be a race). Batch slices
//! and parallel-query slices are helper jobs on the same pool, so the
//! slices of one node overlap each other and other nodes. A loose task is
//! polled beside a node when a thread woken for that run's work finds it.
//!
//! What the default leaves out, and `explore_machinery(true)` adds:
//! preemptions inside the machinery's steps, and a thread that was not
//! woken noticing work by chance (an idle thread's first look at a run
//! reads one value; natively a worker still spinning from the last
//! iteration could poll a loose task of a run that woke nobody, as in a
//! run of a single node). Which of two threads takes a given node is
//! explored only as far as it changes what overlaps.
//!
//! The preemption bound is [`DEFAULT_PREEMPTION_BOUND`] (2) unless
//! `LOOM_MAX_PREEMPTIONS` says otherwise, and [`Builder::preemption_bound`]
//! overrides both: an execution is explored when at most that many of its
//! switches interrupt a thread that could have gone on (a switch where a
//! thread blocks is free). Bugs that need two threads to interleave once
//! or twice are found at 2.
//!
//! loom reports a data race on a [`sync::UnsafeCell`](crate::sync::UnsafeCell)
//! (two accesses, one a write, not ordered by happens-before: accesses are
//! checked, not switch points), a deadlock, a leak of a loom object, and
//! any panic in any explored execution: a failed `assert!` in your model,
//! a node's panic that [`run_iteration`](crate::World::run_iteration)
//! returns and your closure passes on (`?`, `unwrap`), and a loose task's
//! panic, even when its [`Task`](crate::exec::Task) is never awaited.
//!
//! # What is a stand-in
//!
//! - **The work-stealing deques and the injector** (crossbeam-deque) and
//!   **the parker** (crossbeam-utils) have no loom support. Under loom they
//!   are a loom `Mutex<VecDeque>` with an atomic length, and a loom
//!   `Mutex<bool>` + `Condvar` token: linearizable, with a push happening
//!   before the pop or steal that takes the job, and nothing stronger (see
//!   `runtime/src/exec/README.md`, "Loom models"). Whether crossbeam's
//!   lock-free deque itself is correct is not checked.
//! - **Spinning.** Idle threads park at once instead of spinning 32 rounds,
//!   and one that sees work it cannot take yet yields to loom (where a real
//!   thread would spin). A local deque holds 48 ready nodes, as natively.
//! - **The world's own factories** (`sluice::plan`, `sluice::execution`)
//!   run serially on the calling thread before your nodes instead of as
//!   vertices beside them: they touch only the world's private services,
//!   so no node of yours overlaps them and running them first is one of
//!   the orders the plan permits. (A plan that orders one of your nodes
//!   before them, an exclusive node placed first, keeps them as vertices.)
//! - **Not loom's, so invisible to it:** the world's handle on its current
//!   plan (arc-swap), the loose tasks' wakers (async-task), the graph ids and
//!   std atomics or locks in your own code. Each of their operations runs
//!   without a loom preemption inside it; races through them are not found.
//! - **Threads the model does not know.** loom runs its threads one at a
//!   time on the test's OS thread. A node that starts an OS thread
//!   (`std::thread::spawn`) runs that thread for real, outside loom, which
//!   neither explores it nor sees its memory accesses; plain work on it is
//!   fine, but a loom primitive used there (a `sluice::sync` type, a
//!   collection, a `World`) panics with loom's "cannot access Loom
//!   execution state from outside a Loom model" (a `World` is refused
//!   with the message below), which `join` hands back to the node. While
//!   the node waits for it no model thread runs: an OS thread that waits
//!   for a model thread in turn would hang the test, so after
//!   [`Builder::stall_warning`] (10 s) without a node, slice or task
//!   starting or ending the model says on stderr, and in its failure
//!   report, that a model thread seems blocked outside loom. Start model
//!   threads with [`sync::thread`](crate::sync::thread) instead. The check that a
//!   non-`Send` service stays on its thread compares OS threads, so under
//!   loom it always passes.
//! - **Time** is the OS clock; loom does not explore timeouts.
//!
//! # Cost, and keeping a model small
//!
//! loom re-runs the closure once per explored execution, world
//! construction and planning included, and an execution of a small world
//! takes a fraction of a millisecond in a release build.
//! [`Builder::explore`] returns how many there were. At the default bound
//! two unordered systems explore 18 executions; a world of four systems
//! and a batch node of two slices, 76 (well under a second, each of the
//! models in `runtime/tests/loom_user.rs` included). With the machinery
//! explored too the same two systems take 8,249 executions (seconds), and
//! a parallel query of two rows about 80,000 (tens of seconds).
//!
//! To keep a model small:
//!
//! - run one iteration: the second explores the same plan again after the
//!   boundary, multiplying the executions;
//! - spawn a few entities: two rows with `rows_per_slice` 1 give two
//!   slices, enough for them to overlap;
//! - register only the systems whose interaction is in question (each
//!   pair of unordered nodes multiplies what is explored);
//! - keep the default two threads (a third thread multiplies the
//!   executions; [`Builder::threads`]`(3)` finds three-way bugs);
//! - build with `--release`.
//!
//! To look deeper, raise the bound: `LOOM_MAX_PREEMPTIONS=3` in the
//! environment, or [`Builder::preemption_bound`]`(3)` for one model; each
//! step multiplies the executions (two systems: 5, 18, 53 and 107
//! executions at bounds 1 to 4; three systems on two threads 26, on three
//! 740). A model that never finishes an iteration (a system spinning on
//! a value an ordered-after system would set, say) is stopped by loom with
//! "Model exceeded maximum number of branches" ([`Builder::max_branches`]);
//! one whose threads all wait is reported as a deadlock.
//!
//! # When loom finds something
//!
//! The panic comes out of [`model`] (or [`Builder::check`]), so
//! `std::panic::catch_unwind` or `#[should_panic]` can expect it. Before it
//! does, [`model`] prints the failing execution's interleaving as sluice saw
//! it: which thread started and finished which node and slice and polled
//! which task, in order, with the [`note`]s the model made. Set
//! `LOOM_LOG=trace` (and `LOOM_LOCATION=1`) for loom's own log of every
//! operation (`LOOM_LOG=info` prints how many executions it explored).
//!
//! # Building outside a model
//!
//! Under `--cfg loom`, loom's primitives exist only inside a model: a
//! [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) outside
//! [`model`] returns an error saying so, and [`World::new`](crate::World::new)
//! panics with it, instead of failing somewhere inside loom. (Worlds and pools
//! made inside `loom::model` directly count as outside: use this module's
//! [`model`], which also sets the thread count and the bound.)

use std::fmt;
use std::time::Duration;

#[cfg(loom)]
mod trace;
#[cfg(loom)]
mod watchdog;

/// The preemption bound [`model`] explores at unless told otherwise.
pub const DEFAULT_PREEMPTION_BOUND: usize = 2;

/// Threads in a world's pool inside a model (the caller included) unless
/// [`Builder::threads`] says otherwise.
pub const DEFAULT_THREADS: usize = 2;

/// How long an execution may go without a node, slice or task starting or
/// ending before [`model`] says on stderr that a model thread seems blocked
/// outside loom (see [`Builder::stall_warning`]).
pub const DEFAULT_STALL_WARNING: Duration = Duration::from_secs(10);

/// The most branches (scheduling choices and atomic loads) one execution
/// may take before loom gives up on it; loom's own default (1 000) is too
/// few for a world's iteration.
pub const DEFAULT_MAX_BRANCHES: usize = 100_000;

/// Runs `f` under every interleaving loom explores at the default bound
/// (see the [module docs](self)); without `--cfg loom`, runs it once.
///
/// # Panics
/// When an explored execution panics, races or deadlocks: the first such
/// failure, after its interleaving is printed.
pub fn model<F, R>(f: F)
where
    F: Fn() -> R + Sync + Send + 'static,
    R: Outcome,
{
    Builder::new().check(f);
}

/// What a model's closure returns: `()`, or a `Result` whose `Err` fails
/// the execution (so the closure can use `?` on
/// [`run_iteration`](crate::World::run_iteration)).
pub trait Outcome {
    /// Panics when the execution failed.
    fn check(self);
}

impl Outcome for () {
    fn check(self) {}
}

impl<E: fmt::Display> Outcome for Result<(), E> {
    #[track_caller]
    fn check(self) {
        if let Err(error) = self {
            panic!("{error}");
        }
    }
}

/// Adds `what` to the printed interleaving of the execution now running
/// (a value a system read, say); nothing without `--cfg loom` or outside
/// [`model`].
pub fn note(what: impl fmt::Display) {
    #[cfg(loom)]
    trace::note(&what);
    #[cfg(not(loom))]
    let _ = what;
}

/// Configures a [`model`] run.
#[derive(Debug, Clone)]
pub struct Builder {
    preemption_bound: usize,
    threads: usize,
    max_branches: usize,
    explore_machinery: bool,
    stall: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// The defaults: preemption bound `LOOM_MAX_PREEMPTIONS` or
    /// [`DEFAULT_PREEMPTION_BOUND`]; [`DEFAULT_THREADS`] per pool;
    /// `LOOM_MAX_BRANCHES` or [`DEFAULT_MAX_BRANCHES`].
    ///
    /// # Panics
    /// When one of those variables is set but is not a number.
    pub fn new() -> Self {
        Self {
            preemption_bound: env_number("LOOM_MAX_PREEMPTIONS", DEFAULT_PREEMPTION_BOUND),
            threads: DEFAULT_THREADS,
            max_branches: env_number("LOOM_MAX_BRANCHES", DEFAULT_MAX_BRANCHES),
            explore_machinery: false,
            stall: DEFAULT_STALL_WARNING,
        }
    }

    /// Explores interleavings with at most `bound` preemptions each.
    pub fn preemption_bound(mut self, bound: usize) -> Self {
        self.preemption_bound = bound;
        self
    }

    /// Pools built inside the model without a thread count
    /// ([`World::new`](crate::World::new), `ThreadPool::new(0)`) get
    /// `threads` threads, the caller included (at least 1; loom runs at
    /// most 5 threads in all, the model's own included).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Lets one execution take up to `branches` scheduling choices before
    /// loom stops it as one that never finishes.
    pub fn max_branches(mut self, branches: usize) -> Self {
        self.max_branches = branches;
        self
    }

    /// Also preempts threads inside sluice's own machinery (the executor's
    /// queues, counts and sleep protocol, batch and slice claims), and
    /// explores every value its atomic loads may read, as sluice's own
    /// models of the executor do. What that adds for your code (see
    /// [What is explored](self#what-is-explored)) is a thread noticing
    /// work nobody woke it for; it costs two to four orders of magnitude
    /// more executions (`false` by default).
    pub fn explore_machinery(mut self, explore: bool) -> Self {
        self.explore_machinery = explore;
        self
    }

    /// Under loom, how long one execution may go without a node, slice or
    /// task starting or ending before the model says on stderr (and in its
    /// failure report) that a model thread seems blocked outside loom:
    /// loom runs every model thread on one OS thread, so one blocked on an
    /// OS thread, a std lock or a sleep stops them all
    /// ([`DEFAULT_STALL_WARNING`] by default). Nothing without loom.
    pub fn stall_warning(mut self, stall: Duration) -> Self {
        self.stall = stall;
        self
    }

    /// The preemption bound this builder explores at.
    pub fn bound(&self) -> usize {
        self.preemption_bound
    }

    /// Runs `f` under every interleaving loom explores with these settings
    /// (once, without `--cfg loom`).
    ///
    /// # Panics
    /// As [`model`].
    pub fn check<F, R>(&self, f: F)
    where
        F: Fn() -> R + Sync + Send + 'static,
        R: Outcome,
    {
        self.explore(f);
    }

    /// Runs `f` as [`check`](Self::check) does and returns how many
    /// executions were explored (1 without `--cfg loom`): the size of the
    /// model, for a test that keeps it small.
    ///
    /// # Panics
    /// As [`model`].
    pub fn explore<F, R>(&self, f: F) -> usize
    where
        F: Fn() -> R + Sync + Send + 'static,
        R: Outcome,
    {
        #[cfg(loom)]
        return trace::check(
            &trace::Settings {
                bound: self.preemption_bound,
                threads: self.threads,
                max_branches: self.max_branches,
                explore_machinery: self.explore_machinery,
                stall: self.stall,
            },
            move || {
                f().check();
            },
        );
        #[cfg(not(loom))]
        {
            f().check();
            1
        }
    }
}

fn env_number(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("sluice::model: {name}={value:?} is not a number")),
        Err(_) => default,
    }
}

/// Inside [`model`] (under loom): the thread count for pools built without
/// one. `None` outside.
#[cfg(loom)]
pub(crate) fn model_threads() -> Option<usize> {
    trace::model_threads()
}

#[cfg(loom)]
pub(crate) use trace::{Span, coarse_machinery, task_panicked};
