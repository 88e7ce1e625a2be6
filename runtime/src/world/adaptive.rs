//! The adaptive executor: each iteration runs on the pool or inline on the
//! calling thread, whichever ran this world's recent iterations faster.
//!
//! A frame of a thousand trivial systems is cheaper run inline than handed
//! between cores; a frame of heavy systems is not. Both executors follow the
//! same plan with the same results (serial equivalence), so switching between
//! them from one iteration to the next changes timing only. The estimate of
//! the choice not taken is refreshed every [`PROBE_INTERVAL`] iterations.

use std::time::Duration;

/// Iterations between two runs of the executor not currently preferred.
pub(crate) const PROBE_INTERVAL: u32 = 32;

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

/// Recent iteration times of both executors.
#[derive(Debug, Default, Clone)]
pub(crate) struct Adaptive {
    pool_ns: Option<f64>,
    inline_ns: Option<f64>,
    since_probe: u32,
}

impl Adaptive {
    /// Forgets the estimates (a new plan has a new cost).
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    /// The executor for the next iteration: an unmeasured one first, then the
    /// faster one, probing the other every [`PROBE_INTERVAL`] iterations.
    pub(crate) fn choose(&mut self) -> Choice {
        let (pool, inline) = match (self.pool_ns, self.inline_ns) {
            (None, _) => return Choice::Pool,
            (_, None) => return Choice::Inline,
            (Some(pool), Some(inline)) => (pool, inline),
        };
        let preferred = if pool <= inline {
            Choice::Pool
        } else {
            Choice::Inline
        };
        self.since_probe += 1;
        if self.since_probe >= PROBE_INTERVAL {
            self.since_probe = 0;
            return match preferred {
                Choice::Pool => Choice::Inline,
                Choice::Inline => Choice::Pool,
            };
        }
        preferred
    }

    /// Records how long an iteration on `choice` took.
    pub(crate) fn record(&mut self, choice: Choice, elapsed: Duration) {
        let sample = elapsed.as_nanos() as f64;
        let estimate = match choice {
            Choice::Pool => &mut self.pool_ns,
            Choice::Inline => &mut self.inline_ns,
        };
        *estimate = Some(match *estimate {
            Some(previous) => previous + WEIGHT * (sample - previous),
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

    #[test]
    fn measures_both_then_prefers_the_faster_and_probes_the_other() {
        let mut adaptive = Adaptive::default();
        assert_eq!(adaptive.choose(), Choice::Pool);
        adaptive.record(Choice::Pool, micros(120));
        assert_eq!(adaptive.choose(), Choice::Inline);
        adaptive.record(Choice::Inline, micros(30));
        let choices: Vec<Choice> = (0..PROBE_INTERVAL)
            .map(|_| {
                let choice = adaptive.choose();
                adaptive.record(
                    choice,
                    micros(if choice == Choice::Pool { 120 } else { 30 }),
                );
                choice
            })
            .collect();
        let probes = choices.iter().filter(|&&c| c == Choice::Pool).count();
        assert_eq!(probes, 1, "one probe of the slower pool per interval");
        assert_eq!(choices.last(), Some(&Choice::Pool));
    }

    #[test]
    fn follows_a_workload_that_grows() {
        let mut adaptive = Adaptive::default();
        adaptive.record(Choice::Pool, micros(120));
        adaptive.record(Choice::Inline, micros(30));
        // The systems start doing real work: inline now takes 800 µs, the pool 420.
        for _ in 0..4 * PROBE_INTERVAL {
            let choice = adaptive.choose();
            adaptive.record(
                choice,
                micros(if choice == Choice::Pool { 420 } else { 800 }),
            );
        }
        assert_eq!(adaptive.choose(), Choice::Pool);
    }

    #[test]
    fn reset_forgets() {
        let mut adaptive = Adaptive::default();
        adaptive.record(Choice::Pool, micros(1));
        adaptive.record(Choice::Inline, micros(2));
        adaptive.reset();
        assert_eq!(adaptive.choose(), Choice::Pool);
    }
}
