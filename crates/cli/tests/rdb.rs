//! `redcodec export` and `redcodec import` against a real redis-server
//! 7.0: an exported store loads into redis-server and reads the same key
//! by key; an RDB redis-server saved (every object encoding it picks:
//! listpack, quicklist, intset, hashtable, skiplist, LZF-compressed
//! strings) imports into every format and reads the same; a bad file
//! changes nothing and its error names the offset.
//!
//! Needs `redis-server` on PATH; without it each test is recorded as
//! skipped, unless `REDCODEC_REQUIRE_REDIS=1` (CI), where it fails.

use std::path::Path;
use std::process::Command;

use redcodec_conformance::skip::Tool;
use redcodec_conformance::target::RedisServer;

mod common;
use common::{exec_at, ok};

mod serve_support;
use serve_support::{assert_same_keys, connect, formats, store_dir, Serve};

const REDIS_SERVER: Tool = Tool::new("redis-server", "redis-server", "REDCODEC_REQUIRE_REDIS");

fn redcodec(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(args)
        .output()
        .expect("redcodec runs")
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Keys of every type and every encoding redis-server 7.0 chooses, with
/// and without TTLs (absolute, after `base_ms`), and binary bytes.
fn fill(c: &mut redis::Connection, base_ms: u64) {
    let at = |ms: u64| (base_ms + ms).to_string();
    let q = |c: &mut redis::Connection, args: &[&[u8]]| {
        let mut cmd = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for a in &args[1..] {
            cmd.arg(*a);
        }
        let _: redis::Value = cmd.query(c).unwrap();
    };
    q(c, &[b"SET", b"plain", b"value"]);
    q(c, &[b"SET", b"int", b"12345"]);
    q(c, &[b"SET", b"bin\x00\xff", b"\x00\x01\xfe\xff"]);
    // Long and repetitive: saved LZF-compressed.
    let long = "abcdefgh".repeat(500);
    q(c, &[b"SET", b"long", long.as_bytes()]);
    q(
        c,
        &[b"SET", b"ttl", b"v", b"PXAT", at(5_000_000).as_bytes()],
    );
    // Small collections: listpack / intset; big ones: quicklist,
    // hashtable, skiplist.
    q(c, &[b"RPUSH", b"list:small", b"a", b"b", b"c"]);
    q(c, &[b"HSET", b"hash:small", b"f1", b"v1", b"f2", b"v2"]);
    q(c, &[b"SADD", b"set:ints", b"1", b"2", b"300000"]);
    q(c, &[b"SADD", b"set:small", b"x", b"y"]);
    q(c, &[b"ZADD", b"zset:small", b"1.5", b"a", b"-2", b"b"]);
    for i in 0..300 {
        let n = i.to_string();
        let long = format!("{}-{}", "element".repeat(10), i);
        q(c, &[b"RPUSH", b"list:big", long.as_bytes()]);
        q(c, &[b"HSET", b"hash:big", n.as_bytes(), long.as_bytes()]);
        q(c, &[b"SADD", b"set:big", long.as_bytes()]);
        q(c, &[b"ZADD", b"zset:big", n.as_bytes(), long.as_bytes()]);
    }
    q(c, &[b"PEXPIREAT", b"hash:big", at(9_000_000).as_bytes()]);
    q(c, &[b"PEXPIREAT", b"list:small", at(7_000_000).as_bytes()]);
}

fn port_of(server: &RedisServer) -> String {
    server.port().to_string()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn an_rdb_redis_server_saved_imports_into_every_format() {
    if REDIS_SERVER
        .find("import of an RDB redis-server saved")
        .is_none()
    {
        return;
    }
    let rdir = tempfile::tempdir().unwrap();
    let redis = RedisServer::start_with(Some(rdir.path()), &["--dbfilename", "saved.rdb"])
        .expect("redis-server starts");
    let mut r = connect(&format!("redis://127.0.0.1:{}/", port_of(&redis)));
    let base = now_ms();
    fill(&mut r, base);
    let _: () = redis::cmd("SAVE").query(&mut r).unwrap();
    let rdb = rdir.path().join("saved.rdb");
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let out = redcodec(&[
            "import",
            "--rdb",
            rdb.to_str().unwrap(),
            "--format",
            format,
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{format}: {}", text(&out));
        assert!(
            text(&out).contains("imported 14 of 14 keys"),
            "{format}: {}",
            text(&out)
        );
        let server = Serve::start(format, &dir, &[]);
        assert_same_keys(&mut r, &mut server.conn(), &format!("{format}: imported"));
        // Into a store that holds keys: refused, nothing changed.
        drop(server);
        let again = redcodec(&[
            "import",
            "--rdb",
            rdb.to_str().unwrap(),
            "--format",
            format,
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(!again.status.success(), "{format}: a second import");
        assert!(
            text(&again).contains("already holds keys"),
            "{format}: {}",
            text(&again)
        );
    }
}

#[test]
fn an_exported_store_loads_into_redis_server() {
    if REDIS_SERVER
        .find("export of a store loaded by redis-server")
        .is_none()
    {
        return;
    }
    // The reference: a redis-server holding the keys.
    let rdir = tempfile::tempdir().unwrap();
    let reference = RedisServer::start_with(Some(rdir.path()), &[]).expect("redis-server starts");
    let mut r = connect(&format!("redis://127.0.0.1:{}/", port_of(&reference)));
    let base = now_ms();
    fill(&mut r, base);
    for format in formats() {
        let (_tmp, dir) = store_dir();
        {
            let server = Serve::start(format, &dir, &[]);
            fill(&mut server.conn(), base);
        }
        let out_dir = tempfile::tempdir().unwrap();
        let file = out_dir.path().join("exported.rdb");
        let out = redcodec(&[
            "export",
            "--format",
            format,
            "--dir",
            dir.to_str().unwrap(),
            "--rdb",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{format}: {}", text(&out));
        assert!(
            text(&out).contains("exported 14 keys"),
            "{format}: {}",
            text(&out)
        );
        let loaded =
            RedisServer::start_with(Some(out_dir.path()), &["--dbfilename", "exported.rdb"])
                .expect("redis-server loads the export");
        let mut l = connect(&format!("redis://127.0.0.1:{}/", port_of(&loaded)));
        assert_same_keys(&mut r, &mut l, &format!("{format}: exported"));
    }
}

/// Runs `import` of `file` into a fresh directory: it must fail with
/// `expect` in its message and leave no store behind.
fn bad_import(file: &Path, expect: &str) {
    let (_tmp, dir) = store_dir();
    let out = redcodec(&[
        "import",
        "--rdb",
        file.to_str().unwrap(),
        "--format",
        "kvrocks",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{expect}: {}", text(&out));
    assert!(
        text(&out).contains(expect) && text(&out).contains("nothing was written"),
        "{expect}: {}",
        text(&out)
    );
    assert!(!dir.exists(), "{expect}: the destination was created");
}

#[test]
fn a_bad_rdb_changes_nothing_and_names_the_offset() {
    if REDIS_SERVER
        .find("import of a truncated or corrupt RDB")
        .is_none()
    {
        return;
    }
    let rdir = tempfile::tempdir().unwrap();
    let redis = RedisServer::start_with(Some(rdir.path()), &["--dbfilename", "saved.rdb"])
        .expect("redis-server starts");
    let mut r = connect(&format!("redis://127.0.0.1:{}/", port_of(&redis)));
    let base = now_ms();
    fill(&mut r, base);
    let _: () = redis::cmd("SAVE").query(&mut r).unwrap();
    let good = std::fs::read(rdir.path().join("saved.rdb")).unwrap();
    let tmp = tempfile::tempdir().unwrap();

    let truncated = tmp.path().join("truncated.rdb");
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
    bad_import(&truncated, "at byte");

    // One byte of a value changed: only the checksum tells.
    let mut flipped = good.clone();
    let at = flipped
        .windows(5)
        .position(|w| w == b"value")
        .expect("the value is in the file");
    flipped[at] ^= 0x20;
    let corrupt = tmp.path().join("corrupt.rdb");
    std::fs::write(&corrupt, &flipped).unwrap();
    bad_import(&corrupt, "wrong checksum at byte");

    let missing = tmp.path().join("missing.rdb");
    let (_t, dir) = store_dir();
    let out = redcodec(&[
        "import",
        "--rdb",
        missing.to_str().unwrap(),
        "--format",
        "floyd",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("missing.rdb"), "{}", text(&out));
}

/// The fixed clock of the import test, in ms.
const CLOCK: &str = "1700000000000";

/// An import into a store that holds no key but records (a deleted hash
/// compaction has not removed) reads each key's state first: floyd's
/// versions repeat (from 0 again at a fixed clock), so the fast path of a
/// store holding nothing would bring the deleted field back.
#[test]
fn an_import_over_deleted_records_does_not_bring_them_back() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    exec_at(CLOCK, "kvrocks", &src, "HSET h new 2\n");
    let rdb = tmp.path().join("h.rdb");
    let (src, rdb_arg) = (src.to_str().unwrap(), rdb.to_str().unwrap());
    ok(&[
        "export", "--format", "kvrocks", "--dir", src, "--rdb", rdb_arg,
    ]);
    for (dst, before) in [("fresh", ""), ("deleted", "HSET h old 1\nDEL h\n")] {
        let dst = tmp.path().join(dst);
        if !before.is_empty() {
            exec_at(CLOCK, "floyd", &dst, before);
        }
        let dst_arg = dst.to_str().unwrap();
        ok(&[
            "import",
            "--rdb",
            rdb_arg,
            "--format",
            "floyd",
            "--dir",
            dst_arg,
            "--fixed-clock",
            CLOCK,
        ]);
        assert_eq!(
            exec_at(CLOCK, "floyd", &dst, "HGETALL h\n"),
            "1) \"new\"\n2) \"2\"\n",
            "{dst_arg}"
        );
    }
}
