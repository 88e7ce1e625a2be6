//! [`for_each_slice`]: a running body fans slices of work out over its pool
//! and returns when all of them are done, without ever waiting on a slice
//! that has not started.
//!
//! The protocol (the help-first half of rayon's `join`, for many slices):
//!
//! 1. The caller pushes up to `threads - 1` helper jobs onto its local deque
//!    (never the injector: a job it cannot take back could sit behind other
//!    work) and wakes sleepers. `outstanding` counts the jobs pushed.
//! 2. The caller and every helper that starts claim runs of slices from
//!    `next` (guided self-scheduling, as batch nodes do) until none is left.
//! 3. The caller takes its own helpers that nobody stole back off the top of
//!    its deque (LIFO: they are above anything pushed before), uncounting
//!    each; a stolen helper is already running (a steal hands the job
//!    straight to the thief), and only finishes slices it claimed.
//! 4. The caller spins until `outstanding` is 0: a helper's decrement is its
//!    last touch of the scope (release), the caller's read acquires it, so
//!    the scope on the caller's stack outlives every use.
//!
//! A slice that panics poisons the scope (the rest are skipped) and its
//! payload is resumed on the caller once every helper has left. Nothing is
//! allocated unless a slice panics. `tests/loom_slices.rs` model-checks the
//! protocol.
//!
//! Each run of slices records at the caller's place ([`SliceRecording`],
//! taken before the fan-out), whichever thread runs it: what a slice records
//! for the boundary belongs to the node that called, in slice order. A
//! fan-out inside a slice orders its slices inside that slice's place, up
//! to `recording::LEVELS` deep; a deeper one runs its slices in order on
//! its caller's thread, so records keep the order of the nested loops at
//! any depth.
//!
//! Underneath, the caller and each helper are one *runner* each: a call of
//! the runner body ([`for_each_slice_runs`]) that pulls its runs of slices
//! from [`SliceRuns`], so state a runner makes (a query's
//! `par_for_each_init`) lives across every run that runner claims.

use std::any::Any;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

use crossbeam_utils::CachePadded;

use super::clock::Ticks;
use super::job::JobRef;
use super::pool::WorkerThread;
use crate::recording::{Recording, SliceRecording};
use crate::sync::{self, AtomicBool, AtomicUsize, Lock, Ordering, PoisonError};

/// The state one [`for_each_slice`] call shares with its helpers.
///
/// Invariants: `next` is the first slice nobody claimed (it only grows,
/// and may pass `slices`); `outstanding` counts the helper jobs pushed that
/// have neither finished nor been taken back; once `poisoned` is set no new
/// slice starts, and `panic` holds the first payload.
struct Scope<'a> {
    next: CachePadded<AtomicUsize>,
    outstanding: CachePadded<AtomicUsize>,
    slices: usize,
    /// How many threads claim (for the guided claim size).
    claimers: usize,
    poisoned: AtomicBool,
    panic: Lock<Option<Box<dyn Any + Send>>>,
    runner: &'a (dyn Fn(&mut SliceRuns<'_>) + Sync),
    /// The caller's recording, entered around each run of slices.
    recording: SliceRecording,
    /// When the helpers were pushed, while the pool measures idle time
    /// (0 otherwise): a helper's wait to be taken is its wake-up latency.
    pushed_at: Ticks,
}

