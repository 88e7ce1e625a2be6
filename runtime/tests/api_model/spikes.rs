//! The spike watch in the API model (issue 20): turned on and off with
//! random thresholds and windows, refused settings, and nodes of their own
//! (plain, exempt, in a nested exempt group, gated by a run condition,
//! panicking on demand, slow on demand) registered, removed, disabled and
//! enabled between iterations, beside every other node of the model.
//!
//! Times are real, so the model cannot say how long a run took; it knows
//! instead, from the documentation ([`sluice::SpikeHistory`]), *whether* a
//! node's run is recorded, and from the judging rule on
//! [`sluice::SpikeWatch`], *whether* a recorded time is a spike. After each
//! iteration it reads each new sample from the history that gained it and
//! checks: the history is the old one plus exactly that sample (or
//! unchanged, for a run that is not recorded), and the spikes reported, the
//! total and the kept list are the ones the rule gives for those samples.
//! Between iterations it checks which nodes have a history at all.
//!
//! Nodes the model does not describe here (the model's fixtures, commit
//! points, the user's systems are described: they run every iteration)
//! are still judged: their new sample is learned the same way, and they
//! must be reported exactly when the rule says.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sluice::{
    Group, MAX_SPIKE_WINDOW, MAX_SPIKES_KEPT, NodeBuilder, NodeIndex, Phase, SpikeWatch,
    SpikeWatchError,
};
use std::time::Duration;

use super::{INJECTED, Model, Op, Real, check};

/// Whether the gated spike nodes run their body.
#[derive(Debug, Default, Clone, Copy)]
struct SpikeGate(bool);
/// Whether the flaky spike nodes panic.
#[derive(Debug, Default, Clone, Copy)]
struct SpikeArmed(bool);
/// The serial of the spike node that sleeps this iteration (0: none).
#[derive(Debug, Default, Clone, Copy)]
struct SpikeSlow(usize);

/// How long a slow spike node sleeps.
const SLOW: Duration = Duration::from_micros(300);
const EXEMPT_GROUP: &str = "spike exempt";
const INNER_GROUP: &str = "spike inner";

/// A spike node of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Plain,
    /// `NodeBuilder::spike_exempt`.
    Exempt,
    /// In a group inside an exempt group.
    InExemptGroup,
    /// `run_if(SpikeGate)`: skipped while the gate is closed.
    Gated,
    /// In `PostUpdate`; panics while armed.
    Flaky,
}

#[derive(Debug, Clone)]
pub(crate) enum SpikeOp {
    /// Sets the watch: window 1..=5, ratio, floor, keep from short lists.
    Watch {
        window: u8,
        ratio: u8,
        min: u8,
        keep: u8,
    },
    Off,
    /// A setting out of range: refused, the watch unchanged.
    Refused(u8),
    AddNode(Kind),
    RemoveNode(u8),
    SetEnabled(u8, bool),
    Gate(bool),
    /// Runs an iteration with spike node `n` (by position) sleeping.
    RunSlow(u8),
    /// Runs an iteration with the flaky nodes armed.
    RunPanicking,
}

pub(crate) fn op() -> impl Strategy<Value = SpikeOp> {
    let kind = prop_oneof![
        3 => Just(Kind::Plain),
        1 => Just(Kind::Exempt),
        1 => Just(Kind::InExemptGroup),
        2 => Just(Kind::Gated),
        1 => Just(Kind::Flaky),
    ];
    prop_oneof![
        4 => (1u8..6, 0u8..4, 0u8..4, 0u8..4)
            .prop_map(|(window, ratio, min, keep)| SpikeOp::Watch { window, ratio, min, keep }),
        1 => Just(SpikeOp::Off),
        1 => (0u8..6).prop_map(SpikeOp::Refused),
        3 => kind.prop_map(SpikeOp::AddNode),
        1 => any::<u8>().prop_map(SpikeOp::RemoveNode),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(n, on)| SpikeOp::SetEnabled(n, on)),
        2 => any::<bool>().prop_map(SpikeOp::Gate),
        2 => any::<u8>().prop_map(SpikeOp::RunSlow),
        1 => Just(SpikeOp::RunPanicking),
    ]
}

fn watch(window: u8, ratio: u8, min: u8, keep: u8) -> SpikeWatch {
    SpikeWatch {
        window: usize::from(window),
        ratio: [1.0, 1.5, 3.0][usize::from(ratio % 3)],
        min: [
            Duration::ZERO,
            Duration::from_micros(50),
            Duration::from_secs(3600),
        ][usize::from(min % 3)],
        keep: [0, 1, 3, 1024][usize::from(keep % 4)],
    }
}

