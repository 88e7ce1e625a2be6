//! Where a timed run's threads were not working: idle and wake-up time per
//! run ([`RunStats`]).
//!
//! A pool keeps one [`IdleClocks`]: per seat, the time its occupant spent
//! idle (looking for work, spinning, yielding, parked, or waiting in
//! `for_each_slice` for a stolen helper) and parked, and pool-wide, how long
//! slice helper jobs waited between their push and a thread taking them.
//! They advance only while a timed run is open on the pool (`measuring`):
//! otherwise an idle thread reads no clock, and marks the start of an idle
//! period with a constant instead of a reading (a store to its own seat's
//! line), so that a thread idle when a timed run opens is counted idle from
//! the run's start. A timed run snapshots the counters when it opens and
//! reads them again when it closes, adding the periods still open then
//! (a worker parked at the end of the run), each clipped to the run.
//!
//! The clocks are the pool's, not the run's: with two timed runs on one
//! pool at once, each sees the whole pool's idle time during it. A thread
//! ending an idle period just as a run closes may leave a few hundred
//! nanoseconds on the wrong side of the close (statistics, not a protocol:
//! every counter is `Relaxed`, and std's in every build, `sync::stats`: no
//! decision of the executor reads them, so loom's models need not explore
//! them).

use std::time::Duration;

use crossbeam_utils::CachePadded;

use super::clock::{Clock, Ticks};
use crate::sync::stats::{AtomicU64, AtomicUsize, OnceLock, Ordering};

/// The mark of an idle period that started while nothing was measured: a
/// reading before any run's start, so it counts from the start of the run
/// that measures it.
const BEFORE_ANY_RUN: Ticks = 1;

/// Where one thread's time went in a timed run, within the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadIdle {
    /// Time not spent in a job: looking for work, spinning, yielding,
    /// parked, waiting to be woken, and (for a thread inside
    /// `par_for_each`) waiting for a slice a stolen helper is finishing.
    pub idle: Duration,
    /// The part of `idle` spent parked (asleep in the OS).
    pub parked: Duration,
    /// Times the thread parked during the run.
    pub parks: u64,
}

/// The idle and wake-up time of the most recent timed run of a parallel
/// executor ([`ExecutionState::run_stats`](super::ExecutionState::run_stats),
/// [`World::run_stats`](crate::World::run_stats)). All zero while timing is
/// off, and for a serial run (one thread, nobody to wait for).
///
/// `threads()[0]` is the run's caller; the others are the pool's worker
/// threads in order. [`efficiency`](Self::efficiency) is the share of the
/// threads' time in the run spent working.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Whether these figures are of a run (false when timing is off or no
    /// run was measured yet).
    pub measured: bool,
    /// The run, from its start to its close.
    pub wall: Duration,
    /// Every thread's idle time, summed.
    pub idle: Duration,
    /// Every thread's parked time, summed (part of `idle`).
    pub parked: Duration,
    /// Parks in the run by the run's threads (the sum of `threads()`'
    /// parks: the pool's own park counter also counts seats of other runs).
    pub parks: u64,
    /// Wake-ups sent in the run (each to a parked thread, for published
    /// work).
    pub wakes: u64,
    /// Helper jobs `par_for_each` (and [`for_each_slice`](super::for_each_slice))
    /// pushed for other threads to take.
    pub helpers_pushed: u64,
    /// The helpers another thread took (the rest their caller took back,
    /// having done every slice itself).
    pub helpers_taken: u64,
    /// Taken helpers that found no slice left.
    pub helpers_empty: u64,
    /// From a helper's push to a thread starting it, summed over the taken
    /// helpers: the wake-up latency.
    pub wake_latency: Duration,
    /// The longest such wait.
    pub wake_latency_max: Duration,
    /// Time callers of `par_for_each` waited for stolen helpers to finish
    /// their last slices (part of `idle`): the tail imbalance.
    pub slice_wait: Duration,
    per_thread: Vec<ThreadIdle>,
}

impl RunStats {
    /// No run measured: what a world reports before its first plan.
    pub(crate) const NONE: RunStats = RunStats {
        measured: false,
        wall: Duration::ZERO,
        idle: Duration::ZERO,
        parked: Duration::ZERO,
        parks: 0,
        wakes: 0,
        helpers_pushed: 0,
        helpers_taken: 0,
        helpers_empty: 0,
        wake_latency: Duration::ZERO,
        wake_latency_max: Duration::ZERO,
        slice_wait: Duration::ZERO,
        per_thread: Vec::new(),
    };

