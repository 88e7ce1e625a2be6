//! Groups, phases, stages, sets and orders become edges (plan-format.md,
//! "Organisation"); the seed examples of the reference texts.

use sluice::{
    AmbiguityLevel, Cadence, Graph, Group, NodeBuilder, NodeIndex, Phase, Plan, PlanOptions,
    Selection,
};

fn options() -> PlanOptions {
    PlanOptions {
        ambiguity: AmbiguityLevel::Ignore,
        ..PlanOptions::default()
    }
}

fn names(plan: &Plan) -> Vec<&str> {
    plan.order().map(|n| plan.node_name(n)).collect()
}

fn codes(graph: &Graph) -> Vec<&'static str> {
    let errors = graph.build_all(&options()).unwrap_err();
    errors.diagnostics().iter().map(|d| d.code).collect()
}

/// Reference 004: CarGroup and TruckGroup inside VehicleGroup; ordering the
/// groups orders their members, at any depth.
#[test]
fn car_and_truck_groups_order_their_members() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("VehicleGroup"));
    graph.add_group(
        Group::new("CarGroup")
            .in_group("VehicleGroup")
            .after("TruckGroup"),
    );
    graph.add_group(Group::new("TruckGroup").in_group("VehicleGroup"));
    let car = graph.add_node(NodeBuilder::new("CarSystem").in_group("CarGroup"));
    let truck = graph.add_node(NodeBuilder::new("TruckSystem").in_group("TruckGroup"));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["TruckSystem", "CarSystem"]);
    assert!(plan.why(truck, car).is_some(), "the group order is an edge");
    let tree: Vec<(usize, String)> = plan
        .tree()
        .into_iter()
        .map(|(depth, item)| {
            let name = match item {
                sluice::TreeItem::Group(g) => plan.hierarchy().group_name(g).to_owned(),
                sluice::TreeItem::Node(n) => plan.node_name(n).to_owned(),
            };
            (depth, name)
        })
        .collect();
    assert_eq!(
        tree,
        [
            (0, "VehicleGroup".to_owned()),
            (1, "TruckGroup".to_owned()),
            (2, "TruckSystem".to_owned()),
            (1, "CarGroup".to_owned()),
            (2, "CarSystem".to_owned()),
        ]
    );
}

#[test]
fn order_first_and_last_among_siblings() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("Sim"));
    graph.add_node(NodeBuilder::new("late").in_group("Sim").order_last());
    graph.add_node(NodeBuilder::new("middle").in_group("Sim"));
    graph.add_node(NodeBuilder::new("early").in_group("Sim").order_first());
    graph.add_node(NodeBuilder::new("outside"));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["early", "middle", "late", "outside"]);
    // A contradicting explicit edge is a cycle through the organisation.
    graph.add_node(NodeBuilder::new("rebel").in_group("Sim").before("early"));
    assert_eq!(codes(&graph), ["SL0007"]);
}

/// An empty group still carries order through it.
#[test]
fn an_empty_group_carries_order() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("Between").after("first").before("second"));
    graph.add_node(NodeBuilder::new("second"));
    graph.add_node(NodeBuilder::new("first"));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["first", "second"]);
    assert_eq!(plan.stage_count(), 2);
}

/// Reference 000: phases are two markers; a world naming none gains nothing.
#[test]
fn phases_order_within_a_cadence() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("present").phase(Phase::PostUpdate));
    graph.add_node(NodeBuilder::new("simulate"));
    graph.add_node(NodeBuilder::new("input").phase(Phase::PreUpdate));
    graph.add_node(NodeBuilder::new("integrate").cadence(Cadence::Fixed));
    graph.add_node(
        NodeBuilder::new("fixed_input")
            .cadence(Cadence::Fixed)
            .phase(Phase::PreUpdate),
    );
    let plans = graph.build_all(&options()).unwrap();
    assert_eq!(names(plans.variable()), ["input", "simulate", "present"]);
    assert_eq!(plans.variable().stage_count(), 3);
    assert_eq!(names(plans.fixed()), ["fixed_input", "integrate"]);
    assert!(!plans.variable().contains(NodeIndex(3)));

    let mut flat = Graph::new();
    flat.add_node(NodeBuilder::new("b"));
    flat.add_node(NodeBuilder::new("a"));
    assert_eq!(flat.build(&options()).unwrap().stage_count(), 1);
}

