//! Organised worlds on random inputs: groups (nested, `order_first` /
//! `order_last`, group `after`/`before`), phases, stages, sets, `order(n)`
//! tie-breaks and both cadences.
//!
//! 1. Every executor (serial, parallel, adaptive; pools of 1 and 3 threads)
//!    leaves exactly the state of running the systems one by one in plan
//!    order (simulated here), the fixed plan once per whole 10 ms step
//!    accrued before each variable run. At run time every system checks
//!    that everything the rules put before it has finished.
//! 2. The plans follow the rules of `plan-format.md` ("Organisation"),
//!    computed here from the spec alone (the `Rules` model below, not the
//!    planner): every "X must precede Y" holds; the plan order is exactly
//!    the spec's ("repeatedly take the earliest-declared system all of whose
//!    required predecessors are placed"), among the ready ones a lower
//!    `order(n)` first when tie-breaks are given (`NodeBuilder::order`); the
//!    stage view follows the spec's stage rule. The model's stage view is
//!    also compared with the reference `sluice plan`
//!    (`analyzers/tests/reference`, written from the spec by someone else) on
//!    the same world written as a plan file. The world's own two scheduling
//!    nodes are in the model as nodes no organisation applies to.
//! 3. A valid world plus one `after`/`before` that contradicts a group order,
//!    a first/last order, a stage, a set or a phase fails to plan with
//!    SL0007 naming both systems (SL0001 or SL0007 when the columns alone
//!    also order the two); one across the cadences with SL0003.
//!
//! Valid worlds are made by adding each optional ordering feature in a random
//! order and dropping any that would close a cycle (in the spec's model), so
//! worlds stay dense in constraints. 64 cases each; `PROPTEST_CASES` for more.

#[allow(dead_code)]
#[path = "../../analyzers/tests/reference/mod.rs"]
mod reference;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use sluice::{
    Cadence, Context, ExecutorKind, Group, IterationError, NodeBuilder, Phase, ThreadPool, World,
};
use sluice_tests::by_index;

/// Services `S<0>..S<5>`, each a log of observations.
const SERVICES: usize = 6;
/// The fixed step, and the deltas of the four updates: 1, 2, 1 and 3 whole
/// steps (the 25 ms update leaves 5 ms that the next one completes).
const STEP: Duration = Duration::from_millis(10);
const DELTAS_MS: [u64; 4] = [10, 25, 5, 30];
const FIXED_STEPS: [usize; 4] = [1, 2, 1, 3];
/// The world's own scheduling nodes, in the variable plan (registered
/// first; see `Desc::with_builtins`).
const BUILTIN: [&str; 2] = ["sluice::plan", "sluice::execution"];

#[derive(Debug, Default)]
struct S<const N: usize>(Vec<u64>);

// ---------------------------------------------------------------------------
// The world description.

