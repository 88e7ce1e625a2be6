//! The per-graph, reusable arrays an iteration runs on.

use crate::sync::{AtomicBool, AtomicU32, ExclusiveU32, Ordering};
use std::fmt;

use crossbeam_utils::CachePadded;
use sluice_collections::Pooled;

use super::graph::CompiledGraph;
use super::timing::{SystemTiming, Timings};

/// The mutable side of running a [`CompiledGraph`]: the pending predecessor
/// count of every node (copied from the graph at the start of each run), an
/// overflow queue of ready nodes, and the timing storage.
///
/// Everything is allocated when the state is made (or
/// [`reset_for`](Self::reset_for) a graph of another size); a run allocates
/// nothing. Keep one per graph and reuse it every iteration.
pub struct ExecutionState {
    graph_id: u64,
    /// Node `n`'s count is at `pending_slot(n)`: consecutive nodes are
    /// spread over different cache lines (see there).
    pending: Box<[AtomicU32]>,
    /// log2 of the number of cache lines of `pending`.
    pending_shift: u32,
    pub(crate) ring: ReadyRing,
    /// Ready pinned nodes, which only the run's caller takes (one slot per
    /// node, like `ring`).
    pub(crate) pinned: ReadyRing,
    pub(crate) timings: Timings,
    /// Whether node `n`'s body handed work out to the other threads the
    /// last time it ran in parallel (`Query::par_for_each`, a batch): a
    /// hint for the order successors start in (see [`FanOuts`]).
    fan_outs: Box<[AtomicBool]>,
}

impl ExecutionState {
    /// Arrays sized for `graph`, timing off.
    pub fn new(graph: &CompiledGraph) -> Self {
        let n = graph.node_count();
        let (pending, pending_shift) = pending_array(n);
        Self {
            graph_id: graph.id(),
            pending,
            pending_shift,
            ring: ReadyRing::new(n),
            pinned: ReadyRing::new(n),
            timings: Timings::new(n),
            fan_outs: fan_out_array(n),
        }
    }

    /// Re-targets this state at `graph`, reusing its arrays when they are
    /// large enough (a pooled state). Clears timing measurements; keeps the
    /// switch.
    ///
    /// Every array is checked on its own: the pending counts, the ready ring
    /// and the timing storage each hold at least one entry per node of
    /// `graph` afterwards (a pooled state reused for a bigger graph grows
    /// whichever is short).
    pub fn reset_for(&mut self, graph: &CompiledGraph) {
        self.fit(graph.node_count());
        self.timings.resize(graph.node_count());
        // Another graph's hints say nothing about this one's nodes (`fit`
        // grew the array if it was short).
        for fans_out in self.fan_outs.iter() {
            fans_out.store(false, Ordering::Relaxed);
        }
        self.graph_id = graph.id();
    }

    /// Grows the pending counts and the ready ring to hold `n` nodes, when
    /// they are shorter. (They are kept when longer: a pooled state.)
    fn fit(&mut self, n: usize) {
        if self.pending.len() < n {
            (self.pending, self.pending_shift) = pending_array(n);
        }
        if self.ring.capacity() < n {
            self.ring = ReadyRing::new(n);
        }
        if self.pinned.capacity() < n {
            self.pinned = ReadyRing::new(n);
        }
        if self.fan_outs.len() < n {
            self.fan_outs = fan_out_array(n);
        }
    }

    /// Whether every array holds one entry per node of a graph of `n`
    /// nodes: what the jobs of a run index without a check of their own.
    fn fits(&self, n: usize) -> bool {
        self.pending.len() >= n
            && self.ring.capacity() >= n
            && self.pinned.capacity() >= n
            && self.fan_outs.len() >= n
            && self.timings.fits(n)
    }

    /// Whether this state was made (or reset) for `graph`.
    pub fn is_for(&self, graph: &CompiledGraph) -> bool {
        self.graph_id == graph.id()
    }

