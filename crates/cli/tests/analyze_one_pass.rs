//! `analyze` reads each record once (one pass over the metadata, one per
//! family of element records): its report is the one in each store's
//! snapshot (`snapshots/`: the figures the first, two-pass version
//! reported, which the one pass was checked equal to before that version
//! was removed) on stores where the one pass could go wrong — collections
//! larger than any buffer and cut by the top lists' boundary, old versions
//! of a key left next to its live one, an expired owner, sorted sets whose
//! records are in two families, a key of the same name in two namespaces
//! — in every format, and on the real systems' stores.

use std::path::Path;

use serde_json::Value;

mod common;
use common::*;

/// The clock the stores are written at.
const CLOCK: &str = "1700000000000";
/// The clock they are analyzed at: 100 s later.
const LATER: &str = "1700000100000";

/// The longest top list asked for: every key of the small stores.
const FULL: &str = "50";

/// `analyze --json` of the store (`extra` options).
fn analyze(format: &str, dir: &Path, extra: &[&str]) -> Value {
    let mut more = vec!["--json"];
    more.extend_from_slice(extra);
    let out = ok(&Args::new("analyze")
        .store(format, dir)
        .fixed_clock(LATER)
        .with(&more));
    serde_json::from_str(&out).expect("analyze prints JSON")
}

/// The report of every namespace with its top lists cut to `n` keys.
fn cut(report: &Value, n: usize) -> Value {
    let mut report = report.clone();
    for a in report.as_array_mut().expect("an array per namespace") {
        for list in ["top_by_bytes", "top_by_elements"] {
            a[list].as_array_mut().expect("a top list").truncate(n);
        }
    }
    report
}

/// The report without `families` (bytes per column family and level):
/// RocksDB's own figures, not the passes', and in a store written here
/// they hold the host's name (a table property) so they vary by machine.
fn without_families(report: &Value) -> Value {
    let mut report = report.clone();
    for a in report.as_array_mut().expect("an array per namespace") {
        a.as_object_mut().expect("an object").remove("families");
    }
    report
}

/// The report of the store at `dir` (`mode`: options such as `--cluster`),
/// checked against its snapshot `name` (the figures the first, two-pass
/// version reported, reviewed when they were taken); the shorter top lists
/// (a list of 1 cuts between equal keys) are the first keys of the longest
/// one, and the store's files do not change.
fn checked(name: &str, format: &str, dir: &Path, mode: &[&str]) -> Value {
    let before = file_hashes(dir);
    let with = |top: &'static str| -> Vec<&str> {
        let mut extra = vec!["--top", top];
        extra.extend_from_slice(mode);
        extra
    };
    let full = analyze(format, dir, &with(FULL));
    for (top, n) in [("1", 1), ("2", 2), ("3", 3)] {
        let report = analyze(format, dir, &with(top));
        assert_eq!(report, cut(&full, n), "{name}: --top {top}");
    }
    insta::assert_snapshot!(
        name,
        serde_json::to_string_pretty(&without_families(&full)).expect("JSON")
    );
    assert_eq!(file_hashes(dir), before, "{name}: analyze changed files");
    full
}

