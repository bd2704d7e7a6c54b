//! The README as a new user follows it: every shell block whose commands
//! all run `redcodec` (`cargo run --release … --`) is run as a bash script
//! with this build's binary, from the repository's root, with `/tmp/` moved
//! to a fresh temporary directory; where the README shows what the block
//! prints, the output must be exactly that (`…` in the README stands for
//! any text within a line: figures of the day and the machine). Blocks that
//! set up the machine or run the test suite itself are not run; the test
//! checks that the ones it runs are the starts the README promises.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fenced shell block and the output the README shows after it.
struct Block {
    /// Line of the opening fence (1-based).
    line: usize,
    script: String,
    expected: Option<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every ```sh block of `readme`, with the fenced block that follows it
/// when the text between them is `prints` (or ends with it).
fn blocks(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let fence_end = |from: usize| {
        (from..lines.len())
            .find(|&i| lines[i].trim_start().starts_with("```"))
            .unwrap_or_else(|| panic!("README: unclosed fence after line {from}"))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim_start();
        if !fence.starts_with("```") {
            i += 1;
            continue;
        }
        let end = fence_end(i + 1);
        if fence == "```sh" {
            let script = lines[i + 1..end].join("\n");
            let mut j = end + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            let mut expected = None;
            if j + 1 < lines.len() && lines[j].trim_end().ends_with("prints") {
                let mut k = j + 1;
                while k < lines.len() && lines[k].trim().is_empty() {
                    k += 1;
                }
                if k < lines.len() && lines[k].trim_start().starts_with("```") {
                    let close = fence_end(k + 1);
                    expected = Some(lines[k + 1..close].join("\n"));
                }
            }
            out.push(Block {
                line: i + 1,
                script,
                expected,
            });
        }
        i = end + 1;
    }
    out
}

/// The commands of a script: lines joined at trailing backslashes, without
/// comments and blank lines.
fn commands(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        // A trailing comment is not part of the command.
        let line = line
            .split_once(" # ")
            .map_or(line, |(command, _)| command)
            .trim();
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// Whether every command of the block runs `redcodec` through cargo.
fn runs_redcodec(script: &str) -> bool {
    let commands = commands(script);
    !commands.is_empty() && commands.iter().all(|c| c.contains("cargo run --release"))
}

/// Whether `actual` is `expected` line for line, `…` in an expected line
/// standing for any text.
fn matches(expected: &str, actual: &str) -> bool {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    e.len() == a.len() && e.iter().zip(&a).all(|(e, a)| line_matches(e, a))
}

fn line_matches(pattern: &str, line: &str) -> bool {
    let mut pieces = pattern.split('…');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    for (n, piece) in pieces.iter().enumerate() {
        if n + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

fn run(block: &Block, tmp: &Path) -> String {
    let bin = env!("CARGO_BIN_EXE_redcodec");
    let tmp = format!("{}/", tmp.display());
    let script = block
        .script
        .replace("cargo run --release -q --", bin)
        .replace("cargo run --release --", bin)
        .replace("/tmp/", &tmp);
    let out = Command::new("bash")
        .args(["-c", &format!("set -euo pipefail\n{script}")])
        .current_dir(repo_root())
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout).replace(&tmp, "/tmp/");
    assert!(
        out.status.success(),
        "README line {}: the block failed ({}):\n{}\nstdout:\n{stdout}\nstderr:\n{}",
        block.line,
        out.status,
        block.script,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_readme_commands_print_what_it_shows() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let runnable: Vec<Block> = blocks(&readme)
        .into_iter()
        .filter(|b| runs_redcodec(&b.script))
        .collect();
    let all: String = runnable.iter().map(|b| b.script.as_str()).collect();
    for start in [
        " exec ",
        " dump ",
        " compare",
        " check ",
        " migrate ",
        " verify ",
    ] {
        assert!(
            all.contains(start),
            "no README block runs `redcodec{start}`"
        );
    }
    let shown = runnable.iter().filter(|b| b.expected.is_some()).count();
    assert!(shown >= 2, "the README shows the output of {shown} blocks");
    for block in &runnable {
        let tmp = tempfile::tempdir().unwrap();
        let stdout = run(block, tmp.path());
        if let Some(expected) = &block.expected {
            assert!(
                matches(expected, &stdout),
                "README line {}: the block prints\n{stdout}\nwhere the README shows\n{expected}",
                block.line
            );
        }
    }
}

#[test]
fn the_test_command_and_the_setup_are_shown_and_not_run() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let scripts: Vec<String> = blocks(&readme).into_iter().map(|b| b.script).collect();
    assert!(
        scripts
            .iter()
            .any(|s| commands(s).contains(&"./scripts/test".to_string())),
        "the README shows ./scripts/test, the command CI runs"
    );
    assert!(scripts.iter().any(|s| s.contains("libclang-dev")));
    for s in &scripts {
        assert!(
            !(s.contains("./scripts/test") && runs_redcodec(s)),
            "the test command would run itself"
        );
    }
}

#[test]
fn wildcards_match_within_a_line_only() {
    assert!(line_matches(
        "migrated … keys in … s",
        "migrated 12 keys in 0.01 s"
    ));
    assert!(line_matches("a…", "abc"));
    assert!(line_matches("…c", "abc"));
    assert!(!line_matches("a…d", "abc"));
    assert!(!line_matches("abc", "abcd"));
    assert!(matches("x\n…", "x\nanything"));
    assert!(!matches("x\n…", "x\nanything\nmore"));
}
