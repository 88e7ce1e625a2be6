//! The worker pool: a registry of seats, the threads that sit in them, and
//! the way idle threads find work or go to sleep.
//!
//! A [`Registry`] has one *seat* per participating thread: a crossbeam-deque
//! local queue with its stealer, a parker, and a sleeping flag. The first
//! seats are *external*: a thread that calls `run` claims one for the length
//! of the run (seat 0 first, so a single caller is always worker 0), and each
//! external seat has a [`RunSlot`] holding that run's shared state. The other
//! seats belong to the n-1 worker threads. All of them steal from each other
//! and from the injector, so several worlds can run on one pool at once.
//!
//! See `README.md` beside this file for the sleep protocol.

use std::fmt;
use std::io;
#[cfg(not(loom))]
use std::num::NonZeroUsize;
use std::ptr;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use sync_wrapper::SyncWrapper;

use crate::sync::{
    self, Arc, AtomicBool, AtomicU64, AtomicUsize, Cell, Injector, JoinHandle, Lock, Ordering,
    Parker, PoisonError, Steal, Stealer, Unparker, Worker, fence,
};

use super::idle::IdleClocks;
use super::job::JobRef;
use super::placement::{CallerCpus, WorkerPlacement};
use super::run::RunSlot;

/// How many rounds an idle thread looks for work (spinning, then yielding)
/// before it parks.
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 32;
/// Under loom an idle thread parks at once: spinning adds interleavings and
/// proves nothing the sleep protocol does not already have to.
#[cfg(loom)]
const SPIN_ROUNDS: u32 = 0;

/// How long an idle thread keeps looking for work (yielding between looks)
/// after its spin rounds, before it parks, while a run is open on the pool:
/// a frame's next ready node or `par_for_each` helper is usually tens of
/// microseconds away, and waking a parked thread takes about as long again
/// ([`ThreadPoolBuilder::spin_while_running`]). Zero under Miri, where
/// spinning only burns interpretation time.
pub const DEFAULT_SPIN_WHILE_RUNNING: Duration = if cfg!(miri) {
    Duration::ZERO
} else {
    Duration::from_millis(1)
};

/// The same with no run open on the pool: the gaps between a frame's
/// parts, its fixed steps and the next frame
/// ([`ThreadPoolBuilder::spin_between_runs`]).
pub const DEFAULT_SPIN_BETWEEN_RUNS: Duration = if cfg!(miri) {
    Duration::ZERO
} else {
    Duration::from_micros(200)
};

/// How long idle threads look for work before parking (see
/// [`DEFAULT_SPIN_WHILE_RUNNING`]). Not used under loom, where an idle
/// thread parks at once.
#[derive(Clone, Copy, Debug)]
struct IdleSpin {
    while_running: Duration,
    between_runs: Duration,
}

impl IdleSpin {
    const DEFAULT: IdleSpin = IdleSpin {
        while_running: DEFAULT_SPIN_WHILE_RUNNING,
        between_runs: DEFAULT_SPIN_BETWEEN_RUNS,
    };
}

/// crossbeam's deque starts with (and never shrinks below) 64 slots, and
/// reallocates when it grows past them (and again when it shrinks back):
/// a local deque never holds more, which keeps a run allocation-free.
const DEQUE_CAPACITY: usize = 64;

/// Ready nodes fill a local deque up to here; beyond it they go to the run's
/// ready ring. The rest of the deque is kept for batch helpers. (Under loom
/// the executor's own models lower it per pool, see
/// [`ThreadPoolBuilder::local_capacity`].)
const LOCAL_CAPACITY: usize = 48;

