//! [`SimClock`]: simulation time, paused, scaled and stepped.

use std::time::Duration;

/// Simulation time for scripts: a service a world advances in
/// [`World::update`](crate::World::update) when it holds one.
///
/// It keeps two times. [`now`](Self::now) advances by each update's delta
/// times the [`scale`](Self::scale); [`fixed_now`](Self::fixed_now)
/// advances by the fixed step times the scale once per fixed step, so a
/// script that says so ([`ScriptCx::wait_fixed`](crate::script::ScriptCx::wait_fixed))
/// follows the fixed cadence. While [`paused`](Self::is_paused) neither
/// moves and [`Scripts::gather`](crate::script::Scripts::gather) wakes no
/// script; [`step`](Self::step) moves both by hand and lets each store's
/// next gather run once.
///
/// ```
/// use std::time::Duration;
/// use sluice::script::SimClock;
///
/// let mut clock = SimClock::new();
/// clock.set_scale(0.5);
/// clock.advance(Duration::from_millis(100));
/// assert_eq!(clock.now(), Duration::from_millis(50));
/// clock.pause();
/// clock.advance(Duration::from_millis(100));
/// assert_eq!(clock.now(), Duration::from_millis(50));
/// clock.step(Duration::from_millis(10));
/// assert_eq!((clock.now(), clock.steps()), (Duration::from_millis(60), 1));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SimClock {
    now: Duration,
    fixed_now: Duration,
    scale: f64,
    paused: bool,
    /// How many times [`step`](Self::step) was called: a store's gather
    /// runs once per step while the clock is paused.
    steps: u64,
}

impl Default for SimClock {
    fn default() -> Self {
        Self::new()
    }
}

impl SimClock {
    /// Its fields, for a save: now, fixed now, scale, paused, steps.
    #[cfg(feature = "serde")]
    pub(crate) fn parts(&self) -> (Duration, Duration, f64, bool, u64) {
        (
            self.now,
            self.fixed_now,
            self.scale,
            self.paused,
            self.steps,
        )
    }

    /// A clock from [`parts`](Self::parts); a scale that is negative or
    /// not finite is refused.
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(
        (now, fixed_now, scale, paused, steps): (Duration, Duration, f64, bool, u64),
    ) -> Result<Self, String> {
        if !scale.is_finite() || scale < 0.0 {
            return Err(format!(
                "the simulation clock's scale {scale} is not a finite scale >= 0"
            ));
        }
        Ok(Self {
            now,
            fixed_now,
            scale,
            paused,
            steps,
        })
    }

    /// A running clock at zero, scale 1.
    pub const fn new() -> Self {
        Self {
            now: Duration::ZERO,
            fixed_now: Duration::ZERO,
            scale: 1.0,
            paused: false,
            steps: 0,
        }
    }

    /// Simulation time of the variable cadence.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Simulation time counted in fixed steps.
    pub fn fixed_now(&self) -> Duration {
        self.fixed_now
    }

    /// How fast simulation time runs against real time (1 is real time).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Sets the scale; a negative or non-finite scale is taken as 0 (time
    /// never runs backwards).
    pub fn set_scale(&mut self, scale: f64) {
        self.scale = if scale.is_finite() {
            scale.max(0.0)
        } else {
            0.0
        };
    }

    /// Whether the clock is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Stops simulation time: no advance moves it, no gather wakes a script.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Lets simulation time run again.
    pub fn resume(&mut self) {
        self.paused = false;
    }

    /// Moves both times forward by `by` (unscaled), paused or not; while
    /// paused, each store's next gather runs once.
    pub fn step(&mut self, by: Duration) {
        self.now = self.now.saturating_add(by);
        self.fixed_now = self.fixed_now.saturating_add(by);
        // A count that stores compare for change only: wrapping after 2^64
        // steps still reads as a new step.
        self.steps = self.steps.wrapping_add(1);
    }

    /// How many times the clock was stepped (wrapping, after 2^64 steps).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Advances the variable time by `delta` times the scale, unless paused.
    /// [`World::update`](crate::World::update) calls it once per update.
    /// Both times saturate at `Duration::MAX`: they never wrap or panic.
    pub fn advance(&mut self, delta: Duration) {
        if !self.paused {
            self.now = self.now.saturating_add(scaled(delta, self.scale));
        }
    }

    /// Advances the fixed time by one step of `step` times the scale,
    /// unless paused. `World::update` calls it before each fixed step.
    pub fn advance_fixed(&mut self, step: Duration) {
        if !self.paused {
            self.fixed_now = self.fixed_now.saturating_add(scaled(step, self.scale));
        }
    }

    /// `steps` times [`advance_fixed`](Self::advance_fixed) at once (the
    /// same sum: each step is scaled alike, and the sum saturates).
    pub(crate) fn advance_fixed_steps(&mut self, step: Duration, steps: u32) {
        if !self.paused {
            let moved = scaled(step, self.scale)
                .checked_mul(steps)
                .unwrap_or(Duration::MAX);
            self.fixed_now = self.fixed_now.saturating_add(moved);
        }
    }
}

fn scaled(delta: Duration, scale: f64) -> Duration {
    if scale == 1.0 {
        delta
    } else {
        Duration::try_from_secs_f64(delta.as_secs_f64() * scale).unwrap_or(Duration::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_pause_and_step() {
        let ms = Duration::from_millis;
        let mut clock = SimClock::new();
        clock.advance(ms(10));
        clock.advance_fixed(ms(16));
        assert_eq!((clock.now(), clock.fixed_now()), (ms(10), ms(16)));
        clock.set_scale(2.0);
        clock.advance(ms(10));
        assert_eq!(clock.now(), ms(30));
        clock.set_scale(f64::NAN);
        clock.advance(ms(10));
        assert_eq!(clock.now(), ms(30), "a non-finite scale stops time");
        clock.set_scale(1.0);
        clock.pause();
        clock.advance(ms(10));
        clock.advance_fixed(ms(16));
        assert_eq!((clock.now(), clock.fixed_now()), (ms(30), ms(16)));
        clock.step(ms(1));
        clock.advance(ms(10));
        assert_eq!(
            (clock.now(), clock.fixed_now(), clock.steps()),
            (ms(31), ms(17), 1)
        );
    }
}
