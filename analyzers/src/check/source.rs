//! Reading a tree of `.rs` files and parsing each one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One source file: its path, its text, and its syntax tree when it parses.
#[derive(Debug)]
pub struct SourceFile {
    /// The path, as walked from the checked path.
    pub path: PathBuf,
    /// The file's contents.
    pub text: String,
    /// The parsed file, or the parse error.
    pub parsed: Result<syn::File, syn::Error>,
}

impl SourceFile {
    /// Parses `text` as the file at `path`.
    pub fn new(path: PathBuf, text: String) -> SourceFile {
        let parsed = syn::parse_file(&text);
        SourceFile { path, text, parsed }
    }
}

/// Every `.rs` file under `root` (or `root` itself when it is a file), in
/// sorted order, skipping `target/` and hidden directories.
pub fn rust_files(root: &Path) -> io::Result<Vec<PathBuf>> {
    let meta = fs::metadata(root)?;
    if meta.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = Vec::new();
    walk(root, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if name == "target" || name.starts_with('.') {
                continue;
            }
            walk(&path, out)?;
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}