#[cfg(not(loom))]
thread_local! {
    /// The participant running on this thread, if any (a worker thread, or a
    /// caller inside `run`).
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

#[cfg(loom)]
loom::thread_local! {
    /// The participant running on this (loom) thread, if any.
    static CURRENT: Cell<*const WorkerThread> = Cell::new(ptr::null());
}

/// The deque and parker of a seat, owned by whichever thread occupies it.
struct SeatOwned {
    deque: Worker<JobRef>,
    parker: Parker,
}

/// One participant's place in the registry.
struct Seat {
    stealer: Stealer<JobRef>,
    unparker: Unparker,
    /// Taken by the occupant for as long as it sits here.
    owned: Lock<Option<SeatOwned>>,
    /// Set while the occupant is (about to be) parked waiting for work.
    sleeping: CachePadded<AtomicBool>,
    /// External seats only: whether a caller sits here.
    occupied: AtomicBool,
}

/// The shared core of a pool: seats, injector, sleep state.
pub(crate) struct Registry {
    seats: Box<[Seat]>,
    /// One per external seat, same index.
    runs: Box<[RunSlot]>,
    injector: Injector<JobRef>,
    /// A serial executor's registry: a run never takes work from another
    /// run (every node and slice stays on its caller's thread).
    isolated: bool,
    sleepers: CachePadded<AtomicUsize>,
    terminate: AtomicBool,
    parks: AtomicU64,
    wakes: AtomicU64,
    /// Times a worker moved off a caller's core (`placement.rs`).
    moves: AtomicU64,
    /// Whether workers move off their callers' cores
    /// ([`ThreadPoolBuilder::keep_off_callers_cores`]).
    #[cfg_attr(loom, allow(dead_code))]
    keep_off_callers: bool,
    /// Idle and wake-up time, measured while a timed run is open.
    pub(crate) idle: IdleClocks,
    /// The core each external seat's caller was last seen on: workers keep
    /// off it (`placement.rs`).
    pub(crate) caller_cpus: CallerCpus,
    /// How long idle threads look for work before parking (not under
    /// loom).
    #[cfg_attr(loom, allow(dead_code))]
    spin: IdleSpin,
    /// Under loom: ready nodes a local deque takes before the ring does.
    #[cfg(loom)]
    local_capacity: usize,
}

impl Registry {
    pub(crate) fn new(worker_threads: usize, external_seats: usize, isolated: bool) -> Self {
        let seats = (0..external_seats + worker_threads)
            .map(|_| {
                let deque = Worker::new_lifo();
                let parker = Parker::new();
                Seat {
                    stealer: deque.stealer(),
                    unparker: parker.unparker().clone(),
                    owned: Lock::new(Some(SeatOwned { deque, parker })),
                    sleeping: CachePadded::new(AtomicBool::new(false)),
                    occupied: AtomicBool::new(false),
                }
            })
            .collect();
        Self {
            seats,
            runs: (0..external_seats).map(RunSlot::new).collect(),
            injector: Injector::new(),
            isolated,
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            terminate: AtomicBool::new(false),
            parks: AtomicU64::new(0),
            wakes: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            keep_off_callers: true,
            idle: IdleClocks::new(external_seats + worker_threads),
            caller_cpus: CallerCpus::new(external_seats),
            spin: IdleSpin::DEFAULT,
            #[cfg(loom)]
            local_capacity: LOCAL_CAPACITY,
        }
    }

    /// The seats of the worker threads.
    pub(crate) fn worker_seats(&self) -> std::ops::Range<usize> {
        self.runs.len()..self.seats.len()
    }

    /// Wake-ups sent so far (see [`PoolStats`]).
    pub(crate) fn wakes(&self) -> u64 {
        self.wakes.load(Ordering::Relaxed)
    }

    /// Ready nodes a local deque takes before they overflow into the ring.
    #[inline]
    fn local_capacity(&self) -> usize {
        #[cfg(loom)]
        return self.local_capacity;
        #[cfg(not(loom))]
        LOCAL_CAPACITY
    }

    /// Threads that can work on one run at a time: the caller plus the
    /// worker threads.
    pub(crate) fn thread_count(&self) -> usize {
        self.seats.len() - self.runs.len() + 1
    }

    pub(crate) fn run_slot(&self, seat: usize) -> &RunSlot {
        &self.runs[seat]
    }

    /// Pushes a job from a thread that is not a participant of this pool.
    /// (The injector allocates a block every 63 jobs: this is the slow path.)
    pub(crate) fn inject(&self, job: JobRef) {
        self.injector.push(job);
        self.notify(1);
    }

    /// Wakes up to `count` sleeping participants after work was published.
    pub(crate) fn notify(&self, count: usize) {
        if count == 0 {
            return;
        }
        // Pairs with the fence in `sleep`: either the sleeper's recheck sees
        // the new work, or this load sees the sleeper.
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut woken = 0;
        for seat in self.seats.iter() {
            if woken == count {
                break;
            }
            if seat.sleeping.load(Ordering::Relaxed) && seat.sleeping.swap(false, Ordering::SeqCst)
            {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                self.wakes.fetch_add(1, Ordering::Relaxed);
                seat.unparker.unpark();
                woken += 1;
            }
        }
    }

    /// Wakes the occupant of `seat` whatever it is waiting for (its run may
    /// be ready to close).
    pub(crate) fn wake_seat(&self, seat: usize) {
        self.seats[seat].unparker.unpark();
    }

    /// Parks `worker` unless `still_idle` (evaluated after announcing the
    /// sleep) says otherwise.
    fn sleep(&self, worker: &WorkerThread, still_idle: impl FnOnce() -> bool) {
        let seat = &self.seats[worker.index];
        seat.sleeping.store(true, Ordering::SeqCst);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if still_idle() {
            self.parks.fetch_add(1, Ordering::Relaxed);
            self.idle.park_begins(worker.index);
            worker.owned().parker.park();
            self.idle.park_ends(worker.index);
        } else {
            // Work in sight that the last round could not take (a ring slot
            // claimed and not yet written): let its pusher finish. A spin
            // hint; under loom a yield, which a model needs to see this
            // loop make progress (there `SPIN_ROUNDS` is 0).
            sync::spin_loop();
        }
        if seat.sleeping.swap(false, Ordering::SeqCst) {
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn terminating(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }

    /// Whether any queue holds work `worker` could take.
    fn has_work(&self, worker: &WorkerThread, own: Option<&RunSlot>, own_loose: bool) -> bool {
        if self.isolated {
            return !self.seats[worker.index].stealer.is_empty()
                || own.is_some_and(|own| own.visit(worker, true, own_loose, false));
        }
        if !self.injector.is_empty() || self.seats.iter().any(|seat| !seat.stealer.is_empty()) {
            return true;
        }
        self.runs.iter().any(|run| match own {
            Some(own) if ptr::eq(own, run) => run.visit(worker, true, own_loose, false),
            _ => run.visit(worker, false, true, false),
        })
    }

    /// Runs `f` on the calling thread as the occupant of a free external seat
    /// (seat 0 when free); waits for a seat when all are taken.
    /// (An associated function: loom's `Arc` cannot be a receiver.)
    #[inline(always)]
    pub(crate) fn with_external_seat<R>(this: &Arc<Self>, f: impl FnOnce(&WorkerThread) -> R) -> R {
        Self::with_seat(this, None, f)
    }

    /// Runs `f` on the calling thread as the occupant of `held` (a seat of
    /// this registry claimed beforehand and kept between runs) or, without
    /// one, of a free external seat, as [`with_external_seat`](Self::with_external_seat).
    ///
    /// `f` is called in one place, so a caller choosing between the two
    /// gets its closure inlined here rather than called through its
    /// captures in memory.
    #[inline(always)]
    pub(crate) fn with_seat<R>(
        this: &Arc<Self>,
        held: Option<&mut HeldSeat>,
        f: impl FnOnce(&WorkerThread) -> R,
    ) -> R {
        this.refuse_nested_run();
        let claimed;
        let worker = match held {
            Some(held) => {
                let worker = held.worker.get_mut();
                debug_assert!(ptr::eq(&*worker.registry, &**this), "held on this registry");
                &*worker
            }
            None => {
                claimed = Self::occupy_external_seat(this);
                &claimed
            }
        };
        let _current = CurrentGuard::set(worker);
        f(worker)
    }

    /// Claims a free external seat for good (see [`HeldSeat`]).
    pub(crate) fn hold_external_seat(this: &Arc<Self>) -> HeldSeat {
        HeldSeat {
            worker: SyncWrapper::new(Self::occupy_external_seat(this)),
        }
    }

    /// A run started from inside one of this pool's own nodes or tasks would
    /// wait for the thread it runs on.
    fn refuse_nested_run(&self) {
        if let Some(current) = WorkerThread::current() {
            assert!(
                !ptr::eq(&*current.registry, self),
                "a run on this pool was started from inside one of its own nodes or tasks"
            );
        }
    }

    /// Claims a free external seat (waiting for one when all are taken) and
    /// takes its deque: the seat's occupant, until it drops.
    fn occupy_external_seat(this: &Arc<Self>) -> WorkerThread {
        let index = this.claim_external_seat();
        let owned = this.seats[index]
            .owned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("a free seat has its deque");
        WorkerThread {
            registry: Arc::clone(this),
            index,
            owned: Some(owned),
            rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1)),
            idle: Cell::new(false),
            fan_outs: Cell::new(0),
            placement: None,
        }
    }

    fn claim_external_seat(&self) -> usize {
        loop {
            for (index, seat) in self.seats[..self.runs.len()].iter().enumerate() {
                if !seat.occupied.load(Ordering::Relaxed)
                    && seat
                        .occupied
                        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return index;
                }
            }
            // More concurrent runs than seats: rare, wait politely.
            sync::pause(Duration::from_micros(50));
        }
    }
}

