//! The `sluice` command line, parsed by clap: one subcommand per job.
//!
//! - `sluice plan FILE` ([`PlanArgs`]): plans declarations in the plan text
//!   format and prints the stage view, Graphviz (`--dot`), the group
//!   hierarchy (`--tree`) or the lanes-and-gates picture (`--svg`).
//! - `sluice check PATH...` ([`check::cli::Options`]): the static checks
//!   over a source tree.
//! - `sluice completions SHELL`: a completion script for bash, zsh, fish,
//!   elvish or PowerShell on standard output
//!   (`sluice completions bash > ~/.local/share/bash-completion/completions/sluice`).
//!
//! `--help` and `--version` work at every level; a mistyped option or
//! subcommand is refused with clap's suggestion (`a similar argument
//! exists: '--tree'`) and exit status 2.
//!
//! ```
//! use clap::Parser;
//! use sluice_analyzers::cli::{Cli, Command};
//!
//! let cli = Cli::try_parse_from(["sluice", "plan", "--tree", "frame.plan"]).unwrap();
//! let Command::Plan(plan) = cli.command else { panic!("a plan") };
//! assert!(plan.tree);
//! assert_eq!(plan.file, "frame.plan");
//!
//! let typo = Cli::try_parse_from(["sluice", "plan", "--tre", "frame.plan"]).unwrap_err();
//! assert!(typo.to_string().contains("a similar argument exists: '--tree'"));
//! ```

use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};
use clap_complete::Shell;

use crate::check;
use crate::plan_cli::{self, PlanArgs};

/// `sluice`: the plan text format's planner and the static checks.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(
    name = "sluice",
    version,
    about = "Plans sluice frames written as text, and checks sluice sources (SA codes).",
    propagate_version = true,
    arg_required_else_help = true,
    after_help = "Both read at most 64 MiB of a file (`check`: 1 GiB of a tree) and refuse a \
                  larger one by name."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `sluice`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Plan the systems, groups, stages and sets declared in FILE and print
    /// the stage view, Graphviz (--dot), the group hierarchy (--tree) or the
    /// lanes-and-gates picture (--svg)
    Plan(PlanArgs),
    /// Check the sluice nodes in every .rs file under PATH (SA codes)
    Check(check::cli::Options),
    /// Print a completion script for SHELL on standard output
    Completions {
        /// The shell to complete for
        #[arg(value_enum, value_name = "SHELL")]
        shell: Shell,
    },
}

impl Cli {
    /// Runs the parsed command line: the findings, plans and scripts on
    /// standard output, errors on standard error. Returns the exit status
    /// (each subcommand's own: 0 done, 1 `check` found an error, 2 bad
    /// input).
    pub fn run(&self) -> u8 {
        match &self.command {
            Command::Plan(args) => {
                plan_cli::run_parsed(args, &mut std::io::stdout().lock(), &mut std::io::stderr())
            }
            Command::Check(options) => check::cli::run_parsed(options),
            Command::Completions { shell } => {
                let mut stdout = std::io::stdout().lock();
                write_completions(*shell, &mut stdout);
                // A reader that went away is no failure of the script.
                let _ = stdout.flush();
                0
            }
        }
    }
}

/// Writes the completion script of `sluice` for `shell` to `out`: every
/// subcommand and option, with the values of `--packing`, `--format` and
/// `completions` listed.
pub fn write_completions(shell: Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), "sluice", out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use std::path::PathBuf;

    fn parse(line: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("sluice").chain(line.split_whitespace()))
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_subcommand_parses_its_options() {
        let Command::Plan(plan) = parse("plan --dot --packing first-fit x.plan")
            .unwrap()
            .command
        else {
            panic!("a plan")
        };
        assert!(plan.dot && !plan.tree && !plan.svg);
        assert_eq!(plan.packing, plan_cli::PackingArg::FirstFit);
        let Command::Check(check) = parse("check --format json src tests").unwrap().command else {
            panic!("a check")
        };
        assert_eq!(check.format, check::cli::Format::Json);
        assert_eq!(check.paths, [PathBuf::from("src"), PathBuf::from("tests")]);
        assert_eq!(
            parse("completions zsh").unwrap().command,
            Command::Completions { shell: Shell::Zsh }
        );
    }

    #[test]
    fn mistakes_are_refused_with_a_suggestion() {
        let typo = parse("chek src").unwrap_err();
        assert_eq!(typo.kind(), ErrorKind::InvalidSubcommand);
        assert!(
            typo.to_string()
                .contains("a similar subcommand exists: 'check'"),
            "{typo}"
        );
        let option = parse("check --formt json src").unwrap_err();
        assert_eq!(option.kind(), ErrorKind::UnknownArgument);
        assert!(
            option
                .to_string()
                .contains("a similar argument exists: '--format'"),
            "{option}"
        );
        let format = parse("check --format xml src").unwrap_err();
        assert_eq!(format.kind(), ErrorKind::InvalidValue);
        assert!(
            format
                .to_string()
                .contains("[possible values: human, json]")
        );
        assert_eq!(
            parse("check").unwrap_err().kind(),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            parse("completions tcsh").unwrap_err().kind(),
            ErrorKind::InvalidValue
        );
        let nothing = parse("").unwrap_err();
        assert_eq!(
            nothing.kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        assert_eq!(nothing.exit_code(), 2);
    }

    #[test]
    fn version_is_the_crates() {
        for line in ["--version", "plan --version", "check -V"] {
            let version = parse(line).unwrap_err();
            assert_eq!(version.kind(), ErrorKind::DisplayVersion, "{line}");
            assert_eq!(version.exit_code(), 0);
            assert!(
                version.to_string().contains(env!("CARGO_PKG_VERSION")),
                "{line}: {version}"
            );
        }
    }

    #[test]
    fn the_bash_script_completes_every_option() {
        let mut script = Vec::new();
        write_completions(Shell::Bash, &mut script);
        let script = String::from_utf8(script).unwrap();
        for word in [
            "_sluice()",
            "plan",
            "check",
            "completions",
            "--dot",
            "--tree",
            "--svg",
            "--packing",
            "first-fit",
            "--warn-ambiguous",
            "--format",
            "json",
        ] {
            assert!(script.contains(word), "`{word}` missing from the script");
        }
    }
}
