//! Opt-in, preallocated per-node timing.
//!
//! When timing is off nothing is measured: no `Instant::now`, no counter,
//! and [`ExecutionState::timings`](super::ExecutionState::timings) reports
//! zeros. When it is on, every node records, in a preallocated slot, when
//! it started (as an offset from the start of the run) and how long it took
//! until it completed (for a deferred node, until its completion). The
//! measurements are copied into a plain slice when the run ends, failed or
//! not, so they stay readable until the next measured run.
//!
//! A serial run reads the clock once per node, not twice: its nodes run one
//! after another, so each starts where the previous one ended (the few
//! nanoseconds of the executor between them are counted in the next node),
//! and the first where the run began. That halves what timing, and the
//! spike watch that reads it, costs per node on the serial executor.

use crate::sync::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one node did in the most recent measured run.
///
/// A value snapshot: copying it keeps the numbers of that run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SystemTiming {
    /// When the node started, measured from the start of the run. On the
    /// serial executor, when the node before it ended (or the run began):
    /// it reads one clock per node, and the few nanoseconds the executor
    /// spends between two nodes count in the second's duration.
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
    /// Whether the run is serial: each node's start is the previous one's
    /// end, [`last_end`](Self::last_end). Set by `begin_run`, before any
    /// node runs.
    chained: bool,
    /// In a serial run, the end of the last node to complete (as a clock
    /// stores it), or the run's start before the first.
    last_end: AtomicU64,
}

impl Timings {
    /// Disabled timing for `node_count` nodes.
    pub(crate) fn new(node_count: usize) -> Self {
        Self {
            enabled: false,
            clocks: Box::new([]),
            snapshot: vec![SystemTiming::default(); node_count].into(),
            chained: false,
            last_end: AtomicU64::new(0),
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

    /// Prepares a run (`serial`: nodes one after another, on the serial
    /// executor): returns the run's epoch when timing is on (the only
    /// `Instant::now` of a run outside the nodes), `None` otherwise.
    pub(crate) fn begin_run(&mut self, serial: bool) -> Option<Instant> {
        if !self.enabled {
            return None;
        }
        self.chained = serial;
        // The epoch itself, as a clock stores it (nanoseconds plus one).
        self.last_end.store(1, Ordering::Relaxed);
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
    /// out, records nothing: never a panic inside a job). In a serial run,
    /// the previous node's end, without reading the clock.
    #[inline]
    pub(crate) fn start(&self, node: u32, epoch: Instant) {
        if let Some(clock) = self.clocks.get(node as usize) {
            if self.chained {
                // The previous node completed before this one started
                // (the serial loop waits for it), so its end is visible.
                let start = self.last_end.load(Ordering::Relaxed);
                clock.start.store(start, Ordering::Relaxed);
            } else {
                clock.start(epoch);
            }
        }
    }

    /// Records the completion of `node` (see [`start`](Self::start)).
    #[inline]
    pub(crate) fn end(&self, node: u32, epoch: Instant) {
        if let Some(clock) = self.clocks.get(node as usize) {
            let end = clock.end(epoch);
            if self.chained {
                self.last_end.store(end, Ordering::Relaxed);
            }
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

    /// Records the node's completion; what it stored.
    pub(crate) fn end(&self, epoch: Instant) -> u64 {
        let end = nanos_since(epoch) + 1;
        self.end.store(end, Ordering::Relaxed);
        end
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
        assert!(t.begin_run(false).is_none());
        assert!(t.clocks().is_empty());
        assert_eq!(t.snapshot(), &[SystemTiming::default(); 2]);
        t.set_enabled(true);
        let epoch = t.begin_run(false).unwrap();
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

    #[test]
    fn a_serial_run_starts_each_node_where_the_previous_ended() {
        let mut t = Timings::new(3);
        t.set_enabled(true);
        let epoch = t.begin_run(true).unwrap();
        for node in [2, 0] {
            t.start(node, epoch);
            std::thread::sleep(std::time::Duration::from_millis(1));
            t.end(node, epoch);
        }
        t.finish_run();
        let [first, second] = [t.snapshot()[2], t.snapshot()[0]];
        assert_eq!(
            first.start,
            std::time::Duration::ZERO,
            "the first at the epoch"
        );
        assert_eq!(second.start, first.start + first.duration);
        assert!(first.duration >= std::time::Duration::from_millis(1));
        assert!(second.duration >= std::time::Duration::from_millis(1));
        assert!(!t.snapshot()[1].ran);
        // A parallel run reads each start: not chained any more.
        let epoch = t.begin_run(false).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
        t.start(1, epoch);
        t.end(1, epoch);
        t.finish_run();
        assert!(t.snapshot()[1].start >= std::time::Duration::from_millis(1));
    }
}
