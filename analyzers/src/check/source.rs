//! Reading a tree of `.rs` files and parsing each one.
//!
//! Nothing here gives up on the whole tree: a path that cannot be read is
//! recorded as [`Unreadable`] (with its path and why) and the walk goes on;
//! a file that is not UTF-8 becomes an SA0008 finding at its first invalid
//! byte; a file that nests too deep is refused before syn recurses into it
//! (see [`super::nesting`]).

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use sluice_rules::Code;

use super::finding::Finding;
use super::nesting::{MAX_NESTING, too_deep};

/// One source file: its path, its text, and its syntax tree when it parses.
#[derive(Debug)]
pub struct SourceFile {
    /// The path, as walked from the checked path.
    pub path: PathBuf,
    /// The file's contents.
    pub text: String,
    /// The parsed file, or the parse error (or the refusal to parse, when
    /// `too_deep`).
    pub parsed: Result<syn::File, syn::Error>,
    /// Whether parsing was refused because the file nests deeper than
    /// [`MAX_NESTING`]; `parsed` then holds the refusal, at the token where
    /// the limit was crossed.
    pub too_deep: bool,
}

impl SourceFile {
    /// Parses `text` as the file at `path`, unless it nests deeper than
    /// [`MAX_NESTING`].
    ///
    /// syn recurses once per level of nesting: call this (and
    /// [`super::check_files`]) on a thread with a large stack, as
    /// [`super::check_paths`] and [`super::check_sources`] do; a file within
    /// the limit can need a few tens of MiB in a debug build.
    pub fn new(path: PathBuf, text: String) -> SourceFile {
        // Lexing does not recurse; a lexing error is left to syn to report.
        if let Ok(tokens) = text.parse::<TokenStream>()
            && let Some(deep) = too_deep(tokens, MAX_NESTING)
        {
            let error = syn::Error::new(
                deep.span,
                format!(
                    "this file nests more than {MAX_NESTING} levels deep here \
                     (brackets, prefix operators and generic arguments counted together)"
                ),
            );
            return SourceFile {
                path,
                text,
                parsed: Err(error),
                too_deep: true,
            };
        }
        let parsed = syn::parse_file(&text);
        SourceFile {
            path,
            text,
            parsed,
            too_deep: false,
        }
    }

    /// Decodes `bytes` as the file at `path` and parses it; a file that is
    /// not UTF-8 is an SA0008 finding at its first invalid byte.
    pub fn from_bytes(path: PathBuf, bytes: Vec<u8>) -> Result<SourceFile, Box<Finding>> {
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile::new(path, text)),
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                Err(Box::new(not_utf8(&path, error.as_bytes(), at)))
            }
        }
    }
}

/// SA0008 at the byte `at` of `bytes`, the first that is not UTF-8.
fn not_utf8(path: &Path, bytes: &[u8], at: usize) -> Finding {
    let (line_start, line, column) = crate::input::position_of(bytes, at);
    let line_end = bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i);
    let source_line = String::from_utf8_lossy(&bytes[line_start..line_end])
        .trim_end_matches('\r')
        .to_string();
    Finding {
        code: Code::UnparsableFile,
        message: format!(
            "this file is not UTF-8 text: byte 0x{:02X} at line {line}, column {column} is not valid UTF-8",
            bytes[at]
        ),
        help: "save the file as UTF-8; the other checks skipped this file".to_string(),
        file: path.to_path_buf(),
        line,
        column,
        end_column: Some(column + 1),
        source_line,
        notes: Vec::new(),
    }
}

/// A path that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The path, as given or as walked.
    pub path: PathBuf,
    /// Why (the operating system's message, or a symbolic link loop).
    pub error: String,
}

impl Unreadable {
    fn new(path: &Path, error: impl ToString) -> Self {
        Unreadable {
            path: path.to_path_buf(),
            error: error.to_string(),
        }
    }
}

