//! The planner through its public API.

use sluice::{
    AmbiguityLevel, DiagnosticKind, Graph, LaneKind, Level, Marker, NodeBuilder, NodeIndex,
    NodeRef, Packing, Plan, PlanOptions, Reason,
};

/// The reference's worked example, declared by service name.
fn worked() -> Graph {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("spawner").gates_named("Enemies"));
    graph.add_node(
        NodeBuilder::new("health")
            .reads_named("Armor")
            .gates_named("Hp"),
    );
    graph.add_node(NodeBuilder::new("poison").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("minimap").reads_named("Enemies"));
    graph.add_node(
        NodeBuilder::new("hud")
            .reads_named("Hp")
            .reads_named("Armor")
            .after("spawner"),
    );
    graph
}

fn stage_names(plan: &Plan) -> Vec<Vec<&str>> {
    plan.stages()
        .map(|members| members.iter().map(|&n| plan.node_name(n)).collect())
        .collect()
}

fn reasons(plan: &Plan, from: u32, to: u32) -> Vec<String> {
    let edge = plan
        .edge_between(NodeIndex(from), NodeIndex(to))
        .unwrap_or_else(|| panic!("no edge {from} -> {to}"));
    edge.reasons.iter().map(|r| edge.reason_text(r)).collect()
}

#[test]
fn worked_example_gives_its_three_stages() {
    let plan = worked().build(&PlanOptions::default()).unwrap();
    assert_eq!(
        stage_names(&plan),
        [
            vec!["spawner", "health"],
            vec!["poison", "minimap"],
            vec!["hud"]
        ]
    );
    assert_eq!(
        plan.order().map(|n| n.0).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    // Only the ambiguity warnings (on by default).
    assert!(plan.diagnostics().iter().all(|d| d.code == "SL0008"));
}

#[test]
fn edges_carry_their_reasons() {
    let plan = worked().build(&PlanOptions::default()).unwrap();
    assert_eq!(reasons(&plan, 1, 2), ["lane Hp: gate after gate"]);
    assert_eq!(reasons(&plan, 0, 3), ["lane Enemies: shared after gate"]);
    assert_eq!(reasons(&plan, 2, 4), ["lane Hp: shared after gate"]);
    assert_eq!(reasons(&plan, 0, 4), ["after(spawner)"]);
    // health -> hud is implied by health -> poison -> hud: the lane walk
    // never adds it.
    assert!(plan.edge_between(NodeIndex(1), NodeIndex(4)).is_none());
    assert_eq!(plan.edges().len(), 4);
    let hp = plan.edge_between(NodeIndex(2), NodeIndex(4)).unwrap();
    assert_eq!(hp.to_string(), "poison -> hud: lane Hp: shared after gate");
}

#[test]
fn gate_after_readers_and_merged_reasons() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").reads_named("X").reads_named("Y"));
    graph.add_node(NodeBuilder::new("b").reads_named("X"));
    graph.add_node(
        NodeBuilder::new("c")
            .gates_named("X")
            .gates_named("Y")
            .after("a"),
    );
    graph.add_node(NodeBuilder::new("d").reads_named("X"));
    let plan = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        reasons(&plan, 0, 2),
        [
            "after(a)",
            "lane X: gate after shared",
            "lane Y: gate after shared"
        ]
    );
    assert_eq!(reasons(&plan, 1, 2), ["lane X: gate after shared"]);
    assert_eq!(reasons(&plan, 2, 3), ["lane X: shared after gate"]);
    assert_eq!(plan.edges().len(), 3);
    let x = graph.registry().id_by_name("X").unwrap();
    assert_eq!(plan.barriers(x), [NodeIndex(2)]);
    let compiled = plan.compiled();
    assert_eq!(compiled.predecessor_counts, [0, 0, 2, 1]);
    assert_eq!(compiled.successors(0), [2]);
    assert_eq!(compiled.successors(2), [3]);
    assert_eq!(compiled.successor_offsets.len(), 5);
}