/// An external seat kept by one owner between its runs (a world's serial
/// executor, which runs every iteration of that world): each run skips
/// claiming the seat, handing its deque over and giving both back. The
/// seat is freed when this drops. Only reached through `&mut`, so the
/// wrapper makes it `Sync` without a lock (the occupant is not).
pub(crate) struct HeldSeat {
    worker: SyncWrapper<WorkerThread>,
}

impl fmt::Debug for HeldSeat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldSeat").finish_non_exhaustive()
    }
}

/// A participant: a worker thread, or a caller for the length of its run.
/// The rayon-core name; the main thread is worker 0.
pub(crate) struct WorkerThread {
    pub(crate) registry: Arc<Registry>,
    pub(crate) index: usize,
    /// The seat's deque and parker; `None` only while being given back.
    owned: Option<SeatOwned>,
    rng: Cell<u64>,
    /// Whether this participant is in an idle period (`IdleClocks`).
    idle: Cell<bool>,
    /// How many times a body on this thread handed work out to the others
    /// (`for_each_slice`, a batch): the executor compares it around a node's
    /// body to learn which nodes fan out (`FanOuts`).
    fan_outs: Cell<u32>,
    /// A worker thread's placement (`None` at an external seat: a caller's
    /// thread is never moved).
    #[cfg_attr(loom, allow(dead_code))]
    placement: Option<WorkerPlacement>,
}

