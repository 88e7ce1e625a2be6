//! The command line of `sluice-game`, parsed by clap (derive): `sluice-game
//! [--threads N] [--frames N] [--entities N] [--trace FILE] [--plot FILE]
//! [--plan FILE]`, with `--help`, `--version` and `--completions SHELL`.
//!
//! [`Options`] is a plain struct that `main` consumes: an option is one
//! field (its doc comment is its help line).
//!
//! ```
//! use clap::Parser;
//! use sluice_game::cli::Options;
//!
//! let options = Options::try_parse_from(["sluice-game", "--threads", "64", "--frames=30"]).unwrap();
//! let config = options.config(2);
//! assert_eq!((config.threads, config.frames), (64, 30));
//! // More threads than cores runs, with a note on standard error.
//! assert!(options.threads_note(2).unwrap().contains("more than the 2 cores"));
//!
//! let zero = Options::try_parse_from(["sluice-game", "--threads", "0"]).unwrap_err();
//! assert!(zero.to_string().contains("invalid value '0' for '--threads <N>'"));
//! ```

use std::io::Write;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use clap_complete::Shell;

use crate::Config;

/// The most threads `--threads` takes: past this a pool's threads cost
/// memory and start-up time for nothing (the game has a few dozen nodes).
pub const MAX_THREADS: usize = 1024;

/// The most units `--entities` takes.
pub const MAX_ENTITIES: usize = 10_000_000;

/// What `--help` prints after the options.
const AFTER_HELP: &str = "\
Examples:
  sluice-game --threads 2 --frames 300
  sluice-game --trace trace.json    (then open it in ui.perfetto.dev)
  sluice-game --plot docs/frame_times.svg --plan docs/game_plan.svg
  sluice-game --completions bash > ~/.local/share/bash-completion/completions/sluice-game
  sluice-game --entities 2000 --frames 600 --record battle.replay
  sluice-game --replay battle.replay
  sluice-game rollback --local-port 7000 --remote 127.0.0.1:7001 --player 0 --loss 10

A progress bar counts the frames on standard error when standard output and
standard error are terminals.";

/// `sluice-game`: runs the headless game for a fixed number of frames and
/// prints per-frame timing, the plans' stage views, the plan's diagnostics
/// and a checksum of the final state (the same for every `--threads N`).
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "sluice-game", version, after_help = AFTER_HELP, args_override_self = true)]
pub struct Options {
    /// Threads of the world's pool, the calling thread included, from 1 to
    /// 1024 (default: all cores); more than the cores runs, with a note
    #[arg(long, value_name = "N", value_parser = thread_count, global = true)]
    pub threads: Option<usize>,
    /// Frames to run
    #[arg(long, value_name = "N", default_value_t = 1_000, value_parser = frame_count, global = true)]
    pub frames: u64,
    /// Units at the start, half per team
    #[arg(long, value_name = "N", default_value_t = 20_000, value_parser = entity_count, global = true)]
    pub entities: usize,
    /// Write a Chrome/Perfetto trace of every node, batch slice and frame
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Where to write the frame-time plot
    #[arg(long, value_name = "FILE", default_value = "frame_times.svg")]
    pub plot: PathBuf,
    /// Also write the plans' lanes-and-gates picture (SVG)
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Serve the live inspector on this loopback address (for example
    /// 127.0.0.1:7878)
    #[arg(long, value_name = "ADDR")]
    pub inspect: Option<String>,
    /// Print a completion script for SHELL on standard output instead of
    /// running
    #[arg(long, value_name = "SHELL", exclusive = true)]
    pub completions: Option<Shell>,
    /// Run the rollback battle (the armies, steering, combat and physics,
    /// steered by scripted inputs) instead of the game, and write its
    /// inputs and final checksum to FILE
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Replay the inputs in FILE (written by --record) on the rollback
    /// battle and check that it ends with the recorded checksum
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// The seed of the rollback battle's scripted inputs
    #[arg(long, value_name = "N", default_value_t = 39, global = true)]
    pub seed: u64,
    /// What to run instead of the game
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What `sluice-game` runs instead of the game.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum Command {
    /// Play the rollback battle with a peer over UDP (ggrs), through
    /// simulated latency, jitter and loss; prints the checksum of the last
    /// frame once both peers confirmed it
    Rollback(RollbackArgs),
}

/// The options of `sluice-game rollback`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RollbackArgs {
    /// The UDP port to play on (every interface)
    #[arg(long, value_name = "PORT")]
    pub local_port: u16,
    /// The other peer's address, for example 127.0.0.1:7001
    #[arg(long, value_name = "ADDR")]
    pub remote: std::net::SocketAddr,
    /// The player this peer plays: 0 (red) or 1 (blue); the other peer
    /// plays the other
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=1))]
    pub player: u8,
    /// Delay added to every packet sent, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub latency_ms: u64,
    /// Up to this much more delay per packet, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub jitter_ms: u64,
    /// Packets lost, in percent
    #[arg(long, value_name = "PERCENT", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub loss: u8,
    /// Give up when the frames are not all confirmed within this many
    /// seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Write the session's confirmed inputs and the last frame's checksum
    /// to FILE (a replay, as --record writes)
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