impl Scope<'_> {
    /// Claims the next run of slices, unless a slice panicked.
    fn claim(&self) -> Option<Range<usize>> {
        if self.poisoned.load(Ordering::Relaxed) {
            return None;
        }
        claim_guided(&self.next, self.slices, self.claimers)
    }

    /// Runs the runner, which claims and runs slices until none is left,
    /// catching a panic (after which nobody claims again).
    fn work(&self) {
        let mut runs = SliceRuns {
            claims: Claims::Shared(self),
            recording: self.recording,
            entered: None,
        };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (self.runner)(&mut runs))) {
            self.poisoned.store(true, Ordering::Relaxed);
            let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
            first.get_or_insert(payload);
        }
    }

    /// A helper job: works, then leaves (its last touch of the scope).
    ///
    /// # Safety
    ///
    /// - `data` is a `Scope` whose caller waits until `outstanding` is 0,
    ///   and this job holds one of its counts.
    unsafe fn helper(data: *const (), _: u32, worker: &WorkerThread) {
        // SAFETY:
        // - The caller keeps the scope alive until this job's decrement
        //   below (it waits for `outstanding` to reach 0).
        let this = unsafe { &*data.cast::<Self>() };
        if this.pushed_at != 0 {
            let idle = &worker.registry.idle;
            idle.helper_starts(this.pushed_at);
            if this.next.load(Ordering::Relaxed) >= this.slices {
                idle.helper_found_nothing(this.pushed_at);
            }
        }
        this.work();
        this.outstanding.fetch_sub(1, Ordering::Release);
    }

    /// Whether `job` is one of this scope's helpers.
    fn owns(&self, job: &JobRef) -> bool {
        job.data_is(ptr::from_ref(self).cast())
    }
}

/// The runs of slices one runner of a [`for_each_slice_runs`] call claims,
/// in claim order: an iterator of slice ranges. While the runner works on a
/// run (until it asks for the next one), what it records for the boundary
/// lands in that run's place.
pub(crate) struct SliceRuns<'s> {
    claims: Claims<'s>,
    recording: SliceRecording,
    /// The place of the run being worked on, and (under a model) the user
    /// code it runs, which loom may preempt.
    entered: Option<(Option<Recording>, sync::coarse::Section)>,
}

/// Where a runner's runs come from.
enum Claims<'s> {
    /// Every slice in one run, on the calling thread alone (taken once).
    All(Option<Range<usize>>),
    /// Claimed from the scope shared with the helpers.
    Shared(&'s Scope<'s>),
}

impl Iterator for SliceRuns<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        // Leave the previous run's place before claiming the next one.
        self.entered = None;
        let claimed = match &mut self.claims {
            Claims::All(all) => all.take(),
            Claims::Shared(scope) => scope.claim(),
        }?;
        self.entered = Some((self.recording.enter(claimed.start), sync::coarse::user()));
        Some(claimed)
    }
}

/// Claims the next run of `slices` from `next`, guided self-scheduling: a
/// share of what is left (at least one slice) for each of `claimers`, so a
/// thread takes few, long, contiguous runs early and short ones near the
/// end for balance. One claim per slice would bounce `next` (and the
/// neighbouring results a slice writes) between the cores on every slice.
pub(crate) fn claim_guided(
    next: &AtomicUsize,
    slices: usize,
    claimers: usize,
) -> Option<Range<usize>> {
    let mut first = next.load(Ordering::Relaxed);
    loop {
        if first >= slices {
            return None;
        }
        let count = ((slices - first) / (2 * claimers)).max(1);
        match next.compare_exchange_weak(first, first + count, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => return Some(first..first + count),
            Err(actual) => first = actual,
        }
    }
}

/// The number of threads of the pool running the current thread's body
/// (1 outside a pool).
pub(crate) fn current_thread_count() -> usize {
    WorkerThread::current().map_or(1, |worker| worker.registry.thread_count())
}

/// Runs `body` over the slice indices `0..slices`, each index exactly once,
/// in runs (`body(3..5)` covers slices 3 and 4), on the current thread and,
/// when called from a body running on a pool with other threads, on the
/// threads that are idle. Returns when every slice is done.
///
/// A panic in `body` stops the slices not yet started and is resumed here
/// once every slice in flight is done. Allocates nothing (unless a slice
/// panics).
///
/// Called from a world's node, what the slices record for the boundary
/// (`Commands`, `Publish`, `Append`) is the node's, whichever thread runs
/// them: it lands in slice order, as from a sequential loop, and not at
/// all if the node fails. Fan-outs nest (a `for_each_slice` inside a slice
/// of another, or of a parallel query): records land in the order of the
/// nested loops, at any depth. Two levels of fan-out run in parallel; a
/// third, inside those, runs its slices in order on the thread that calls
/// it.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let sum = AtomicUsize::new(0);
/// sluice::exec::for_each_slice(10, &|slices| {
///     sum.fetch_add(slices.sum::<usize>(), Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 45);
/// ```
pub fn for_each_slice(slices: usize, body: &(dyn Fn(Range<usize>) + Sync)) {
    for_each_slice_runs(slices, &|runs| runs.for_each(body));
}

