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
fn ambiguous_with_silences_a_pair_and_reports_it_as_silenced() {
    let path = file(
        "silenced.plan",
        "SYSTEM health - Hp - ambiguous_with=regen\nSYSTEM poison - Hp health\n\
         SYSTEM regen - Hp -\nGROUP Quiet ambiguous_with=*\n",
    );
    let run = sluice(&["plan", "--warn-ambiguous", &path]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!(
            "warning[SL0008]: {path}:2, {path}:3: `poison` and `regen`"
        )),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        format!(
            "silenced[SL0008]: {path}:1, {path}:3: 1 pair conflicting on Hp ordered by \
             registration order on purpose: `health` and `regen` (silenced by `health`: \
             ambiguous_with(\"regen\"))"
        )
    );
    let unknown = file("unknown.plan", "SYSTEM a - Hp - ambiguous_with=nobody\n");
    let run = sluice(&["plan", &unknown]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("error[SL0002]"), "{}", run.stderr);
    assert!(
        run.stderr.contains("ambiguous_with `nobody`"),
        "{}",
        run.stderr
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
            format!(
                "error[SA0100]: {path}:3: expected a `SYSTEM`, `GROUP`, `STAGE` or `SET` line, \
                 found `RUN`"
            ),
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

/// clap's message for bad usage: status 2, nothing on stdout, the first
/// line of stderr (then the usage and a pointer to `--help`).
fn usage_error(args: &[&str]) -> String {
    let lines = errors(args);
    assert!(
        lines.iter().any(|line| line.starts_with("Usage: sluice")),
        "{lines:?}"
    );
    lines[0].clone()
}

#[test]
fn bad_usage_exits_2() {
    assert!(
        errors(&["plan"])
            .join("\n")
            .starts_with("error: the following required arguments were not provided:\n  <FILE>")
    );
    assert_eq!(
        errors(&["plan", "--packing", "densest", &worked()])[..2],
        [
            "error: invalid value 'densest' for '--packing <P>'",
            "  [possible values: order, first-fit]"
        ]
    );
    assert_eq!(
        usage_error(&["plan", "--fast", &worked()]),
        "error: unexpected argument '--fast' found"
    );
    assert_eq!(
        usage_error(&["plan", &worked(), "second.plan"]),
        "error: unexpected argument 'second.plan' found"
    );
    let missing = errors(&["plan", "/nonexistent/x.plan"]);
    assert!(missing[0].starts_with("error: cannot read /nonexistent/x.plan"));
    assert_eq!(
        usage_error(&["frobnicate"]),
        "error: unrecognized subcommand 'frobnicate'"
    );
    // No subcommand: the help, on stderr, status 2.
    let run = sluice(&[]);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("Commands:\n  plan"), "{}", run.stderr);
}

#[test]
fn mistakes_get_clap_suggestions() {
    let tip = |args: &[&str]| errors(args).into_iter().find(|l| l.contains("tip:"));
    assert_eq!(
        tip(&["plan", "--tre", &worked()]).as_deref(),
        Some("  tip: a similar argument exists: '--tree'")
    );
    assert_eq!(
        tip(&["plna", &worked()]).as_deref(),
        Some("  tip: a similar subcommand exists: 'plan'")
    );
}

