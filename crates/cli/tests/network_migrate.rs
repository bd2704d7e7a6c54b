//! `redcodec migrate` with a live server on one side (`--to redis://…`,
//! `--from redis://…`), run as a user runs it, against a real
//! `redis-server` started on a free loopback port.
//!
//! Needs `redis-server` on PATH. Without it each test is reported as
//! skipped (`redcodec_conformance::skip`, counted by `scripts/test`),
//! unless `REDCODEC_REQUIRE_REDIS=1` (set by `.ci/run`), where it fails.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// Every store is written and read at this fixed time,
/// 2035-01-01T00:00:00Z: its expiries lie ahead of the server's real
/// clock, so the server keeps the keys, and are known to the millisecond.
const CLOCK: &str = "2051222400000";
const CLOCK_MS: i64 = 2_051_222_400_000;

/// A `redis-server` child process on a loopback port, killed on drop.
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    /// Starts a server; `None` (the test is skipped) if that is impossible
    /// and `REDCODEC_REQUIRE_REDIS=1` is not set.
    fn start() -> Option<Redis> {
        Redis::start_with(&[])
    }

    /// Starts a server with extra configuration `args`.
    fn start_with(args: &[&str]) -> Option<Redis> {
        match Redis::try_start(args) {
            Ok(server) => Some(server),
            Err(e) => {
                redcodec_conformance::skip::unavailable(
                    "REDCODEC_REQUIRE_REDIS",
                    "network migration test",
                    &e,
                );
                None
            }
        }
    }

    fn try_start(args: &[&str]) -> Result<Redis, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir.path())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start redis-server: {e} (is it installed?)"))?;
        let server = Redis {
            child,
            port,
            _dir: dir,
        };
        // A short wait for the server to accept connections.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let answered = redis::Client::open(server.url(0))
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if answered.is_ok() {
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("redis-server never answered on port {port}"))
    }

    fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// A connection to database `db`.
    fn con(&self, db: u8) -> redis::Connection {
        redis::Client::open(self.url(db))
            .and_then(|c| c.get_connection())
            .expect("connect to redis-server")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn exec(format: &str, dir: &Path, script: &str) -> String {
    exec_at(CLOCK, format, dir, script)
}

/// Runs `redcodec ARGS` and checks it failed; its stdout and stderr.
fn refused(args: &[&str]) -> (String, String) {
    let out = redcodec(args, "");
    let stdout = text(&out.stdout);
    assert!(
        !out.status.success(),
        "redcodec {args:?} should fail:\n{stdout}"
    );
    (stdout, text(&out.stderr))
}

/// Every type, binary keys and values, fractional and negative scores,
/// expiries (one of a fraction of a second), and collections bigger than
/// a chunk of 1,000 elements (the list has 5,000).
fn dataset() -> String {
    let mut s = String::from(
        "SET plain hello\n\
         SET \"bin\\x00key\" \"\\xff\\x00\\x01\"\n\
         SET ttl x PX 3600000\n\
         HSET h name Ada lang en \"\\xfe\" \"\\x00\"\n\
         PEXPIRE h 1500\n\
         RPUSH l a b c a\n\
         SADD s x y \"\\x80\"\n\
         ZADD z 1.5 alice -2.25 bob 0.1 carol 0 zero 3 dave\n",
    );
    let fields: Vec<String> = (0..1500).map(|i| format!("f{i} v{i}")).collect();
    s.push_str(&format!("HSET hbig {}\n", fields.join(" ")));
    let items: Vec<String> = (0..5000).map(|i| format!("i{i}")).collect();
    s.push_str(&format!("RPUSH big {}\n", items.join(" ")));
    let members: Vec<String> = (0..1200)
        .map(|i| format!("{} m{i}", f64::from(i) * 0.5 - 300.125))
        .collect();
    s.push_str(&format!("ZADD zbig {}\n", members.join(" ")));
    s.push_str("PEXPIRE zbig 7200500\n");
    let set: Vec<String> = (0..1200).map(|i| format!("e{i}")).collect();
    s.push_str(&format!("SADD sbig {}\n", set.join(" ")));
    s
}

const DATASET_KEYS: usize = 11;

/// A store of `format` holding [`dataset`], and a key that expired before
/// [`CLOCK`] (written ten seconds earlier with a one-second TTL).
fn dataset_store(format: &str, dir: &Path) {
    let before = (CLOCK_MS - 10_000).to_string();
    exec_at(&before, format, dir, "SET gone x PX 1000\n");
    exec(format, dir, &dataset());
}

/// Checks that database `db` holds [`dataset`]; `rounding_ms`: what the
/// source format added to expiries of a fraction of a second (blackwidow
/// rounds them up to the second).
fn assert_dataset_in_redis(con: &mut redis::Connection, rounding_ms: i64) {
    let q = |con: &mut redis::Connection, c: &mut redis::Cmd| -> redis::Value {
        c.query(con).expect("query")
    };
    let keys: usize = redis::cmd("DBSIZE").query(con).unwrap();
    assert_eq!(keys, DATASET_KEYS);
    let binary: Vec<u8> = redis::cmd("GET").arg(b"bin\x00key").query(con).unwrap();
    assert_eq!(binary, b"\xff\x00\x01");
    let plain: String = redis::cmd("GET").arg("plain").query(con).unwrap();
    assert_eq!(plain, "hello");
    let h: BTreeMap<Vec<u8>, Vec<u8>> = redis::cmd("HGETALL").arg("h").query(con).unwrap();
    assert_eq!(
        h.into_iter().collect::<Vec<_>>(),
        [
            (b"lang".to_vec(), b"en".to_vec()),
            (b"name".to_vec(), b"Ada".to_vec()),
            (b"\xfe".to_vec(), b"\x00".to_vec()),
        ]
    );
    let l: Vec<String> = command(&["LRANGE", "l", "0", "-1"]).query(con).unwrap();
    assert_eq!(l, ["a", "b", "c", "a"]);
    let big: Vec<String> = command(&["LRANGE", "big", "0", "-1"]).query(con).unwrap();
    assert_eq!(big.len(), 5000);
    assert!(big.iter().enumerate().all(|(i, v)| *v == format!("i{i}")));
    let mut s: Vec<Vec<u8>> = redis::cmd("SMEMBERS").arg("s").query(con).unwrap();
    s.sort();
    assert_eq!(s, [b"x".to_vec(), b"y".to_vec(), b"\x80".to_vec()]);
    let z: Vec<(String, f64)> = command(&["ZRANGE", "z", "0", "-1", "WITHSCORES"])
        .query(con)
        .unwrap();
    let expected = [
        ("bob", -2.25),
        ("zero", 0.0),
        ("carol", 0.1),
        ("alice", 1.5),
        ("dave", 3.0),
    ];
    assert_eq!(z.len(), expected.len());
    for ((m, s), (em, es)) in z.iter().zip(expected) {
        assert_eq!((m.as_str(), *s), (em, es));
    }
    let zbig: Vec<(String, f64)> = command(&["ZRANGE", "zbig", "0", "-1", "WITHSCORES"])
        .query(con)
        .unwrap();
    assert_eq!(zbig.len(), 1200);
    assert!(zbig
        .iter()
        .enumerate()
        .all(|(i, (m, s))| *m == format!("m{i}") && *s == i as f64 * 0.5 - 300.125));
    let hbig: usize = redis::cmd("HLEN").arg("hbig").query(con).unwrap();
    let f1499: String = command(&["HGET", "hbig", "f1499"]).query(con).unwrap();
    assert_eq!((hbig, f1499.as_str()), (1500, "v1499"));
    let sbig: usize = redis::cmd("SCARD").arg("sbig").query(con).unwrap();
    assert_eq!(sbig, 1200);
    // Absolute expiries, to the millisecond the source kept.
    let expiry = |con: &mut redis::Connection, key: &str| -> i64 {
        redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap()
    };
    assert_eq!(expiry(con, "ttl"), CLOCK_MS + 3_600_000);
    assert_eq!(expiry(con, "h"), CLOCK_MS + 1500 + rounding_ms);
    assert_eq!(expiry(con, "zbig"), CLOCK_MS + 7_200_500 + rounding_ms);
    assert_eq!(expiry(con, "plain"), -1);
    assert_eq!(
        q(con, redis::cmd("EXISTS").arg("gone")),
        redis::Value::Int(0),
        "an expired key is not copied"
    );
}

#[test]
fn stores_go_to_redis_and_come_back_equal() {
    let Some(server) = Redis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("c.checkpoint");
    let (kv, bw, nemo) = (
        dir.path().join("kv"),
        dir.path().join("bw"),
        dir.path().join("nemo"),
    );
    dataset_store("kvrocks", &kv);
    dataset_store("blackwidow", &bw);

    // kvrocks → database 0, blackwidow → database 1.
    for (format, store, db) in [("kvrocks", &kv, 0), ("blackwidow", &bw, 1)] {
        let url = server.url(db);
        let stdout = ok(&Args::new("migrate")
            .src(format, store)
            .dst_url(&url)
            .fixed_clock(CLOCK)
            .with(&["--checkpoint", path(&checkpoint), "--verify"]));
        assert!(
            stdout.starts_with("migrated 11 keys, 8,918 elements,"),
            "{stdout}"
        );
        assert_contains(&stdout, &format!("to {url} in"));
        assert_contains(&stdout, "verify: 11 keys compared, all equal");
        assert!(!checkpoint.exists(), "the checkpoint goes when done");
    }
    // kvrocks keeps milliseconds; blackwidow rounds up to the second.
    assert_dataset_in_redis(&mut server.con(0), 0);
    assert_dataset_in_redis(&mut server.con(1), 500);

    // Back from the server into a nemo store.
    let stdout = ok(&Args::new("migrate")
        .src_url(&server.url(0))
        .dst("nemo", &nemo)
        .fixed_clock(CLOCK)
        .with(&["--checkpoint", path(&checkpoint), "--verify"]));
    assert!(
        stdout.starts_with("migrated 11 keys, 8,918 elements,"),
        "{stdout}"
    );
    assert_contains(&stdout, "verify: 11 keys compared, all equal");
    // The round trip equals the source, expiries as nemo keeps them.
    let stdout = ok(&Args::new("verify")
        .src("kvrocks", &kv)
        .dst("nemo", &nemo)
        .fixed_clock(CLOCK));
    assert_contains(&stdout, "verify: 11 keys compared, all equal");
    let reads = "GET \"bin\\x00key\"\nLINDEX big 4999\nLLEN big\nHGET h \"\\xfe\"\n\
                 ZSCORE z bob\nZSCORE zbig m1199\nHGET hbig f7\nSISMEMBER sbig e1199\n\
                 SISMEMBER s \"\\x80\"\nEXISTS gone\n";
    assert_eq!(exec("nemo", &nemo, reads), exec("kvrocks", &kv, reads));
    // nemo keeps a key live through the second before the expiry.
    assert_eq!(
        exec("nemo", &nemo, "PTTL ttl\nPTTL h\nPTTL zbig\nPTTL plain\n"),
        "(integer) 3599999\n(integer) 1999\n(integer) 7200999\n(integer) -1\n"
    );
    // `redcodec verify` with a server side compares the same way.
    let url = server.url(0);
    let verify = Args::new("verify")
        .src_url(&url)
        .dst("nemo", &nemo)
        .fixed_clock(CLOCK);
    assert_contains(&ok(&verify), "11 keys compared, all equal");
    exec("nemo", &nemo, "HSET hbig f7 changed\nDEL s\n");
    let (stdout, _) = refused(&verify);
    assert_contains(&stdout, "11 keys compared, 2 differ");
    assert_contains(&stdout, "\"hbig\": content differs");
    assert_contains(&stdout, "\"s\": missing from the destination");
}

#[test]
fn differences_on_the_server_are_found_by_verify() {
    let Some(server) = Redis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    exec("kvrocks", &kv, "SET a 1\nRPUSH l x y z\nSET t v PX 5000\n");
    let url = server.url(0);
    let checkpoint = dir.path().join("c");
    let args = Args::new("migrate")
        .src("kvrocks", &kv)
        .dst_url(&url)
        .fixed_clock(CLOCK)
        .with(&["--checkpoint", path(&checkpoint)]);
    ok(&args);
    let mut con = server.con(0);
    let _: () = command(&["RPUSH", "l", "extra"]).query(&mut con).unwrap();
    let _: () = redis::cmd("PEXPIREAT")
        .arg("t")
        .arg(CLOCK_MS + 9000)
        .query(&mut con)
        .unwrap();
    let _: () = command(&["SET", "new", "1"]).query(&mut con).unwrap();
    let (stdout, err) = refused(
        &Args::new("verify")
            .src("kvrocks", &kv)
            .dst_url(&url)
            .fixed_clock(CLOCK),
    );
    assert_contains(&stdout, "3 keys compared, 3 differ");
    assert_contains(&stdout, "\"l\": 3 vs 4 elements (source vs destination)");
    assert_contains(
        &stdout,
        &format!(
            "\"t\": expiry {} vs {} ms",
            CLOCK_MS + 5000,
            CLOCK_MS + 9000
        ),
    );
    assert_contains(&stdout, "\"new\": only in the destination");
    assert!(err.contains("verify found 3 differences"));
}

#[test]
fn an_interrupted_migration_to_redis_resumes_where_it_stopped() {
    let Some(server) = Redis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    let items: Vec<String> = (0..5000).map(|i| format!("i{i}")).collect();
    exec(
        "kvrocks",
        &kv,
        &format!("SET a 1\nRPUSH big {}\nSET z 2\n", items.join(" ")),
    );
    let url = server.url(0);
    // Run from the temporary directory: the default checkpoint goes there.
    let run = |extra: &[&str]| -> Command {
        let mut c = binary();
        c.current_dir(dir.path())
            .args(&*Args::new("migrate").src("kvrocks", &kv).dst_url(&url))
            .args(["--fixed-clock", CLOCK])
            .args(["--batch-elements", "1000"])
            .args(extra);
        c
    };
    kill_when_paused(&mut run(&["--pause-after-commits", "2"]), 2);

    let checkpoint = dir.path().join(format!(
        "redcodec-migrate-127.0.0.1-{}-0.checkpoint",
        server.port
    ));
    assert!(checkpoint.exists(), "default checkpoint in the current dir");
    // Two pipelines of 1,000 elements: "a", then "big" in part.
    let mut con = server.con(0);
    let len: usize = redis::cmd("LLEN").arg("big").query(&mut con).unwrap();
    assert_eq!(len, 2000);

    let out = run(&[]).output().expect("binary runs");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_contains(&err, "an interrupted migration is recorded in");
    assert_contains(&err, "--resume");

    let out = run(&["--resume", "--verify"])
        .output()
        .expect("binary runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_contains(&stdout, "resumed after key \"a\"");
    assert_contains(&stdout, "verify: 3 keys compared, all equal");
    assert!(!checkpoint.exists());
    // The partial key was written again from its DEL, not appended to.
    let len: usize = redis::cmd("LLEN").arg("big").query(&mut con).unwrap();
    assert_eq!(len, 5000);
}

#[test]
fn an_interrupted_migration_from_redis_resumes_at_its_cursor() {
    let Some(server) = Redis::start() else {
        return;
    };
    let mut con = server.con(0);
    let mut pipe = redis::pipe();
    for i in 0..2500 {
        pipe.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    pipe.cmd("RPUSH").arg("l").arg("a").arg("b").ignore();
    let _: () = pipe.query(&mut con).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (dst, checkpoint) = (dir.path().join("kv"), dir.path().join("c"));
    let url = server.url(0);
    let args = |extra: &[&'static str]| {
        Args::new("migrate")
            .src_url(&url)
            .dst("kvrocks", &dst)
            .fixed_clock(CLOCK)
            .with(&["--checkpoint", path(&checkpoint)])
            .with(extra)
    };
    kill_when_paused(binary().args(&*args(&["--pause-after-commits", "1"])), 1);
    assert!(checkpoint.exists());
    let copied = exec("kvrocks", &dst, "DBSIZE\n");
    let copied: u64 = copied
        .trim()
        .trim_start_matches("(integer) ")
        .parse()
        .expect("a count");
    assert!((1..2501).contains(&copied), "one SCAN page: {copied} keys");

    let stdout = ok(&args(&["--resume", "--verify"]));
    assert!(stdout.starts_with("migrated 2,501 keys,"), "{stdout}");
    assert_contains(&stdout, "resumed at SCAN cursor");
    assert_contains(&stdout, "verify: 2,501 keys compared, all equal");
    assert!(!checkpoint.exists());
    assert_eq!(
        exec("kvrocks", &dst, "DBSIZE\nGET k2499\nLRANGE l 0 -1\n"),
        "(integer) 2501\n\"2499\"\n1) \"a\"\n2) \"b\"\n"
    );
}

#[test]
fn a_target_holding_keys_is_refused_unless_merging() {
    let Some(server) = Redis::start() else {
        return;
    };
    let mut con = server.con(0);
    let _: () = command(&["MSET", "a", "old", "mine", "1"])
        .query(&mut con)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    exec("kvrocks", &kv, "SET a new\nRPUSH l x y\n");
    let url = server.url(0);
    let checkpoint = dir.path().join("c");
    let args = |extra: &[&'static str]| {
        Args::new("migrate")
            .src("kvrocks", &kv)
            .dst_url(&url)
            .fixed_clock(CLOCK)
            .with(&["--checkpoint", path(&checkpoint)])
            .with(extra)
    };
    let (_, err) = refused(&args(&[]));
    assert_contains(&err, &format!("{url} already holds 2 keys"));
    assert_contains(&err, "--merge");
    let a: String = redis::cmd("GET").arg("a").query(&mut con).unwrap();
    let l: bool = redis::cmd("EXISTS").arg("l").query(&mut con).unwrap();
    assert_eq!((a.as_str(), l), ("old", false), "nothing written");

    let stdout = ok(&args(&["--merge", "--verify"]));
    assert_contains(
        &stdout,
        "verify: 2 keys compared, all equal; 1 only in the destination (merged)",
    );
    let (a, mine): (String, String) = command(&["MGET", "a", "mine"]).query(&mut con).unwrap();
    assert_eq!((a.as_str(), mine.as_str()), ("new", "1"));

    // From the server into a store that holds keys: refused alike.
    let other = dir.path().join("other");
    exec("kvrocks", &other, "SET here 1\n");
    let (_, err) = refused(
        &Args::new("migrate")
            .src_url(&url)
            .dst("kvrocks", &other)
            .with(&["--checkpoint", path(&checkpoint)]),
    );
    assert_contains(&err, "already holds data");
    assert_contains(&err, "--merge");
}

#[test]
fn keys_of_types_redcodec_does_not_model_are_named_and_skipped_when_asked() {
    let Some(server) = Redis::start() else {
        return;
    };
    let mut con = server.con(0);
    let _: String = command(&["XADD", "events", "*", "f", "v"])
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET").arg("a").arg("1").query(&mut con).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (dst, checkpoint) = (dir.path().join("bw"), dir.path().join("c"));
    let url = server.url(0);
    let base = Args::new("migrate")
        .src_url(&url)
        .dst("blackwidow", &dst)
        .with(&["--checkpoint", path(&checkpoint)]);
    let (_, err) = refused(&base);
    assert!(
        err.contains("1 key cannot be migrated to blackwidow ("),
        "{err}"
    );
    assert_contains(
        &err,
        "\"events\": it holds a stream, a type redcodec does not model",
    );
    assert_contains(&err, "--skip-unrepresentable");
    assert_eq!(exec("blackwidow", &dst, "DBSIZE\n"), "(integer) 0\n");

    let mut skip = base.to_vec();
    skip.extend(["--skip-unrepresentable", "--verify"]);
    let stdout = ok(&skip);
    assert!(
        stdout.starts_with("migrated 1 keys, 1 elements"),
        "{stdout}"
    );
    assert_contains(
        &stdout,
        "skipped 1 keys the blackwidow format cannot hold:\n  \"events\": it holds a stream",
    );
    assert_contains(
        &stdout,
        "verify: 2 keys compared, all equal; 1 unrepresentable",
    );
    assert_eq!(exec("blackwidow", &dst, "GET a\n"), "\"1\"\n");
}

#[test]
fn store_options_are_refused_for_the_server_side() {
    let (_, err) = refused(
        &Args::new("migrate")
            .src_url("kvrocks")
            .with(&["--src", "/nonexistent"])
            .dst_url("redis://127.0.0.1:1/0")
            .with(&["--dst", "/tmp/x"]),
    );
    assert_contains(&err, "--dst is for a store, but --to names a server");
    let (_, err) = refused(
        &Args::new("migrate")
            .src_url("kvrocks")
            .dst_url("nemo")
            .with(&["--dst", "/tmp/x"]),
    );
    assert_contains(&err, "--src DIR is required");
    let (_, err) = refused(
        &Args::new("migrate")
            .src_url("redis://127.0.0.1:1")
            .dst_url("redis://127.0.0.1:2"),
    );
    assert_contains(&err, "both servers");
}

#[test]
fn servers_without_pexpiretime_are_read_with_time_and_pttl() {
    // As Pika and Ardb, which predate PEXPIRETIME.
    let Some(server) = Redis::start_with(&["--rename-command", "PEXPIRETIME", ""]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (kv, nemo, checkpoint) = (
        dir.path().join("kv"),
        dir.path().join("nemo"),
        dir.path().join("c"),
    );
    exec(
        "kvrocks",
        &kv,
        "SET ttl x PX 3600000\nRPUSH l a b\nPEXPIRE l 1500\nSET plain y\n",
    );
    let url = server.url(0);
    let stdout = ok(&Args::new("migrate")
        .src("kvrocks", &kv)
        .dst_url(&url)
        .fixed_clock(CLOCK)
        .with(&["--checkpoint", path(&checkpoint), "--verify"]));
    assert_contains(&stdout, "verify: 3 keys compared, all equal");
    let stdout = ok(&Args::new("migrate")
        .src_url(&url)
        .dst("nemo", &nemo)
        .fixed_clock(CLOCK)
        .with(&["--checkpoint", path(&checkpoint), "--verify"]));
    assert_contains(&stdout, "verify: 3 keys compared, all equal");
    // TIME + PTTL is the expiry to within the moment between the two
    // commands, which nemo's whole seconds absorb.
    assert_eq!(
        exec("nemo", &nemo, "PTTL ttl\nPTTL l\nPTTL plain\n"),
        "(integer) 3599999\n(integer) 1999\n(integer) -1\n"
    );
}