impl Options {
    /// The game's settings: `--threads` or else `cores`, the frames and
    /// the units.
    pub fn config(&self, cores: usize) -> Config {
        Config {
            threads: self.threads.unwrap_or(cores).max(1),
            frames: self.frames,
            entities: self.entities,
            ..Config::default()
        }
    }

    /// The note for standard error when `--threads` asks for more threads
    /// than the machine's `cores`: they run, taking turns on the cores.
    pub fn threads_note(&self, cores: usize) -> Option<String> {
        let threads = self.threads?;
        (threads > cores).then(|| {
            format!(
                "note: --threads {threads} is more than the {cores} cores of this machine: the \
                 threads take turns on them (the checksum is the same; the frame times are not \
                 what {threads} cores would give)"
            )
        })
    }
}

/// Writes the completion script of `sluice-game` for `shell` to `out`.
pub fn write_completions(shell: Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Options::command(), "sluice-game", out);
}

/// `value` as a count from `min` to `max` of `what`.
fn count(value: &str, min: u64, max: u64, what: &str) -> Result<u64, String> {
    let expected = || format!("expected {what} from {min} to {max}");
    match value.trim().parse::<u64>() {
        Ok(count) if (min..=max).contains(&count) => Ok(count),
        Ok(_) => Err(expected()),
        Err(error) if *error.kind() == std::num::IntErrorKind::PosOverflow => Err(expected()),
        Err(_) => Err(format!("not a whole number: {}", expected())),
    }
}

fn thread_count(value: &str) -> Result<usize, String> {
    let threads = count(
        value,
        1,
        MAX_THREADS as u64,
        "a thread count (more than the cores is allowed)",
    )?;
    Ok(threads as usize)
}

fn frame_count(value: &str) -> Result<u64, String> {
    count(value, 1, u64::from(u32::MAX), "a frame count")
}