#[test]
fn version_prints_the_crate_version() {
    for args in [&["--version"][..], &["plan", "--version"]] {
        let run = sluice(args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(env!("CARGO_PKG_VERSION")),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn completions_print_a_script_naming_the_options() {
    let run = sluice(&["completions", "bash"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for word in [
        "_sluice()",
        "--dot",
        "--tree",
        "--svg",
        "--packing",
        "--warn-ambiguous",
        "--format",
    ] {
        assert!(run.stdout.contains(word), "no `{word}` in the bash script");
    }
    let zsh = sluice(&["completions", "zsh"]);
    assert!(zsh.stdout.starts_with("#compdef sluice"), "{}", zsh.stdout);
    assert!(errors(&["completions", "tcsh"])[0].starts_with("error: invalid value 'tcsh'"));
}

// ---- Organisation: groups, stages, sets, phases, cadence ----------------

fn organised() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/organised.plan").to_owned()
}

/// A planned run: status 0, nothing on stderr, the stdout.
fn planned(args: &[&str]) -> String {
    let run = sluice(args);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    run.stdout
}

#[test]
fn organised_example_prints_the_fixed_cadence_first() {
    assert_eq!(
        planned(&["plan", &organised()]),
        "fixed stage 0: gravity\nfixed stage 1: integrate\nfixed stage 2: collide\n\
         stage 0: poll\nstage 1: spawn\nstage 2: trucks\nstage 3: cars\nstage 4: traffic\n\
         stage 5: hud minimap\n"
    );
}

#[test]
fn organised_example_tree_merges_both_cadences() {
    // Fixed systems come first in the overall plan order; a group sits at
    // its first system; TruckGroup precedes CarGroup (`before=`), `spawn` is
    // first and `traffic` last among VehicleGroup's children.
    assert_eq!(
        planned(&["plan", "--tree", &organised()]),
        "gravity 0 (fixed)\nintegrate 1 (fixed)\ncollide 2 (fixed)\nInput\n  poll 0\nSimulation\n  \
         VehicleGroup\n    spawn 1\n    TruckGroup\n      trucks 2\n    CarGroup\n      cars 3\n    \
         traffic 4\nPresentation\n  hud 5\n  minimap 5\n"
    );
}

#[test]
fn phases_order_within_each_cadence_and_fixed_prints_first() {
    // Reference 000: pre before update before post, separately in each
    // cadence; the fixed cadence is a plan of its own, printed first.
    let path = file(
        "phases.plan",
        "SYSTEM Spawn     -   Enemies  -  phase=pre\n\
         SYSTEM Move      Vel Pos      -\n\
         SYSTEM Cleanup   -   Dead     -  phase=post\n\
         SYSTEM Input     -   Keys     -  phase=pre\n\
         SYSTEM Physics   Pos Vel      -  cadence=fixed\n\
         SYSTEM Integrate -   Pos      -  cadence=fixed phase=post\n\
         SYSTEM Collide   Pos Contacts -  cadence=fixed\n",
    );
    assert_eq!(
        planned(&["plan", &path]),
        "fixed stage 0: Physics Collide\nfixed stage 1: Integrate\n\
         stage 0: Spawn Input\nstage 1: Move\nstage 2: Cleanup\n"
    );
    assert_eq!(
        planned(&["plan", "--tree", &path]),
        "Physics 0 (fixed)\nCollide 0 (fixed)\nIntegrate 1 (fixed)\nSpawn 0\nInput 0\nMove 1\n\
         Cleanup 2\n"
    );
    // `cadence=variable` is the default, spelled out.
    let variable = file(
        "variable.plan",
        "SYSTEM a - X - cadence=variable\nSYSTEM b - X -\n",
    );
    assert_eq!(planned(&["plan", &variable]), "stage 0: a\nstage 1: b\n");
}

#[test]
fn dot_with_a_fixed_cadence_prints_two_graphs() {
    let dot = planned(&["plan", "--dot", &organised()]);
    assert!(dot.starts_with("digraph fixed {\n"), "{dot}");
    let variable = dot
        .find("}\ndigraph plan {\n")
        .expect("the variable graph second");
    let (fixed, variable) = dot.split_at(variable + 2);
    assert!(fixed.contains("[label=\"gravity\\nstage 0\"];"));
    assert!(!fixed.contains("poll"));
    assert!(variable.contains("[label=\"hud\\nstage 5\"];"));
    assert!(!variable.contains("gravity"));
    // Without fixed systems: one graph, as before.
    let worked = planned(&["plan", "--dot", &worked()]);
    assert!(worked.starts_with("digraph plan {") && !worked.contains("digraph fixed"));
}

/// Reference 004: CarGroup and TruckGroup inside VehicleGroup, declared in
/// any order; `order=first`/`last` among the siblings; an empty group.
fn vehicles() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/plan/vehicles.plan"
    )
    .to_owned()
}

#[test]
fn tree_of_nested_groups_in_plan_order() {
    let path = vehicles();
    assert_eq!(
        planned(&["plan", &path]),
        "stage 0: Spawn Peach\nstage 1: TruckSystem Daisy\nstage 2: CarSystem\nstage 3: Traffic\n"
    );
    // Children in plan order (a group at its first system), groups without
    // systems after their siblings.
    assert_eq!(
        planned(&["plan", "--tree", &path]),
        "VehicleGroup\n  Spawn 0\n  TruckGroup\n    TruckSystem 1\n  CarGroup\n    CarSystem 2\n  \
         Traffic 3\n  Empty\nPeach 0\nDaisy 1\n"
    );
    assert_eq!(
        usage_error(&["plan", "--tree", "--dot", &path]),
        "error: the argument '--tree' cannot be used with '--dot'"
    );
}

#[test]
fn help_documents_the_views() {
    let help = planned(&["plan", "--help"]);
    assert!(
        help.contains("Usage: sluice plan [--dot | --tree | --svg]"),
        "{help}"
    );
    assert!(help.contains("digraph fixed"));
    assert!(help.contains("(fixed)"));
}

#[test]
fn stages_and_sets_order_their_members_whatever_the_declaration_order() {
    let path = file(
        "stages.plan",
        "STAGE Simulate 10\nSTAGE Input -5\nSTAGE Present +20\nSET Physics 1\nSET Gameplay 2\n\
         SYSTEM Draw    Pos   -     - stage=Present\n\
         SYSTEM Move    -     Pos   - stage=Simulate set=Physics\n\
         SYSTEM Score   Pos   Score - set=Gameplay stage=Simulate\n\
         SYSTEM Poll    -     Keys  - stage=Input\n\
         SYSTEM Collide Pos   Hits  - stage=Simulate set=Physics\n\
         SYSTEM Hud     Score -     - stage=Present\n",
    );
    assert_eq!(
        planned(&["plan", &path]),
        "stage 0: Poll\nstage 1: Move\nstage 2: Collide\nstage 3: Score\nstage 4: Draw Hud\n"
    );
}

#[test]
fn cross_cadence_orderings_are_sl0003_at_both_lines() {
    let path = file(
        "cadence.plan",
        "SYSTEM physics - Pos - cadence=fixed\nSYSTEM render Pos - physics\n\
         SYSTEM ui - - - render,physics\n",
    );
    let separate = "the two run in separate plans, so the order means nothing: remove it, or \
                    move both into one cadence";
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0003]: {path}:2, {path}:1: `render` (the variable cadence) is ordered \
                 after `physics` (the fixed cadence); {separate}"
            ),
            format!(
                "error[SL0003]: {path}:3, {path}:1: `ui` (the variable cadence) is ordered \
                 before `physics` (the fixed cadence); {separate}"
            ),
        ]
    );
    // Through a group, an order between the cadences is simply not there.
    let group = file(
        "cadence_group.plan",
        "GROUP Sim\nSYSTEM step - Pos - group=Sim cadence=fixed\n\
         SYSTEM draw Pos - Sim\nSYSTEM tick - Pos - Sim\n",
    );
    // `Sim` holds no variable system, so for that cadence it is an empty
    // group carrying `tick` before `draw`.
    assert_eq!(
        planned(&["plan", &group]),
        "fixed stage 0: step\nstage 0: tick\nstage 1: draw\n"
    );
}