/// Reference 002: stages and sets order their members by order number.
#[test]
fn stages_and_sets_order_by_number() {
    let mut graph = Graph::new();
    graph.add_stage("Late", 10);
    graph.add_stage("Early", -5);
    graph.add_set("Audio", 2);
    graph.add_set("Ai", 1);
    graph.add_node(NodeBuilder::new("mix").in_stage("Early").in_set("Audio"));
    graph.add_node(NodeBuilder::new("think").in_stage("Early").in_set("Ai"));
    graph.add_node(NodeBuilder::new("render").in_stage("Late"));
    graph.add_node(NodeBuilder::new("spawn").in_stage("Early"));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["think", "mix", "spawn", "render"]);
    assert_eq!(plan.stage_count(), 3);
}

#[test]
fn stage_and_set_mistakes_are_reported() {
    let mut graph = Graph::new();
    graph.add_stage("A", 0);
    graph.add_stage("B", 0);
    graph.add_set("S", 1);
    graph.add_set("S", 2);
    graph.add_node(NodeBuilder::new("none"));
    graph.add_node(NodeBuilder::new("ghost").in_stage("Nowhere"));
    graph.add_node(NodeBuilder::new("fine").in_stage("A").in_set("T"));
    let mut found = codes(&graph);
    found.sort_unstable();
    assert_eq!(found, ["SL0005", "SL0005", "SL0006", "SL0006", "SL0006"]);
}

/// Reference 002's AV007: a stage order contradicting an explicit edge.
#[test]
fn stage_against_edge_is_sl0007() {
    let mut graph = Graph::new();
    graph.add_stage("Early", 0);
    graph.add_stage("Late", 1);
    graph.add_node(NodeBuilder::new("a").in_stage("Early").after("b"));
    graph.add_node(NodeBuilder::new("b").in_stage("Late"));
    let errors = graph.build_all(&options()).unwrap_err();
    let cycle = &errors.diagnostics()[0];
    assert_eq!(cycle.code, "SL0007");
    assert!(
        cycle.message.contains("a") && cycle.message.contains("b"),
        "{}",
        cycle.message
    );
}

#[test]
fn an_edge_between_cadences_is_sl0003_naming_both() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("integrate").cadence(Cadence::Fixed));
    graph.add_node(NodeBuilder::new("draw").after("integrate"));
    let errors = graph.build_all(&options()).unwrap_err();
    assert_eq!(errors.diagnostics().len(), 1);
    let error = &errors.diagnostics()[0];
    assert_eq!(error.code, "SL0003");
    assert_eq!(error.nodes, ["draw", "integrate"]);
}

/// A group ordered through a node of the other cadence carries nothing.
#[test]
fn a_group_never_carries_order_across_cadences() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("G").after("integrate"));
    graph.add_node(NodeBuilder::new("integrate").cadence(Cadence::Fixed));
    graph.add_node(NodeBuilder::new("draw").in_group("G"));
    let plans = graph.build_all(&options()).unwrap();
    assert_eq!(names(plans.variable()), ["draw"]);
    assert_eq!(plans.get(&Selection::FIXED).map(|p| p.len()), Some(1));
}

#[test]
fn group_mistakes_are_reported() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("A").in_group("B"));
    graph.add_group(Group::new("B").in_group("A"));
    graph.add_group(Group::new("C").in_group("Missing"));
    graph.add_node(NodeBuilder::new("x").in_group("Nope"));
    let mut found = codes(&graph);
    found.sort_unstable();
    assert_eq!(found, ["SL0001", "SL0002", "SL0002"]);
}

