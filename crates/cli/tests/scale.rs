//! `redcodec generate` and `redcodec analyze`: a generated store is the
//! same for the same seed, passes `check` and verifies equal to a
//! migrated copy; `analyze` finds exactly the big keys and the garbage
//! planted in a store, and changes no file of the real systems' stores.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;
use common::*;

/// The clock every command of these tests runs at.
const CLOCK: &str = "1700000000000";

/// Writes a small generated store: 2,000 keys, a big key in every 700
/// (3,000 elements).
fn generate(format: &str, dir: &Path, seed: &str) -> String {
    ok(&Args::new("generate")
        .store(format, dir)
        .fixed_clock(CLOCK)
        .with(&[
            "--records",
            "2000",
            "--seed",
            seed,
            "--big-every",
            "700",
            "--big-elements",
            "3000",
        ]))
}

/// The SHA-256 of the store's `dump`.
fn dump_digest(format: &str, dir: &Path) -> String {
    let out = ok(&Args::new("dump").store(format, dir));
    format!("{:x}", Sha256::digest(out.as_bytes()))
}

/// `analyze --json` of the store at `clock`: one object per namespace.
fn analyze(format: &str, dir: &Path, clock: &str) -> Vec<Value> {
    let out = ok(&Args::new("analyze")
        .store(format, dir)
        .fixed_clock(clock)
        .with(&["--json", "--top", "2"]));
    let parsed: Value = serde_json::from_str(&out).expect("analyze prints JSON");
    parsed.as_array().expect("an array").clone()
}

#[test]
fn the_same_seed_generates_the_same_store() {
    for format in ["kvrocks", "blackwidow"] {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        let report = generate(format, &a, "7");
        assert_contains(&report, "generated 2,000 keys");
        assert_contains(&report, "big key ");
        generate(format, &b, "7");
        generate(format, &c, "8");
        let digest = dump_digest(format, &a);
        assert_eq!(digest, dump_digest(format, &b), "{format}: same seed");
        assert_ne!(digest, dump_digest(format, &c), "{format}: another seed");
    }
}

#[test]
fn generated_stores_pass_check_and_verify_against_a_migrated_copy() {
    for (from, to) in [("kvrocks", "blackwidow"), ("blackwidow", "kvrocks")] {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        let report = generate(from, &src, "3");
        // Indexes 699 and 1399 are the big keys.
        assert_eq!(report.matches("big key ").count(), 2, "{report}");
        let checked = ok(&Args::new("check").store(from, &src).fixed_clock(CLOCK));
        assert_contains(&checked, "2000 live keys");
        assert_contains(&checked, "no findings");
        // analyze names generate's big keys as the biggest by elements.
        let mut big: Vec<&str> = report
            .lines()
            .filter_map(|l| l.strip_prefix("big key ")?.split(' ').next())
            .collect();
        big.sort_unstable();
        let analysis = analyze(from, &src, CLOCK);
        let mut top: Vec<&str> = analysis[0]["top_by_elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["key"].as_str().unwrap())
            .collect();
        top.sort_unstable();
        assert_eq!(top, big, "{from}");
        assert_eq!(analysis[0]["total"]["keys"], 2000);
        let dbsize = exec_at(CLOCK, from, &src, "DBSIZE\n");
        assert_eq!(dbsize.trim(), "(integer) 2000");
        let pair = Args::new("--from")
            .with(&[from, "--src", path(&src)])
            .dst(to, &dst)
            .with(&["--fixed-clock", CLOCK]);
        ok(&[&["migrate"][..], &pair].concat());
        ok(&[&["verify"][..], &pair].concat());
        let copy = ok(&Args::new("check").store(to, &dst).fixed_clock(CLOCK));
        assert_contains(&copy, "no findings");
    }
}

#[test]
fn generate_refuses_a_store_that_holds_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    exec_at(CLOCK, "kvrocks", &dir, "SET mine 1\n");
    let (ok, _, stderr) = run(
        &Args::new("generate")
            .store("kvrocks", &dir)
            .with(&["--records", "10"]),
        "",
    );
    assert!(!ok);
    assert_contains(&stderr, "already holds data (for example key \"mine\")");
}