#[test]
fn duplicate_stages_and_sets_are_sl0005_at_both_lines() {
    let path = file(
        "ranks.plan",
        "STAGE Early 1\nSET Audio 2\nSTAGE Late 1\nSET Music 2\nSTAGE Early 5\n\
         SYSTEM a - - - stage=Early\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0005]: {path}:1, {path}:3: the stages `Early` and `Late` have the order \
                 1; stage names and orders must be unique"
            ),
            format!(
                "error[SL0005]: {path}:1, {path}:5: the stages `Early` and `Early` have the name \
                 `Early`; stage names and orders must be unique"
            ),
            format!(
                "error[SL0005]: {path}:2, {path}:4: the sets `Audio` and `Music` have the order 2; \
                 set names and orders must be unique"
            ),
        ]
    );
}

#[test]
fn missing_and_unknown_stages_and_sets_are_sl0006() {
    let path = file(
        "membership.plan",
        "STAGE Early 0\nSYSTEM a - - -\nSYSTEM b - - - stage=Nowhere\n\
         SYSTEM c - - - stage=Early set=Missing\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0006]: {path}:2: stages are declared, so every node must name one; `a` \
                 names none"
            ),
            format!(
                "error[SL0006]: {path}:3: `b` is in the stage `Nowhere`, which is not declared"
            ),
            format!("error[SL0006]: {path}:4: `c` is in the set `Missing`, which is not declared"),
        ]
    );
}

