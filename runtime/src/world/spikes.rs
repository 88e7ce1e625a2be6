//! The spike watch (reference 003's `ISpikeExempt`): a node's run that takes
//! far longer than its own recent history is reported, through `tracing` and
//! in a bounded list the game reads ([`World::spikes`](crate::World::spikes)).
//!
//! Each watched node keeps its last `window` times in a ring history whose
//! running peak is what a run is compared with (reference 003: "the peak
//! across the window is worth more than any single sample"); the histories
//! of all watched nodes are one [`RingHistories`], a single flat buffer, so
//! judging a part walks memory in order and follows no pointer per node.
//! They are allocated when a plan is installed or the watch is set, never
//! while iterations run; the comparison happens after each run of a plan's
//! part, on the caller's thread, from the timings the executor already
//! collected. While the watch is off nothing here runs: one branch per part
//! of a plan.
//!
//! Only a node that can skip its body (it has run conditions, or is a
//! factory) is asked whether it did: a plain node's run always ran its body,
//! so it pays nothing for that bookkeeping, here or where it runs.
//!
//! # What "far longer" means
//!
//! With the watch set to `SpikeWatch { window, ratio, min, keep }`, a node's
//! run taking `t` is a *spike* when all of these hold:
//!
//! 1. the node is watched: it is in one of the world's plans, is not
//!    [`spike_exempt`](crate::NodeBuilder::spike_exempt), is in no
//!    [exempt group](crate::Group::spike_exempt) at any depth, and is not one
//!    of the world's own scheduling nodes (which take long exactly when they
//!    replan);
//! 2. its history is full: it holds the node's `window` previous completed
//!    runs (kept across replans, while the node stays in a plan);
//! 3. `t >= min`, the absolute floor below which nothing is reported;
//! 4. `t > ratio × peak`, `peak` being the longest of those `window` runs.
//!
//! Either way `t` then joins the history, so a node that gets slower for
//! good is reported once, at the step, and not on every frame after it.
//!
//! What a history holds, and when it starts and ends: [`SpikeHistory`].

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use sluice_collections::{RingHistories, RingHistoriesHistory};

use crate::node::{NodeDescriptor, NodeState};
use crate::organise::Group;
use crate::plan::{GraphView, NodeIndex, Plans};

/// The largest [`SpikeWatch::window`] accepted: a history is preallocated
/// per watched node, so a mistaken `usize::MAX` must be refused, not tried.
pub const MAX_SPIKE_WINDOW: usize = 1 << 16;

/// The largest [`SpikeWatch::keep`] accepted, for the same reason.
pub const MAX_SPIKES_KEPT: usize = 1 << 16;

/// How the spike watch judges a node's run (see
/// [`World::set_spike_watch`](crate::World::set_spike_watch)): a run is a
/// spike when its history holds `window` earlier runs, it took at least
/// `min`, and it took more than `ratio` times the longest of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpikeWatch {
    /// How many of a node's most recent runs its history keeps; a node is
    /// judged once it has that many. At least 1, at most [`MAX_SPIKE_WINDOW`].
    pub window: usize,
    /// How many times the history's peak a run must exceed. Finite and at
    /// least 1 (1 reports any run longer than every run in the window).
    pub ratio: f64,
    /// The absolute floor: a run shorter than this is never reported,
    /// whatever its history, so that microsecond noise stays quiet.
    pub min: Duration,
    /// How many of the most recent spikes [`World::spikes`](crate::World::spikes)
    /// keeps (older ones are dropped, still counted by
    /// [`World::spikes_total`](crate::World::spikes_total)). At most
    /// [`MAX_SPIKES_KEPT`]; 0 keeps none (`tracing` still reports each).
    pub keep: usize,
}

impl Default for SpikeWatch {
    /// Two seconds of frames at 60 Hz, four times the peak, 200 µs floor,
    /// the last 64 spikes.
    fn default() -> Self {
        Self {
            window: 120,
            ratio: 4.0,
            min: Duration::from_micros(200),
            keep: 64,
        }
    }
}