#[test]
fn exclusive_conflicts_with_everything() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("idle"));
    graph.add_node(NodeBuilder::new("save").exclusive());
    graph.add_node(NodeBuilder::new("also_idle"));
    graph.add_node(NodeBuilder::new("reader").reads_named("Hp"));
    let plan = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        stage_names(&plan),
        [vec!["idle"], vec!["save"], vec!["also_idle", "reader"]]
    );
    assert_eq!(reasons(&plan, 0, 1), ["exclusive"]);
    assert_eq!(plan.exclusive_barriers(), [NodeIndex(1)]);
}

#[test]
fn producers_run_before_consumers_registered_earlier() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("draw").reads_named("Mesh"));
    graph.add_node(NodeBuilder::new("build_mesh").produces_named("Mesh"));
    let plan = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(plan.order().map(|n| n.0).collect::<Vec<_>>(), [1, 0]);
    assert_eq!(
        reasons(&plan, 1, 0),
        ["produces Mesh", "lane Mesh: shared after gate"]
    );
}

#[test]
fn markers_order_nodes_but_never_appear_in_stages() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("late").after("Update"));
    graph.add_node(NodeBuilder::new("early").before("PreUpdate"));
    graph.add_node(NodeBuilder::new("free"));
    graph.add_marker("PreUpdate");
    graph.add_marker(Marker::new("Update").after("PreUpdate"));
    let plan = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(plan.len(), 3);
    assert_eq!(stage_names(&plan), [vec!["early", "free"], vec!["late"]]);
    assert_eq!(reasons(&plan, 1, 0), ["via Update"]);
    assert_eq!(plan.compiled().order, [1, 0, 2]);
}

#[test]
fn why_gives_the_chain() {
    let plan = worked().build(&PlanOptions::default()).unwrap();
    let chain = plan.why(NodeIndex(1), NodeIndex(4)).unwrap();
    let text: Vec<String> = chain.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "health -> poison: lane Hp: gate after gate",
            "poison -> hud: lane Hp: shared after gate"
        ]
    );
    assert!(plan.why(NodeIndex(3), NodeIndex(4)).is_none());
    assert!(plan.why(NodeIndex(4), NodeIndex(1)).is_none());
    assert_eq!(plan.why(NodeIndex(2), NodeIndex(2)).unwrap().len(), 0);
}

#[test]
fn dot_labels_stages_and_reasons() {
    let dot = worked().build(&PlanOptions::default()).unwrap().to_dot();
    assert!(dot.starts_with("digraph plan {"));
    assert!(dot.contains("n4 [label=\"hud\\nstage 2\"];"));
    assert!(dot.contains("n0 -> n4 [label=\"after(spawner)\"];"));
    assert!(dot.contains("n1 -> n2 [label=\"lane Hp: gate after gate\"];"));
}

#[test]
fn first_fit_packs_denser_and_records_the_order() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("w1").gates_named("A"));
    graph.add_node(NodeBuilder::new("r1").reads_named("A"));
    graph.add_node(NodeBuilder::new("b").gates_named("B").after("r1"));
    graph.add_node(NodeBuilder::new("c").reads_named("C"));
    graph.add_node(NodeBuilder::new("w2").gates_named("A"));
    let order = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        stage_names(&order),
        [vec!["w1", "c"], vec!["r1"], vec!["b", "w2"]]
    );
    let options = PlanOptions {
        packing: Packing::FirstFit,
        ..PlanOptions::default()
    };
    let packed = graph.build(&options).unwrap();
    // w2 conflicts with w1 (stage 0) and r1 (stage 1): stage 2 beside b.
    assert_eq!(
        stage_names(&packed),
        [vec!["w1", "c"], vec!["r1"], vec!["b", "w2"]]
    );
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("r").reads_named("A"));
    graph.add_node(NodeBuilder::new("w").gates_named("A"));
    graph.add_node(NodeBuilder::new("x").gates_named("X"));
    graph.add_node(NodeBuilder::new("rx").reads_named("X").after("r"));
    graph.add_node(NodeBuilder::new("y").gates_named("X"));
    let packed = graph.build(&options).unwrap();
    assert_eq!(
        stage_names(&packed),
        [vec!["r", "x"], vec!["w", "rx"], vec!["y"]]
    );
    let order = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        stage_names(&order),
        [vec!["r", "x"], vec!["w", "rx"], vec!["y"]]
    );
}