#[test]
fn organisation_cycles_are_sl0007_naming_every_line() {
    // A cycle among empty groups is still a cycle.
    let path = file("groups.plan", "GROUP A after=B\nGROUP B after=A\n");
    assert_eq!(
        errors(&["plan", &path]),
        [format!(
            "error[SL0007]: {path}:1, {path}:2: cycle through the organisation: A -> B -> A; a \
             group, stage, set, phase or first/last order contradicts another ordering: remove \
             or reverse one of them"
        )]
    );
    // `Spawn` is first in VehicleGroup yet after `Traffic`, which is last.
    let text = std::fs::read_to_string(vehicles()).unwrap().replace(
        "SYSTEM Spawn   - - -  order=first",
        "SYSTEM Spawn   - - Traffic  order=first",
    );
    let path = file("first_last.plan", &text);
    assert_eq!(
        errors(&["plan", &path]),
        [format!(
            "error[SL0007]: {path}:8, {path}:9, {path}:6: cycle through the organisation: \
             Traffic -> Spawn -> (order_first items of group VehicleGroup) -> CarGroup -> \
             (order_last items of group VehicleGroup) -> Traffic; a group, stage, set, phase or \
             first/last order contradicts another ordering: remove or reverse one of them"
        )]
    );
    // A stage contradicting an explicit ordering.
    let path = file(
        "stage_cycle.plan",
        "STAGE Input 0\nSTAGE Late 1\nSYSTEM draw - - - stage=Late\nSYSTEM poll - - draw stage=Input\n",
    );
    let lines = errors(&["plan", &path]);
    assert_eq!(
        lines,
        [format!(
            "error[SL0007]: {path}:3, {path}:4: cycle through the organisation: draw -> poll -> \
             (stage Input) -> draw; a group, stage, set, phase or first/last order contradicts \
             another ordering: remove or reverse one of them"
        )]
    );
}

#[test]
fn a_group_containing_itself_is_sl0001_at_its_group_lines() {
    let path = file(
        "containment.plan",
        "GROUP A group=C\nGROUP B group=A\nGROUP C group=B\nGROUP D group=D\nGROUP E\n",
    );
    let lines = errors(&["plan", &path]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    // Every group of the cycle, each line once (in the order the planner
    // lists the cycle).
    let (at, message) = lines[0].split_once(": the group").unwrap();
    let mut at: Vec<&str> = at
        .trim_start_matches("error[SL0001]: ")
        .split(", ")
        .collect();
    at.sort_unstable();
    assert_eq!(
        at,
        [
            format!("{path}:1"),
            format!("{path}:2"),
            format!("{path}:3")
        ]
    );
    assert!(message.contains("A -> B -> C -> A"), "{message}");
    assert_eq!(
        lines[1],
        format!(
            "error[SL0001]: {path}:4: the group `D` contains itself: D -> D (each contains the \
             next); a group cannot be its own ancestor"
        )
    );
}

#[test]
fn unknown_groups_and_shared_names_name_the_group_lines() {
    let path = file(
        "unknown_groups.plan",
        "GROUP G group=Nowhere after=ghost\nSYSTEM s - - - group=Ghost\nGROUP s\nGROUP G\n",
    );
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!(
                "error[SL0004]: {path}:1, {path}:4: the group `G` is declared twice; give each group its own name"
            ),
            format!(
                "error[SL0002]: {path}:1: `G` is in the group `Nowhere`, which is not declared; \
                 declare it with `Group::new(\"Nowhere\")` or check the spelling"
            ),
            format!(
                "error[SL0002]: {path}:2: `s` is in the group `Ghost`, which is not declared; \
                 declare it with `Group::new(\"Ghost\")` or check the spelling"
            ),
            format!(
                "error[SL0004]: {path}:2, {path}:3: `s` names both node #0 `s` and a group; nodes \
                 and groups share one namespace: rename one of them"
            ),
            format!(
                "error[SL0002]: {path}:1: `G` is ordered after `ghost`, which is not a registered \
                 node, group or marker; check the spelling or register it"
            ),
        ]
    );
}

#[test]
fn phase_names_are_no_ordering_targets_in_a_plan_file() {
    // The planner lets code order after a phase by name; in the plan format
    // a phase is named by `phase=` only, and any other name must be declared.
    let path = file(
        "phase_targets.plan",
        "SYSTEM a - - PreUpdate\nGROUP G before=PostUpdate\nSYSTEM Update - - -\n\
         SYSTEM b - - Update phase=post\n",
    );
    let unknown = "which is not a declared system or group (a phase is named by `phase=` only); \
                   check the spelling or declare it";
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!("error[SL0002]: {path}:1: `a` is ordered after `PreUpdate`, {unknown}"),
            format!("error[SL0002]: {path}:2: `G` is ordered before `PostUpdate`, {unknown}"),
        ]
    );
    // A system called `Update` is a name like any other.
    let path = file(
        "update_system.plan",
        "SYSTEM Update - - -\nSYSTEM b - - Update phase=post\n",
    );
    assert_eq!(planned(&["plan", &path]), "stage 0: Update\nstage 1: b\n");
}

