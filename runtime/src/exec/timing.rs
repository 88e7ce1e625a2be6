//! Opt-in, preallocated per-node timing.
//!
//! When timing is off nothing is measured: no clock read, no counter,
//! and [`ExecutionState::timings`](super::ExecutionState::timings) reports
//! zeros. When it is on, every node records, in a preallocated slot, when
//! it started (as an offset from the start of the run) and how long it took
//! until it completed (for a deferred node, until its completion). The
//! measurements are copied into a plain slice when the run ends, failed or
//! not, so they stay readable until the next measured run.
//!
//! The world's spike watch needs only each node's duration, once, right
//! after the run: with the clocks on and the copy off (`set(true, false)`)
//! it reads them straight from the slots ([`Timings::node_nanos`]), and the
//! run pays for no copy it does not use.
//!
//! A serial run reads the clock once per node, not twice: its nodes run one
//! after another, so each starts where the previous one ended (the few
//! nanoseconds of the executor between them are counted in the next node),
//! and the first where the run began. That halves what timing, and the
//! spike watch that reads it, costs per node on the serial executor.
//!
//! The clock is the executor's [`Clock`] (the time-stamp counter, see
//! `clock.rs`); the clocks hold its raw readings, scaled to nanoseconds only
//! when the run ends.

use super::clock::{Clock, Ticks};
use super::idle::RunProbe;
use crate::sync::{AtomicU64, Ordering};
use std::time::Duration;

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
    /// Whether the node ran in that run (false when timing is off, when
    /// a failure stopped the run before the node started, or when an inline
    /// run left the node out: the world's own scheduling factories, in a
    /// frame whose registrations did not move).
    pub ran: bool,
}

/// The live clock of one node during a run: [`Clock`] readings, never 0,
/// so that zero means "not recorded".
#[derive(Debug, Default)]
pub(crate) struct NodeClock {
    start: AtomicU64,
    end: AtomicU64,
}

/// Per-node measurement storage, owned by an execution state.
#[derive(Debug)]
pub(crate) struct Timings {
    /// Whether runs read the clock (the slots exist).
    enabled: bool,
    /// Whether a run's end copies the slots into `snapshot` (only while
    /// `enabled`).
    snapshot_on: bool,
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
    /// Made when timing is first turned on (the first in a process
    /// calibrates), so a world that never times never reads or makes one.
    clock: Option<Clock>,
    /// The reading at the start of the current (or last) run.
    epoch: Ticks,
    /// The threads' idle time in the last parallel run (measured while the
    /// snapshot is on).
    pub(crate) probe: RunProbe,
}