    /// Turns per-node timing on or off. Either way, previous measurements are
    /// cleared. While off, runs take no timestamps and [`timings`](Self::timings)
    /// reports zeros.
    pub fn enable_timing(&mut self, enabled: bool) {
        self.timings.set_enabled(enabled);
    }

    /// Whether timing is on.
    pub fn timing_enabled(&self) -> bool {
        self.timings.enabled()
    }

    /// Turns the clocks on or off (`clocks`), and with them the copy that
    /// [`timings`](Self::timings) reports (`snapshot`): the clocks alone
    /// serve [`node_nanos`](Self::node_nanos). Clears every measurement.
    pub(crate) fn set_timing(&mut self, clocks: bool, snapshot: bool) {
        self.timings.set(clocks, snapshot);
    }

    /// Whether the clocks are on, and whether [`timings`](Self::timings)
    /// is filled from them.
    pub(crate) fn timing_mode(&self) -> (bool, bool) {
        (self.timings.enabled(), self.timings.snapshot_on())
    }

    /// How long each node took in the most recent run, in nanoseconds, by
    /// node index (`None`: it did not start); empty while timing is off.
    /// Valid until the next run.
    pub(crate) fn node_nanos(&self) -> impl ExactSizeIterator<Item = Option<u64>> + '_ {
        self.timings.node_nanos()
    }

    /// The threads' idle and wake-up time in the most recent timed parallel
    /// run (see [`RunStats`](super::RunStats)); zeros while timing is off.
    pub fn run_stats(&self) -> &super::RunStats {
        self.timings.probe.stats()
    }

    /// The measurements of the most recent run, in node-index order (also
    /// after a failed run).
    pub fn timings(&self) -> &[SystemTiming] {
        self.timings.snapshot()
    }

    /// The pending predecessor count of `node`.
    #[cfg(test)]
    fn pending(&self, node: u32) -> &AtomicU32 {
        self.pending_counts().get(node)
    }

    /// Which nodes fanned out the last time they ran (taken once, outside
    /// a loop over nodes).
    #[inline]
    pub(crate) fn fan_outs(&self) -> FanOuts<'_> {
        FanOuts(&self.fan_outs)
    }

    /// The pending predecessor counts (taken once, outside a loop over
    /// nodes).
    #[inline]
    pub(crate) fn pending_counts(&self) -> PendingCounts<'_> {
        PendingCounts {
            slots: &self.pending,
            mask: (1 << self.pending_shift) - 1,
            shift: self.pending_shift,
        }
    }

    /// Copies the graph's predecessor counts in and empties the ready ring.
    ///
    /// This is where a run checks, before any job exists, that the state is
    /// for `graph` and that every array is large enough for it: nothing a
    /// job indexes can then be out of bounds. An array found short (it
    /// cannot be, after [`reset_for`](Self::reset_for)) is grown here, on the
    /// caller's thread.
    ///
    /// # Panics
    ///
    /// When the state was not made (or reset) for `graph`: on the caller's
    /// thread, before the run starts.
    pub(crate) fn prepare(&mut self, graph: &CompiledGraph) {
        self.prepare_serial(graph);
        // Node `k * L + line` is at `line * 16 + k` (see `pending_slot`).
        let lines = 1 << self.pending_shift;
        for (k, counts) in graph.predecessor_counts().chunks(lines).enumerate() {
            for (line, &count) in counts.iter().enumerate() {
                self.pending[line * PER_LINE as usize + k].set_exclusive(count);
            }
        }
    }

    /// [`prepare`](Self::prepare) without the pending predecessor counts,
    /// which only a parallel run reads (the serial one runs in order).
    pub(crate) fn prepare_serial(&mut self, graph: &CompiledGraph) {
        assert!(
            self.is_for(graph),
            "ExecutionState used with a graph it was not made for (call reset_for)"
        );
        let n = graph.node_count();
        if !self.fits(n) {
            self.fit(n);
            self.timings.resize(n);
        }
        debug_assert!(self.fits(n));
        self.ring.reset();
        self.pinned.reset();
    }
}

