//! Stores written by the real systems (tests/fixtures, see its README:
//! blackwidow, the storage library of Pika 3.x, and the Ardb server):
//! every read-only command leaves every file as it was, the read-back
//! answers equal the real system's, the raw pairs equal the real system's,
//! and each fixture migrates to every format and verifies equal.

use std::path::Path;

mod common;
use common::*;

/// The read-time clock of every fixture's read-back (its PROVENANCE.md).
const READ_CLOCK: &str = "1700000100000";

/// A store written by a real system's own code.
struct Fixture {
    /// Folder below tests/fixtures.
    system: &'static str,
    /// The store's name (and `<name>.meta/` beside it).
    name: &'static str,
    /// The redcodec format that reads it.
    format: &'static str,
    /// Whether every key has one type (the read-back compares with the
    /// real system's answers only then).
    single_typed: bool,
    /// Read-back lines (1-based) where redcodec answers as Redis does and
    /// the real system does not, with both answers.
    differences: &'static [(usize, &'static str, &'static str)],
}

/// Ardb answers `TYPE` none and `GET` nil, but `TTL` -1 and `EXISTS` 1, for
/// a key whose metadata merged to the empty value (`m:xx-missing` and
/// `m:missing`: an `EXPIRE` or `SET … XX` operand on a missing key); redcodec
/// reads such a key as missing for every command (formats-spec/ardb.md §14).
const ARDB_EMPTY_VALUE: &[(usize, &str, &str)] = &[
    (137, "(integer) -2", "(integer) -1"),
    (139, "(integer) 0", "(integer) 1"),
    (145, "(integer) -2", "(integer) -1"),
    (147, "(integer) 0", "(integer) 1"),
];

const FIXTURES: [Fixture; 5] = [
    Fixture {
        system: "blackwidow",
        name: "snappy-default",
        format: "blackwidow",
        single_typed: true,
        differences: &[],
    },
    Fixture {
        system: "blackwidow",
        name: "zlib",
        format: "blackwidow",
        single_typed: true,
        differences: &[],
    },
    Fixture {
        system: "blackwidow",
        name: "crosstype",
        format: "blackwidow",
        single_typed: false,
        differences: &[],
    },
    Fixture {
        system: "ardb",
        name: "compat",
        format: "ardb",
        single_typed: true,
        differences: &[],
    },
    Fixture {
        system: "ardb",
        name: "merge",
        format: "ardb",
        single_typed: true,
        differences: ARDB_EMPTY_VALUE,
    },
];

const WRONGTYPE: &str = "(error) WRONGTYPE Operation against a key holding the wrong kind of value";

const FORMATS: [&str; 5] = ["kvrocks", "blackwidow", "nemo", "ardb", "floyd"];

