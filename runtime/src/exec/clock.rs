//! The clock the executor times nodes with.
//!
//! A node's timing (and the spike watch, which reads it) costs one clock
//! read per node on the serial executor, so the read must be as cheap as
//! the hardware allows. `std::time::Instant::now` is a `clock_gettime` call
//! through the vDSO (tens of nanoseconds, over a hundred on a loaded
//! machine); [`Clock`] is the `quanta` crate's, which reads the processor's
//! invariant time-stamp counter (`rdtsc` on x86-64, `cntvct_el0` on
//! AArch64) and keeps the raw counts: they are scaled to nanoseconds only
//! when a run's timings are copied out, after its last node. Where the
//! counter is not invariant, `quanta` falls back to the monotonic clock by
//! itself.
//!
//! Under Miri and loom, which cannot run `rdtsc`, the same interface sits on
//! `std::time::Instant`.

/// A reading of a [`Clock`]: raw counts of its source, never 0 (so a stored
/// zero can mean "not recorded"). Only differences between readings of the
/// same clock mean anything, through [`Clock::nanos_between`].
pub(crate) type Ticks = u64;

/// The executor's clock. Making one is cheap after the first in a process,
/// which calibrates the counter against the monotonic clock (about a
/// millisecond, at most 200): make it when timing is turned on, not before.
#[derive(Clone, Debug)]
pub(crate) struct Clock {
    #[cfg(not(any(miri, loom)))]
    source: quanta::Clock,
    /// Readings are nanoseconds since this, plus one.
    #[cfg(any(miri, loom))]
    origin: std::time::Instant,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(any(miri, loom)))]
            source: quanta::Clock::new(),
            #[cfg(any(miri, loom))]
            origin: std::time::Instant::now(),
        }
    }

    /// The current reading.
    #[inline]
    pub(crate) fn now(&self) -> Ticks {
        #[cfg(not(any(miri, loom)))]
        {
            // Setting the lowest bit keeps a reading nonzero and readings in
            // order (a < b implies a | 1 <= b | 1), for one tick's precision.
            self.source.raw() | 1
        }
        #[cfg(any(miri, loom))]
        {
            u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
        }
    }

    /// The nanoseconds from `start` to `end`, two readings of this clock; 0
    /// when `end` is not after `start`.
    #[inline]
    pub(crate) fn nanos_between(&self, start: Ticks, end: Ticks) -> u64 {
        #[cfg(not(any(miri, loom)))]
        {
            self.source.delta_as_nanos(start, end)
        }
        #[cfg(any(miri, loom))]
        {
            end.saturating_sub(start)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn readings_are_nonzero_ordered_and_scaled_to_nanoseconds() {
        let clock = Clock::new();
        let (start, std_start) = (clock.now(), Instant::now());
        assert_ne!(start, 0);
        std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 20 }));
        let (end, std_elapsed) = (clock.now(), std_start.elapsed());
        assert!(end > start);
        let nanos = clock.nanos_between(start, end);
        // The two clocks agree to a few percent over a sleep (the sleep's
        // own jitter is in both). Not under Miri: there the clock is std's
        // own `Instant` on Miri's virtual time, which advances with the
        // work interpreted between the four readings, not with the sleep
        // alone (4.09 ms against 2.93 ms in one CI run).
        let std_nanos = std_elapsed.as_nanos() as f64;
        assert!(
            cfg!(miri) || (nanos as f64 - std_nanos).abs() < std_nanos * 0.1 + 50_000.0,
            "{nanos} ns against std's {std_nanos}"
        );
        assert!(nanos > 0);
        assert_eq!(clock.nanos_between(end, start), 0, "backwards is zero");
        assert_eq!(clock.clone().nanos_between(start, start), 0);
    }
}
