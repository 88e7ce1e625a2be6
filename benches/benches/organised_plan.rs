//! `organised_plan`: building the plans of an organised world (issue 9),
//! beside today's flat build of the same nodes and bevy_ecs 0.20 building the
//! same structure; and whether the organisation's barrier vertices cost
//! anything per frame.
//!
//! The nodes and their accesses are `plan_build`'s (`plan_workload::systems`,
//! same seed: 1 to 4 of 64 resources, one access in four mutable, one node in
//! four after a random earlier one). The organised world spreads them over
//! 50 nested groups (5 top-level groups, each a tree of 10: a root with three
//! children, two of which have three children of their own), with
//! `order_first`/`order_last` groups and nodes among siblings and
//! `after`/`before` between groups (siblings, top-level groups, and across
//! trees); 3 phases (the first tree `PreUpdate`, the last `PostUpdate`, the
//! rest `Update`, half of them by default); 4 stages; one node in ten on the
//! fixed cadence. Nodes are laid out in registration order along one linear
//! extension of all those constraints, so every `after` of the workload stays
//! satisfiable; an `after` between the two cadences (an SL0003 error) is
//! dropped, in the organised world only.
//!
//! - `organised_plan_build/sluice_flat`: a fresh `Graph`, the N nodes with
//!   their accesses and `after`s and nothing else, `build_all`
//!   (`AmbiguityLevel::Ignore`): `plan_build`'s build, with the empty fixed
//!   plan `build_all` always makes.
//! - `organised_plan_build/sluice_organised`: the same plus groups, stages,
//!   phases, sibling orders and cadences, `build_all` (both cadences'
//!   plans), `AmbiguityLevel::Ignore`.
//! - `..._warn`: both again at the default `AmbiguityLevel::Warn` (what a
//!   world builds with now), which adds the SL0008 pass and its warnings.
//! - `organised_plan_build/bevy_organised`: bevy_ecs 0.20, the same systems
//!   (`FilteredResourcesMut` with the same reads and writes, as in
//!   `plan_build`) with one `SystemSet` value per group, per phase, per
//!   stage, per parent with `order_first`/`order_last` children, and per
//!   `after` target; `configure_sets` with `.in_set(parent)` for nesting,
//!   `.before`/`.after` for group order and sibling order, `.chain()` for
//!   phases and stages; the fixed nodes in a second `Schedule` labelled
//!   `FixedUpdate` (bevy_ecs alone has no `FixedUpdate`; a label of that
//!   name stands for bevy_app's), both schedules configured alike; then
//!   `initialize` on both. The world with its 64 resources is made outside
//!   the timing, as in `plan_build`. At 10,000 systems one build takes
//!   minutes, so criterion does not run it: `ORGANISED_BEVY_10K=n` times `n`
//!   single builds and prints them.
//!
//! `organised_frame`: one `World::run_iteration` of 1,000 empty systems with
//! `empty_systems`' accesses (16 services, 1 to 3 each), flat or organised
//! with the groups, sibling orders and phases above (one cadence, no
//! stages), on the serial and the adaptive executor. After criterion's
//! figures, a summary measures flat and organised again, interleaved in
//! rounds, on those two and on the pinned pool (`--summary-only` runs it
//! alone).
//!
//! `organised_plan_parts` (run it by name) builds the organised world with
//! one feature at a time, to see what each costs.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bevy_ecs::prelude::{IntoScheduleConfigs, Schedule, SystemSet, World as BevyWorld};
use bevy_ecs::schedule::{Chain, GraphInfo, Schedulable, ScheduleConfigs, ScheduleLabel};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group};
use sluice::exec::ThreadPool;
use sluice::{
    AmbiguityLevel, Cadence, ExecutorKind, Graph, Group, NodeBuilder, Phase, PlanOptions, Plans,
    SiblingOrder, World,
};
use sluice_benches::plan_workload::{SystemSpec, systems, systems_with};
use sluice_benches::services::{
    SERVICES, bevy_system, insert_sluice, register_bevy, with_accesses,
};

