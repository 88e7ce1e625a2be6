//! `frame_times.svg`: per-frame update time with the window's running peak
//! (above), and the five busiest nodes' times stacked (below).

use std::path::Path;

use plotters::prelude::*;

use std::time::Duration;

use crate::report::{FrameSample, RunReport, WINDOW};

/// The colours of the stacked nodes, busiest first.
const LAYERS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

/// Writes the plot of `report` to `path` as SVG.
///
/// # Errors
/// When drawing or writing the file fails.
pub fn write(report: &RunReport, path: &Path) -> Result<(), String> {
    draw(report, path).map_err(|error| error.to_string())
}

/// A line series: its label, colour, width and value per frame.
type Line = (String, RGBColor, u32, fn(&FrameSample) -> Duration);

fn draw(report: &RunReport, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1200, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(400);
    let frames = report.samples.len().max(1) as u64;
    let ms = |time: Duration| time.as_secs_f64() * 1e3;

    let top = report
        .samples
        .iter()
        .map(|sample| ms(sample.window_peak))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.1;
    let mut chart = ChartBuilder::on(&upper)
        .caption(
            format!(
                "frame time: {} units, {} threads",
                report.config.entities, report.config.threads
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0..frames, 0.0..top)?;
    chart.configure_mesh().x_desc("frame").y_desc("ms").draw()?;
    let lines: [Line; 2] = [
        ("frame time".to_owned(), BLUE, 1, |sample| sample.time),
        (
            format!("peak of the last {WINDOW} frames"),
            RED,
            2,
            |sample| sample.window_peak,
        ),
    ];
    for (label, colour, width, value) in lines {
        chart
            .draw_series(LineSeries::new(
                report
                    .samples
                    .iter()
                    .map(|sample| (sample.frame, ms(value(sample)))),
                colour.stroke_width(width),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;

    // Cumulative per-frame times of the busiest nodes: layer k is the sum
    // of nodes 0..=k, drawn from the top layer down so each band shows.
    let busiest: Vec<usize> = report
        .busiest_nodes()
        .into_iter()
        .take(LAYERS.len())
        .collect();
    let layers: Vec<Vec<f64>> = (0..busiest.len())
        .map(|layer| {
            report
                .node_frames
                .iter()
                .map(|nodes| {
                    busiest[..=layer]
                        .iter()
                        .map(|&node| f64::from(nodes.get(node).copied().unwrap_or(0.0)) / 1e3)
                        .sum()
                })
                .collect()
        })
        .collect();
    let top = layers
        .last()
        .map_or(0.0, |layer| layer.iter().copied().fold(0.0, f64::max))
        .max(1e-3)
        * 1.1;
    let mut chart = ChartBuilder::on(&lower)
        .caption("the five busiest nodes, stacked", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0..frames, 0.0..top)?;
    chart.configure_mesh().x_desc("frame").y_desc("ms").draw()?;
    for (layer, &node) in busiest.iter().enumerate().rev() {
        let colour = LAYERS[layer];
        chart
            .draw_series(AreaSeries::new(
                layers[layer]
                    .iter()
                    .enumerate()
                    .map(|(frame, &time)| (frame as u64, time)),
                0.0,
                colour.mix(0.8),
            ))?
            .label(report.name(node))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(())
}