/// Why [`World::set_spike_watch`](crate::World::set_spike_watch) refused a
/// [`SpikeWatch`]; the watch in place is unchanged.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum SpikeWatchError {
    /// `window` is 0 (there would be no history to compare with) or above
    /// [`MAX_SPIKE_WINDOW`].
    Window(usize),
    /// `ratio` is below 1, NaN or infinite.
    Ratio(f64),
    /// `keep` is above [`MAX_SPIKES_KEPT`].
    Keep(usize),
}

impl std::fmt::Display for SpikeWatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Window(window) => write!(
                f,
                "spike watch: window {window} is not in 1..={MAX_SPIKE_WINDOW}"
            ),
            Self::Ratio(ratio) => write!(
                f,
                "spike watch: ratio {ratio} is not a finite number of at least 1"
            ),
            Self::Keep(keep) => write!(f, "spike watch: keep {keep} is above {MAX_SPIKES_KEPT}"),
        }
    }
}

impl std::error::Error for SpikeWatchError {}

impl SpikeWatch {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// The first field out of range.
    pub fn validate(&self) -> Result<(), SpikeWatchError> {
        if self.window == 0 || self.window > MAX_SPIKE_WINDOW {
            return Err(SpikeWatchError::Window(self.window));
        }
        if !(self.ratio.is_finite() && self.ratio >= 1.0) {
            return Err(SpikeWatchError::Ratio(self.ratio));
        }
        if self.keep > MAX_SPIKES_KEPT {
            return Err(SpikeWatchError::Keep(self.keep));
        }
        Ok(())
    }
}

/// One reported spike: which node, in which iteration, how long it took and
/// what its history held before it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Spike {
    /// The node.
    pub node: NodeIndex,
    /// Its name.
    pub name: Arc<str>,
    /// The iteration it happened in: how many iterations of the variable
    /// plan had run before ([`World::iterations`](crate::World::iterations)
    /// then), so a fixed step, `Startup` or a named schedule run between
    /// iterations `k - 1` and `k` reports `k`.
    pub iteration: u64,
    /// How long the run took.
    pub time: Duration,
    /// The longest of the `window` runs before it.
    pub peak: Duration,
    /// Their mean.
    pub mean: Duration,
}

impl std::fmt::Display for Spike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "iteration {}: `{}` took {:?} (peak {:?}, mean {:?})",
            self.iteration, self.name, self.time, self.peak, self.mean
        )
    }
}

/// A watched node's recent times ([`World::spike_history`](crate::World::spike_history)),
/// oldest first: what its next run is judged against.
///
/// A node has a history ([`World::spike_history`](crate::World::spike_history)
/// is `Some`) exactly while the watch is on and the node is watched in an
/// installed plan and enabled. It holds the node's most recent runs of its
/// body, at most `window`, one per run: a run is recorded (and judged) only
/// when the body ran to completion. So these add nothing:
///
/// - a run whose body was skipped: a [run condition](crate::NodeSpec::run_if)
///   was false, or a factory's inputs had not moved (a node that runs every
///   tenth frame is compared with its own runs, not with nine skips);
/// - a run that panicked (or failed otherwise), and a node the executor did
///   not start because a failure stopped the iteration first. The nodes of
///   a failed iteration that did complete are recorded and judged as usual.
///
/// A history starts empty whenever the watch is set or a plan is
/// installed, for each watched node of the installed plans that has none
/// (the watch was off, or the node is new or was re-enabled). It is dropped
/// when the watch is turned off, when the node is removed or disabled (at
/// once, not at the next plan), and when a plan is installed without it.
/// Setting the watch again while it is on keeps every history, cut to its
/// newest `window` runs; a replan keeps the histories of the nodes that
/// stay.
#[derive(Clone, Copy)]
pub struct SpikeHistory<'w> {
    history: RingHistoriesHistory<'w, u64>,
}