#[test]
fn malformed_attribute_lines_say_what_was_expected() {
    let path = file(
        "attributes.plan",
        "SYSTEM a - - - colour=red\n\
         SYSTEM b - - - order=first order=last\n\
         SYSTEM c - - - group=\n\
         SYSTEM d - - - phase=during\n\
         SYSTEM e - - - after=a\n\
         SYSTEM f - - order=first\n\
         SYSTEM g - - - cadence=fixed extra\n\
         GROUP G stage=S\n\
         GROUP H I\n\
         GROUP J after=a,,b\n\
         STAGE S one\n\
         STAGE T 1 group=G\n\
         SET U\n\
         SET V 99999999999999999999\n",
    );
    let system = "expected SYSTEM attributes among `group=`, `order=`, `stage=`, `set=`, \
                  `phase=`, `cadence=`, `append=`, `commit=`, `ambiguous_with=`";
    let group = "expected GROUP attributes among `group=`, `order=`, `after=`, `before=`, `ambiguous_with=`";
    assert_eq!(
        errors(&["plan", &path]),
        [
            format!("error[SA0100]: {path}:1: {system}: unknown attribute `colour=`"),
            format!("error[SA0100]: {path}:2: {system}: `order=` appears twice"),
            format!("error[SA0100]: {path}:3: {system}: `group=` has an empty value"),
            format!(
                "error[SA0100]: {path}:4: {system}: `phase=` takes `pre`, `update` or `post`, \
                 found `during`"
            ),
            format!(
                "error[SA0100]: {path}:5: {system}: `after=` is not an attribute of a SYSTEM line \
                 (a SYSTEM line orders with its `after` and `before` columns)"
            ),
            format!(
                "error[SA0100]: {path}:6: expected `SYSTEM <name> <reads> <writes> <after> \
                 [<before>]`: 4 or 5 columns after `SYSTEM`, found 3 (the attributes start at \
                 the first word holding `=`)"
            ),
            format!(
                "error[SA0100]: {path}:7: {system}: `extra` follows the attributes but is no \
                 `<attr>=<value>`"
            ),
            format!(
                "error[SA0100]: {path}:8: {group}: `stage=` is not an attribute of a GROUP line \
                 (stages, sets, phases and cadences are per system)"
            ),
            format!(
                "error[SA0100]: {path}:9: expected `GROUP <name> [<attr>=<value> ...]`: 1 column \
                 after `GROUP`, found 2"
            ),
            format!(
                "error[SA0100]: {path}:10: {group}: `after=` takes names separated by single \
                 commas, found `a,,b`"
            ),
            format!(
                "error[SA0100]: {path}:11: expected `STAGE <name> <order>`: an order number (an \
                 optionally signed decimal integer), found `one`"
            ),
            format!(
                "error[SA0100]: {path}:12: expected `STAGE <name> <order>`: a STAGE line takes no \
                 attributes, found `group=G`"
            ),
            format!(
                "error[SA0100]: {path}:13: expected `SET <name> <order>`: 2 columns after `SET`, \
                 found 1"
            ),
            format!(
                "error[SA0100]: {path}:14: expected `SET <name> <order>`: an order number from \
                 -9223372036854775808 to 9223372036854775807, found `99999999999999999999`"
            ),
        ]
    );
}

#[test]
fn a_malformed_line_is_reported_once_and_does_not_cascade() {
    // Later lines name what the malformed lines 1-5 declared: the system
    // `broken`, the groups `Vehicles` (which holds systems) and `Gate`, the
    // stage `Early` and the set `Audio`. Only the malformed lines are
    // reported: no SL0002, no SL0006 (nor are stages mandatory), and `car`
    // stays in `Vehicles` rather than joining the top level, where
    // `order=first` would put it before `loose` and close a cycle (SL0007).
    let path = file(
        "cascade.plan",
        "SYSTEM broken - -\n\
         GROUP Vehicles order=sideways\n\
         GROUP Gate before=\n\
         STAGE Early one\n\
         SET Audio\n\
         SYSTEM car - - broken - group=Vehicles order=first stage=Early set=Audio\n\
         SYSTEM truck - - broken,Gate - group=Vehicles\n\
         SYSTEM loose - - Gate car\n\
         GROUP Traffic group=Vehicles after=broken\n\
         SYSTEM bus - - - group=broken\n",
    );
    let lines = errors(&["plan", &path]);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    for (line, error) in (1..=5).zip(&lines) {
        assert!(
            error.starts_with(&format!("error[SA0100]: {path}:{line}: ")),
            "{lines:#?}"
        );
    }
    // The same file with its lines mended plans.
    let mended = file(
        "cascade_mended.plan",
        "SYSTEM broken - - - stage=Early\n\
         GROUP Vehicles order=last\n\
         GROUP Gate\n\
         STAGE Early 1\n\
         SET Audio 1\n\
         SYSTEM car - - broken - group=Vehicles order=first stage=Early set=Audio\n\
         SYSTEM truck - - broken,Gate - group=Vehicles stage=Early\n\
         SYSTEM loose - - Gate car stage=Early\n\
         GROUP Traffic group=Vehicles after=broken\n\
         SYSTEM bus - - - group=Traffic stage=Early\n",
    );
    assert_eq!(
        planned(&["plan", &mended]),
        "stage 0: broken loose\nstage 1: car\nstage 2: truck bus\n"
    );
}

