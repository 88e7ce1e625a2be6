//! Runs the checks over each fixture in `tests/fixtures/rules/` (each file
//! is its own tree) and compares the findings with the file's annotations.
//!
//! Annotation format: `//~ SA0003` at the end of the line a finding must
//! start on; several codes on one line are separated by spaces
//! (`//~ SA0001 SA0002`). The comparison is of the exact set of
//! (line, code) pairs, so a missing finding and an extra one both fail.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sluice_analyzers::check::{SourceFile, check_files};
use sluice_rules::Code;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

fn expected(text: &str) -> BTreeSet<(usize, String)> {
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, codes)) = line.split_once("//~") {
            for code in codes.split_whitespace() {
                assert!(
                    Code::from_str_code(code).is_some(),
                    "unknown code {code} in annotation"
                );
                out.insert((i + 1, code.to_string()));
            }
        }
    }
    out
}

fn check_fixture(name: &str) -> BTreeSet<Code> {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let want = expected(&text);
    let report = check_files(&[SourceFile::new(path.clone(), text)]);
    let got: BTreeSet<(usize, String)> = report
        .findings
        .iter()
        .map(|f| (f.line, f.code.to_string()))
        .collect();
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = report
        .findings
        .iter()
        .filter(|f| !want.contains(&(f.line, f.code.to_string())))
        .map(|f| format!("{}:{} {} {}", f.line, f.column, f.code, f.message))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{name}: missing {missing:?}, extra {extra:#?}"
    );
    report.findings.iter().map(|f| f.code).collect()
}

#[test]
fn every_fixture_matches_its_annotations() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    names.sort();
    assert!(names.len() >= 9, "fixtures: {names:?}");
    let mut seen = BTreeSet::new();
    for name in &names {
        seen.extend(check_fixture(name));
    }
    // every code has at least one positive case somewhere
    let all: BTreeSet<Code> = Code::ALL.into_iter().collect();
    assert_eq!(seen, all, "codes without a positive fixture");
}

#[test]
fn signatures() {
    let codes = check_fixture("signatures.rs");
    assert!(codes.contains(&Code::ByValueParam));
}

#[test]
fn service_identity() {
    let codes = check_fixture("service_identity.rs");
    assert_eq!(codes, BTreeSet::from([Code::ConflictingAccess]));
}

#[test]
fn locks() {
    check_fixture("locks.rs");
}

#[test]
fn attributes() {
    check_fixture("attributes.rs");
}

#[test]
fn unparsable() {
    check_fixture("unparsable.rs");
}

#[test]
fn registration() {
    check_fixture("registration.rs");
}

#[test]
fn batch() {
    check_fixture("batch.rs");
}

#[test]
fn ordering() {
    check_fixture("ordering.rs");
}

#[test]
fn mut_only_read() {
    check_fixture("mut_only_read.rs");
}

#[test]
fn query_mut_only_read() {
    let codes = check_fixture("query_mut_only_read.rs");
    assert_eq!(codes, BTreeSet::from([Code::MutOnlyRead]));
    let path = fixtures_dir().join("query_mut_only_read.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let report = check_files(&[SourceFile::new(path, text)]);
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`Pos` is queried `&mut Pos` in `closure_reads` but only ever read; `&Pos` would let it share",
            "`Pos` is queried `&mut Pos` in `loop_reads` but only ever read; `&Pos` would let it share",
            "`Hp` is queried `&mut Hp` in `entity_and_filter` but only ever read; `&Hp` would let it share",
            "`Pos` is queried `&mut Pos` in `nested_tuple` but only ever read; `&Pos` would let it share",
        ]
    );
}

#[test]
fn clean_has_nothing() {
    assert!(check_fixture("clean.rs").is_empty());
}

#[test]
fn annotations_parse() {
    let got = expected("a //~ SA0001 SA0002\nb\nc //~ SA0012\n");
    let want: BTreeSet<(usize, String)> = [(1, "SA0001"), (1, "SA0002"), (3, "SA0012")]
        .into_iter()
        .map(|(l, c)| (l, c.to_string()))
        .collect();
    assert_eq!(got, want);
}
