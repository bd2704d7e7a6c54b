//! The `redcodec` binary as a user runs it.

use std::path::Path;
use std::process::Output;

mod common;
use common::{assert_contains, redcodec, text, Args};

/// Runs `script` on a fresh `format` store at the worked examples' clock,
/// checks it replied `replies` and that the store then dumps as `dump`;
/// returns the store's directory for further steps.
fn exec_then_dump(format: &str, script: &str, replies: &str, dump: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::new("exec")
        .store(format, dir.path())
        .fixed_clock("1700000000000");
    let out = redcodec(&args, script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), replies);
    let out = redcodec(&Args::new("dump").store(format, dir.path()), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), dump);
    dir
}

/// Runs `stdin` on the `format` store at `dir` in `namespace`.
fn exec_in_namespace(format: &str, dir: &Path, namespace: &str, stdin: &str) -> Output {
    let args = Args::new("exec")
        .store(format, dir)
        .with(&["--namespace", namespace]);
    redcodec(&args, stdin)
}

#[test]
fn exec_then_dump_shows_the_worked_example() {
    exec_then_dump(
        "kvrocks",
        "SET foo bar\nHSET h f v\n",
        "OK\n(integer) 1\n",
        "db\tdefault\t0b5f5f6e616d6573706163650000000168305120c0f200000066\t76\n\
         db\tmetadata\t0b5f5f6e616d657370616365666f6f\t810000000000000000626172\n\
         db\tmetadata\t0b5f5f6e616d65737061636568\t820000000000000000305120c0f20000000000000000000001\n",
    );
}

#[test]
fn blackwidow_exec_then_dump_shows_the_bytes_of_pika_part_c() {
    let dir = exec_then_dump(
        "blackwidow",
        "SET foo bar\nHSET h f v\nZADD z 1.5 m\nRPUSH l a\n",
        "OK\n(integer) 1\n(integer) 1\n(integer) 1\n",
        "strings\tdefault\t666f6f\t62617200000000\n\
         hashes\tdefault\t68\t0100000000f1536500000000\n\
         hashes\tdata_cf\t010000006800f1536566\t76\n\
         lists\tdefault\t6c\t010000000000000000f1536500000000ffffffffffffff7f0100000000000080\n\
         lists\tdata_cf\t010000006c00f153650000000000000080\t61\n\
         zsets\tdefault\t7a\t0100000000f1536500000000\n\
         zsets\tdata_cf\t010000007a00f153656d\t000000000000f83f\n\
         zsets\tscore_cf\t010000007a00f15365000000000000f83f6d\t\n",
    );

    // The format has no namespaces: asking for one is a clear error.
    let out = exec_in_namespace("blackwidow", dir.path(), "x", "PING\n");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("blackwidow format has no namespaces"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn nemo_exec_then_dump_shows_the_bytes_of_pika_part_c() {
    // Part C of the Pika reference, plus the five separators nemo writes
    // on every open (`h`, `l`, `y`, `z`, `s`: empty value, zero suffix).
    exec_then_dump(
        "nemo",
        "SET foo bar\nHSET h f v\nZADD z 1.5 m\nLPUSH l a\n",
        "OK\n(integer) 1\n(integer) 1\n(integer) 1\n",
        "kv\tdefault\t666f6f\t6261720000000000000000\n\
         hash\tdefault\t4868\t010000000000000000f1536500000000\n\
         hash\tdefault\t68\t0000000000000000\n\
         hash\tdefault\t6801683d66\t7600f1536500000000\n\
         list\tdefault\t4c6c\t0100000000000000010000000000000001000000000000000200000000000000\
         00f1536500000000\n\
         list\tdefault\t6c\t0000000000000000\n\
         list\tdefault\t6c016c0100000000000000\t\
         000000000000000000000000000000006100f1536500000000\n\
         zset\tdefault\t5a7a\t010000000000000000f1536500000000\n\
         zset\tdefault\t79\t0000000000000000\n\
         zset\tdefault\t79017a0de0b6b3a76649f06d\t00f1536500000000\n\
         zset\tdefault\t7a\t0000000000000000\n\
         zset\tdefault\t7a017a6d\t000000000000f83f00f1536500000000\n\
         set\tdefault\t73\t0000000000000000\n",
    );
}

#[test]
fn exec_reads_redis_cli_quoting_and_prints_like_redis_cli() {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::new("exec").store("kvrocks", dir.path()).with(&[]);
    let script = "RPUSH \"l\\x00\" \"a b\" '\\x41'\nLRANGE \"l\\x00\" 0 -1\nGET\nINCR nope x\nHGET missing f\n\n";
    let out = redcodec(&args, script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "(integer) 2\n1) \"a b\"\n2) \"\\\\x41\"\n\
         (error) ERR wrong number of arguments for 'get' command\n\
         (error) ERR wrong number of arguments for 'incr' command\n(nil)\n"
    );
}

#[test]
fn exec_runs_one_command_after_double_dash() {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::new("exec")
        .store("kvrocks", dir.path())
        .with(&["--", "ECHO", "hi there"]);
    let out = redcodec(&args, "");
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "\"hi there\"\n");
}

#[test]
fn cluster_mode_writes_the_slot() {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::new("exec").store("kvrocks", dir.path()).with(&[
        "--cluster",
        "--",
        "SET",
        "foo",
        "bar",
    ]);
    assert!(redcodec(&args, "").status.success());
    let args = Args::new("dump")
        .store("kvrocks", dir.path())
        .with(&["--cluster"]);
    let out = redcodec(&args, "");
    assert_eq!(
        text(&out.stdout),
        "db\tmetadata\t0b5f5f6e616d6573706163652f96666f6f\t810000000000000000626172\n"
    );
}

#[test]
fn bad_input_is_one_clear_error_line_and_a_failing_status() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "exec",
                "--format",
                "pika9",
                "--dir",
                dir.path().to_str().unwrap(),
            ],
            "unknown format 'pika9' (known formats: kvrocks, blackwidow, nemo, ardb, floyd)",
        ),
        (
            vec![
                "dump",
                "--format",
                "kvrocks",
                "--dir",
                dir.path().to_str().unwrap(),
            ],
            "holds no kvrocks store",
        ),
    ];
    for (args, message) in cases {
        let out = redcodec(&args, "");
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_contains(&err, message);
    }
}

