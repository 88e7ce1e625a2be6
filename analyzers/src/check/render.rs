//! Printing a [`Report`]: rustc-style text, or JSON for editors and CI.

use std::fmt::Write as _;

use sluice_rules::Level;

use super::finding::{Finding, Report};

/// One finding in rustc's style:
///
/// ```text
/// error[SA0003]: run condition `enabled` takes `&mut Flags`
///   --> src/hud.rs:12:25
///    |
/// 12 | fn enabled(time: &Time, flags: &mut Flags) -> bool {
///    |                         ^^^^^^^^^^^^^^^^^
///    |
///    = help: a run condition is read-only: take `&Flags`
/// ```
pub fn human_finding(f: &Finding) -> String {
    let number = f.line.to_string();
    let gutter = " ".repeat(number.len());
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
    let _ = writeln!(out, "{number} | {}", f.source_line);
    // keep tabs so the caret lines up under the span
    let pad: String = f
        .source_line
        .chars()
        .take(f.column - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let line_len = f.source_line.chars().count();
    let width = match f.end_column {
        Some(end) => end.saturating_sub(f.column),
        None => line_len.saturating_sub(f.column - 1),
    }
    .max(1);
    let _ = writeln!(out, "{gutter} | {pad}{}", "^".repeat(width));
    let _ = writeln!(out, "{gutter} |");
    let _ = writeln!(out, "{gutter} = help: {}", f.help);
    out
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
/// `line`, `column`, `end_column` (null when the span spans lines).
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
    })
}

/// The whole report as a JSON array of [`json_finding`] objects.
pub fn json(report: &Report) -> String {
    let all: Vec<serde_json::Value> = report.findings.iter().map(json_finding).collect();
    serde_json::to_string_pretty(&serde_json::Value::Array(all)).unwrap_or_default()
}