/// Whom an `after`/`before` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    System(usize),
    Group(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sibling {
    First,
    Last,
}

#[derive(Debug, Clone)]
struct Sys {
    reads: Vec<usize>,
    gates: Vec<usize>,
    exclusive: bool,
    fixed: bool,
    group: Option<usize>,
    sibling: Option<Sibling>,
    phase: Option<Phase>,
    /// Index into `Desc::stages`.
    stage: Option<usize>,
    /// Index into `Desc::sets`.
    set: Option<usize>,
    order: Option<i32>,
    after: Vec<Target>,
    before: Vec<Target>,
    /// One of the world's own nodes (`Desc::with_builtins`).
    builtin: bool,
}

#[derive(Debug, Clone)]
struct Grp {
    /// Always a group declared earlier: a forest.
    parent: Option<usize>,
    sibling: Option<Sibling>,
    after: Vec<Target>,
    before: Vec<Target>,
    /// Declared just before system `slot` (after all of them when `slot`
    /// is the system count).
    slot: usize,
}

/// A world: systems `s0..`, groups `g0..`, stages `st0..` and sets `set0..`
/// with their order numbers.
#[derive(Debug, Clone)]
struct Desc {
    systems: Vec<Sys>,
    groups: Vec<Grp>,
    stages: Vec<i64>,
    sets: Vec<i64>,
}

fn system_name(s: usize) -> String {
    format!("s{s}")
}

fn group_name(g: usize) -> String {
    format!("g{g}")
}

fn target_name(target: Target) -> String {
    match target {
        Target::System(s) => system_name(s),
        Target::Group(g) => group_name(g),
    }
}

fn phase_rank(phase: Option<Phase>) -> usize {
    match phase {
        Some(Phase::PreUpdate) => 0,
        None | Some(Phase::Update) => 1,
        Some(Phase::PostUpdate) => 2,
    }
}

impl Desc {
    fn uses_orders(&self) -> bool {
        self.systems.iter().any(|s| s.order.is_some())
    }

    fn uses_phases(&self) -> bool {
        self.systems.iter().any(|s| s.phase.is_some())
    }

    fn has_fixed(&self) -> bool {
        self.systems.iter().any(|s| s.fixed)
    }

    /// The systems of a cadence, in declaration order.
    fn members(&self, fixed: bool) -> Vec<usize> {
        (0..self.systems.len())
            .filter(|&s| self.systems[s].fixed == fixed)
            .collect()
    }

    /// Whether `inner` is `outer` or lies inside it at any depth.
    fn inside(&self, inner: Target, outer: Target) -> bool {
        if inner == outer {
            return true;
        }
        let Target::Group(outer) = outer else {
            return false;
        };
        let mut at = match inner {
            Target::System(s) => self.systems[s].group,
            Target::Group(g) => self.groups[g].parent,
        };
        while let Some(g) = at {
            if g == outer {
                return true;
            }
            at = self.groups[g].parent;
        }
        false
    }

    /// The plan file of the world, for the reference `sluice plan`.
    fn plan_text(&self) -> String {
        let list = |names: Vec<String>| reference::list(&names);
        let targets = |ts: &[Target]| list(ts.iter().map(|&t| target_name(t)).collect());
        let mut text = String::from("# organised_equivalence.rs\n");
        for (k, number) in self.stages.iter().enumerate() {
            text.push_str(&format!("STAGE st{k} {number}\n"));
        }
        for (k, number) in self.sets.iter().enumerate() {
            text.push_str(&format!("SET set{k} {number}\n"));
        }
        let sibling = |s: Option<Sibling>| match s {
            None => String::new(),
            Some(Sibling::First) => " order=first".to_owned(),
            Some(Sibling::Last) => " order=last".to_owned(),
        };
        for (g, group) in self.groups.iter().enumerate() {
            text.push_str(&format!("GROUP {}", group_name(g)));
            if let Some(p) = group.parent {
                text.push_str(&format!(" group={}", group_name(p)));
            }
            text.push_str(&sibling(group.sibling));
            if !group.after.is_empty() {
                text.push_str(&format!(" after={}", targets(&group.after)));
            }
            if !group.before.is_empty() {
                text.push_str(&format!(" before={}", targets(&group.before)));
            }
            text.push('\n');
        }
        for (s, sys) in self.systems.iter().enumerate() {
            let reads = list(sys.reads.iter().map(|r| format!("S{r}")).collect());
            let mut writes: Vec<String> = sys.gates.iter().map(|w| format!("S{w}")).collect();
            if sys.exclusive {
                writes.insert(0, "*".to_owned());
            }
            text.push_str(&format!(
                "SYSTEM {} {reads} {} {} {}",
                system_name(s),
                list(writes),
                targets(&sys.after),
                targets(&sys.before)
            ));
            if let Some(g) = sys.group {
                text.push_str(&format!(" group={}", group_name(g)));
            }
            text.push_str(&sibling(sys.sibling));
            if let Some(k) = sys.stage {
                text.push_str(&format!(" stage=st{k}"));
            }
            if let Some(k) = sys.set {
                text.push_str(&format!(" set=set{k}"));
            }
            match sys.phase {
                None => {}
                Some(Phase::PreUpdate) => text.push_str(" phase=pre"),
                Some(Phase::Update) => text.push_str(" phase=update"),
                Some(Phase::PostUpdate) => text.push_str(" phase=post"),
            }
            if sys.fixed {
                text.push_str(" cadence=fixed");
            }
            if let Some(order) = sys.order {
                // Not part of the plan format: a runtime extension.
                text.push_str(&format!(" # order({order})"));
            }
            text.push('\n');
        }
        text
    }
}

// ---------------------------------------------------------------------------
// The rules of plan-format.md ("Organisation"), as a constraint graph.
//
// Vertices: the systems, then an entry and an exit vertex per group, then
// barrier vertices between consecutive levels of stages, of sets and of
// phases. "X must precede Y" is an edge exit(X) -> entry(Y); a group's entry
// precedes each child's entry and each child's exit precedes the group's
// exit, so an order on a group reaches everything inside it at any depth;
// entry(G) -> exit(G) lets an empty group carry order through it. Rank
// levels (stage, set, phase): a member of level k follows the barrier below
// it and precedes the barrier above it; the barriers form a chain. Each
// cadence gets its own graph, holding only its own systems (rule 6): a group
// whose systems are all of the other cadence is empty there.

/// One cadence's constraints: `reach[u]` has bit `v` when a path of one
/// edge or more leads from `u` to `v`.
struct Rules {
    reach: Vec<u128>,
}

impl Rules {
    fn precedes(&self, x: usize, y: usize) -> bool {
        self.reach[x] >> y & 1 == 1
    }

    fn cyclic(&self) -> bool {
        (0..self.reach.len()).any(|v| self.precedes(v, v))
    }
}

/// Rank levels (stages or sets): each system's level, 0 for the smallest
/// order number, `None` for a non-member.
fn levels(
    numbers: &[i64],
    member: impl Fn(usize) -> Option<usize>,
    n: usize,
) -> Vec<Option<usize>> {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    (0..n)
        .map(|s| member(s).map(|k| sorted.binary_search(&numbers[k]).expect("declared")))
        .collect()
}

impl Desc {
    fn vertex_count(&self) -> usize {
        self.systems.len()
            + 2 * self.groups.len()
            + self.stages.len().saturating_sub(1)
            + self.sets.len().saturating_sub(1)
            + 2
    }

    fn entry(&self, t: Target) -> usize {
        match t {
            Target::System(s) => s,
            Target::Group(g) => self.systems.len() + 2 * g,
        }
    }

    fn exit(&self, t: Target) -> usize {
        match t {
            Target::System(s) => s,
            Target::Group(g) => self.systems.len() + 2 * g + 1,
        }
    }

    /// Every edge of the cadence's graph, `(from, to, direct)`: `direct`
    /// marks an `after`/`before` between two systems (a cycle of only those
    /// is SL0001; any other edge makes it SL0007).
    fn edges(&self, fixed: bool) -> Vec<(usize, usize, bool)> {
        let n = self.systems.len();
        let mut edges = Vec::new();
        // `direct` only for rule 2 between two systems.
        let precede = |edges: &mut Vec<(usize, usize, bool)>, x: Target, y: Target, rule2: bool| {
            let direct = rule2 && matches!((x, y), (Target::System(_), Target::System(_)));
            edges.push((self.exit(x), self.entry(y), direct));
        };
        // Rule 2: `after`/`before` of systems and groups.
        let items = (0..n)
            .map(|s| {
                let sys = &self.systems[s];
                (
                    Target::System(s),
                    sys.group,
                    sys.sibling,
                    &sys.after,
                    &sys.before,
                )
            })
            .chain(self.groups.iter().enumerate().map(|(g, grp)| {
                (
                    Target::Group(g),
                    grp.parent,
                    grp.sibling,
                    &grp.after,
                    &grp.before,
                )
            }))
            .collect::<Vec<_>>();
        for &(item, _, _, after, before) in &items {
            for &t in after {
                precede(&mut edges, t, item, true);
            }
            for &t in before {
                precede(&mut edges, item, t, true);
            }
        }
        // Rule 3: first / last among siblings.
        let builtin = |t: Target| matches!(t, Target::System(s) if self.systems[s].builtin);
        for &(x, xp, xs, _, _) in &items {
            for &(y, yp, ys, _, _) in &items {
                if x == y || xp != yp || xs == ys || builtin(x) || builtin(y) {
                    continue;
                }
                if xs == Some(Sibling::First) {
                    precede(&mut edges, x, y, false);
                }
                if xs == Some(Sibling::Last) {
                    precede(&mut edges, y, x, false);
                }
            }
        }
        // Rule 1: containment.
        for &(item, parent, _, _, _) in &items {
            if let Some(p) = parent {
                edges.push((self.entry(Target::Group(p)), self.entry(item), false));
                edges.push((self.exit(item), self.exit(Target::Group(p)), false));
            }
        }
        for g in 0..self.groups.len() {
            edges.push((
                self.entry(Target::Group(g)),
                self.exit(Target::Group(g)),
                false,
            ));
        }
        // Rules 4 and 5: stages, sets, phases.
        let mut base = n + 2 * self.groups.len();
        let stage = levels(&self.stages, |s| self.systems[s].stage, n);
        let set = levels(&self.sets, |s| self.systems[s].set, n);
        let phases = self.uses_phases();
        let phase: Vec<Option<usize>> = (0..n)
            .map(|s| {
                (phases && !self.systems[s].builtin).then(|| phase_rank(self.systems[s].phase))
            })
            .collect();
        for (count, level) in [
            (self.stages.len(), stage),
            (self.sets.len(), set),
            (3, phase),
        ] {
            let barriers = count.saturating_sub(1);
            for k in 1..barriers {
                edges.push((base + k - 1, base + k, false));
            }
            for (s, level) in level.iter().enumerate() {
                if let Some(k) = *level {
                    if k > 0 {
                        edges.push((base + k - 1, s, false));
                    }
                    if k < barriers {
                        edges.push((s, base + k, false));
                    }
                }
            }
            base += barriers;
        }
        assert_eq!(base, self.vertex_count());
        // Rule 6: only this cadence's systems.
        let present = |v: usize| v >= n || self.systems[v].fixed == fixed;
        edges.retain(|&(u, v, _)| present(u) && present(v));
        edges
    }

    /// The closure of the cadence's graph, of all edges or only the direct
    /// ones.
    fn rules(&self, fixed: bool, direct_only: bool) -> Rules {
        let count = self.vertex_count();
        assert!(count <= 128, "a world of at most 128 vertices");
        let mut reach = vec![0u128; count];
        for (u, v, direct) in self.edges(fixed) {
            if direct || !direct_only {
                reach[u] |= 1 << v;
            }
        }
        for k in 0..count {
            let via = reach[k];
            for row in reach.iter_mut() {
                if *row >> k & 1 == 1 {
                    *row |= via;
                }
            }
        }
        Rules { reach }
    }

    fn valid(&self) -> bool {
        !self.rules(true, false).cyclic() && !self.rules(false, false).cyclic()
    }

    /// The plan order of a cadence: repeatedly the earliest-declared system
    /// whose required predecessors are all placed (the spec), where among
    /// those ready a lower `order(n)` goes first (the runtime's tie-break,
    /// `NodeBuilder::order`: lower first, before registration order; 0 when
    /// not given).
    fn plan_order(&self, fixed: bool, rules: &Rules) -> Vec<usize> {
        let members = self.members(fixed);
        let mut placed = vec![false; self.systems.len()];
        let mut order = Vec::new();
        while order.len() < members.len() {
            let next = *members
                .iter()
                .filter(|&&s| {
                    !placed[s]
                        && members
                            .iter()
                            .all(|&p| p == s || placed[p] || !rules.precedes(p, s))
                })
                .min_by_key(|&&s| (self.systems[s].order.unwrap_or(0), s))
                .expect("an acyclic cadence has a ready system");
            placed[next] = true;
            order.push(next);
        }
        order
    }

    fn conflict(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.systems[a], &self.systems[b]);
        let touches = |s: &Sys, r: usize| s.reads.contains(&r) || s.gates.contains(&r);
        x.exclusive
            || y.exclusive
            || x.gates.iter().any(|&w| touches(y, w))
            || y.gates.iter().any(|&w| touches(x, w))
    }

    /// The spec's stage rule over a given plan order: each system goes into
    /// the earliest stage after every earlier one it conflicts with or must
    /// follow. Indexed by system.
    fn spec_stages(&self, order: &[usize], rules: &Rules) -> Vec<usize> {
        let mut stage = vec![0; self.systems.len()];
        for (i, &s) in order.iter().enumerate() {
            stage[s] = order[..i]
                .iter()
                .filter(|&&p| rules.precedes(p, s) || self.conflict(p, s))
                .map(|&p| stage[p] + 1)
                .max()
                .unwrap_or(0);
        }
        stage
    }
}

