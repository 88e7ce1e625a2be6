//! `sluice-game-window`: the battle in a window.
//! `cargo run --release -p sluice-game-window -- --help` for the options.

use std::process::ExitCode;

use clap::Parser;
use sluice_game_window::app::App;
use sluice_game_window::{Options, build_game};

fn main() -> ExitCode {
    let options = Options::parse();
    let config = options.config();
    println!(
        "sluice-game-window: {} units, {} threads, {}x{}",
        config.entities, config.threads, options.width, options.height
    );
    let game = match build_game(&options) {
        Ok(game) => game,
        Err(error) => {
            eprintln!("sluice-game-window: {error}");
            return ExitCode::FAILURE;
        }
    };
    match App::new(options.clone(), game).run() {
        Ok(summary) => {
            println!(
                "sluice-game-window: {} frames of {} units at {}x{}: mean frame {:.3} ms \
                 (update: simulation, recording, rasterizing, presenting); {} redraws, {:.1} fps",
                summary.frames,
                config.entities,
                options.width,
                options.height,
                summary.mean_frame().as_secs_f64() * 1e3,
                summary.redraws,
                summary.fps(),
            );
            for (name, mean) in summary.busiest(6) {
                println!("  {name:<28} {:>8.3} ms a frame", mean.as_secs_f64() * 1e3);
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("sluice-game-window: {error}");
            ExitCode::FAILURE
        }
    }
}
