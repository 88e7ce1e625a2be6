//! The adaptive executor: each iteration runs on the pool or inline on the
//! calling thread, whichever this world's recent iterations ran faster.
//!
//! A frame of a thousand trivial systems is cheaper run inline than handed
//! between cores; a frame of heavy systems is not. Both executors follow the
//! same plan with the same results (serial equivalence), so switching between
//! them from one iteration to the next changes timing only.
//!
//! # Probes
//!
//! The choice is made by *probes*, each a paired measurement taken in one
//! stretch of consecutive iterations: [`SAMPLES`] iterations of the preferred
//! side (fewer for long frames: [`MIN_SAMPLES`] once they add up to
//! [`SAMPLED`]), then the other side, warmed up first, for as many. Each
//! side's cost is the mean of its fastest samples (a quarter dropped, at
//! least one, so a preempted frame counts for nothing), and the other side
//! takes over when it is [`HYSTERESIS`] faster. A world's first iterations
//! are a probe (both sides warmed up).
//!
//! The warm-up is what makes a side's cost the cost it has when it runs
//! frame after frame: the first pool iteration after a stretch inline wakes
//! parked workers, and the first inline ones after a stretch on the pool run
//! beside workers still spinning for work. A side warms up for at least
//! [`WARMUP_ITERATIONS`] and [`WARMUP`] of wall time (at most
//! [`WARMUP_MAX_ITERATIONS`]); those iterations are timed but not counted.
//!
//! # Long frames
//!
//! A probe's iterations of the slower side are frames the game shows late,
//! one after another: a hitch. Where the preferred side's frames take
//! [`SAMPLED`] or more (a millisecond), the probe keeps it short. The other
//! side gets no warm-up: what a warm-up absorbs (waking parked workers,
//! workers spinning beside the caller) is tens of µs, a few % of such a
//! frame, and the slowest sample is dropped anyway. And when the last probe
//! measured the other side [`EXPLORE_RANGE`] slower, it takes
//! [`SLOWER_SAMPLES`] samples, not [`MIN_SAMPLES`]: enough to see whether it
//! has caught up, which is all a probe of a side that far behind can find.
//! Such probes also get half the budget ([`LONG_BUDGET`]), so that they come
//! about as often as before for half the frames shown late. A game frame of
//! 4.5 ms on the pool and 9 inline thus runs two inline frames a probe, not
//! four (the battle bench, 20,000 units on 2 threads: before this, a probe
//! every 450 to 700 frames, each four frames at twice the time).
//!
//! # Schedule
//!
//! A probe costs more than its frames: the slower side's iterations, and
//! what no timed iteration shows (workers woken for a pool probe spin for
//! work a while after it, [`PROBE_AFTERMATH`]). The next probe comes once
//! the last one's extra cost is under [`BUDGET`] of the time run since (at
//! least [`MIN_INTERVAL`] iterations): tiny frames, where a probe costs
//! thousands of frames, are probed every few tens of ms; heavy frames
//! with close costs every few frames; a side twice as slow as the other is
//! probed seldom. A new plan, or a drift of the preferred side (below),
//! brings the next probe forward to a quarter of that.
//!
//! Between probes, one iteration every [`SAMPLE_SPAN`] of work or so is
//! timed (two clock reads; every iteration of frames that long), keeping a
//! running estimate of the preferred side. When it drifts more than
//! [`DRIFT`] from what the last probe measured (the workload or the machine
//! changed), the next probe is brought forward. The other iterations cost a
//! counter.
//!
//! # Tails
//!
//! A probe's fastest samples are a side's cost in frames nothing preempts;
//! what a side costs frame after frame also has its slow frames. Those hit
//! both sides alike when another process takes this thread's core, but not
//! when it takes a worker's: a pool frame then waits for the node the
//! preempted worker holds, so on a busy machine the pool's mean can be well
//! above its fastest frames while inline's is not. The plain mean of the
//! steady samples over a stretch, less the preferred side's cost measured
//! by the probe that ends it, is that side's *tail*, with the mean's
//! standard error. A verdict adds to the preferred side's cost its tail
//! beyond the other side's, counting only what exceeds their combined
//! error (a few preempted frames among many measure nothing). A side whose
//! tail is unknown counts as having none, with the preferred side's error
//! (unless its fastest frames are [`EXPLORE_RANGE`] slower), and once
//! preferred runs a short stretch first ([`EXPLORE_SAMPLES`]
//! steady samples, or a quarter of the budget's stretch if longer), after
//! which a probe compares the two measured tails:
//! a side is never left on a long stretch before its tail is known. A tail
//! is forgotten after [`TAIL_MEMORY`] probes, so a side left for its tail
//! is explored again now and then (the machine may have calmed down).

use std::time::Duration;