    /// Back to no run measured, keeping the per-thread storage.
    pub(crate) fn clear(&mut self) {
        let mut per_thread = std::mem::take(&mut self.per_thread);
        per_thread.fill(ThreadIdle::default());
        *self = RunStats {
            per_thread,
            ..RunStats::NONE
        };
    }

    /// Adds `run`'s figures to these (a plan run in several parts): times
    /// and counts add, the longest wake-up is the longer. Allocates only
    /// when the thread counts differ (the first run).
    pub(crate) fn absorb(&mut self, run: &RunStats) {
        if !run.measured {
            return;
        }
        if self.per_thread.len() < run.per_thread.len() {
            self.per_thread
                .resize(run.per_thread.len(), ThreadIdle::default());
        }
        for (mine, theirs) in self.per_thread.iter_mut().zip(&run.per_thread) {
            mine.idle += theirs.idle;
            mine.parked += theirs.parked;
            mine.parks += theirs.parks;
        }
        self.measured = true;
        self.wall += run.wall;
        self.idle += run.idle;
        self.parked += run.parked;
        self.parks += run.parks;
        self.wakes += run.wakes;
        self.helpers_pushed += run.helpers_pushed;
        self.helpers_taken += run.helpers_taken;
        self.helpers_empty += run.helpers_empty;
        self.wake_latency += run.wake_latency;
        self.wake_latency_max = self.wake_latency_max.max(run.wake_latency_max);
        self.slice_wait += run.slice_wait;
    }

    /// Per thread: the caller first, then the pool's workers.
    pub fn threads(&self) -> &[ThreadIdle] {
        &self.per_thread
    }

    /// The share of the threads' time in the run spent in jobs:
    /// `1 - idle / (wall * threads)` (1 when nothing was measured).
    pub fn efficiency(&self) -> f64 {
        let total = self.wall.as_secs_f64() * self.per_thread.len() as f64;
        if total == 0.0 {
            return 1.0;
        }
        1.0 - self.idle.as_secs_f64() / total
    }
}

/// What a world reports for a plan it has not run yet.
pub(crate) static NO_RUN: RunStats = RunStats::NONE;

/// One seat's counters, written by its occupant only.
#[derive(Debug, Default)]
struct SeatIdle {
    /// Start of the current idle period (a reading, or [`BEFORE_ANY_RUN`]);
    /// 0 while the occupant works.
    idle_since: AtomicU64,
    /// Start of the current park, as `idle_since`; 0 while not parked.
    parked_since: AtomicU64,
    /// Ticks of ended idle periods, within measured runs.
    idle: AtomicU64,
    /// Ticks of ended parks, within measured runs.
    parked: AtomicU64,
    parks: AtomicU64,
}

/// A pool's idle clocks (see the module).
#[derive(Debug)]
pub(crate) struct IdleClocks {
    /// Timed runs open on the pool.
    measuring: CachePadded<AtomicUsize>,
    /// The start of the most recent timed run: periods are clipped to it.
    epoch: AtomicU64,
    /// Set by the first timed run (from its own clock: making the first
    /// clock calibrates), read only while measuring.
    clock: OnceLock<Clock>,
    seats: Box<[CachePadded<SeatIdle>]>,
    helpers_pushed: AtomicU64,
    helpers_taken: AtomicU64,
    helpers_empty: AtomicU64,
    wake_latency: AtomicU64,
    wake_latency_max: AtomicU64,
    slice_wait: AtomicU64,
}

/// The pool-wide counters a run snapshots, in ticks or counts.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    wakes: u64,
    helpers_pushed: u64,
    helpers_taken: u64,
    helpers_empty: u64,
    wake_latency: u64,
    slice_wait: u64,
}

/// A seat's counters as a run snapshots them.
#[derive(Clone, Copy, Debug, Default)]
struct SeatTotals {
    idle: u64,
    parked: u64,
    parks: u64,
}

/// A timed run's storage for its snapshot and figures (in its execution
/// state): sized for the pool at the first timed run on it, reused after.
#[derive(Debug, Default)]
pub(crate) struct RunProbe {
    epoch: Ticks,
    totals: Totals,
    seats: Box<[SeatTotals]>,
    stats: RunStats,
}

impl RunProbe {
    pub(crate) fn stats(&self) -> &RunStats {
        &self.stats
    }

    /// Forgets the last figures (timing turned off or on).
    pub(crate) fn clear(&mut self) {
        self.stats.clear();
    }
}

