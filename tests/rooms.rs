//! The rooms of the workspace stay where docs/src/architecture.md puts
//! them: every crate's modules stand on layers, each importing only the
//! layers below it (`scripts/modgraph` finds no import cycle in any
//! crate's `src/`); no crate has two files of one name; `crates/cli` stays
//! clap glue, under 2,000 lines.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The crates of the workspace, by their `src/` directories.
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ is listed")
        .map(|entry| entry.expect("a crates/ entry").path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = root();
    let sources = crate_sources(root);
    assert!(
        sources.len() >= 10,
        "the workspace's crates were not found: {sources:?}"
    );
    let mut cycles = Vec::new();
    for src in &sources {
        let out = Command::new("python3")
            .arg(root.join("scripts/modgraph"))
            .arg(src)
            .output()
            .expect("python3 runs scripts/modgraph");
        assert!(
            out.status.success(),
            "scripts/modgraph {}: {}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let summary = text.lines().next().unwrap_or_default();
        assert!(
            summary.contains(" modules, "),
            "scripts/modgraph {} printed no summary: {text}",
            src.display()
        );
        if !summary.contains(" 0 cycles") {
            cycles.push(format!("{}: {text}", src.display()));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// The Rust files under `dir`, at any depth.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source directory is listed") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn no_crate_has_two_files_of_one_name() {
    let mut twins = Vec::new();
    for src in crate_sources(root()) {
        let mut seen: std::collections::HashMap<String, PathBuf> = Default::default();
        for file in rust_files(&src) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            // A folder's own module, and the crate's root files.
            if ["mod.rs", "lib.rs", "main.rs"].contains(&name.as_str()) {
                continue;
            }
            if let Some(first) = seen.insert(name, file.clone()) {
                twins.push(format!("{} and {}", first.display(), file.display()));
            }
        }
    }
    assert!(
        twins.is_empty(),
        "files of one name in a crate:\n{}",
        twins.join("\n")
    );
}

#[test]
fn the_command_line_crate_is_clap_glue_under_2000_lines() {
    let files = rust_files(&root().join("crates/cli/src"));
    assert!(files.len() > 5, "crates/cli/src was not found");
    let lines: usize = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .expect("a source file")
                .lines()
                .count()
        })
        .sum();
    assert!(
        lines < 2000,
        "crates/cli/src holds {lines} lines: what is not argument parsing and printing belongs in the crate that does the work"
    );
}
