//! `sluice check [--format human|json] PATH...`, its options parsed by
//! clap ([`Options`]).
//!
//! Exit status: 0 when nothing or only warnings were found, 1 when an error
//! was found, 2 for bad usage or when a path could not be read (every
//! unreadable path is named on standard error, and the findings of the rest
//! of the tree are still printed; nothing is printed on standard output when
//! no file at all could be read).

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use super::{check_paths_with, render};

/// What `sluice check --help` prints after the options.
const AFTER_HELP: &str = "\
Reads at most 64 MiB of a file and 1 GiB of the tree; a file past either
bound is named on standard error (exit status 2).

Exit status: 0 when nothing or only warnings were found, 1 when an error
was found, 2 for bad usage or when a path could not be read.";

/// The output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style text
    #[default]
    Human,
    /// A JSON array of findings
    Json,
}

/// `sluice check`: checks every .rs file under each PATH (skipping
/// target/) as one tree: node signatures (SA0001-SA0007), unparsable files
/// (SA0008), and the whole-tree rules (SA0009-SA0012). Exits 1 when an
/// error is found.
#[derive(Clone, Debug, PartialEq, Eq, Parser)]
#[command(name = "sluice check", version, after_help = AFTER_HELP, args_override_self = true)]
pub struct Options {
    /// The output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The files and folders to check, as one tree
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

impl Options {
    /// Parses `args`, the words after `sluice check` (no program name).
    ///
    /// # Errors
    /// clap's error for bad usage, and for `--help` and `--version` (whose
    /// [`clap::Error::exit_code`] is 0 and whose text goes to standard
    /// output).
    pub fn parse_words<I, S>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::try_parse_from(
            std::iter::once("sluice check".to_owned()).chain(args.into_iter().map(Into::into)),
        )
    }
}

/// Runs `sluice check` with the arguments after `check`, printing to stdout
/// (findings, or `--help`) and stderr (usage errors, unreadable paths), and
/// returns the exit status.
pub fn run<I, S>(args: I) -> u8
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    match Options::parse_words(args) {
        Ok(options) => run_parsed(&options),
        Err(error) => {
            let _ = error.print();
            u8::try_from(error.exit_code()).unwrap_or(2)
        }
    }
}

/// [`run`] with the arguments already parsed (what the `sluice` binary
/// does after clap parsed its whole command line). While the tree is read
/// and parsed, a progress bar counts the files on standard error when both
/// standard output and standard error are terminals.
pub fn run_parsed(options: &Options) -> u8 {
    let progress = crate::progress::Files::for_terminal();
    let report = check_paths_with(&options.paths, &|event| progress.on(event));
    progress.finish();
    for unreadable in &report.unreadable {
        eprintln!(
            "sluice check: cannot read {}: {}",
            unreadable.path.display(),
            unreadable.error
        );
    }
    if report.files_checked > 0 || report.unreadable.is_empty() {
        let text = match options.format {
            Format::Human => render::human(&report),
            Format::Json => render::json(&report) + "\n",
        };
        let mut stdout = std::io::stdout().lock();
        // A reader that goes away (`| head`) ends the output quietly.
        let _ = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
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