/// `plan_build`'s seed: the same nodes and accesses.
const SEED: u64 = 0x5EED_5A1C;
/// `empty_systems`' workload for the frame.
const FRAME_SERVICES: usize = 16;
const FRAME_SEED: u64 = 0x5EED_E4E7;

const TOPS: usize = 5;
const PER_TOP: usize = 10;
const GROUPS: usize = TOPS * PER_TOP;
const STAGES: [&str; 4] = ["Early", "Main", "Late", "Final"];
const PHASES: [Phase; 3] = [Phase::PreUpdate, Phase::Update, Phase::PostUpdate];

/// Within a tree, group `j`'s parent is `(j - 1) / 3`: 0 has children 1, 2,
/// 3; 1 has 4, 5, 6; 2 has 7, 8, 9. The order in which the trees' groups
/// hold their own nodes, along the linear extension: a group's
/// `order_first` children, its own nodes, its other children, its
/// `order_last` children.
const SLOT_GROUPS: [usize; PER_TOP] = [1, 4, 5, 6, 0, 7, 2, 8, 9, 3];

/// What the organised world uses (all of it, or one feature for the parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Features {
    groups: bool,
    phases: bool,
    stages: bool,
    fixed: bool,
}

impl Features {
    const ALL: Features = Features {
        groups: true,
        phases: true,
        stages: true,
        fixed: true,
    };
    const NONE: Features = Features {
        groups: false,
        phases: false,
        stages: false,
        fixed: false,
    };
    /// The frame's organisation: one cadence, no stages.
    const FRAME: Features = Features {
        groups: true,
        phases: true,
        stages: false,
        fixed: false,
    };
}

/// One group of the layout.
#[derive(Debug, Clone)]
struct GroupSpec {
    name: &'static str,
    parent: Option<usize>,
    sibling: Option<SiblingOrder>,
    after: Vec<usize>,
    before: Vec<usize>,
}

/// Where one node sits.
#[derive(Debug, Clone)]
struct Place {
    group: Option<usize>,
    sibling: Option<SiblingOrder>,
    /// The phase it names (`None`: the default, `Update`, once phases exist).
    phase: Option<Phase>,
    stage: Option<usize>,
    cadence: Cadence,
    /// The workload's `after`, unless it crosses the cadences.
    after: Option<usize>,
}

/// The organised world: groups and each node's place.
#[derive(Debug, Clone)]
struct Layout {
    features: Features,
    groups: Vec<GroupSpec>,
    places: Vec<Place>,
    /// Per parent (`GROUPS`: the top level): whether a child is
    /// `order_first`, `order_last`.
    has_first: Vec<bool>,
    has_last: Vec<bool>,
    /// Whether some node runs after node `i` (bevy gives it a set).
    targeted: Vec<bool>,
}

fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

fn groups() -> Vec<GroupSpec> {
    let mut groups = Vec::with_capacity(GROUPS);
    for t in 0..TOPS {
        for j in 0..PER_TOP {
            let parent = (j > 0).then(|| t * PER_TOP + (j - 1) / 3);
            let sibling = match (t, j) {
                (0, 0) | (_, 1) | (_, 7) => Some(SiblingOrder::First),
                (4, 0) | (_, 3) | (_, 6) => Some(SiblingOrder::Last),
                _ => None,
            };
            let mut after = Vec::new();
            let mut before = Vec::new();
            match j {
                // Top-level order (redundant with the phases, as in a game).
                0 if t == 1 => after.push(0),
                0 if t == 3 => before.push(4 * PER_TOP),
                // Siblings.
                5 => after.push(t * PER_TOP + 4),
                8 => before.push(t * PER_TOP + 9),
                // Across trees.
                4 if t > 0 => after.push((t - 1) * PER_TOP + 7),
                _ => {}
            }
            groups.push(GroupSpec {
                name: leak(format!("G{t}_{j}")),
                parent,
                sibling,
                after,
                before,
            });
        }
    }
    groups
}