impl WorkerThread {
    /// Ends this participant's idle period, if it is in one: it is about to
    /// work.
    #[inline]
    fn resume(&self) {
        if self.idle.get() {
            self.idle.set(false);
            self.registry.idle.idle_ends(self.index);
        }
    }

    /// Starts an idle period, unless one is running.
    fn go_idle(&self) {
        if !self.idle.get() {
            self.idle.set(true);
            self.registry.idle.idle_begins(self.index);
        }
    }

    /// Notes that the running body handed work out to the other threads.
    #[inline]
    pub(crate) fn note_fan_out(&self) {
        self.fan_outs.set(self.fan_outs.get().wrapping_add(1));
    }

    /// How many times bodies on this thread fanned out (compare two reads).
    #[inline]
    pub(crate) fn fan_outs(&self) -> u32 {
        self.fan_outs.get()
    }

    fn owned(&self) -> &SeatOwned {
        self.owned
            .as_ref()
            .expect("a participant holds its seat's deque")
    }

    /// The participant running on this thread, if any.
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let current = CURRENT.with(Cell::get);
        // SAFETY:
        // - `CURRENT` is only non-null between `CurrentGuard::set(worker)` and
        //   the guard's drop, which happens before `worker` (on this thread's
        //   stack, borrowed by the guard) goes away.
        // - The reference is only used on this thread, within that span: the
        //   callers use it immediately and do not keep it.
        unsafe { current.as_ref() }
    }

    /// The participant of `registry` running on this thread, if any.
    pub(crate) fn current_of(registry: &Registry) -> Option<&'static WorkerThread> {
        Self::current().filter(|worker| ptr::eq(&*worker.registry, registry))
    }

    /// Pushes a job onto the local deque; `false` when the deque is at its
    /// allocation-free capacity (the caller then overflows elsewhere).
    pub(crate) fn push_local(&self, job: JobRef) -> bool {
        if self.owned().deque.len() >= self.registry.local_capacity() {
            return false;
        }
        self.owned().deque.push(job);
        true
    }

    /// Whether the run this thread is the caller of (if any) has pinned
    /// nodes waiting for it: checked between jobs, so that a pinned node
    /// waits at most for the job running when it became ready.
    #[inline]
    pub(crate) fn pinned_waiting(&self) -> bool {
        self.registry
            .runs
            .get(self.index)
            .is_some_and(RunSlot::pinned_waiting)
    }

    /// Takes the job on top of the local deque.
    pub(crate) fn pop_local(&self) -> Option<JobRef> {
        self.owned().deque.pop()
    }

    /// Free slots of the local deque (see [`DEQUE_CAPACITY`]).
    pub(crate) fn spare_capacity(&self) -> usize {
        DEQUE_CAPACITY.saturating_sub(self.owned().deque.len())
    }

    /// Pushes a job: the local deque, or the injector when it is full (which
    /// [`spare_capacity`](Self::spare_capacity) lets callers avoid).
    pub(crate) fn push(&self, job: JobRef) {
        if self.owned().deque.len() < DEQUE_CAPACITY {
            self.owned().deque.push(job);
        } else {
            self.registry.injector.push(job);
        }
    }

    fn next_random(&self) -> usize {
        // xorshift64*
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize
    }

    fn steal(&self) -> Option<JobRef> {
        let seats = &self.registry.seats;
        loop {
            let mut retry = false;
            // `is_empty` first: two loads, where a failed `steal` costs a
            // SeqCst fence. (A deque's `steal` is called even when empty: it
            // registers this thread with crossbeam-epoch on first use, which
            // allocates, and must happen in the first runs, not later.)
            if !self.registry.injector.is_empty() {
                match self.registry.injector.steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            let start = self.next_random() % seats.len();
            for offset in 0..seats.len() {
                let victim = (start + offset) % seats.len();
                if victim == self.index {
                    continue;
                }
                match seats[victim].stealer.steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Finds one unit of work and runs it; `false` when there was none.
    ///
    /// Order: this thread's own run's pinned nodes, the local deque (the
    /// continuation just pushed), this thread's own run (its pinned queue,
    /// its ready ring, then its loose queues when `own_loose`),
    /// stealing, then the other runs on the pool.
    fn work_once(&self, own: Option<&RunSlot>, own_loose: bool) -> bool {
        // Idle time ends before any work (a visit may run some; when it
        // finds none, `wait_until` starts a new idle period).
        // Pinned nodes only this thread may run come before everything.
        if let Some(own) = own
            && self.pinned_waiting()
            && {
                self.resume();
                own.visit(self, true, false, true)
            }
        {
            return true;
        }
        if let Some(job) = self.owned().deque.pop() {
            self.resume();
            // SAFETY:
            // - The job was just popped from the local deque: this is its
            //   only execution.
            unsafe { self.execute(job) };
            return true;
        }
        if let Some(own) = own
            && {
                self.resume();
                own.visit(self, true, own_loose, true)
            }
        {
            return true;
        }
        if self.registry.isolated {
            return false;
        }
        if let Some(job) = self.steal() {
            self.resume();
            // SAFETY:
            // - The job was just stolen (removed from its queue): this is its
            //   only execution.
            unsafe { self.execute(job) };
            return true;
        }
        self.registry.runs.iter().any(|run| {
            !own.is_some_and(|own| ptr::eq(own, run)) && {
                self.resume();
                run.visit(self, false, true, true)
            }
        })
    }

    /// Runs a job taken from a queue, aborting if a panic escapes it.
    ///
    /// # Safety
    ///
    /// - `job` was just removed from the queue that held it (or made for
    ///   this call), so this is its only execution.
    pub(crate) unsafe fn execute(&self, job: JobRef) {
        // Under loom a model's failure is a panic at the offending access,
        // which must reach loom to be reported: no abort there.
        #[cfg(not(loom))]
        let abort = AbortOnUnwind;
        // SAFETY:
        // - The caller guarantees this is the job's only execution.
        unsafe { job.execute(self) };
        #[cfg(not(loom))]
        std::mem::forget(abort);
    }

    /// Whether an idle thread should look for work again rather than park:
    /// until `deadline`, which the look's first call sets from the pool's
    /// spin, while any run is open on it or between runs (read once a
    /// look, not every round: the runs' count words are their hottest
    /// lines).
    fn keep_looking(&self, deadline: &mut Option<std::time::Instant>) -> bool {
        #[cfg(loom)]
        {
            let _ = deadline;
            false
        }
        #[cfg(not(loom))]
        {
            let now = std::time::Instant::now();
            let deadline = *deadline.get_or_insert_with(|| {
                let spin = self.registry.spin;
                let running = self.registry.runs.iter().any(|run| run.active() > 0);
                let spin = if running {
                    spin.while_running
                } else {
                    spin.between_runs
                };
                // A spin past the clock's range (`Duration::MAX`) looks
                // for a day at a time.
                now.checked_add(spin)
                    .unwrap_or_else(|| now + Duration::from_secs(86_400))
            });
            now < deadline
        }
    }

    /// Lets another thread have this core a while. A worker whose yield
    /// came back late (another thread wanted the core) and that shares its
    /// core with a caller running on the pool moves off it
    /// (`placement.rs`).
    fn yield_core(&self) {
        #[cfg(not(loom))]
        if let Some(placement) = &self.placement {
            let before = std::time::Instant::now();
            sync::yield_now();
            if before.elapsed() >= super::placement::LATE_YIELD
                && let Some(cpu) = super::placement::current_cpu()
                && self
                    .registry
                    .caller_cpus
                    .any_on(cpu, |seat| self.registry.runs[seat].active() > 0)
                && placement.avoid(cpu)
            {
                self.registry.moves.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        sync::yield_now();
    }

    /// Works until `done` returns true, sleeping when there is nothing to do.
    ///
    /// `done` is called after each failed search for work (it may act, e.g.
    /// close the run); `finished` is the side-effect-free version of it,
    /// rechecked before parking.
    pub(crate) fn wait_until(
        &self,
        own: Option<&RunSlot>,
        own_loose: bool,
        mut done: impl FnMut() -> bool,
        finished: impl Fn() -> bool,
    ) {
        let mut rounds = 0;
        // Until when this idle period's timed look (after its spin rounds)
        // goes on.
        let mut look_until = None;
        loop {
            if self.work_once(own, own_loose) {
                rounds = 0;
                look_until = None;
                continue;
            }
            self.go_idle();
            if done() {
                // A caller's wait ends with its run: so does its idle time.
                self.resume();
                return;
            }
            if rounds < SPIN_ROUNDS {
                rounds += 1;
                if rounds < 8 {
                    for _ in 0..(1 << rounds) {
                        sync::spin_loop();
                    }
                } else {
                    self.yield_core();
                }
                continue;
            }
            if self.keep_looking(&mut look_until) {
                self.yield_core();
                continue;
            }
            rounds = 0;
            look_until = None;
            // Work seen but not yet takeable makes `sleep` spin (a yield
            // under loom, which needs it to see this loop make progress).
            self.registry.sleep(self, || {
                !finished() && !self.registry.has_work(self, own, own_loose)
            });
        }
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        // Give the deque and parker back to the seat and free it.
        let seat = &self.registry.seats[self.index];
        *seat.owned.lock().unwrap_or_else(PoisonError::into_inner) = self.owned.take();
        seat.occupied.store(false, Ordering::Release);
    }
}

impl fmt::Debug for WorkerThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerThread")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// Sets [`CURRENT`] for its lifetime, restoring the previous value.
struct CurrentGuard {
    previous: *const WorkerThread,
}

impl CurrentGuard {
    fn set(worker: &WorkerThread) -> Self {
        Self {
            previous: CURRENT.with(|current| current.replace(worker)),
        }
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.previous));
    }
}

/// Aborts the process if dropped during unwinding: a panic escaping a job
/// (they all catch their own) would otherwise leave a run waiting forever.
#[cfg_attr(loom, allow(dead_code))]
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        eprintln!("sluice: a panic escaped an executor job; aborting");
        std::process::abort();
    }
}

/// Counters that show what the pool's threads are doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Threads that can work on one run: the caller plus the workers.
    pub threads: usize,
    /// Worker threads parked right now.
    pub sleeping_workers: usize,
    /// Times any participant parked since the pool started.
    pub parks: u64,
    /// Times a participant was woken because work was published.
    pub wakes: u64,
    /// Times a worker moved off the core of a caller running on the pool
    /// ([`ThreadPoolBuilder::keep_off_callers_cores`]).
    pub moves: u64,
}