/// The pending predecessor counts of a run, by node.
#[derive(Clone, Copy)]
pub(crate) struct PendingCounts<'a> {
    slots: &'a [AtomicU32],
    /// `L - 1`.
    mask: u32,
    /// log2 `L`.
    shift: u32,
}

impl<'a> PendingCounts<'a> {
    /// The count of `node`.
    #[inline]
    pub(crate) fn get(&self, node: u32) -> &'a AtomicU32 {
        let slot = ((node & self.mask) * PER_LINE) | (node >> self.shift);
        debug_assert_eq!(slot as usize, pending_slot(node, self.shift));
        &self.slots[slot as usize]
    }
}

/// Which nodes handed work out to the other threads the last time they ran
/// in a parallel run: a node that fans out can use every idle thread, one
/// that does not runs on one thread from start to end. When a node finishes,
/// its thread keeps a successor that does not fan out and leaves the ones
/// that do to the queue: a one-thread node started last is a tail nobody can
/// help with, while the others join a fanned-out node whenever they come
/// free (`runtime/src/exec/README.md`, "One-thread nodes first").
///
/// Only a hint: written by the thread that ran the node, read by whichever
/// thread finishes one of its predecessors, both relaxed (a stale read picks
/// another order, nothing else).
#[derive(Clone, Copy)]
pub(crate) struct FanOuts<'a>(&'a [AtomicBool]);

impl FanOuts<'_> {
    /// Whether `node` fanned out the last time it ran (false for a node the
    /// array does not cover, which `prepare` rules out).
    #[inline]
    pub(crate) fn get(self, node: u32) -> bool {
        self.0
            .get(node as usize)
            .is_some_and(|fans_out| fans_out.load(Ordering::Relaxed))
    }

    /// Records whether `node` fanned out in the run that just ended, writing
    /// only a change (the flag's line is read by every thread).
    #[inline]
    pub(crate) fn note(self, node: u32, fanned_out: bool) {
        if let Some(fans_out) = self.0.get(node as usize)
            && fans_out.load(Ordering::Relaxed) != fanned_out
        {
            fans_out.store(fanned_out, Ordering::Relaxed);
        }
    }
}

fn fan_out_array(n: usize) -> Box<[AtomicBool]> {
    (0..n).map(|_| AtomicBool::new(false)).collect()
}

/// Counts per cache line of `pending`.
const PER_LINE: u32 = 16;

/// `pending` for `n` nodes: a power-of-two number of lines `L` of 16 counts,
/// and log2 `L`.
fn pending_array(n: usize) -> (Box<[AtomicU32]>, u32) {
    let lines = n.div_ceil(PER_LINE as usize).next_power_of_two();
    let slots = (0..lines * PER_LINE as usize)
        .map(|_| AtomicU32::new(0))
        .collect();
    (slots, lines.trailing_zeros())
}

/// Where node `n`'s count lives: line `n mod L`, position `n / L` in it.
/// Nodes close in index (which run close in time, on different threads)
/// fall on different lines; a line is shared by nodes `L` apart. This keeps
/// the threads' decrements from contending for one line without spending a
/// line per node.
#[inline]
fn pending_slot(node: u32, shift: u32) -> usize {
    let line = node & ((1 << shift) - 1);
    ((line * PER_LINE) | (node >> shift)) as usize
}

impl Default for ExecutionState {
    /// A state for no graph yet: [`reset_for`](Self::reset_for) it first.
    fn default() -> Self {
        Self {
            graph_id: 0,
            pending: Box::new([]),
            pending_shift: 0,
            ring: ReadyRing::new(0),
            pinned: ReadyRing::new(0),
            timings: Timings::new(0),
            fan_outs: Box::new([]),
        }
    }
}

/// Execution states are pooled: the world's execution factory takes one for
/// the next plan (`ExecutionState::pool().take()`, then
/// [`reset_for`](ExecutionState::reset_for)), which reuses the arrays of a
/// state given back by an earlier plan.
impl Pooled for ExecutionState {
    const POOL_CAPACITY: usize = 8;