/// Every `.rs` file under `root` (or `root` itself when it is a file), in
/// sorted order, skipping `target/` and hidden directories, with every path
/// that could not be read. Symbolic links are followed; a link back to a
/// directory being walked is reported as a loop, a directory reached twice
/// is walked once.
pub fn rust_files(root: &Path) -> (Vec<PathBuf>, Vec<Unreadable>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    match fs::metadata(root) {
        Err(error) => problems.push(Unreadable::new(root, error)),
        Ok(meta) if meta.is_dir() => {
            let mut walk = Walk {
                files: &mut files,
                problems: &mut problems,
                ancestors: Vec::new(),
                visited: HashSet::new(),
            };
            walk.dir(root);
        }
        Ok(_) => files.push(root.to_path_buf()),
    }
    files.sort();
    (files, problems)
}

struct Walk<'a> {
    files: &'a mut Vec<PathBuf>,
    problems: &'a mut Vec<Unreadable>,
    /// The canonical paths of the directories being walked, outermost first.
    ancestors: Vec<PathBuf>,
    /// Every directory walked so far, canonical.
    visited: HashSet<PathBuf>,
}

impl Walk<'_> {
    fn dir(&mut self, dir: &Path) {
        let canonical = match fs::canonicalize(dir) {
            Ok(canonical) => canonical,
            Err(error) => return self.problems.push(Unreadable::new(dir, error)),
        };
        if let Some(ancestor) = self.ancestors.iter().find(|a| **a == canonical) {
            let error = format!(
                "symbolic link loop: it leads back to {}, which contains it",
                ancestor.display()
            );
            return self.problems.push(Unreadable::new(dir, error));
        }
        if !self.visited.insert(canonical.clone()) {
            return;
        }
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => return self.problems.push(Unreadable::new(dir, error)),
        };
        let mut entries: Vec<fs::DirEntry> = entries
            .filter_map(|entry| {
                entry
                    .map_err(|error| self.problems.push(Unreadable::new(dir, error)))
                    .ok()
            })
            .collect();
        entries.sort_by_key(|e| e.file_name());
        self.ancestors.push(canonical);
        for entry in entries {
            self.entry(&entry);
        }
        self.ancestors.pop();
    }

    fn entry(&mut self, entry: &fs::DirEntry) {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_rs = name.ends_with(".rs");
        let kind = match entry.file_type() {
            Ok(kind) => kind,
            Err(error) => return self.problems.push(Unreadable::new(&path, error)),
        };
        let (is_dir, is_file) = if kind.is_symlink() {
            match fs::metadata(&path) {
                Ok(meta) => (meta.is_dir(), meta.is_file()),
                // A dangling link is worth a word only where a source file
                // was expected; a link that loops on itself always is.
                Err(error) if is_rs || is_loop(&error) => {
                    return self.problems.push(Unreadable::new(&path, error));
                }
                Err(_) => return,
            }
        } else {
            (kind.is_dir(), kind.is_file())
        };
        if is_dir {
            if name == "target" || name.starts_with('.') {
                return;
            }
            self.dir(&path);
        } else if is_file && is_rs {
            self.files.push(path);
        }
    }
}

/// Whether `error` is the operating system's "too many levels of symbolic
/// links" (ELOOP).
fn is_loop(error: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    const ELOOP: i32 = 40;
    #[cfg(not(target_os = "linux"))]
    const ELOOP: i32 = 62;
    error.raw_os_error() == Some(ELOOP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_invalid_byte_is_placed_by_line_and_column() {
        let bytes = b"fn a() {}\nfn \xC3\xA9t\xFF() {}\n".to_vec();
        let finding = SourceFile::from_bytes(PathBuf::from("x.rs"), bytes).unwrap_err();
        assert_eq!(finding.code, Code::UnparsableFile);
        assert_eq!((finding.line, finding.column), (2, 6));
        assert_eq!(finding.source_line, "fn \u{e9}t\u{fffd}() {}");
        assert!(finding.message.contains("byte 0xFF at line 2, column 6"));
    }

    #[test]
    fn too_deep_is_refused_before_parsing() {
        let text = format!("fn f() {{ {}1{} }}", "(".repeat(5000), ")".repeat(5000));
        let file = SourceFile::new(PathBuf::from("deep.rs"), text);
        assert!(file.too_deep);
        let error = file.parsed.unwrap_err();
        assert!(error.to_string().contains("more than 256 levels deep"));
        assert_eq!(error.span().start().line, 1);
    }
}