fn entity_count(value: &str) -> Result<usize, String> {
    Ok(count(value, 2, MAX_ENTITIES as u64, "an entity count")? as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(line: &str) -> Result<Options, clap::Error> {
        Options::try_parse_from(std::iter::once("sluice-game").chain(line.split_whitespace()))
    }

    #[test]
    fn the_command_line_is_consistent() {
        Options::command().debug_assert();
    }

    #[test]
    fn defaults_and_values() {
        let options = parse("").unwrap();
        let config = options.config(2);
        assert_eq!(
            (config.threads, config.frames, config.entities),
            (2, 1_000, 20_000)
        );
        assert_eq!(options.plot, PathBuf::from("frame_times.svg"));
        assert_eq!((&options.trace, &options.plan), (&None, &None));
        assert_eq!(options.threads_note(2), None);

        let options = parse(
            "--threads 1 --frames=30 --entities 500 --trace t.json --plot p.svg --plan l.svg",
        )
        .unwrap();
        let config = options.config(2);
        assert_eq!(
            (config.threads, config.frames, config.entities),
            (1, 30, 500)
        );
        assert_eq!(options.trace, Some(PathBuf::from("t.json")));
        assert_eq!(options.plot, PathBuf::from("p.svg"));
        assert_eq!(options.plan, Some(PathBuf::from("l.svg")));
        // The last of a repeated option wins.
        assert_eq!(parse("--frames 3 --frames 4").unwrap().frames, 4);
    }

    #[test]
    fn rollback_modes() {
        let options = parse(
            "rollback --local-port 7000 --remote 127.0.0.1:7001 --player 1 --loss 10 --frames 30",
        )
        .unwrap();
        assert_eq!(options.frames, 30);
        let Some(Command::Rollback(args)) = &options.command else {
            panic!("not the rollback command: {options:?}");
        };
        assert_eq!((args.local_port, args.player, args.loss), (7000, 1, 10));
        assert_eq!(args.remote, "127.0.0.1:7001".parse().unwrap());
        for (line, named) in [
            (
                "rollback --local-port 1 --remote 127.0.0.1:2 --player 2",
                "--player",
            ),
            (
                "rollback --local-port 1 --remote nowhere --player 0",
                "--remote",
            ),
            (
                "rollback --local-port 1 --remote 127.0.0.1:2 --player 0 --loss 101",
                "--loss",
            ),
            ("--record a --replay b", "--replay"),
        ] {
            let error = parse(line).unwrap_err();
            assert!(error.to_string().contains(named), "{line}: {error}");
        }
        let options = parse("--record battle.replay --seed 5").unwrap();
        assert_eq!(options.record, Some(PathBuf::from("battle.replay")));
        assert_eq!((options.seed, options.command), (5, None));
    }

    #[test]
    fn more_threads_than_cores_run_with_a_note() {
        let options = parse("--threads 64").unwrap();
        assert_eq!(options.config(2).threads, 64);
        let note = options.threads_note(2).unwrap();
        assert!(
            note.starts_with("note: --threads 64 is more than the 2 cores"),
            "{note}"
        );
        assert_eq!(options.threads_note(64), None);
        assert_eq!(
            parse(&format!("--threads {MAX_THREADS}"))
                .unwrap()
                .config(2)
                .threads,
            MAX_THREADS
        );
    }

    #[test]
    fn bad_values_are_refused_naming_the_option() {
        for (line, message) in [
            (
                "--threads 0",
                "invalid value '0' for '--threads <N>': expected a thread count (more than \
                 the cores is allowed) from 1 to 1024",
            ),
            (
                "--threads 1025",
                "invalid value '1025' for '--threads <N>': expected a thread count",
            ),
            (
                "--threads 99999999999999999999999",
                "invalid value '99999999999999999999999' for '--threads <N>': expected a thread \
                 count",
            ),
            (
                "--threads many",
                "invalid value 'many' for '--threads <N>': not a whole number",
            ),
            ("--threads -3", "unexpected argument '-3' found"),
            (
                "--frames ten",
                "invalid value 'ten' for '--frames <N>': not a whole number: expected a frame \
                 count from 1 to 4294967295",
            ),
            (
                "--entities 1",
                "invalid value '1' for '--entities <N>': expected an entity count from 2 to \
                 10000000",
            ),
            (
                "--entities",
                "a value is required for '--entities <N>' but none was supplied",
            ),
            (
                "--trace --plot",
                "a value is required for '--trace <FILE>' but none was supplied",
            ),
            (
                "--completions tcsh",
                "invalid value 'tcsh' for '--completions <SHELL>'",
            ),
        ] {
            let error = parse(line).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{line}");
            let text = error.to_string();
            assert!(text.contains(message), "{line}: {text}");
        }
        assert_eq!(
            parse("--completions bash --frames 3").unwrap_err().kind(),
            ErrorKind::ArgumentConflict
        );
    }

    #[test]
    fn inspect_takes_an_address() {
        let options = parse("--inspect 127.0.0.1:7878").unwrap();
        assert_eq!(options.inspect.as_deref(), Some("127.0.0.1:7878"));
        assert_eq!(parse("").unwrap().inspect, None, "off unless asked for");
        assert_eq!(
            parse("--inspect").unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
    }

    #[test]
    fn an_unknown_option_gets_a_suggestion() {
        let error = parse("--thread 2").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        let text = error.to_string();
        assert!(
            text.contains("error: unexpected argument '--thread' found"),
            "{text}"
        );
        assert!(
            text.contains("tip: a similar argument exists: '--threads'"),
            "{text}"
        );
    }

    #[test]
    fn help_version_and_completions() {
        let help = parse("--help").unwrap_err();
        assert_eq!((help.kind(), help.exit_code()), (ErrorKind::DisplayHelp, 0));
        let text = help.to_string();
        for option in [
            "--threads <N>",
            "--frames <N>",
            "--entities <N>",
            "--trace <FILE>",
            "--plot <FILE>",
            "--plan <FILE>",
            "--completions <SHELL>",
            "--version",
        ] {
            assert!(text.contains(option), "{option} missing from:\n{text}");
        }
        let version = parse("--version").unwrap_err();
        assert_eq!(version.kind(), ErrorKind::DisplayVersion);
        assert_eq!(
            version.to_string(),
            format!("sluice-game {}\n", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(
            parse("--completions fish").unwrap().completions,
            Some(Shell::Fish)
        );
        let mut script = Vec::new();
        write_completions(Shell::Bash, &mut script);
        let script = String::from_utf8(script).unwrap();
        for option in [
            "--threads",
            "--frames",
            "--entities",
            "--trace",
            "--plot",
            "--plan",
        ] {
            assert!(script.contains(option), "{option} missing from the script");
        }
    }
}