/// The fewest iterations between two probes.
pub(crate) const MIN_INTERVAL: u32 = 32;
/// The most iterations between two probes, whatever the budget says.
pub(crate) const MAX_WAIT: u32 = 1 << 20;
/// Timed iterations of each side in a probe.
pub(crate) const SAMPLES: usize = 8;
/// Timed iterations of each side in a probe of long frames...
pub(crate) const MIN_SAMPLES: usize = 3;
/// ...once they add up to this long.
pub(crate) const SAMPLED: Duration = Duration::from_millis(1);
/// Iterations a side runs before its samples, at least...
pub(crate) const WARMUP_ITERATIONS: u32 = 1;
/// ...and at least this long...
pub(crate) const WARMUP: Duration = Duration::from_micros(50);
/// ...but never more iterations than this.
pub(crate) const WARMUP_MAX_ITERATIONS: u32 = 256;
/// The most a warm-up counts for beyond its iterations' cost when the
/// budget spaces probes (waking workers takes tens of µs; more than this is
/// another process's doing).
const WARMUP_EXCESS: Duration = Duration::from_micros(200);
/// What a probe costs that its timed iterations do not show, counted in
/// its extra cost: workers woken for a pool probe spin for work a while
/// after it (taking a core, from this thread on a busy machine), and the
/// probe's first iterations on either side run on colder caches. Inferred
/// from the overhead left with tiny frames on a 2-core machine under load
/// (several % with this at zero, a few at most with it).
const PROBE_AFTERMATH: Duration = Duration::from_micros(100);
/// How much faster the other side must be to take over.
const HYSTERESIS: f64 = 0.03;
/// The share of time probes may cost beyond running the faster side.
const BUDGET: f64 = 0.005;
/// [`BUDGET`] where the preferred side's frames take [`SAMPLED`] or more:
/// there a probe's cost is frames shown late (see "Long frames").
const LONG_BUDGET: f64 = BUDGET / 2.0;
/// Between probes, one iteration in about this much work is timed (one in
/// 64 at most).
pub(crate) const SAMPLE_SPAN: Duration = Duration::from_micros(64);
/// The longest run of untimed steady iterations.
const SAMPLE_EVERY_MAX: u32 = 64;
/// How much one steady sample moves the preferred side's running estimate
/// (so that a drift is several samples' doing)...
const WEIGHT: f64 = 0.1;
/// ...counting for at most this many times the estimate or the sample
/// before (one preempted frame moves it by 5% at most; a workload that grew
/// moves it from its second sample on).
const CLAMP: f64 = 1.5;
/// How far the running estimate may move from the last probe's before the
/// next probe is brought forward.
const DRIFT: f64 = 0.25;
/// Steady samples a stretch needs before its mean measures a tail.
const TAIL_SAMPLES: u32 = 16;
/// Steady samples in an exploration's stretch.
const EXPLORE_SAMPLES: u32 = 128;
/// A side whose tail is unknown is explored for it only when its fastest
/// frames are within this factor of the preferred side's: under heavy load
/// every side's mean is far above its fastest frames, and exploring a side
/// twice as slow for that costs more than it can find.
const EXPLORE_RANGE: f64 = 1.5;
/// Probes a measured tail is remembered for.
const TAIL_MEMORY: u32 = 16;
/// Samples of the other side in a probe of long frames when the last probe
/// measured it [`EXPLORE_RANGE`] slower (see "Long frames").
const SLOWER_SAMPLES: usize = 2;

/// Whether frames of `ns` are long: [`SAMPLED`] or more (see "Long
/// frames").
fn is_long(ns: f64) -> bool {
    ns >= SAMPLED.as_nanos() as f64
}

/// Which executor one iteration runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    /// The pool: the calling thread is worker 0.
    Pool,
    /// The calling thread alone.
    Inline,
}

impl Choice {
    /// The side's slot in per-side arrays.
    fn index(self) -> usize {
        match self {
            Choice::Pool => 0,
            Choice::Inline => 1,
        }
    }

    fn other(self) -> Self {
        match self {
            Choice::Pool => Choice::Inline,
            Choice::Inline => Choice::Pool,
        }
    }
}

/// The half of a probe under way: one side, warming up or sampled.
#[derive(Debug, Clone)]
struct Half {
    side: Choice,
    /// Warm-up iterations run so far.
    warm_iterations: u32,
    /// Warm-up time run so far, in ns.
    warm_ns: f64,
    warming: bool,
    /// The most samples it takes ([`SAMPLES`], or [`SLOWER_SAMPLES`]).
    limit: usize,
    samples: [f64; SAMPLES],
    taken: usize,
    /// The samples' sum, in ns.
    sampled_ns: f64,
}

impl Half {
    fn new(side: Choice, warm: bool) -> Self {
        Self {
            side,
            warm_iterations: 0,
            warm_ns: 0.0,
            warming: !warm,
            limit: SAMPLES,
            samples: [0.0; SAMPLES],
            taken: 0,
            sampled_ns: 0.0,
        }
    }

    /// Takes one timed iteration; the side's cost once every sample is in.
    fn take(&mut self, ns: f64) -> Option<f64> {
        if self.warming {
            self.warm_iterations += 1;
            self.warm_ns += ns;
            self.warming = self.warm_iterations < WARMUP_MAX_ITERATIONS
                && (self.warm_iterations < WARMUP_ITERATIONS
                    || self.warm_ns < WARMUP.as_nanos() as f64);
            return None;
        }
        self.samples[self.taken] = ns;
        self.taken += 1;
        self.sampled_ns += ns;
        let done = self.taken == self.limit
            || (self.taken >= MIN_SAMPLES && self.sampled_ns >= SAMPLED.as_nanos() as f64);
        done.then(|| {
            let samples = &mut self.samples[..self.taken];
            samples.sort_unstable_by(f64::total_cmp);
            let kept = &samples[..self.taken - (self.taken / 4).max(1)];
            kept.iter().sum::<f64>() / kept.len() as f64
        })
    }

