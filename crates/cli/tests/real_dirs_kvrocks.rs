//! Stores written by a real Apache Kvrocks 2.10.1 server
//! (tests/fixtures/kvrocks-2.10, see its PROVENANCE.md files): opened
//! read-only they change no file, read back as Kvrocks answered in every
//! namespace, dump exactly the pairs RocksDB's own `ldb` lists, migrate to
//! every format and verify equal; keys of the types redcodec does not model
//! (stream, bitmap, sortedint, JSON, bloom filter, HyperLogLog) are named by
//! `check`, refused by name on read and listed by `migrate`, never dropped
//! silently.

use std::collections::BTreeMap;
use std::path::PathBuf;

mod common;
use common::*;

/// The read-time clock of both fixtures' read-backs (PROVENANCE.md).
const READ_CLOCK: &str = "1700000100000";

/// A store written by Kvrocks 2.10.1.
struct Fixture {
    /// The store's name below tests/fixtures/kvrocks-2.10 (and `<name>.meta/`).
    name: &'static str,
    /// Cluster mode (`cluster-enabled yes`: a slot in every key).
    cluster: bool,
    /// Lines (1-based) of `readback.expected` where redcodec answers as
    /// Redis does and Kvrocks does not, with both answers.
    differences: &'static [(usize, &'static str, &'static str)],
}

/// Kvrocks answers `TTL` -1 for a collection whose metadata record holds
/// size 0 (`hash:emptied` after HDEL of its last field, `set:spop` after SPOP
/// of its last member, `zset:emptied` after ZREM of its last member), while
/// its `TYPE` answers none and `EXISTS` 0: `Database::TTL` decodes the record
/// without the size check every other read makes. redcodec reads such a key
/// as missing for every command (formats-spec/kvrocks.md §3.2).
const KVROCKS_SIZE_ZERO_TTL: &[(usize, &str, &str)] = &[
    (10193, "(integer) -2", "(integer) -1"),
    (10209, "(integer) -2", "(integer) -1"),
    (10229, "(integer) -2", "(integer) -1"),
];

const FIXTURES: [Fixture; 2] = [
    Fixture {
        name: "standalone",
        cluster: false,
        differences: KVROCKS_SIZE_ZERO_TTL,
    },
    Fixture {
        name: "cluster",
        cluster: true,
        differences: &[],
    },
];

const FORMATS: [&str; 5] = ["kvrocks", "blackwidow", "nemo", "ardb", "floyd"];

impl Fixture {
    fn dir(&self) -> PathBuf {
        fixture("kvrocks-2.10", self.name)
    }

    fn meta(&self, file: &str) -> String {
        let path = fixture("kvrocks-2.10", &format!("{}.meta", self.name)).join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// `--cluster` when the store is in cluster mode.
    fn mode(&self) -> &'static [&'static str] {
        if self.cluster {
            &["--cluster"]
        } else {
            &[]
        }
    }

    /// Kvrocks' tokens and the namespace each selects (`namespaces.txt`:
    /// `<token>\t<namespace>`; the admin password selects `__namespace`).
    fn namespaces(&self) -> BTreeMap<String, String> {
        self.meta("namespaces.txt")
            .lines()
            .map(|l| {
                let (token, ns) = l.split_once('\t').expect("token\\tnamespace");
                (token.to_string(), ns.to_string())
            })
            .collect()
    }

    /// The unmodelled keys Kvrocks lists (`keys.txt`), as (namespace,
    /// type, key bytes).
    fn unmodelled_keys(&self) -> Vec<(String, String, Vec<u8>)> {
        let tokens = self.namespaces();
        let mut ns = String::new();
        let mut out = Vec::new();
        for line in self.meta("keys.txt").lines() {
            if let Some(token) = line.strip_prefix("AUTH ") {
                ns = tokens[token].clone();
                continue;
            }
            let (ty, hex) = line.split_once('\t').expect("type\\tkey hex");
            if !["string", "hash", "list", "set", "zset"].contains(&ty) {
                out.push((ns.clone(), ty.to_string(), unhex(hex)));
            }
        }
        out
    }