impl Layout {
    fn new(specs: &[SystemSpec], features: Features) -> Self {
        let n = specs.len();
        let groups = if features.groups {
            groups()
        } else {
            Vec::new()
        };
        let slot_of = |i: usize| i * GROUPS / n;
        let mut places: Vec<Place> = (0..n)
            .map(|i| {
                let slot = slot_of(i);
                let top = slot / PER_TOP;
                let group = top * PER_TOP + SLOT_GROUPS[slot % PER_TOP];
                let phase = match top {
                    0 => Some(Phase::PreUpdate),
                    4 => Some(Phase::PostUpdate),
                    _ => (i % 2 == 0).then_some(Phase::Update),
                };
                let cadence = if features.fixed && i % 10 == 7 {
                    Cadence::Fixed
                } else {
                    Cadence::Variable
                };
                Place {
                    group: features.groups.then_some(group),
                    sibling: None,
                    phase: if features.phases { phase } else { None },
                    stage: features.stages.then(|| slot * STAGES.len() / GROUPS),
                    cadence,
                    after: None,
                }
            })
            .collect();
        for i in 0..n {
            places[i].after = specs[i]
                .after
                .filter(|&a| places[a].cadence == places[i].cadence);
        }
        if features.groups {
            // Some nodes first or last among their siblings: the first node of
            // every third slot (it has no earlier sibling node), the last node
            // of every third leaf group's slot (no later one, and no child).
            for slot in 0..GROUPS {
                let start = (slot * n).div_ceil(GROUPS);
                let end = ((slot + 1) * n).div_ceil(GROUPS);
                if start >= end {
                    continue;
                }
                let leaf = SLOT_GROUPS[slot % PER_TOP] >= 3;
                if slot % 3 == 0 {
                    places[start].sibling = Some(SiblingOrder::First);
                } else if slot % 3 == 1 && leaf && end - 1 > start {
                    places[end - 1].sibling = Some(SiblingOrder::Last);
                }
            }
        }
        let mut has_first = vec![false; GROUPS + 1];
        let mut has_last = vec![false; GROUPS + 1];
        let items = groups
            .iter()
            .map(|g| (g.parent, g.sibling))
            .chain(places.iter().map(|p| (p.group, p.sibling)));
        for (parent, sibling) in items {
            let parent = parent.unwrap_or(GROUPS);
            match sibling {
                Some(SiblingOrder::First) => has_first[parent] = true,
                Some(SiblingOrder::Last) => has_last[parent] = true,
                None => {}
            }
        }
        let mut targeted = vec![false; n];
        for place in &places {
            if let Some(a) = place.after {
                targeted[a] = true;
            }
        }
        Self {
            features,
            groups,
            places,
            has_first,
            has_last,
            targeted,
        }
    }
}

/// Node names as `&'static str`, as function names would be.
fn names(count: usize) -> Vec<&'static str> {
    (0..count).map(|i| leak(format!("system_{i}"))).collect()
}

fn options(ambiguity: AmbiguityLevel) -> PlanOptions {
    PlanOptions {
        ambiguity,
        ..PlanOptions::default()
    }
}