#[test]
fn a_malformed_line_does_not_hide_other_errors() {
    // A malformed line excuses only what names it.
    let path = file(
        "other_errors.plan",
        "SYSTEM broken - -\nSYSTEM a - - broken,ghost\nSTAGE Early one\nSTAGE Late 2\n\
         SYSTEM b - - - stage=Early\nSYSTEM c - - - stage=Lost\n",
    );
    let lines = errors(&["plan", &path]);
    let codes: Vec<&str> = lines.iter().map(|l| &l[..14]).collect();
    assert_eq!(
        codes,
        [
            "error[SA0100]:",
            "error[SA0100]:",
            "error[SL0006]:",
            "error[SL0006]:",
            "error[SL0002]:"
        ],
        "{lines:#?}"
    );
    // `a` names no stage while STAGE lines exist; `c` names an unknown one;
    // `ghost` is declared nowhere.
    assert!(lines[2].contains(&format!("{path}:2:")) && lines[2].contains("`a` names none"));
    assert!(lines[3].contains(&format!("{path}:6:")) && lines[3].contains("`Lost`"));
    assert!(lines[4].contains(&format!("{path}:2:")) && lines[4].contains("`ghost`"));
}

/// A large organised file: `systems` systems (a quarter fixed, with phases
/// and sets that follow declaration order; the rest in `groups` nested
/// groups, a chain 100 deep and the others hung on it, with first/last
/// orders and `after=` between unordered siblings), all acyclic by
/// construction.
fn organised_file(systems: usize, groups: usize) -> String {
    let mut text = String::from("SET Early 0\nSET Mid 1\nSET Late 2\nSET Last 3\n");
    let parent = |g: usize| if g < 100 { g - 1 } else { (g * 7) % 100 };
    let unordered = |g: usize| !matches!(g % 9, 1 | 2);
    for g in 0..groups {
        text.push_str(&format!("GROUP g{g}"));
        if g > 0 {
            text.push_str(&format!(" group=g{}", parent(g)));
        }
        match g % 9 {
            1 => text.push_str(" order=first"),
            2 => text.push_str(" order=last"),
            _ => {}
        }
        // Siblings: g and g - 100 share a parent past the chain.
        if g >= 200 && unordered(g) && unordered(g - 100) {
            text.push_str(&format!(" after=g{}", g - 100));
        }
        text.push('\n');
    }
    for i in 0..systems {
        let resource = i % 64;
        let (reads, writes) = if i % 3 == 0 {
            (format!("R{}", (i * 7) % 64), format!("R{resource}"))
        } else {
            (format!("R{resource},R{}", (i * 7) % 64), "-".to_owned())
        };
        if i % 4 == 0 {
            let after = if i >= 8 && i % 8 == 0 {
                format!("s{}", i - 8)
            } else {
                "-".to_owned()
            };
            let phase = if i < systems / 3 {
                " phase=pre"
            } else if i > 2 * systems / 3 {
                " phase=post"
            } else {
                ""
            };
            let set = ["Early", "Mid", "Late", "Last"][i * 4 / systems];
            text.push_str(&format!(
                "SYSTEM s{i} {reads} {writes} {after} cadence=fixed set={set}{phase}\n"
            ));
        } else {
            let order = match (i % 23, i % 29) {
                (0, _) => " order=first",
                (_, 0) => " order=last",
                _ => "",
            };
            let group = if i % 101 == 0 {
                String::new()
            } else {
                format!(" group=g{}", i % groups)
            };
            text.push_str(&format!("SYSTEM s{i} {reads} {writes} -{group}{order}\n"));
        }
    }
    text
}

