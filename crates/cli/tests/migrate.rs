//! `redcodec migrate`, `verify` and `migrate-bench` as a user runs them.

use std::path::Path;

mod common;
use common::*;

const CLOCK: &str = "1700000000000";

/// Runs `exec` on a store and checks it succeeded.
fn exec(format: &str, dir: &Path, script: &str) -> String {
    exec_at(CLOCK, format, dir, script)
}

fn dump(format: &str, dir: &Path) -> String {
    let out = redcodec(&Args::new("dump").store(format, dir), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// `migrate` arguments from kvrocks `src` to blackwidow `dst`.
fn migrate_args<'a>(src: &'a Path, dst: &'a Path, extra: &[&'a str]) -> Args<'a> {
    Args::new("migrate")
        .src("kvrocks", src)
        .dst("blackwidow", dst)
        .fixed_clock(CLOCK)
        .with(extra)
}

/// A script with every type and collections of 100 elements.
fn dataset() -> String {
    let mut s = String::from("SET s v\nSET ttl x PX 1500\nSADD set a b c\n");
    let fields: Vec<String> = (0..100).map(|i| format!("f{i} \"\\xff{i}\"")).collect();
    s.push_str(&format!("HSET h {}\n", fields.join(" ")));
    let items: Vec<String> = (0..100).map(|i| format!("item{i}")).collect();
    s.push_str(&format!("RPUSH l {}\n", items.join(" ")));
    let members: Vec<String> = (0..100).map(|i| format!("{}.25 m{i}", i - 50)).collect();
    s.push_str(&format!("ZADD z {}\n", members.join(" ")));
    s
}

#[test]
fn migrate_with_verify_then_read_the_destination() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("kv"), dir.path().join("bw"));
    exec("kvrocks", &src, &dataset());
    let out = redcodec(&migrate_args(&src, &dst, &["--verify"]), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("migrated 6 keys, 305 elements,"),
        "{stdout}"
    );
    assert_contains(&stdout, "verify: 6 keys compared, all equal");
    // Not a terminal: no progress bar, only the summary.
    assert_eq!(text(&out.stderr), "");
    assert!(!dst.join("redcodec-migrate.checkpoint").exists());
    let replies = exec(
        "blackwidow",
        &dst,
        "HGET h f7\nLINDEX l 99\nZSCORE z m0\nPTTL ttl\n",
    );
    // 1500 ms rounds up to the next whole second in blackwidow.
    assert_eq!(
        replies,
        "\"\\xff7\"\n\"item99\"\n\"-50.25\"\n(integer) 2000\n"
    );

    let verify = || {
        let args = Args::new("verify")
            .src("kvrocks", &src)
            .dst("blackwidow", &dst)
            .fixed_clock(CLOCK);
        redcodec(&args, "")
    };
    let out = verify();
    assert!(out.status.success(), "{}", text(&out.stderr));
    exec("blackwidow", &dst, "HSET h f7 changed\nDEL set\n");
    let out = verify();
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert_contains(&stdout, "6 keys compared, 2 differ");
    assert_contains(&stdout, "\"h\": content differs");
    assert_contains(&stdout, "\"set\": missing from the destination");
    assert!(text(&out.stderr).contains("verify found 2 differences"));
}