impl SpikeHistory<'_> {
    /// How many runs it holds (at most the window).
    pub fn len(&self) -> usize {
        self.history.len()
    }

    /// Whether it holds none yet.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    /// The window: how many runs it keeps.
    pub fn window(&self) -> usize {
        self.history.capacity()
    }

    /// The longest run it holds.
    pub fn peak(&self) -> Option<Duration> {
        self.history.max().map(Duration::from_nanos)
    }

    /// The mean of the runs it holds.
    pub fn mean(&self) -> Option<Duration> {
        mean(self.history)
    }

    /// The runs, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Duration> + ExactSizeIterator + '_ {
        self.history
            .iter()
            .map(|&nanos| Duration::from_nanos(nanos))
    }
}

impl std::fmt::Debug for SpikeHistory<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpikeHistory")
            .field("window", &self.window())
            .field("len", &self.len())
            .field("peak", &self.peak())
            .finish()
    }
}

fn mean(history: RingHistoriesHistory<'_, u64>) -> Option<Duration> {
    let len = history.len() as u128;
    let sum: u128 = history.iter().map(|&nanos| u128::from(nanos)).sum();
    (len > 0).then(|| Duration::from_nanos(u64::try_from(sum / len).unwrap_or(u64::MAX)))
}

/// In [`SpikeState::slots`]: the node is not watched.
const UNWATCHED: u32 = u32::MAX;

/// In [`SpikeState::slots`], beside a history index: the node can skip its
/// body (it has run conditions, or is a factory), so whether it did must be
/// asked. Indices stay below it: there are fewer than 2^31 nodes.
const SKIPPABLE: u32 = 1 << 31;

/// The watch's state in a world: the setting, each watched node's history,
/// and the recent spikes.
#[derive(Debug)]
pub(crate) struct SpikeState {
    watch: Option<SpikeWatch>,
    /// By registration index: the node's history in `histories` (its index,
    /// with [`SKIPPABLE`] set for a node that can skip its body), or
    /// [`UNWATCHED`]. A history exactly for the watched nodes of the
    /// installed plans while the watch is on; empty while it is off.
    slots: Vec<u32>,
    /// One per history index in `slots` (`window` each); a node forgotten
    /// since the last fit leaves its own empty and unused until the next.
    histories: RingHistories<u64>,
    /// By history index: the node's name, shared by its spikes so that a
    /// report allocates nothing.
    names: Vec<Arc<str>>,
    /// The most recent spikes, at most `keep` (allocated for that many).
    recent: VecDeque<Spike>,
    total: u64,
}

impl Default for SpikeState {
    fn default() -> Self {
        Self {
            watch: None,
            slots: Vec::new(),
            histories: RingHistories::new(0, 1),
            names: Vec::new(),
            recent: VecDeque::new(),
            total: 0,
        }
    }
}

impl SpikeState {
    pub(crate) fn is_on(&self) -> bool {
        self.watch.is_some()
    }

    pub(crate) fn watch(&self) -> Option<SpikeWatch> {
        self.watch
    }

    /// Sets the watch (validated by the caller) and fits the histories to
    /// `plans` (see [`fit`](Self::fit)): a node keeps its newest samples
    /// when the window changes; turning the watch off drops every history
    /// and keeps the spikes.
    pub(crate) fn set(
        &mut self,
        watch: Option<SpikeWatch>,
        plans: Option<&Plans>,
        graph: GraphView<'_>,
        skippable: impl Fn(usize) -> bool,
    ) {
        self.watch = watch;
        if let Some(keep) = watch.map(|watch| watch.keep)
            && (self.recent.capacity() < keep || self.recent.len() > keep)
        {
            // Allocated here, for `keep`, so that reporting never grows it.
            let mut recent = VecDeque::with_capacity(keep);
            let skip = self.recent.len().saturating_sub(keep);
            recent.extend(self.recent.drain(..).skip(skip));
            self.recent = recent;
        }
        self.fit(plans, graph, skippable);
    }

