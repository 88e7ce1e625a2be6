//! Rendering without a display: the game with its recorders and the
//! pinned commit, offscreen, on one thread and on a pool of three; the
//! plan's shape (pinned, spike-exempt present, every recorder before the
//! commit); selection; the command line.

use clap::Parser;
use sluice::Plan;
use sluice::{Entity, ExecutorKind, NodeIndex};
use sluice_game::Game;
use sluice_game::math::Vec2;
use sluice_game::units::{Pos, Team};
use sluice_game_window::draw::{BLUE, Camera, GROUND, RED, SELECTED};
use sluice_game_window::render::{RECORDERS, Screen, Selection};
use sluice_game_window::{Options, build_game, describe_unit, pick_unit};

fn options(threads: u16) -> Options {
    Options::parse_from([
        "sluice-game-window",
        "--entities",
        "600",
        "--threads",
        &threads.to_string(),
        "--width",
        "320",
        "--height",
        "180",
    ])
}

fn run(game: &mut Game, frames: u64) {
    for _ in 0..frames {
        game.frame().expect("a frame runs");
    }
}

fn screen(game: &Game) -> &Screen {
    game.world()
        .get_non_send::<Screen>()
        .expect("the screen lives on this thread")
}

fn node_named(plan: &Plan, name: &str) -> NodeIndex {
    plan.order()
        .find(|&node| plan.node_name(node) == name)
        .unwrap_or_else(|| panic!("`{name}` in the plan"))
}

#[test]
fn every_executor_and_thread_count_draws_the_same_frames() {
    let mut frames = Vec::new();
    for (threads, executor) in [
        (1, ExecutorKind::Serial),
        (3, ExecutorKind::Parallel),
        (2, ExecutorKind::Adaptive),
    ] {
        let mut game = build_game(&options(threads)).expect("the game starts");
        game.world_mut().set_executor(executor);
        run(&mut game, 40);
        let screen = screen(&game);
        assert_eq!(screen.presented(), 40, "one present a frame");
        frames.push((screen.framebuffer().clone(), screen.instances().to_vec()));
    }
    let one = &frames[0];
    for other in &frames[1..] {
        // The drain gives the instances in the order a serial run pushes them.
        assert_eq!(one.1, other.1, "the same instances in the same order");
        assert_eq!(one.0, other.0, "the same pixels");
    }
    let pixels = one.0.pixels();
    for colour in [RED, BLUE, GROUND] {
        assert!(pixels.contains(&colour), "{colour:06x} drawn");
    }
    // Ground first (under everything), units after.
    assert_eq!(one.1[0].colour, GROUND);
    assert!(one.1.len() > 600, "every unit and the terrain");
}

#[test]
fn the_present_is_pinned_exempt_and_after_every_recorder() {
    let mut game = build_game(&options(2)).expect("the game starts");
    run(&mut game, 3);
    let world = game.world_mut();
    let plan = world.plan().expect("planned");
    let commit = node_named(&plan, "render@commit");
    assert!(plan.is_pinned(commit) && plan.is_pinned(node_named(&plan, "render")));
    let position = |node: NodeIndex| plan.order().position(|n| n == node).expect("in order");
    for recorder in RECORDERS {
        let recorder = node_named(&plan, recorder);
        assert!(position(recorder) < position(commit));
        assert!(!plan.is_pinned(recorder), "recorders run on the pool");
        assert!(
            world.spike_history(recorder).is_some(),
            "recorders are watched"
        );
    }
    assert!(
        world.spike_history(commit).is_none(),
        "the present is exempt"
    );
}

#[test]
fn a_click_selects_the_nearest_unit_and_the_frame_rings_it() {
    let mut game = build_game(&options(2)).expect("the game starts");
    run(&mut game, 2);
    let world = game.world_mut();
    let (unit, at) = world
        .query::<(Entity, &Pos, &Team)>()
        .iter()
        .map(|(entity, pos, _)| (entity, pos.0))
        .next()
        .expect("a unit");
    let camera = Camera::default();
    let pixel = camera.to_screen(at, 320, 180);
    let picked = pick_unit(world, &camera, pixel, (320, 180), 12.0).expect("a unit there");
    let picked_at = world.entity(picked).and_then(|e| e.get::<Pos>().copied());
    let picked_at = picked_at.expect("a live unit").0;
    let distance = (picked_at - at).length() * camera.scale(320, 180);
    assert!(distance <= 12.0, "within reach: {distance} pixels");
    // Far outside the arena nothing is in reach.
    let nowhere = camera.to_screen(Vec2::new(-5_000.0, -5_000.0), 320, 180);
    assert_eq!(pick_unit(world, &camera, nowhere, (320, 180), 12.0), None);

    let lines = describe_unit(world, unit);
    assert!(lines.iter().any(|line| line.starts_with("Team(")));
    assert!(lines.iter().any(|line| line.starts_with("Health(")));
    assert!(lines.iter().any(|line| line.starts_with("Pos(")));

    *world.get_mut::<Selection>().expect("inserted") = Selection(Some(picked));
    run(&mut game, 1);
    let frame = screen(&game).framebuffer();
    assert!(
        frame.pixels().contains(&SELECTED),
        "the selection ring is drawn"
    );

    // A selection that no longer lives draws no ring and reads as gone.
    let world = game.world_mut();
    world.despawn(picked).expect("alive");
    run(&mut game, 1);
    assert!(!screen(&game).framebuffer().pixels().contains(&SELECTED));
    assert!(describe_unit(game.world(), picked)[0].ends_with("gone"));
}

#[test]
fn the_command_line_refuses_nonsense_with_clear_errors() {
    let refused = |args: &[&str]| {
        let mut line = vec!["sluice-game-window"];
        line.extend_from_slice(args);
        Options::try_parse_from(line)
            .expect_err("refused")
            .to_string()
    };
    assert!(refused(&["--threads", "0"]).contains("--threads"));
    assert!(refused(&["--width", "0"]).contains("--width"));
    assert!(
        refused(&["--height", "100000"]).contains("8192"),
        "no 40 GB framebuffer"
    );
    assert!(refused(&["--entities", "4000000000"]).contains("--entities"));
    assert!(refused(&["--entities", "many"]).contains("invalid digit"));
    assert!(
        refused(&["--frame", "3"]).contains("--frames"),
        "a suggestion"
    );
    let options = Options::try_parse_from(["sluice-game-window"]).expect("defaults");
    assert_eq!((options.width, options.height), (1280, 720));
    assert_eq!(options.frames, None);
}

#[test]
fn without_a_display_the_window_says_so_and_fails() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice-game-window"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .args(["--entities", "100", "--frames", "3"])
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is DISPLAY set?"), "{stderr}");
}
