//! The examples of `examples/` run and print what they promise; the
//! README's library start is `examples/quickstart.rs`, word for word, and
//! prints what the README shows. The example binaries are the ones
//! `cargo test` builds beside this test (it builds every example); run
//! alone, build them first: `cargo build --release --examples`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the example `name` with `args` from the repository's root; its
/// standard output. Fails when it fails, or when its binary is missing or
/// older than its source.
fn run_example(name: &str, args: &[&str]) -> String {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<this test> → target/<profile>/examples/<name>
    let bin = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name);
    let source = root().join("examples").join(format!("{name}.rs"));
    let built = std::fs::metadata(&bin).and_then(|m| m.modified());
    let written = std::fs::metadata(&source)
        .and_then(|m| m.modified())
        .unwrap();
    match built {
        Ok(built) if built >= written => {}
        _ => panic!(
            "{} is missing or older than {}: build the examples first (`cargo build --release --examples`; `cargo test` builds them)",
            bin.display(),
            source.display()
        ),
    }
    let out = Command::new(&bin)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example {name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The fenced block of `text` that starts at the first line equal to
/// `fence` after `after`.
fn block_after<'a>(text: &'a str, after: &str, fence: &str) -> &'a str {
    let from = text.find(after).unwrap_or_else(|| panic!("no {after:?}"));
    let rest = &text[from..];
    let open = rest
        .find(&format!("\n{fence}\n"))
        .unwrap_or_else(|| panic!("no {fence} after {after:?}"))
        + fence.len()
        + 2;
    let close = rest[open..].find("\n```").unwrap() + open;
    &rest[open..=close]
}

#[test]
fn the_readme_library_start_is_the_quickstart_example_and_prints_what_it_shows() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let source = std::fs::read_to_string(root().join("examples/quickstart.rs")).unwrap();
    let shown = block_after(&readme, "## Start: the library", "```rust");
    assert_eq!(
        shown, source,
        "the README's library start differs from examples/quickstart.rs"
    );
    let after_code = &readme[readme.find(shown).unwrap() + shown.len()..];
    let expected = block_after(after_code, "prints", "```");
    assert_eq!(run_example("quickstart", &[]), expected);
    // The crate docs show the same output under the same code.
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let doc_output: String = expected.lines().map(|l| format!("//! {l}\n")).collect();
    assert!(lib.contains("include_str!(\"../examples/quickstart.rs\")"));
    assert!(
        lib.contains(&doc_output),
        "src/lib.rs shows another output than the README"
    );
}

#[test]
fn typed_hashes_and_sorted_sets() {
    let out = run_example("typed", &[]);
    assert_eq!(
        out.lines().take(5).collect::<Vec<_>>(),
        [
            "hset: 2 new fields; lang = Some(\"en\")",
            "board: alice 1.5",
            "board: carol 2.25",
            "board: bob 3",
            "session:9 expires in about a minute: true",
        ]
    );
    let mut keys: Vec<&str> = out.lines().skip(5).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "key board (zset)",
            "key session:9 (hash)",
            "key user:1 (hash)"
        ]
    );
}

#[test]
fn a_format_from_a_string() {
    let out = run_example("format_by_name", &["nemo"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "unknown format 'pika9' (known formats: kvrocks, blackwidow, nemo, ardb, floyd)"
    );
    // nemo's five instances, in the order Pika opens them.
    let instances: Vec<&str> = lines[1..6]
        .iter()
        .map(|l| l.split('"').nth(1).unwrap())
        .collect();
    assert_eq!(instances, ["kv", "hash", "list", "zset", "set"]);
    assert_eq!(
        lines[6],
        "the blackwidow format has no namespaces and no cluster mode"
    );
    assert_eq!(
        lines[7],
        "kvrocks, namespace tenant: \"in the tenant namespace\""
    );
    let bad = Command::new(
        std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("examples/format_by_name"),
    )
    .arg("pika9")
    .output()
    .unwrap();
    assert!(
        !bad.status.success(),
        "an unknown format name fails the example"
    );
}

#[test]
fn migration_with_progress_then_verify() {
    let out = run_example("migrate", &[]);
    let lines: Vec<&str> = out.lines().collect();
    // The plan is made on a thread of its own: it may come after progress.
    let mut first: Vec<&str> = lines[..3].to_vec();
    first.sort_unstable();
    assert_eq!(
        first,
        [
            "plan: 101 keys, 25001 elements",
            "progress: 10000 elements",
            "progress: 20000 elements",
        ]
    );
    assert_eq!(
        lines[3..],
        [
            "migrated 101 keys, 25001 elements",
            "verify: 101 keys compared, 101 equal, 0 differ",
            "blackwidow says: \"value7\"",
        ]
    );
}

/// Every file below `dir` with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn a_pika_directory_read_without_changing_a_byte() {
    let fixture = root().join("tests/fixtures/blackwidow/snappy-default");
    let before = files(&fixture);
    // The read-time clock of the fixture's PROVENANCE.md: its keys.txt
    // lists the keys blackwidow itself saw live then.
    let out = run_example(
        "pika_read_only",
        &[fixture.to_str().unwrap(), "1700000100000"],
    );
    assert_eq!(files(&fixture), before, "the example changed the fixture");
    let keys = std::fs::read_to_string(
        root().join("tests/fixtures/blackwidow/snappy-default.meta/keys.txt"),
    )
    .unwrap();
    let mut by_type = std::collections::BTreeMap::new();
    for line in keys.lines() {
        *by_type.entry(line.split('\t').next().unwrap()).or_insert(0) += 1;
    }
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("live keys by type: {by_type:?}"));
    assert_eq!(lines[1], "HLEN hash:big: (integer) 2000");
    assert_eq!(lines[3], "SET x y: (error) ERR the store is open read-only");
}

#[test]
fn a_server_from_code() {
    let out = run_example("serve", &[]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("serving a floyd store on 127.0.0.1:"),
        "{out}"
    );
    assert_eq!(
        lines[1..],
        ["+OK", "$5", "hello", ":1", "store flushed and closed"]
    );
}