/// What [`ThreadPoolBuilder::build`] says under `--cfg loom` outside
/// [`sluice::model`](crate::model()).
#[cfg(loom)]
pub(crate) const OUTSIDE_MODEL: &str = "sluice was built with --cfg loom, where a thread pool (and so \
     a World) is made of loom threads, which exist only inside a model: build the world inside \
     `sluice::model(|| ..)` (a model run by `loom::model` directly counts as outside)";

/// Configures a [`ThreadPool`].
#[derive(Debug, Clone)]
pub struct ThreadPoolBuilder {
    num_threads: Option<usize>,
    max_concurrent_runs: usize,
    thread_name_prefix: String,
    spin: IdleSpin,
    keep_off_callers: bool,
    #[cfg(loom)]
    local_capacity: usize,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ThreadPoolBuilder {
    /// Defaults: as many threads as `std::thread::available_parallelism`,
    /// four concurrent runs, threads named `sluice-worker-N`. Under
    /// `--cfg loom` (inside [`sluice::model`](crate::model())): the model's
    /// thread count and one concurrent run.
    pub fn new() -> Self {
        Self {
            num_threads: None,
            // Under loom every seat is scanned by every idle thread (loads
            // loom branches on): a model's pool takes one run at a time
            // unless told otherwise.
            max_concurrent_runs: if cfg!(loom) { 1 } else { 4 },
            thread_name_prefix: "sluice-worker".to_owned(),
            spin: IdleSpin::DEFAULT,
            keep_off_callers: true,
            #[cfg(loom)]
            local_capacity: LOCAL_CAPACITY,
        }
    }

    /// Under loom only, for the executor's own models: a local deque takes
    /// `jobs` ready nodes (at least 1; 48 otherwise, as natively) before the
    /// rest overflow into the run's ready ring, so that small graphs reach
    /// the ring and the visitors that drain it. A user's model keeps the
    /// native capacity: the ring is the executor's to prove, and it
    /// multiplies the interleavings of every model that reaches it.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn local_capacity(mut self, jobs: usize) -> Self {
        self.local_capacity = jobs.max(1);
        self
    }