    /// Fits the histories to `plans` (newly installed): one per watched
    /// node, found by its registration index, which never changes or is
    /// reused; a node that left every plan loses its history, one that
    /// stays keeps its newest `window` samples. `skippable(node)`: whether
    /// the node (by registration index) can skip its body.
    pub(crate) fn fit(
        &mut self,
        plans: Option<&Plans>,
        graph: GraphView<'_>,
        skippable: impl Fn(usize) -> bool,
    ) {
        let (Some(watch), Some(plans)) = (self.watch, plans) else {
            self.slots = Vec::new();
            self.histories = RingHistories::new(0, 1);
            self.names = Vec::new();
            return;
        };
        let descriptors = graph.nodes();
        let groups = graph.organisation().groups();
        let mut watched = vec![false; descriptors.len()];
        for (_, plan) in plans.iter() {
            for node in plan.order() {
                // A node removed or disabled since the plan was built is
                // still in its order until the next plan: not watched.
                if let Some(descriptor) = descriptors.get(node.index()) {
                    watched[node.index()] =
                        descriptor.state() == NodeState::Enabled && !exempt(descriptor, groups);
                }
            }
        }
        let mut slots = vec![UNWATCHED; descriptors.len()];
        let mut count = 0u32;
        for (node, slot) in slots.iter_mut().enumerate() {
            if watched[node] && count < SKIPPABLE {
                *slot = count | if skippable(node) { SKIPPABLE } else { 0 };
                count += 1;
            }
        }
        if slots == self.slots && self.histories.capacity() == watch.window {
            // The same nodes, each with its own history: nothing moves.
            return;
        }
        let mut histories = RingHistories::new(count as usize, watch.window);
        let mut names = Vec::with_capacity(count as usize);
        for (node, &slot) in slots.iter().enumerate() {
            if slot == UNWATCHED {
                continue;
            }
            let index = (slot & !SKIPPABLE) as usize;
            match self.slots.get(node) {
                Some(&old) if old != UNWATCHED => {
                    let old = (old & !SKIPPABLE) as usize;
                    let history = self.histories.get(old);
                    let skip = history.len().saturating_sub(watch.window);
                    for &sample in history.iter().skip(skip) {
                        histories.push(index, sample);
                    }
                    names.push(Arc::clone(&self.names[old]));
                }
                _ => names.push(Arc::from(descriptors[node].name())),
            }
        }
        self.slots = slots;
        self.histories = histories;
        self.names = names;
    }

    /// Drops `node`'s history: it was removed or disabled, and is not
    /// watched again until it is back in an installed plan.
    pub(crate) fn forget(&mut self, node: NodeIndex) {
        if let Some(slot) = self.slots.get_mut(node.index())
            && *slot != UNWATCHED
        {
            self.histories.clear((*slot & !SKIPPABLE) as usize);
            *slot = UNWATCHED;
        }
    }

    /// The history of `node`, when it is watched.
    pub(crate) fn history(&self, node: NodeIndex) -> Option<SpikeHistory<'_>> {
        let slot = *self.slots.get(node.index())?;
        (slot != UNWATCHED).then(|| SpikeHistory {
            history: self.histories.get((slot & !SKIPPABLE) as usize),
        })
    }

    pub(crate) fn recent(&self) -> &VecDeque<Spike> {
        &self.recent
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Judges and records one run of a plan's part: `times` by vertex, in
    /// nanoseconds (`None` for a vertex that did not start), `vertex_nodes`
    /// mapping vertices to registration indices (`u32::MAX` for a barrier),
    /// `failed` the vertices that failed, `skipped` whether a node (by
    /// registration index) skipped its body in this run, asked only of the
    /// nodes that can.
    pub(crate) fn observe(
        &mut self,
        times: impl Iterator<Item = Option<u64>>,
        vertex_nodes: &[u32],
        failed: &[usize],
        iteration: u64,
        mut skipped: impl FnMut(u32) -> bool,
    ) {
        let Some(watch) = self.watch else { return };
        let judge = Judge::new(&watch, iteration);
        for (vertex, (time, &node)) in times.zip(vertex_nodes).enumerate() {
            // A barrier's `u32::MAX` finds no slot.
            let (Some(&slot), Some(time)) = (self.slots.get(node as usize), time) else {
                continue;
            };
            if slot == UNWATCHED
                || (slot & SKIPPABLE != 0 && skipped(node))
                || (!failed.is_empty() && failed.contains(&vertex))
            {
                continue;
            }
            judge.run(self, (slot & !SKIPPABLE) as usize, node, time);
        }
    }

    /// Judges and records one run of the whole-world system `node`.
    pub(crate) fn observe_one(&mut self, node: u32, time: Duration, iteration: u64) {
        let Some(watch) = self.watch else { return };
        let Some(&slot) = self.slots.get(node as usize) else {
            return;
        };
        if slot != UNWATCHED {
            let index = (slot & !SKIPPABLE) as usize;
            Judge::new(&watch, iteration).run(self, index, node, nanos(time));
        }
    }
}