#[test]
fn first_fit_moves_a_late_node_into_an_early_stage() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").gates_named("A"));
    graph.add_node(NodeBuilder::new("b").reads_named("A"));
    graph.add_node(NodeBuilder::new("c").gates_named("B"));
    graph.add_node(NodeBuilder::new("d").reads_named("B").gates_named("A"));
    graph.add_node(NodeBuilder::new("e").gates_named("C"));
    let default = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        stage_names(&default),
        [vec!["a", "c", "e"], vec!["b"], vec!["d"]]
    );
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").gates_named("A"));
    graph.add_node(NodeBuilder::new("b").gates_named("A"));
    graph.add_node(NodeBuilder::new("c").reads_named("A").gates_named("C"));
    graph.add_node(NodeBuilder::new("d").gates_named("C"));
    let options = PlanOptions {
        packing: Packing::FirstFit,
        ..PlanOptions::default()
    };
    // Order packing: d waits for c (lane C), stage 3. First-fit: d goes into
    // stage 0, so it now comes before c and c waits for it.
    let default = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(stage_names(&default)[3], ["d"]);
    let packed = graph.build(&options).unwrap();
    assert_eq!(stage_names(&packed), [vec!["a", "d"], vec!["b"], vec!["c"]]);
    assert_eq!(packed.compiled().order, [0, 3, 1, 2]);
    assert_eq!(reasons(&packed, 3, 2), ["lane C: gate after gate"]);
}

#[test]
fn every_error_is_reported_at_once() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").after("c"));
    graph.add_node(NodeBuilder::new("b").after("a").after("ghost"));
    graph.add_node(NodeBuilder::new("c").after("b"));
    graph.add_node(NodeBuilder::new("d").before("nowhere"));
    graph.add_node(NodeBuilder::new("d"));
    graph.add_node(NodeBuilder::new("e").after("f"));
    graph.add_node(NodeBuilder::new("f").after("e"));
    let errors = graph.build(&PlanOptions::default()).unwrap_err();
    let text: Vec<String> = errors
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        text,
        [
            "error[SL0004]: `d` is registered twice (node #3 `d` and node #4 `d`); \
             give one of them its own instance key",
            "error[SL0002]: `b` is ordered after `ghost`, which is not a registered node, \
             group or marker; check the spelling or register it",
            "error[SL0002]: `d` is ordered before `nowhere`, which is not a registered node, \
             group or marker; check the spelling or register it",
            "error[SL0001]: cycle: a -> b -> c -> a; remove or reverse one of these orderings",
            "error[SL0001]: cycle: e -> f -> e; remove or reverse one of these orderings",
        ]
    );
    let DiagnosticKind::Cycle { path } = &errors.diagnostics()[3].kind else {
        panic!("not a cycle")
    };
    assert_eq!(
        path,
        &[0, 1, 2].map(|i| NodeRef::Node(NodeIndex(i))).to_vec()
    );
    assert_eq!(errors.diagnostics()[4].nodes, ["e", "f"]);
}

#[test]
fn a_self_ordering_is_a_cycle_and_instance_keys_separate_registrations() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("hud").key("hud#1").reads_named("Hp"));
    graph.add_node(NodeBuilder::new("hud").key("hud#2").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("late").after("hud"));
    let plan = graph.build(&PlanOptions::default()).unwrap();
    // `after("hud")` names both instances; `hud#1 -> late` is implied by
    // `hud#1 -> hud#2 -> late` (the lane), so it is left out.
    assert!(plan.why(NodeIndex(0), NodeIndex(2)).is_some());
    assert!(plan.edge_between(NodeIndex(1), NodeIndex(2)).is_some());
    assert_eq!(plan.compiled().predecessor_counts, [0, 1, 1]);
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("loop").after("loop"));
    let errors = graph.build(&PlanOptions::default()).unwrap_err();
    assert_eq!(
        errors.to_string(),
        "error[SL0001]: cycle: loop -> loop; remove or reverse one of these orderings"
    );
}

