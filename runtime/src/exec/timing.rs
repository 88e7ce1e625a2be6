//! Opt-in, preallocated per-node timing.
//!
//! When timing is off nothing is measured: no `Instant::now`, no counter,
//! and [`ExecutionState::timings`](super::ExecutionState::timings) reports
//! zeros. When it is on, every node records, in a preallocated slot, when
//! it started (as an offset from the start of the run) and how long it took
//! until it completed (for a deferred node, until its completion). The
//! measurements are copied into a plain slice when the run ends, failed or
//! not, so they stay readable until the next measured run.

use crate::sync::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one node did in the most recent measured run.
///
/// A value snapshot: copying it keeps the numbers of that run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SystemTiming {
    /// When the node started, measured from the start of the run.
    pub start: Duration,
    /// How long the node took, from its start to its completion (a deferred
    /// node completes when its handle does, a batch node when its last slice
    /// and `after_update` are done).
    pub duration: Duration,
    /// Whether the node ran in that run (false when timing is off, or when
    /// a failure stopped the run before the node started).
    pub ran: bool,
}

/// The live clock of one node during a run: nanoseconds since the run's
/// epoch, plus one, so that zero means "not recorded".
#[derive(Debug, Default)]
pub(crate) struct NodeClock {
    start: AtomicU64,
    end: AtomicU64,
}

/// Per-node measurement storage, owned by an execution state.
#[derive(Debug)]
pub(crate) struct Timings {
    enabled: bool,
    /// Written by the threads running nodes; empty while timing is off.
    clocks: Box<[NodeClock]>,
    /// What [`ExecutionState::timings`](super::ExecutionState::timings) returns.
    snapshot: Box<[SystemTiming]>,
}

impl Timings {
    /// Disabled timing for `node_count` nodes.
    pub(crate) fn new(node_count: usize) -> Self {
        Self {
            enabled: false,
            clocks: Box::new([]),
            snapshot: vec![SystemTiming::default(); node_count].into(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Turns timing on or off, clearing every previous measurement. The
    /// storage is allocated here, never during a run.
    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        let n = self.snapshot.len();
        self.enabled = enabled;
        self.snapshot.fill(SystemTiming::default());
        self.clocks = if enabled {
            (0..n).map(|_| NodeClock::default()).collect()
        } else {
            Box::new([])
        };
    }

    /// Resizes for a graph of `node_count` nodes, clearing measurements.
    pub(crate) fn resize(&mut self, node_count: usize) {
        if self.snapshot.len() != node_count {
            self.snapshot = vec![SystemTiming::default(); node_count].into();
        }
        self.set_enabled(self.enabled);
    }

    /// Whether the storage holds one entry per node of a graph of
    /// `node_count` nodes (the clocks too, when timing is on).
    pub(crate) fn fits(&self, node_count: usize) -> bool {
        self.snapshot.len() == node_count && (!self.enabled || self.clocks.len() == node_count)
    }

    /// Prepares a run: returns the run's epoch when timing is on (the only
    /// `Instant::now` of a run outside the nodes), `None` otherwise.
    pub(crate) fn begin_run(&self) -> Option<Instant> {
        if !self.enabled {
            return None;
        }
        for clock in self.clocks.iter() {
            clock.start.store(0, Ordering::Relaxed);
            clock.end.store(0, Ordering::Relaxed);
        }
        Some(Instant::now())
    }

    /// The clocks the run writes into (empty when timing is off).
    #[cfg(test)]
    pub(crate) fn clocks(&self) -> &[NodeClock] {
        &self.clocks
    }

    /// Records the start of `node` (no clock for it, which `prepare` rules
    /// out, records nothing: never a panic inside a job).
    #[inline]
    pub(crate) fn start(&self, node: u32, epoch: Instant) {
        if let Some(clock) = self.clocks.get(node as usize) {
            clock.start(epoch);
        }
    }

    /// Records the completion of `node` (see [`start`](Self::start)).
    #[inline]
    pub(crate) fn end(&self, node: u32, epoch: Instant) {
        if let Some(clock) = self.clocks.get(node as usize) {
            clock.end(epoch);
        }
    }

    /// Copies the run's clocks into the snapshot.
    pub(crate) fn finish_run(&mut self) {
        if !self.enabled {
            return;
        }
        for (timing, clock) in self.snapshot.iter_mut().zip(self.clocks.iter()) {
            let start = clock.start.load(Ordering::Relaxed);
            let end = clock.end.load(Ordering::Relaxed);
            *timing = if start == 0 {
                SystemTiming::default()
            } else {
                SystemTiming {
                    start: Duration::from_nanos(start - 1),
                    duration: Duration::from_nanos(end.saturating_sub(start)),
                    ran: true,
                }
            };
        }
    }

    pub(crate) fn snapshot(&self) -> &[SystemTiming] {
        &self.snapshot
    }
}

impl NodeClock {
    /// Records the start of the node's run.
    pub(crate) fn start(&self, epoch: Instant) {
        self.start.store(nanos_since(epoch) + 1, Ordering::Relaxed);
    }

    /// Records the node's completion.
    pub(crate) fn end(&self, epoch: Instant) {
        self.end.store(nanos_since(epoch) + 1, Ordering::Relaxed);
    }
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_reports_zeros_and_enabling_clears() {
        let mut t = Timings::new(2);
        assert!(t.begin_run().is_none());
        assert!(t.clocks().is_empty());
        assert_eq!(t.snapshot(), &[SystemTiming::default(); 2]);
        t.set_enabled(true);
        let epoch = t.begin_run().unwrap();
        t.clocks()[1].start(epoch);
        t.clocks()[1].end(epoch);
        t.finish_run();
        assert!(t.snapshot()[1].ran);
        assert!(!t.snapshot()[0].ran);
        t.set_enabled(true);
        assert_eq!(t.snapshot(), &[SystemTiming::default(); 2]);
        t.resize(3);
        assert_eq!(t.clocks().len(), 3);
    }
}
