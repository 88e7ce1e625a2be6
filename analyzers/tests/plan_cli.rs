//! `sluice plan` as a user runs it: the built binary on files.

use std::path::PathBuf;
use std::process::Command;

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn sluice(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .output()
        .expect("run sluice");
    Run {
        status: output.status.code().expect("exit status"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Writes `text` to a file of its own and returns its path.
fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sluice-plan-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn worked() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/worked.plan").to_owned()
}

/// Bad input: status 2, nothing on stdout, the stderr lines.
fn errors(args: &[&str]) -> Vec<String> {
    let run = sluice(args);
    assert_eq!(run.status, 2, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");
    run.stderr.lines().map(str::to_owned).collect()
}

#[test]
fn worked_example_prints_its_three_stages() {
    let run = sluice(&["plan", &worked()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "stage 0: spawner health\nstage 1: poison minimap\nstage 2: hud\n"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn dot_labels_nodes_with_stages_and_edges_with_reasons() {
    let run = sluice(&["plan", "--dot", &worked()]);
    assert_eq!(run.status, 0);
    assert!(run.stdout.starts_with("digraph plan {"));
    assert!(run.stdout.contains("n4 [label=\"hud\\nstage 2\"];"));
    assert!(
        run.stdout
            .contains("n2 -> n4 [label=\"lane Hp: shared after gate\"];")
    );
    assert!(run.stdout.contains("n0 -> n4 [label=\"after(spawner)\"];"));
}

#[test]
fn first_fit_packing_and_exclusive_systems() {
    let path = file(
        "first_fit.plan",
        "SYSTEM a - A -\nSYSTEM b - A -\nSYSTEM c A C -\nSYSTEM d - C -\nSYSTEM save - * -\nSYSTEM idle - - -\n",
    );
    let order = sluice(&["plan", &path]);
    assert_eq!(
        order.stdout,
        "stage 0: a\nstage 1: b\nstage 2: c\nstage 3: d\nstage 4: save\nstage 5: idle\n"
    );
    // First-fit: `d` and `idle` conflict with nothing in stage 0, so they
    // move there, ahead of the systems registered before them.
    let packed = sluice(&["plan", "--packing", "first-fit", &path]);
    assert_eq!(packed.status, 0, "{}", packed.stderr);
    assert_eq!(
        packed.stdout,
        "stage 0: a d idle\nstage 1: b\nstage 2: c\nstage 3: save\n"
    );
    let same = sluice(&["plan", "--packing=first-fit", &path]);
    assert_eq!(same.stdout, packed.stdout);
}

#[test]
fn warn_ambiguous_reports_sl0008_on_stderr() {
    let path = file(
        "ambiguous.plan",
        "SYSTEM health - Hp -\nSYSTEM poison - Hp health\nSYSTEM regen - Hp -\n",
    );
    let quiet = sluice(&["plan", &path]);
    assert_eq!(quiet.stderr, "");
    let run = sluice(&["plan", "--warn-ambiguous", &path]);
    assert_eq!(run.status, 0);
    assert_eq!(
        run.stdout,
        "stage 0: health\nstage 1: poison\nstage 2: regen\n"
    );
    // One warning for the lane of Hp, naming both pairs and every line.
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "warning[SL0008]: {path}:1, {path}:2, {path}:3: 2 pairs of nodes conflict on Hp and \
             are ordered only by registration order (earlier node first): `health` and `regen`, \
             `poison` and `regen`; declare one node of each pair after the other to make the \
             order intentional"
        )
    );
}

#[test]
fn warn_ambiguous_on_thousands_of_writers_is_one_capped_line() {
    let text: String = (0..3000).map(|i| format!("SYSTEM s{i} - Hp -\n")).collect();
    let path = file("writers.plan", &text);
    let run = sluice(&["plan", "--warn-ambiguous", &path]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 3000);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    // 3000 * 2999 / 2 pairs, 8 listed: nodes s0..s4, on lines 1..5.
    let at: Vec<String> = (1..=5).map(|l| format!("{path}:{l}")).collect();
    assert!(
        lines[0].starts_with(&format!(
            "warning[SL0008]: {}: 4498500 pairs of nodes conflict on Hp",
            at.join(", ")
        )),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("`s1` and `s4`, and 4498492 more;"),
        "{}",
        lines[0]
    );
}

#[test]
fn malformed_lines_say_what_was_expected() {
    let path = file(
        "malformed.plan",
        "SYSTEM ok - - -\nSYSTEM short - -\nRUN x - - -\nSYSTEM - - - -\nSYSTEM y A,,B - -\nSYSTEM z - - - - extra\n",
    );
    let expected = "expected `SYSTEM <name> <reads> <writes> <after> [<before>]`";
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!("error[SA0100]: {path}:2: {expected}: 4 or 5 columns after `SYSTEM`, found 3"),
            format!("error[SA0100]: {path}:3: {expected}, found `RUN`"),
            format!("error[SA0100]: {path}:4: {expected}: a system name, found `-`"),
            format!(
                "error[SA0100]: {path}:5: {expected}: `reads` is `-` or names separated by \
                 single commas, found `A,,B`"
            ),
            format!("error[SA0100]: {path}:6: {expected}: 4 or 5 columns after `SYSTEM`, found 6"),
        ]
    );
}

#[test]
fn duplicate_names_name_both_lines() {
    let path = file(
        "duplicate.plan",
        "# two huds\nSYSTEM hud Hp - -\nSYSTEM other - - -\nSYSTEM hud - Hp -\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [format!(
            "error[SL0004]: {path}:2, {path}:4: `hud` is registered twice (node #0 `hud` and \
             node #2 `hud`); give one of them its own instance key"
        )]
    );
}

