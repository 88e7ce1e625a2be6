//! `sluice plan` against a reference written from the plan-format spec alone
//! (`reference/mod.rs`), on plan files of the original format: SYSTEM lines
//! with reads, writes, after and before, `*` exclusive, comments and blank
//! lines, forward references, and now and then a cycle, an unknown name, a
//! duplicate or a malformed line.
//!
//! A planned file must print exactly the reference's stages; a rejected one
//! must report exactly the reference's set of error codes.
//!
//! A few seconds inside `cargo test`; set `PROPTEST_CASES` for a longer run.

mod reference;

use std::collections::BTreeSet;

use proptest::prelude::*;
use reference::{assert_planned, assert_rejected, compare, list, names_of, outcome_mix};

const NAMES: [&str; 12] = [
    "spawner", "health", "poison", "minimap", "hud", "input", "ai", "physics", "render", "audio",
    "save", "net",
];
const RESOURCES: [&str; 6] = ["Hp", "Armor", "Enemies", "Pos", "Vel", "Time"];

/// Whom an `after` or `before` entry names, as a raw pick resolved when the
/// file is written (so that shrinking keeps it meaningful).
#[derive(Debug, Clone)]
enum Target {
    /// A system declared earlier (none for the first).
    Earlier(u8),
    /// A system declared later: a forward reference (none for the last).
    Later(u8),
    /// The system itself: a cycle of one.
    Itself,
    /// A name nothing declares: `ghost`, or a phase's name (`Update`,
    /// `PreUpdate`), which is no ordering target in a plan file.
    Ghost(u8),
    /// `broken0`, the name of the first malformed line: declared by it when
    /// the line's kind and name are readable (then no SL0002, and no
    /// ordering), else unknown (SL0002), as when there is no malformed line.
    Broken,
}

/// The names `Target::Ghost` picks from.
const GHOSTS: [&str; 3] = ["ghost", "Update", "PreUpdate"];

/// Malformed lines, `{}` standing for a fresh name: too few columns, too
/// many, an unknown first word, `-` as the name, an empty name in a list, a
/// trailing comma, `*` outside `writes`. All but the unknown first word and
/// the `-` name still declare `{}`.
const MALFORMED_LINES: [&str; 7] = [
    "SYSTEM {} - -",
    "SYSTEM {} - - - - extra",
    "RUN {} - - -",
    "SYSTEM - Hp - -",
    "SYSTEM {} Hp,,Pos - -",
    "SYSTEM {} - Hp, -",
    "SYSTEM {} * - -",
];

#[derive(Debug, Clone)]
struct SystemLine {
    reads: Vec<u8>,
    writes: Vec<u8>,
    /// 0: `*` alone; 1: `*` after a resource; otherwise not exclusive.
    exclusive: u8,
    after: Vec<Target>,
    before: Option<Vec<Target>>,
    /// Takes the name of an earlier system (SL0004) when `Some` and there is
    /// one.
    duplicate_of: Option<u8>,
    /// A malformed line of this kind goes right before this system.
    malformed_before: Option<&'static str>,
    /// Separators and decorations: leading space, column gap, a trailing
    /// comment, a comment or blank line before.
    layout: (bool, u8, bool, u8),
}

fn target(earlier: u32, later: u32) -> impl Strategy<Value = Target> {
    prop_oneof![
        earlier => any::<u8>().prop_map(Target::Earlier),
        later => any::<u8>().prop_map(Target::Later),
        1 => Just(Target::Itself),
        1 => any::<u8>().prop_map(Target::Ghost),
        1 => Just(Target::Broken),
    ]
}

prop_compose! {
    fn system_line()(
        reads in prop::collection::vec(0..RESOURCES.len() as u8, 0..3),
        writes in prop::collection::vec(0..RESOURCES.len() as u8, 0..2),
        exclusive in 0..24u8,
        // `after` mostly names earlier systems, `before` later ones: mostly
        // acyclic, with the odd backward edge closing a cycle.
        after in prop::collection::vec(target(100, 8), 0..3),
        before in prop::option::weighted(0.4, prop::collection::vec(target(8, 100), 0..3)),
        duplicate_of in prop::option::weighted(0.03, any::<u8>()),
        malformed_before in prop::option::weighted(0.03, prop::sample::select(MALFORMED_LINES.to_vec())),
        layout in (any::<bool>(), any::<u8>(), any::<bool>(), any::<u8>()),
    ) -> SystemLine {
        SystemLine { reads, writes, exclusive, after, before, duplicate_of, malformed_before, layout }
    }
}