// ---------------------------------------------------------------------------
// Generation.

/// An `after`/`before` as drawn: whether it names a group, and which.
type RawTarget = (bool, Index);

#[derive(Debug, Clone)]
struct RawSystem {
    reads: Vec<usize>,
    gates: Vec<usize>,
    exclusive: bool,
    fixed: bool,
    group: Option<Index>,
    /// 0: first, 1: last, else neither.
    sibling: u8,
    /// 0: pre, 1: update, 2: post, else none.
    phase: u8,
    stage: Index,
    set: Option<Index>,
    order: Option<i32>,
    /// `(names a group, which)`.
    after: Vec<RawTarget>,
    before: Vec<RawTarget>,
}

#[derive(Debug, Clone)]
struct RawGroup {
    parent: Option<Index>,
    sibling: u8,
    after: Vec<RawTarget>,
    before: Vec<RawTarget>,
    slot: Index,
}

#[derive(Debug, Clone)]
struct RawWorld {
    systems: Vec<RawSystem>,
    groups: Vec<RawGroup>,
    stages: Vec<i64>,
    sets: Vec<i64>,
    phases: bool,
    orders: bool,
    /// The order optional features are tried in.
    keys: Vec<u16>,
}

fn raw_targets(max: usize, group_weight: f64) -> impl Strategy<Value = Vec<RawTarget>> {
    proptest::collection::vec(
        (prop::bool::weighted(group_weight), any::<Index>()),
        0..=max,
    )
}

fn raw_system() -> impl Strategy<Value = RawSystem> {
    (
        (
            proptest::collection::btree_set(0..SERVICES, 0..=2),
            proptest::collection::btree_set(0..SERVICES, 0..=2),
            prop::bool::weighted(0.04),
            prop::bool::weighted(0.2),
        ),
        (
            prop::option::weighted(0.6, any::<Index>()),
            0u8..10,
            0u8..6,
            any::<Index>(),
            prop::option::weighted(0.4, any::<Index>()),
            prop::option::weighted(0.3, -2i32..=2),
        ),
        (raw_targets(2, 0.25), raw_targets(1, 0.25)),
    )
        .prop_map(
            |(
                (reads, gates, exclusive, fixed),
                (group, sibling, phase, stage, set, order),
                (after, before),
            )| RawSystem {
                reads: reads.difference(&gates).copied().collect(),
                gates: gates.into_iter().collect(),
                exclusive,
                fixed,
                group,
                sibling,
                phase,
                stage,
                set,
                order,
                after,
                before,
            },
        )
}

fn raw_group() -> impl Strategy<Value = RawGroup> {
    (
        prop::option::weighted(0.5, any::<Index>()),
        0u8..6,
        raw_targets(1, 0.6),
        raw_targets(1, 0.6),
        any::<Index>(),
    )
        .prop_map(|(parent, sibling, after, before, slot)| RawGroup {
            parent,
            sibling,
            after,
            before,
            slot,
        })
}

/// Distinct order numbers, in a random declaration order.
fn numbers(max: usize) -> impl Strategy<Value = Vec<i64>> {
    (
        prop_oneof![Just(0usize), 1..=max],
        Just(vec![-7i64, -1, 0, 2, 5, 9, 40]).prop_shuffle(),
    )
        .prop_map(|(count, mut numbers)| {
            numbers.truncate(count);
            numbers
        })
}

