//! Issue 36, silencing an ambiguity on purpose: per node and per group
//! (`ambiguous_with`, `ambiguous_with_all`), reported as silenced (by whom
//! and how), never dropped, never a warning or an error; a name that
//! matches nothing is SL0002, naming it twice silences once.

use sluice::{
    AmbiguityLevel, DiagnosticKind, Graph, Group, Level, NodeBuilder, NodeIndex, NodeRef, Plan,
    PlanOptions, Relation, SilencedBy,
};

fn options(ambiguity: AmbiguityLevel) -> PlanOptions {
    PlanOptions {
        ambiguity,
        ..PlanOptions::default()
    }
}

/// `(level, text)` of every SL0008 of the plan.
fn ambiguities(plan: &Plan) -> Vec<(Level, String)> {
    plan.diagnostics()
        .iter()
        .filter(|d| d.code == "SL0008")
        .map(|d| (d.level, d.to_string()))
        .collect()
}

#[test]
fn a_node_silences_one_pair_which_stays_reported_as_silenced_by_it() {
    let mut graph = Graph::new();
    graph.add_node(
        NodeBuilder::new("health")
            .gates_named("Hp")
            .ambiguous_with("poison"),
    );
    graph.add_node(NodeBuilder::new("poison").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("regen").gates_named("Hp"));
    let plan = graph.build(&options(AmbiguityLevel::Warn)).unwrap();
    assert_eq!(
        ambiguities(&plan),
        [
            (
                Level::Warning,
                "warning[SL0008]: 2 pairs of nodes conflict on Hp and are ordered only by \
                 registration order (earlier node first): `health` and `regen`, `poison` and \
                 `regen`; declare one node of each pair after the other to make the order \
                 intentional"
                    .to_owned()
            ),
            (
                Level::Silenced,
                "silenced[SL0008]: 1 pair conflicting on Hp ordered by registration order on \
                 purpose: `health` and `poison` (silenced by `health`: \
                 ambiguous_with(\"poison\"))"
                    .to_owned()
            ),
        ]
    );
    let silenced = plan
        .diagnostics()
        .iter()
        .find(|d| d.level == Level::Silenced)
        .unwrap();
    let hp = graph.view().table().id_by_name("Hp").unwrap();
    assert_eq!(
        silenced.kind,
        DiagnosticKind::SilencedAmbiguity {
            service: Some(hp),
            pairs: vec![(
                NodeIndex(0),
                NodeIndex(1),
                SilencedBy {
                    by: NodeRef::Node(NodeIndex(0)),
                    with: Some("poison".into()),
                }
            )],
            total: 1,
        }
    );
    assert_eq!(silenced.nodes, ["health", "poison"]);
}

#[test]
fn silenced_pairs_are_never_errors_and_not_looked_for_when_ignored() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("a").gates_named("Hp").ambiguous_with_all());
    graph.add_node(NodeBuilder::new("b").gates_named("Hp"));
    graph.add_node(NodeBuilder::new("c").gates_named("Hp"));
    let errors = graph.build(&options(AmbiguityLevel::Error)).unwrap_err();
    let refused: Vec<String> = errors.errors().map(|d| d.to_string()).collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("`b` and `c`"), "{refused:?}");
    assert!(
        !refused[0].contains("`a`"),
        "a's pairs are silenced: {refused:?}"
    );
    let silenced: Vec<_> = errors
        .diagnostics()
        .iter()
        .filter(|d| d.level == Level::Silenced)
        .collect();
    assert_eq!(silenced.len(), 1);
    assert!(
        silenced[0].message.starts_with("2 pairs"),
        "{}",
        silenced[0]
    );
    assert!(
        silenced[0].message.contains("ambiguous_with_all()"),
        "{}",
        silenced[0]
    );

    let plan = graph.build(&options(AmbiguityLevel::Ignore)).unwrap();
    assert!(plan.diagnostics().is_empty());
}