fn words(prefix: &str, n: usize, value: &str) -> String {
    (0..n)
        .map(|i| format!("{prefix}{i} {value}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Old versions and an expired owner next to live keys; a sorted set in
/// two families; equal small keys at the top lists' boundary.
fn script() -> String {
    let mut s = String::new();
    // Three versions of one hash: the first two deleted before any
    // compaction, the live one reusing some of their field names (formats
    // that keep the version in the value see old records between live ones).
    s += &format!(
        "HSET h:versions {}\nDEL h:versions\n",
        words("f", 300, "old-")
    );
    s += &format!(
        "HSET h:versions {}\nDEL h:versions\n",
        words("f", 120, "mid-")
    );
    s += &format!("HSET h:versions {}\n", words("f", 50, "new-"));
    // Keys whose records sort right before and after it.
    s += &format!("HSET h:versionr {}\n", words("g", 7, "v"));
    s += &format!("HSET h:versiont {}\n", words("g", 9, "v"));
    // A sorted set (members and scores: two families in most formats),
    // one deleted and written again, one expired.
    let members: Vec<String> = (0..200).map(|i| format!("{i} member-{i:04}")).collect();
    s += &format!("ZADD z:big {}\n", members.join(" "));
    s += &format!("ZADD z:again {}\nDEL z:again\n", members[..80].join(" "));
    s += "ZADD z:again 1 one 2 two 3 three\n";
    s += &format!(
        "ZADD z:gone {}\nPEXPIRE z:gone 1000\n",
        members[..40].join(" ")
    );
    // An expired set and list: their elements are stale.
    let set: Vec<String> = (0..15).map(|i| format!("m{i}")).collect();
    s += &format!("SADD s:exp {}\nPEXPIRE s:exp 1000\n", set.join(" "));
    let items: Vec<String> = (0..100).map(|i| format!("item-{i:04}")).collect();
    s += &format!("RPUSH l:list {}\n", items.join(" "));
    s += &format!(
        "RPUSH l:exp {}\nPEXPIRE l:exp 1000\n",
        items[..10].join(" ")
    );
    // Equal keys: ties at the top lists' boundary.
    for i in 0..6 {
        s += &format!("SET str:{i} same\nHSET h:tie{i} a b\nSADD s:tie{i} m\n");
    }
    s += "SET str:exp x PX 1000\n";
    s
}

#[test]
fn every_format_reports_its_expected_figures() {
    for format in ["kvrocks", "blackwidow", "nemo", "floyd", "ardb"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        exec_at(CLOCK, format, &dir, &script());
        let all = checked(&format!("every_format_{format}"), format, &dir, &[]);
        let a = &all[0];
        // 3 hashes, 2 sorted sets, a list, 6 × (string, hash, set).
        assert_eq!(a["total"]["keys"], 6 + 18, "{format}: {a}");
        let by_elements: Vec<(&str, u64)> = a["top_by_elements"]
            .as_array()
            .unwrap()
            .iter()
            .take(4)
            .map(|k| (k["key"].as_str().unwrap(), k["elements"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            by_elements,
            [
                ("z:big", 200),
                ("l:list", 100),
                ("h:versions", 50),
                ("h:versiont", 9)
            ],
            "{format}"
        );
        // Every stale record is of a deleted, expired or old version.
        let stale: u64 = a["stale"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["meta_records"].as_u64().unwrap()
                    + s["element_records"].as_u64().unwrap()
                    + s["orphan_records"].as_u64().unwrap()
            })
            .sum();
        assert!(stale > 0, "{format}: the expired keys are stale: {a}");
    }
}

#[test]
fn big_collections_and_old_versions_are_counted_once() {
    // A hash bigger than any batch, written twice with a deletion between:
    // the live version's bytes only, its old records stale.
    for format in ["kvrocks", "blackwidow", "floyd"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut s = format!("HSET big {}\nDEL big\n", words("old", 5000, "v"));
        s += &format!("HSET big {}\n", words("new", 3000, "v"));
        s += &format!("ZADD z {}\n", {
            let m: Vec<String> = (0..3000).map(|i| format!("{i} m{i}")).collect();
            m.join(" ")
        });
        exec_at(CLOCK, format, &dir, &s);
        let a = &checked(&format!("big_{format}"), format, &dir, &[])[0];
        let top: Vec<(&str, u64)> = a["top_by_elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["key"].as_str().unwrap(), k["elements"].as_u64().unwrap()))
            .collect();
        // Equal elements: the sorted set's score index makes it bigger.
        assert_eq!(top, [("z", 3000), ("big", 3000)], "{format}");
        let stale_elements: u64 = a["stale"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["element_records"].as_u64().unwrap())
            .sum();
        assert_eq!(stale_elements, 5000, "{format}: the old version's fields");
        // The key's bytes: its metadata and the 3,000 live fields (keys
        // and values, with the format's prefix), not the 5,000 old ones.
        let big = a["top_by_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["key"] == "big")
            .unwrap()["bytes"]
            .as_u64()
            .unwrap();
        let fields: u64 = (0..3000)
            .map(|i| format!("new{i}").len() as u64 + format!("v{i}").len() as u64)
            .sum();
        assert!(big > fields && big < fields + 3000 * 100, "{format}: {big}");
    }
}

#[test]
fn a_key_in_two_namespaces_is_counted_in_each() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    for (ns, n) in [("one", 30), ("two", 70)] {
        let args = Args::new("exec")
            .store("kvrocks", &dir)
            .fixed_clock(CLOCK)
            .with(&["--namespace", ns]);
        let script = format!(
            "HSET dup {}\nZADD zdup 1 a 2 b\nSET only-{ns} x\n",
            words("f", n, "v")
        );
        let out = redcodec(&args, &script);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let all = checked("two_namespaces", "kvrocks", &dir, &[]);
    let mut seen: Vec<(String, u64, u64)> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["total"]["keys"].as_u64().unwrap() > 0)
        .map(|a| {
            let dup = a["top_by_elements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| k["key"] == "dup")
                .expect("dup in each namespace");
            (
                a["namespace"].as_str().unwrap_or("").to_string(),
                dup["elements"].as_u64().unwrap(),
                a["total"]["keys"].as_u64().unwrap(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [("one".to_string(), 30, 3), ("two".to_string(), 70, 3)],
        "{all}"
    );
}

#[test]
fn the_real_systems_stores_report_their_expected_figures() {
    let stores: [(&str, &str, &str, &[&str]); 8] = [
        ("blackwidow", "snappy-default", "blackwidow", &[]),
        ("blackwidow", "zlib", "blackwidow", &[]),
        ("blackwidow", "crosstype", "blackwidow", &[]),
        ("ardb", "compat", "ardb", &[]),
        ("ardb", "merge", "ardb", &[]),
        ("kvrocks-2.10", "standalone", "kvrocks", &[]),
        ("kvrocks-2.10", "cluster", "kvrocks", &["--cluster"]),
        ("pika-3.5", "store", "blackwidow", &[]),
    ];
    for (system, name, format, mode) in stores {
        let mut dir = fixture(system, name);
        if system.starts_with("pika") {
            dir = dir.join("db0");
        }
        let all = checked(&format!("real_{system}_{name}"), format, &dir, mode);
        let keys: u64 = all
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["total"]["keys"].as_u64().unwrap())
            .sum();
        assert!(keys > 0, "{system}/{name}: {all}");
    }
    // Pika 4's floyd store.
    let dir = fixture("pika-4.0", "store").join("db0");
    checked("real_pika-4.0_store", "floyd", &dir, &[]);
}