/// A node whose history the model describes.
#[derive(Debug, Clone)]
struct Tracked {
    /// `None` for one of the model's systems (runs every iteration).
    kind: Option<Kind>,
    serial: usize,
    enabled: bool,
    removed: bool,
    /// In the installed plan: registered, enabled, before the last iteration.
    installed: bool,
    history: Option<Vec<u64>>,
}

impl Tracked {
    fn exempt(&self) -> bool {
        matches!(self.kind, Some(Kind::Exempt | Kind::InExemptGroup))
    }
}

/// A spike as the model identifies it: node, iteration, time, peak, mean.
type Key = (NodeIndex, u64, Duration, Duration, Duration);

/// The model's side of the watch.
#[derive(Debug, Default)]
pub(crate) struct SpikeModel {
    watch: Option<SpikeWatch>,
    nodes: BTreeMap<NodeIndex, Tracked>,
    /// The spike nodes, in registration order.
    own: Vec<NodeIndex>,
    /// Every other watched node's history as last read, learned.
    learned: BTreeMap<NodeIndex, Vec<u64>>,
    /// Every spike so far, grouped by iteration.
    reported: Vec<Vec<Key>>,
    total: u64,
    /// How many spikes the world's list holds.
    kept: usize,
    iterations: u64,
    gate: bool,
    armed: bool,
    /// Set by `Op::InjectPanic`: the iteration failed in `PostUpdate`, so
    /// a flaky node (also there) may not have started.
    pub(crate) injected: bool,
    slow: usize,
    serial: usize,
}

/// The real side: whether the services and groups are in place.
#[derive(Debug, Default)]
pub(crate) struct SpikeReal {
    ready: bool,
}

fn nanos(history: sluice::SpikeHistory<'_>) -> Vec<u64> {
    history.iter().map(|t| t.as_nanos() as u64).collect()
}

fn mean(samples: &[u64]) -> Duration {
    let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
    Duration::from_nanos((sum / samples.len() as u128) as u64)
}

impl SpikeModel {
    /// The user's systems registered now (they join the tracked nodes,
    /// enabled; the ones gone from the list were removed).
    fn sync_systems(&mut self, real: &Real) {
        for node in self.nodes.values_mut().filter(|n| n.kind.is_none()) {
            node.removed = true;
        }
        for &index in &real.systems {
            let node = self.nodes.entry(index).or_insert(Tracked {
                kind: None,
                serial: 0,
                enabled: true,
                removed: false,
                installed: false,
                history: None,
            });
            node.removed = false;
        }
        for node in self.nodes.values_mut().filter(|n| n.removed) {
            node.history = None;
            node.installed = false;
        }
    }

    /// What setting the watch does to the histories (see `SpikeHistory`).
    fn set(&mut self, watch: Option<SpikeWatch>) {
        self.watch = watch;
        for node in self.nodes.values_mut() {
            node.history = match (watch, node.history.take()) {
                (None, _) => None,
                (Some(_), _) if !node.installed || !node.enabled || node.exempt() => None,
                (Some(watch), Some(mut history)) => {
                    let cut = history.len().saturating_sub(watch.window);
                    history.drain(..cut);
                    Some(history)
                }
                (Some(_), None) => Some(Vec::new()),
            };
        }
        if let Some(watch) = watch {
            self.kept = self.kept.min(watch.keep);
        }
    }

    /// Judges `t` against `old`, the history before it: a spike or not.
    fn judge(&mut self, node: NodeIndex, old: &[u64], t: u64, spikes: &mut Vec<Key>) {
        let watch = self.watch.expect("judged only while on");
        let floor = watch.min.as_nanos() as u64;
        let Some(&peak) = old.iter().max() else {
            return;
        };
        if old.len() == watch.window && t >= floor && t as f64 > peak as f64 * watch.ratio {
            spikes.push((
                node,
                self.iterations,
                Duration::from_nanos(t),
                Duration::from_nanos(peak),
                mean(old),
            ));
        }
    }
}