#[test]
fn ambiguity_levels() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("health").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("poison").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("hud").reads_named("Hp").after("poison"));
    let ignore = PlanOptions {
        ambiguity: AmbiguityLevel::Ignore,
        ..PlanOptions::default()
    };
    assert!(graph.build(&ignore).unwrap().diagnostics().is_empty());
    // Warnings by default, as reference 002 reports them.
    assert_eq!(
        graph.build(&PlanOptions::default()).unwrap().diagnostics()[0].code,
        "SL0008"
    );
    let warn = PlanOptions {
        ambiguity: AmbiguityLevel::Warn,
        ..PlanOptions::default()
    };
    let plan = graph.build(&warn).unwrap();
    // health/poison and health/hud are ambiguous; poison/hud is ordered. One
    // diagnostic for the lane of Hp lists both pairs.
    let found: Vec<String> = plan.diagnostics().iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        [
            "warning[SL0008]: 2 pairs of nodes conflict on Hp and are ordered only by \
          registration order (earlier node first): `health` and `poison`, `health` and `hud`; \
          declare one node of each pair after the other to make the order intentional"
        ]
    );
    let diagnostic = &plan.diagnostics()[0];
    assert_eq!(diagnostic.nodes, ["health", "poison", "hud"]);
    let hp = graph.view().table().id_by_name("Hp").unwrap();
    assert_eq!(
        diagnostic.kind,
        DiagnosticKind::Ambiguity {
            service: Some(hp),
            pairs: vec![(NodeIndex(0), NodeIndex(1)), (NodeIndex(0), NodeIndex(2)),],
            total: 2,
        }
    );
    let error = PlanOptions {
        ambiguity: AmbiguityLevel::Error,
        ..PlanOptions::default()
    };
    let errors = graph.build(&error).unwrap_err();
    assert!(
        errors
            .errors()
            .all(|d| d.code == "SL0008" && d.level == Level::Error)
    );
    assert_eq!(errors.diagnostics().len(), 1);
}

fn warn_ambiguous() -> PlanOptions {
    PlanOptions {
        ambiguity: AmbiguityLevel::Warn,
        ..PlanOptions::default()
    }
}

/// `(service name or "exclusive", total, listed pairs by name)` of one SL0008.
type AmbiguityGroup = (String, u64, Vec<(String, String)>);

