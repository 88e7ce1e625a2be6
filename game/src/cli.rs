//! The command line: `sluice-game [--threads N] [--frames N] [--entities N]
//! [--trace FILE] [--plot FILE] [--plan FILE] [--inspect ADDR]`.

use std::fmt;
use std::path::PathBuf;

use crate::Config;

/// The usage text.
pub const USAGE: &str = "\
usage: sluice-game [OPTIONS]

Runs the headless game for a fixed number of frames and prints per-frame
timing, the plans' stage views, the plan's diagnostics and a checksum of the
final state.

options:
  --threads N    threads of the world's pool, 1 up to the core count (default: all cores)
  --frames N     frames to run (default: 1000)
  --entities N   units at the start, half per team (default: 20000)
  --trace FILE   write a Chrome/Perfetto trace of every node, batch slice and frame
  --plot FILE    where to write the frame-time plot (default: frame_times.svg)
  --plan FILE    also write the plans' lanes-and-gates picture (SVG)
  --inspect ADDR serve the live inspector on a loopback address (e.g. 127.0.0.1:7878)
  -h, --help     print this help
";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run the game.
    Run(Options),
    /// Print the usage.
    Help,
}

/// The settings of a run from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The game's settings.
    pub config: Config,
    /// Where to write a Chrome trace, if anywhere.
    pub trace: Option<PathBuf>,
    /// Where to write the frame-time plot.
    pub plot: PathBuf,
    /// Where to write the lanes-and-gates picture, if anywhere.
    pub plan: Option<PathBuf>,
    /// The loopback address to serve the live inspector on, if any.
    pub inspect: Option<String>,
}

/// A command line that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// An option nobody knows.
    Unknown(String),
    /// An option without its value.
    MissingValue(&'static str),
    /// A value that is not what the option takes.
    Invalid {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
        /// What it should be.
        expected: String,
    },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Unknown(option) => write!(f, "unknown option `{option}`"),
            CliError::MissingValue(option) => write!(f, "`{option}` needs a value"),
            CliError::Invalid {
                option,
                value,
                expected,
            } => write!(f, "`{option} {value}`: expected {expected}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Parses the arguments after the program's name. `cores` bounds
/// `--threads`.
///
/// # Errors
/// On an unknown option, a missing value, or a value out of range.
pub fn parse(args: impl IntoIterator<Item = String>, cores: usize) -> Result<Command, CliError> {
    let mut config = Config {
        threads: cores,
        ..Config::default()
    };
    let mut trace = None;
    let mut plot = PathBuf::from("frame_times.svg");
    let mut plan = None;
    let mut inspect = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // `--name=value` or `--name value`.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let option: &'static str = match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--threads" => "--threads",
            "--frames" => "--frames",
            "--entities" => "--entities",
            "--trace" => "--trace",
            "--plot" => "--plot",
            "--plan" => "--plan",
            "--inspect" => "--inspect",
            _ => return Err(CliError::Unknown(arg)),
        };
        let value = match inline {
            Some(value) => value,
            None => args.next().ok_or(CliError::MissingValue(option))?,
        };
        match option {
            "--threads" => {
                config.threads =
                    number(option, &value, 1, cores as u64, "a thread count")? as usize;
            }
            "--frames" => {
                config.frames = number(option, &value, 1, u64::from(u32::MAX), "a frame count")?
            }
            "--entities" => {
                config.entities =
                    number(option, &value, 2, 10_000_000, "an entity count")? as usize;
            }
            "--trace" => trace = Some(path(option, value)?),
            "--plan" => plan = Some(path(option, value)?),
            "--inspect" => inspect = Some(value),
            _ => plot = path(option, value)?,
        }
    }
    Ok(Command::Run(Options {
        config,
        trace,
        plot,
        plan,
        inspect,
    }))
}

fn number(
    option: &'static str,
    value: &str,
    min: u64,
    max: u64,
    what: &str,
) -> Result<u64, CliError> {
    let invalid = || CliError::Invalid {
        option,
        value: value.to_owned(),
        expected: format!("{what} from {min} to {max}"),
    };
    let parsed: u64 = value.parse().map_err(|_| invalid())?;
    if (min..=max).contains(&parsed) {
        Ok(parsed)
    } else {
        Err(invalid())
    }
}

fn path(option: &'static str, value: String) -> Result<PathBuf, CliError> {
    if value.is_empty() || value.starts_with("--") {
        return Err(CliError::Invalid {
            option,
            value,
            expected: "a file name".to_owned(),
        });
    }
    Ok(PathBuf::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn defaults_and_values() {
        let Command::Run(options) = parse(args(""), 2).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(options.config.threads, 2);
        assert_eq!(options.config.frames, 1_000);
        assert_eq!(options.plot, PathBuf::from("frame_times.svg"));
        let Command::Run(options) = parse(
            args("--threads 1 --frames=30 --entities 500 --trace t.json --plot p.svg --plan l.svg"),
            2,
        )
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(
            (
                options.config.threads,
                options.config.frames,
                options.config.entities
            ),
            (1, 30, 500)
        );
        assert_eq!(options.trace, Some(PathBuf::from("t.json")));
        assert_eq!(options.plot, PathBuf::from("p.svg"));
        assert_eq!(options.plan, Some(PathBuf::from("l.svg")));
        assert_eq!(parse(args("--help"), 2), Ok(Command::Help));
    }

    #[test]
    fn bad_flags_are_errors() {
        for (line, message) in [
            (
                "--threads 0",
                "`--threads 0`: expected a thread count from 1 to 2",
            ),
            (
                "--threads 3",
                "`--threads 3`: expected a thread count from 1 to 2",
            ),
            (
                "--frames ten",
                "`--frames ten`: expected a frame count from 1 to 4294967295",
            ),
            ("--entities", "`--entities` needs a value"),
            ("--fast", "unknown option `--fast`"),
            ("--trace --plot", "`--trace --plot`: expected a file name"),
        ] {
            assert_eq!(
                parse(args(line), 2).unwrap_err().to_string(),
                message,
                "{line}"
            );
        }
    }

    #[test]
    fn inspect_takes_an_address() {
        let Command::Run(options) = parse(args("--inspect 127.0.0.1:7878"), 2).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(options.inspect.as_deref(), Some("127.0.0.1:7878"));
        let Command::Run(options) = parse(args(""), 2).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(options.inspect, None, "off unless asked for");
        assert_eq!(
            parse(args("--inspect"), 2).unwrap_err().to_string(),
            "`--inspect` needs a value"
        );
    }
}
