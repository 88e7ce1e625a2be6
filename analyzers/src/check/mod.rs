//! `sluice check`: the static checks over a tree of `.rs` files.
//!
//! Every file is parsed with syn (a file that does not parse is reported as
//! SA0008 and skipped); every function carrying `#[system]`, `#[factory]` or
//! `#[run_condition]` (free or in an impl) goes through the per-function
//! rules of `sluice-rules` (SA0001..SA0007); then the whole-tree checks run
//! (SA0009..SA0012, see [`tree`]).

pub mod batch;
pub mod cli;
pub mod collect;
pub mod finding;
pub mod mutation;
pub mod render;
pub mod source;
pub mod tree;

use std::io;
use std::path::{Path, PathBuf};

use sluice_rules::{BodyContext, Code, check_attribute};

pub use finding::{Finding, Report};
pub use source::SourceFile;

use collect::{Collected, collect_file};
use tree::{CheckedNode, tree_checks};

/// Checks every `.rs` file under each of `paths` as one tree. An error means
/// a path could not be read.
pub fn check_paths(paths: &[PathBuf]) -> io::Result<Report> {
    let mut files = Vec::new();
    for root in paths {
        for path in source::rust_files(root)? {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            files.push(SourceFile::new(path, text));
        }
    }
    Ok(check_files(&files))
}

/// Checks every `.rs` file under `path` as one tree.
pub fn check_path(path: &Path) -> io::Result<Report> {
    check_paths(&[path.to_path_buf()])
}

/// Checks already-read files as one tree.
pub fn check_files(files: &[SourceFile]) -> Report {
    let mut report = Report {
        findings: Vec::new(),
        files_checked: files.len(),
    };
    let mut collected = Collected::default();
    for (i, file) in files.iter().enumerate() {
        match &file.parsed {
            Ok(ast) => collect_file(i, ast, &mut collected),
            Err(e) => report.findings.push(Finding::at_span(
                Code::UnparsableFile,
                &file.path,
                &file.text,
                e.span(),
                format!("cannot parse this file: {e}"),
                "fix the syntax error; the other checks skipped this file".to_string(),
            )),
        }
    }
    let context = BodyContext {
        static_muts: collected.static_muts.clone(),
    };
    let nodes: Vec<CheckedNode<'_>> = collected
        .nodes
        .iter()
        .filter_map(|found| {
            let checked = check_attribute(&found.attr, &found.sig, Some(&found.body), &context)?;
            Some(CheckedNode { found, checked })
        })
        .collect();
    for node in &nodes {
        let file = &files[node.found.file];
        for d in &node.checked.diagnostics {
            report
                .findings
                .push(Finding::from_diagnostic(d, &file.path, &file.text));
        }
    }
    for (i, d) in tree_checks(&collected, &nodes) {
        let file = &files[i];
        report
            .findings
            .push(Finding::from_diagnostic(&d, &file.path, &file.text));
    }
    report.sort();
    report
}