/// `order(n)` breaks ties before registration order, never a dependency.
#[test]
fn order_breaks_ties_only() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").order(2));
    graph.add_node(NodeBuilder::new("b").order(1));
    graph.add_node(NodeBuilder::new("c").order(-1).after("a"));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["b", "a", "c"]);
}

/// Big groups cost `m + k` edges through a barrier, not `m * k`.
#[test]
fn wide_orders_go_through_a_barrier() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("First"));
    graph.add_group(Group::new("Second").after("First"));
    for i in 0..100 {
        graph.add_node(NodeBuilder::new(format!("a{i}")).in_group("First"));
        graph.add_node(NodeBuilder::new(format!("b{i}")).in_group("Second"));
    }
    let plan = graph.build(&options()).unwrap();
    assert!(plan.edges().len() < 400, "{} edges", plan.edges().len());
    assert_eq!(plan.stage_count(), 2);
    assert!(plan.why(NodeIndex(0), NodeIndex(1)).is_some());
    let compiled = plan.compiled();
    assert_eq!(compiled.vertex_nodes.len(), 201);
    assert_eq!(compiled.order.len(), 201);
}

/// The phases are markers an ordering may target by name: doing so puts the
/// world in phases (every node without one is in `Update`), so a node
/// without a phase ordered before `Update` contradicts its own phase.
#[test]
fn orderings_may_target_a_phase() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("input").phase(Phase::PreUpdate));
    graph.add_node(
        NodeBuilder::new("body")
            .after("PreUpdate")
            .before("PostUpdate"),
    );
    graph.add_node(NodeBuilder::new("present").phase(Phase::PostUpdate));
    let plan = graph.build(&options()).unwrap();
    assert_eq!(names(&plan), ["input", "body", "present"]);
    assert_eq!(plan.stage_count(), 3);

    let mut targeted = Graph::new();
    targeted.add_node(NodeBuilder::new("first"));
    targeted.add_node(NodeBuilder::new("rebel").before("Update"));
    let errors = targeted.build(&options()).unwrap_err();
    assert_eq!(errors.diagnostics()[0].code, "SL0007");
    assert!(errors.diagnostics()[0].message.contains("rebel"));
}

mod ai {
    pub fn update(_: &super::Tick) {}
}
mod physics {
    pub fn update(_: &super::Tick) {}
}

struct Tick;

/// A plain function's instance key is its qualified path: two functions of
/// one name in different modules are two nodes, both found by that name; the
/// same function twice is SL0004 naming the path.
#[test]
fn instance_keys_are_qualified_paths() {
    let mut world = sluice::World::new();
    world.insert(Tick);
    let first = world.add_system(ai::update);
    let second = world.add_system(physics::update);
    let after = world.add_system(NodeBuilder::new("after_both").after("update").run(|_| {}));
    let plan = world.plan().unwrap();
    assert!(plan.position(first) < plan.position(after));
    assert!(plan.position(second) < plan.position(after));
    world.add_system(ai::update);
    let Err(sluice::IterationError::Plan(errors)) = world.plan() else {
        panic!("a duplicate must not plan")
    };
    let duplicate = &errors.diagnostics()[0];
    assert_eq!(duplicate.code, "SL0004");
    assert!(
        duplicate.message.contains("organise::ai::update"),
        "{}",
        duplicate.message
    );
}

/// Only a larger order number orders: two stages of one number are SL0005
/// and nothing more (no cycle between their members).
#[test]
fn stages_of_one_number_order_nothing() {
    let mut graph = Graph::new();
    graph.add_stage("A", 1);
    graph.add_stage("B", 1);
    graph.add_node(NodeBuilder::new("x").in_stage("B"));
    graph.add_node(NodeBuilder::new("y").in_stage("A").after("x"));
    assert_eq!(codes(&graph), ["SL0005"]);
}