/// Today's flat build: the nodes, their accesses and `after`s.
fn sluice_flat(specs: &[SystemSpec], names: &[&'static str], options: &PlanOptions) -> Plans {
    let mut graph = Graph::new();
    for (spec, &name) in specs.iter().zip(names) {
        let mut node = with_accesses(NodeBuilder::new(name), &spec.accesses);
        if let Some(after) = spec.after {
            node = node.after(names[after]);
        }
        graph.add_node(node);
    }
    graph.build_all(options).expect("acyclic")
}

fn sluice_group(spec: &GroupSpec, groups: &[GroupSpec]) -> Group {
    let mut group = Group::new(spec.name);
    if let Some(parent) = spec.parent {
        group = group.in_group(groups[parent].name);
    }
    match spec.sibling {
        Some(SiblingOrder::First) => group = group.order_first(),
        Some(SiblingOrder::Last) => group = group.order_last(),
        None => {}
    }
    for &after in &spec.after {
        group = group.after(groups[after].name);
    }
    for &before in &spec.before {
        group = group.before(groups[before].name);
    }
    group
}

fn organise(mut node: NodeBuilder, place: &Place, layout: &Layout) -> NodeBuilder {
    if let Some(group) = place.group {
        node = node.in_group(layout.groups[group].name);
    }
    match place.sibling {
        Some(SiblingOrder::First) => node = node.order_first(),
        Some(SiblingOrder::Last) => node = node.order_last(),
        None => {}
    }
    if let Some(phase) = place.phase {
        node = node.phase(phase);
    }
    if let Some(stage) = place.stage {
        node = node.in_stage(STAGES[stage]);
    }
    node.cadence(place.cadence)
}

/// The organised build: groups, stages, then the nodes, every plan.
fn sluice_organised(
    specs: &[SystemSpec],
    names: &[&'static str],
    layout: &Layout,
    options: &PlanOptions,
) -> Plans {
    let mut graph = Graph::new();
    for group in &layout.groups {
        graph.add_group(sluice_group(group, &layout.groups));
    }
    if layout.features.stages {
        for (order, stage) in STAGES.iter().enumerate() {
            graph.add_stage(*stage, order as i64);
        }
    }
    for ((spec, &name), place) in specs.iter().zip(names).zip(&layout.places) {
        let mut node = with_accesses(NodeBuilder::new(name), &spec.accesses);
        if let Some(after) = place.after {
            node = node.after(names[after]);
        }
        graph.add_node(organise(node, place, layout));
    }
    graph.build_all(options).expect("the organised world plans")
}

#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Org {
    Group(u16),
    /// The `order_first` items among the children of a group (`GROUPS`: the
    /// top level).
    First(u16),
    /// The `order_last` items among them.
    Last(u16),
    Phase(u8),
    Stage(u8),
    /// A node some other node runs after.
    Node(u32),
}

#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FixedUpdate;

/// `config` placed among the siblings of `parent` with `sibling`, as the
/// sluice planner orders them: `order_first` items before the rest,
/// `order_last` items after the rest.
fn bevy_sibling<T>(
    mut config: ScheduleConfigs<T>,
    layout: &Layout,
    parent: Option<usize>,
    sibling: Option<SiblingOrder>,
) -> ScheduleConfigs<T>
where
    T: Schedulable<Metadata = GraphInfo, GroupMetadata = Chain>,
{
    let slot = parent.unwrap_or(GROUPS);
    let id = slot as u16;
    if sibling == Some(SiblingOrder::First) {
        config = config.in_set(Org::First(id));
    } else if layout.has_first[slot] {
        config = config.after(Org::First(id));
    }
    if sibling == Some(SiblingOrder::Last) {
        config = config.in_set(Org::Last(id));
    } else if layout.has_last[slot] {
        config = config.before(Org::Last(id));
    }
    config
}

/// The groups, phases and stages of `layout` as system sets of `schedule`.
fn bevy_configure(schedule: &mut Schedule, layout: &Layout) {
    for group in layout.groups.iter().enumerate().map(|(i, g)| {
        let mut set = Org::Group(i as u16).into_configs();
        if let Some(parent) = g.parent {
            set = set.in_set(Org::Group(parent as u16));
        }
        let mut set = bevy_sibling(set, layout, g.parent, g.sibling);
        for &after in &g.after {
            set = set.after(Org::Group(after as u16));
        }
        for &before in &g.before {
            set = set.before(Org::Group(before as u16));
        }
        set
    }) {
        schedule.configure_sets(group);
    }
    if layout.features.phases {
        schedule.configure_sets((Org::Phase(0), Org::Phase(1), Org::Phase(2)).chain());
    }
    if layout.features.stages {
        schedule
            .configure_sets((Org::Stage(0), Org::Stage(1), Org::Stage(2), Org::Stage(3)).chain());
    }
}

fn phase_index(phase: Phase) -> u8 {
    PHASES.iter().position(|&p| p == phase).unwrap_or(1) as u8
}

/// The organised world in bevy: `Update` and `FixedUpdate`, configured and
/// initialized.
fn bevy_organised(
    specs: &[SystemSpec],
    layout: &Layout,
    world: &mut BevyWorld,
    ids: &[bevy_ecs::component::ComponentId],
) {
    let mut update = Schedule::default();
    let mut fixed = Schedule::new(FixedUpdate);
    bevy_configure(&mut update, layout);
    bevy_configure(&mut fixed, layout);
    for (i, (spec, place)) in specs.iter().zip(&layout.places).enumerate() {
        let system = bevy_system(world, ids, &spec.accesses, || {});
        let mut config = if layout.features.groups {
            let config = system.in_set(Org::Group(place.group.unwrap_or(0) as u16));
            bevy_sibling(config, layout, place.group, place.sibling)
        } else {
            system.into_configs()
        };
        if layout.features.phases {
            let phase = phase_index(place.phase.unwrap_or(Phase::Update));
            config = config.in_set(Org::Phase(phase));
        }
        if let Some(stage) = place.stage {
            config = config.in_set(Org::Stage(stage as u8));
        }
        if layout.targeted[i] {
            config = config.in_set(Org::Node(i as u32));
        }
        if let Some(after) = place.after {
            config = config.after(Org::Node(after as u32));
        }
        match place.cadence {
            Cadence::Variable => update.add_systems(config),
            Cadence::Fixed => fixed.add_systems(config),
        };
    }
    update.initialize(world).expect("Update builds");
    fixed.initialize(world).expect("FixedUpdate builds");
    black_box((&update, &fixed));
}

fn bevy_world() -> (BevyWorld, Vec<bevy_ecs::component::ComponentId>) {
    let mut world = BevyWorld::new();
    let ids = register_bevy(&mut world, SERVICES);
    (world, ids)
}

/// Vertices, barriers and edges of the plans, for the record.
fn describe(label: &str, plans: &Plans) {
    for (selection, plan) in plans.iter() {
        let compiled = plan.compiled();
        let barriers = (0..compiled.vertex_nodes.len() as u32)
            .filter(|&v| compiled.is_barrier(v))
            .count();
        eprintln!(
            "{label}: {}: {} nodes, {barriers} barrier vertices, {} compiled edges, {} stages, \
             {} diagnostics",
            selection.describe(),
            plan.len(),
            compiled.successor_targets.len(),
            plan.stage_count(),
            plan.diagnostics().len(),
        );
    }
}

fn organised_plan_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("organised_plan_build");
    group.sample_size(10);
    let ignore = options(AmbiguityLevel::Ignore);
    let warn = options(AmbiguityLevel::Warn);
    for nodes in [1_000usize, 10_000] {
        let specs = systems(nodes, SERVICES, SEED);
        let names = names(nodes);
        let layout = Layout::new(&specs, Features::ALL);
        describe(
            &format!("flat {nodes}"),
            &sluice_flat(&specs, &names, &ignore),
        );
        describe(
            &format!("organised {nodes}"),
            &sluice_organised(&specs, &names, &layout, &ignore),
        );
        group.bench_function(BenchmarkId::new("sluice_flat", nodes), |b| {
            b.iter(|| black_box(sluice_flat(&specs, &names, &ignore)));
        });
        group.bench_function(BenchmarkId::new("sluice_organised", nodes), |b| {
            b.iter(|| black_box(sluice_organised(&specs, &names, &layout, &ignore)));
        });
        group.bench_function(BenchmarkId::new("sluice_flat_warn", nodes), |b| {
            b.iter(|| black_box(sluice_flat(&specs, &names, &warn)));
        });
        group.bench_function(BenchmarkId::new("sluice_organised_warn", nodes), |b| {
            b.iter(|| black_box(sluice_organised(&specs, &names, &layout, &warn)));
        });
        if nodes <= 1_000 {
            group.bench_function(BenchmarkId::new("bevy_organised", nodes), |b| {
                b.iter_batched(
                    bevy_world,
                    |(mut world, ids)| bevy_organised(&specs, &layout, &mut world, &ids),
                    BatchSize::LargeInput,
                );
            });
        } else if let Some(runs) = bevy_large_runs() {
            // Minutes a build: criterion's ten samples would take half an
            // hour, so time single builds instead.
            for run in 1..=runs {
                let (mut world, ids) = bevy_world();
                let start = Instant::now();
                bevy_organised(&specs, &layout, &mut world, &ids);
                eprintln!(
                    "organised_plan_build/bevy_organised/{nodes}: one build, run {run} of \
                     {runs}: {:.2} s",
                    start.elapsed().as_secs_f64()
                );
            }
        }
    }
    group.finish();
}

