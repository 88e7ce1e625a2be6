//! `sluice check`: the static checks over a tree of `.rs` files.
//!
//! Every file is parsed with syn (a file that does not parse, is not UTF-8,
//! or nests too deep is reported as SA0008 and skipped); every function
//! carrying `#[system]`, `#[factory]` or `#[run_condition]` (free or in an
//! impl) goes through the per-function rules of `sluice-rules`
//! (SA0001..SA0007); then the whole-tree checks run (SA0009..SA0012, see
//! [`tree`]). A path that cannot be read is listed in
//! [`Report::unreadable`] and the rest of the tree is still checked.
//!
//! syn recurses once per level of nesting; [`check_paths`] and
//! [`check_sources`] parse and check on a thread of their own with a
//! [`PARSE_STACK`] stack, and refuse files that nest deeper than
//! [`nesting::MAX_NESTING`].

pub mod batch;
pub mod cli;
pub mod collect;
pub mod finding;
pub mod mutation;
pub mod nesting;
pub mod queried;
pub mod render;
pub mod source;
pub mod tree;

use std::path::{Path, PathBuf};

use sluice_rules::{BodyContext, Code, TypeAliases, check_attribute};

pub use finding::{Finding, Note, Report};
pub use source::{SourceFile, Unreadable};

use collect::{Collected, collect_file};
use tree::{CheckedNode, tree_checks};

/// The stack of the thread that parses and checks: room for syn's recursion
/// on any file within [`nesting::MAX_NESTING`] (and thousands of levels of
/// what the estimate does not count), in debug builds too. Only the pages
/// touched are ever committed.
pub const PARSE_STACK: usize = 256 << 20;

/// The most bytes of source `sluice check` reads of one tree (all paths
/// together): 1 GiB. Parsing holds every file's syntax tree at once, which
/// takes several times the bytes.
pub const MAX_TREE_BYTES: u64 = 1 << 30;

/// How far [`check_paths_with`] has come: what a progress bar shows while a
/// large tree is read and parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// The paths were walked: `files` `.rs` files are to be read and parsed.
    Found {
        /// How many `.rs` files the walk found.
        files: usize,
    },
    /// One more of the files found was read (or refused).
    Read,
    /// The files read are parsed next: `files` of them.
    Parsing {
        /// How many files were read.
        files: usize,
    },
    /// One more file was parsed (or found not UTF-8).
    Parsed,
    /// Every file is parsed; the per-node and whole-tree checks run.
    Checking,
}

/// Checks every `.rs` file under each of `paths` as one tree. A path that
/// cannot be read is listed in the report's `unreadable`; the rest is
/// checked.
///
/// Each file is read within [`crate::input::MAX_INPUT_BYTES`], and the tree
/// within [`MAX_TREE_BYTES`] all together: a file past either bound is
/// listed as unreadable, saying which.
pub fn check_paths(paths: &[PathBuf]) -> Report {
    check_paths_with(paths, &|_| {})
}

/// [`check_paths`], telling `progress` how far it has come (from the
/// thread that parses: it should be quick).
pub fn check_paths_with(paths: &[PathBuf], progress: &(dyn Fn(Progress) + Sync)) -> Report {
    on_parse_stack(move || {
        let mut files = Vec::new();
        let mut unreadable = Vec::new();
        for root in paths {
            let (found, problems) = source::rust_files(root);
            files.extend(found);
            unreadable.extend(problems);
        }
        progress(Progress::Found { files: files.len() });
        let mut sources = Vec::new();
        let mut total = 0u64;
        for path in files {
            if total > MAX_TREE_BYTES {
                let error = format!(
                    "the files before it hold more than {} MiB, the most `sluice check` \
                     reads of one tree; check a smaller tree",
                    MAX_TREE_BYTES >> 20
                );
                unreadable.push(Unreadable { path, error });
            } else {
                match crate::input::read_bounded(&path) {
                    Ok(bytes) => {
                        total += bytes.len() as u64;
                        sources.push((path, bytes));
                    }
                    Err(error) => unreadable.push(Unreadable {
                        path,
                        error: error.to_string(),
                    }),
                }
            }
            progress(Progress::Read);
        }
        let mut report = check_bytes(sources, progress);
        report.unreadable = unreadable;
        report
    })
}

/// Checks every `.rs` file under `path` as one tree.
pub fn check_path(path: &Path) -> Report {
    check_paths(&[path.to_path_buf()])
}

/// Checks files given by path and contents (not necessarily UTF-8) as one
/// tree, on a thread with a [`PARSE_STACK`] stack: what `sluice check` does
/// once it has read them.
pub fn check_sources(sources: Vec<(PathBuf, Vec<u8>)>) -> Report {
    on_parse_stack(move || check_bytes(sources, &|_| {}))
}

/// Runs `work` on a thread with a [`PARSE_STACK`] stack (on this thread when
/// no such thread can be started). A panic in `work` is resumed here.
fn on_parse_stack(work: impl FnOnce() -> Report + Send) -> Report {
    let work = std::sync::Mutex::new(Some(work));
    let run = || work.lock().ok().and_then(|mut w| w.take()).map(|w| w());
    let spawned = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("sluice-check".to_string())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, run)
            .map(|thread| thread.join())
    });
    match spawned {
        Ok(Ok(Some(report))) => report,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // The thread could not be started: do the work here.
        Ok(Ok(None)) | Err(_) => run().unwrap_or_default(),
    }
}

fn check_bytes(sources: Vec<(PathBuf, Vec<u8>)>, progress: &(dyn Fn(Progress) + Sync)) -> Report {
    progress(Progress::Parsing {
        files: sources.len(),
    });
    let mut files = Vec::new();
    let mut not_utf8 = Vec::new();
    for (path, bytes) in sources {
        match SourceFile::from_bytes(path, bytes) {
            Ok(file) => files.push(file),
            Err(finding) => not_utf8.push(*finding),
        }
        progress(Progress::Parsed);
    }
    progress(Progress::Checking);
    let mut report = check_files(&files);
    report.files_checked += not_utf8.len();
    report.findings.extend(not_utf8);
    report.sort();
    report
}

/// Checks already-read files as one tree.
pub fn check_files(files: &[SourceFile]) -> Report {
    let mut report = Report {
        files_checked: files.len(),
        ..Report::default()
    };
    let mut collected = Collected::default();
    for (i, file) in files.iter().enumerate() {
        match &file.parsed {
            Ok(ast) => collect_file(i, ast, &mut collected),
            Err(e) if file.too_deep => report.findings.push(Finding::at_span(
                Code::UnparsableFile,
                &file.path,
                &file.text,
                e.span(),
                format!("cannot check this file: {e}"),
                "flatten the nesting (a `let` per level, or a helper function); the other \
                 checks skipped this file"
                    .to_string(),
            )),
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
    // SA0002 compares services through the aliases and imports of the tree.
    let mut aliases = TypeAliases::new();
    for file in files {
        if let Ok(ast) = &file.parsed {
            aliases.add_file(ast);
        }
    }
    let context = BodyContext {
        static_muts: collected.static_muts.clone(),
        services: Some(aliases),
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
