//! Printing a [`Report`]: rustc-style text, or JSON for editors and CI.

use std::fmt::Write as _;

use sluice_rules::Level;

use super::finding::{Finding, Note, Report};

/// One finding in rustc's style, with its notes (`-` under a note's span):
///
/// ```text
/// error[SA0002]: `m::Hp` is gated (`&mut`) here and `Hp` read (`&`) earlier ...
///  --> src/hud.rs:4:20
///   |
/// 4 | fn f(current: &Hp, hp: &mut m::Hp) {}
///   |      ------------  ^^^^^^^^^^^^^^
///   |      note: `Hp` is read (`&`) here
///   |
///   = help: declare `m::Hp` once; `&mut m::Hp` also lets the body read it
/// ```
pub fn human_finding(f: &Finding) -> String {
    let widest = f
        .notes
        .iter()
        .map(|n| n.line)
        .chain([f.line])
        .max()
        .unwrap_or(f.line);
    let gutter = " ".repeat(widest.to_string().len());
    let mut out = String::new();
    let _ = writeln!(out, "{}[{}]: {}", f.level(), f.code, f.message);
    let _ = writeln!(
        out,
        "{gutter}--> {}:{}:{}",
        f.file.display(),
        f.line,
        f.column
    );
    let _ = writeln!(out, "{gutter} |");
    let number = format!("{:>width$}", f.line, width = gutter.len());
    let _ = writeln!(out, "{number} | {}", f.source_line);
    let mut marks: Vec<char> = Vec::new();
    mark(&mut marks, &f.source_line, f.column, f.end_column, '^');
    let (same_line, elsewhere): (Vec<&Note>, Vec<&Note>) =
        f.notes.iter().partition(|n| n.line == f.line);
    for note in &same_line {
        mark(
            &mut marks,
            &f.source_line,
            note.column,
            note.end_column,
            '-',
        );
    }
    let _ = writeln!(
        out,
        "{gutter} | {}",
        marks.iter().collect::<String>().trim_end()
    );
    for note in &same_line {
        let _ = writeln!(
            out,
            "{gutter} | {}note: {}",
            pad(&f.source_line, note.column),
            note.message
        );
    }
    for note in &elsewhere {
        let number = format!("{:>width$}", note.line, width = gutter.len());
        let _ = writeln!(out, "{gutter} |");
        let _ = writeln!(out, "{number} | {}", note.source_line);
        let mut marks = Vec::new();
        mark(
            &mut marks,
            &note.source_line,
            note.column,
            note.end_column,
            '-',
        );
        let _ = writeln!(
            out,
            "{gutter} | {} note: {}",
            marks.iter().collect::<String>().trim_end(),
            note.message
        );
    }
    let _ = writeln!(out, "{gutter} |");
    let _ = writeln!(out, "{gutter} = help: {}", f.help);
    out
}

/// The whitespace before `column` of `line`, tabs kept so marks line up.
fn pad(line: &str, column: usize) -> String {
    line.chars()
        .take(column - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect()
}

/// Writes `with` into `marks` under columns `column..end_column` of `line`
/// (to the end of the line when the span runs past it), at least one.
fn mark(marks: &mut Vec<char>, line: &str, column: usize, end_column: Option<usize>, with: char) {
    let line_len = line.chars().count();
    let width = match end_column {
        Some(end) => end.saturating_sub(column),
        None => line_len.saturating_sub(column - 1),
    }
    .max(1);
    let padding: Vec<char> = pad(line, column).chars().collect();
    let end = padding.len() + width;
    if marks.len() < end {
        marks.resize(end, ' ');
    }
    for (i, c) in padding.into_iter().enumerate() {
        if marks[i] == ' ' {
            marks[i] = c;
        }
    }
    for slot in &mut marks[column - 1..end] {
        if *slot == ' ' || *slot == '\t' {
            *slot = with;
        }
    }
}

/// The whole report as text: each finding, then a summary line.
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&human_finding(f));
        out.push('\n');
    }
    let errors = report.count(Level::Error);
    let warnings = report.count(Level::Warning);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let files = plural(report.files_checked, "file");
    let unreadable = match report.unreadable.len() {
        0 => String::new(),
        1 => "; 1 path could not be read".to_string(),
        n => format!("; {n} paths could not be read"),
    };
    if errors + warnings == 0 {
        let _ = writeln!(
            out,
            "sluice check: no problems found in {files}{unreadable}"
        );
    } else {
        let _ = writeln!(
            out,
            "sluice check: {}, {} in {files}{unreadable}",
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    }
    out
}

/// One finding as a JSON object: `code`, `level`, `message`, `help`, `file`,
/// `line`, `column`, `end_column` (null when the span spans lines), and
/// `notes` (each with `message`, `line`, `column`, `end_column`).
pub fn json_finding(f: &Finding) -> serde_json::Value {
    serde_json::json!({
        "code": f.code.as_str(),
        "level": f.level().as_str(),
        "message": f.message,
        "help": f.help,
        "file": f.file.display().to_string(),
        "line": f.line,
        "column": f.column,
        "end_column": f.end_column,
        "notes": f.notes.iter().map(|n| serde_json::json!({
            "message": n.message,
            "line": n.line,
            "column": n.column,
            "end_column": n.end_column,
        })).collect::<Vec<_>>(),
    })
}

/// The whole report as a JSON array of [`json_finding`] objects.
pub fn json(report: &Report) -> String {
    let all: Vec<serde_json::Value> = report.findings.iter().map(json_finding).collect();
    serde_json::to_string_pretty(&serde_json::Value::Array(all)).unwrap_or_default()
}
