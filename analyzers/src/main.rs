//! The `sluice` command-line tool: one subcommand per job, parsed by clap
//! (`sluice_analyzers::cli`).
//!
//! - `sluice plan FILE`: plans declarations in the plan text format and prints
//!   the stage view, Graphviz (`--dot`), the group hierarchy (`--tree`) or
//!   the lanes-and-gates picture (`--svg`) (`sluice_analyzers::plan_cli`).
//! - `sluice check PATH...`: the static checks over a source tree
//!   (`sluice_analyzers::check::cli`).
//! - `sluice completions SHELL`: a shell completion script.

use std::process::ExitCode;

use clap::Parser;
use sluice_analyzers::cli::Cli;

fn main() -> ExitCode {
    // Bad usage: clap's message (with its suggestion) and exit status 2;
    // `--help` and `--version`: status 0.
    ExitCode::from(Cli::parse().run())
}