impl Timings {
    /// Disabled timing for `node_count` nodes.
    pub(crate) fn new(node_count: usize) -> Self {
        Self {
            enabled: false,
            snapshot_on: false,
            clocks: Box::new([]),
            snapshot: vec![SystemTiming::default(); node_count].into(),
            chained: false,
            last_end: AtomicU64::new(0),
            clock: None,
            epoch: 0,
            probe: RunProbe::default(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Turns timing on or off, clearing every previous measurement. The
    /// storage is allocated here, never during a run.
    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        self.set(enabled, enabled);
    }

    /// Whether a run's end copies the measurements for
    /// [`snapshot`](Self::snapshot).
    pub(crate) fn snapshot_on(&self) -> bool {
        self.snapshot_on
    }

    /// Turns the clocks on or off (`enabled`), and the copy into the
    /// snapshot (`snapshot`, only with the clocks), clearing every previous
    /// measurement. The storage is allocated here, never during a run.
    pub(crate) fn set(&mut self, enabled: bool, snapshot: bool) {
        let n = self.snapshot.len();
        self.enabled = enabled;
        self.snapshot_on = enabled && snapshot;
        self.snapshot.fill(SystemTiming::default());
        self.probe.clear();
        if enabled && self.clock.is_none() {
            self.clock = Some(Clock::new());
        }
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
        self.set(self.enabled, self.snapshot_on);
    }

    /// Whether the storage holds one entry per node of a graph of
    /// `node_count` nodes (the clocks too, when timing is on).
    pub(crate) fn fits(&self, node_count: usize) -> bool {
        self.snapshot.len() == node_count && (!self.enabled || self.clocks.len() == node_count)
    }

    /// Prepares a run (`serial`: nodes one after another, on the serial
    /// executor): whether timing is on. The clock is read here once, at
    /// the run's start (its only reading outside the nodes).
    pub(crate) fn begin_run(&mut self, serial: bool) -> bool {
        let (true, Some(clock)) = (self.enabled, &self.clock) else {
            return false;
        };
        self.chained = serial;
        // Only the starts: an end left from an earlier run is before this
        // run's epoch, so before any start of this run, and a node that
        // starts and does not end is measured as 0 all the same.
        for node in self.clocks.iter() {
            node.start.store(0, Ordering::Relaxed);
        }
        self.epoch = clock.now();
        self.last_end.store(self.epoch, Ordering::Relaxed);
        true
    }

    /// The clock, when a run's end copies the measurements (the threads'
    /// idle time is measured then too).
    pub(crate) fn snapshot_clock(&self) -> Option<&Clock> {
        self.clock.as_ref().filter(|_| self.snapshot_on)
    }

    /// The clocks the run writes into (empty when timing is off).
    #[cfg(test)]
    pub(crate) fn clocks(&self) -> &[NodeClock] {
        &self.clocks
    }

    /// Records the start of `node` (no clock slot for it, which `prepare`
    /// rules out, or timing off, records nothing: never a panic inside a
    /// job). In a serial run, the previous node's end, without a reading.
    #[inline]
    pub(crate) fn start(&self, node: u32) {
        // Slots exist only while timing is on, and then so does the clock.
        if let (Some(slot), Some(clock)) = (self.clocks.get(node as usize), &self.clock) {
            let start = if self.chained {
                // The previous node completed before this one started
                // (the serial loop waits for it), so its end is visible.
                self.last_end.load(Ordering::Relaxed)
            } else {
                clock.now()
            };
            slot.start.store(start, Ordering::Relaxed);
        }
    }

    /// Records the completion of `node` (see [`start`](Self::start)).
    #[inline]
    pub(crate) fn end(&self, node: u32) {
        if let (Some(slot), Some(clock)) = (self.clocks.get(node as usize), &self.clock) {
            let end = clock.now();
            slot.end.store(end, Ordering::Relaxed);
            if self.chained {
                self.last_end.store(end, Ordering::Relaxed);
            }
        }
    }

    /// Copies the run's clocks into the snapshot.
    pub(crate) fn finish_run(&mut self) {
        let (true, Some(clock)) = (self.snapshot_on, &self.clock) else {
            return;
        };
        for (timing, node) in self.snapshot.iter_mut().zip(self.clocks.iter()) {
            let start = node.start.load(Ordering::Relaxed);
            let end = node.end.load(Ordering::Relaxed);
            *timing = if start == 0 {
                SystemTiming::default()
            } else {
                SystemTiming {
                    start: Duration::from_nanos(clock.nanos_between(self.epoch, start)),
                    // A node that started and never ended (its completion
                    // was lost to a failure) took no time.
                    duration: Duration::from_nanos(clock.nanos_between(start, end)),
                    ran: true,
                }
            };
        }
    }

    pub(crate) fn snapshot(&self) -> &[SystemTiming] {
        &self.snapshot
    }

    /// How long each node took in the most recent run, in nanoseconds, by
    /// node index: `None` for a node that did not start. Read from the
    /// slots, so right after a run (the next one overwrites them); nothing
    /// while timing is off.
    pub(crate) fn node_nanos(&self) -> impl ExactSizeIterator<Item = Option<u64>> + '_ {
        let clock = self.clock.as_ref();
        self.clocks.iter().map(move |node| {
            let start = node.start.load(Ordering::Relaxed);
            let end = node.end.load(Ordering::Relaxed);
            // Slots exist only with the clock; `start == 0`: not started.
            clock
                .filter(|_| start != 0)
                .map(|clock| clock.nanos_between(start, end))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_reports_zeros_and_enabling_clears() {
        let mut t = Timings::new(2);
        assert!(!t.begin_run(false));
        assert!(t.clocks().is_empty());
        assert_eq!(t.snapshot(), &[SystemTiming::default(); 2]);
        t.set_enabled(true);
        assert!(t.begin_run(false));
        t.start(1);
        t.end(1);
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
        assert!(t.begin_run(true));
        for node in [2, 0] {
            t.start(node);
            std::thread::sleep(std::time::Duration::from_millis(1));
            t.end(node);
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
        assert!(t.begin_run(false));
        std::thread::sleep(std::time::Duration::from_millis(1));
        t.start(1);
        t.end(1);
        t.finish_run();
        assert!(t.snapshot()[1].start >= std::time::Duration::from_millis(1));
    }

    #[test]
    fn clocks_alone_measure_without_the_copy() {
        let mut t = Timings::new(2);
        t.set(true, false);
        assert!(t.begin_run(true));
        for node in [0, 1] {
            t.start(node);
            std::thread::sleep(std::time::Duration::from_millis(1));
            t.end(node);
        }
        t.finish_run();
        assert_eq!(t.snapshot(), &[SystemTiming::default(); 2], "no copy");
        let nanos: Vec<Option<u64>> = t.node_nanos().collect();
        assert!(
            nanos.iter().all(|n| n.is_some_and(|n| n >= 1_000_000)),
            "{nanos:?}"
        );
        // The next run starts only node 1, which does not end: node 0 is
        // not started, and node 1's end from the first run is not its own.
        assert!(t.begin_run(true));
        t.start(1);
        assert_eq!(t.node_nanos().collect::<Vec<_>>(), [None, Some(0)]);
        t.set(false, true);
        assert_eq!(t.node_nanos().len(), 0, "off: nothing");
        assert!(!t.snapshot_on(), "no copy without the clocks");
    }
}
