//! Hostile input to `sluice plan` and `sluice check`, through their library
//! entry points: arbitrary bytes, soups of plan-format words, and soups of
//! Rust-ish tokens with deep nesting. Nothing may panic or overflow the
//! stack (which would abort this test binary); every run ends in a proper
//! status with its messages where they belong.
//!
//! A few seconds inside `cargo test`; set `PROPTEST_CASES` for a longer run.

use std::path::PathBuf;

use proptest::prelude::*;
use sluice_analyzers::check::{Report, check_sources, cli};
use sluice_analyzers::plan_cli;
use sluice_rules::Code;

fn cases(default: u32) -> ProptestConfig {
    let cases = if cfg!(miri) { 2 } else { default };
    ProptestConfig {
        // keep `cargo test` short; PROPTEST_CASES still overrides
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `sluice plan` on `text` and checks the contract of its output.
fn plan(options: &[&str], text: &[u8]) -> Result<(), TestCaseError> {
    let mut args: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    args.push("fuzz.plan".to_string());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = plan_cli::run_text(&args, text, &mut out, &mut err);
    let (out, err) = (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    );
    match status {
        0 => {
            let dot = options.contains(&"--dot");
            for line in out.lines() {
                prop_assert!(
                    dot || line.starts_with("stage "),
                    "unexpected output line {line:?}"
                );
            }
            for line in err.lines() {
                prop_assert!(line.starts_with("warning[SL0008]: fuzz.plan"), "{line:?}");
            }
        }
        2 => {
            prop_assert_eq!(out, "", "nothing on stdout after an error");
            prop_assert!(!err.is_empty());
            for line in err.lines() {
                prop_assert!(
                    line.starts_with("error[")
                        || line.starts_with("warning[SL0008]")
                        || line.starts_with("error: cannot read fuzz.plan"),
                    "{line:?}"
                );
                // every planner or format error names the file
                prop_assert!(line.contains("fuzz.plan"), "{line:?}");
            }
        }
        other => prop_assert!(false, "status {other}"),
    }
    Ok(())
}

/// Runs `sluice check` on one file of `bytes` and checks the report.
fn check(bytes: Vec<u8>) -> Result<Report, TestCaseError> {
    let path = PathBuf::from("fuzz.rs");
    let report = check_sources(vec![(path.clone(), bytes)]);
    prop_assert_eq!(report.files_checked, 1);
    prop_assert!(report.unreadable.is_empty());
    for finding in &report.findings {
        prop_assert_eq!(&finding.file, &path);
        prop_assert!(finding.line >= 1 && finding.column >= 1, "{finding:?}");
    }
    let status = cli::status(&report);
    prop_assert_eq!(status, u8::from(report.has_errors()));
    Ok(report)
}

const PLAN_WORDS: &[&str] = &[
    "SYSTEM",
    "SYSTEM",
    "SYSTEM",
    "GROUP",
    "STAGE",
    "SET",
    "a",
    "b",
    "c",
    "hud",
    "Hp",
    "Time",
    "-",
    "-",
    "*",
    "a,b",
    "Hp,Time",
    "b,c,a",
    ",",
    ",,",
    "a,",
    "#",
    "=",
    "group=g",
    "order=first",
    "stage=s",
    "1",
    "-3",
    "\u{e9}",
    "\u{0}",
];
const PLAN_GAPS: &[&str] = &[" ", " ", " ", "\t", "\n", "\n", "\r\n", ""];

fn plan_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(PLAN_WORDS),
            prop::sample::select(PLAN_GAPS),
        ),
        0..120,
    )
    .prop_map(|words| words.into_iter().map(|(w, g)| format!("{w}{g}")).collect())
}

/// Well-formed declarations with random columns: they reach the planner
/// (cycles, unknown names, ambiguities, exclusives).
fn plan_declarations() -> impl Strategy<Value = String> {
    let names = ["a", "b", "c", "d", "e"];
    let list = move |max: usize| {
        prop::sample::subsequence(names.to_vec(), 0..=max).prop_map(|l| {
            if l.is_empty() {
                "-".to_string()
            } else {
                l.join(",")
            }
        })
    };
    let services = prop::sample::subsequence(vec!["Hp", "Time", "Map"], 0..=2).prop_map(|l| {
        if l.is_empty() {
            "-".to_string()
        } else {
            l.join(",")
        }
    });
    let writes = prop_oneof![
        4 => prop::sample::subsequence(vec!["Hp", "Time", "Map"], 0..=2)
            .prop_map(|l| if l.is_empty() { "-".to_string() } else { l.join(",") }),
        1 => Just("*".to_string()),
    ];
    prop::collection::vec(
        (
            prop::sample::select(names.to_vec()),
            services,
            writes,
            list(2),
            list(1),
        ),
        0..12,
    )
    .prop_map(|lines| {
        lines
            .into_iter()
            .map(|(n, r, w, a, b)| format!("SYSTEM {n} {r} {w} {a} {b}\n"))
            .collect()
    })
}