/// The rule of the module docs, for one run of a plan's part.
struct Judge {
    floor: u64,
    ratio: f64,
    keep: usize,
    iteration: u64,
}

impl Judge {
    fn new(watch: &SpikeWatch, iteration: u64) -> Self {
        Self {
            floor: nanos(watch.min),
            ratio: watch.ratio,
            keep: watch.keep,
            iteration,
        }
    }

    /// Judges one run of `node` (history `index`) taking `time`
    /// nanoseconds, then the run joins the history. Inlined into the loop
    /// over a part's nodes, which it is most of.
    #[inline(always)]
    fn run(&self, state: &mut SpikeState, index: usize, node: u32, time: u64) {
        // The floor first: most runs of most nodes are below it, and then
        // the history is only pushed to.
        if time >= self.floor {
            self.judge(state, index, node, time);
        }
        state.histories.push(index, time);
    }

    /// A run at or above the floor: compared with the full window's peak.
    /// Out of line: only runs that long get here, and they dwarf it.
    #[inline(never)]
    fn judge(&self, state: &mut SpikeState, index: usize, node: u32, time: u64) {
        let history = state.histories.get(index);
        if history.is_full()
            && let Some(peak) = history.max()
            && time as f64 > peak as f64 * self.ratio
        {
            self.report(state, index, node, time, peak);
        }
    }

    /// Logs and keeps one spike; cold, so the judging loop stays small.
    #[cold]
    #[inline(never)]
    fn report(&self, state: &mut SpikeState, index: usize, node: u32, time: u64, peak: u64) {
        let history = state.histories.get(index);
        let iteration = self.iteration;
        let spike = Spike {
            node: NodeIndex(node),
            name: Arc::clone(&state.names[index]),
            iteration,
            time: Duration::from_nanos(time),
            peak: Duration::from_nanos(peak),
            mean: mean(history).unwrap_or_default(),
        };
        tracing::warn!(
            node = %spike.name,
            iteration,
            time_us = time / 1_000,
            peak_us = peak / 1_000,
            mean_us = nanos(spike.mean) / 1_000,
            "spike: `{}` took {:?}, {:.1} times its peak {:?} of the last {} runs (mean {:?})",
            spike.name,
            spike.time,
            time as f64 / peak as f64,
            spike.peak,
            history.len(),
            spike.mean,
        );
        state.total += 1;
        if self.keep == 0 {
            return;
        }
        // Room for `keep` was allocated when the watch was set: never grows.
        if state.recent.len() >= self.keep {
            state.recent.pop_front();
        }
        state.recent.push_back(spike);
    }
}