/// Every SL0008 of `plan`, as [`AmbiguityGroup`]s.
fn ambiguities(plan: &Plan) -> Vec<AmbiguityGroup> {
    plan.diagnostics()
        .iter()
        .filter_map(|d| match &d.kind {
            DiagnosticKind::Ambiguity {
                service,
                pairs,
                total,
            } => Some((
                service.map_or("exclusive".to_owned(), |s| plan.service_name(s).to_owned()),
                *total,
                pairs
                    .iter()
                    .map(|&(a, b)| (plan.node_name(a).to_owned(), plan.node_name(b).to_owned()))
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn one_pair_keeps_the_pair_message() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("b").reads_named("Hp"));
    let plan = graph.build(&warn_ambiguous()).unwrap();
    assert_eq!(
        plan.diagnostics()[0].to_string(),
        "warning[SL0008]: `a` and `b` conflict on Hp and are ordered only by registration \
         order (`a` first); declare `b` after `a` (or the reverse) to make the order intentional"
    );
}

#[test]
fn ambiguities_are_counted_and_capped_per_service() {
    // 100 writers of Hp, no ordering: 4950 pairs, 8 listed, by later node.
    let mut graph = Graph::new();
    for i in 0..100 {
        graph.add_node(NodeBuilder::new(format!("w{i}")).gates_named("Hp"));
    }
    let plan = graph.build(&warn_ambiguous()).unwrap();
    let found = ambiguities(&plan);
    assert_eq!(found.len(), 1);
    let (service, total, pairs) = &found[0];
    assert_eq!((service.as_str(), *total), ("Hp", 4950));
    let names: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("w0", "w1"),
            ("w0", "w2"),
            ("w1", "w2"),
            ("w0", "w3"),
            ("w1", "w3"),
            ("w2", "w3"),
            ("w0", "w4"),
            ("w1", "w4"),
        ]
    );
    let message = &plan.diagnostics()[0].message;
    assert_eq!(
        message,
        "4950 pairs of nodes conflict on Hp and are ordered only by registration order \
         (earlier node first): `w0` and `w1`, `w0` and `w2`, `w1` and `w2`, `w0` and `w3`, \
         `w1` and `w3`, `w2` and `w3`, `w0` and `w4`, `w1` and `w4`, and 4942 more; declare \
         one node of each pair after the other to make the order intentional"
    );
}

/// Every ambiguous pair by brute force: conflicting, and neither reaches the
/// other through the explicit edges given as `(from, to)`.
fn brute_force(
    n: usize,
    reads: &[Vec<usize>],
    writes: &[Vec<usize>],
    exclusive: &[bool],
    explicit: &[(usize, usize)],
) -> (Vec<u64>, u64) {
    let mut reach = vec![vec![false; n]; n];
    for &(a, b) in explicit {
        reach[a][b] = true;
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if reach[i][k] && reach[k][j] {
                    reach[i][j] = true;
                }
            }
        }
    }
    let services = 3;
    let mut per_service = vec![0u64; services];
    let mut world = 0;
    for i in 0..n {
        for j in i + 1..n {
            if reach[i][j] || reach[j][i] {
                continue;
            }
            for (s, count) in per_service.iter_mut().enumerate() {
                let touches = |x: usize| reads[x].contains(&s) || writes[x].contains(&s);
                let write = writes[i].contains(&s) || writes[j].contains(&s);
                if touches(i) && touches(j) && write {
                    *count += 1;
                }
            }
            if exclusive[i] || exclusive[j] {
                world += 1;
            }
        }
    }
    (per_service, world)
}

#[test]
fn grouped_counts_match_a_brute_force_count() {
    // 150 nodes (three chunks of 64), an `after` edge for one node in three.
    grouped_counts_match_brute_force(150, 3, 0x9e37_79b9_7f4a_7c15);
    // 400 nodes, an edge for every other one: long chains, so that first
    // fit's stages move late-registered nodes into early chunks.
    grouped_counts_match_brute_force(400, 2, 0x2545_f491_4f6c_dd1d);
}

