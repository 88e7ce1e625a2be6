//! The frame-time plot: regenerated from a small run, well-formed SVG with
//! both line series and the five busiest nodes' stacked areas.

use sluice_game::{Config, plot, run};

#[test]
fn plot_is_well_formed_svg_with_every_series() {
    let report = run(
        &Config {
            threads: 2,
            frames: 40,
            entities: 400,
            timing: true,
        },
        |_| {},
    )
    .expect("the game runs");
    let path = std::env::temp_dir().join(format!("sluice-game-plot-{}.svg", std::process::id()));
    plot::write(&report, &path).expect("the plot is written");
    let text = std::fs::read_to_string(&path).expect("the plot is there");
    let _ = std::fs::remove_file(&path);

    let svg = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(svg.root_element().tag_name().name(), "svg");
    let labels: Vec<String> = svg
        .descendants()
        .filter(|node| node.has_tag_name("text"))
        .filter_map(|node| node.text())
        .map(|text| text.trim().to_owned())
        .collect();
    let busiest: Vec<&str> = report
        .busiest_nodes()
        .into_iter()
        .take(5)
        .map(|node| report.name(node))
        .collect();
    assert_eq!(busiest.len(), 5, "five nodes ran");
    for label in ["frame time", "peak of the last 120 frames"]
        .into_iter()
        .chain(busiest.iter().copied())
    {
        assert!(
            labels.iter().any(|text| text == label),
            "no series labelled {label:?} in {labels:?}"
        );
    }
    // Two line series (polylines) and five areas (filled polygons).
    let count = |tag: &str| {
        svg.descendants()
            .filter(|node| node.has_tag_name(tag))
            .count()
    };
    assert!(count("polyline") >= 2, "{} polylines", count("polyline"));
    assert!(count("polygon") >= 5, "{} polygons", count("polygon"));
}