    /// Runs a read-back file the way Kvrocks ran it: each `AUTH <token>`
    /// line selects a namespace (Kvrocks answered OK), the other lines run
    /// read-only in it at the read clock.
    fn readback(&self, file: &str) -> String {
        let tokens = self.namespaces();
        let dir = self.dir();
        let mut out = String::new();
        let mut section: Option<(String, String)> = None;
        let flush = |section: &Option<(String, String)>, out: &mut String| {
            if let Some((ns, script)) = section {
                let (ok, stdout, stderr) = run(
                    &Args::new("exec")
                        .with(&["--read-only"])
                        .with(self.mode())
                        .store("kvrocks", &dir)
                        .fixed_clock(READ_CLOCK)
                        .with(&["--namespace", ns]),
                    script,
                );
                assert!(ok, "{}: {stderr}", self.name);
                out.push_str("OK\n");
                out.push_str(&stdout);
            }
        };
        for line in self.meta(file).lines() {
            if let Some(token) = line.strip_prefix("AUTH ") {
                flush(&section, &mut out);
                section = Some((tokens[token].clone(), String::new()));
            } else {
                let (_, script) = section.as_mut().expect("AUTH first");
                script.push_str(line);
                script.push('\n');
            }
        }
        flush(&section, &mut out);
        out
    }
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A key as redcodec's messages quote it (Rust's byte escaping).
fn quoted(key: &[u8]) -> String {
    format!("\"{}\"", key.escape_ascii())
}

#[test]
fn every_command_on_a_kvrocks_store_changes_no_file() {
    for f in &FIXTURES {
        let dir = f.dir();
        let before = file_hashes(&dir);
        let d = path(&dir);
        let store = [&["--format", "kvrocks", "--dir", d][..], f.mode()].concat();
        let (ok, _, stderr) = run(&[&["dump"][..], &store].concat(), "");
        assert!(ok, "dump {}: {stderr}", f.name);
        run(
            &[&["check"][..], &store, &["--fixed-clock", READ_CLOCK]].concat(),
            "",
        );
        f.readback("readback.txt");
        f.readback("readback-unmodelled.txt");
        let (ok, stdout, _) = run(
            &[
                &["exec", "--read-only"][..],
                &store,
                &["--", "SET", "k", "v"],
            ]
            .concat(),
            "",
        );
        assert!(ok);
        assert_eq!(stdout.trim(), "(error) ERR the store is open read-only");
        let out = tempfile::tempdir().unwrap();
        let dst = out.path().join("kv");
        let mut pair = Args::new("--from")
            .with(&["kvrocks", "--src", d])
            .dst("kvrocks", &dst)
            .with(&["--all-namespaces", "--fixed-clock", READ_CLOCK]);
        if f.cluster {
            pair = pair.with(&["--src-cluster", "--dst-cluster"]);
        }
        let (ok, _, stderr) = run(
            &[&["migrate"][..], &pair, &["--skip-unrepresentable"]].concat(),
            "",
        );
        assert!(ok, "migrate {}: {stderr}", f.name);
        let (ok, stdout, stderr) = run(&[&["verify"][..], &pair].concat(), "");
        assert!(ok, "verify {}: {stdout}{stderr}", f.name);
        assert_eq!(file_hashes(&dir), before, "files of {} changed", f.name);
    }
}

#[test]
fn read_back_answers_equal_kvrocks_own_in_every_namespace() {
    for f in &FIXTURES {
        let got = f.readback("readback.txt");
        let expected = f.meta("readback.expected");
        assert_eq!(got.lines().count(), expected.lines().count(), "{}", f.name);
        for (n, (ours, theirs)) in got.lines().zip(expected.lines()).enumerate() {
            let line = n + 1;
            match f.differences.iter().find(|d| d.0 == line) {
                Some(&(_, o, t)) => assert_eq!(
                    (ours, theirs),
                    (o, t),
                    "{} line {line}: the documented difference changed",
                    f.name
                ),
                None => assert_eq!(ours, theirs, "{} line {line}", f.name),
            }
        }
    }
}

#[test]
fn dump_equals_the_pairs_rocksdb_ldb_lists() {
    for f in &FIXTURES {
        let (ok, stdout, stderr) = run(
            &Args::new("dump").store("kvrocks", &f.dir()).with(f.mode()),
            "",
        );
        assert!(ok, "{stderr}");
        let expected = f.meta("rawdump.txt");
        assert_eq!(
            stdout.lines().count(),
            expected.lines().count(),
            "{}: pair count",
            f.name
        );
        // The same pairs in the same order: each family in RocksDB's order.
        assert!(stdout == expected, "{}: pairs differ", f.name);
    }
}

