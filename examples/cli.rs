//! The guide's chapter "The command lines" (`docs/guide/12-clis.md`), runnable:
//! `cargo run --example cli`.
//!
//! Drives `sluice plan` and `sluice check` through the `sluice-analyzers`
//! library: plans a small organised frame in the plan text format and
//! prints its stage view and group tree, shows the diagnostics of a bad
//! file, and checks a source file for SA codes.

use std::path::PathBuf;

use sluice_analyzers::{check, plan_cli};

/// A frame in the plan text format: a fixed-cadence pair, and groups.
const FRAME: &str = "\
GROUP  Input       order=first
GROUP  Simulation  after=Input
#      name        reads       writes   after     attributes
SYSTEM poll        -           Keys     -         group=Input
SYSTEM steer       Keys        Vel      -         group=Simulation
SYSTEM move        Vel         Pos      -         group=Simulation
SYSTEM hud         Pos,Vel     -        -
SYSTEM integrate   Vel         Pos      -         cadence=fixed
";

/// The same with three mistakes: a cycle, an unknown name, a short line.
const BAD: &str = "\
SYSTEM a - X b
SYSTEM b - X a
SYSTEM c - - ghost
SYSTEM d x
";

/// Runs `sluice plan OPTIONS FILE` on `text` (FILE names it in messages);
/// returns the status and both outputs.
fn plan(options: &[&str], file: &str, text: &str) -> (u8, String, String) {
    let mut args: Vec<String> = options.iter().map(|&option| option.to_owned()).collect();
    args.push(file.to_owned());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = plan_cli::run_text(&args, text.as_bytes(), &mut out, &mut err);
    let text = |bytes| String::from_utf8(bytes).expect("the CLI writes UTF-8");
    (status, text(out), text(err))
}

fn main() {
    // The stage view: the fixed cadence first, then the variable one.
    let (status, stages, _) = plan(&[], "frame.plan", FRAME);
    println!("$ sluice plan frame.plan\n{stages}");
    assert_eq!(status, 0);
    assert_eq!(
        stages,
        "fixed stage 0: integrate\n\
         stage 0: poll\n\
         stage 1: steer\n\
         stage 2: move\n\
         stage 3: hud\n"
    );

    // The group tree: each system with its stage.
    let (status, tree, _) = plan(&["--tree"], "frame.plan", FRAME);
    println!("$ sluice plan --tree frame.plan\n{tree}");
    assert_eq!(status, 0);
    assert!(tree.contains("Simulation\n  steer 1\n  move 2\n"));

    // Graphviz: edges keep their reasons.
    let (status, dot, _) = plan(&["--dot"], "frame.plan", FRAME);
    assert_eq!(status, 0);
    assert!(dot.starts_with("digraph fixed {") && dot.contains("digraph plan {"));
    assert!(dot.contains("lane Vel: shared after gate"));
    println!(
        "$ sluice plan --dot frame.plan: {} lines of Graphviz\n",
        dot.lines().count()
    );

    // Bad input: status 2, nothing on stdout, every problem on stderr.
    let (status, out, errors) = plan(&[], "bad.plan", BAD);
    println!("$ sluice plan bad.plan (status {status})\n{errors}");
    assert_eq!(status, 2);
    assert!(out.is_empty());
    for code in ["SA0100", "SL0002", "SL0001"] {
        assert!(
            errors.contains(&format!("error[{code}]")),
            "{code} reported"
        );
    }
    assert!(errors.contains("cycle: a -> b -> a"));

    // Two views at once are refused as bad usage, in clap's words; a
    // mistyped option gets a suggestion.
    let (status, _, usage) = plan(&["--dot", "--tree"], "frame.plan", FRAME);
    assert_eq!(status, 2);
    assert!(usage.starts_with("error: the argument '--dot' cannot be used with '--tree'"));
    let (status, _, usage) = plan(&["--tre"], "frame.plan", FRAME);
    println!("$ sluice plan --tre frame.plan (status {status})\n{usage}");
    assert_eq!(status, 2);
    assert!(usage.contains("tip: a similar argument exists: '--tree'"));

    // `sluice check`: the static checks over a source, as a report.
    let source = b"
use sluice::system;
struct Time(f32);
struct Hp(f32);
#[system]
fn tick(time: Time) {}
#[system]
fn heal(hp: &mut Hp) { let _ = hp.0; }
";
    let report = check::check_sources(vec![(PathBuf::from("src/lib.rs"), source.to_vec())]);
    println!("$ sluice check src/");
    for finding in &report.findings {
        println!(
            "  {}: {}:{}: {}",
            finding.code,
            finding.file.display(),
            finding.line,
            finding.message
        );
    }
    let codes: Vec<String> = report.findings.iter().map(|f| f.code.to_string()).collect();
    assert!(report.has_errors(), "SA0001 is an error: exit status 1");
    for code in ["SA0001", "SA0009", "SA0012"] {
        assert!(codes.iter().any(|c| c == code), "{code} found");
    }
}