/// The world's own scheduling nodes need no stage.
#[test]
fn a_world_with_stages_plans() {
    let mut world = sluice::World::new();
    world.add_stage("Late", 1);
    world.add_stage("Early", 0);
    world.add_system(NodeBuilder::new("late").in_stage("Late").run(|_| {}));
    world.add_system(NodeBuilder::new("early").in_stage("Early").run(|_| {}));
    world.run_iteration().unwrap();
    let plan = world.plan().unwrap();
    assert_eq!(&names(&plan)[2..], ["early", "late"]);
}

/// The same function registered twice under a second key is two nodes.
#[test]
fn a_spec_takes_a_second_key() {
    use sluice::IntoSystem;
    let mut world = sluice::World::new();
    world.insert(Tick);
    world.add_system(ai::update);
    world.add_system(ai::update.into_system().key("ai::update#2"));
    assert_eq!(world.plan().unwrap().len(), 4);
}

/// Ambiguities are found per cadence: the other cadence's accessors of a
/// service are not in this plan's lane.
#[test]
fn ambiguities_are_per_cadence() {
    let mut graph = Graph::new();
    graph.add_node(
        NodeBuilder::new("a")
            .gates_named("Hp")
            .cadence(Cadence::Fixed),
    );
    graph.add_node(
        NodeBuilder::new("b")
            .gates_named("Hp")
            .cadence(Cadence::Fixed),
    );
    graph.add_node(NodeBuilder::new("c").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("d").gates_named("Hp"));
    let warn = PlanOptions {
        ambiguity: sluice::AmbiguityLevel::Warn,
        ..PlanOptions::default()
    };
    let plans = graph.build_all(&warn).unwrap();
    let totals: Vec<u64> = plans
        .variable()
        .diagnostics()
        .iter()
        .filter_map(|d| match &d.kind {
            sluice::DiagnosticKind::Ambiguity { total, .. } => Some(*total),
            _ => None,
        })
        .collect();
    assert_eq!(totals, [1, 1], "one pair per cadence: {totals:?}");
}

/// The world's own scheduling nodes stand outside the organisation: no
/// phase or sibling order reaches them, so they cannot close a cycle or
/// push a node into a later stage.
#[test]
fn the_scheduling_nodes_are_not_organised() {
    for node in [
        NodeBuilder::new("a").phase(Phase::PreUpdate).order_last(),
        NodeBuilder::new("a").phase(Phase::PostUpdate).order_first(),
        NodeBuilder::new("a").phase(Phase::PostUpdate),
        NodeBuilder::new("a").order_last(),
    ] {
        let mut world = sluice::World::new();
        let a = world.add_system(node.run(|_| {}));
        let plan = world.plan().unwrap();
        assert_eq!(
            plan.stage_of(a),
            0,
            "{:?}",
            plan.stages().collect::<Vec<_>>()
        );
        assert_eq!(names(&plan)[..2], ["sluice::plan", "sluice::execution"]);
    }
}

/// Nodes of one placement share their organisation edges in the plan, but a
/// cycle is reported on the edges as declared: it names the systems and
/// groups on it, never the shared vertices.
#[test]
fn a_cycle_through_a_placement_names_what_was_written() {
    let mut graph = Graph::new();
    graph.add_stage("Early", 0);
    graph.add_stage("Late", 1);
    graph.add_group(Group::new("Sim"));
    graph.add_node(NodeBuilder::new("a").in_group("Sim").in_stage("Early"));
    graph.add_node(NodeBuilder::new("b").in_group("Sim").in_stage("Early"));
    graph.add_node(
        NodeBuilder::new("c")
            .in_stage("Late")
            .phase(Phase::PreUpdate)
            .before("b"),
    );
    let errors = graph.build_all(&options()).unwrap_err();
    let cycle = &errors.diagnostics()[0];
    assert_eq!(cycle.code, "SL0007");
    assert!(
        cycle.nodes.iter().any(|n| n == "b") && cycle.nodes.iter().any(|n| n == "c"),
        "{}",
        cycle.message
    );
    assert!(!cycle.message.contains("members"), "{}", cycle.message);
}

// ---- issue 20: explicit orders are unique per plan; no phase, no phase edges ----

