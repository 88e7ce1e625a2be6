//! The adaptive executor: each iteration runs on the pool or inline on the
//! calling thread, whichever ran this world's recent iterations faster.
//!
//! A frame of a thousand trivial systems is cheaper run inline than handed
//! between cores; a frame of heavy systems is not. Both executors follow the
//! same plan with the same results (serial equivalence), so switching between
//! them from one iteration to the next changes timing only.
//!
//! The executor not preferred is probed now and then: after
//! [`MIN_INTERVAL`] iterations at first, twice as long each time a probe
//! confirms the preference (up to [`MAX_INTERVAL`]), and back to the minimum
//! when a probe overturns it. Only some iterations are timed (the first
//! ones, probes, the iteration after a probe, and one in [`SAMPLE_EVERY`]
//! otherwise), and a sample counts for at most twice the current estimate, so
//! one preempted frame does not swing the choice.

use std::time::Duration;

/// Iterations before the first probe, and after a probe that overturned the
/// preference.
pub(crate) const MIN_INTERVAL: u32 = 32;
/// The longest stretch between probes.
pub(crate) const MAX_INTERVAL: u32 = 1024;
/// In steady state, one preferred iteration in this many is timed.
pub(crate) const SAMPLE_EVERY: u32 = 8;
/// How much one measurement moves an estimate (exponential moving average).
const WEIGHT: f64 = 0.25;

/// Which executor one iteration runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    /// The pool: the calling thread is worker 0.
    Pool,
    /// The calling thread alone.
    Inline,
}

impl Choice {
    fn other(self) -> Self {
        match self {
            Choice::Pool => Choice::Inline,
            Choice::Inline => Choice::Pool,
        }
    }
}

/// Recent iteration times of both executors, and the probing schedule.
#[derive(Debug, Clone)]
pub(crate) struct Adaptive {
    pool_ns: Option<f64>,
    inline_ns: Option<f64>,
    /// Iterations left before the next probe.
    countdown: u32,
    /// The current stretch between probes.
    interval: u32,
    /// What the last probe ran, until its verdict is taken.
    probing: Option<Choice>,
    /// The next preferred iteration is timed (it follows a probe).
    time_next: bool,
    /// Preferred iterations since the last timed one.
    untimed: u32,
}

impl Default for Adaptive {
    fn default() -> Self {
        Self {
            pool_ns: None,
            inline_ns: None,
            countdown: MIN_INTERVAL,
            interval: MIN_INTERVAL,
            probing: None,
            time_next: false,
            untimed: 0,
        }
    }
}

impl Adaptive {
    /// Forgets the estimates (a new plan has a new cost).
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    fn preferred(&self) -> Option<Choice> {
        match (self.pool_ns, self.inline_ns) {
            (Some(pool), Some(inline)) if pool <= inline => Some(Choice::Pool),
            (Some(_), Some(_)) => Some(Choice::Inline),
            _ => None,
        }
    }

    /// The executor for the next iteration, and whether to time it: an
    /// unmeasured one first, then the faster one, probing the other on the
    /// schedule described in the module docs.
    pub(crate) fn choose(&mut self) -> (Choice, bool) {
        let Some(preferred) = self.preferred() else {
            let first = if self.pool_ns.is_none() {
                Choice::Pool
            } else {
                Choice::Inline
            };
            return (first, true);
        };
        if let Some(probed) = self.probing.take() {
            // The probe's verdict: a faster probe takes over (the estimates
            // already say so); a slower one lengthens the stretch.
            self.interval = if probed == preferred {
                MIN_INTERVAL
            } else {
                (self.interval * 2).min(MAX_INTERVAL)
            };
            self.countdown = self.interval;
            self.time_next = true;
        }
        self.countdown = self.countdown.saturating_sub(1);
        if self.countdown == 0 {
            self.probing = Some(preferred.other());
            return (preferred.other(), true);
        }
        self.untimed += 1;
        let time = std::mem::take(&mut self.time_next) || self.untimed >= SAMPLE_EVERY;
        if time {
            self.untimed = 0;
        }
        (preferred, time)
    }

    /// Records how long a timed iteration on `choice` took.
    pub(crate) fn record(&mut self, choice: Choice, elapsed: Duration) {
        let sample = elapsed.as_nanos() as f64;
        let estimate = match choice {
            Choice::Pool => &mut self.pool_ns,
            Choice::Inline => &mut self.inline_ns,
        };
        *estimate = Some(match *estimate {
            Some(previous) => previous + WEIGHT * (sample.min(2.0 * previous) - previous),
            None => sample,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(us: u64) -> Duration {
        Duration::from_micros(us)
    }

    /// Runs `iterations` with fixed costs, returning how many ran on the pool
    /// and how many were timed.
    fn drive(adaptive: &mut Adaptive, iterations: u32, pool: u64, inline: u64) -> (u32, u32) {
        let (mut on_pool, mut timed) = (0, 0);
        for _ in 0..iterations {
            let (choice, time) = adaptive.choose();
            let cost = if choice == Choice::Pool { pool } else { inline };
            on_pool += u32::from(choice == Choice::Pool);
            if time {
                timed += 1;
                adaptive.record(choice, micros(cost));
            }
        }
        (on_pool, timed)
    }

    #[test]
    fn measures_both_then_prefers_the_faster_and_probes_ever_less_often() {
        let mut adaptive = Adaptive::default();
        assert_eq!(adaptive.choose(), (Choice::Pool, true));
        adaptive.record(Choice::Pool, micros(120));
        assert_eq!(adaptive.choose(), (Choice::Inline, true));
        adaptive.record(Choice::Inline, micros(30));
        let (probes, timed) = drive(&mut adaptive, 4096, 120, 30);
        // Probes after 32, 64, 128, 256, 512, 1024, 1024... iterations.
        assert!((5..=8).contains(&probes), "{probes} probes");
        assert!(timed < 4096 / 4, "most iterations are not timed ({timed})");
    }

    #[test]
    fn follows_a_workload_that_grows() {
        let mut adaptive = Adaptive::default();
        adaptive.record(Choice::Pool, micros(120));
        adaptive.record(Choice::Inline, micros(30));
        drive(&mut adaptive, 2000, 120, 30);
        // The systems start doing real work: inline now takes 800 µs, the pool 420.
        let (on_pool, _) = drive(&mut adaptive, 3000, 420, 800);
        assert!(on_pool > 1500, "switched to the pool ({on_pool} of 3000)");
        assert_eq!(adaptive.choose().0, Choice::Pool);
    }

    #[test]
    fn one_preempted_frame_does_not_swing_the_choice() {
        let mut adaptive = Adaptive::default();
        adaptive.record(Choice::Pool, micros(120));
        adaptive.record(Choice::Inline, micros(30));
        adaptive.record(Choice::Inline, micros(5_000));
        assert_eq!(adaptive.choose().0, Choice::Inline);
    }

    #[test]
    fn reset_forgets() {
        let mut adaptive = Adaptive::default();
        adaptive.record(Choice::Pool, micros(1));
        adaptive.record(Choice::Inline, micros(2));
        adaptive.reset();
        assert_eq!(adaptive.choose(), (Choice::Pool, true));
    }
}
