//! The fixed-timestep cadence (reference 000): an accumulator fed by
//! [`World::update`](crate::World::update) decides how many whole steps the
//! fixed plan runs, each to completion, before the variable plan.

use std::time::Duration;

/// The fixed cadence's clock, as a service every node may read (`&FixedTime`).
///
/// Inserted before each fixed step and once more before the variable plan
/// of the same update, so a variable node interpolating between the last two
/// fixed states reads [`alpha`](FixedTime::alpha).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FixedTime {
    /// The length of one step.
    pub step: Duration,
    /// How many steps this update runs (after the cap).
    pub steps: u32,
    /// Which of them is running now (from 0); equal to `steps` once the
    /// variable plan runs.
    pub index: u32,
    /// Steps the cap dropped in this update (the spiral of death avoided).
    pub dropped: u32,
    /// How far the time left in the accumulator is into the next step, from
    /// 0 (inclusive) to 1 (exclusive): the interpolation factor.
    pub alpha: f64,
    /// Steps run since the world started.
    pub total: u64,
}

/// The accumulator and its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FixedClock {
    pub(crate) step: Duration,
    pub(crate) max_steps: u32,
    pub(crate) accumulated: Duration,
    pub(crate) total: u64,
}

/// One update's decision: how many steps run, how many the cap dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Steps {
    pub(crate) run: u32,
    pub(crate) dropped: u32,
}

impl Default for FixedClock {
    fn default() -> Self {
        Self {
            step: Duration::from_nanos(16_666_667),
            max_steps: 8,
            accumulated: Duration::ZERO,
            total: 0,
        }
    }
}

impl FixedClock {
    /// Adds `delta` and takes every whole step out of the accumulator, at
    /// most `max_steps`; the steps beyond the cap are dropped with their
    /// time (what remains is less than one step).
    /// Saturating: a delta that would pass `Duration::MAX` fills the
    /// accumulator to it.
    pub(crate) fn advance(&mut self, delta: Duration) -> Steps {
        self.accumulated = self.accumulated.saturating_add(delta);
        let step = self.step.as_nanos().max(1);
        let whole = self.accumulated.as_nanos() / step;
        // Less than one step, which is a `Duration`, so it is one too
        // (a step may be longer than a u64 of nanoseconds).
        self.accumulated = from_nanos(self.accumulated.as_nanos() % step);
        let run = whole.min(u128::from(self.max_steps)) as u32;
        let dropped = u32::try_from(whole - u128::from(run)).unwrap_or(u32::MAX);
        Steps { run, dropped }
    }

    /// How far the accumulator is into the next step: below 1 even where
    /// the quotient of two long durations rounds up to it.
    fn alpha(&self) -> f64 {
        let ratio = self.accumulated.as_nanos() as f64 / self.step.as_nanos().max(1) as f64;
        ratio.min(1.0f64.next_down())
    }

    /// The service's value while step `index` of `steps` runs.
    pub(crate) fn time(&self, steps: Steps, index: u32) -> FixedTime {
        FixedTime {
            step: self.step,
            steps: steps.run,
            index,
            dropped: steps.dropped,
            alpha: self.alpha(),
            total: self.total,
        }
    }
}

/// `nanos` as a `Duration`; `nanos` is at most `Duration::MAX`'s.
fn from_nanos(nanos: u128) -> Duration {
    const PER_SEC: u128 = 1_000_000_000;
    let secs = u64::try_from(nanos / PER_SEC).unwrap_or(u64::MAX);
    Duration::new(secs, (nanos % PER_SEC) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> FixedClock {
        FixedClock {
            step: Duration::from_nanos(1_000_000_000 / 60),
            ..FixedClock::default()
        }
    }

    #[test]
    fn whole_steps_accrue_and_the_rest_carries() {
        let mut clock = clock();
        let ms = Duration::from_millis;
        assert_eq!(clock.advance(ms(5)), Steps { run: 0, dropped: 0 });
        assert_eq!(clock.advance(ms(16)), Steps { run: 1, dropped: 0 });
        assert_eq!(clock.advance(ms(40)), Steps { run: 2, dropped: 0 });
        let capped = clock.advance(ms(250));
        assert_eq!(capped.run, 8);
        assert!(capped.dropped > 0);
        assert!(clock.accumulated < clock.step);
    }

    #[test]
    fn saturates_and_keeps_remainders_longer_than_u64_nanoseconds() {
        let mut clock = FixedClock {
            step: Duration::MAX,
            ..clock()
        };
        let half = Duration::from_secs(u64::MAX / 2);
        assert_eq!(clock.advance(half), Steps { run: 0, dropped: 0 });
        assert_eq!(clock.accumulated, half, "more nanoseconds than a u64 holds");
        clock.advance(Duration::MAX);
        assert_eq!(
            clock.accumulated,
            Duration::ZERO,
            "one whole step, saturated"
        );
        clock.advance(Duration::MAX - Duration::from_nanos(1));
        let alpha = clock.time(Steps { run: 0, dropped: 0 }, 0).alpha;
        assert!(alpha < 1.0 && alpha > 0.99, "{alpha}");
    }
}