fn raw_world(systems: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = RawWorld> {
    (
        proptest::collection::vec(raw_system(), systems),
        proptest::collection::vec(raw_group(), 0..=8),
        numbers(4),
        numbers(3),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(any::<u16>(), 64),
    )
        .prop_map(
            |(systems, groups, stages, sets, phases, orders, keys)| RawWorld {
                systems,
                groups,
                stages,
                sets,
                phases,
                orders,
                keys,
            },
        )
}

/// An optional ordering feature, added only when it closes no cycle.
#[derive(Debug, Clone, Copy)]
enum Feature {
    Phase(usize, Phase),
    Set(usize, usize),
    Sibling(Target, Sibling),
    After(Target, Target),
    Before(Target, Target),
}

fn sibling_of(raw: u8) -> Option<Sibling> {
    match raw {
        0 => Some(Sibling::First),
        1 => Some(Sibling::Last),
        _ => None,
    }
}

impl Desc {
    fn apply(&mut self, feature: Feature) {
        match feature {
            Feature::Phase(s, phase) => self.systems[s].phase = Some(phase),
            Feature::Set(s, k) => self.systems[s].set = Some(k),
            Feature::Sibling(Target::System(s), order) => self.systems[s].sibling = Some(order),
            Feature::Sibling(Target::Group(g), order) => self.groups[g].sibling = Some(order),
            Feature::After(item, t) | Feature::Before(item, t) => {
                let after = matches!(feature, Feature::After(..));
                let list = match (item, after) {
                    (Target::System(s), true) => &mut self.systems[s].after,
                    (Target::System(s), false) => &mut self.systems[s].before,
                    (Target::Group(g), true) => &mut self.groups[g].after,
                    (Target::Group(g), false) => &mut self.groups[g].before,
                };
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }
    }
}

/// The `after`/`before` and sibling-order features an item draws, `target`
/// resolving what each `after`/`before` names (or dropping it).
fn item_features(
    features: &mut Vec<Feature>,
    item: Target,
    (after, before, sibling): (&[RawTarget], &[RawTarget], u8),
    target: impl Fn(&RawTarget) -> Option<Target>,
) {
    features.extend(
        after
            .iter()
            .filter_map(&target)
            .map(|t| Feature::After(item, t)),
    );
    features.extend(
        before
            .iter()
            .filter_map(&target)
            .map(|t| Feature::Before(item, t)),
    );
    if let Some(order) = sibling_of(sibling) {
        features.push(Feature::Sibling(item, order));
    }
}

/// A valid world from raw choices: the structure (cadences, accesses, group
/// forest, stages, tie-breaks) as drawn, then every optional ordering
/// feature in a random order, each kept only when the world stays acyclic.
fn build(raw: &RawWorld) -> Desc {
    let n = raw.systems.len();
    let m = raw.groups.len();
    let mut desc = Desc {
        systems: raw
            .systems
            .iter()
            .map(|r| Sys {
                reads: r.reads.clone(),
                gates: r.gates.clone(),
                exclusive: r.exclusive,
                fixed: r.fixed,
                group: (m > 0).then(|| r.group.map(|i| i.index(m))).flatten(),
                sibling: None,
                phase: None,
                stage: (!raw.stages.is_empty()).then(|| r.stage.index(raw.stages.len())),
                set: None,
                order: if raw.orders { r.order } else { None },
                after: Vec::new(),
                before: Vec::new(),
                builtin: false,
            })
            .collect(),
        groups: raw
            .groups
            .iter()
            .enumerate()
            .map(|(g, r)| Grp {
                parent: (g > 0).then(|| r.parent.map(|i| i.index(g))).flatten(),
                sibling: None,
                after: Vec::new(),
                before: Vec::new(),
                slot: r.slot.index(n + 1),
            })
            .collect(),
        stages: raw.stages.clone(),
        sets: raw.sets.clone(),
    };
    // Orders are unique within a plan (SL0005): a later system drawing an
    // order its cadence already has goes without.
    let mut taken = std::collections::BTreeSet::new();
    for sys in &mut desc.systems {
        if let Some(order) = sys.order
            && !taken.insert((sys.fixed, order))
        {
            sys.order = None;
        }
    }
    let mut features = Vec::new();
    for (s, r) in raw.systems.iter().enumerate() {
        let item = Target::System(s);
        let same_cadence: Vec<usize> = (0..n)
            .filter(|&o| o != s && raw.systems[o].fixed == r.fixed)
            .collect();
        let target = |&(group, index): &RawTarget| -> Option<Target> {
            if group && m > 0 {
                Some(Target::Group(index.index(m)))
            } else if same_cadence.is_empty() {
                None
            } else {
                Some(Target::System(
                    same_cadence[index.index(same_cadence.len())],
                ))
            }
        };
        item_features(
            &mut features,
            item,
            (&r.after, &r.before, r.sibling),
            target,
        );
        if raw.phases {
            let phase = [Phase::PreUpdate, Phase::Update, Phase::PostUpdate];
            if let Some(&phase) = phase.get(usize::from(r.phase)) {
                features.push(Feature::Phase(s, phase));
            }
        }
        if let (Some(set), false) = (r.set, raw.sets.is_empty()) {
            features.push(Feature::Set(s, set.index(raw.sets.len())));
        }
    }
    for (g, r) in raw.groups.iter().enumerate() {
        let item = Target::Group(g);
        let target = |&(group, index): &RawTarget| -> Option<Target> {
            if group {
                let other = index.index(m);
                (other != g).then_some(Target::Group(other))
            } else {
                Some(Target::System(index.index(n)))
            }
        };
        item_features(
            &mut features,
            item,
            (&r.after, &r.before, r.sibling),
            target,
        );
    }
    let mut keyed: Vec<(u16, usize, Feature)> = features
        .into_iter()
        .enumerate()
        .map(|(i, f)| (raw.keys[i % raw.keys.len()], i, f))
        .collect();
    keyed.sort_by_key(|&(key, i, _)| (key, i));
    assert!(desc.valid(), "stages and containment alone are acyclic");
    for (_, _, feature) in keyed {
        let mut next = desc.clone();
        next.apply(feature);
        if next.valid() {
            desc = next;
        }
    }
    desc
}

fn world_desc() -> impl Strategy<Value = Desc> {
    raw_world(5..=40).prop_map(|raw| build(&raw))
}

// ---------------------------------------------------------------------------
// Running a world.

/// What the systems of one world share to check themselves at run time.
struct Probe {
    /// Per system: how many times it has finished.
    runs: Vec<AtomicU64>,
    in_flight: AtomicUsize,
    exclusive_running: AtomicBool,
    /// Per system: what it observed, run after run.
    observations: Vec<Mutex<Vec<u64>>>,
    violations: Mutex<Vec<String>>,
}

/// Everything a run leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    logs: Vec<Vec<u64>>,
    observations: Vec<Vec<u64>>,
    runs: Vec<u64>,
}

/// One system's body: who it is, what it touches, what must finish first.
#[derive(Debug, Clone)]
struct Body {
    me: usize,
    /// Reads and gates, ascending.
    touches: Vec<usize>,
    gates: Vec<usize>,
    exclusive: bool,
    /// Every system of its cadence the rules put before it.
    predecessors: Vec<usize>,
}

fn mix(h: u64, v: u64) -> u64 {
    let h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

/// What a system records: itself and the length and last entry of each log
/// it touches, so that any reordering of conflicting systems shows.
fn observation(me: usize, seen: impl Iterator<Item = (usize, u64, u64)>) -> u64 {
    let mut h = mix(0x5EED, me as u64);
    for (service, len, last) in seen {
        h = mix(mix(mix(h, service as u64), len), last);
    }
    h
}

fn peek<const N: usize>(cx: &Context<'_>) -> (u64, u64) {
    let log = &cx.read::<S<N>>().0;
    (log.len() as u64, log.last().copied().unwrap_or(0))
}

fn push<const N: usize>(cx: &mut Context<'_>, value: u64) {
    cx.write::<S<N>>().0.push(value);
}

fn declare_read<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.reads::<S<N>>()
}

fn declare_gate<const N: usize>(node: NodeBuilder) -> NodeBuilder {
    node.gates::<S<N>>()
}

fn insert<const N: usize>(world: &mut World) {
    world.insert(S::<N>(Vec::new()));
}

fn log_of<const N: usize>(world: &World) -> Vec<u64> {
    world
        .get::<S<N>>()
        .expect("every service is inserted")
        .0
        .clone()
}

fn run_body(cx: &mut Context<'_>, body: &Body, probe: &Probe) {
    let violation = |what: String| {
        probe
            .violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(what);
    };
    let me = body.me;
    let others = probe.in_flight.fetch_add(1, Ordering::SeqCst);
    if body.exclusive {
        if others != 0 {
            violation(format!("exclusive s{me} started beside {others} others"));
        }
        probe.exclusive_running.store(true, Ordering::SeqCst);
    } else if probe.exclusive_running.load(Ordering::SeqCst) {
        violation(format!("s{me} started while an exclusive system ran"));
    }
    let runs = probe.runs[me].load(Ordering::SeqCst);
    for &p in &body.predecessors {
        let finished = probe.runs[p].load(Ordering::SeqCst);
        if finished != runs + 1 {
            violation(format!(
                "s{me} (run {}) must follow s{p}, which has finished {finished} runs",
                runs + 1
            ));
        }
    }
    let h = observation(
        me,
        body.touches.iter().map(|&s| {
            let (len, last) = by_index!(s, peek(cx));
            (s, len, last)
        }),
    );
    for &g in &body.gates {
        by_index!(g, push(cx, h));
    }
    probe.observations[me]
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(h);
    if body.exclusive {
        std::thread::yield_now();
        let now = probe.in_flight.load(Ordering::SeqCst);
        if now != 1 {
            violation(format!("exclusive s{me} ran beside {} others", now - 1));
        }
        probe.exclusive_running.store(false, Ordering::SeqCst);
    }
    probe.runs[me].fetch_add(1, Ordering::SeqCst);
    probe.in_flight.fetch_sub(1, Ordering::SeqCst);
}

fn bodies(desc: &Desc) -> Vec<Body> {
    let rules = [desc.rules(false, false), desc.rules(true, false)];
    desc.systems
        .iter()
        .enumerate()
        .map(|(me, sys)| {
            let mut touches: Vec<usize> = sys.reads.iter().chain(&sys.gates).copied().collect();
            touches.sort_unstable();
            let cadence = &rules[usize::from(sys.fixed)];
            Body {
                me,
                touches,
                gates: sys.gates.clone(),
                exclusive: sys.exclusive,
                predecessors: desc
                    .members(sys.fixed)
                    .into_iter()
                    .filter(|&p| cadence.precedes(p, me))
                    .collect(),
            }
        })
        .collect()
}

/// The world of `desc`, and its probe.
fn make_world(desc: &Desc, pool: &ThreadPool, executor: ExecutorKind) -> (World, Arc<Probe>) {
    let mut world = World::with_pool(pool.clone());
    world.set_executor(executor);
    world.set_fixed_timestep(STEP);
    for s in 0..SERVICES {
        by_index!(s, insert(&mut world));
    }
    let n = desc.systems.len();
    let probe = Arc::new(Probe {
        runs: (0..n).map(|_| AtomicU64::new(0)).collect(),
        in_flight: AtomicUsize::new(0),
        exclusive_running: AtomicBool::new(false),
        observations: (0..n).map(|_| Mutex::default()).collect(),
        violations: Mutex::default(),
    });
    for (k, &number) in desc.stages.iter().enumerate() {
        world.add_stage(format!("st{k}"), number);
    }
    for (k, &number) in desc.sets.iter().enumerate() {
        world.add_set(format!("set{k}"), number);
    }
    let add_groups = |world: &mut World, slot: usize| {
        for (g, grp) in desc.groups.iter().enumerate() {
            if grp.slot != slot {
                continue;
            }
            let mut group = Group::new(group_name(g));
            if let Some(p) = grp.parent {
                group = group.in_group(group_name(p));
            }
            group = match grp.sibling {
                None => group,
                Some(Sibling::First) => group.order_first(),
                Some(Sibling::Last) => group.order_last(),
            };
            for &t in &grp.after {
                group = group.after(target_name(t));
            }
            for &t in &grp.before {
                group = group.before(target_name(t));
            }
            world.add_group(group);
        }
    };
    for (body, sys) in bodies(desc).into_iter().zip(&desc.systems) {
        add_groups(&mut world, body.me);
        let mut node = NodeBuilder::new(system_name(body.me));
        for &r in &sys.reads {
            node = by_index!(r, declare_read(node));
        }
        for &g in &sys.gates {
            node = by_index!(g, declare_gate(node));
        }
        if sys.exclusive {
            node = node.exclusive();
        }
        for &t in &sys.after {
            node = node.after(target_name(t));
        }
        for &t in &sys.before {
            node = node.before(target_name(t));
        }
        if let Some(g) = sys.group {
            node = node.in_group(group_name(g));
        }
        node = match sys.sibling {
            None => node,
            Some(Sibling::First) => node.order_first(),
            Some(Sibling::Last) => node.order_last(),
        };
        if let Some(phase) = sys.phase {
            node = node.phase(phase);
        }
        if let Some(k) = sys.stage {
            node = node.in_stage(format!("st{k}"));
        }
        if let Some(k) = sys.set {
            node = node.in_set(format!("set{k}"));
        }
        if sys.fixed {
            node = node.cadence(Cadence::Fixed);
        }
        if let Some(order) = sys.order {
            node = node.order(order);
        }
        let probe = Arc::clone(&probe);
        world.add_system(node.run(move |cx| run_body(cx, &body, &probe)));
    }
    add_groups(&mut world, n);
    (world, probe)
}

/// Runs the four updates; the outcome, or what went wrong.
fn run_world(desc: &Desc, pool: &ThreadPool, executor: ExecutorKind) -> Result<Outcome, String> {
    let (mut world, probe) = make_world(desc, pool, executor);
    let context = || format!("{executor:?} on {} threads", pool.num_threads());
    for delta in DELTAS_MS {
        world
            .update(Duration::from_millis(delta))
            .map_err(|e| format!("{}: update failed: {e}", context()))?;
    }
    let violations = probe
        .violations
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if !violations.is_empty() {
        return Err(format!("{}: {violations:#?}", context()));
    }
    Ok(Outcome {
        logs: (0..SERVICES)
            .map(|s| by_index!(s, log_of(&world)))
            .collect(),
        observations: probe
            .observations
            .iter()
            .map(|o| o.lock().unwrap_or_else(PoisonError::into_inner).clone())
            .collect(),
        runs: probe
            .runs
            .iter()
            .map(|r| r.load(Ordering::SeqCst))
            .collect(),
    })
}

/// The outcome of running the systems one at a time: per update, the fixed
/// order once per step, then the variable order.
fn simulate(desc: &Desc, fixed: &[usize], variable: &[usize]) -> Outcome {
    let bodies = bodies(desc);
    let n = desc.systems.len();
    let mut outcome = Outcome {
        logs: vec![Vec::new(); SERVICES],
        observations: vec![Vec::new(); n],
        runs: vec![0; n],
    };
    let mut run = |order: &[usize]| {
        for &s in order {
            let body = &bodies[s];
            let h = observation(
                s,
                body.touches.iter().map(|&t| {
                    let log = &outcome.logs[t];
                    (t, log.len() as u64, log.last().copied().unwrap_or(0))
                }),
            );
            for &g in &body.gates {
                outcome.logs[g].push(h);
            }
            outcome.observations[s].push(h);
            outcome.runs[s] += 1;
        }
    };
    for steps in FIXED_STEPS {
        for _ in 0..steps {
            run(fixed);
        }
        run(variable);
    }
    outcome
}

/// Pools of 1 and 3 threads, shared by every case.
fn pools() -> &'static [ThreadPool; 2] {
    static POOLS: OnceLock<[ThreadPool; 2]> = OnceLock::new();
    POOLS.get_or_init(|| [1, 3].map(|t| ThreadPool::new(t).expect("the pool's threads start")))
}

fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        // `PROPTEST_CASES` for a longer run.
        cases: if cfg!(miri) {
            2
        } else if std::env::var_os("PROPTEST_CASES").is_some() {
            default.cases
        } else {
            64
        },
        max_shrink_iters: 4096,
        failure_persistence: if cfg!(miri) {
            None
        } else {
            default.failure_persistence.clone()
        },
        ..default
    }
}

// ---------------------------------------------------------------------------
// Checking a plan against the rules.

impl Desc {
    /// The world with the runtime's two nodes as systems 0 and 1, as the
    /// runtime registers them first: `sluice::execution` follows
    /// `sluice::plan` (it consumes what that produces). They declare no
    /// organisation and the spec knows nothing of them, so none applies to
    /// them: no phase, no sibling order. They take part in the stage rule
    /// only through conflicts (an exclusive system conflicts with every node).
    fn with_builtins(&self) -> Desc {
        let shift = |ts: &[Target]| -> Vec<Target> {
            ts.iter()
                .map(|&t| match t {
                    Target::System(s) => Target::System(s + 2),
                    group => group,
                })
                .collect()
        };
        let builtin = |after: Vec<Target>| Sys {
            reads: Vec::new(),
            gates: Vec::new(),
            exclusive: false,
            fixed: false,
            group: None,
            sibling: None,
            phase: None,
            stage: None,
            set: None,
            order: None,
            after,
            before: Vec::new(),
            builtin: true,
        };
        let mut systems = vec![builtin(Vec::new()), builtin(vec![Target::System(0)])];
        systems.extend(self.systems.iter().map(|sys| Sys {
            after: shift(&sys.after),
            before: shift(&sys.before),
            ..sys.clone()
        }));
        Desc {
            systems,
            groups: self
                .groups
                .iter()
                .map(|grp| Grp {
                    after: shift(&grp.after),
                    before: shift(&grp.before),
                    slot: grp.slot + 2,
                    ..grp.clone()
                })
                .collect(),
            stages: self.stages.clone(),
            sets: self.sets.clone(),
        }
    }