/// How many single builds of bevy's 10,000-system world to time
/// (`ORGANISED_BEVY_10K=n`; none by default, each takes minutes).
fn bevy_large_runs() -> Option<u32> {
    std::env::var("ORGANISED_BEVY_10K")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .filter(|&runs| runs > 0)
}

/// The organised build with one feature at a time (and all, and none).
fn organised_plan_parts(c: &mut Criterion) {
    let mut group = c.benchmark_group("organised_plan_parts");
    group.sample_size(10);
    let ignore = options(AmbiguityLevel::Ignore);
    let parts = [
        ("none", Features::NONE),
        (
            "groups",
            Features {
                groups: true,
                ..Features::NONE
            },
        ),
        (
            "phases",
            Features {
                phases: true,
                ..Features::NONE
            },
        ),
        (
            "stages",
            Features {
                stages: true,
                ..Features::NONE
            },
        ),
        (
            "fixed",
            Features {
                fixed: true,
                ..Features::NONE
            },
        ),
        ("all", Features::ALL),
    ];
    for nodes in [1_000usize, 10_000] {
        let specs = systems(nodes, SERVICES, SEED);
        let names = names(nodes);
        for (name, features) in parts {
            let layout = Layout::new(&specs, features);
            group.bench_function(BenchmarkId::new(name, nodes), |b| {
                b.iter(|| black_box(sluice_organised(&specs, &names, &layout, &ignore)));
            });
        }
    }
    group.finish();
}

