//! The `sluice` command-line tool: one subcommand per job.
//!
//! - `sluice plan FILE`: plans declarations in the plan text format and prints
//!   the stage view, Graphviz (`--dot`) or the group hierarchy (`--tree`)
//!   (`sluice_analyzers::plan_cli`).
//! - `sluice check PATH...`: the static checks over a source tree
//!   (`sluice_analyzers::check::cli`).

use std::process::ExitCode;

const USAGE: &str = "\
usage: sluice <command> [options]

commands:
  plan [--dot | --tree | --svg] [--packing order|first-fit] [--warn-ambiguous] FILE
        plan the systems, groups, stages and sets declared in FILE and print
        the stage view, Graphviz (--dot), the group hierarchy (--tree) or
        the lanes-and-gates picture (--svg); `sluice plan --help` tells more
  check [--format human|json] PATH...
        check the sluice nodes in every .rs file under PATH (SA codes)

Both read at most 64 MiB of a file (`check`: 1 GiB of a tree) and refuse
a larger one by name.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("", &[][..]),
    };
    let status = match command {
        "plan" => sluice_analyzers::plan_cli::run(
            rest,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr(),
        ),
        "check" => sluice_analyzers::check::cli::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            0
        }
        "" => {
            eprintln!("{USAGE}");
            2
        }
        other => {
            eprintln!("error: unknown command `{other}`\n{USAGE}");
            2
        }
    };
    ExitCode::from(status)
}