/// Whether `node` is exempt itself, is one of the world's own, or sits in an
/// exempt group at any depth (the walk up is bounded by the number of groups,
/// so a parent cycle, which the planner refuses anyway, cannot loop).
fn exempt(node: &NodeDescriptor, groups: &[Group]) -> bool {
    if node.is_spike_exempt() || node.is_builtin() {
        return true;
    }
    let mut group = node.placement().group.as_deref();
    for _ in 0..groups.len() {
        let Some(found) = group.and_then(|name| groups.iter().find(|g| g.name() == name)) else {
            return false;
        };
        if found.is_spike_exempt() {
            return true;
        }
        group = found.parent();
    }
    false
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A watch on `nodes` nodes (registration index = vertex), histories
    /// made directly: the judging rule with injected times.
    fn state(watch: SpikeWatch, nodes: usize) -> SpikeState {
        SpikeState {
            watch: Some(watch),
            slots: (0..nodes as u32).collect(),
            histories: RingHistories::new(nodes, watch.window),
            names: (0..nodes).map(|i| Arc::from(format!("n{i}"))).collect(),
            recent: VecDeque::with_capacity(watch.keep),
            total: 0,
        }
    }

    fn watch(window: usize, ratio: f64, min_ms: u64) -> SpikeWatch {
        SpikeWatch {
            window,
            ratio,
            min: Duration::from_millis(min_ms),
            keep: 8,
        }
    }

    /// Runs one iteration of nodes `0..times.len()` taking `times`.
    fn run(state: &mut SpikeState, times: &[u64], iteration: u64) {
        let vertices: Vec<u32> = (0..times.len() as u32).collect();
        let times = times.iter().map(|&t| Some(t));
        state.observe(times, &vertices, &[], iteration, |_| false);
    }

    #[test]
    fn a_run_over_ratio_times_the_full_windows_peak_is_reported() {
        let mut state = state(watch(4, 2.0, 1), 2);
        for (i, t) in [2 * MS, 3 * MS, 2 * MS, 3 * MS].into_iter().enumerate() {
            run(&mut state, &[t, t], i as u64);
        }
        assert_eq!(state.total(), 0);
        // Node 0: exactly 2 x the peak is not over it; node 1 is.
        run(&mut state, &[6 * MS, 6 * MS + 1], 4);
        let spikes: Vec<&Spike> = state.recent().iter().collect();
        assert_eq!(spikes.len(), 1);
        let spike = spikes[0];
        assert_eq!(
            (&*spike.name, spike.node, spike.iteration),
            ("n1", NodeIndex(1), 4)
        );
        assert_eq!(spike.time, Duration::from_nanos(6 * MS + 1));
        assert_eq!(spike.peak, Duration::from_millis(3));
        assert_eq!(spike.mean, Duration::from_micros(2_500));
        // The spike joined the history: the same time again is not one.
        run(&mut state, &[0, 6 * MS + 1], 5);
        assert_eq!(state.total(), 1);
        let history = state.history(NodeIndex(1)).unwrap();
        assert_eq!(history.len(), 4);
        assert_eq!(history.peak(), Some(Duration::from_nanos(6 * MS + 1)));
    }

    #[test]
    fn nothing_is_judged_before_the_window_is_full() {
        let mut state = state(watch(3, 1.0, 0), 1);
        run(&mut state, &[1], 0);
        run(&mut state, &[1_000 * MS], 1);
        assert_eq!(state.total(), 0, "two samples of three");
        run(&mut state, &[1], 2);
        run(&mut state, &[1_001 * MS], 3);
        assert_eq!(state.total(), 1);
    }

    #[test]
    fn the_floor_silences_short_runs() {
        let mut state = state(watch(2, 1.0, 5), 1);
        run(&mut state, &[1], 0);
        run(&mut state, &[1], 1);
        run(&mut state, &[5 * MS - 1], 2);
        assert_eq!(
            state.total(),
            0,
            "below the floor, however many times the peak"
        );
        run(&mut state, &[1], 3);
        run(&mut state, &[1], 4);
        run(&mut state, &[5 * MS], 5);
        assert_eq!(state.total(), 1, "at the floor");
    }

    #[test]
    fn failed_unstarted_and_barrier_vertices_record_nothing() {
        let mut state = state(watch(2, 1.0, 0), 2);
        let times = [Some(9 * MS), None, Some(9 * MS)];
        // Vertex 0 failed, vertex 1 never started, vertex 2 is a barrier.
        state.observe(times.into_iter(), &[0, 1, u32::MAX], &[0], 0, |_| false);
        assert!(state.history(NodeIndex(0)).unwrap().is_empty());
        assert!(state.history(NodeIndex(1)).unwrap().is_empty());
        for i in 1..=2 {
            run(&mut state, &[MS, MS], i);
        }
        // A failing node's slow run after a full window: neither reported
        // nor recorded.
        let times = [Some(100 * MS), Some(MS)].into_iter();
        state.observe(times, &[0, 1], &[0], 3, |_| false);
        assert_eq!(state.total(), 0);
        let history = state.history(NodeIndex(0)).unwrap();
        assert_eq!(
            history.iter().collect::<Vec<_>>(),
            [Duration::from_millis(1); 2]
        );
        run(&mut state, &[100 * MS, MS], 4);
        assert_eq!(state.total(), 1, "the next real spike is judged normally");
    }

    #[test]
    fn the_list_keeps_the_newest_and_the_total_counts_all() {
        let mut state = state(
            SpikeWatch {
                keep: 2,
                ..watch(1, 1.0, 0)
            },
            1,
        );
        for i in 0..6u64 {
            run(&mut state, &[(i + 1) * MS], i);
        }
        assert_eq!(state.total(), 5);
        let iterations: Vec<u64> = state.recent().iter().map(|s| s.iteration).collect();
        assert_eq!(iterations, [4, 5]);
        assert!(state.recent().capacity() >= 2);
        let mut none = self::state(
            SpikeWatch {
                keep: 0,
                ..watch(1, 1.0, 0)
            },
            1,
        );
        run(&mut none, &[1], 0);
        run(&mut none, &[2], 1);
        assert_eq!((none.total(), none.recent().len()), (1, 0));
    }

    #[test]
    fn off_observes_nothing() {
        let mut state = state(watch(1, 1.0, 0), 1);
        state.watch = None;
        run(&mut state, &[1], 0);
        run(&mut state, &[100 * MS], 1);
        assert_eq!(state.total(), 0);
        assert!(state.history(NodeIndex(0)).unwrap().is_empty());
    }

    #[test]
    fn only_skippable_nodes_are_asked_whether_they_skipped() {
        let mut state = state(watch(2, 1.0, 0), 3);
        // Node 1 can skip its body; nodes 0 and 2 cannot.
        state.slots[1] |= SKIPPABLE;
        let mut asked = Vec::new();
        let times = [Some(MS); 3].into_iter();
        state.observe(times, &[0, 1, 2], &[], 0, |node| {
            asked.push(node);
            true
        });
        assert_eq!(asked, [1], "plain nodes are not asked");
        let lens: Vec<usize> = (0..3)
            .map(|i| state.history(NodeIndex(i)).unwrap().len())
            .collect();
        assert_eq!(lens, [1, 0, 1], "the skipped body recorded nothing");
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        let ok = SpikeWatch::default();
        assert_eq!(ok.validate(), Ok(()));
        let bad = [
            (SpikeWatch { window: 0, ..ok }, SpikeWatchError::Window(0)),
            (
                SpikeWatch {
                    window: MAX_SPIKE_WINDOW + 1,
                    ..ok
                },
                SpikeWatchError::Window(MAX_SPIKE_WINDOW + 1),
            ),
            (SpikeWatch { ratio: 0.5, ..ok }, SpikeWatchError::Ratio(0.5)),
            (
                SpikeWatch {
                    ratio: f64::INFINITY,
                    ..ok
                },
                SpikeWatchError::Ratio(f64::INFINITY),
            ),
            (
                SpikeWatch {
                    keep: MAX_SPIKES_KEPT + 1,
                    ..ok
                },
                SpikeWatchError::Keep(MAX_SPIKES_KEPT + 1),
            ),
        ];
        for (watch, error) in bad {
            assert_eq!(watch.validate(), Err(error));
            assert!(error.to_string().starts_with("spike watch: "));
        }
        let nan = SpikeWatch {
            ratio: f64::NAN,
            ..ok
        }
        .validate();
        assert!(matches!(nan, Err(SpikeWatchError::Ratio(r)) if r.is_nan()));
    }
}