/// A world of `specs` as empty systems, organised by `layout` (or flat),
/// planned (one iteration run).
fn frame_world(specs: &[SystemSpec], layout: Option<&Layout>, executor: ExecutorKind) -> World {
    let mut world = World::with_pool(ThreadPool::new(0).expect("pool"));
    world.set_executor(executor);
    world.set_plan_options(options(AmbiguityLevel::Ignore));
    insert_sluice(&mut world, FRAME_SERVICES);
    if let Some(layout) = layout {
        for group in &layout.groups {
            world.add_group(sluice_group(group, &layout.groups));
        }
    }
    for (i, spec) in specs.iter().enumerate() {
        let mut node = with_accesses(NodeBuilder::new(format!("system_{i}")), &spec.accesses);
        if let Some(layout) = layout {
            node = organise(node, &layout.places[i], layout);
        }
        world.add_system(node.run(|_cx| {}));
    }
    world.run_iteration().expect("plans and runs");
    world
}

const FRAME_NODES: usize = 1_000;
const FRAME_EXECUTORS: [(&str, ExecutorKind); 3] = [
    ("serial", ExecutorKind::Serial),
    ("adaptive", ExecutorKind::Adaptive),
    ("pool", ExecutorKind::Parallel),
];

/// The frame's systems (`empty_systems`' accesses) and their organisation.
fn frame_workload() -> (Vec<SystemSpec>, Layout) {
    let specs = systems_with(FRAME_NODES, FRAME_SERVICES, 3, false, FRAME_SEED);
    let layout = Layout::new(&specs, Features::FRAME);
    (specs, layout)
}

fn organised_frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("organised_frame");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
    let (specs, layout) = frame_workload();
    // Criterion: the serial and adaptive executors (the summary adds the pool).
    for &(executor, kind) in &FRAME_EXECUTORS[..2] {
        for (name, layout) in [("sluice_flat", None), ("sluice_organised", Some(&layout))] {
            let mut world = frame_world(&specs, layout, kind);
            if executor == "serial" {
                let plans = world.plans().expect("planned");
                describe(&format!("frame {name}"), &plans);
            }
            let id = BenchmarkId::new(format!("{name}_{executor}"), FRAME_NODES);
            group.bench_function(id, |b| {
                b.iter(|| world.run_iteration().expect("runs"));
            });
        }
    }
    group.finish();
}