fn duplicate_orders(graph: &Graph) -> Vec<(Vec<String>, String)> {
    let errors = graph.build_all(&options()).unwrap_err();
    errors
        .diagnostics()
        .iter()
        .filter(|d| matches!(d.kind, sluice::DiagnosticKind::DuplicateOrder { .. }))
        .map(|d| {
            assert_eq!(d.code, "SL0005");
            (d.nodes.clone(), d.message.clone())
        })
        .collect()
}

/// Reference 002: "Every Run declaration requires a unique Order". Two
/// nodes of one plan with the same explicit `order(n)` are refused, naming
/// both and the plan; orders in other plans, and nodes with no order, are
/// not compared.
#[test]
fn two_nodes_of_one_plan_with_one_order_are_refused_naming_both() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("move").order(1));
    graph.add_node(NodeBuilder::new("plain"));
    graph.add_node(NodeBuilder::new("also_plain"));
    graph.add_node(NodeBuilder::new("kernel").order(1));
    // The same order in other plans: the fixed cadence, another schedule.
    graph.add_node(
        NodeBuilder::new("integrate")
            .order(1)
            .cadence(Cadence::Fixed),
    );
    graph.add_node(
        NodeBuilder::new("boot")
            .order(1)
            .in_schedule(sluice::Schedule::Startup),
    );
    // An explicit 0 is an order like any other.
    graph.add_node(NodeBuilder::new("zero").order(0));
    graph.add_node(NodeBuilder::new("nought").order(0).key("nought#2"));
    let found = duplicate_orders(&graph);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, ["zero", "nought"]);
    assert_eq!(found[1].0, ["move", "kernel"]);
    let message = &found[1].1;
    assert!(
        message.contains("`move` and `kernel` both have order 1 in the variable cadence"),
        "{message}"
    );
    assert!(message.contains("unique Order"), "{message}");
    // Distinct orders plan.
    let mut distinct = Graph::new();
    distinct.add_node(NodeBuilder::new("move").order(1));
    distinct.add_node(NodeBuilder::new("kernel").order(2));
    distinct.add_node(NodeBuilder::new("plain"));
    distinct.add_node(
        NodeBuilder::new("integrate")
            .order(1)
            .cadence(Cadence::Fixed),
    );
    distinct.build_all(&options()).expect("unique per plan");
}

/// Three nodes with one order: each later one is reported against the first.
#[test]
fn each_repeat_of_an_order_is_reported_against_its_first() {
    let mut graph = Graph::new();
    for name in ["a", "b", "c"] {
        graph.add_node(NodeBuilder::new(name).order(7));
    }
    graph.add_node(NodeBuilder::new("fixed").order(7).cadence(Cadence::Fixed));
    graph.add_node(NodeBuilder::new("fixed2").order(7).cadence(Cadence::Fixed));
    let found: Vec<Vec<String>> = duplicate_orders(&graph).into_iter().map(|f| f.0).collect();
    assert_eq!(
        found,
        [vec!["a", "b"], vec!["a", "c"], vec!["fixed", "fixed2"]]
    );
    let message = &graph.build_all(&options()).unwrap_err().to_string();
    assert!(message.contains("in the fixed cadence"), "{message}");
}

/// In a world, the refusal is the iteration's plan error; a disabled node's
/// order takes part in no plan, so it clashes with nothing.
#[test]
fn a_world_refuses_a_repeated_order_until_one_is_disabled() {
    let mut world = sluice::World::new();
    world.add_system(NodeBuilder::new("first").order(3).run(|_| {}));
    let second = world.add_system(NodeBuilder::new("second").order(3).run(|_| {}));
    let error = world.run_iteration().unwrap_err();
    let sluice::IterationError::Plan(errors) = &error else {
        panic!("a plan error, got {error}");
    };
    let codes: Vec<_> = errors.errors().map(|d| d.code).collect();
    assert_eq!(codes, ["SL0005"]);
    assert_eq!(errors.errors().next().unwrap().nodes, ["first", "second"]);
    world.set_enabled(second, false);
    world
        .run_iteration()
        .expect("the disabled node is in no plan");
}