/// `old` then one more sample, kept to `window`: that sample, if `new` is
/// exactly that; `None` if `new` is `old`; an error otherwise.
///
/// A full window of equal samples reads the same with one more equal run
/// or without it: `expected` (the model's word, when it has one) decides.
fn gained(
    old: &[u64],
    new: &[u64],
    window: usize,
    expected: Option<bool>,
) -> Result<Option<u64>, String> {
    let ambiguous = new == old && old.len() == window && old.windows(2).all(|w| w[0] == w[1]);
    if (new == old && old.len() < window) || (ambiguous && expected != Some(true)) {
        return Ok(None);
    }
    if let Some(&t) = new.last() {
        let mut expected = old.to_vec();
        expected.push(t);
        let cut = expected.len().saturating_sub(window);
        if expected[cut..] == *new {
            return Ok(Some(t));
        }
    }
    if new == old {
        return Ok(None);
    }
    Err(format!(
        "history {new:?} is neither {old:?} nor it plus one run"
    ))
}

/// The model's own systems (of `Real::systems`) whose body was skipped in
/// the last iteration because their run condition failed.
fn skipped_bodies(real: &Real, model: &Model) -> Vec<NodeIndex> {
    real.systems
        .iter()
        .zip(&model.systems)
        .filter(|(_, (system, serial))| {
            matches!(system, super::Sys::Optional(_)) && model.optional.ran(*serial) == Some(false)
        })
        .map(|(&index, _)| index)
        .collect()
}

/// After an iteration of any operation: every tracked node's history grew
/// by its run or not, as documented, and the spikes are the rule's.
pub(crate) fn after_iteration(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let skipped = skipped_bodies(real, model);
    let spikes_model = &mut model.spikes;
    spikes_model.sync_systems(real);
    let world = &real.world;
    let mut spikes = Vec::new();
    let (armed, injected, gate) = (spikes_model.armed, spikes_model.injected, spikes_model.gate);
    spikes_model.injected = false;
    let watch = spikes_model.watch;
    let indices: Vec<NodeIndex> = spikes_model.nodes.keys().copied().collect();
    for index in indices {
        let node = spikes_model.nodes.get_mut(&index).expect("listed");
        node.installed = !node.removed && node.enabled;
        let Some(watch) = watch.filter(|_| node.installed && !node.exempt()) else {
            node.history = None;
            continue;
        };
        let old = node.history.take().unwrap_or_default();
        let new = world.spike_history(index).map(nanos);
        let Some(new) = new else {
            return Err(TestCaseError::fail(format!(
                "node {index:?} ({:?}) has no history after an iteration",
                node.kind
            )));
        };
        // Whether the run is recorded: `None` when the documentation
        // leaves it open (a node the failure may have stopped first).
        let recorded = match node.kind {
            Some(Kind::Gated) => Some(gate),
            Some(Kind::Flaky) if armed => Some(false),
            Some(Kind::Flaky) if injected => None,
            Some(_) => Some(true),
            // A system of the model's own: an optional-family system whose
            // run condition failed skipped its body, which is no run.
            None => Some(!skipped.contains(&index)),
        };
        let sample = gained(&old, &new, watch.window, recorded)
            .map_err(|e| TestCaseError::fail(format!("node {index:?} ({:?}): {e}", node.kind)))?;
        check(recorded.is_none_or(|r| r == sample.is_some()), || {
            format!(
                "node {index:?} ({:?}): history {new:?} after {old:?}, the model says the run is {}recorded",
                node.kind,
                if recorded == Some(true) { "" } else { "not " }
            )
        })?;
        node.history = Some(new);
        if let Some(t) = sample {
            spikes_model.judge(index, &old, t, &mut spikes);
        }
    }
    // Every other node with a history, before and after: learned.
    let learned = std::mem::take(&mut spikes_model.learned);
    for (index, old) in learned {
        if let (Some(watch), Some(new)) = (watch, world.spike_history(index).map(nanos))
            && let Some(t) = gained(&old, &new, watch.window, None)
                .map_err(|e| TestCaseError::fail(format!("node {index:?}: {e}")))?
        {
            spikes_model.judge(index, &old, t, &mut spikes);
        }
    }
    spikes_model.iterations += 1;
    check(world.iterations() == spikes_model.iterations, || {
        format!(
            "{} iterations counted, the model {}",
            world.iterations(),
            spikes_model.iterations
        )
    })?;
    if let Some(watch) = watch.filter(|w| w.keep > 0) {
        spikes_model.kept = (spikes_model.kept + spikes.len()).min(watch.keep);
    }
    spikes_model.total += spikes.len() as u64;
    spikes_model.reported.push(spikes);
    compare(real, model)
}

