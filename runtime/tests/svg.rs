//! `Plan::to_svg`: the picture of lanes and gates is well-formed XML with one
//! lane per service, a bar per gate, a dot per shared access, escaped names,
//! group frames, and the same bytes every time.

use sluice::{Cadence, Graph, Group, NodeBuilder, Plan, PlanOptions};

/// The elements of `svg` whose `class` is `class`.
fn classed<'a, 'i>(doc: &'a roxmltree::Document<'i>, class: &str) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .collect()
}

fn parse(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML ({e}):\n{svg}"))
}

/// Reference 003's render pipeline (two gates bracketing the recorders, a
/// reader off to the side), the scheduler's own factories (a produced graph
/// consumed by a read and a gate), an exclusive node, and a node whose name
/// needs escaping.
fn frame() -> Graph {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("render_start").gates_named("CommandLists"));
    graph.add_node(NodeBuilder::new("imgui").reads_named("CommandLists"));
    for (name, target) in [("terrain", "CommandLists"), ("instanced", "")] {
        let node = NodeBuilder::new(name)
            .reads_named("QuadFactory")
            .reads_named("SpriteUvs");
        graph.add_node(match target {
            "" => node.gates_named("InstanceBuffer"),
            lists => node.reads_named(lists),
        });
    }
    graph.add_node(
        NodeBuilder::new("render_commit")
            .gates_named("GraphicsDevice")
            .reads_named("Window")
            .gates_named("CommandLists"),
    );
    graph.add_node(NodeBuilder::new("banner").reads_named("Banners"));
    graph.add_node(NodeBuilder::new("graph_factory").produces_named("NextGraph"));
    graph.add_node(
        NodeBuilder::new("execution_factory")
            .reads_named("NextGraph")
            .produces_named("NextExecution"),
    );
    graph.add_node(NodeBuilder::new("inspect").gates_named("NextGraph"));
    graph.add_node(NodeBuilder::new("save").exclusive().after("render_commit"));
    graph.add_node(NodeBuilder::new("a<b&c").reads_named("Hp\"&'"));
    graph
}

fn plan(graph: &Graph) -> Plan {
    graph.build(&PlanOptions::default()).expect("plans")
}

#[test]
fn well_formed_with_a_lane_per_service_a_bar_per_gate_and_a_dot_per_read() {
    let graph = frame();
    let plan = plan(&graph);
    let svg = plan.to_svg(graph.view());
    let doc = parse(&svg);
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert_eq!(
        doc.root_element().tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );

    let lanes: Vec<&str> = classed(&doc, "lane")
        .iter()
        .map(|lane| lane.attribute("data-service").unwrap())
        .collect();
    let mut sorted = lanes.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "Banners",
            "CommandLists",
            "GraphicsDevice",
            "Hp\"&'",
            "InstanceBuffer",
            "NextExecution",
            "NextGraph",
            "QuadFactory",
            "SpriteUvs",
            "Window",
        ]
    );

    let nodes = graph.nodes();
    let gates: usize = nodes.iter().map(|n| n.access().gated().count()).sum();
    let reads: usize = nodes.iter().map(|n| n.access().shared().count()).sum();
    assert_eq!((gates, reads), (5, 10));
    assert_eq!(classed(&doc, "gate").len(), gates);
    assert_eq!(classed(&doc, "shared").len(), reads);
    assert_eq!(classed(&doc, "produce").len(), 2);
    // The factory's NextGraph goes to execution_factory (a read) and
    // inspect (a gate); nothing consumes NextExecution.
    assert_eq!(classed(&doc, "arrow").len(), 2);
    assert_eq!(classed(&doc, "exclusive").len(), 1);
    assert_eq!(classed(&doc, "node").len(), plan.len());
    assert!(classed(&doc, "group").is_empty());
}

#[test]
fn names_are_escaped() {
    let graph = frame();
    let svg = plan(&graph).to_svg(graph.view());
    assert!(svg.contains("a&lt;b&amp;c"), "{svg}");
    assert!(!svg.contains("a<b&c"));
    let doc = parse(&svg);
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(texts.contains(&"a<b&c"), "{texts:?}");
    assert!(texts.contains(&"Hp\"&'"), "{texts:?}");
    // XML 1.0 cannot hold most control characters: they are replaced.
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("bell\u{7}").reads_named("tab\tand\u{0}nul"));
    let svg = plan(&graph).to_svg(graph.view());
    parse(&svg);
    assert!(svg.contains("bell\u{FFFD}"));
}

#[test]
fn the_same_plan_gives_the_same_bytes() {
    let (first, second) = (frame(), frame());
    let svg = plan(&first).to_svg(first.view());
    assert_eq!(svg, plan(&first).to_svg(first.view()));
    assert_eq!(svg, plan(&second).to_svg(second.view()));
    assert_eq!(svg, plan(&first).to_svg(first.view()));
}

#[test]
fn shared_accesses_of_one_stage_sit_side_by_side() {
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("write").gates_named("Hp"));
    for reader in ["a", "b", "c"] {
        graph.add_node(NodeBuilder::new(reader).reads_named("Hp"));
    }
    graph.add_node(NodeBuilder::new("commit").gates_named("Hp"));
    let plan = plan(&graph);
    assert_eq!(plan.stage_count(), 3);
    let svg = plan.to_svg(graph.view());
    let doc = parse(&svg);
    let dots: Vec<(f64, f64)> = classed(&doc, "shared")
        .iter()
        .map(|dot| {
            let at = |name| dot.attribute(name).unwrap().parse::<f64>().unwrap();
            (at("cx"), at("cy"))
        })
        .collect();
    assert_eq!(dots.len(), 3);
    // Three different columns inside the one lane, three rows of one stage.
    assert!(dots[0].0 < dots[1].0 && dots[1].0 < dots[2].0, "{dots:?}");
    assert!(dots[0].1 < dots[1].1 && dots[1].1 < dots[2].1, "{dots:?}");
    let bars = classed(&doc, "gate");
    assert_eq!(bars.len(), 2);
    let bar = |i: usize, name| bars[i].attribute(name).unwrap().parse::<f64>().unwrap();
    for &(x, _) in &dots {
        assert!(bar(0, "x") < x && x < bar(0, "x") + bar(0, "width"));
    }
    // The gates come before and after the reads, down the lane.
    assert!(bar(0, "y") < dots[0].1 && dots[2].1 < bar(1, "y"));
}