#[test]
fn a_huge_organised_file_plans() {
    let (systems, groups) = (20_000, 500);
    let path = file("huge_organised.plan", &organised_file(systems, groups));
    let started = std::time::Instant::now();
    let stages = planned(&["plan", &path]);
    let fixed = stages
        .lines()
        .filter(|l| l.starts_with("fixed stage "))
        .count();
    assert!(fixed > 0 && fixed < stages.lines().count());
    let names: usize = stages
        .lines()
        .map(|l| l.split_once(": ").unwrap().1.split(' ').count())
        .sum();
    assert_eq!(names, systems);
    let tree = planned(&["plan", "--tree", &path]);
    assert_eq!(tree.lines().count(), systems + groups);
    assert_eq!(
        tree.lines().filter(|l| l.ends_with(" (fixed)")).count(),
        systems / 4
    );
    // The deepest group is 100 levels down the chain (200 spaces).
    assert!(
        tree.lines()
            .any(|l| l.starts_with(&format!("{}g99", " ".repeat(198))))
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
}

// ---- `--svg`: the runtime's picture of lanes and gates ---------------------

fn classed(doc: &roxmltree::Document<'_>, class: &str) -> usize {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .count()
}

#[test]
fn svg_of_the_worked_example_is_three_lanes_three_gates_four_reads() {
    let out = planned(&["plan", "--svg", &worked()]);
    let doc = roxmltree::Document::parse(&out).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let lanes: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("lane"))
        .map(|n| n.attribute("data-service").unwrap())
        .collect();
    assert_eq!(lanes, ["Enemies", "Armor", "Hp"]);
    // Gates: spawner's Enemies, health's Hp, poison's Hp (a write is one
    // gated access, also when the service is read too). Reads: health's
    // Armor, minimap's Enemies, hud's Hp and Armor.
    assert_eq!(classed(&doc, "gate"), 3);
    assert_eq!(classed(&doc, "shared"), 4);
    assert_eq!(classed(&doc, "node"), 5);
    assert_eq!(classed(&doc, "panel"), 1);
    assert_eq!(classed(&doc, "group"), 0);
    assert_eq!(out, planned(&["plan", "--svg", &worked()]));
}

#[test]
fn svg_is_the_runtime_picture_of_the_same_graph() {
    use sluice::{Graph, NodeBuilder, PlanOptions};
    let path = file(
        "svg_same.plan",
        "SYSTEM look Map - -\nSYSTEM edit - Map,Log look\n",
    );
    let mut graph = Graph::new();
    graph.add_node(NodeBuilder::new("look").reads_named("Map"));
    graph.add_node(
        NodeBuilder::new("edit")
            .gates_named("Map")
            .gates_named("Log")
            .after("look"),
    );
    let plan = graph.build(&PlanOptions::default()).expect("plans");
    assert_eq!(
        planned(&["plan", "--svg", &path]),
        plan.to_svg(graph.view())
    );
}

#[test]
fn svg_of_the_organised_example_has_a_panel_per_cadence_and_group_frames() {
    let out = planned(&["plan", "--svg", &organised()]);
    let doc = roxmltree::Document::parse(&out).expect("well-formed XML");
    assert_eq!(classed(&doc, "panel"), 2);
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(texts.contains(&"fixed cadence") && texts.contains(&"variable cadence"));
    // Vel Pos Contacts (fixed), Keys Cars Trucks Road (variable).
    assert_eq!(classed(&doc, "lane"), 7);
    assert_eq!(classed(&doc, "node"), 10);
    assert!(classed(&doc, "group") >= 5);
    assert!(texts.contains(&"Simulation › VehicleGroup › TruckGroup"));
    // Packing is honoured as for the stage view.
    let packed = planned(&["plan", "--svg", "--packing", "first-fit", &organised()]);
    roxmltree::Document::parse(&packed).expect("well-formed XML");
}

#[test]
fn svg_escapes_names() {
    let path = file(
        "svg_escape.plan",
        "SYSTEM a<b&c R&D - -\nSYSTEM d>e - R&D -\n",
    );
    let out = planned(&["plan", "--svg", &path]);
    assert!(out.contains("a&lt;b&amp;c") && out.contains("d&gt;e"));
    let doc = roxmltree::Document::parse(&out).expect("well-formed XML");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(
        texts.contains(&"a<b&c") && texts.contains(&"R&D"),
        "{texts:?}"
    );
}

#[test]
fn svg_reports_bad_input_as_the_stage_view_does() {
    let path = file(
        "svg_bad.plan",
        "SYSTEM a - - b\nSYSTEM b - - a\nSYSTEM c - - nobody\nSYSTEM\nGROUP g group=h\n",
    );
    let missing = path.replace("svg_bad.plan", "svg_not_there.plan");
    for path in [path, missing] {
        let plain = errors(&["plan", &path]);
        assert_eq!(errors(&["plan", "--svg", &path]), plain);
        assert!(!plain.is_empty());
    }
}

