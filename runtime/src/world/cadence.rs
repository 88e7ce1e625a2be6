//! The fixed-timestep cadence (reference 000): an accumulator fed by
//! [`World::update`](crate::World::update) decides how many whole steps the
//! fixed plan runs, each to completion, before the variable plan.

use std::time::Duration;

use super::{FrameTime, World};
use crate::script::SimClock;

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

/// A world's time, saved between updates by [`World::clock_snapshot`] and
/// put back by [`World::restore_clock`]: everything that decides how time
/// moves from the next update on, so a world restored from it advances
/// exactly as the saved one did (the same fixed steps at the same updates,
/// the same [`SimClock`] deadlines reached at the same updates).
///
/// It holds:
/// - the frame clock: the last update's [`FrameTime`] (`None` before the
///   first update), which the next update counts on from;
/// - the fixed cadence: its step and cap
///   ([`World::set_fixed_timestep`], [`World::set_max_fixed_steps`]), the
///   accumulator (time toward the next step), the steps run so far, and
///   the [`FixedTime`] service as the last update left it;
/// - the world's [`SimClock`], whole (both times, scale, pause, steps),
///   when it holds one.
///
/// With a store's [`ScriptSnapshot`](crate::script::ScriptSnapshot) and the
/// game's own state, it is a save: restore the three together, between
/// updates.
///
/// ```
/// use std::time::Duration;
/// use sluice::script::SimClock;
/// use sluice::World;
///
/// let mut world = World::new();
/// world.insert(SimClock::new());
/// world.update(Duration::from_millis(10)).unwrap();
/// let save = world.clock_snapshot();
/// world.update(Duration::from_millis(500)).unwrap();
/// world.restore_clock(&save);
/// assert_eq!(world.get::<SimClock>().unwrap().now(), Duration::from_millis(10));
/// world.update(Duration::from_millis(16)).unwrap();
/// assert_eq!(world.get::<SimClock>().unwrap().now(), Duration::from_millis(26));
/// assert_eq!(world.get::<sluice::FixedTime>().unwrap().total, 1, "10 + 16 ms: one 1/60 s step");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClockSnapshot {
    frame: Option<FrameTime>,
    fixed: FixedClock,
    fixed_time: FixedTime,
    sim: Option<SimClock>,
}

impl ClockSnapshot {
    /// The last update's frame clock (`None`: saved before the first).
    pub fn frame_time(&self) -> Option<FrameTime> {
        self.frame
    }

    /// The fixed cadence's step.
    pub fn fixed_step(&self) -> Duration {
        self.fixed.step
    }

    /// The cap on fixed steps per update.
    pub fn max_fixed_steps(&self) -> u32 {
        self.fixed.max_steps
    }

    /// Time accrued toward the next fixed step (less than one step).
    pub fn fixed_accumulated(&self) -> Duration {
        self.fixed.accumulated
    }

    /// Fixed steps run before the save.
    pub fn fixed_steps_total(&self) -> u64 {
        self.fixed.total
    }

    /// The [`FixedTime`] service at the save.
    pub fn fixed_time(&self) -> FixedTime {
        self.fixed_time
    }

    /// The world's [`SimClock`] at the save, if it held one.
    pub fn sim_clock(&self) -> Option<&SimClock> {
        self.sim.as_ref()
    }
}

/// A [`ClockSnapshot`] as a save writes it (the `serde` feature):
/// `ClockSnapshot` itself is not `Deserialize`, so the only clocks a world
/// restores from a save are those this reader checked.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct SavedClocks {
    /// Delta, elapsed, frame.
    frame: Option<(Duration, Duration, u64)>,
    /// Step, cap, accumulated, total.
    fixed: (Duration, u32, Duration, u64),
    /// Step, steps, index, dropped, alpha, total.
    fixed_time: (Duration, u32, u32, u32, f64, u64),
    sim: Option<(Duration, Duration, f64, bool, u64)>,
}

#[cfg(feature = "serde")]
impl SavedClocks {
    /// What `snapshot` holds.
    pub(crate) fn new(snapshot: &ClockSnapshot) -> Self {
        let f = snapshot.fixed_time;
        Self {
            frame: snapshot.frame.map(|t| (t.delta, t.elapsed, t.frame)),
            fixed: (
                snapshot.fixed.step,
                snapshot.fixed.max_steps,
                snapshot.fixed.accumulated,
                snapshot.fixed.total,
            ),
            fixed_time: (f.step, f.steps, f.index, f.dropped, f.alpha, f.total),
            sim: snapshot.sim.as_ref().map(SimClock::parts),
        }
    }

    /// The clocks, checked: a zero step, a cap of 0 steps, an accumulator
    /// of a step or more, an interpolation factor outside `[0, 1)` or a
    /// bad simulation scale is refused (naming it).
    pub(crate) fn into_snapshot(self) -> Result<ClockSnapshot, String> {
        let (step, max_steps, accumulated, total) = self.fixed;
        if step.is_zero() || max_steps == 0 || accumulated >= step {
            return Err(format!(
                "the fixed step {step:?}, cap {max_steps} and accumulator {accumulated:?} are not a fixed clock's"
            ));
        }
        let (f_step, steps, index, dropped, alpha, f_total) = self.fixed_time;
        if !(0.0..1.0).contains(&alpha) {
            return Err(format!(
                "the interpolation factor {alpha} is outside [0, 1)"
            ));
        }
        Ok(ClockSnapshot {
            frame: self.frame.map(|(delta, elapsed, frame)| FrameTime {
                delta,
                elapsed,
                frame,
            }),
            fixed: FixedClock {
                step,
                max_steps,
                accumulated,
                total,
            },
            fixed_time: FixedTime {
                step: f_step,
                steps,
                index,
                dropped,
                alpha,
                total: f_total,
            },
            sim: self.sim.map(SimClock::from_parts).transpose()?,
        })
    }
}

impl World {
    /// Saves the world's time (see [`ClockSnapshot`] for what it holds);
    /// take it between updates, with the scripts' snapshots.
    pub fn clock_snapshot(&self) -> ClockSnapshot {
        ClockSnapshot {
            frame: self.frame_time,
            fixed: self.fixed,
            fixed_time: self
                .get::<FixedTime>()
                .copied()
                .unwrap_or_else(|| self.fixed.time(Steps { run: 0, dropped: 0 }, 0)),
            sim: self.get::<SimClock>().cloned(),
        }
    }

    /// Puts the world's time back as `snapshot` saved it: the frame clock,
    /// the fixed step, cap, accumulator and step count, the [`FrameTime`]
    /// and [`FixedTime`] services, and the [`SimClock`] (inserted when the
    /// world has none). A snapshot without a `SimClock` leaves the world's
    /// as it is; one saved before the first update makes the next update
    /// the world's first again (frame 0), and leaves the `FrameTime`
    /// service as it is until then.
    pub fn restore_clock(&mut self, snapshot: &ClockSnapshot) {
        self.frame_time = snapshot.frame;
        if let Some(time) = snapshot.frame {
            self.overwrite(time);
        }
        self.fixed = snapshot.fixed;
        self.overwrite(snapshot.fixed_time);
        if let Some(clock) = &snapshot.sim {
            self.overwrite(clock.clone());
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
