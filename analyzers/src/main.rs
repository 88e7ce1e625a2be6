//! The `sluice` command-line tool.

fn main() {
    eprintln!("sluice: no subcommands are implemented yet");
    std::process::exit(2);
}