    /// The spec's stage view, as `sluice plan` prints it.
    fn spec_stage_text(&self) -> String {
        let mut text = String::new();
        for fixed in [true, false] {
            let rules = self.rules(fixed, false);
            let order = self.plan_order(fixed, &rules);
            let stage = self.spec_stages(&order, &rules);
            let count = order.iter().map(|&s| stage[s] + 1).max().unwrap_or(0);
            for k in 0..count {
                let names: Vec<String> = order
                    .iter()
                    .filter(|&&s| stage[s] == k)
                    .map(|&s| system_name(s))
                    .collect();
                let prefix = if fixed { "fixed " } else { "" };
                text.push_str(&format!("{prefix}stage {k}: {}\n", names.join(" ")));
            }
        }
        text
    }
}

/// A node of a plan as a system of `Desc::with_builtins`.
fn model_index(name: &str) -> Option<usize> {
    if let Some(k) = BUILTIN.iter().position(|&b| b == name) {
        return Some(k);
    }
    let s: usize = name.strip_prefix('s')?.parse().ok()?;
    Some(s + BUILTIN.len())
}

/// The name of a system of `Desc::with_builtins`.
fn model_name(s: usize) -> String {
    match s.checked_sub(BUILTIN.len()) {
        None => BUILTIN[s].to_owned(),
        Some(s) => system_name(s),
    }
}