#[test]
fn a_cache_size_past_the_address_space_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let too_many = (usize::MAX / (1 << 20) + 1).to_string();
    for flag in ["--block-cache-mb", "--read-cache-mb"] {
        let args = Args::new("exec")
            .store("kvrocks", dir.path())
            .with(&[flag, &too_many, "--", "SET", "a", "b"]);
        let out = redcodec(&args, "");
        assert!(!out.status.success(), "{flag} {too_many} was taken");
        let err = text(&out.stderr);
        assert_contains(
            &err,
            &format!("invalid value '{too_many}' for '{flag} <MIB>'"),
        );
        assert_contains(&err, "MiB is more bytes than this machine can address");
        let out = redcodec(
            &Args::new("exec")
                .store("kvrocks", dir.path())
                .with(&[flag, "lots", "--", "PING"]),
            "",
        );
        assert_contains(&text(&out.stderr), "'lots' is not a whole number of MiB");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no store was made"
    );
    // A size that fits is taken.
    let out = redcodec(
        &Args::new("exec").store("kvrocks", dir.path()).with(&[
            "--read-cache-mb",
            "64",
            "--",
            "SET",
            "a",
            "b",
        ]),
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_directory_holding_other_files_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let args = Args::new("exec")
        .store("kvrocks", dir.path())
        .with(&["--", "SET", "a", "b"]);
    let out = redcodec(&args, "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("is not empty and holds no kvrocks store"));
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
}

#[test]
fn a_bad_quoted_line_names_its_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let args = Args::new("exec").store("kvrocks", dir.path()).with(&[]);
    let out = redcodec(&args, "PING\nSET \"unclosed\n");
    assert!(!out.status.success());
    assert_eq!(text(&out.stdout), "PONG\n");
    assert!(
        text(&out.stderr).contains("line 2"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ardb_exec_then_dump_shows_the_bytes_of_the_reference_worked_examples() {
    let dir = exec_then_dump(
        "ardb",
        "SET foo bar\nHSET h f v\nRPUSH l a\nZADD z 1.5 m\n",
        "OK\n(integer) 1\n(integer) 1\n(integer) 1\n",
        "rocksdb\t0\t03666f6f0100\t020000010403626172\n\
         rocksdb\t0\t01680100\t0300000200\n\
         rocksdb\t0\t01680401040166\t0401040176\n\
         rocksdb\t0\t016c0100\t05000002010201000100\n\
         rocksdb\t0\t016c06010100\t0601040161\n\
         rocksdb\t0\t017a0100\t090000020204016d04016d\n\
         rocksdb\t0\t017a0a020280808080808080f87f04016d\t0a00\n\
         rocksdb\t0\t017a0b0104016d\t0b010280808080808080f87f\n",
    );
    let d = dir.path().to_str().expect("utf-8 path");

    // Another namespace is another column family of the same store.
    let out = exec_in_namespace("ardb", dir.path(), "tenant", "SET foo t\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = redcodec(&Args::new("dump").store("ardb", d), "");
    assert!(text(&out.stdout).ends_with("rocksdb\ttenant\t03666f6f0100\t02000001040174\n"));

    // Another format's store is refused.
    let out = redcodec(&Args::new("dump").store("kvrocks", d), "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("holds no kvrocks store"));
}
