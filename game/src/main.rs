//! `sluice-game`: runs the headless game and prints what it measured.
//! `cargo run --release -p sluice-game -- --help` for the options.

use std::process::ExitCode;

use sluice_game::cli::{self, Command, USAGE};

fn main() -> ExitCode {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let options = match cli::parse(std::env::args().skip(1), cores) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("sluice-game: {error}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let guard = match &options.trace {
        Some(path) => match sluice_game::trace::install(path) {
            Ok(guard) => Some(guard),
            Err(error) => {
                eprintln!("sluice-game: {error}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let config = &options.config;
    println!(
        "sluice-game: {} units, {} frames, {} threads",
        config.entities, config.frames, config.threads
    );
    let progress = (config.frames / 6).max(1);
    let result = sluice_game::run_inspected(config, options.inspect.as_deref(), |sample| {
        if sample.frame % progress == 0 || sample.frame + 1 == config.frames {
            println!(
                "frame {:>5}: {:>8.3} ms (peak of the last {} frames {:>8.3} ms)",
                sample.frame,
                sample.time.as_secs_f64() * 1e3,
                sluice_game::report::WINDOW,
                sample.window_peak.as_secs_f64() * 1e3,
            );
        }
    });
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            eprintln!("sluice-game: {error}");
            return ExitCode::FAILURE;
        }
    };
    drop(guard);
    println!("\n{report}");
    if let Err(error) = sluice_game::plot::write(&report, &options.plot) {
        eprintln!("sluice-game: {}: {error}", options.plot.display());
        return ExitCode::FAILURE;
    }
    println!("frame-time plot: {}", options.plot.display());
    if let Some(plan) = &options.plan {
        if let Err(error) = std::fs::write(plan, &report.plan_svg) {
            eprintln!("sluice-game: {}: {error}", plan.display());
            return ExitCode::FAILURE;
        }
        println!("lanes and gates: {}", plan.display());
    }
    if let Some(trace) = &options.trace {
        println!("trace: {}", trace.display());
    }
    ExitCode::SUCCESS
}
