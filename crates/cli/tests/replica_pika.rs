//! `redcodec serve --replicaof` pointed at a real Pika master (4.0 and
//! 3.5, Pika's own replication protocol): the full copy of its dump
//! (rsync2) while it takes writes of every type with TTLs, then its
//! binlog stream, key by key equal on the kvrocks format and a Pika
//! format; INFO replication; REPLICAOF NO ONE.
//!
//! Needs the Pika server binaries named by `REDCODEC_PIKA40_BIN` (Pika
//! 4.0.x) and `REDCODEC_PIKA35_BIN` (Pika 3.5.x). Without one, its test is
//! reported as skipped (`redcodec_conformance::skip`), unless
//! `REDCODEC_REQUIRE_PIKA=1`, where it fails.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{connect, store_dir, Serve};

mod fake_pika;

mod replica_compare;
use replica_compare::{
    assert_read_only_replica, field, follow_while_writing, info, q, wait_equal_by, Expiry, BOUND,
};

/// TTLs are compared within this (Pika logs expiries in seconds).
const TTL_SLACK_MS: i64 = 2500;

/// The Pika binary named by `var`, or a recorded skip of `test`.
fn pika_bin(var: &str, test: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            redcodec_conformance::skip::unavailable(
                "REDCODEC_REQUIRE_PIKA",
                test,
                &format!("{var} does not name a Pika server binary"),
            );
            None
        }
    }
}

/// A port `p` with `p`, `p + 1000`, `p + 2000` and `p + 10001` free (the
/// ports a Pika server listens on).
fn pika_port() -> u16 {
    let seed = std::process::id() as u64 * 7919
        + std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos() as u64;
    for i in 0..500u64 {
        let p = 28000 + ((seed + i * 131) % 20000) as u16;
        let free = [0u16, 1000, 2000, 10001].iter().all(|d| {
            TcpListener::bind(("127.0.0.1", p + d)).is_ok()
                && TcpListener::bind(("0.0.0.0", p + d)).is_ok()
        });
        if free {
            return p;
        }
    }
    panic!("no free port for a Pika server");
}

/// A Pika server, killed on drop.
struct Pika {
    child: Child,
    port: u16,
    _tmp: tempfile::TempDir,
}

