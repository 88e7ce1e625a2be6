//! The guide's chapter "Organising a frame" (`docs/guide/03-organising-a-frame.md`), runnable:
//! `cargo run --example organising`.
//!
//! A frame organised with phases, nested groups, a chain, a fixed cadence,
//! a startup schedule, a named schedule and lifecycle hooks; then a group
//! run only while the game is not paused (one condition for all its
//! members) and an ambiguity silenced on purpose. Every node appends its
//! name to a log, so the run order is printed and checked.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice::{
    Cadence, FixedTime, Group, IterationError, Level, NodeBuilder, NodeSpec, Phase, Schedule,
    TreeItem, World,
};

/// Whether the game is paused: the condition of the `Simulation` group.
struct Paused(bool);

/// What ran, in order (one gated service: every node is ordered against the others).
struct Log(Vec<String>);

/// A node that logs its own name when it runs.
fn logging(node: NodeBuilder) -> NodeSpec {
    let name = node.name().to_owned();
    node.system(move |log: &mut Log| log.0.push(name.clone()))
}

fn take_log(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.get_mut::<Log>().expect("inserted").0)
}

fn main() -> Result<(), IterationError> {
    let lifecycle = Arc::new(Mutex::new(Vec::new()));
    let mut world = World::new();
    world.insert(Log(Vec::new()));
    world.set_fixed_timestep(Duration::from_secs(1) / 60);

    // Simulation > { Physics, Ai (after Physics) }; registered out of order on purpose.
    world.add_group(Group::new("Simulation"));
    world.add_group(Group::new("Ai").in_group("Simulation").after("Physics"));
    world.add_group(Group::new("Physics").in_group("Simulation"));

    world.add_system(logging(
        NodeBuilder::new("present").phase(Phase::PostUpdate),
    ));
    world.add_system(logging(NodeBuilder::new("decide").in_group("Ai")));
    world.add_system(logging(
        NodeBuilder::new("perceive").in_group("Ai").order_first(),
    ));
    world.add_system(logging(NodeBuilder::new("collide").in_group("Physics")));
    world.add_system(logging(
        NodeBuilder::new("read_input").phase(Phase::PreUpdate),
    ));
    world.add_system(logging(
        NodeBuilder::new("integrate").cadence(Cadence::Fixed),
    ));
    world.add_system(logging(
        NodeBuilder::new("load_level").in_schedule(Schedule::Startup),
    ));
    world.add_system(logging(
        NodeBuilder::new("save").in_schedule(Schedule::named("Save")),
    ));
    let created = Arc::clone(&lifecycle);
    let destroyed = Arc::clone(&lifecycle);
    let audio = world.add_system(
        NodeBuilder::new("audio")
            .run(|_| {})
            .on_create(move |_| created.lock().expect("log").push("create audio"))
            .on_destroy(move |_| destroyed.lock().expect("log").push("destroy audio")),
    );

    // 40 ms at 60 Hz: two whole fixed steps, then the variable plan.
    world.update(Duration::from_millis(40))?;
    let frame = take_log(&mut world);
    println!("first update: {}", frame.join(" -> "));
    assert_eq!(
        frame,
        [
            "load_level",
            "integrate",
            "integrate",
            "read_input",
            "collide",
            "perceive",
            "decide",
            "present",
        ]
    );
    let fixed = world.get::<FixedTime>().expect("the world keeps it");
    println!(
        "fixed: {} steps of {:?}, alpha {:.2}",
        fixed.steps, fixed.step, fixed.alpha
    );
    assert_eq!((fixed.steps, fixed.total), (2, 2));

    // The second update: no Startup, one fixed step (16.7 ms + 6.7 ms left over).
    world.update(Duration::from_millis(10))?;
    let frame = take_log(&mut world);
    println!("second update: {}", frame.join(" -> "));
    assert_eq!(frame.first().map(String::as_str), Some("integrate"));
    assert!(!frame.iter().any(|name| name == "load_level"));

    world.run_schedule("Save")?;
    assert_eq!(take_log(&mut world), ["save"]);
    println!("run_schedule(\"Save\"): save");

    // The group tree of the variable plan.
    let plan = world.plan()?;
    println!("tree:");
    for (depth, item) in plan.tree() {
        let name = match item {
            TreeItem::Group(group) => format!("[{}]", plan.hierarchy().group_name(group)),
            TreeItem::Node(node) => plan.node_name(node).to_owned(),
        };
        println!("  {}{name}", "  ".repeat(depth));
    }

    world.remove_node(audio).expect("registered");
    assert_eq!(
        *lifecycle.lock().expect("log"),
        ["create audio", "destroy audio"]
    );
    println!("lifecycle: create audio, destroy audio");

    // One condition for the whole Simulation group (Bevy's
    // `configure_sets(Simulation.run_if(..))`), evaluated once per frame.
    world.insert(Paused(true));
    world.run_group_if("Simulation", |paused: &Paused| !paused.0);
    world.run_iteration()?;
    let frame = take_log(&mut world);
    println!("paused: {}", frame.join(" -> "));
    assert_eq!(frame, ["read_input", "present"]);
    world.insert(Paused(false));
    world.run_iteration()?;
    assert_eq!(take_log(&mut world).len(), 5);

    // Two overlays that may draw in either order, on purpose: still
    // reported, as silenced, never as a warning.
    let overlay = |name| {
        NodeBuilder::new(name)
            .phase(Phase::PostUpdate)
            .after("present")
    };
    world.add_system(logging(overlay("fps")));
    world.add_system(logging(overlay("ping").ambiguous_with("fps")));
    let plan = world.plan()?;
    let silenced: Vec<String> = plan
        .diagnostics()
        .iter()
        .filter(|d| d.level == Level::Silenced)
        .map(ToString::to_string)
        .collect();
    for line in &silenced {
        println!("{line}");
    }
    assert!(silenced.iter().any(|d| d.contains("`fps` and `ping`")));
    Ok(())
}