fn meta_file(system: &str, name: &str, file: &str) -> String {
    let path = fixture(system, &format!("{name}.meta")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn readback(format: &str, dir: &Path, script: &str) -> String {
    let (ok, stdout, stderr) = run(
        &Args::new("exec")
            .with(&["--read-only"])
            .store(format, &dir)
            .fixed_clock(READ_CLOCK),
        script,
    );
    assert!(ok, "{stderr}");
    stdout
}

#[test]
fn read_only_commands_change_no_file_of_a_real_store() {
    for f in &FIXTURES {
        let dir = fixture(f.system, f.name);
        let before = file_hashes(&dir);
        let d = path(&dir);
        let fmt = ["--format", f.format, "--dir", d];
        let (ok, _, stderr) = run(&[&["dump"][..], &fmt].concat(), "");
        assert!(ok, "dump {}: {stderr}", f.name);
        // `check` finds nothing, but the keys in several types of crosstype.
        let (ok, stdout, _) = run(
            &[&["check"][..], &fmt, &["--fixed-clock", READ_CLOCK]].concat(),
            "",
        );
        assert_eq!(ok, f.single_typed, "check {}: {stdout}", f.name);
        readback(f.format, &dir, "TYPE anything\nKEYS *\nDBSIZE\nSCAN 0\n");
        let (ok, stdout, _) = run(
            &[&["exec", "--read-only"][..], &fmt, &["--", "SET", "k", "v"]].concat(),
            "",
        );
        assert!(ok);
        assert_eq!(stdout.trim(), "(error) ERR the store is open read-only");
        let out = tempfile::tempdir().unwrap();
        let dst = out.path().join("kv");
        let pair = Args::new("--from")
            .with(&[f.format, "--src", d])
            .dst("kvrocks", &dst)
            .with(&["--all-namespaces", "--fixed-clock", READ_CLOCK]);
        let (ok, _, stderr) = run(
            &[&["migrate"][..], &pair, &["--type-conflict", "first"]].concat(),
            "",
        );
        assert!(ok, "migrate {}: {stderr}", f.name);
        let (ok, _, stderr) = run(&[&["verify"][..], &pair].concat(), "");
        assert!(ok, "verify {}: {stderr}", f.name);
        assert_eq!(file_hashes(&dir), before, "files of {} changed", f.name);
    }
}

#[test]
fn read_back_answers_equal_the_real_systems_own() {
    for f in FIXTURES.iter().filter(|f| f.single_typed) {
        let dir = fixture(f.system, f.name);
        let got = readback(f.format, &dir, &meta_file(f.system, f.name, "readback.txt"));
        let expected = meta_file(f.system, f.name, "readback.expected");
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
fn dump_holds_exactly_the_pairs_the_real_system_wrote() {
    for f in &FIXTURES {
        let dir = fixture(f.system, f.name);
        let (ok, stdout, stderr) = run(&Args::new("dump").store(f.format, &dir), "");
        assert!(ok, "{stderr}");
        let mut got: Vec<&str> = stdout.lines().collect();
        let raw = meta_file(f.system, f.name, "rawdump.txt");
        let mut expected: Vec<&str> = raw.lines().collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got.len(), expected.len(), "{}: pair count", f.name);
        assert!(got == expected, "{}: pairs differ", f.name);
    }
}

#[test]
fn every_fixture_migrates_to_every_format_and_verifies() {
    for f in &FIXTURES {
        let src = fixture(f.system, f.name);
        for to in FORMATS {
            let out = tempfile::tempdir().unwrap();
            let dst = out.path().join(to);
            // Into a format without namespaces, one namespace at a time.
            let namespaces: Vec<Option<&str>> = match (f.name, to) {
                ("compat", "blackwidow" | "nemo" | "floyd") => vec![Some("0"), Some("1")],
                _ => vec![None],
            };
            for ns in namespaces {
                let target = dst.join(ns.unwrap_or("all"));
                let mut args = Args::new("migrate")
                    .src(f.format, &src)
                    .dst(to, &target)
                    .fixed_clock(READ_CLOCK)
                    .with(&["--verify"]);
                args = match ns {
                    Some(ns) => args.with(&["--src-namespace", ns]),
                    None => args.with(&["--all-namespaces"]),
                };
                if !f.single_typed {
                    args = args.with(&["--type-conflict", "first"]);
                }
                // nemo cannot hold a 300-byte collection key nor scores past
                // ±1e13 (its declared limits): such keys are skipped, named.
                if to == "nemo" {
                    args = args.with(&["--skip-unrepresentable"]);
                }
                let (ok, stdout, stderr) = run(&args, "");
                assert!(ok, "{} -> {to}: {stdout}{stderr}", f.name);
                assert!(stdout.contains("equal"), "{} -> {to}: {stdout}", f.name);
                if to == "nemo" && f.name == "snappy-default" {
                    assert_contains(&stdout, "skipped 2 keys");
                }
            }
        }
    }
}

#[test]
fn keys_in_several_types_follow_the_documented_rule() {
    let dir = fixture("blackwidow", "crosstype");
    // TYPE answers as blackwidow does (its first type found); commands of
    // the other types get WRONGTYPE: one key, one type, as in Redis.
    let got = readback(
        "blackwidow",
        &dir,
        "TYPE multi\nHLEN multi\nGET multi\nEXISTS multi sh plain\nTYPE sh\nSMEMBERS sh\nTTL sh\nHGETALL onlyhash\nTYPE gone\n",
    );
    assert_eq!(
        got,
        format!("string\n{WRONGTYPE}\n\"str-value\"\n(integer) 3\nstring\n{WRONGTYPE}\n(integer) 99999900\n1) \"a\"\n2) \"1\"\n3) \"b\"\n4) \"2\"\nnone\n")
    );
    // Migration names each such key and follows --type-conflict.
    let out = tempfile::tempdir().unwrap();
    let migrate = |rule: &str, dst: &Path| {
        run(
            &Args::new("migrate")
                .src("blackwidow", &dir)
                .dst("kvrocks", dst)
                .fixed_clock(READ_CLOCK)
                .with(&["--type-conflict", rule]),
            "",
        )
    };
    let (ok, stdout, stderr) = migrate("fail", &out.path().join("fail"));
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains("\"multi\"") && stderr.contains("several types"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = migrate("skip", &out.path().join("skip"));
    assert!(ok, "{stderr}");
    assert_contains(&stdout, "skipped 2 keys");
    let (ok, stdout, stderr) = migrate("first", &out.path().join("first"));
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("first type of 2 keys") && stdout.contains("string, hash, list, zset, set"),
        "{stdout}"
    );
    let (ok, stdout, _) = run(
        &[
            "exec",
            "--format",
            "kvrocks",
            "--dir",
            path(&out.path().join("first")),
            "--",
            "GET",
            "multi",
        ],
        "",
    );
    assert!(ok);
    assert_eq!(stdout, "\"str-value\"\n");
}

#[test]
fn a_write_to_a_key_in_several_types_leaves_it_one_type() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("copy");
    copy_dir(&fixture("blackwidow", "crosstype"), &dir);
    let exec = |script: &str| {
        let (ok, stdout, stderr) = run(
            &Args::new("exec")
                .store("blackwidow", &dir)
                .fixed_clock(READ_CLOCK),
            script,
        );
        assert!(ok, "{stderr}");
        stdout
    };
    // DEL removes every type; HSET over a key of several types keeps
    // only the hash.
    assert_eq!(
        exec("DEL multi\nTYPE multi\nHLEN multi\nLLEN multi\n"),
        "(integer) 1\nnone\n(integer) 0\n(integer) 0\n"
    );
    assert_eq!(
        exec("HSET sh f2 v2\nTYPE sh\nGET sh\n"),
        format!("{WRONGTYPE}\nstring\n\"str-of-sh\"\n")
    );
    // SET replaces the key: its shadowed hash and set go in the same batch
    // (check below finds the key in one type).
    assert_eq!(
        exec("SET sh new\nTYPE sh\nGET sh\n"),
        "OK\nstring\n\"new\"\n"
    );
    let (_, stdout, _) = run(
        &Args::new("check")
            .store("blackwidow", &dir)
            .fixed_clock(READ_CLOCK),
        "",
    );
    assert_contains(&stdout, "no findings");
}