    /// What this half cost beyond running the `best` side, warm-up
    /// included; a warm-up counts for at most [`WARMUP_EXCESS`] more than
    /// its iterations at `cost` (more is a preempted frame, not the side).
    fn excess(&self, cost: f64, best: f64) -> f64 {
        let iterations = f64::from(self.warm_iterations);
        let warm_excess = (self.warm_ns - iterations * best)
            .min(iterations * (cost - best) + WARMUP_EXCESS.as_nanos() as f64);
        let sampled_excess = self.taken as f64 * (cost - best);
        warm_excess.max(0.0) + sampled_excess.max(0.0)
    }
}

/// The choice, the probe under way, and the schedule of the next one.
#[derive(Debug, Clone)]
pub(crate) struct Adaptive {
    preferred: Choice,
    /// The preferred side's cost per iteration, in ns: from the last probe,
    /// then moved by steady samples. `None` before the first probe ends.
    preferred_ns: Option<f64>,
    /// The preferred side's cost as the last probe measured it.
    probed_ns: f64,
    /// The other side's cost as the last probe measured it (`None` before
    /// the first probe ends).
    other_ns: Option<f64>,
    /// The probe under way, if any.
    probe: Option<Half>,
    /// The preferred side's cost measured by the first half of the probe,
    /// and how many samples it took.
    first_half_ns: f64,
    first_half_samples: usize,
    /// What the last probe cost beyond running the faster side throughout.
    probe_excess_ns: f64,
    /// Iterations left before the next probe.
    countdown: u32,
    /// Iterations since the last probe ended.
    since_probe: u32,
    /// Between probes, one iteration in this many is timed.
    sample_every: u32,
    /// The last steady sample, in ns.
    last_sample_ns: f64,
    /// The steady samples since the last probe, unclamped: their sum and
    /// sum of squares (ns, ns²), and count.
    steady_sum_ns: f64,
    steady_squares: f64,
    steady_count: u32,
    /// Each side's tail (see the module docs), by [`Choice::index`].
    tails: [Option<Tail>; 2],
}

/// A side's tail, as the steady samples of a stretch measured it.
#[derive(Debug, Clone, Copy)]
struct Tail {
    /// Their mean less the side's probed cost, in ns (at least 0).
    ns: f64,
    /// The mean's standard error, in ns.
    error_ns: f64,
    /// Probes since.
    age: u32,
}

impl Default for Adaptive {
    fn default() -> Self {
        Self {
            preferred: Choice::Inline,
            preferred_ns: None,
            probed_ns: 0.0,
            other_ns: None,
            // A new world's first probe warms both sides up.
            probe: Some(Half::new(Choice::Inline, false)),
            first_half_ns: 0.0,
            first_half_samples: 0,
            probe_excess_ns: 0.0,
            countdown: MIN_INTERVAL,
            since_probe: 0,
            sample_every: SAMPLE_EVERY_MAX,
            last_sample_ns: 0.0,
            steady_sum_ns: 0.0,
            steady_squares: 0.0,
            steady_count: 0,
            tails: [None; 2],
        }
    }
}

impl Adaptive {
    /// A new plan (its cost may differ): probe again soon, within a
    /// quarter of the budget (a world whose plan changes every frame does
    /// not probe every frame). What was measured stays as the starting
    /// point.
    pub(crate) fn reset(&mut self) {
        self.countdown = self.countdown.min(self.soon());
        // The stretch's frames so far ran the old plan: they measure no tail.
        self.clear_steady();
    }

    fn clear_steady(&mut self) {
        self.steady_sum_ns = 0.0;
        self.steady_squares = 0.0;
        self.steady_count = 0;
    }