impl IdleClocks {
    pub(crate) fn new(seats: usize) -> Self {
        Self {
            measuring: CachePadded::new(AtomicUsize::new(0)),
            epoch: AtomicU64::new(0),
            clock: OnceLock::new(),
            seats: (0..seats).map(|_| CachePadded::default()).collect(),
            helpers_pushed: AtomicU64::new(0),
            helpers_taken: AtomicU64::new(0),
            helpers_empty: AtomicU64::new(0),
            wake_latency: AtomicU64::new(0),
            wake_latency_max: AtomicU64::new(0),
            slice_wait: AtomicU64::new(0),
        }
    }

    /// The clock, when a timed run is open.
    #[inline]
    pub(crate) fn measuring(&self) -> Option<&Clock> {
        if self.measuring.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.clock.get()
    }

    /// The ticks from `since` (clipped to the current run's start) to `now`.
    fn within_run(&self, since: Ticks, now: Ticks) -> u64 {
        now.saturating_sub(since.max(self.epoch.load(Ordering::Relaxed)))
    }

    /// Seat `seat`'s occupant found no work: an idle period starts.
    #[inline]
    pub(crate) fn idle_begins(&self, seat: usize) {
        let since = self.measuring().map_or(BEFORE_ANY_RUN, Clock::now);
        self.seats[seat].idle_since.store(since, Ordering::Relaxed);
    }

    /// Seat `seat`'s occupant is about to work: its idle period (if any)
    /// ends.
    #[inline]
    pub(crate) fn idle_ends(&self, seat: usize) {
        let seat = &self.seats[seat];
        let since = seat.idle_since.swap(0, Ordering::Relaxed);
        if since != 0
            && let Some(clock) = self.measuring()
        {
            let ticks = self.within_run(since, clock.now());
            seat.idle.fetch_add(ticks, Ordering::Relaxed);
        }
    }

    /// Seat `seat`'s occupant is about to park.
    pub(crate) fn park_begins(&self, seat: usize) {
        let since = self.measuring().map_or(BEFORE_ANY_RUN, Clock::now);
        let seat = &self.seats[seat];
        seat.parks.fetch_add(1, Ordering::Relaxed);
        seat.parked_since.store(since, Ordering::Relaxed);
    }

    /// Seat `seat`'s occupant woke from a park.
    pub(crate) fn park_ends(&self, seat: usize) {
        let seat = &self.seats[seat];
        let since = seat.parked_since.swap(0, Ordering::Relaxed);
        if let Some(clock) = self.measuring() {
            let ticks = self.within_run(since, clock.now());
            seat.parked.fetch_add(ticks, Ordering::Relaxed);
        }
    }

    /// A reading for a helper's push, when measuring (0 otherwise).
    #[inline]
    pub(crate) fn stamp(&self) -> Ticks {
        self.measuring().map_or(0, Clock::now)
    }

    /// `count` slice helpers were pushed at `stamp` (nonzero: measuring).
    pub(crate) fn helpers_pushed(&self, count: usize) {
        self.helpers_pushed
            .fetch_add(count as u64, Ordering::Relaxed);
    }

    /// A helper pushed at `pushed` (a [`stamp`](Self::stamp)) starts.
    pub(crate) fn helper_starts(&self, pushed: Ticks) {
        if pushed == 0 {
            return;
        }
        if let Some(clock) = self.measuring() {
            let waited = self.within_run(pushed, clock.now());
            self.helpers_taken.fetch_add(1, Ordering::Relaxed);
            self.wake_latency.fetch_add(waited, Ordering::Relaxed);
            self.wake_latency_max.fetch_max(waited, Ordering::Relaxed);
        }
    }