/// Mean time of one iteration over about `budget`, in nanoseconds.
fn mean_ns(world: &mut World, budget: Duration) -> f64 {
    let mut iterations = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        for _ in 0..8 {
            world.run_iteration().expect("runs");
        }
        iterations += 8;
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

/// Criterion's filter: the first argument that is neither a flag nor a
/// flag's number.
fn filter() -> Option<String> {
    std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-') && arg.parse::<f64>().is_err())
}

/// The frame again, flat and organised interleaved in rounds after a warm-up
/// of each (the median round counts), so the ratio compares figures taken
/// side by side; the pinned pool too, where every edge is an atomic.
fn frame_summary() {
    const ROUNDS: usize = 7;
    const ROUND: Duration = Duration::from_millis(150);
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    println!(
        "\norganised_frame summary (median of {ROUNDS} interleaved rounds of {} ms, load {}):",
        ROUND.as_millis(),
        load()
    );
    println!(
        "{:>9} {:>12} {:>12} {:>18}",
        "executor", "flat", "organised", "organised / flat"
    );
    let (specs, layout) = frame_workload();
    for (executor, kind) in FRAME_EXECUTORS {
        let mut worlds = [
            frame_world(&specs, None, kind),
            frame_world(&specs, Some(&layout), kind),
        ];
        for world in &mut worlds {
            mean_ns(world, Duration::from_millis(300));
        }
        let mut samples = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
        for _ in 0..ROUNDS {
            for (world, samples) in worlds.iter_mut().zip(&mut samples) {
                samples.push(mean_ns(world, ROUND));
            }
        }
        let [flat, organised] = samples.map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[ROUNDS / 2]
        });
        println!(
            "{executor:>9} {:>9.2} us {:>9.2} us {:>17.3}x",
            flat / 1e3,
            organised / 1e3,
            organised / flat
        );
    }
    println!("(load {})", load());
}

/// The builds again, flat and organised interleaved in rounds (the median
/// round counts), so the ratio compares figures taken side by side on a
/// noisy machine: `--build-summary` runs it alone.
fn build_summary() {
    const ROUNDS: usize = 9;
    let ignore = options(AmbiguityLevel::Ignore);
    let warn = options(AmbiguityLevel::Warn);
    println!(
        "\norganised_plan_build summary (median of {ROUNDS} interleaved rounds, load {}):",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "{:>7} {:>8} {:>12} {:>12} {:>18}",
        "nodes", "SL0008", "flat", "organised", "organised / flat"
    );
    for nodes in [1_000usize, 10_000] {
        let specs = systems(nodes, SERVICES, SEED);
        let names = names(nodes);
        let layout = Layout::new(&specs, Features::ALL);
        let budget = Duration::from_millis(if nodes > 1_000 { 400 } else { 150 });
        for (level, options) in [("off", &ignore), ("warn", &warn)] {
            let mut flat = Vec::with_capacity(ROUNDS);
            let mut organised = Vec::with_capacity(ROUNDS);
            let time = |build: &dyn Fn()| {
                let start = Instant::now();
                let mut builds = 0u32;
                while start.elapsed() < budget {
                    build();
                    builds += 1;
                }
                start.elapsed().as_nanos() as f64 / f64::from(builds)
            };
            let flat_build = || drop(black_box(sluice_flat(&specs, &names, options)));
            let organised_build = || {
                drop(black_box(sluice_organised(
                    &specs, &names, &layout, options,
                )))
            };
            time(&flat_build);
            time(&organised_build);
            for _ in 0..ROUNDS {
                flat.push(time(&flat_build));
                organised.push(time(&organised_build));
            }
            let [flat, organised] = [flat, organised].map(|mut s| {
                s.sort_by(f64::total_cmp);
                s[ROUNDS / 2]
            });
            println!(
                "{nodes:>7} {level:>8} {:>9.3} ms {:>9.3} ms {:>17.3}x",
                flat / 1e6,
                organised / 1e6,
                organised / flat
            );
        }
    }
}

criterion_group!(
    benches,
    organised_plan_build,
    organised_frame,
    organised_plan_parts
);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--build-summary") {
        build_summary();
        return;
    }
    if !args.iter().any(|a| a == "--summary-only") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    let listing = args.iter().any(|a| a == "--list" || a == "--test");
    let wanted = filter()
        .is_none_or(|f| "organised_frame".contains(f.as_str()) || f.contains("organised_frame"));
    if !listing && wanted {
        frame_summary();
    }
}