    fn reset(&mut self) {
        self.enable_timing(false);
        self.graph_id = 0;
    }
}

impl fmt::Debug for ExecutionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutionState")
            .field("graph_id", &self.graph_id)
            .field("node_count", &self.timings.snapshot().len())
            .field("timing_enabled", &self.timings.enabled())
            .finish_non_exhaustive()
    }
}

/// Where ready nodes go when a thread's local deque is full: a bounded
/// multi-producer multi-consumer queue with one slot per node.
///
/// Each node becomes ready at most once per run, so indices only grow during
/// a run and a slot is written once: no wrap-around, no ABA. A slot holds
/// `node + 1` once published, 0 before. Keeping the local deques short (below
/// crossbeam's initial capacity) is what keeps them from reallocating, so a
/// graph of any width runs without allocating.
pub(crate) struct ReadyRing {
    slots: Box<[AtomicU32]>,
    head: CachePadded<AtomicU32>,
    tail: CachePadded<AtomicU32>,
}

impl ReadyRing {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            slots: (0..capacity).map(|_| AtomicU32::new(0)).collect(),
            head: CachePadded::new(AtomicU32::new(0)),
            tail: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// Empties the ring; clears only the slots the last run used.
    fn reset(&mut self) {
        let used = (self.tail.get_exclusive() as usize).min(self.slots.len());
        for slot in &mut self.slots[..used] {
            slot.set_exclusive(0);
        }
        self.head.set_exclusive(0);
        self.tail.set_exclusive(0);
    }

    /// Slots: the most nodes one run may push.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Adds a ready node. Each node is pushed at most once per run, and the
    /// ring has a slot per node of the run's graph (checked by
    /// [`ExecutionState::prepare`]), so it never fills; should it anyway,
    /// `push` returns `false` (the node is not queued) instead of panicking
    /// inside a job.
    #[must_use]
    pub(crate) fn push(&self, node: u32) -> bool {
        let index = self.tail.fetch_add(1, Ordering::Relaxed) as usize;
        match self.slots.get(index) {
            Some(slot) => {
                slot.store(node + 1, Ordering::Release);
                true
            }
            None => false,
        }
    }