impl Pika {
    /// A fresh server (a minimal configuration: Pika's defaults for the
    /// rest); returns once it answers PING.
    fn start(bin: &Path) -> Pika {
        let tmp = tempfile::tempdir().unwrap();
        let port = pika_port();
        let d = tmp.path().display().to_string();
        let conf = tmp.path().join("pika.conf");
        std::fs::write(
            &conf,
            format!(
                "port : {port}\nthread-num : 2\ndb-path : {d}/db/\nlog-path : {d}/log/\n\
                 dump-path : {d}/dump/\npidfile : {d}/pika.pid\ndb-sync-path : {d}/dbsync/\n\
                 maxclients : 10000\ndatabases : 1\ndaemonize : no\ndb-instance-num : 3\n"
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("-c")
            .arg(&conf)
            .current_dir(tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pika starts");
        let mut p = Pika {
            child,
            port,
            _tmp: tmp,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = p.child.try_wait() {
                panic!("pika exited at start: {status}");
            }
            let ping = redis::Client::open(p.url())
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if ping.is_ok() {
                return p;
            }
            assert!(Instant::now() < deadline, "pika never answered PING");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Pika {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes of every type, some with TTLs; round `i` touches keys of
/// generation `i % 50`.
fn write_round(c: &mut redis::Connection, i: u64) {
    let g = i % 50;
    let s = format!("s:{g}");
    let h = format!("h:{g}");
    let l = format!("l:{g}");
    let st = format!("set:{g}");
    let z = format!("z:{g}");
    let n = i.to_string();
    let _: () = q(c, &["SET", &s, &format!("v {i}")]);
    let _: () = q(
        c,
        &["HMSET", &h, &format!("f{}", i % 7), &n, "fixed", "x y"],
    );
    let _: i64 = q(c, &["RPUSH", &l, &n, "a b", "c"]);
    let _: i64 = q(c, &["LPUSH", &l, &format!("L{n}")]);
    let _: i64 = q(c, &["SADD", &st, &format!("m{}", i % 5), "always"]);
    let _: i64 = q(
        c,
        &["ZADD", &z, &format!("{}.25", i % 9), &format!("m{}", i % 4)],
    );
    match i % 13 {
        0 => {
            let _: Option<Vec<u8>> = q(c, &["RPOP", &l]);
        }
        1 => {
            let _: i64 = q(c, &["HDEL", &h, "fixed"]);
        }
        2 => {
            let _: i64 = q(c, &["SREM", &st, "always"]);
        }
        3 => {
            let _: i64 = q(c, &["ZREM", &z, "m1"]);
        }
        4 => {
            let _: i64 = q(c, &["EXPIRE", &h, "1000"]);
            let _: () = q(c, &["SET", &format!("t:{g}"), "ttl", "EX", "2000"]);
            let _: () = q(c, &["SETEX", &format!("short:{g}"), "1", "gone soon"]);
        }
        5 => {
            let _: i64 = q(c, &["PERSIST", &h]);
            let _: i64 = q(c, &["INCR", &format!("n:{g}")]);
        }
        6 => {
            let _: i64 = q(c, &["LREM", &l, "0", "a b"]);
        }
        7 => {
            let _: () = q(c, &["LTRIM", &l, "0", "5"]);
        }
        8 => {
            let _: i64 = q(c, &["LINSERT", &l, "BEFORE", "c", "in serted"]);
        }
        9 => {
            let _: i64 = q(c, &["PEXPIRE", &z, "900000"]);
        }
        10 => {
            let _: i64 = q(c, &["DEL", &st]);
        }
        11 => {
            let _: f64 = q(c, &["ZINCRBY", &z, "1.5", "m0"]);
            let _: i64 = q(c, &["APPEND", &s, "+"]);
        }
        _ => {
            let _: () = q(c, &["LSET", &l, "0", "first"]);
        }
    }
}

/// The whole scenario against the Pika binary `bin`, on `formats`.
fn follow_a_pika_master(bin: &Path, formats: &[&str]) {
    for format in formats {
        let master = Pika::start(bin);
        let mut m = connect(&master.url());
        for i in 0..400 {
            write_round(&mut m, i);
        }
        for i in 0..2000 {
            let _: i64 = q(&mut m, &["HSET", "big", &format!("f{i}"), &"x".repeat(100)]);
        }
        let _: () = q(&mut m, &["SET", "ttl:long", "x", "EX", "5000"]);
        // Keep writing while the replica copies and follows.
        let (_tmp, dir) = store_dir();
        let serve = follow_while_writing(master.url(), master.port, format, &dir, 400, write_round);
        let mut r = serve.conn();
        // The one-second keys are gone on both sides before comparing.
        std::thread::sleep(Duration::from_millis(2500));
        wait_equal(&mut m, &mut r, format);
        assert_read_only_replica(&mut r, master.port);
        // More writes, through the stream only, after a FLUSHDB.
        let _: () = q(&mut m, &["FLUSHDB"]);
        for i in 0..50 {
            write_round(&mut m, 1000 + i);
        }
        std::thread::sleep(Duration::from_millis(2500));
        wait_equal(&mut m, &mut r, &format!("{format} after FLUSHDB"));
        let _: () = q(&mut r, &["REPLICAOF", "NO", "ONE"]);
        let rep = info(&mut r, "replication");
        assert_eq!(field(&rep, "role").as_deref(), Some("master"), "{rep}");
        let _: () = q(&mut r, &["SET", "w", "1"]);
        let _: () = q(&mut m, &["SET", "after", "1"]);
        std::thread::sleep(Duration::from_millis(1000));
        let after: Option<String> = q(&mut r, &["GET", "after"]);
        assert_eq!(
            after, None,
            "{format}: still following after REPLICAOF NO ONE"
        );
    }
}

#[test]
fn a_pika_4_0_master_is_followed_on_kvrocks_and_floyd() {
    let test = "redcodec serve as a replica of a real Pika 4.0 master";
    if let Some(bin) = pika_bin("REDCODEC_PIKA40_BIN", test) {
        follow_a_pika_master(&bin, &["kvrocks", "floyd"]);
    }
}

#[test]
fn a_pika_3_5_master_is_followed_on_kvrocks_and_blackwidow() {
    let test = "redcodec serve as a replica of a real Pika 3.5 master";
    if let Some(bin) = pika_bin("REDCODEC_PIKA35_BIN", test) {
        follow_a_pika_master(&bin, &["kvrocks", "blackwidow"]);
    }
}

/// A fake Pika master: its client port answers as the `fake_pika` module's
/// does; its replication port (+2000) answers every connection with
/// `reply` (raw bytes). Returns its port and the count of replication
/// connections.
fn fake_pika(reply: &'static [u8]) -> (u16, Arc<AtomicU64>) {
    use std::io::Write;
    let (client, repl, port) = fake_pika::listeners();
    fake_pika::serve_clients(client, "4.0.0");
    let count = Arc::new(AtomicU64::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in repl.incoming() {
            let Ok(mut stream) = stream else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(reply);
        }
    });
    (port, count)
}

#[test]
fn a_pika_master_sending_bytes_that_do_not_decode_is_reported_the_data_kept_and_retried() {
    // A frame of 5 bytes that are no protobuf message; then a frame
    // announcing 4 GiB.
    for (reply, why) in [
        (
            &b"\x00\x00\x00\x05\xff\xff\xff\xff\xff"[..],
            "does not decode",
        ),
        (&b"\xff\xff\xff\xff"[..], "announced a message of"),
    ] {
        let (port, connections) = fake_pika(reply);
        let (_tmp, dir) = store_dir();
        let serve = Serve::start("kvrocks", &dir, &[]);
        let mut r = serve.conn();
        let _: () = q(&mut r, &["SET", "keep", "me"]);
        let _: () = q(&mut r, &["REPLICAOF", "127.0.0.1", &port.to_string()]);
        let deadline = Instant::now() + BOUND;
        loop {
            let rep = info(&mut r, "replication");
            let error = field(&rep, "master_link_error").unwrap_or_default();
            if error.contains(why) && connections.load(Ordering::SeqCst) >= 2 {
                assert_eq!(
                    field(&rep, "master_link_status").as_deref(),
                    Some("down"),
                    "{rep}"
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no '{why}' error and retry: {rep}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let kept: Option<String> = q(&mut r, &["GET", "keep"]);
        assert_eq!(kept.as_deref(), Some("me"));
    }
}

/// Polls until master and replica hold the same keys, values and TTLs
/// (PTTL, within [`TTL_SLACK_MS`]: Pika has no PEXPIRETIME).
fn wait_equal(m: &mut redis::Connection, r: &mut redis::Connection, what: &str) {
    wait_equal_by(m, r, what, Expiry::Left, TTL_SLACK_MS);
}