/// Between operations: which nodes have a history, the setting, the
/// spikes; and every other watched node's history, learned for the next
/// iteration.
fn compare(real: &Real, model: &mut Model) -> Result<(), TestCaseError> {
    let spikes_model = &mut model.spikes;
    let world = &real.world;
    check(world.spike_watch() == spikes_model.watch, || {
        format!(
            "the watch is {:?}, the model {:?}",
            world.spike_watch(),
            spikes_model.watch
        )
    })?;
    for (&index, node) in &spikes_model.nodes {
        let got = world.spike_history(index).map(nanos);
        check(got == node.history, || {
            format!(
                "node {index:?} ({:?}): history length {:?}, the model {:?}",
                node.kind,
                got.as_ref().map(Vec::len),
                node.history.as_ref().map(Vec::len)
            )
        })?;
    }
    // The fixtures and commit points sit among (or just after) the
    // tracked nodes; the temporary nodes are removed by now.
    let last = spikes_model
        .nodes
        .keys()
        .last()
        .map_or(0, |n| n.0 + 2)
        .max(8);
    spikes_model.learned = (0..last)
        .map(NodeIndex)
        .filter(|index| !spikes_model.nodes.contains_key(index))
        .filter_map(|index| Some((index, nanos(world.spike_history(index)?))))
        .collect();
    check(world.spikes_total() == spikes_model.total, || {
        format!(
            "{} spikes reported, the model {}",
            world.spikes_total(),
            spikes_model.total
        )
    })?;
    // The list: the newest `kept` spikes, in report order; within one
    // iteration the order is the plan's, so compared as a set.
    let list: Vec<Key> = world
        .spikes()
        .map(|s| (s.node, s.iteration, s.time, s.peak, s.mean))
        .collect();
    check(list.len() == spikes_model.kept, || {
        format!(
            "the list keeps {} spikes, the model {}",
            list.len(),
            spikes_model.kept
        )
    })?;
    let mut rest = &list[..];
    for group in spikes_model.reported.iter().rev() {
        if rest.is_empty() {
            break;
        }
        let take = group.len().min(rest.len());
        let (front, tail) = rest.split_at(rest.len() - take);
        let mut expected = group.clone();
        for spike in tail {
            let Some(at) = expected.iter().position(|e| e == spike) else {
                return Err(TestCaseError::fail(format!(
                    "spike {spike:?} is not the model's: {group:?}"
                )));
            };
            expected.swap_remove(at);
        }
        rest = front;
    }
    for spike in world.spikes() {
        check(spike.mean <= spike.peak && spike.time > spike.peak, || {
            format!("{spike}")
        })?;
    }
    Ok(())
}

