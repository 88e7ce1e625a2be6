//! The README's pictures stay true: `docs/game_plan.svg` is the game's
//! lanes-and-gates picture as a run draws it now (byte for byte: the plan
//! does not depend on the entity count or the thread count), and
//! `docs/frame_times.svg` is a well-formed plot with both line series.
//! Regenerate both with
//! `cargo run --release -p sluice-game -- --plot docs/frame_times.svg --plan docs/game_plan.svg`.

use sluice_game::{Config, run};

fn docs(file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter_map(|node| node.text())
        .map(|text| text.trim().to_owned())
        .collect()
}

#[test]
fn the_plan_picture_is_the_games_plan() {
    let report = run(
        &Config {
            threads: 1,
            frames: 3,
            entities: 200,
            timing: false,
        },
        |_| {},
    )
    .expect("the game runs");
    let texts = texts(&report.plan_svg);
    for name in [
        "fixed cadence",
        "variable cadence",
        "integrate",
        "direct",
        "stage_cues",
        "particles",
    ] {
        assert!(texts.iter().any(|text| text == name), "{name} drawn");
    }
    assert!(
        report.plan_svg == docs("game_plan.svg"),
        "docs/game_plan.svg is stale: regenerate it (see this file's header)"
    );
}

#[test]
fn the_frame_time_plot_is_well_formed() {
    let texts = texts(&docs("frame_times.svg"));
    for label in [
        "frame time",
        "peak of the last 120 frames",
        "the five busiest nodes, stacked",
    ] {
        assert!(
            texts.iter().any(|text| text == label),
            "{label} in the plot"
        );
    }
}