#[test]
fn unknown_names_give_the_name_and_line() {
    let path = file(
        "unknown.plan",
        "SYSTEM a - - spawnr\nSYSTEM b - - - nobody\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0002]: {path}:1: `a` is ordered after `spawnr`, which is not a \
                 registered node, group or marker; check the spelling or register it"
            ),
            format!(
                "error[SL0002]: {path}:2: `b` is ordered before `nobody`, which is not a \
                 registered node, group or marker; check the spelling or register it"
            ),
        ]
    );
}

#[test]
fn cycles_list_every_system_in_order() {
    let path = file(
        "cycle.plan",
        "SYSTEM a - - c\nSYSTEM b - - a\nSYSTEM c - - b\nSYSTEM free - - -\nSYSTEM d - - - d\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0001]: {path}:1, {path}:2, {path}:3: cycle: a -> b -> c -> a; remove or \
                 reverse one of these orderings"
            ),
            format!(
                "error[SL0001]: {path}:5: cycle: d -> d; remove or reverse one of these orderings"
            ),
        ]
    );
}

#[test]
fn several_errors_in_one_file_are_all_reported() {
    let path = file(
        "many.plan",
        "SYSTEM a - - b\nSYSTEM b - - a\nSYSTEM a - - -\nnonsense\nSYSTEM c - - ghost\n",
    );
    let lines = errors(&["plan", &path]);
    let codes: Vec<&str> = lines.iter().map(|l| &l[..14]).collect();
    assert_eq!(
        codes,
        [
            "error[SA0100]:",
            "error[SL0004]:",
            "error[SL0002]:",
            "error[SL0001]:"
        ]
    );
    assert!(lines[0].contains(&format!("{path}:4:")));
    assert!(lines[1].contains(&format!("{path}:1, {path}:3:")));
    assert!(lines[2].contains(&format!("{path}:5:")) && lines[2].contains("`ghost`"));
    assert!(lines[3].contains("cycle: a -> b -> a"));
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(errors(&["plan"]), ["error: `sluice plan` needs a FILE"]);
    assert_eq!(
        errors(&["plan", "--packing", "densest", &worked()]),
        ["error: `--packing` takes `order` or `first-fit`, found `densest`"]
    );
    assert_eq!(
        errors(&["plan", "--fast", &worked()]),
        ["error: unknown option `--fast`"]
    );
    let missing = errors(&["plan", "/nonexistent/x.plan"]);
    assert!(missing[0].starts_with("error: cannot read /nonexistent/x.plan"));
    assert!(errors(&["frobnicate"])[0].starts_with("error: unknown command `frobnicate`"));
}
