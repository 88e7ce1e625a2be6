//! Runs the `sluice check` binary: the rustc-style output, `--format json`,
//! the exit codes, and the workspace's own examples.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sluice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .output()
        .expect("run sluice")
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli")
        .join(name)
        .display()
        .to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn human_output_is_rustc_style_and_an_error_exits_1() {
    let dir = fixture("errors");
    let out = sluice(&["check", &dir]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("error[SA0003]"))
        .unwrap_or_else(|| panic!("no SA0003 in:\n{text}"));
    assert_eq!(
        lines[head],
        "error[SA0003]: run condition `enabled` takes `&mut Flags`"
    );
    let source = "fn enabled(time: &Time, flags: &mut Flags) -> bool {";
    let column = source.find("flags:").unwrap() + 1;
    let file = format!("{dir}/nodes.rs");
    assert_eq!(lines[head + 1], format!(" --> {file}:4:{column}"));
    assert_eq!(lines[head + 2], "  |");
    assert_eq!(lines[head + 3], format!("4 | {source}"));
    let caret = format!(
        "  | {}{}",
        " ".repeat(column - 1),
        "^".repeat("flags: &mut Flags".len())
    );
    assert_eq!(lines[head + 4], caret);
    assert_eq!(lines[head + 5], "  |");
    assert_eq!(
        lines[head + 6],
        "  = help: a run condition is read-only: take `&Flags`"
    );
    assert!(
        text.contains(
            "warning[SA0012]: `score` is declared `&mut Score` but `hud` only ever reads it"
        ),
        "{text}"
    );
    // target/ is skipped, so its unparsable file is not reported
    assert!(!text.contains("SA0008"), "{text}");
    assert!(
        text.ends_with("sluice check: 1 error, 1 warning in 2 files\n"),
        "{text}"
    );
}

#[test]
fn json_output_has_every_field() {
    let dir = fixture("errors");
    let out = sluice(&["check", "--format", "json", &dir]);
    assert_eq!(out.status.code(), Some(1));
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let all = value.as_array().unwrap();
    assert_eq!(all.len(), 2);
    let error = &all[0];
    assert_eq!(error["code"], "SA0003");
    assert_eq!(error["level"], "error");
    assert_eq!(
        error["message"],
        "run condition `enabled` takes `&mut Flags`"
    );
    assert_eq!(error["help"], "a run condition is read-only: take `&Flags`");
    assert_eq!(error["file"], format!("{dir}/nodes.rs"));
    assert_eq!(error["line"], 4);
    assert_eq!(error["column"], 25);
    assert_eq!(error["end_column"], 42);
    let warning = &all[1];
    assert_eq!(warning["code"], "SA0012");
    assert_eq!(warning["level"], "warning");
    assert_eq!(warning["line"], 9);
    // `--format=json` is the same
    let again = sluice(&["check", "--format=json", &dir]);
    assert_eq!(again.stdout, out.stdout);
}

#[test]
fn warnings_alone_exit_0() {
    let out = sluice(&["check", &fixture("warnings")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("warning[SA0009]: system `forgotten` is declared but never registered")
    );
    let json = sluice(&["check", "--format", "json", &fixture("warnings")]);
    assert_eq!(json.status.code(), Some(0));
}

#[test]
fn a_single_file_can_be_checked() {
    let out = sluice(&["check", &format!("{}/setup.rs", fixture("errors"))]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "sluice check: no problems found in 1 file\n");
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &["check"][..],
        &["check", "--format"],
        &["check", "--format", "xml", "."],
        &["check", "--frobnicate", "."],
        &["check", "/nonexistent/sluice/path"],
    ] {
        let out = sluice(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let help = sluice(&["check", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).starts_with("usage: sluice check"));
}

#[test]
fn the_workspace_examples_are_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dirs: Vec<PathBuf> = ["runtime/examples", "analyzers/examples", "macros/examples"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    assert!(!dirs.is_empty(), "analyzers/examples exists");
    let mut args = vec!["check".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    let out = sluice(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("sluice check: no problems found in"),
        "{text}"
    );
}