/// A deterministic pseudo-random graph of `n` nodes over 3 services, an
/// `after` edge to a random earlier node for one node in `edge_odds`, and an
/// exclusive node now and then (registration order is a topological order
/// of the edges): SL0008's counts per service match a brute-force count,
/// with either packing.
fn grouped_counts_match_brute_force(n: usize, edge_odds: u64, seed: u64) {
    let mut seed = seed;
    let mut next = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let names = ["A", "B", "C"];
    let mut reads = vec![Vec::new(); n];
    let mut writes = vec![Vec::new(); n];
    let mut exclusive = vec![false; n];
    let mut explicit = Vec::new();
    let mut graph = Graph::new();
    for i in 0..n {
        let mut node = NodeBuilder::new(format!("n{i}"));
        for (s, name) in names.iter().enumerate() {
            match next(4) {
                0 => {
                    reads[i].push(s);
                    node = node.reads_named(*name);
                }
                1 => {
                    writes[i].push(s);
                    node = node.gates_named(*name);
                }
                _ => {}
            }
        }
        if next(40) == 0 {
            exclusive[i] = true;
            node = node.exclusive();
        }
        if i > 0 && next(edge_odds) == 0 {
            let before = next(i as u64) as usize;
            explicit.push((before, i));
            node = node.after(format!("n{before}"));
        }
        graph.add_node(node);
    }
    let (per_service, world) = brute_force(n, &reads, &writes, &exclusive, &explicit);
    let mut want: Vec<(String, u64)> = names
        .iter()
        .zip(&per_service)
        .filter(|(_, total)| **total > 0)
        .map(|(name, total)| (name.to_string(), *total))
        .collect();
    if world > 0 {
        want.push(("exclusive".to_owned(), world));
    }
    want.sort();
    // First fit packs by stage, so its plan order is not the order the
    // sort released the nodes in: the chunks' reach passes must not care.
    for packing in [Packing::Order, Packing::FirstFit] {
        let options = PlanOptions {
            packing,
            ..warn_ambiguous()
        };
        let plan = graph.build(&options).unwrap();
        let mut got: Vec<(String, u64)> = ambiguities(&plan)
            .into_iter()
            .map(|(service, total, _)| (service, total))
            .collect();
        // Groups come in service id order, which is first use.
        got.sort();
        assert_eq!(got, want, "{packing:?}");
    }
    assert!(want.len() == 4, "the graph exercises every group: {want:?}");
}

#[test]
fn explicit_paths_through_markers_order_a_pair() {
    let mut graph = Graph::new();
    graph.add_marker(Marker::new("Frame"));
    graph.add_node(NodeBuilder::new("a").gates_named("Hp").before("Frame"));
    graph.add_node(NodeBuilder::new("b").gates_named("Hp").after("Frame"));
    graph.add_node(NodeBuilder::new("c").gates_named("Hp"));
    let plan = graph.build(&warn_ambiguous()).unwrap();
    let found = ambiguities(&plan);
    let pairs: Vec<(String, String)> = vec![("a".into(), "c".into()), ("b".into(), "c".into())];
    assert_eq!(found, [("Hp".to_owned(), 2, pairs)]);
}

#[test]
fn an_exclusive_node_is_its_own_group() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("save").exclusive());
    graph.add_node(NodeBuilder::new("idle"));
    graph.add_node(NodeBuilder::new("after_save").after("save"));
    let plan = graph.build(&warn_ambiguous()).unwrap();
    assert_eq!(
        plan.diagnostics()[0].to_string(),
        "warning[SL0008]: `save` and `idle` conflict (one is exclusive) and are ordered only \
         by registration order (`save` first); declare `idle` after `save` (or the reverse) to \
         make the order intentional"
    );
    assert_eq!(plan.diagnostics().len(), 1);
}

#[test]
fn thousands_of_writers_of_one_service_are_one_diagnostic() {
    let n: u64 = if cfg!(miri) { 100 } else { 3000 };
    let mut graph = Graph::new();
    for i in 0..n {
        graph.add_node(NodeBuilder::new(format!("s{i}")).gates_named("Hp"));
    }
    let plan = graph.build(&warn_ambiguous()).unwrap();
    let found = ambiguities(&plan);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, n * (n - 1) / 2);
    assert_eq!(found[0].2.len(), 8);
    assert!(plan.diagnostics()[0].nodes.len() <= 16);
}

#[test]
fn typed_services_share_ids_with_the_registry() {
    struct Hp(u32);
    struct Score;
    let mut graph = Graph::new();
    let hp = graph.registry_mut().insert(Hp(10));
    graph.add_node(NodeBuilder::new("poison").gates::<Hp>());
    graph.add_node(NodeBuilder::new("hud").reads::<Hp>().gates::<Score>());
    let plan = graph.build(&PlanOptions::default()).unwrap();
    assert_eq!(
        plan.edge_between(NodeIndex(0), NodeIndex(1))
            .unwrap()
            .reasons,
        [Reason::Lane {
            service: hp,
            kind: LaneKind::SharedAfterGate
        }]
    );
    assert_eq!(graph.registry().get::<Hp>().map(|hp| hp.0), Some(10));
}