pub(crate) fn apply(op: &SpikeOp, real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    model.spikes.sync_systems(real);
    match *op {
        SpikeOp::Watch {
            window,
            ratio,
            min,
            keep,
        } => {
            let watch = watch(window, ratio, min, keep);
            real.world
                .set_spike_watch(Some(watch))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            model.spikes.set(Some(watch));
        }
        SpikeOp::Off => {
            real.world
                .set_spike_watch(None)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            model.spikes.set(None);
        }
        SpikeOp::Refused(which) => {
            let ok = SpikeWatch::default();
            let (bad, error) = match which {
                0 => (SpikeWatch { window: 0, ..ok }, SpikeWatchError::Window(0)),
                1 => {
                    let window = MAX_SPIKE_WINDOW + 1;
                    (SpikeWatch { window, ..ok }, SpikeWatchError::Window(window))
                }
                2 => (SpikeWatch { ratio: 0.5, ..ok }, SpikeWatchError::Ratio(0.5)),
                3 => {
                    let ratio = f64::INFINITY;
                    (SpikeWatch { ratio, ..ok }, SpikeWatchError::Ratio(ratio))
                }
                4 => {
                    let keep = MAX_SPIKES_KEPT + 1;
                    (SpikeWatch { keep, ..ok }, SpikeWatchError::Keep(keep))
                }
                _ => {
                    let refused = real.world.set_spike_watch(Some(SpikeWatch {
                        ratio: f64::NAN,
                        ..ok
                    }));
                    check(
                        matches!(refused, Err(SpikeWatchError::Ratio(r)) if r.is_nan()),
                        || format!("a NaN ratio: {refused:?}"),
                    )?;
                    return compare(real, model);
                }
            };
            let refused = real.world.set_spike_watch(Some(bad));
            check(refused == Err(error), || {
                format!("{bad:?} gave {refused:?}, not {error:?}")
            })?;
        }
        SpikeOp::AddNode(kind) => {
            prepare(real);
            model.spikes.serial += 1;
            let serial = model.spikes.serial;
            let index = real.world.add_system(spike_node(kind, serial));
            model.spikes.own.push(index);
            model.spikes.nodes.insert(
                index,
                Tracked {
                    kind: Some(kind),
                    serial,
                    enabled: true,
                    removed: false,
                    installed: false,
                    history: None,
                },
            );
        }
        SpikeOp::RemoveNode(at) | SpikeOp::SetEnabled(at, _) => {
            let own = &model.spikes.own;
            let Some(&index) = own.get(usize::from(at) % own.len().max(1)) else {
                return Ok(());
            };
            let node = model.spikes.nodes.get_mut(&index).expect("tracked");
            if let SpikeOp::SetEnabled(_, enabled) = *op {
                real.world.set_enabled(index, enabled);
                node.enabled = enabled;
            } else {
                real.world
                    .remove_node(index)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.spikes.own.retain(|&n| n != index);
                node.removed = true;
                node.enabled = false;
            }
            if !node.enabled {
                node.history = None;
            }
        }
        SpikeOp::Gate(open) => {
            prepare(real);
            real.world.insert(SpikeGate(open));
            model.spikes.gate = open;
        }
        SpikeOp::RunSlow(at) => {
            let own = &model.spikes.own;
            let serial = own
                .get(usize::from(at) % own.len().max(1))
                .map_or(0, |n| model.spikes.nodes[n].serial);
            prepare(real);
            real.world.insert(SpikeSlow(serial));
            model.spikes.slow = serial;
            let result = super::apply(&Op::Run, real, model, &mut 0);
            real.world.insert(SpikeSlow(0));
            model.spikes.slow = 0;
            return result;
        }
        SpikeOp::RunPanicking => return run_panicking(real, model),
    }
    compare(real, model)
}

/// An iteration with the flaky nodes armed: each that runs panics in
/// `PostUpdate`, after every other node, and none of them is recorded.
fn run_panicking(real: &mut Real, model: &mut Model) -> Result<(), TestCaseError> {
    let flaky: Vec<String> = model
        .spikes
        .nodes
        .iter()
        .filter(|(_, n)| n.kind == Some(Kind::Flaky) && n.enabled && !n.removed)
        .map(|(_, n)| format!("spike {:?}#{}", Kind::Flaky, n.serial))
        .collect();
    if flaky.is_empty() {
        return super::apply(&Op::Run, real, model, &mut 0);
    }
    prepare(real);
    real.world.insert(SpikeArmed(true));
    model.spikes.armed = true;
    let result = real.world.run_iteration();
    real.world.insert(SpikeArmed(false));
    let refused = model.run();
    super::check_panicked(&result, refused, |nodes| {
        !nodes.is_empty() && nodes.iter().all(|n| flaky.contains(n))
    })?;
    let compared = super::compare_iteration(real, model);
    model.spikes.armed = false;
    compared
}

/// The services the spike nodes read and the exempt groups, once.
fn prepare(real: &mut Real) {
    if real.spikes.ready {
        return;
    }
    real.spikes.ready = true;
    real.world.insert(SpikeGate(false));
    real.world.insert(SpikeArmed(false));
    real.world.insert(SpikeSlow(0));
    real.world
        .add_group(Group::new(EXEMPT_GROUP).spike_exempt());
    real.world
        .add_group(Group::new(INNER_GROUP).in_group(EXEMPT_GROUP));
}

fn spike_node(kind: Kind, serial: usize) -> sluice::NodeSpec {
    let builder = NodeBuilder::new(format!("spike {kind:?}#{serial}"));
    let builder = match kind {
        Kind::Plain | Kind::Gated => builder,
        Kind::Exempt => builder.spike_exempt(),
        Kind::InExemptGroup => builder.in_group(INNER_GROUP),
        Kind::Flaky => builder.phase(Phase::PostUpdate),
    };
    let spec = builder.system(move |slow: &SpikeSlow, armed: &SpikeArmed| {
        if slow.0 == serial {
            std::thread::sleep(SLOW);
        }
        if kind == Kind::Flaky && armed.0 {
            std::panic::panic_any(INJECTED);
        }
    });
    match kind {
        Kind::Gated => spec.run_if(|gate: &SpikeGate| gate.0),
        _ => spec,
    }
}
