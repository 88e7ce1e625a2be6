//! `sluice-game`: runs the headless game and prints what it measured.
//! `cargo run --release -p sluice-game -- --help` for the options
//! (`sluice_game::cli::Options`, parsed by clap).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use sluice_game::cli::{self, Options};
use sluice_game::progress::FrameProgress;

fn main() -> ExitCode {
    // Bad usage: clap's message (with its suggestion) and exit status 2.
    let options = Options::parse();
    if let Some(shell) = options.completions {
        let mut stdout = std::io::stdout().lock();
        cli::write_completions(shell, &mut stdout);
        let _ = stdout.flush();
        return ExitCode::SUCCESS;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if let Some(note) = options.threads_note(cores) {
        eprintln!("sluice-game: {note}");
    }
    if let Some(result) =
        sluice_game::rollback::commands::run(&options, cores, &mut std::io::stdout())
    {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("sluice-game: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let config = options.config(cores);
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
    println!(
        "sluice-game: {} units, {} frames, {} threads",
        config.entities, config.frames, config.threads
    );
    let every = (config.frames / 6).max(1);
    let bar = FrameProgress::for_terminal(config.frames);
    let result = sluice_game::run_inspected(&config, options.inspect.as_deref(), |sample| {
        bar.on_frame(sample);
        if sample.frame % every == 0 || sample.frame + 1 == config.frames {
            bar.println(|| {
                println!(
                    "frame {:>5}: {:>8.3} ms (peak of the last {} frames {:>8.3} ms)",
                    sample.frame,
                    sample.time.as_secs_f64() * 1e3,
                    sluice_game::report::WINDOW,
                    sample.window_peak.as_secs_f64() * 1e3,
                );
            });
        }
    });
    bar.finish();
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
