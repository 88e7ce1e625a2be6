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
    assert!(stdout(&help).contains("Usage: sluice check [OPTIONS] <PATH>..."));
    let typo = sluice(&["check", "--formt", "json", "."]);
    assert!(
        stderr(&typo).contains("tip: a similar argument exists: '--format'"),
        "{}",
        stderr(&typo)
    );
    let format = sluice(&["check", "--format", "xml", "."]);
    assert!(stderr(&format).starts_with("error: invalid value 'xml' for '--format <FORMAT>'"));
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
    // Standard error is a pipe here: no progress bar is drawn on it.
    assert_eq!(stderr(&out), "");
}

/// A fresh directory of its own under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-check-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A node with one SA0003 error, to show a file was checked.
const CHECKED: &str = "#[run_condition]\nfn enabled(flags: &mut Flags) -> bool { flags.on }\n";

#[test]
fn three_thousand_nested_parentheses_are_refused_by_name_and_line() {
    let dir = scratch("deep");
    let deep = format!(
        "fn f() {{\n    let x = {}1{};\n}}\n",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    std::fs::write(dir.join("deep.rs"), deep).unwrap();
    std::fs::write(dir.join("other.rs"), CHECKED).unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "error[SA0008]: cannot check this file: this file nests more than 256 levels deep here"
        ),
        "{text}"
    );
    // `    let x = ` then 255 parentheses: the 256th crosses the limit.
    let column = "    let x = ".len() + 256;
    assert!(
        text.contains(&format!("--> {}:2:{column}", dir.join("deep.rs").display())),
        "{text}"
    );
    // the other file is still checked
    assert!(text.contains("error[SA0003]"), "{text}");
    assert!(
        text.ends_with("sluice check: 2 errors, 0 warnings in 2 files\n"),
        "{text}"
    );
}