    /// Threads working on a run, the caller included: `1` means the calling
    /// thread only (no worker thread is started). `0` means the default.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = (num_threads > 0).then_some(num_threads);
        self
    }

    /// How many runs (worlds) may be in flight on the pool at once; more
    /// callers wait for a free seat. At least 1.
    pub fn max_concurrent_runs(mut self, runs: usize) -> Self {
        self.max_concurrent_runs = runs.max(1);
        self
    }

    /// Worker threads are named `{prefix}-{index}`.
    pub fn thread_name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.thread_name_prefix = prefix.into();
        self
    }

    /// How long an idle thread keeps looking for work, yielding between
    /// looks, before it parks while a run is open on the pool
    /// ([`DEFAULT_SPIN_WHILE_RUNNING`], 1 ms). Longer trades a core's idle
    /// time for less wake-up latency inside a frame; zero parks after a few
    /// microseconds of spinning, which suits a pool shared with other busy
    /// processes. Ignored under loom, where an idle thread parks at once.
    pub fn spin_while_running(mut self, spin: Duration) -> Self {
        self.spin.while_running = spin;
        self
    }

    /// The same while no run is open on the pool
    /// ([`DEFAULT_SPIN_BETWEEN_RUNS`], 200 µs): a game's next part or fixed
    /// step usually starts within it, a frame's end or a pause parks the
    /// threads soon after.
    pub fn spin_between_runs(mut self, spin: Duration) -> Self {
        self.spin.between_runs = spin;
        self
    }

    /// Whether a worker that finds itself sharing a core with a caller
    /// running on the pool, while another thread wants that core, moves
    /// off it (default: yes). Beside a busy process on 2 cores the kernel
    /// may otherwise leave the caller and a worker on one core for
    /// seconds, where the pool is no faster than one thread. A moved
    /// worker keeps to the cores it started with, less the caller's; the
    /// callers' threads are never moved. Linux only; off, the workers'
    /// affinity is never touched.
    pub fn keep_off_callers_cores(mut self, keep_off: bool) -> Self {
        self.keep_off_callers = keep_off;
        self
    }

    /// Starts the worker threads.
    pub fn build(self) -> io::Result<ThreadPool> {
        let _machinery = sync::coarse::machinery();
        // Under loom a pool is made of loom threads, which exist only
        // inside a model: refuse (not fail inside loom) outside one, and
        // default to the model's thread count.
        #[cfg(loom)]
        let Some(model_threads) = crate::model::model_threads() else {
            return Err(io::Error::other(OUTSIDE_MODEL));
        };
        #[cfg(loom)]
        let threads = self.num_threads.unwrap_or(model_threads);
        #[cfg(not(loom))]
        let threads = self
            .num_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get));
        let externals = self.max_concurrent_runs;
        let registry = Arc::new(Registry {
            #[cfg(loom)]
            local_capacity: self.local_capacity,
            spin: self.spin,
            keep_off_callers: self.keep_off_callers,
            ..Registry::new(threads - 1, externals, false)
        });
        let mut inner = PoolInner {
            registry: Arc::clone(&registry),
            threads: Vec::new(),
        };
        for index in externals..externals + threads - 1 {
            let registry = Arc::clone(&registry);
            let name = format!("{}-{}", self.thread_name_prefix, index - externals + 1);
            let handle = sync::spawn_named(name, move || worker_main(registry, index))?;
            // On error `inner` drops: the started threads are stopped and joined.
            inner.threads.push(handle);
        }
        Ok(ThreadPool {
            inner: Arc::new(inner),
        })
    }
}