/// [`for_each_slice`] by runner: `runner` is called once on the current
/// thread and once in each helper that starts, and pulls the runs of slices
/// it claims from its [`SliceRuns`] (every index exactly once across all of
/// them), so what a runner makes before its loop serves every run it takes.
/// Without helpers (outside a pool, one thread, one slice) the one runner
/// gets `0..slices` in one run; with none, no runner is called.
pub(crate) fn for_each_slice_runs(slices: usize, runner: &(dyn Fn(&mut SliceRuns<'_>) + Sync)) {
    let _machinery = sync::coarse::machinery();
    let worker = WorkerThread::current();
    let threads = current_thread_count();
    let helpers = (threads - 1).min(slices.saturating_sub(1));
    let recording = SliceRecording::take();
    // A fan-out nested deeper than a place can order runs as the loop it
    // stands for, in order on this thread.
    let helpers = if recording.runs_in_order() {
        0
    } else {
        helpers
    };
    let (Some(worker), true) = (worker, helpers > 0) else {
        if slices > 0 {
            runner(&mut SliceRuns {
                claims: Claims::All(Some(0..slices)),
                recording,
                entered: None,
            });
        }
        return;
    };
    let scope = Scope {
        next: CachePadded::new(AtomicUsize::new(0)),
        outstanding: CachePadded::new(AtomicUsize::new(0)),
        slices,
        claimers: helpers + 1,
        poisoned: AtomicBool::new(false),
        panic: Lock::new(None),
        runner,
        recording,
        pushed_at: worker.registry.idle.stamp(),
    };
    let mut pushed = 0;
    for _ in 0..helpers {
        // Counted before the job can run (and uncount itself).
        scope.outstanding.fetch_add(1, Ordering::Relaxed);
        // SAFETY:
        // - The scope outlives the job: this function returns only once
        //   `outstanding` is back to 0, after the job's last touch.
        // - `Scope::helper` is sound to call once on any pool thread with
        //   the count just taken.
        let job = unsafe { JobRef::new(ptr::from_ref(&scope).cast(), 0, Scope::helper) };
        if !worker.push_local(job) {
            scope.outstanding.fetch_sub(1, Ordering::Relaxed);
            break;
        }
        pushed += 1;
    }
    if pushed > 0 {
        worker.note_fan_out();
    }
    if scope.pushed_at != 0 {
        worker.registry.idle.helpers_pushed(pushed);
    }
    worker.registry.notify(pushed);
    scope.work();
    // Take back the helpers nobody stole: they are on top of the deque.
    while let Some(job) = worker.pop_local() {
        if !scope.owns(&job) {
            // Somebody else's (pushed before this call): put it back where
            // it was.
            worker.push(job);
            break;
        }
        // Never executed: its count is ours to drop.
        scope.outstanding.fetch_sub(1, Ordering::Relaxed);
    }
    // The rest were stolen and are running: they finish their claims.
    if scope.outstanding.load(Ordering::Acquire) != 0 {
        let waiting_since = worker.registry.idle.stamp();
        let mut rounds = 0u32;
        while scope.outstanding.load(Ordering::Acquire) != 0 {
            rounds += 1;
            if rounds < 64 {
                sync::spin_loop();
            } else {
                sync::yield_now();
            }
        }
        worker
            .registry
            .idle
            .slice_waited(worker.index, waiting_since);
    }
    let payload = scope
        .panic
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(payload) = payload {
        panic::resume_unwind(payload);
    }
}