#[test]
fn deep_nesting_within_the_limit_is_parsed() {
    // each construct the estimate counts, just within the limit, and
    // thousands of levels of the chains it does not count: all parse on
    // the check's own stack (this is a debug build, the costliest)
    let dir = scratch("within");
    let level = 250;
    let files = [
        (
            "parens.rs",
            format!(
                "fn f() {{ let x = {}1{}; }}\n",
                "(".repeat(level),
                ")".repeat(level)
            ),
        ),
        (
            "generics.rs",
            format!(
                "type T = {}u8{};\n",
                "Vec<".repeat(level),
                ">".repeat(level)
            ),
        ),
        (
            "unary.rs",
            format!("fn f() {{ let x = {}1; }}\n", "- ".repeat(level)),
        ),
        (
            "braces.rs",
            format!("fn f() {}{}\n", "{".repeat(level), "}".repeat(level)),
        ),
        (
            "assign.rs",
            format!("fn f() {{ {}a; }}\n", "a = ".repeat(3000)),
        ),
        (
            "closures.rs",
            format!("fn f() {{ let x = {}1; }}\n", "|a| ".repeat(3000)),
        ),
        (
            "fn_pointers.rs",
            format!("type T = {}u8;\n", "fn() -> ".repeat(3000)),
        ),
        (
            "else_if.rs",
            format!("fn f() {{ if a {{}} {}}}\n", "else if a {} ".repeat(20_000)),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert_eq!(text, "sluice check: no problems found in 8 files\n");
}

#[test]
fn a_file_that_is_not_utf8_hides_nothing_else() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("a_latin1.rs"), b"// caf\xE9\nfn f() {}\n").unwrap();
    std::fs::write(dir.join("b_nodes.rs"), CHECKED).unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "error[SA0008]: this file is not UTF-8 text: byte 0xE9 at line 1, column 7 is not valid UTF-8"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!("--> {}:1:7", dir.join("a_latin1.rs").display())),
        "{text}"
    );
    assert!(text.contains("error[SA0003]"), "{text}");
    assert!(
        text.ends_with("2 errors, 0 warnings in 2 files\n"),
        "{text}"
    );
    let json = sluice(&["check", "--format", "json", dir.to_str().unwrap()]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let codes: Vec<&str> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["SA0008", "SA0003"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_named_and_the_rest_is_checked() {
    let dir = scratch("loop");
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/nodes.rs"), CHECKED).unwrap();
    // a link back to its own parent, and a link to itself
    std::os::unix::fs::symlink(&dir, dir.join("src/up")).unwrap();
    std::os::unix::fs::symlink(dir.join("self.rs"), dir.join("self.rs")).unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}{errors}");
    assert!(
        errors.contains(&format!(
            "sluice check: cannot read {}: symbolic link loop: it leads back to {}",
            dir.join("src/up").display(),
            dir.canonicalize().unwrap().display()
        )),
        "{errors}"
    );
    assert!(
        errors.contains(&format!(
            "sluice check: cannot read {}: ",
            dir.join("self.rs").display()
        )),
        "{errors}"
    );
    assert!(text.contains("error[SA0003]"), "{text}");
    assert!(
        text.ends_with("1 error, 0 warnings in 1 file; 2 paths could not be read\n"),
        "{text}"
    );
    // the loop given as the path itself
    let out = sluice(&["check", dir.join("self.rs").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).starts_with(&format!(
            "sluice check: cannot read {}: ",
            dir.join("self.rs").display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_path_is_named_and_the_others_are_checked() {
    let dir = scratch("missing");
    std::fs::write(dir.join("nodes.rs"), CHECKED).unwrap();
    let missing = dir.join("no/such/dir");
    let out = sluice(&["check", missing.to_str().unwrap(), dir.to_str().unwrap()]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}{errors}");
    assert!(
        errors.starts_with(&format!(
            "sluice check: cannot read {}: ",
            missing.display()
        )),
        "{errors}"
    );
    assert!(text.contains("error[SA0003]"), "{text}");
}

#[cfg(unix)]
#[test]
fn a_dangling_source_link_is_named_and_the_others_are_checked() {
    let dir = scratch("dangling");
    std::fs::write(dir.join("nodes.rs"), CHECKED).unwrap();
    let gone = dir.join("gone.rs");
    std::os::unix::fs::symlink(dir.join("moved.rs"), &gone).unwrap();
    // a dangling link that is not a source file is not worth a word
    std::os::unix::fs::symlink(dir.join("moved"), dir.join("result")).unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}{errors}");
    assert_eq!(
        errors,
        format!(
            "sluice check: cannot read {}: No such file or directory (os error 2)\n",
            gone.display()
        )
    );
    assert!(text.contains("error[SA0003]"), "{text}");
}

#[test]
fn sa0002_by_another_path_points_at_both_parameters() {
    let dir = scratch("sa0002");
    let text = "mod m { pub struct Hp; }\n#[system]\nfn heal(current: &Hp, hp: &mut m::Hp) {}\n\
                fn setup(w: &mut World) { w.add_system(heal); }\n";
    std::fs::write(dir.join("lib.rs"), text).unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let want = format!(
        "error[SA0002]: `m::Hp` is gated (`&mut`) here and `Hp` read (`&`) earlier in the same \
         signature: both are the service `m::Hp`\n \
         --> {}:3:23\n  \
         |\n\
         3 | fn heal(current: &Hp, hp: &mut m::Hp) {{}}\n  \
         |         ------------  ^^^^^^^^^^^^^^\n  \
         |         note: `Hp` is read (`&`) here\n  \
         |\n  \
         = help: declare `m::Hp` once; `&mut m::Hp` also lets the body read it\n",
        dir.join("lib.rs").display()
    );
    assert!(text.starts_with(&want), "{text}\nwant:\n{want}");
    let json = sluice(&["check", "--format=json", dir.to_str().unwrap()]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let note = &value[0]["notes"][0];
    assert_eq!(
        (note["line"].as_u64(), note["column"].as_u64()),
        (Some(3), Some(9))
    );
    assert_eq!(note["message"], "`Hp` is read (`&`) here");
}

#[test]
fn sa0012_names_the_queried_component_and_the_system() {
    let dir = scratch("sa0012-query");
    let text = "#[system]\nfn moves(mut q: Query<(&mut Pos, &Vel)>) {\n    \
                q.for_each(|(pos, vel)| println!(\"{}\", pos.0 + vel.0));\n}\n\
                fn setup(w: &mut World) { w.add_system(moves); }\n";
    std::fs::write(dir.join("lib.rs"), text).unwrap();
    let message =
        "`Pos` is queried `&mut Pos` in `moves` but only ever read; `&Pos` would let it share";
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let human = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{human}");
    let want = format!(
        "warning[SA0012]: {message}\n \
         --> {}:2:24\n  \
         |\n\
         2 | fn moves(mut q: Query<(&mut Pos, &Vel)>) {{\n  \
         |                        ^^^^^^^^\n",
        dir.join("lib.rs").display()
    );
    assert!(human.starts_with(&want), "{human}\nwant:\n{want}");
    let json = sluice(&["check", "--format=json", dir.to_str().unwrap()]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(value.as_array().map(Vec::len), Some(1), "{value}");
    assert_eq!(value[0]["code"], "SA0012");
    assert_eq!(value[0]["message"], message);
    assert_eq!(
        value[0]["help"],
        "query `&Pos`: readers of `Pos` run together, and `&mut Pos` marks every row it visits changed"
    );
    assert_eq!(
        (value[0]["line"].as_u64(), value[0]["column"].as_u64()),
        (Some(2), Some(24))
    );
}

/// A source file past the per-file bound (here a sparse file of 64 MiB and
/// one byte, as a link to `/dev/zero` would be endless) is refused by name
/// before it is read whole; the rest of the tree is still checked.
#[test]
fn a_file_past_the_size_bound_is_named_and_the_others_are_checked() {
    let dir = scratch("huge");
    std::fs::write(dir.join("nodes.rs"), CHECKED).unwrap();
    let huge = dir.join("huge.rs");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(sluice_analyzers::input::MAX_INPUT_BYTES + 1)
        .unwrap();
    let out = sluice(&["check", dir.to_str().unwrap()]);
    let (text, errors) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}{errors}");
    assert_eq!(
        errors,
        format!(
            "sluice check: cannot read {}: it holds more than 64 MiB, the most sluice reads \
             of one file (an endless device or pipe never ends); split it or pass a smaller \
             file\n",
            huge.display()
        )
    );
    assert!(text.contains("error[SA0003]"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
