//! `sluice-game`'s command line as a person uses it: the built binary, its
//! status, and what it prints where.

use std::path::PathBuf;
use std::process::{Command, Output};

fn game(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice-game"))
        .args(args)
        .output()
        .expect("the game starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

/// A plot path of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        Self(
            std::env::temp_dir().join(format!("sluice-game-cli-{}-{name}.svg", std::process::id())),
        )
    }

    fn arg(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary directory")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn more_threads_than_cores_run_with_a_note() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = 64.max(cores + 1).to_string();
    let plot = Scratch::new("threads");
    let output = game(&[
        "--threads",
        &threads,
        "--frames",
        "2",
        "--entities",
        "200",
        "--plot",
        plot.arg(),
    ]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("200 units, 2 frames, {threads} threads")),
        "{stdout}"
    );
    assert!(
        stderr.starts_with(&format!(
            "sluice-game: note: --threads {threads} is more than the {cores} cores"
        )),
        "{stderr}"
    );
    // Standard error is a pipe: the note is all there is, no progress bar.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_plain_run_into_a_pipe_draws_no_progress() {
    let plot = Scratch::new("plain");
    let output = game(&[
        "--threads",
        "1",
        "--frames",
        "3",
        "--entities",
        "200",
        "--plot",
        plot.arg(),
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(text(&output.stderr), "");
    // The frame lines are on standard output, first and last.
    assert!(stdout.contains("frame     0:"), "{stdout}");
    assert!(stdout.contains("frame     2:"), "{stdout}");
}

#[test]
fn zero_or_garbage_threads_are_refused_naming_the_option() {
    for (value, reason) in [
        ("0", "expected a thread count"),
        ("two", "not a whole number"),
        ("", "not a whole number"),
    ] {
        let output = game(&["--threads", value, "--frames", "1"]);
        assert_eq!(output.status.code(), Some(2), "{value:?}");
        assert!(output.stdout.is_empty());
        let stderr = text(&output.stderr);
        assert!(
            stderr.starts_with(&format!(
                "error: invalid value '{value}' for '--threads <N>': {reason}"
            )),
            "{value:?}: {stderr}"
        );
    }
}

#[test]
fn an_unknown_option_gets_a_suggestion() {
    let output = game(&["--frame", "3"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("error: unexpected argument '--frame' found"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tip: a similar argument exists: '--frames'"),
        "{stderr}"
    );
    assert!(stderr.contains("Usage: sluice-game"), "{stderr}");
}

#[test]
fn version_help_and_completions() {
    let version = game(&["--version"]);
    assert!(version.status.success());
    assert_eq!(
        text(&version.stdout),
        format!("sluice-game {}\n", env!("CARGO_PKG_VERSION"))
    );

    let help = game(&["--help"]);
    assert!(help.status.success());
    let help = text(&help.stdout);
    for option in [
        "--threads <N>",
        "--frames <N>",
        "--entities <N>",
        "--trace <FILE>",
        "--plot <FILE>",
        "--plan <FILE>",
        "--completions <SHELL>",
        "--record <FILE>",
        "--replay <FILE>",
        "--seed <N>",
        "rollback",
    ] {
        assert!(help.contains(option), "{option} missing from:\n{help}");
    }

    let bash = game(&["--completions", "bash"]);
    assert!(bash.status.success(), "{bash:?}");
    let script = text(&bash.stdout);
    assert!(script.contains("_sluice__game()"), "{script}");
    for option in [
        "--threads",
        "--frames",
        "--entities",
        "--trace",
        "--plot",
        "--plan",
        "--completions",
    ] {
        assert!(script.contains(option), "{option} missing from the script");
    }
    // Completions print the script; they run no game alongside.
    let both = game(&["--completions", "bash", "--frames", "3"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(both.stdout.is_empty());
}