    /// A taken helper (pushed at `pushed`) found no slice left.
    pub(crate) fn helper_found_nothing(&self, pushed: Ticks) {
        if pushed != 0 && self.measuring().is_some() {
            self.helpers_empty.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Seat `seat`'s occupant waited from `since` (a [`stamp`](Self::stamp))
    /// to now for stolen slice helpers: idle time, and slice wait.
    pub(crate) fn slice_waited(&self, seat: usize, since: Ticks) {
        if since == 0 {
            return;
        }
        if let Some(clock) = self.measuring() {
            let ticks = self.within_run(since, clock.now());
            self.seats[seat].idle.fetch_add(ticks, Ordering::Relaxed);
            self.slice_wait.fetch_add(ticks, Ordering::Relaxed);
        }
    }

    fn totals(&self, wakes: u64) -> Totals {
        Totals {
            wakes,
            helpers_pushed: self.helpers_pushed.load(Ordering::Relaxed),
            helpers_taken: self.helpers_taken.load(Ordering::Relaxed),
            helpers_empty: self.helpers_empty.load(Ordering::Relaxed),
            wake_latency: self.wake_latency.load(Ordering::Relaxed),
            slice_wait: self.slice_wait.load(Ordering::Relaxed),
        }
    }

    fn seat_totals(seat: &SeatIdle) -> SeatTotals {
        SeatTotals {
            idle: seat.idle.load(Ordering::Relaxed),
            parked: seat.parked.load(Ordering::Relaxed),
            parks: seat.parks.load(Ordering::Relaxed),
        }
    }

    /// A timed run opens (`clock`: its state's): measuring starts, and
    /// `probe` keeps the counters as they are. `wakes` is the pool's
    /// counter. Allocates only when `probe` was sized for another pool (its
    /// first timed run).
    pub(crate) fn begin(&self, clock: &Clock, probe: &mut RunProbe, wakes: u64) {
        let clock = self.clock.get_or_init(|| clock.clone());
        if probe.seats.len() != self.seats.len() {
            probe.seats = vec![SeatTotals::default(); self.seats.len()].into();
        }
        for (kept, seat) in probe.seats.iter_mut().zip(self.seats.iter()) {
            *kept = Self::seat_totals(seat);
        }
        self.wake_latency_max.store(0, Ordering::Relaxed);
        probe.totals = self.totals(wakes);
        probe.epoch = clock.now();
        self.epoch.store(probe.epoch, Ordering::Relaxed);
        self.measuring.fetch_add(1, Ordering::Relaxed);
    }

    /// The timed run that [`begin`](Self::begin) opened on `probe` closed;
    /// `caller` is its seat, `workers` the pool's worker seats. Fills
    /// `probe`'s figures.
    pub(crate) fn end(
        &self,
        probe: &mut RunProbe,
        caller: usize,
        workers: std::ops::Range<usize>,
        wakes: u64,
    ) {
        let Some(clock) = self.clock.get() else {
            return;
        };
        let close = clock.now();
        let epoch = probe.epoch;
        let nanos = |ticks: u64| Duration::from_nanos(clock.nanos_between(0, ticks));
        let open_for = |since: Ticks| {
            if since == 0 {
                0
            } else {
                close.saturating_sub(since.max(epoch))
            }
        };
        let wall = close.saturating_sub(epoch);
        let threads = 1 + workers.len();
        if probe.stats.per_thread.len() != threads {
            probe.stats.per_thread = vec![ThreadIdle::default(); threads];
        }
        let mut idle = Duration::ZERO;
        let mut parked = Duration::ZERO;
        let mut parks = 0;
        let seats = std::iter::once(caller).chain(workers);
        for (thread, seat) in probe.stats.per_thread.iter_mut().zip(seats) {
            let live = &self.seats[seat];
            let now = Self::seat_totals(live);
            let then = probe.seats[seat];
            let idle_ticks = now.idle.wrapping_sub(then.idle)
                + open_for(live.idle_since.load(Ordering::Relaxed));
            let parked_ticks = now.parked.wrapping_sub(then.parked)
                + open_for(live.parked_since.load(Ordering::Relaxed));
            // A thread waking as the run closes may have ended its park
            // but not yet its idle period: parked time is idle time.
            let idle_ticks = idle_ticks.min(wall);
            *thread = ThreadIdle {
                idle: nanos(idle_ticks),
                parked: nanos(parked_ticks.min(idle_ticks)),
                parks: now.parks.wrapping_sub(then.parks),
            };
            idle += thread.idle;
            parked += thread.parked;
            parks += thread.parks;
        }
        let now = self.totals(wakes);
        let then = probe.totals;
        let per_thread = std::mem::take(&mut probe.stats.per_thread);
        probe.stats = RunStats {
            measured: true,
            wall: nanos(wall),
            idle,
            parked,
            parks,
            wakes: now.wakes.wrapping_sub(then.wakes),
            helpers_pushed: now.helpers_pushed.wrapping_sub(then.helpers_pushed),
            helpers_taken: now.helpers_taken.wrapping_sub(then.helpers_taken),
            helpers_empty: now.helpers_empty.wrapping_sub(then.helpers_empty),
            wake_latency: nanos(now.wake_latency.wrapping_sub(then.wake_latency)),
            wake_latency_max: nanos(self.wake_latency_max.load(Ordering::Relaxed)),
            slice_wait: nanos(now.slice_wait.wrapping_sub(then.slice_wait)),
            per_thread,
        };
        self.measuring.fetch_sub(1, Ordering::Relaxed);
    }
}