    /// The executor for the next iteration, and whether to time it (and
    /// pass the time to [`record`](Self::record)).
    // Under loom a model always takes the pool (`World::run_part`).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn choose(&mut self) -> (Choice, bool) {
        if let Some(half) = &self.probe {
            return (half.side, true);
        }
        self.countdown = self.countdown.saturating_sub(1);
        if self.countdown == 0 {
            // The preferred side has been running: it is warm.
            self.probe = Some(Half::new(self.preferred, true));
            return (self.preferred, true);
        }
        // Never the first iteration after a probe: the preferred side may
        // not be warm yet.
        self.since_probe = self.since_probe.wrapping_add(1);
        let time = self.since_probe > 1 && self.since_probe.is_multiple_of(self.sample_every);
        (self.preferred, time)
    }

    /// Records how long a timed iteration on `choice` took.
    pub(crate) fn record(&mut self, choice: Choice, elapsed: Duration) {
        let ns = elapsed.as_nanos() as f64;
        let Some(half) = &mut self.probe else {
            if choice == self.preferred {
                self.steady_sample(ns);
            }
            return;
        };
        if half.side != choice {
            return;
        }
        let Some(cost) = half.take(ns) else {
            return;
        };
        if choice == self.preferred {
            // The first half is done: the other side now, warmed up first
            // unless frames are long (see "Long frames").
            self.first_half_ns = cost;
            self.first_half_samples = half.taken;
            let long = is_long(cost);
            let mut other = Half::new(choice.other(), long);
            if long
                && self
                    .other_ns
                    .is_some_and(|other| other >= cost * EXPLORE_RANGE)
            {
                other.limit = SLOWER_SAMPLES;
            }
            self.probe = Some(other);
        } else {
            self.verdict(cost);
        }
    }

    /// The probe's second half measured the other side at `other_ns`.
    fn verdict(&mut self, other_ns: f64) {
        let half = self.probe.take().expect("a probe is under way");
        let preferred_ns = self.first_half_ns;
        let best = preferred_ns.min(other_ns);
        self.probe_excess_ns = half.excess(other_ns, best)
            + self.first_half_samples as f64 * (preferred_ns - best)
            + PROBE_AFTERMATH.as_nanos() as f64;
        self.measure_tail(preferred_ns);
        if other_ns < (preferred_ns + self.tail_shift(preferred_ns, other_ns)) * (1.0 - HYSTERESIS)
        {
            self.preferred = half.side;
        }
        // A side whose tail is unknown runs a short stretch first.
        let exploring = self.tails[self.preferred.index()].is_none();
        for tail in &mut self.tails {
            if tail.is_some_and(|tail| tail.age >= TAIL_MEMORY) {
                *tail = None;
            }
            if let Some(tail) = tail {
                tail.age += 1;
            }
        }
        let cost = if self.preferred == half.side {
            other_ns
        } else {
            preferred_ns
        };
        self.preferred_ns = Some(cost);
        self.probed_ns = cost;
        self.other_ns = Some(if self.preferred == half.side {
            preferred_ns
        } else {
            other_ns
        });
        self.sample_every = (SAMPLE_SPAN.as_nanos() as f64 / cost.max(1.0))
            .clamp(1.0, f64::from(SAMPLE_EVERY_MAX)) as u32;
        self.countdown = self.stretch();
        if exploring {
            // No sooner than a new plan brings a probe: a world whose plan
            // changes every frame measures no tail, and must not probe more
            // for it.
            let explore = EXPLORE_SAMPLES.saturating_mul(self.sample_every) + 1;
            self.countdown = self.countdown.min(explore.max(self.soon()));
        }
        self.since_probe = 0;
        self.last_sample_ns = 0.0;
    }

    /// The preferred side's tail from the stretch just run (if it took
    /// enough steady samples), against `preferred_ns`, its cost as measured
    /// by the probe that ends the stretch.
    fn measure_tail(&mut self, preferred_ns: f64) {
        let count = f64::from(self.steady_count);
        if self.steady_count >= TAIL_SAMPLES {
            let mean = self.steady_sum_ns / count;
            let variance =
                (self.steady_squares / count - mean * mean).max(0.0) * count / (count - 1.0);
            self.tails[self.preferred.index()] = Some(Tail {
                ns: (mean - preferred_ns).max(0.0),
                error_ns: (variance / count).sqrt(),
                age: 0,
            });
        }
        self.clear_steady();
    }

    /// The preferred side's tail beyond the other side's, in ns, past their
    /// combined error (negative where the other's is the longer), the probe
    /// having measured the two sides at `preferred_ns` and `other_ns`; an
    /// unknown tail is none, with the known one's error, unless that side's
    /// fastest frames are [`EXPLORE_RANGE`] slower (not worth exploring).
    fn tail_shift(&self, preferred_ns: f64, other_ns: f64) -> f64 {
        let Some(ours) = self.tails[self.preferred.index()] else {
            return 0.0;
        };
        let theirs = match self.tails[self.preferred.other().index()] {
            Some(theirs) => theirs,
            None if other_ns > EXPLORE_RANGE * preferred_ns => return 0.0,
            None => Tail { ns: 0.0, ..ours },
        };
        let difference = ours.ns - theirs.ns;
        let margin = ours.error_ns.hypot(theirs.error_ns);
        difference.signum() * (difference.abs() - margin).max(0.0)
    }

    /// Iterations to the next probe: what spreads the last probe's extra
    /// cost to [`BUDGET`] of the time.
    fn stretch(&self) -> u32 {
        let Some(preferred_ns) = self.preferred_ns else {
            return MIN_INTERVAL;
        };
        let budget = if is_long(preferred_ns) {
            LONG_BUDGET
        } else {
            BUDGET
        };
        let iterations = self.probe_excess_ns / (budget * preferred_ns.max(1.0));
        (iterations.min(f64::from(MAX_WAIT)) as u32).max(MIN_INTERVAL)
    }

    /// A probe brought forward: a quarter of the stretch.
    fn soon(&self) -> u32 {
        (self.stretch() / 4).max(MIN_INTERVAL)
    }

    /// A timed steady iteration of the preferred side: it moves the running
    /// estimate (a preempted frame by little), and with it the budget (a
    /// heavier frame makes the next probe due sooner); a drift from what the
    /// last probe measured brings the probe forward.
    fn steady_sample(&mut self, ns: f64) {
        let Some(estimate) = &mut self.preferred_ns else {
            return;
        };
        let ceiling = CLAMP * estimate.max(self.last_sample_ns);
        self.last_sample_ns = ns;
        self.steady_sum_ns += ns;
        self.steady_squares += ns * ns;
        self.steady_count = self.steady_count.saturating_add(1);
        *estimate += WEIGHT * (ns.min(ceiling) - *estimate);
        let next = if (*estimate / self.probed_ns.max(1.0) - 1.0).abs() > DRIFT {
            self.soon()
        } else {
            self.stretch()
        };
        self.countdown = self.countdown.min(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic model of one world on one machine: what an iteration
    /// costs on each side when the side runs frame after frame, and what the
    /// first iterations after a switch cost on top.
    #[derive(Debug, Clone)]
    struct Machine {
        /// Steady cost per iteration, ns: pool, inline.
        pool: f64,
        inline: f64,
        /// The first pool iteration after inline ones wakes parked workers.
        wake: f64,
        /// Inline iterations run within this long after pool ones are
        /// slowed by `spin_factor` (workers still spinning for work).
        spin_window: f64,
        spin_factor: f64,
        /// The very first iteration on the pool starts its threads.
        first_pool: f64,
        /// Every `preempt_every`-th iteration is preempted for `preempt` ns.
        preempt_every: u64,
        preempt: f64,
        /// Every `stall_every`-th pool iteration waits `stall` ns for a
        /// preempted worker.
        stall_every: u64,
        stall: f64,
        pool_iterations: u64,
        // State.
        last: Option<Choice>,
        since_pool_ns: f64,
        pool_ran: bool,
        iteration: u64,
    }

    impl Machine {
        fn new(pool_us: f64, inline_us: f64) -> Self {
            Self {
                pool: pool_us * 1e3,
                inline: inline_us * 1e3,
                wake: 0.0,
                spin_window: 0.0,
                spin_factor: 1.0,
                first_pool: 0.0,
                preempt_every: 0,
                preempt: 0.0,
                stall_every: 0,
                stall: 0.0,
                pool_iterations: 0,
                last: None,
                since_pool_ns: f64::INFINITY,
                pool_ran: false,
                iteration: 0,
            }
        }

        /// The cold effects seen on a real 2-core machine: a parked worker
        /// takes 60 µs to wake, spins 50 µs after its last work and slows
        /// the caller by half meanwhile, and the pool's first run costs
        /// 500 µs more.
        fn cold(mut self) -> Self {
            self.wake = 60e3;
            self.spin_window = 50e3;
            self.spin_factor = 1.5;
            self.first_pool = 500e3;
            self
        }

        fn preempted(mut self, every: u64, us: f64) -> Self {
            self.preempt_every = every;
            self.preempt = us * 1e3;
            self
        }

        /// Another process on the machine takes a worker's core now and
        /// then: every `every`-th pool iteration waits `us` more.
        fn stalled(mut self, every: u64, us: f64) -> Self {
            self.stall_every = every;
            self.stall = us * 1e3;
            self
        }

        /// Runs one iteration on `choice`; what it cost, in ns.
        fn run(&mut self, choice: Choice) -> f64 {
            self.iteration += 1;
            let mut ns = match choice {
                Choice::Pool => {
                    let mut ns = self.pool;
                    if !self.pool_ran {
                        ns += self.first_pool;
                        self.pool_ran = true;
                    }
                    if self.last == Some(Choice::Inline) {
                        ns += self.wake;
                    }
                    self.since_pool_ns = 0.0;
                    self.pool_iterations += 1;
                    if self.stall_every > 0 && self.pool_iterations.is_multiple_of(self.stall_every)
                    {
                        ns += self.stall;
                    }
                    ns
                }
                Choice::Inline => {
                    let spinning = self.since_pool_ns < self.spin_window;
                    let ns = self.inline * if spinning { self.spin_factor } else { 1.0 };
                    self.since_pool_ns += ns;
                    ns
                }
            };
            if self.preempt_every > 0 && self.iteration.is_multiple_of(self.preempt_every) {
                ns += self.preempt;
            }
            self.last = Some(choice);
            ns
        }
    }

    #[derive(Debug, Default)]
    struct Run {
        on_pool: u64,
        timed: u64,
        total_ns: f64,
        probes: u64,
        /// Probes that overturned the preference.
        switches: u64,
        /// The most inline iterations in a row.
        longest_inline: u64,
    }

    /// Runs `iterations` of `machine` under `adaptive`'s choices, calling
    /// `before` ahead of each.
    fn drive_with(
        adaptive: &mut Adaptive,
        machine: &mut Machine,
        iterations: u64,
        mut before: impl FnMut(&mut Adaptive),
    ) -> Run {
        let mut run = Run::default();
        let mut inline_streak = 0;
        for _ in 0..iterations {
            before(adaptive);
            let probing = adaptive.probe.is_some();
            let (choice, time) = adaptive.choose();
            run.probes += u64::from(!probing && adaptive.probe.is_some());
            let ns = machine.run(choice);
            run.on_pool += u64::from(choice == Choice::Pool);
            inline_streak = if choice == Choice::Inline {
                inline_streak + 1
            } else {
                0
            };
            run.longest_inline = run.longest_inline.max(inline_streak);
            run.total_ns += ns;
            if time {
                run.timed += 1;
                let preferred = adaptive.preferred;
                adaptive.record(choice, Duration::from_nanos(ns as u64));
                run.switches += u64::from(adaptive.preferred != preferred);
            }
        }
        run
    }

    fn drive(adaptive: &mut Adaptive, machine: &mut Machine, iterations: u64) -> Run {
        drive_with(adaptive, machine, iterations, |_| {})
    }

    /// The same machine pinned to `choice` for `iterations`: total ns.
    fn pinned(machine: &Machine, choice: Choice, iterations: u64) -> f64 {
        let mut machine = machine.clone();
        (0..iterations).map(|_| machine.run(choice)).sum()
    }

    /// Adaptive's total over the faster pinned side's.
    fn against_best(machine: &Machine, iterations: u64) -> (Run, f64) {
        let mut adaptive = Adaptive::default();
        let run = drive(&mut adaptive, &mut machine.clone(), iterations);
        let best = pinned(machine, Choice::Pool, iterations).min(pinned(
            machine,
            Choice::Inline,
            iterations,
        ));
        let ratio = run.total_ns / best;
        (run, ratio)
    }

    #[test]
    fn a_first_run_probes_both_sides_warm_then_prefers_the_faster() {
        let mut adaptive = Adaptive::default();
        let mut machine = Machine::new(120.0, 30.0);
        // Inline first, warmed up for at least one iteration and 50 µs.
        for _ in 0..2 {
            assert_eq!(adaptive.choose(), (Choice::Inline, true));
            adaptive.record(
                Choice::Inline,
                Duration::from_nanos(machine.run(Choice::Inline) as u64),
            );
        }
        drive(&mut adaptive, &mut machine, 1 + SAMPLES as u64 * 2);
        assert!(adaptive.probe.is_none(), "the first probe is over");
        assert_eq!(adaptive.choose().0, Choice::Inline);
        assert_eq!(adaptive.preferred_ns, Some(30e3));
    }

    /// Finding 9, first case: 16 systems of 2 µs, 19 µs a frame on the pool
    /// and 34 inline; the pool's first measurements include starting and
    /// waking its workers (60 to 560 µs).
    #[test]
    fn a_side_whose_first_measurement_was_bad_is_still_found_faster() {
        let machine = Machine::new(19.0, 34.0).cold();
        let (run, ratio) = against_best(&machine, 20_000);
        assert!(run.on_pool > 19_500, "{run:?}");
        assert!(ratio < 1.02, "{ratio:.3}x the pinned pool: {run:?}");

        // The old policy's own trap: the first probe of the pool measured it
        // cold and slow, then later ones must still overturn that.
        let mut adaptive = Adaptive::default();
        let mut cold = machine.clone();
        cold.wake = 400e3;
        drive(&mut adaptive, &mut cold, 200);
        let run = drive(&mut adaptive, &mut machine.clone(), 10_000);
        assert!(run.on_pool > 9_800, "{run:?}");
    }

    /// Finding 9, second case: 1,000 systems on 16 services, 23 µs a frame on
    /// the pool and 43 inline, while inline iterations right after pool ones
    /// run beside spinning workers.
    #[test]
    fn many_small_systems_go_to_the_pool_when_it_is_faster() {
        let mut machine = Machine::new(23.0, 43.0).cold();
        machine.spin_factor = 0.8; // even if spinning workers sped inline up
        let (run, ratio) = against_best(&machine, 20_000);
        assert!(ratio < 1.02, "{ratio:.3}x the pinned pool: {run:?}");
    }

    /// The mirror case: inline truly faster, its first measurements beside
    /// spinning workers made it look slower than the pool.
    #[test]
    fn inline_is_found_faster_though_measured_beside_spinning_workers() {
        let mut machine = Machine::new(1.2, 0.8).cold();
        machine.spin_factor = 2.0;
        let (run, ratio) = against_best(&machine, 2_000_000);
        assert!(run.on_pool < 20_000, "{run:?}");
        assert!(ratio < 1.03, "{ratio:.3}x pinned inline: {run:?}");
    }

    #[test]
    fn probes_of_tiny_frames_stay_within_the_budget() {
        // 10 no-op systems: 0.3 µs inline, 0.8 on the pool, 60 µs to wake it.
        let machine = Machine::new(0.8, 0.3).cold();
        let (run, ratio) = against_best(&machine, 4_000_000);
        assert!(ratio < 1.03, "{ratio:.3}x pinned inline: {run:?}");
        assert!(
            run.timed < 4_000_000 / 50,
            "few iterations are timed ({} of 4,000,000)",
            run.timed
        );
    }

    #[test]
    fn probes_are_spaced_by_what_they_cost() {
        // Close costs, 3.1 µs a frame on the pool and 3.0 inline: a probe
        // costs little beyond its aftermath, and comes every 30 ms or so.
        let machine = Machine::new(3.1, 3.0).cold();
        let mut adaptive = Adaptive::default();
        let iterations = 1_000_000;
        let run = drive(&mut adaptive, &mut machine.clone(), iterations);
        assert!((50..=200).contains(&run.probes), "{run:?}");
        let extra = run.total_ns / pinned(&machine, Choice::Inline, iterations) - 1.0;
        assert!(extra < 0.01, "{extra:.4} over pinned inline: {run:?}");
        assert!(run.timed < iterations / 20, "{run:?}");

        // Long frames, 1.6 ms on the pool and 3.1 inline: a probe takes
        // fewer samples, and stays within the budget.
        let machine = Machine::new(1_600.0, 3_100.0).cold();
        let mut adaptive = Adaptive::default();
        let iterations = 3_000;
        let run = drive(&mut adaptive, &mut machine.clone(), iterations);
        let extra = run.total_ns / pinned(&machine, Choice::Pool, iterations) - 1.0;
        assert!(extra < 0.01, "{extra:.4} over the pinned pool: {run:?}");

        // The pool four times slower: fewer probes, the same budget.
        let machine = Machine::new(120.0, 30.0).cold();
        let mut adaptive = Adaptive::default();
        let iterations = 100_000;
        let run = drive(&mut adaptive, &mut machine.clone(), iterations);
        assert!((5..=30).contains(&run.probes), "{run:?}");
        let extra = run.total_ns / pinned(&machine, Choice::Inline, iterations) - 1.0;
        assert!(extra < 0.01, "{extra:.4} over pinned inline: {run:?}");
    }

    #[test]
    fn preempted_frames_do_not_swing_the_choice() {
        // Every 7th iteration loses 5 ms to another process.
        let machine = Machine::new(60.0, 30.0).cold().preempted(7, 5_000.0);
        let mut adaptive = Adaptive::default();
        let run = drive(&mut adaptive, &mut machine.clone(), 20_000);
        assert!(run.on_pool < 600, "{run:?}");
        // Inline's mean is far above its fastest frames, but the pool's
        // fastest are twice as slow: not explored for its tail.
        assert_eq!(run.switches, 0, "{run:?}");
        assert_eq!(adaptive.preferred, Choice::Inline);
    }

    /// The issue-21 case: 16 systems, 19 µs a frame on the pool and 25
    /// inline in frames nothing preempts, but with another busy process one
    /// pool frame in 8 waits 160 µs for a preempted worker: the pool's mean
    /// is 39 µs, and its fastest samples hide it.
    #[test]
    fn a_pool_slowed_by_preempted_workers_is_left_for_inline() {
        let machine = Machine::new(19.0, 25.0).cold().stalled(8, 160.0);
        let (run, ratio) = against_best(&machine, 50_000);
        assert!(ratio < 1.03, "{ratio:.3}x pinned inline: {run:?}");
        assert!(run.on_pool < 50_000 / 20, "{run:?}");
    }

    /// The stalls pass: the pool, tried again now and then, wins again.
    #[test]
    fn a_side_left_for_its_tail_is_tried_again() {
        let mut adaptive = Adaptive::default();
        let stalled = Machine::new(19.0, 25.0).cold().stalled(8, 160.0);
        drive(&mut adaptive, &mut stalled.clone(), 20_000);
        assert_eq!(adaptive.preferred, Choice::Inline);
        let calm = Machine::new(19.0, 25.0).cold();
        // The pool's tail is forgotten within `TAIL_MEMORY` probes...
        drive(&mut adaptive, &mut calm.clone(), 30_000);
        assert_eq!(adaptive.preferred, Choice::Pool, "{adaptive:?}");
        // ...and, measured again, keeps it there.
        let run = drive(&mut adaptive, &mut calm.clone(), 20_000);
        assert!(run.on_pool > 19_500, "{run:?}");
    }

    /// Preempted frames on both sides alike, the sides close: the pool is
    /// explored for its tail (unknown), found alike, and left.
    #[test]
    fn a_side_with_an_unknown_tail_is_explored_and_left_when_alike() {
        let machine = Machine::new(36.0, 30.0).cold().preempted(7, 5_000.0);
        let mut adaptive = Adaptive::default();
        let run = drive(&mut adaptive, &mut machine.clone(), 20_000);
        assert!(run.on_pool < 1_000, "{run:?}");
        assert!(run.switches <= 2, "{run:?}");
        assert_eq!(adaptive.preferred, Choice::Inline);
        assert!(adaptive.tails.iter().all(Option::is_some), "{adaptive:?}");
    }

    #[test]
    fn follows_a_workload_that_grows() {
        let mut adaptive = Adaptive::default();
        drive(&mut adaptive, &mut Machine::new(120.0, 30.0).cold(), 5_000);
        assert_eq!(adaptive.preferred, Choice::Inline);
        // The systems start doing real work: inline now takes 800 µs, the pool 420.
        let run = drive(&mut adaptive, &mut Machine::new(420.0, 800.0).cold(), 3_000);
        assert!(run.on_pool > 2_800, "switched to the pool soon ({run:?})");
        assert_eq!(adaptive.preferred, Choice::Pool);
    }

    #[test]
    fn follows_a_machine_that_gets_busy() {
        // The pool wins while the second core is free...
        let mut adaptive = Adaptive::default();
        drive(&mut adaptive, &mut Machine::new(30.0, 40.0).cold(), 5_000);
        assert_eq!(adaptive.preferred, Choice::Pool);
        // ...then another process takes that core: the pool's frames take
        // 55 µs, less than twice as long, and inline is faster now.
        let run = drive(&mut adaptive, &mut Machine::new(55.0, 40.0).cold(), 2_000);
        assert!(run.on_pool < 300, "switched to inline soon ({run:?})");
        assert_eq!(adaptive.preferred, Choice::Inline);
    }

    /// A game's frame (the battle bench, 20,000 units on 2 threads): 4.5 ms
    /// on the pool, 9 inline. Its probes show two inline frames in a row,
    /// not four, no more often than four-frame probes came before, and a
    /// pool that falls behind is still left.
    #[test]
    fn probes_of_long_frames_show_few_slow_frames() {
        let machine = Machine::new(4_500.0, 9_000.0).cold();
        let mut adaptive = Adaptive::default();
        // The first probe warms and samples both sides in full.
        drive(&mut adaptive, &mut machine.clone(), 100);
        let run = drive(&mut adaptive, &mut machine.clone(), 20_000);
        let (inline, probes) = (20_000 - run.on_pool, run.probes);
        assert_eq!(adaptive.preferred, Choice::Pool);
        assert!(probes >= 3, "still probed ({probes} probes)");
        assert_eq!(run.longest_inline, SLOWER_SAMPLES as u64, "{run:?}");
        // Each inline frame costs one pool frame more: at `LONG_BUDGET`
        // they are 0.25% of the frames (four a probe at `BUDGET`, as many
        // probes: 0.5%).
        assert!(
            inline * 1_000 <= 20_000 * 3,
            "{inline} inline frames in {probes} probes"
        );

        // Another process takes the second core: the pool's frames now take
        // 10 ms, and inline is faster.
        let run = drive(
            &mut adaptive,
            &mut Machine::new(10_000.0, 9_000.0).cold(),
            2_000,
        );
        assert_eq!(adaptive.preferred, Choice::Inline, "{run:?}");
        assert!(run.on_pool < 300, "switched to inline soon ({run:?})");
    }

    #[test]
    fn heavy_frames_with_close_costs_are_probed_often() {
        // 1,000 systems of a few µs: 4.1 ms inline, 4.0 on a busy pool...
        let mut adaptive = Adaptive::default();
        drive(
            &mut adaptive,
            &mut Machine::new(4_100.0, 4_000.0).cold(),
            2_000,
        );
        assert_eq!(adaptive.preferred, Choice::Inline);
        // ...then the second core frees up: nothing changes inline, only a
        // probe can tell, and one comes within a fraction of a second.
        let run = drive(
            &mut adaptive,
            &mut Machine::new(2_500.0, 4_000.0).cold(),
            200,
        );
        assert!(run.on_pool > 120, "switched to the pool soon ({run:?})");
        assert_eq!(adaptive.preferred, Choice::Pool);
    }

    #[test]
    fn a_new_plan_probes_again_soon() {
        let mut adaptive = Adaptive::default();
        // The first probe, the short stretch that measures inline's tail,
        // and the probe after it.
        drive(&mut adaptive, &mut Machine::new(3.1, 3.0).cold(), 30_000);
        assert!(adaptive.probe.is_none(), "the second probe is over");
        assert!(adaptive.tails[Choice::Inline.index()].is_some());
        let stretch = adaptive.stretch();
        assert!(adaptive.countdown > stretch / 2, "{adaptive:?}");
        adaptive.reset();
        assert_eq!(adaptive.countdown, stretch / 4, "{adaptive:?}");
        // What was measured stays: still inline until the probe says otherwise.
        assert_eq!(adaptive.choose().0, Choice::Inline);
    }

    #[test]
    fn a_new_plan_every_frame_does_not_probe_every_frame() {
        // A game that registers a system every frame (`Commands::add_system`).
        for (pool, inline) in [(0.8, 0.3), (19.0, 34.0)] {
            let machine = Machine::new(pool, inline).cold();
            let mut adaptive = Adaptive::default();
            let iterations = 200_000;
            let run = drive_with(
                &mut adaptive,
                &mut machine.clone(),
                iterations,
                Adaptive::reset,
            );
            let best = pinned(&machine, Choice::Pool, iterations).min(pinned(
                &machine,
                Choice::Inline,
                iterations,
            ));
            let ratio = run.total_ns / best;
            assert!(
                ratio < 1.05,
                "{pool}/{inline} µs: {ratio:.3}x the best: {run:?}"
            );
        }
    }

    #[test]
    fn a_stray_record_changes_nothing() {
        let mut adaptive = Adaptive::default();
        drive(&mut adaptive, &mut Machine::new(120.0, 30.0), 1_000);
        let before = format!("{adaptive:?}");
        adaptive.record(Choice::Pool, Duration::from_nanos(1));
        assert_eq!(format!("{adaptive:?}"), before);
    }
}
