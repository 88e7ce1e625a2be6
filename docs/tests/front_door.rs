//! The front door stays short and its links stay true: the README is under
//! 200 lines, and every relative link in it and in the guide names a file
//! or folder of the repository.

use std::path::{Path, PathBuf};

/// The repository's root (this crate is `docs/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("docs/ has a parent")
        .to_path_buf()
}

/// The targets of the markdown links and images in `text`: what stands
/// between `](` and the next `)`.
fn link_targets(text: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    targets
}

/// Every relative link of the markdown file `file` that names nothing.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("readable");
    let folder = file.parent().expect("a file has a folder");
    link_targets(&text)
        .into_iter()
        .filter(|target| !target.contains("://") && !target.starts_with("mailto:"))
        .filter_map(|target| {
            let path = target.split('#').next().unwrap_or_default();
            let exists = path.is_empty() || folder.join(path).exists();
            (!exists).then(|| format!("{}: {target}", file.display()))
        })
        .collect()
}

/// The guide's chapters, its index included.
fn guide() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .expect("the guide's folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README");
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "the README has {lines} lines; depth goes in the guide"
    );
}

#[test]
fn every_relative_link_names_a_file() {
    let mut files = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("CHANGELOG.md"),
        root().join("benches/README.md"),
    ];
    files.extend(guide());
    assert!(
        files.len() > 10,
        "the README, the guide's index and its chapters"
    );
    let broken: Vec<String> = files.iter().flat_map(|file| broken_links(file)).collect();
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_chapter_is_compiled_and_has_its_example() {
    let lib = std::fs::read_to_string(root().join("docs/src/lib.rs")).expect("the guide's crate");
    let manifest = std::fs::read_to_string(root().join("docs/Cargo.toml")).expect("its manifest");
    let index = std::fs::read_to_string(root().join("docs/guide/README.md")).expect("the index");
    for chapter in guide() {
        let name = chapter.file_name().unwrap().to_str().unwrap();
        if name == "README.md" {
            continue;
        }
        assert!(
            lib.contains(&format!("\"../guide/{name}\"")),
            "{name} is not included as a doctest module in docs/src/lib.rs"
        );
        assert!(index.contains(name), "{name} is missing from the index");
    }
    // Each example the manifest declares exists.
    for line in manifest.lines().filter(|line| line.starts_with("path = ")) {
        let path = line.trim_start_matches("path = ").trim_matches('"');
        assert!(
            root().join("docs").join(path).exists(),
            "{path} is declared but missing"
        );
    }
}

#[test]
fn the_link_scanner_finds_links() {
    let text = "see [a](b.md) and ![c](d/e.svg#x), not [f] (g)";
    assert_eq!(link_targets(text), ["b.md", "d/e.svg#x"]);
}