    /// Takes the oldest published node. `None` when empty, or when the next
    /// slot is claimed but not yet written (its pusher notifies afterwards).
    pub(crate) fn pop(&self) -> Option<u32> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            if head >= self.tail.load(Ordering::Acquire) {
                return None;
            }
            let value = match self.slots.get(head as usize) {
                Some(slot) => slot.load(Ordering::Acquire),
                None => return None,
            };
            if value == 0 {
                return None;
            }
            match self.head.compare_exchange_weak(
                head,
                head + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(value - 1),
                Err(current) => head = current,
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        let tail = (self.tail.load(Ordering::Acquire) as usize).min(self.slots.len());
        self.head.load(Ordering::Acquire) as usize >= tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_is_fifo_and_resets() {
        let mut ring = ReadyRing::new(4);
        assert!(ring.is_empty());
        assert!(ring.push(3));
        assert!(ring.push(0));
        assert_eq!(ring.pop(), Some(3));
        assert_eq!(ring.pop(), Some(0));
        assert_eq!(ring.pop(), None);
        ring.reset();
        assert!(ring.is_empty());
        assert!(ring.push(2));
        assert_eq!(ring.pop(), Some(2));
    }

    #[test]
    fn state_copies_counts() {
        let g = CompiledGraph::from_edges(3, &[(0, 1), (0, 2), (1, 2)]).unwrap();
        let mut s = ExecutionState::new(&g);
        s.prepare(&g);
        let counts: Vec<u32> = (0..3)
            .map(|n| s.pending(n).load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, [0, 1, 2]);
        let other = CompiledGraph::from_edges(3, &[]).unwrap();
        assert!(!s.is_for(&other));
        s.reset_for(&other);
        assert!(s.is_for(&other));
    }

    #[test]
    fn pending_slots_are_distinct_and_spread() {
        for n in [0usize, 1, 15, 16, 17, 100, 1000, 1025] {
            let (array, shift) = pending_array(n);
            let mut seen = vec![false; array.len()];
            for node in 0..n as u32 {
                let slot = pending_slot(node, shift);
                assert!(
                    !std::mem::replace(&mut seen[slot], true),
                    "n {n} node {node}"
                );
            }
            if n > PER_LINE as usize {
                // Neighbours are a line apart.
                assert_eq!(pending_slot(1, shift) - pending_slot(0, shift), 16);
            }
        }
    }

    #[test]
    fn reset_for_a_bigger_graph_grows_every_array() {
        // 65 nodes: 8 lines of pending counts (128 slots), a 65-slot ring.
        let small = CompiledGraph::from_edges(65, &[]).unwrap();
        for n in [66, 100, 128, 129, 300] {
            let mut state = ExecutionState::new(&small);
            state.enable_timing(true);
            let big = CompiledGraph::from_edges(n, &[]).unwrap();
            state.reset_for(&big);
            assert!(state.pending.len() >= n, "pending for {n}");
            assert!(state.ring.capacity() >= n, "ring for {n}");
            assert!(state.fan_outs.len() >= n, "fan-out hints for {n}");
            assert_eq!(state.timings().len(), n);
            assert!(state.timings.fits(n));
            assert!(state.fits(n));
            state.prepare(&big);
            for node in 0..n as u32 {
                assert!(state.ring.push(node), "ring slot for node {node} of {n}");
            }
            for node in 0..n as u32 {
                assert_eq!(state.ring.pop(), Some(node));
            }
        }
    }

    #[test]
    fn fan_out_hints_are_per_node_and_cleared_for_another_graph() {
        let graph = CompiledGraph::from_edges(4, &[]).unwrap();
        let mut state = ExecutionState::new(&graph);
        let hints = state.fan_outs();
        hints.note(2, true);
        assert_eq!(
            (0..4).map(|n| hints.get(n)).collect::<Vec<_>>(),
            [false, false, true, false]
        );
        hints.note(2, false);
        assert!(!hints.get(2));
        // Past the array: nothing to note, nothing fans out.
        hints.note(9, true);
        assert!(!hints.get(9));
        state.fan_outs().note(1, true);
        let pooled = state.fan_outs.as_ptr();
        let other = CompiledGraph::from_edges(3, &[]).unwrap();
        state.reset_for(&other);
        assert!(!state.fan_outs().get(1), "the other graph's hint is gone");
        assert_eq!(state.fan_outs.as_ptr(), pooled, "the array is reused");
    }

    #[test]
    fn a_full_ring_refuses_instead_of_panicking() {
        let ring = ReadyRing::new(1);
        assert!(ring.push(0));
        assert!(!ring.push(1));
        assert_eq!(ring.pop(), Some(0));
        assert_eq!(ring.pop(), None);
        assert!(ring.is_empty());
    }

    #[test]
    fn pooled_states_keep_their_arrays() {
        let big = CompiledGraph::from_edges(10, &[(0, 1)]).unwrap();
        let small = CompiledGraph::from_edges(4, &[(0, 1)]).unwrap();
        let pool = sluice_collections::Pool::<ExecutionState>::new(2);
        let mut state = pool.take();
        state.reset_for(&big);
        state.enable_timing(true);
        let pending = state.pending.as_ptr();
        drop(state);
        let mut state = pool.take();
        assert!(!state.is_for(&big), "a given-back state is for no graph");
        assert!(!state.timing_enabled());
        state.reset_for(&small);
        assert_eq!(state.pending.as_ptr(), pending, "arrays reused");
        assert_eq!(state.timings().len(), 4);
        state.prepare(&small);
        let counts: Vec<u32> = (0..4)
            .map(|n| state.pending(n).load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, [0, 1, 0, 0]);
    }
}