#[test]
fn groups_are_frames_around_their_members() {
    let mut graph = Graph::new();
    graph.add_group(Group::new("Simulation"));
    graph.add_group(Group::new("Physics").in_group("Simulation"));
    graph.add_node(
        NodeBuilder::new("integrate")
            .gates_named("Pos")
            .in_group("Physics"),
    );
    graph.add_node(
        NodeBuilder::new("collide")
            .reads_named("Pos")
            .in_group("Physics"),
    );
    graph.add_node(
        NodeBuilder::new("think")
            .gates_named("Mind")
            .in_group("Simulation"),
    );
    graph.add_node(NodeBuilder::new("draw").reads_named("Pos"));
    let plan = plan(&graph);
    let svg = plan.to_svg(graph.view());
    let doc = parse(&svg);
    let frames: Vec<&str> = classed(&doc, "group")
        .iter()
        .map(|frame| frame.children().find_map(|c| c.text()).unwrap())
        .collect();
    // Stage 0: integrate (Physics in Simulation) and think (Simulation):
    // one Simulation frame around both, one Physics frame; stage 1: collide.
    assert_eq!(frames, ["Simulation", "Physics", "Simulation", "Physics"]);
    assert!(svg.contains("Simulation › Physics"));
}

#[test]
fn cadences_are_panels_on_the_same_lanes() {
    let mut graph = Graph::new();
    graph.add_node(
        NodeBuilder::new("integrate")
            .gates_named("Pos")
            .cadence(Cadence::Fixed),
    );
    graph.add_node(NodeBuilder::new("draw").reads_named("Pos"));
    graph.add_node(NodeBuilder::new("ui").gates_named("Ui"));
    let plans = graph.build_all(&PlanOptions::default()).expect("plans");
    let svg = sluice::plan::to_svg(
        graph.view(),
        &[("fixed", plans.fixed()), ("variable", plans.variable())],
    );
    let doc = parse(&svg);
    assert_eq!(classed(&doc, "panel").len(), 2);
    assert_eq!(classed(&doc, "lane").len(), 2);
    assert_eq!(classed(&doc, "node").len(), 3);
    assert_eq!(classed(&doc, "gate").len(), 2);
    let empty = Graph::new();
    let svg = plan(&empty).to_svg(empty.view());
    assert!(
        parse(&svg)
            .descendants()
            .any(|n| n.text() == Some("no nodes"))
    );
}

#[test]
fn hundreds_of_nodes_stay_readable() {
    // A deterministic pseudo-random frame: 300 nodes over 40 services.
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let mut graph = Graph::new();
    for i in 0..300 {
        let name = if i == 7 {
            "a_system_with_a_rather_long_name_that_goes_on_and_on".to_owned()
        } else {
            format!("system_{i}")
        };
        let mut node = NodeBuilder::new(name);
        let mut taken = Vec::new();
        for _ in 0..1 + next(4) {
            let service = next(40);
            if taken.contains(&service) {
                continue;
            }
            taken.push(service);
            let service = format!("Service{service}");
            node = if next(4) == 0 {
                node.gates_named(service)
            } else {
                node.reads_named(service)
            };
        }
        graph.add_node(node);
    }
    let plan = plan(&graph);
    let svg = plan.to_svg(graph.view());
    let doc = parse(&svg);
    assert_eq!(classed(&doc, "node").len(), 300);
    let lanes = classed(&doc, "lane").len();
    assert!(lanes <= 40 && lanes > 30, "{lanes}");
    // Long names are cut (whole in the tooltip), the canvas fits the rows.
    assert!(svg.contains("a_system_with_a_rather_long_nam…"));
    assert!(svg.contains("<title>a_system_with_a_rather_long_name_that_goes_on_and_on (stage"));
    let size = |name| {
        doc.root_element()
            .attribute(name)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(size("height") > 300.0 * 20.0 && size("height") < 300.0 * 20.0 + 2000.0);
    assert!(size("width") < 2500.0, "{}", size("width"));
}

/// `World::plan_svg` draws a world's own plans: the fixed cadence's panel
/// above the variable one's, on the world's lanes (its two built-in
/// factories among the nodes).
#[test]
fn a_world_draws_its_plans() {
    struct Pos(f32);
    let mut world = sluice::World::new();
    world.insert(Pos(0.0));
    world.add_system(
        NodeBuilder::new("integrate")
            .cadence(Cadence::Fixed)
            .system(|pos: &mut Pos| pos.0 += 1.0),
    );
    world.add_system(NodeBuilder::new("draw").system(|_: &Pos| {}));
    let svg = world.plan_svg().expect("plans");
    let doc = parse(&svg);
    assert_eq!(classed(&doc, "panel").len(), 2);
    let names: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    for name in ["fixed cadence", "variable cadence", "integrate", "draw"] {
        assert!(
            names.iter().any(|text| text.contains(name)),
            "{name} in {names:?}"
        );
    }
    world.run_iteration().expect("runs");
    assert_eq!(
        world.plan_svg().expect("plans"),
        svg,
        "the same plans, the same bytes"
    );
}