/// An edge as names: its ends (a barrier by its marker's name) and its
/// reasons, a marker reason by the marker's name.
fn named_edges(plan: &Plan) -> Vec<(String, String, Vec<String>)> {
    plan.edges()
        .map(|e| {
            let reasons = e
                .reasons
                .iter()
                .map(|reason| match reason {
                    sluice::Reason::Marker(m) => format!("marker {}", plan.marker_name(*m)),
                    other => format!("{other:?}"),
                })
                .collect();
            let (from, to) = (plan.node_name(e.from), plan.node_name(e.to));
            (from.to_owned(), to.to_owned(), reasons)
        })
        .collect()
}

/// How many plain nodes the worlds below carry besides their named ones:
/// more than a marker may fold (256), so a phase bound that applied where
/// none is named would be kept as a barrier with an edge from each of them.
const CROWD: usize = 300;

/// Plan-format rule 5: "when no system names a phase, phases add nothing".
/// The edge list of a world that names no phase, with every reason, is
/// exactly its lane, its explicit ordering and its group's sibling order:
/// no phase marker among the reasons, no barrier, nothing touching the
/// crowd of unordered nodes, and the sibling markers are the group's own.
/// The same world with one node in `PreUpdate` and one in `PostUpdate`
/// gets phase edges (the comparison sees them when they exist).
#[test]
fn a_world_that_names_no_phase_gets_no_phase_edges() {
    struct Hp;
    struct Log;
    let build = |phased: bool| {
        let mut graph = Graph::new();
        graph.add_node(NodeBuilder::new("damage").gates::<Hp>());
        let hud = NodeBuilder::new("hud").reads::<Hp>();
        graph.add_node(if phased {
            hud.phase(Phase::PostUpdate)
        } else {
            hud
        });
        let input = NodeBuilder::new("input").gates::<Log>();
        graph.add_node(if phased {
            input.phase(Phase::PreUpdate)
        } else {
            input
        });
        graph.add_node(NodeBuilder::new("audio").after("damage"));
        graph.add_node(NodeBuilder::new("idle"));
        graph.add_group(Group::new("Sim"));
        graph.add_node(NodeBuilder::new("sim_last").in_group("Sim").order_last());
        graph.add_node(NodeBuilder::new("sim_first").in_group("Sim").order_first());
        graph.add_node(NodeBuilder::new("sim_middle").in_group("Sim"));
        for i in 0..CROWD {
            graph.add_node(NodeBuilder::new(format!("crowd{i}")));
        }
        let plan = graph.build(&options()).unwrap();
        let hp = graph.registry().id_of::<Hp>().unwrap();
        (named_edges(&plan), plan.compiled().vertex_nodes.len(), hp)
    };
    let (flat, vertices, hp) = build(false);
    let edge = |from: &str, to: &str, reason: &str| {
        (from.to_owned(), to.to_owned(), vec![reason.to_owned()])
    };
    let hp_lane = format!(
        "{:?}",
        sluice::Reason::Lane {
            service: hp,
            kind: sluice::LaneKind::SharedAfterGate,
        }
    );
    assert_eq!(
        flat,
        [
            edge("damage", "hud", &hp_lane),
            edge("damage", "audio", "After"),
            edge("sim_first", "sim_middle", "marker (members of group Sim)"),
            edge("sim_middle", "sim_last", "marker (members of group Sim)"),
        ],
        "only the lane, the explicit order and the sibling order"
    );
    assert_eq!(vertices, 8 + CROWD, "no barrier vertex");
    let (phased, _, _) = build(true);
    assert_ne!(phased, flat, "phases, once named, add edges");
    assert!(
        phased
            .iter()
            .any(|(from, to, _)| (from.as_str(), to.as_str()) == ("input", "damage")),
        "input (PreUpdate) precedes damage (Update): {:?}",
        &phased[..phased.len().min(8)]
    );
}