/// A store with two big keys, a big hash deleted before any compaction,
/// three expired strings and an expired set of 20 members, and 50 small
/// strings: written at [`CLOCK`], read 100 s later.
fn planted(format: &str, dir: &Path) {
    let mut script = String::new();
    let fields: Vec<String> = (0..400).map(|i| format!("f{i} value-{i:05}")).collect();
    script += &format!("HSET big:hash {}\n", fields.join(" "));
    let items: Vec<String> = (0..300).map(|i| format!("item-{i:05}")).collect();
    script += &format!("RPUSH big:list {}\n", items.join(" "));
    let gone: Vec<String> = (0..500).map(|i| format!("f{i} v{i}")).collect();
    script += &format!("HSET gone:hash {}\nDEL gone:hash\n", gone.join(" "));
    for i in 0..3 {
        script += &format!("SET exp:s{i} x PX 1000\n");
    }
    let members: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    script += &format!("SADD exp:set {}\nPEXPIRE exp:set 1000\n", members.join(" "));
    for i in 0..50 {
        script += &format!("SET small:{i} v{i}\n");
    }
    exec_at(CLOCK, format, dir, &script);
}

/// A column family, its stale metadata and its stale element records.
type StaleIn = (&'static str, u64, u64);

#[test]
fn analyze_finds_exactly_the_planted_big_keys_and_garbage() {
    // Per column family: (stale metadata, stale element records).
    // Kvrocks deletes a key's metadata on DEL and keeps hash fields and
    // set members in one family; blackwidow keeps a deleted key's
    // metadata as a marker, each type in its own instance. Both keep
    // expired metadata, and the elements under it, until compaction.
    let expected: [(&str, &[StaleIn]); 2] = [
        ("kvrocks", &[("db/metadata", 4, 0), ("db/default", 0, 520)]),
        (
            "blackwidow",
            &[
                ("strings/default", 3, 0),
                ("hashes/default", 1, 0),
                ("sets/default", 1, 0),
                ("hashes/data_cf", 0, 500),
                ("sets/member_cf", 0, 20),
            ],
        ),
    ];
    for (format, stale) in expected {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        planted(format, &dir);
        let before = file_hashes(&dir);
        let all = analyze(format, &dir, "1700000100000");
        assert_eq!(file_hashes(&dir), before, "{format}: analyze changed files");
        assert_eq!(all.len(), 1);
        let a = &all[0];
        assert_eq!(a["total"]["keys"], 52, "{format}: {a}");
        assert_eq!(a["total"]["elements"], 750, "{format}");
        let top: Vec<&str> = a["top_by_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["key"].as_str().unwrap())
            .collect();
        assert_eq!(top, ["big:hash", "big:list"], "{format}");
        let by_elements: Vec<(&str, u64)> = a["top_by_elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["key"].as_str().unwrap(), k["elements"].as_u64().unwrap()))
            .collect();
        assert_eq!(by_elements, [("big:hash", 400), ("big:list", 300)]);
        assert_eq!(a["by_type"]["string"]["keys"], 50);
        assert_eq!(a["by_prefix"]["small"]["keys"], 50);
        assert_eq!(a["by_prefix"]["big"]["keys"], 2);
        assert_eq!(a["no_ttl"], 52);
        let found: Vec<(&str, u64, u64)> = a["stale"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                assert_eq!(s["orphan_records"], 0, "{format}: {s}");
                (
                    s["family"].as_str().unwrap(),
                    s["meta_records"].as_u64().unwrap(),
                    s["element_records"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(found, stale, "{format}");
        // Read-only and deterministic: a second run reports the same.
        let again = analyze(format, &dir, "1700000100000");
        assert_eq!(again, all, "{format}: the same store, the same report");
    }
}

#[test]
fn analyze_changes_no_file_of_the_real_systems_stores() {
    for (system, name, format) in [
        ("blackwidow", "snappy-default", "blackwidow"),
        ("blackwidow", "zlib", "blackwidow"),
        ("blackwidow", "crosstype", "blackwidow"),
        ("ardb", "compat", "ardb"),
        ("ardb", "merge", "ardb"),
    ] {
        let dir = fixture(system, name);
        let before = file_hashes(&dir);
        let all = analyze(format, &dir, "1700000100000");
        let keys: u64 = all
            .iter()
            .map(|a| a["total"]["keys"].as_u64().unwrap())
            .sum();
        assert!(keys > 0, "{name}: {all:?}");
        assert!(
            all.iter()
                .all(|a| !a["families"].as_array().unwrap().is_empty()),
            "{name}"
        );
        let table = ok(&Args::new("analyze").store(format, &dir));
        assert_contains(&table, "biggest keys by bytes");
        assert_eq!(file_hashes(&dir), before, "files of {name} changed");
    }
}