/// Checks both cadences' plans of the world of `desc` against the rules;
/// each cadence's plan order as system numbers.
fn check_plans(desc: &Desc, world: &mut World) -> Result<[Vec<usize>; 2], String> {
    // The model agrees with the reference `sluice plan` (which knows no
    // `order(n)`).
    let text = desc.plan_text();
    match reference::plan(&text) {
        reference::Outcome::Planned { stages, .. } => {
            let mut plain = desc.clone();
            for sys in &mut plain.systems {
                sys.order = None;
            }
            let ours = plain.spec_stage_text();
            if stages != ours {
                return Err(format!(
                    "the reference `sluice plan` prints\n{stages}this file's model\n{ours}"
                ));
            }
        }
        errors => return Err(format!("the reference rejects the world: {errors:?}")),
    }
    let model = desc.with_builtins();
    let plans = world.plans().map_err(|e| format!("planning failed: {e}"))?;
    let mut orders = [Vec::new(), Vec::new()];
    for (c, fixed) in [true, false].into_iter().enumerate() {
        let plan = if fixed {
            plans.fixed()
        } else {
            plans.variable()
        };
        let cadence = if fixed { "fixed" } else { "variable" };
        let names: Vec<&str> = plan.order().map(|i| plan.node_name(i)).collect();
        let mut order = Vec::new();
        for name in &names {
            let s = model_index(name)
                .filter(|&s| s < model.systems.len())
                .ok_or_else(|| format!("unexpected node `{name}` in the {cadence} plan"))?;
            order.push(s);
        }
        let rules = model.rules(fixed, false);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        if sorted != model.members(fixed) {
            return Err(format!(
                "the {cadence} plan runs {names:?}, not its systems {:?}",
                model.members(fixed)
            ));
        }
        let mut position = vec![usize::MAX; model.systems.len()];
        for (p, &s) in order.iter().enumerate() {
            position[s] = p;
        }
        for &x in &order {
            for &y in &order {
                if rules.precedes(x, y) && position[x] > position[y] {
                    return Err(format!(
                        "the rules put {} before {}, the {cadence} plan order is {names:?}",
                        model_name(x),
                        model_name(y)
                    ));
                }
            }
        }
        // Exactly the spec's order without tie-breaks; with them, lower
        // `order(n)` first among the ready systems.
        let expected = model.plan_order(fixed, &rules);
        if order != expected {
            let expected: Vec<String> = expected.iter().map(|&s| model_name(s)).collect();
            return Err(format!(
                "{cadence} plan order {names:?}, the rules give {expected:?}"
            ));
        }
        // The stage rule, over the plan's own order.
        let expected = model.spec_stages(&order, &rules);
        let count = order.iter().map(|&s| expected[s] + 1).max().unwrap_or(0);
        let wanted: Vec<Vec<String>> = (0..count)
            .map(|k| {
                order
                    .iter()
                    .filter(|&&s| expected[s] == k)
                    .map(|&s| model_name(s))
                    .collect()
            })
            .collect();
        let listed: Vec<Vec<String>> = plan
            .stages()
            .map(|stage| {
                stage
                    .iter()
                    .map(|&i| plan.node_name(i).to_owned())
                    .collect()
            })
            .collect();
        let each_agrees = plan
            .order()
            .zip(&order)
            .all(|(i, &s)| plan.stage_of(i) == expected[s]);
        if listed != wanted || !each_agrees {
            return Err(format!(
                "{cadence}: stages {listed:?}, the spec's stage rule gives {wanted:?}"
            ));
        }
        orders[c] = order
            .into_iter()
            .filter_map(|s| s.checked_sub(BUILTIN.len()))
            .collect();
    }
    Ok(orders)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn organised_worlds_plan_by_the_rules_and_run_alike(desc in world_desc()) {
        let text = desc.plan_text();
        let (mut world, _) = make_world(&desc, &pools()[0], ExecutorKind::Serial);
        let [fixed, variable] = match check_plans(&desc, &mut world) {
            Ok(orders) => orders,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\nworld:\n{text}"))),
        };
        drop(world);
        let expected = simulate(&desc, &fixed, &variable);
        let total: u64 = FIXED_STEPS.iter().map(|&s| s as u64).sum();
        for (s, sys) in desc.systems.iter().enumerate() {
            let runs = if sys.fixed { total } else { DELTAS_MS.len() as u64 };
            prop_assert_eq!(expected.runs[s], runs);
        }
        for pool in pools() {
            for executor in [ExecutorKind::Serial, ExecutorKind::Parallel, ExecutorKind::Adaptive] {
                let outcome = match run_world(&desc, pool, executor) {
                    Ok(outcome) => outcome,
                    Err(e) => return Err(TestCaseError::fail(format!("{e}\nworld:\n{text}"))),
                };
                prop_assert!(
                    outcome == expected,
                    "{:?} on {} threads differs from running the plan order serially\n{:?}\n{:?}\nworld:\n{}",
                    executor,
                    pool.num_threads(),
                    outcome,
                    expected,
                    text
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Contradictions.

/// What the added ordering contradicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// An order between groups (or a group and a system).
    Group,
    /// `order_first` / `order_last` among siblings.
    FirstLast,
    Stage,
    Set,
    Phase,
    /// Not a contradiction: an ordering between the cadences (SL0003).
    Cadence,
}

const KINDS: [Kind; 6] = [
    Kind::Group,
    Kind::FirstLast,
    Kind::Stage,
    Kind::Set,
    Kind::Phase,
    Kind::Cadence,
];

impl Desc {
    /// Pairs `(a, b)` of systems where the mechanism `kind` alone puts `a`
    /// before `b` (or, for `Cadence`, of different cadences).
    fn candidates(&self, kind: Kind) -> Vec<(usize, usize)> {
        let n = self.systems.len();
        let stage = levels(&self.stages, |s| self.systems[s].stage, n);
        let set = levels(&self.sets, |s| self.systems[s].set, n);
        let phases = self.uses_phases();
        // Direct orders with a group at one end at least.
        let mut group_orders = Vec::new();
        for (g, grp) in self.groups.iter().enumerate() {
            for &t in &grp.after {
                group_orders.push((t, Target::Group(g)));
            }
            for &t in &grp.before {
                group_orders.push((Target::Group(g), t));
            }
        }
        for (s, sys) in self.systems.iter().enumerate() {
            for &t in sys.after.iter().filter(|t| matches!(t, Target::Group(_))) {
                group_orders.push((t, Target::System(s)));
            }
            for &t in sys.before.iter().filter(|t| matches!(t, Target::Group(_))) {
                group_orders.push((Target::System(s), t));
            }
        }
        let parent = |t: Target| match t {
            Target::System(s) => self.systems[s].group,
            Target::Group(g) => self.groups[g].parent,
        };
        let sibling = |t: Target| match t {
            Target::System(s) => self.systems[s].sibling,
            Target::Group(g) => self.groups[g].sibling,
        };
        let items: Vec<Target> = (0..n)
            .map(Target::System)
            .chain((0..self.groups.len()).map(Target::Group))
            .collect();
        let mut pairs = Vec::new();
        for a in 0..n {
            for b in 0..n {
                let (x, y) = (&self.systems[a], &self.systems[b]);
                if a == b {
                    continue;
                }
                if kind == Kind::Cadence {
                    if x.fixed && !y.fixed {
                        pairs.push((a, b));
                    }
                    continue;
                }
                if x.fixed != y.fixed {
                    continue;
                }
                let (ta, tb) = (Target::System(a), Target::System(b));
                let yes = match kind {
                    Kind::Group => group_orders
                        .iter()
                        .any(|&(p, q)| self.inside(ta, p) && self.inside(tb, q)),
                    Kind::FirstLast => items.iter().any(|&p| {
                        items.iter().any(|&q| {
                            p != q
                                && parent(p) == parent(q)
                                && sibling(p) != sibling(q)
                                && (sibling(p) == Some(Sibling::First)
                                    || sibling(q) == Some(Sibling::Last))
                                && self.inside(ta, p)
                                && self.inside(tb, q)
                        })
                    }),
                    Kind::Stage => matches!((stage[a], stage[b]), (Some(p), Some(q)) if p < q),
                    Kind::Set => matches!((set[a], set[b]), (Some(p), Some(q)) if p < q),
                    Kind::Phase => phases && phase_rank(x.phase) < phase_rank(y.phase),
                    Kind::Cadence => unreachable!(),
                };
                if yes {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }
}

/// A valid world, and one ordering `a.after(b)` (or `b.before(a)`) where
/// `kind` puts `a` before `b`.
#[derive(Debug, Clone)]
struct Contradiction {
    desc: Desc,
    kind: Kind,
    a: usize,
    b: usize,
    as_before: bool,
}

fn contradiction() -> impl Strategy<Value = Option<Contradiction>> {
    (
        raw_world(6..=30),
        any::<Index>(),
        any::<Index>(),
        any::<bool>(),
    )
        .prop_map(|(raw, kind, pair, as_before)| {
            let desc = build(&raw);
            let kinds: Vec<(Kind, Vec<(usize, usize)>)> = KINDS
                .iter()
                .map(|&k| (k, desc.candidates(k)))
                .filter(|(_, pairs)| !pairs.is_empty())
                .collect();
            if kinds.is_empty() {
                return None;
            }
            let (kind, pairs) = &kinds[kind.index(kinds.len())];
            let (a, b) = pairs[pair.index(pairs.len())];
            Some(Contradiction {
                desc,
                kind: *kind,
                a,
                b,
                as_before,
            })
        })
}

impl Contradiction {
    fn world(&self) -> Desc {
        let mut desc = self.desc.clone();
        if self.as_before {
            desc.systems[self.b].before.push(Target::System(self.a));
        } else {
            desc.systems[self.a].after.push(Target::System(self.b));
        }
        desc
    }

    /// The codes expected: SL0003 across cadences; else SL0007, or either
    /// cycle code when `after`/`before` between systems alone also put `a`
    /// before `b` (then the cycle's component holds a cycle of columns too).
    fn expected(&self) -> &'static str {
        if self.kind == Kind::Cadence {
            return "SL0003";
        }
        let fixed = self.desc.systems[self.a].fixed;
        assert!(self.desc.rules(fixed, false).precedes(self.a, self.b));
        if self.desc.rules(fixed, true).precedes(self.a, self.b) {
            reference::EITHER_CYCLE
        } else {
            "SL0007"
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn contradictions_are_reported_naming_both_systems(case in contradiction()) {
        let Some(case) = case else { return Ok(()) };
        let desc = case.world();
        let text = desc.plan_text();
        let expected = case.expected();
        let (a, b) = (system_name(case.a), system_name(case.b));
        // The reference agrees with this file's construction.
        prop_assert_eq!(
            reference::plan(&text),
            reference::Outcome::Errors([expected].into_iter().collect()),
            "the reference on\n{}", text
        );
        let (mut world, _) = make_world(&desc, &pools()[0], ExecutorKind::Serial);
        let errors = match world.plan() {
            Err(IterationError::Plan(errors)) => errors,
            Err(other) => {
                return Err(TestCaseError::fail(format!("{other}\nworld:\n{text}")));
            }
            Ok(_) => {
                return Err(TestCaseError::fail(format!(
                    "planned, expected {expected} for {:?} between {a} and {b}\nworld:\n{text}",
                    case.kind
                )));
            }
        };
        let found: Vec<_> = errors.errors().collect();
        let allowed = |code: &str| match expected {
            reference::EITHER_CYCLE => code == "SL0001" || code == "SL0007",
            _ => code == expected,
        };
        prop_assert!(
            !found.is_empty() && found.iter().all(|d| allowed(d.code)),
            "expected only {} ({:?}: {} after {}), got\n{}\nworld:\n{}",
            expected, case.kind, a, b, errors, text
        );
        prop_assert!(
            found.iter().any(|d| d.nodes.contains(&a) && d.nodes.contains(&b)),
            "no error names both {} and {}:\n{:#?}\nworld:\n{}",
            a, b, found, text
        );
    }
}

/// The generators reach what they aim at: valid worlds keep nested groups,
/// first/last, group orders, phases, stages, sets, tie-breaks and both
/// cadences, and every kind of contradiction is drawn.
#[test]
#[cfg_attr(miri, ignore)]
fn the_generators_reach_every_feature() {
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    let mut count =
        |what: &'static str, yes: bool| *seen.entry(what).or_default() += usize::from(yes);
    let worlds = world_desc();
    for _ in 0..200 {
        let desc = worlds.new_tree(&mut runner).expect("a world").current();
        count(
            "nested group",
            desc.groups.iter().any(|g| g.parent.is_some()),
        );
        count(
            "group first/last",
            desc.groups.iter().any(|g| g.sibling.is_some()),
        );
        count(
            "system first/last",
            desc.systems.iter().any(|s| s.sibling.is_some()),
        );
        count(
            "group after/before",
            desc.groups
                .iter()
                .any(|g| !g.after.is_empty() || !g.before.is_empty()),
        );
        count(
            "system after/before a group",
            desc.systems.iter().any(|s| {
                s.after
                    .iter()
                    .chain(&s.before)
                    .any(|t| matches!(t, Target::Group(_)))
            }),
        );
        count("phases", desc.uses_phases());
        count("stages", !desc.stages.is_empty());
        count("sets", desc.systems.iter().any(|s| s.set.is_some()));
        count("orders", desc.uses_orders());
        count("no orders", !desc.uses_orders());
        count(
            "both cadences",
            desc.has_fixed() && desc.members(false).len() > 1,
        );
    }
    for (what, &hits) in &seen {
        assert!(
            hits >= 20,
            "only {hits} of 200 worlds have {what}: {seen:?}"
        );
    }
    let cases = contradiction();
    let mut kinds = std::collections::BTreeMap::<Kind, usize>::new();
    for _ in 0..300 {
        if let Some(case) = cases.new_tree(&mut runner).expect("a case").current() {
            *kinds.entry(case.kind).or_default() += 1;
        }
    }
    for kind in KINDS {
        assert!(
            kinds.get(&kind).copied().unwrap_or(0) >= 10,
            "{kind:?} drawn too rarely: {kinds:?}"
        );
    }
}

/// The world's own nodes are no systems of the spec: a world the spec
/// accepts plans, and its stage view is the spec's. (A world of one system in
/// `PreUpdate` that is `order_last` at the top level is valid: it has no
/// sibling to follow and no system of a later phase to precede.)
#[test]
fn the_worlds_own_nodes_take_no_part_in_the_organisation() {
    type Organise = fn(NodeBuilder) -> NodeBuilder;
    let cases: [(&str, Organise); 4] = [
        ("phase=pre order=last", |a| {
            a.phase(Phase::PreUpdate).order_last()
        }),
        ("phase=post order=first", |a| {
            a.phase(Phase::PostUpdate).order_first()
        }),
        ("phase=post", |a| a.phase(Phase::PostUpdate)),
        ("order=last", |a| a.order_last()),
    ];
    for (attributes, organise) in cases {
        let text = format!("SYSTEM a - - - {attributes}\n");
        assert_eq!(
            reference::plan(&text),
            reference::Outcome::Planned {
                stages: "stage 0: a\n".to_owned(),
                tree: "a 0\n".to_owned(),
            },
            "the spec on {text}"
        );
        let mut world = World::new();
        let a = world.add_system(organise(NodeBuilder::new("a")).run(|_| {}));
        let plans = match world.plans() {
            Ok(plans) => plans,
            Err(e) => panic!("{attributes}: {e}"),
        };
        assert_eq!(
            plans.variable().stage_of(a),
            0,
            "{attributes}: the stage of a"
        );
    }
}