/// A pool of threads that runs compiled graphs: the calling thread is
/// worker 0 and n-1 worker threads help it.
///
/// Cloning gives another handle to the same pool, so several worlds can
/// share it, even running at the same time from different threads. The
/// threads stop and are joined when the last handle is dropped.
#[derive(Clone)]
pub struct ThreadPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        let _machinery = sync::coarse::machinery();
        self.registry.terminate.store(true, Ordering::SeqCst);
        for seat in self.registry.seats.iter() {
            seat.unparker.unpark();
        }
        for handle in self.threads.drain(..) {
            // A worker thread never panics (jobs abort on escaping panics).
            #[cfg(loom)]
            let _ = sync::coarse::blocking(|| handle.join());
            #[cfg(not(loom))]
            let _ = handle.join();
        }
    }
}

impl ThreadPool {
    /// A pool of `num_threads` threads, the caller included (`0`: one per
    /// available core).
    pub fn new(num_threads: usize) -> io::Result<Self> {
        ThreadPoolBuilder::new().num_threads(num_threads).build()
    }

    /// Threads working on one run: the caller plus the worker threads.
    pub fn num_threads(&self) -> usize {
        self.inner.registry.thread_count()
    }

    /// What the threads are doing.
    pub fn stats(&self) -> PoolStats {
        let registry = &self.inner.registry;
        PoolStats {
            threads: registry.thread_count(),
            sleeping_workers: registry.seats[registry.runs.len()..]
                .iter()
                .filter(|seat| seat.sleeping.load(Ordering::SeqCst))
                .count(),
            parks: registry.parks.load(Ordering::Relaxed),
            wakes: registry.wakes.load(Ordering::Relaxed),
            moves: registry.moves.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("stats", &self.stats())
            .finish()
    }
}

/// Creates the registry of a serial executor: no worker thread.
pub(crate) fn serial_registry(max_concurrent_runs: usize) -> Arc<Registry> {
    Arc::new(Registry::new(0, max_concurrent_runs.max(1), true))
}

fn worker_main(registry: Arc<Registry>, index: usize) {
    let _machinery = sync::coarse::machinery();
    let owned = registry.seats[index]
        .owned
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .expect("a worker seat has its deque");
    let worker = WorkerThread {
        registry: Arc::clone(&registry),
        index,
        owned: Some(owned),
        rng: Cell::new(0x2545_F491_4F6C_DD1D ^ (index as u64 + 1)),
        idle: Cell::new(false),
        fan_outs: Cell::new(0),
        placement: registry
            .keep_off_callers
            .then(WorkerPlacement::of_current_thread),
    };
    let _current = CurrentGuard::set(&worker);
    worker.wait_until(
        None,
        false,
        || registry.terminating(),
        || registry.terminating(),
    );
}
