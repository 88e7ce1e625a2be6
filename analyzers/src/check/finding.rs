//! A finding placed in a file: what `sluice check` prints.

use std::path::{Path, PathBuf};

use proc_macro2::Span;
use sluice_rules::{Code, Diagnostic, Level};

use super::source::Unreadable;

/// One finding with its position: a rule's [`Diagnostic`] resolved against
/// the file it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule that fired.
    pub code: Code,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: String,
    /// The file, as walked from the checked path.
    pub file: PathBuf,
    /// 1-based line of the span's start.
    pub line: usize,
    /// 1-based column (in characters) of the span's start.
    pub column: usize,
    /// 1-based column one past the span's end, when the span ends on the
    /// same line.
    pub end_column: Option<usize>,
    /// The text of the line, for the caret display.
    pub source_line: String,
    /// Other places the finding is about (SA0002: the earlier declaration).
    pub notes: Vec<Note>,
}

/// A secondary place of a finding, in the same file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// What is there.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// 1-based column one past the span's end, when on the same line.
    pub end_column: Option<usize>,
    /// The text of the line.
    pub source_line: String,
}

/// The line, column and end column of `span`.
fn place(span: Span) -> (usize, usize, Option<usize>) {
    let (start, end) = (span.start(), span.end());
    let end_column =
        (end.line == start.line && end.column > start.column).then_some(end.column + 1);
    (start.line.max(1), start.column + 1, end_column)
}

fn line_of(text: &str, line: usize) -> String {
    text.lines().nth(line - 1).unwrap_or_default().to_string()
}

impl Finding {
    /// The code's level.
    pub fn level(&self) -> Level {
        self.code.level()
    }

    /// A finding of `code` at `span` of `text` (the file's contents).
    pub fn at_span(
        code: Code,
        file: &Path,
        text: &str,
        span: Span,
        message: String,
        help: String,
    ) -> Finding {
        let (line, column, end_column) = place(span);
        Finding {
            code,
            message,
            help,
            file: file.to_path_buf(),
            line,
            column,
            end_column,
            source_line: line_of(text, line),
            notes: Vec::new(),
        }
    }

    /// A rule's diagnostic placed in `file`.
    pub fn from_diagnostic(d: &Diagnostic, file: &Path, text: &str) -> Finding {
        let mut finding = Finding::at_span(
            d.code,
            file,
            text,
            d.span,
            d.message.clone(),
            d.help.clone(),
        );
        finding.notes = d
            .notes
            .iter()
            .map(|(span, message)| {
                let (line, column, end_column) = place(*span);
                Note {
                    message: message.clone(),
                    line,
                    column,
                    end_column,
                    source_line: line_of(text, line),
                }
            })
            .collect();
        finding
    }
}

/// Everything `sluice check` found over a tree.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The findings, sorted by file, line, column and code.
    pub findings: Vec<Finding>,
    /// How many `.rs` files were read.
    pub files_checked: usize,
    /// The paths that could not be read (the rest of the tree was checked).
    pub unreadable: Vec<Unreadable>,
}

impl Report {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.count(Level::Error) > 0
    }

    /// How many findings are of `level`.
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level() == level).count()
    }

    pub(crate) fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            (&a.file, a.line, a.column, a.code).cmp(&(&b.file, b.line, b.column, b.code))
        });
        self.findings.dedup();
    }
}
