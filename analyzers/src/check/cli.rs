//! `sluice check [--format human|json] PATH...`
//!
//! Exit status: 0 when nothing or only warnings were found, 1 when an error
//! was found, 2 for bad usage or when a path could not be read (every
//! unreadable path is named on standard error, and the findings of the rest
//! of the tree are still printed; nothing is printed on standard output when
//! no file at all could be read).

use std::path::PathBuf;

use super::{check_paths, render};

/// The usage text.
pub const USAGE: &str = "usage: sluice check [--format human|json] PATH...\n\
    \n\
    Checks every .rs file under each PATH (skipping target/) as one tree:\n\
    node signatures (SA0001-SA0007), unparsable files (SA0008), and the\n\
    whole-tree rules (SA0009-SA0012). Exits 1 when an error is found.\n\
    \n\
    Reads at most 64 MiB of a file and 1 GiB of the tree; a file past\n\
    either bound is named on standard error (exit status 2).";

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// rustc-style text.
    Human,
    /// A JSON array of findings.
    Json,
}

/// Parsed command-line arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The output format.
    pub format: Format,
    /// The paths to check.
    pub paths: Vec<PathBuf>,
}

/// Parses the arguments after `check`; `Err` carries the message for stderr.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut format = Format::Human;
    let mut paths = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let value = match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--format" => Some(
                iter.next()
                    .ok_or("--format needs a value: human or json")?
                    .as_str(),
            ),
            other => other.strip_prefix("--format="),
        };
        match value {
            Some("human") => format = Format::Human,
            Some("json") => format = Format::Json,
            Some(other) => return Err(format!("unknown format `{other}`: use human or json")),
            None if arg.starts_with('-') && arg != "-" => {
                return Err(format!("unknown option `{arg}`"));
            }
            None => paths.push(PathBuf::from(arg)),
        }
    }
    if paths.is_empty() {
        return Err("no PATH given".to_string());
    }
    Ok(Some(Options { format, paths }))
}

/// Runs `sluice check` with the arguments after `check`, printing to stdout
/// (findings) and stderr (usage errors), and returns the exit status.
pub fn run<I, S>(args: I) -> u8
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let args: Vec<String> = args.into_iter().map(Into::into).collect();
    let options = match parse(&args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return 0;
        }
        Err(message) => {
            eprintln!("sluice check: {message}\n\n{USAGE}");
            return 2;
        }
    };
    let report = check_paths(&options.paths);
    for unreadable in &report.unreadable {
        eprintln!(
            "sluice check: cannot read {}: {}",
            unreadable.path.display(),
            unreadable.error
        );
    }
    if report.files_checked > 0 || report.unreadable.is_empty() {
        match options.format {
            Format::Human => print!("{}", render::human(&report)),
            Format::Json => println!("{}", render::json(&report)),
        }
    }
    status(&report)
}

/// The exit status for `report`: 2 when a path could not be read, else 1
/// when an error was found, else 0.
pub fn status(report: &super::Report) -> u8 {
    if !report.unreadable.is_empty() {
        2
    } else {
        u8::from(report.has_errors())
    }
}