const RUST_TOKENS: &[&str] = &[
    "fn",
    "f",
    "g",
    "#[system]",
    "#[factory]",
    "#[run_condition]",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    "&",
    "&mut",
    "mut",
    "-",
    "!",
    "*",
    "|",
    "||",
    "=",
    "==",
    "->",
    "=>",
    ";",
    ",",
    ":",
    "::",
    ".",
    "..",
    "'a",
    "Hp",
    "m::Hp",
    "Out<",
    "Next<",
    "NextValue<",
    "type",
    "use",
    "as",
    "impl",
    "for",
    "struct",
    "mod",
    "if",
    "else",
    "match",
    "let",
    "return",
    "1",
    "\"s\"",
    "'c'",
    "/*",
    "*/",
    "//",
    "\n",
    "r#\"",
    "\"#",
    "#",
    "$",
    "\u{e9}",
    "\\",
];

/// Units that nest when repeated (each with its closer, when it has one).
const NESTERS: &[(&str, &str)] = &[
    ("(", ")"),
    ("[", "]"),
    ("{", "}"),
    ("Vec<", ">"),
    ("- ", ""),
    ("&", ""),
    ("!", ""),
    ("a = ", ""),
    ("|a| ", ""),
    ("fn() -> ", ""),
    ("else if a {} ", ""),
    ("return ", ""),
];

fn rust_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => prop::sample::select(RUST_TOKENS).prop_map(|t| format!("{t} ")),
        1 => (prop::sample::select(NESTERS), 1usize..1500, any::<bool>()).prop_map(
            |((open, close), depth, balanced)| {
                let closers = if balanced { depth } else { depth / 2 };
                format!("{}x{}", open.repeat(depth), close.repeat(closers))
            }
        ),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// Nesting that parses: one construct repeated up to 3,000 deep inside a
/// valid item, so syn really recurses that deep (a soup mostly fails to
/// parse at its first stray token).
fn deep_valid() -> impl Strategy<Value = String> {
    const EXPRESSIONS: &[(&str, &str)] = &[
        ("(", ")"),
        ("[", "]"),
        ("{", "}"),
        ("- ", ""),
        ("&", ""),
        ("!", ""),
        ("*", ""),
        ("a = ", ""),
        ("|a| ", ""),
        ("return ", ""),
        ("move || ", ""),
    ];
    const TYPES: &[(&str, &str)] = &[
        ("Vec<", ">"),
        ("&", ""),
        ("&mut ", ""),
        ("*const ", ""),
        ("fn() -> ", ""),
        ("[", "; 1]"),
        ("(", ",)"),
        ("Box<dyn Fn() -> ", ">"),
    ];
    prop_oneof![
        (prop::sample::select(EXPRESSIONS), 1usize..3000).prop_map(|((open, close), depth)| {
            format!(
                "#[system]\nfn f(hp: &Hp) {{\n    let x = {}1{};\n}}\n",
                open.repeat(depth),
                close.repeat(depth)
            )
        }),
        (prop::sample::select(TYPES), 1usize..3000).prop_map(|((open, close), depth)| {
            format!(
                "#[system]\nfn f(hp: &{}u8{}) {{}}\n",
                open.repeat(depth),
                close.repeat(depth)
            )
        }),
        (1usize..3000).prop_map(|depth| {
            format!("fn f() {{ if a {{}} {}}}\n", "else if a {} ".repeat(depth))
        }),
    ]
}

proptest! {
    #![proptest_config(cases(128))]

    #[test]
    fn plan_survives_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        plan(&[], &bytes)?;
    }

    #[test]
    fn plan_survives_word_soups(
        text in plan_soup(),
        options in prop::sample::subsequence(vec!["--warn-ambiguous", "--dot", "--packing=first-fit"], 0..=3),
    ) {
        plan(&options, text.as_bytes())?;
    }

    #[test]
    fn plan_survives_random_declarations(
        text in plan_declarations(),
        options in prop::sample::subsequence(vec!["--warn-ambiguous", "--packing=first-fit"], 0..=2),
    ) {
        plan(&options, text.as_bytes())?;
    }

    #[test]
    fn check_survives_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let valid = std::str::from_utf8(&bytes).is_ok();
        let report = check(bytes)?;
        if !valid {
            prop_assert!(report.findings.iter().any(|f| f.code == Code::UnparsableFile));
        }
    }

    #[test]
    fn check_survives_rust_token_soups(text in rust_soup()) {
        check(text.into_bytes())?;
    }

    #[test]
    fn check_survives_deep_valid_nesting(text in deep_valid()) {
        let report = check(text.into_bytes())?;
        // refused (SA0008) past the limit; otherwise parsed: no SA0008
        for finding in &report.findings {
            if finding.code == Code::UnparsableFile {
                prop_assert!(finding.message.contains("levels deep"), "{}", finding.message);
            }
        }
    }
}

#[test]
fn deep_input_and_node_findings_come_back_through_the_entry_point() {
    // past the nesting limit: refused as SA0008; a node: the rules see it
    let deep = "fn f() { ".to_string() + &"(".repeat(1400) + "x" + &")".repeat(1400) + " }";
    let report = check_sources(vec![(PathBuf::from("deep.rs"), deep.into_bytes())]);
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].code, Code::UnparsableFile);
    let node = "#[system] fn f(a: &Hp, b: &mut m::Hp) {}".to_string();
    let report = check_sources(vec![(PathBuf::from("node.rs"), node.into_bytes())]);
    let codes: Vec<Code> = report.findings.iter().map(|f| f.code).collect();
    assert!(codes.contains(&Code::ConflictingAccess), "{codes:?}");
}
