//! The guide's chapter "The plan and `why`" (`docs/guide/02-the-plan.md`), runnable:
//! `cargo run --example plan`.
//!
//! Builds a small frame, prints its plan order, stage view, edges with their
//! reasons and a `why` chain, then shows the diagnostics: an ambiguity
//! (SL0008) made intentional, and a registration with several errors
//! reported at once.

use sluice::{AmbiguityLevel, IterationError, NodeBuilder, PlanOptions, World};

struct Input(u32);
struct Pos(u32);
struct Intent(u32);
struct Terrain(u32);
struct NavMesh(u32);

fn main() -> Result<(), IterationError> {
    let mut world = World::new();
    world.insert(Input(0));
    world.insert(Pos(0));
    world.insert(Intent(0));
    world.insert(Terrain(3));
    // Orders a reader would guess from the names are declared, so SL0008 stays quiet.
    let input = world.add_system(NodeBuilder::new("input").system(|i: &mut Input| i.0 += 1));
    let physics = world.add_system(
        NodeBuilder::new("physics")
            .after("input")
            .system(|i: &Input, p: &mut Pos| p.0 += i.0),
    );
    let ai = world.add_system(
        NodeBuilder::new("ai")
            .after("input")
            .system(|i: &Input, mesh: &NavMesh, intent: &mut Intent| intent.0 = i.0 + mesh.0),
    );
    // Registered after its consumer: the produce edge still puts it first.
    let navmesh =
        world.add_factory(NodeBuilder::new("navmesh").factory(|t: &Terrain| NavMesh(t.0 * 2)));
    let render = world.add_system(
        NodeBuilder::new("render")
            .after("physics")
            .after("ai")
            .system(|p: &Pos, t: &Intent| assert_eq!((p.0, t.0), (1, 7))),
    );
    world.run_iteration()?;

    let plan = world.plan()?;
    let name = |n| plan.node_name(n).to_owned();
    let order: Vec<String> = plan.order().map(name).collect();
    println!("plan order: {}", order.join(", "));
    assert!(plan.position(navmesh) < plan.position(ai));

    for (stage, members) in plan.stages().enumerate() {
        let names: Vec<String> = members.iter().map(|&n| name(n)).collect();
        println!("stage {stage}: {}", names.join(" "));
    }
    assert_eq!(plan.stage_of(physics), plan.stage_of(ai)); // they share Input: together
    assert_eq!(plan.stage_of(render), 2);

    println!("edges:");
    for edge in plan.edges() {
        println!("  {edge}");
    }
    println!("why does render wait for input?");
    let chain = plan.why(input, render).expect("render waits for input");
    for edge in &chain {
        println!("  {edge}");
    }
    assert_eq!(chain.len(), 2);
    assert!(
        plan.why(physics, ai).is_none(),
        "physics and ai run together"
    );
    assert!(
        plan.diagnostics().is_empty(),
        "every conflict is ordered on purpose"
    );

    // Two writers of one service, ordered only by registration order.
    let mut world = World::new();
    world.insert(Pos(10));
    world.set_plan_options(PlanOptions {
        ambiguity: AmbiguityLevel::Error,
        ..PlanOptions::default()
    });
    world.add_system(NodeBuilder::new("push").system(|p: &mut Pos| p.0 += 5));
    let clamp = world.add_system(NodeBuilder::new("clamp").system(|p: &mut Pos| p.0 = p.0.min(12)));
    match world.run_iteration() {
        Err(IterationError::Plan(errors)) => {
            let first = errors.errors().next().expect("one error");
            println!("refused: {first}");
            assert_eq!(first.code, "SL0008");
        }
        other => panic!("expected SL0008 as an error, got {other:?}"),
    }
    world.remove_node(clamp).expect("registered");
    world.add_system(
        NodeBuilder::new("clamp")
            .after("push")
            .system(|p: &mut Pos| p.0 = p.0.min(12)),
    );
    world.run_iteration()?;
    assert_eq!(world.get::<Pos>().map(|p| p.0), Some(12));
    println!("with `clamp` after `push`: planned, Pos = 12");

    // Every problem is reported at once, each with its code.
    let mut world = World::new();
    world.add_system(NodeBuilder::new("a").after("b").run(|_| {}));
    world.add_system(NodeBuilder::new("b").after("a").run(|_| {}));
    world.add_system(NodeBuilder::new("c").after("ghost").run(|_| {}));
    let Err(IterationError::Plan(errors)) = world.run_iteration() else {
        panic!("a cycle and an unknown target");
    };
    println!("{errors}");
    let mut codes: Vec<&str> = errors.errors().map(|d| d.code).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["SL0001", "SL0002"]);
    Ok(())
}