#[test]
fn svg_is_a_view_of_its_own() {
    for [first, second] in [["--svg", "--dot"], ["--tree", "--svg"]] {
        assert_eq!(
            usage_error(&["plan", first, second, &worked()]),
            format!("error: the argument '{first}' cannot be used with '{second}'")
        );
    }
    planned(&["plan", "--svg", "--svg", &worked()]);
    let help = planned(&["plan", "--help"]);
    assert!(help.contains("sluice plan --svg"), "{help}");
}

// ---- Input the format does not expect -------------------------------------

/// A file past 64 MiB (a sparse file here; `/dev/zero` or a pipe that never
/// ends alike) is refused by name, without reading it whole.
#[test]
fn a_file_past_the_size_bound_is_refused_by_name() {
    let path = file("huge.plan", "");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    assert_eq!(
        errors(&["plan", &path]),
        [format!(
            "error: cannot read {path}: it holds more than 64 MiB, the most sluice reads of \
             one file (an endless device or pipe never ends); split it or pass a smaller file"
        )]
    );
    let _ = std::fs::remove_file(&path);
    let help = sluice(&["plan", "--help"]).stdout;
    assert!(help.contains("64 MiB"), "{help}");
}

/// A file that is not UTF-8 is refused at its first invalid byte.
#[test]
fn a_file_that_is_not_utf8_names_the_first_bad_byte() {
    let dir = std::env::temp_dir().join(format!("sluice-plan-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.plan");
    std::fs::write(&path, b"SYSTEM a - - -\nSYSTEM \xe9t\xff - - -\n").unwrap();
    let path = path.to_str().unwrap().to_owned();
    assert_eq!(
        errors(&["plan", &path]),
        [format!(
            "error: cannot read {path}: it is not UTF-8 text: byte 0xE9 at line 2, column 8 is \
             not valid UTF-8"
        )]
    );
}

/// Binary words and megabyte lines are quoted escaped and cut short, one
/// line each: an error message never carries the garbage whole.
#[test]
fn garbage_is_quoted_escaped_and_cut_short() {
    let long = "x".repeat(1 << 20);
    let text = format!("\u{1}\u{7f}BIN - - -\nSYSTEM a - - - {long}=1\nSYSTEM {long},y - - -\n");
    let path = file("garbage.plan", &text);
    let lines = errors(&["plan", &path]);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "error[SA0100]: {path}:1: expected a `SYSTEM`, `GROUP`, `STAGE` or `SET` line, \
             found `\\u{{1}}\\u{{7f}}BIN`"
        )
    );
    for line in &lines[1..] {
        assert!(line.len() < 400, "{} bytes", line.len());
        assert!(line.contains(&format!("`{}...", "x".repeat(48))), "{line}");
    }
}

// --- issue 20: appending and two-point systems (begin) ---

#[test]
fn a_commit_system_is_two_points_after_every_appender() {
    // Reference 003: recorders append to the instance buffer; `instanced`
    // reads beside `terrain` and commits after every appender, even one
    // declared later.
    let path = file(
        "instanced.plan",
        "SYSTEM terrain Quads,Uvs - -\n\
         SYSTEM instanced Quads,Uvs - - commit=Instances\n\
         SYSTEM recorder - - - append=Instances\n\
         SYSTEM sprites Uvs - - append=Instances\n",
    );
    let run = sluice(&["plan", &path]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "stage 0: terrain instanced recorder sprites\nstage 1: instanced@commit\n"
    );
    let dot = sluice(&["plan", "--dot", &path]);
    assert_eq!(dot.status, 0, "{}", dot.stderr);
    assert!(dot.stdout.contains("appends Instances"), "{}", dot.stdout);
    assert!(dot.stdout.contains("after(instanced)"), "{}", dot.stdout);
}

#[test]
fn append_and_commit_values_are_checked() {
    let path = file("bad_append.plan", "SYSTEM a - - - append=,x\n");
    let lines = errors(&["plan", &path]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("append="), "{lines:?}");
    // Appending after the commit is a cycle.
    let path = file(
        "late_append.plan",
        "SYSTEM c - - - commit=B\nSYSTEM late - - c@commit append=B\n",
    );
    let lines = errors(&["plan", &path]);
    assert!(lines.iter().any(|l| l.contains("SL0001")), "{lines:?}");
}
// --- issue 20: appending and two-point systems (end) ---