#[test]
fn a_group_silences_for_every_member_at_any_depth() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("Ai").ambiguous_with("Render"));
    graph.add_group(Group::new("Think").in_group("Ai"));
    graph.add_group(Group::new("Render"));
    graph.add_node(
        NodeBuilder::new("decide")
            .in_group("Think")
            .gates_named("Hp"),
    );
    graph.add_node(
        NodeBuilder::new("draw")
            .in_group("Render")
            .reads_named("Hp"),
    );
    graph.add_node(NodeBuilder::new("stray").reads_named("Hp"));
    let plan = graph.build(&options(AmbiguityLevel::Warn)).unwrap();
    let found = ambiguities(&plan);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, Level::Warning);
    assert!(found[0].1.contains("`decide` and `stray`"), "{found:?}");
    assert_eq!(found[1].0, Level::Silenced);
    assert!(
        found[1]
            .1
            .contains("`decide` and `draw` (silenced by group `Ai`: ambiguous_with(\"Render\"))"),
        "{found:?}"
    );
    let DiagnosticKind::SilencedAmbiguity { pairs, .. } = &plan
        .diagnostics()
        .iter()
        .find(|d| d.level == Level::Silenced)
        .unwrap()
        .kind
    else {
        panic!("a silenced ambiguity");
    };
    assert!(matches!(pairs[0].2.by, NodeRef::Group(_)));

    // A group that silences all: every pair of its members.
    let mut graph = Graph::new();
    graph.add_group(Group::new("Debug").ambiguous_with_all());
    graph.add_node(
        NodeBuilder::new("overlay")
            .in_group("Debug")
            .gates_named("Hp"),
    );
    graph.add_node(NodeBuilder::new("game").gates_named("Hp"));
    let plan = graph.build(&options(AmbiguityLevel::Error)).unwrap();
    assert_eq!(ambiguities(&plan).len(), 1);
    assert_eq!(ambiguities(&plan)[0].0, Level::Silenced);
}

#[test]
fn naming_a_target_twice_silences_once() {
    let node = NodeBuilder::new("a")
        .gates_named("Hp")
        .ambiguous_with("b")
        .ambiguous_with("b");
    let group = Group::new("G").ambiguous_with("b").ambiguous_with("b");
    assert_eq!(group.silenced().with.len(), 1);
    let mut graph = Graph::new();
    graph.add_group(group);
    graph.add_node(node.in_group("G"));
    graph.add_node(NodeBuilder::new("b").gates_named("Hp"));
    let plan = graph.build(&options(AmbiguityLevel::Warn)).unwrap();
    assert_eq!(plan.diagnostics().len(), 1);
    assert_eq!(graph.view().node(NodeIndex(0)).silenced().with.len(), 1);
    let DiagnosticKind::SilencedAmbiguity { pairs, total, .. } = &plan.diagnostics()[0].kind else {
        panic!("{:?}", plan.diagnostics());
    };
    assert_eq!((pairs.len(), *total), (1, 1));
}

#[test]
fn an_unknown_name_is_refused_whatever_the_ambiguity_level() {
    for level in [AmbiguityLevel::Ignore, AmbiguityLevel::Warn] {
        let mut graph = Graph::new();
        graph.add_group(Group::new("G").ambiguous_with("Nowhere"));
        graph.add_node(NodeBuilder::new("a").ambiguous_with("nobody"));
        let errors = graph.build(&options(level)).unwrap_err();
        let found: Vec<_> = errors.errors().collect();
        assert_eq!(found.len(), 2, "{errors}");
        for (error, (name, target)) in found.iter().zip([("a", "nobody"), ("G", "Nowhere")]) {
            assert_eq!(error.code, "SL0002");
            assert!(
                error
                    .message
                    .contains(&format!("`{name}` is declared ambiguous_with `{target}`")),
                "{error}"
            );
            let DiagnosticKind::UnknownTarget { relation, .. } = &error.kind else {
                panic!("{error}");
            };
            assert_eq!(*relation, Relation::AmbiguousWith);
        }
    }
}