#[test]
fn a_killed_migration_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("kv");
    exec("kvrocks", &src, &dataset());
    // The write path's commits (the bulk path's: migrate_bulk.rs).
    let batch = ["--batch-elements", "16", "--no-bulk"];

    let whole = dir.path().join("whole");
    let out = redcodec(&migrate_args(&src, &whole, &batch), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = dump("blackwidow", &whole);

    let dst = dir.path().join("killed");
    let args = migrate_args(&src, &dst, &batch).with(&["--pause-after-commits", "5"]);
    kill_when_paused(binary().args(&*args), 5);
    assert!(dst.join("redcodec-migrate.checkpoint").exists());
    assert_ne!(dump("blackwidow", &dst), expected);

    let out = redcodec(&migrate_args(&src, &dst, &batch), "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("an interrupted migration is recorded"),
        "{}",
        text(&out.stderr)
    );

    let mut resume = batch.to_vec();
    resume.extend(["--resume", "--verify"]);
    let out = redcodec(&migrate_args(&src, &dst, &resume), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Commit 5 is in the middle of the list "l"; "h" was written whole.
    assert_contains(&stdout, "resumed after key \"h\"");
    assert_contains(&stdout, "all equal");
    assert_eq!(dump("blackwidow", &dst), expected);
    assert!(!dst.join("redcodec-migrate.checkpoint").exists());
}

#[test]
fn a_source_that_is_not_of_the_named_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("kv");
    exec("kvrocks", &src, "SET a b\n");
    let dst = dir.path().join("out");
    let out = redcodec(
        &Args::new("migrate")
            .src("blackwidow", &src)
            .dst("kvrocks", &dst),
        "",
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_contains(&err, "holds no blackwidow store");
    assert!(!dst.exists(), "nothing created for a refused source");
}

#[test]
fn a_destination_holding_data_is_refused_unless_merging() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("kv"), dir.path().join("bw"));
    exec("kvrocks", &src, "SET a from-source\n");
    exec("blackwidow", &dst, "SET a old\nSET b mine\n");
    let out = redcodec(&migrate_args(&src, &dst, &[]), "");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_contains(&err, "already holds data");
    assert_contains(&err, "--merge");
    assert_eq!(exec("blackwidow", &dst, "GET a\n"), "\"old\"\n");

    let out = redcodec(&migrate_args(&src, &dst, &["--merge", "--verify"]), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("all equal; 1 only in the destination (merged)"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        exec("blackwidow", &dst, "GET a\nGET b\n"),
        "\"from-source\"\n\"mine\"\n"
    );
}

#[test]
fn unrepresentable_keys_are_named_and_skipped_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("kv"), dir.path().join("bw"));
    // 2100-01-01: past blackwidow's 32-bit seconds.
    exec(
        "kvrocks",
        &src,
        "SET a 1\nSET late v PXAT 4102444800000\nSET z 2\n",
    );
    let out = redcodec(&migrate_args(&src, &dst, &[]), "");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_contains(&err, "1 key cannot be stored in the blackwidow format");
    assert_contains(&err, "\"late\": its expiry 2100-01-01T00:00:00Z");
    assert_contains(&err, "--skip-unrepresentable");
    assert_eq!(dump("blackwidow", &dst), "", "nothing written");

    let out = redcodec(
        &migrate_args(&src, &dst, &["--skip-unrepresentable", "--verify"]),
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("migrated 2 keys"), "{stdout}");
    assert!(
        stdout
            .contains("skipped 1 keys the blackwidow format cannot hold:\n  \"late\": its expiry"),
        "{stdout}"
    );
    assert_contains(
        &stdout,
        "verify: 3 keys compared, all equal; 1 unrepresentable",
    );
}

#[test]
fn migrate_bench_reports_the_ratio_and_peak_memory() {
    let out = redcodec(
        &[
            "migrate-bench",
            "--elements",
            "2000",
            "--runs",
            "1",
            "--from",
            "kvrocks",
            "--to",
            "blackwidow",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| 500 |") || l.starts_with("| 2,000 |"))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | elements | raw | migrate | ratio | raw RSS | migrate RSS |
        assert!(cells[4].ends_with('×'), "{row}");
        for rss in [cells[5], cells[6]] {
            let mib: f64 = rss.trim_end_matches(" MiB").parse().expect("a number");
            assert!(mib > 1.0, "{row}");
        }
    }
    assert_contains(&stdout, "goal: migration ≥ 0.5× the raw write rate");
    assert_contains(&stdout, "goal: migration peak RSS < 256 MiB");
}

#[test]
fn migrate_bench_raw_copy_writes_every_pair_of_a_store_and_leaves_nothing_beside_it() {
    // One instance (kvrocks), several (blackwidow, nemo, floyd), a custom
    // comparator (ardb).
    for format in ["kvrocks", "blackwidow", "nemo", "floyd", "ardb"] {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        exec(format, &store, &dataset());
        let pairs = dump(format, &store).lines().count();
        let before = file_hashes(&store);
        let stdout = ok(&Args::new("migrate-bench")
            .with(&["--to", format, "--raw-copy-of"])
            .with(&[store.to_str().unwrap()]));
        let written = stdout
            .split_once("flushed): ")
            .and_then(|(_, rest)| rest.split(" records").next())
            .map(|n| n.replace(',', ""))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("{format}: no record count in {stdout}"));
        assert_eq!(written, pairs, "{format}: {stdout}");
        assert_contains(&stdout, "no WAL");
        // The copy was removed, and the store itself was only read.
        let beside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(beside, vec![std::ffi::OsString::from("store")], "{format}");
        assert_eq!(file_hashes(&store), before, "{format}");
    }
}