fn plan_file() -> impl Strategy<Value = Vec<SystemLine>> {
    prop::collection::vec(system_line(), 1..NAMES.len())
}

/// Writes the plan file the generated lines describe.
fn render(lines: &[SystemLine]) -> String {
    let n = lines.len();
    let names: Vec<String> = (0..n)
        .map(|i| match lines[i].duplicate_of {
            Some(k) if i > 0 => NAMES[usize::from(k) % i].to_owned(),
            _ => NAMES[i].to_owned(),
        })
        .collect();
    let resolve = |i: usize, targets: &[Target]| -> Vec<String> {
        targets
            .iter()
            .filter_map(|t| match *t {
                Target::Earlier(k) => (i > 0).then(|| names[usize::from(k) % i].clone()),
                Target::Later(k) => {
                    (i + 1 < n).then(|| names[i + 1 + usize::from(k) % (n - i - 1)].clone())
                }
                Target::Itself => Some(names[i].clone()),
                Target::Ghost(k) => Some(GHOSTS[usize::from(k) % GHOSTS.len()].to_owned()),
                Target::Broken => Some("broken0".to_owned()),
            })
            .collect()
    };
    let mut text = String::from("# generated by plan_reference.rs\n");
    let mut broken = 0;
    for (i, line) in lines.iter().enumerate() {
        let (indent, gap, trailing, before_line) = line.layout;
        match before_line % 8 {
            0 => text.push('\n'),
            1 => text.push_str("  # a comment line\n"),
            _ => {}
        }
        if let Some(malformed) = line.malformed_before {
            text.push_str(&malformed.replace("{}", &format!("broken{broken}")));
            text.push('\n');
            broken += 1;
        }
        let gap = [" ", "  ", "\t", " \t "][usize::from(gap % 4)];
        let reads = names_of(&RESOURCES, &line.reads);
        let mut writes = names_of(&RESOURCES, &line.writes);
        match line.exclusive {
            0 => writes = vec!["*".to_owned()],
            1 => writes.push("*".to_owned()),
            _ => {}
        }
        let mut columns = vec![
            "SYSTEM".to_owned(),
            names[i].clone(),
            list(&reads),
            list(&writes),
            list(&resolve(i, &line.after)),
        ];
        if let Some(before) = &line.before {
            columns.push(list(&resolve(i, before)));
        }
        if indent {
            text.push_str(gap);
        }
        text.push_str(&columns.join(gap));
        if trailing {
            // `#` starts a comment even when glued to the last column.
            text.push_str(if gap == "\t" {
                "#why"
            } else {
                " # why it runs here"
            });
        }
        text.push('\n');
    }
    text
}

proptest! {
    #![proptest_config(reference::proptest_config())]

    #[test]
    fn cli_agrees_with_the_reference_on_random_original_format_files(lines in plan_file()) {
        let text = render(&lines);
        compare(&text, false).map_err(TestCaseError::fail)?;
    }
}

/// The property above only means something if the generator reaches both
/// outcomes and every error it aims at: count them over a fixed sample.
#[test]
fn random_files_cover_plans_and_every_error_kind() {
    let (planned, codes) = outcome_mix(plan_file(), |lines| render(lines), 400);
    assert!((100..=350).contains(&planned), "{planned} of 400 planned");
    assert_eq!(
        codes,
        BTreeSet::from(["SA0100", "SL0001", "SL0002", "SL0004"]),
        "error kinds reached"
    );
}

#[test]
fn worked_example_of_the_spec() {
    assert_planned(
        "SYSTEM spawner  -        Enemies   -\n\
         SYSTEM health   Armor    Hp        -\n\
         SYSTEM poison   Hp       Hp        -\n\
         SYSTEM minimap  Enemies  -         -\n\
         SYSTEM hud      Hp,Armor -         spawner\n",
        "stage 0: spawner health\nstage 1: poison minimap\nstage 2: hud\n",
        None,
    );
}

#[test]
fn a_system_waits_for_the_latest_conflicting_stage_not_the_previous_system() {
    // `c` reads A after two writers of it; `d` only conflicts with `c`; the
    // exclusive `save` conflicts with all, `idle` (no access) with `save`.
    assert_planned(
        "SYSTEM a - A -\nSYSTEM b - A -\nSYSTEM c A C -\nSYSTEM d - C -\n\
         SYSTEM save - * -\nSYSTEM idle - - -\n",
        "stage 0: a\nstage 1: b\nstage 2: c\nstage 3: d\nstage 4: save\nstage 5: idle\n",
        None,
    );
}