#[test]
fn keys_of_unmodelled_types_are_named_never_dropped() {
    for f in &FIXTURES {
        let unmodelled = f.unmodelled_keys();
        assert!(!unmodelled.is_empty(), "{}", f.name);
        // check names every one (and so exits 1).
        let (ok, stdout, _) = run(
            &Args::new("check")
                .store("kvrocks", &f.dir())
                .with(f.mode())
                .fixed_clock(READ_CLOCK),
            "",
        );
        assert!(!ok, "{}: {stdout}", f.name);
        let names = [
            ("stream", "stream"),
            ("bitmap", "bitmap"),
            ("sortedint", "sortedint"),
            ("ReJSON-RL", "JSON value"),
            ("MBbloom--", "bloom filter"),
            ("hyperloglog", "hyperloglog"),
        ];
        // ... and nothing else: its other lines are the table facts and
        // one summary per namespace.
        for line in stdout.lines() {
            assert!(
                ["unmodelled\t", "tables\t", "kvrocks store "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "{}: {line}",
                f.name
            );
        }
        let findings = stdout.lines().filter(|l| l.starts_with("unmodelled\t"));
        assert_eq!(findings.count(), unmodelled.len(), "{}: {stdout}", f.name);
        for (_, ty, key) in &unmodelled {
            let name = names.iter().find(|n| n.0 == ty).expect("known type").1;
            assert_contains(
                &stdout,
                &format!(
                    "unmodelled\t{}\t{name}: a type redcodec does not model",
                    quoted(key)
                ),
            );
        }
        // Every read of such a key is an error (naming the key, or the
        // command redcodec lacks), never an answer as if it were missing.
        let got = f.readback("readback-unmodelled.txt");
        let script = f.meta("readback-unmodelled.txt");
        let commands: Vec<&str> = script.lines().filter(|l| !l.starts_with("AUTH ")).collect();
        let replies: Vec<&str> = got.lines().filter(|l| *l != "OK").collect();
        assert_eq!(replies.len(), commands.len(), "{}: {got}", f.name);
        for (command, reply) in commands.iter().zip(&replies) {
            assert!(
                reply.contains("a type redcodec does not model")
                    || reply.starts_with("(error) ERR unknown command"),
                "{}: {command} -> {reply}",
                f.name
            );
        }
        // KEYS lists them in their namespace.
        for (ns, _, key) in &unmodelled {
            let (ok, stdout, _) = run(
                &Args::new("exec")
                    .with(&["--read-only", "--namespace", ns])
                    .with(f.mode())
                    .store("kvrocks", &f.dir())
                    .fixed_clock(READ_CLOCK)
                    .with(&["--", "KEYS", "*"]),
                "",
            );
            assert!(ok);
            let listed = String::from_utf8_lossy(key).into_owned();
            assert!(stdout.contains(&format!("\"{listed}\"")), "{stdout}");
        }
    }
}

#[test]
fn every_kvrocks_fixture_migrates_to_every_format_and_verifies() {
    for f in &FIXTURES {
        let src = f.dir();
        let unmodelled = f.unmodelled_keys();
        let namespaces: Vec<String> = f.namespaces().into_values().collect();
        for to in FORMATS {
            let out = tempfile::tempdir().unwrap();
            // Into a format without namespaces (all but kvrocks and ardb),
            // one namespace at a time.
            let runs: Vec<Option<&str>> = match to {
                "kvrocks" | "ardb" => vec![None],
                _ => namespaces.iter().map(|n| Some(n.as_str())).collect(),
            };
            for ns in runs {
                let target = out.path().join(ns.unwrap_or("all"));
                let mut args = Args::new("migrate")
                    .src("kvrocks", &src)
                    .dst(to, &target)
                    .fixed_clock(READ_CLOCK)
                    .with(&["--verify", "--skip-unrepresentable"]);
                args = match ns {
                    Some(ns) => args.with(&["--src-namespace", ns]),
                    None => args.with(&["--all-namespaces"]),
                };
                if f.cluster {
                    args = args.with(&["--src-cluster"]);
                }
                let (ok, stdout, stderr) = run(&args, "");
                assert!(ok, "{} -> {to}: {stdout}{stderr}", f.name);
                assert_contains(&stdout, "all equal");
                // Each unmodelled key of the namespaces migrated is listed.
                for (key_ns, _, key) in &unmodelled {
                    if ns.is_none_or(|ns| ns == key_ns) {
                        assert_contains(&stdout, &format!("{}: it holds a", quoted(key)));
                    }
                }
            }
        }
        // Without --skip-unrepresentable nothing is written for them and
        // the migration stops, naming them.
        let out = tempfile::tempdir().unwrap();
        let dst = out.path().join("kv");
        let mut args = Args::new("migrate")
            .src("kvrocks", &src)
            .dst("kvrocks", &dst)
            .fixed_clock(READ_CLOCK)
            .with(&["--all-namespaces"]);
        if f.cluster {
            args = args.with(&["--src-cluster", "--dst-cluster"]);
        }
        let (ok, stdout, stderr) = run(&args, "");
        assert!(!ok, "{} {stdout}", f.name);
        assert_contains(&stderr, "--skip-unrepresentable");
    }
}
