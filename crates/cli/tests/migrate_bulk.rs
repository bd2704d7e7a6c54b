//! `redcodec migrate --bulk` (sorted SST files ingested) against the
//! write path (`--no-bulk`), as a user runs them: the same `dump`, byte
//! for byte, between formats of every layout (one instance, five, three;
//! ardb's comparator), with the sort forced to spill; a killed bulk
//! migration resumed; a destination holding records refused.

use std::path::Path;

mod common;
use common::*;

const CLOCK: &str = "1700000000000";

fn dump(format: &str, dir: &Path) -> String {
    let out = redcodec(&Args::new("dump").store(format, dir), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Every type, expiries, and big collections (1,500 elements: several
/// write batches and spills).
fn dataset() -> String {
    let mut s = String::new();
    for i in 0..30 {
        s.push_str(&format!("SET s{i} \"v\\x00\\xff{i}\"\n"));
    }
    s.push_str("SET ttl x PX 1500\nSET gone x PX 1\nSADD small a b c\n");
    let fields: Vec<String> = (0..1500).map(|i| format!("f{i} v{i}")).collect();
    s.push_str(&format!("HSET h {}\nEXPIRE h 500\n", fields.join(" ")));
    let items: Vec<String> = (0..1500).map(|i| format!("item{i}")).collect();
    s.push_str(&format!("RPUSH l {}\n", items.join(" ")));
    let members: Vec<String> = (0..1500).map(|i| format!("{}.25 m{i}", i - 750)).collect();
    s.push_str(&format!(
        "ZADD z {}\nPEXPIRE z 86400000\n",
        members.join(" ")
    ));
    let set: Vec<String> = (0..1500).map(|i| format!("e{i}")).collect();
    s.push_str(&format!("SADD set {}\n", set.join(" ")));
    s
}

fn migrate(from: &str, src: &Path, to: &str, dst: &Path, extra: &[&str]) -> std::process::Output {
    let args = Args::new("migrate")
        .src(from, src)
        .dst(to, dst)
        .fixed_clock(CLOCK)
        .with(&["--batch-elements", "200"])
        .with(extra);
    redcodec(&args, "")
}

/// Migrates `from` → `to` on both paths and compares the dumps.
fn same_bytes(from: &str, to: &str) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    exec_at(CLOCK, from, &src, &dataset());
    let written = dir.path().join("written");
    let out = migrate(from, &src, to, &written, &["--no-bulk"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let loaded = dir.path().join("loaded");
    let out = migrate(
        from,
        &src,
        to,
        &loaded,
        &[
            "--bulk",
            "--bulk-buffer-bytes",
            "16384",
            "--bulk-runs",
            "lz4",
            "--verify",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_contains(&text(&out.stdout), "all equal");
    let expected = dump(to, &written);
    assert!(expected.lines().count() > 6000, "{from} → {to}");
    assert_eq!(dump(to, &loaded), expected, "{from} → {to}");
    // The default into an empty destination is the bulk path (its runs
    // raw: this file system has room).
    let default = dir.path().join("default");
    let out = migrate(from, &src, to, &default, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(dump(to, &default), expected, "{from} → {to}");
}

#[test]
fn kvrocks_to_blackwidow_bulk_writes_the_same_bytes() {
    same_bytes("kvrocks", "blackwidow");
}

#[test]
fn blackwidow_to_floyd_bulk_writes_the_same_bytes() {
    same_bytes("blackwidow", "floyd");
}

#[test]
fn nemo_to_ardb_bulk_writes_the_same_bytes() {
    same_bytes("nemo", "ardb");
}

#[test]
fn ardb_to_kvrocks_bulk_writes_the_same_bytes() {
    same_bytes("ardb", "kvrocks");
}

#[test]
fn floyd_to_nemo_bulk_writes_the_same_bytes() {
    same_bytes("floyd", "nemo");
}

#[test]
fn a_killed_bulk_migration_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    exec_at(CLOCK, "kvrocks", &src, &dataset());
    let small = ["--bulk", "--bulk-buffer-bytes", "16384"];
    let whole = dir.path().join("whole");
    let out = migrate("kvrocks", &src, "blackwidow", &whole, &small);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = dump("blackwidow", &whole);

    let dst = dir.path().join("killed");
    let args = Args::new("migrate")
        .src("kvrocks", &src)
        .dst("blackwidow", &dst)
        .fixed_clock(CLOCK)
        .with(&["--batch-elements", "200"])
        .with(&small)
        .with(&["--bulk-runs", "none", "--pause-after-commits", "3"]);
    kill_when_paused(binary().args(&*args), 3);
    assert!(dst.join("redcodec-migrate.checkpoint").exists());

    let out = migrate("kvrocks", &src, "blackwidow", &dst, &small);
    assert!(!out.status.success());
    assert_contains(&text(&out.stderr), "an interrupted migration is recorded");

    let out = migrate(
        "kvrocks",
        &src,
        "blackwidow",
        &dst,
        &["--resume", "--verify", "--bulk-runs", "lz4"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_contains(&text(&out.stdout), "all equal");
    assert_eq!(dump("blackwidow", &dst), expected);
    assert!(!dst.join("redcodec-migrate.checkpoint").exists());
    assert!(!dst.join("redcodec-migrate.checkpoint.bulk").exists());
    let verify = Args::new("verify")
        .src("kvrocks", &src)
        .dst("blackwidow", &dst)
        .fixed_clock(CLOCK);
    let out = redcodec(&verify, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn an_unknown_run_compression_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    exec_at(CLOCK, "kvrocks", &src, "SET a 1\n");
    let dst = dir.path().join("dst");
    let out = migrate(
        "kvrocks",
        &src,
        "blackwidow",
        &dst,
        &["--bulk-runs", "zstd"],
    );
    assert!(!out.status.success());
    assert_contains(
        &text(&out.stderr),
        "unknown run compression 'zstd': expected auto, lz4 or none",
    );
    assert!(!dst.exists());
}

#[test]
fn a_destination_holding_records_refuses_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    exec_at(CLOCK, "kvrocks", &src, "SET a 1\n");
    let dst = dir.path().join("dst");
    exec_at(CLOCK, "blackwidow", &dst, "SET mine 1\n");
    let out = migrate("kvrocks", &src, "blackwidow", &dst, &["--bulk"]);
    assert!(!out.status.success());
    assert_contains(
        &text(&out.stderr),
        "the bulk path writes only into an empty destination, and this one holds records",
    );
    // Merging takes the write path.
    let out = migrate("kvrocks", &src, "blackwidow", &dst, &["--merge"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // "mine", in hex.
    assert_contains(&dump("blackwidow", &dst), "6d696e65");
}