#[test]
fn two_readers_share_a_stage_and_a_writer_after_them_waits() {
    assert_planned(
        "SYSTEM r1 Pos - -\nSYSTEM r2 Pos - -\nSYSTEM w - Pos -\n",
        "stage 0: r1 r2\nstage 1: w\n",
        None,
    );
}

#[test]
fn forward_references_reorder_the_plan_and_tie_break_by_declaration() {
    // `hud` must follow `input` (declared later, via `before`), so plan order
    // is input, hud, late; stages follow the ordering, not the data.
    assert_planned(
        "SYSTEM hud - - input\n# input is declared below\n\tSYSTEM input - Keys - hud\nSYSTEM late - - -\n",
        "stage 0: input late\nstage 1: hud\n",
        None,
    );
    // A `before` on a later system pulls it ahead of an earlier one in plan
    // order, and the earlier one waits a stage for it; `a` shares no data with
    // either and stays in stage 0.
    assert_planned(
        "SYSTEM a - X -\nSYSTEM b - - -\nSYSTEM c Y - - b\n",
        "stage 0: a c\nstage 1: b\n",
        None,
    );
}

#[test]
fn exclusive_with_other_writes_still_conflicts_with_everything() {
    assert_planned(
        "SYSTEM one - - -\nSYSTEM all - Hp,* -\nSYSTEM two - - -\n",
        "stage 0: one\nstage 1: all\nstage 2: two\n",
        None,
    );
}

#[test]
fn empty_and_comment_only_files_plan_to_nothing() {
    assert_planned("", "", None);
    assert_planned("# nothing yet\n\n   \n", "", None);
}

#[test]
fn every_error_of_a_file_is_reported() {
    assert_rejected(
        "SYSTEM a - - b\nSYSTEM b - - a\nSYSTEM a - - -\nnonsense\nSYSTEM c - - ghost\n",
        &["SA0100", "SL0001", "SL0002", "SL0004"],
    );
    // A self-cycle through `before` and a three-cycle through forward names.
    assert_rejected("SYSTEM d - - - d\n", &["SL0001"]);
    assert_rejected(
        "SYSTEM a - - c\nSYSTEM b - - a\nSYSTEM c - - b\n",
        &["SL0001"],
    );
}

#[test]
fn a_malformed_line_is_reported_once_and_still_declares_its_name() {
    // `short` has too few columns: reported once, and naming it (before or
    // after its line) is no unknown name.
    assert_rejected("SYSTEM short - -\nSYSTEM b - - short\n", &["SA0100"]);
    assert_rejected(
        "SYSTEM b - - - short\nSYSTEM short - - - - extra\n",
        &["SA0100"],
    );
    // Its orderings are lost with it and naming it orders nothing, so it
    // closes no cycle: `a` after `bad`, which is after `a`.
    assert_rejected("SYSTEM a - - bad\nSYSTEM bad - - a,\n", &["SA0100"]);
    // Without a readable kind or name it declares nothing.
    assert_rejected("RUN x - - -\nSYSTEM b - - x\n", &["SA0100", "SL0002"]);
    assert_rejected(
        "SYSTEM x,y - - -\nSYSTEM b - - x,y\n",
        &["SA0100", "SL0002"],
    );
    // A good line of that name is what the name means, with no SL0004.
    assert_rejected(
        "SYSTEM a - - b\nSYSTEM a - -\nSYSTEM b - - a\n",
        &["SA0100", "SL0001"],
    );
    assert_rejected("SYSTEM a * - -\n", &["SA0100"]);
    assert_rejected("SYSTEM a - - *\n", &["SA0100"]);
}

#[test]
fn a_duplicate_keeps_its_own_orderings_and_the_name_means_the_first() {
    // The second `a` orders itself after and before `b`: a cycle of its own.
    assert_rejected(
        "SYSTEM a - - -\nSYSTEM b - - -\nSYSTEM a - - b b\n",
        &["SL0001", "SL0004"],
    );
    // `c` after `a` means the first `a`, which is after nothing: no cycle.
    assert_rejected(
        "SYSTEM a - - -\nSYSTEM b - - -\nSYSTEM a - - b\nSYSTEM c - - a\n",
        &["SL0004"],
    );
    // The duplicate's unknown name is still reported.
    assert_rejected(
        "SYSTEM a - - -\nSYSTEM a - - ghost\n",
        &["SL0002", "SL0004"],
    );
}
