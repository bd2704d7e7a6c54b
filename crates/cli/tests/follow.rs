//! `redcodec migrate --from redis://… --follow`: a full copy of a real
//! redis-server 7.0 master, then its writes as they happen, until caught
//! up; a rerun (and a restarted `serve --replicaof`) continuing with a
//! partial resync; and the replication faults Redis ends its own way: a
//! replica told to follow itself, two replicas told to follow each other.
//!
//! Needs `redis-server` on PATH. Without it each test is reported as
//! skipped (`redcodec_conformance::skip`), unless `REDCODEC_REQUIRE_REDIS=1`
//! (set by CI), where it fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod replication_support;
mod serve_support;
use replication_support::{
    contents, field, info, q, real_rdb, wait_link_up, wait_rounds, wait_until, Master, BOUND,
    SHORT_GONE,
};
use serve_support::{connect, exchange, formats, store_dir, Serve};

fn stat(c: &mut redis::Connection, name: &str) -> u64 {
    let text = info(c, "stats");
    field(&text, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// The copy holds what the master holds: same keys, types, values,
/// expiry within a second.
fn assert_equal(master: &mut redis::Connection, copy: &mut redis::Connection, name: &str) {
    let want = contents(master);
    let got = contents(copy);
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{name}: keys missing in the copy {missing:?}, extra {extra:?}"
    );
    for (key, (value, expiry)) in &want {
        let (gv, ge) = &got[key];
        let k = String::from_utf8_lossy(key);
        assert_eq!(gv, value, "{name}: key {k:?}");
        match (expiry, ge) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!(
                (a - b).abs() <= 1000,
                "{name}: key {k:?} expires at {a} on the master, {b} in the copy"
            ),
            _ => panic!("{name}: key {k:?}: expiry {expiry:?} on the master, {ge:?} in the copy"),
        }
    }
    assert!(want.len() > 20, "{name}: the comparison compared something");
}

/// A starting dataset: every type, small and big, some with expiries.
fn seed(c: &mut redis::Connection) {
    let words: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
    q(c, &["SET", "s:plain", "hello"]);
    q(c, &["SET", "s:ttl", "v", "EX", "3600"]);
    let mut rpush = vec!["RPUSH", "l:big"];
    rpush.extend(words.iter().map(String::as_str));
    q(c, &rpush);
    let mut sadd = vec!["SADD", "set:big"];
    sadd.extend(words.iter().map(String::as_str));
    q(c, &sadd);
    q(c, &["ZADD", "z:small", "1", "a", "2.5", "b"]);
    let mut hset = vec!["HSET", "h:big"];
    for w in &words {
        hset.push(w);
        hset.push("value");
    }
    q(c, &hset);
    q(c, &["PEXPIRE", "h:big", "7200000"]);
    for i in 0..100 {
        q(c, &["SET", &format!("seed:{i}"), &i.to_string()]);
    }
}

/// One round of writes of every type (round `i`), with relative and
/// absolute expiries, increments, pops, a transaction and a script.
fn write_round(c: &mut redis::Connection, i: usize) {
    let k = |p: &str| format!("{p}:{}", i % 17);
    let n = i.to_string();
    q(c, &["SET", &k("str"), &n, "EX", "3600"]);
    q(c, &["APPEND", &k("app"), "ab"]);
    q(c, &["INCRBY", &k("cnt"), "3"]);
    q(c, &["INCRBYFLOAT", &k("flt"), "1.5"]);
    q(c, &["SETEX", &k("sx"), "5000", &n]);
    q(c, &["RPUSH", &k("list"), &n, "x", "y"]);
    q(c, &["LPOP", &k("list")]);
    q(c, &["LTRIM", &k("list"), "0", "20"]);
    q(c, &["SADD", &k("set"), &n, "m"]);
    q(c, &["SREM", &k("set"), &(i / 2).to_string()]);
    q(c, &["ZADD", &k("zset"), &n, &format!("m{}", i % 5)]);
    q(c, &["ZINCRBY", &k("zset"), "0.25", "m0"]);
    q(c, &["HSET", &k("hash"), &format!("f{}", i % 7), &n]);
    q(c, &["HINCRBYFLOAT", &k("hash"), "float", "0.5"]);
    q(c, &["PEXPIREAT", &k("hash"), "2100000000000"]);
    if i.is_multiple_of(5) {
        q(c, &["DEL", &k("app")]);
        q(c, &["PERSIST", &k("str")]);
        q(c, &["EXPIRE", &k("set"), "9000"]);
    }
    if i.is_multiple_of(7) {
        q(c, &["MULTI"]);
        q(c, &["SET", &k("tx"), &n]);
        q(c, &["INCR", &k("txn")]);
        q(c, &["EXEC"]);
        q(
            c,
            &[
                "EVAL",
                "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('RPUSH', KEYS[2], ARGV[1])",
                "2",
                &k("lua"),
                &k("lualist"),
                &n,
            ],
        );
    }
    if i.is_multiple_of(11) {
        q(c, &["SET", &k("short"), "gone soon", "PX", "300"]);
    }
}

/// Writes rounds until `stop`, counting them.
fn writer(
    url: String,
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut c = connect(&url);
        let mut i = 0;
        while !stop.load(Ordering::SeqCst) && i < 1_000_000 {
            write_round(&mut c, i);
            i += 1;
            rounds.store(i, Ordering::SeqCst);
        }
    })
}

/// A running `redcodec migrate --follow`, its stderr in a file.
struct Follower {
    child: Child,
    log: std::path::PathBuf,
    _logdir: tempfile::TempDir,
}

impl Follower {
    fn start(url: &str, format: &str, dst: &Path, extra: &[&str]) -> Follower {
        let logdir = tempfile::tempdir().unwrap();
        let log = logdir.path().join("stderr");
        let child = Command::new(env!("CARGO_BIN_EXE_redcodec"))
            .args(["migrate", "--from", url, "--to", format, "--dst"])
            .arg(dst)
            .arg("--follow")
            .args(extra)
            .env("REDCODEC_ABORT_ON_PANIC", "1")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("redcodec migrate starts");
        Follower {
            child,
            log,
            _logdir: logdir,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until its stderr holds `text` (and it still runs).
    fn wait_for(&mut self, text: &str) {
        wait_until(&format!("'{text}' on the follower's stderr"), || {
            let err = self.stderr();
            if err.contains(text) {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the follower exited ({status}) before '{text}':\n{err}");
            }
            Err(err)
        });
    }

    /// Waits for a successful exit (failing after [`BOUND`]); its stdout,
    /// stderr.
    fn finish(self, name: &str) -> (String, String) {
        let (status, out, err) = self.exit(name);
        assert!(status.success(), "{name}: {status}\n{out}\n{err}");
        (out, err)
    }

    /// Waits for the exit (failing after [`BOUND`]); its status, stdout,
    /// stderr.
    fn exit(mut self, name: &str) -> (std::process::ExitStatus, String, String) {
        let deadline = Instant::now() + BOUND;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: the follower never exited:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut out = String::new();
        use std::io::Read;
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let err = self.stderr();
        (status, out, err)
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `caught up: master_repl_offset M, replica offset R, …`: (M, R).
fn caught_up_offsets(out: &str) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.starts_with("caught up: "))
        .unwrap_or_else(|| panic!("no 'caught up' line: {out}"));
    let number = |after: &str| -> u64 {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (number("master_repl_offset "), number("replica offset "))
}

/// Opens the follower's destination with `redcodec serve` and compares it
/// with the master.
fn compare_destination(master: &Master, format: &str, dst: &Path, name: &str) {
    let serve = Serve::start(format, dst, &[]);
    let mut m = master.conn();
    let mut r = serve.conn();
    assert_equal(&mut m, &mut r, name);
    drop(serve);
}

#[test]
fn migrate_follow_copies_then_streams_until_caught_up() {
    let test = "migrate --follow from a redis-server master";
    let Some(master) = Master::start(test, &[]) else {
        return;
    };
    let mut m = master.conn();
    seed(&mut m);
    for format in formats() {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicUsize::new(0));
        let writing = writer(master.url(), stop.clone(), rounds.clone());
        wait_rounds(&rounds, 10);
        let (_tmp, dst) = store_dir();
        // Started while the master writes: the full copy and the writes
        // made meanwhile meet; it cannot be caught up while they go on.
        let mut follower =
            Follower::start(&master.url(), format, &dst, &["--until-caught-up", "3"]);
        follower.wait_for("the stream is up");
        let now = rounds.load(Ordering::SeqCst);
        wait_rounds(&rounds, now + 50);
        follower.wait_for("follow: streaming: offset");
        stop.store(true, Ordering::SeqCst);
        writing.join().unwrap();
        let (out, err) = follower.finish(format);
        let (master_offset, replica_offset) = caught_up_offsets(&out);
        assert_eq!(master_offset, replica_offset, "{format}: {out}");
        let now: u64 = field(&info(&mut m, "replication"), "master_repl_offset")
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            replica_offset <= now && replica_offset > 0,
            "{format}: {out}"
        );
        // The server logs every full resync; the follower's "full copy" progress
        // line may not come when the copy ends between two samples.
        assert!(
            err.contains("full resync from the master"),
            "{format}: {err}"
        );
        // The keys the copy loaded, counted as they were loaded.
        assert!(
            err.contains(" keys loaded by the full copy)"),
            "{format}: {err}"
        );
        assert!(dst.join("redcodec-replica-state").exists(), "{format}");
        std::thread::sleep(SHORT_GONE);
        compare_destination(&master, format, &dst, format);
    }
}

/// A command of the master's that redcodec does not have (XADD: streams
/// are modelled by no format) is not
/// applied: the follower catches up in offsets, but names the commands
/// and exits non-zero, so an operator does not cut over to a copy that
/// differs; a rerun from the saved state says so again, and the replica's
/// INFO replication counts them. The commands come in a partial resync's
/// stream (the first run saved its state), so none is in the full copy.
#[test]
fn a_command_redcodec_does_not_have_fails_the_cut_over() {
    let test = "migrate --follow and a command redcodec does not have";
    let Some(master) = Master::start(test, &["--repl-backlog-size", "64mb"]) else {
        return;
    };
    let mut m = master.conn();
    q(&mut m, &["SET", "before", "1"]);
    let format = "kvrocks";
    let (_tmp, dst) = store_dir();
    let url = master.url();
    Follower::start(&url, format, &dst, &["--until-caught-up", "1"]).finish("first run");
    q(&mut m, &["XADD", "stream", "*", "f", "1"]);
    q(&mut m, &["BITFIELD", "bf", "SET", "u8", "0", "255"]);
    q(&mut m, &["XADD", "stream", "*", "f", "2"]);
    q(&mut m, &["BITFIELD", "bf", "INCRBY", "u8", "8", "1"]);
    q(&mut m, &["SET", "after", "2"]);
    for run in ["second run", "third run"] {
        let follower = Follower::start(&url, format, &dst, &["--until-caught-up", "1"]);
        let (status, out, err) = follower.exit(run);
        assert!(!status.success(), "{run}: {out}\n{err}");
        assert!(out.starts_with("caught up: "), "{run}: {out}");
        assert!(
            err.contains("the master sent commands redcodec does not have, not applied: xadd=2;"),
            "{run}: {err}"
        );
    }
    // The writes after it were applied; the state says what was not.
    let serve = Serve::start(format, &dst, &["--replicaof", &master.addr()]);
    let mut r = serve.conn();
    wait_link_up(&mut r, "the replica's stream is up");
    let text = info(&mut r, "replication");
    assert_eq!(
        field(&text, "unknown_master_commands").as_deref(),
        Some("xadd=2"),
        "{text}"
    );
    let after: String = redis::cmd("GET").arg("after").query(&mut r).unwrap();
    assert_eq!(after, "2");
    // BITFIELD, between them, was applied.
    let bf: Vec<u8> = redis::cmd("GET").arg("bf").query(&mut r).unwrap();
    assert_eq!(bf, [255, 1]);
}

#[test]
fn a_rerun_and_a_restarted_replica_continue_with_a_partial_resync() {
    let test = "migrate --follow and serve --replicaof resume";
    let Some(master) = Master::start(test, &["--repl-backlog-size", "64mb"]) else {
        return;
    };
    let mut m = master.conn();
    seed(&mut m);
    let format = "kvrocks";
    let (_tmp, dst) = store_dir();
    let url = master.url();
    let follower = Follower::start(&url, format, &dst, &["--until-caught-up", "1"]);
    follower.finish("first run");
    assert_eq!(stat(&mut m, "sync_full"), 1);
    assert_eq!(stat(&mut m, "sync_partial_ok"), 0);
    for i in 0..30 {
        write_round(&mut m, i);
    }
    // Rerun: PSYNC <replid> <offset+1>, +CONTINUE.
    let follower = Follower::start(&url, format, &dst, &["--until-caught-up", "1"]);
    let (out, err) = follower.finish("second run");
    assert!(err.contains("partial resync accepted"), "{err}");
    assert!(!err.contains("full resync"), "{err}");
    assert!(out.starts_with("caught up: "), "{out}");
    assert_eq!(stat(&mut m, "sync_full"), 1, "no second full copy");
    assert_eq!(stat(&mut m, "sync_partial_ok"), 1);
    // `serve --replicaof` on the same directory continues too, and keeps
    // its state when stopped by SIGTERM.
    for i in 30..60 {
        write_round(&mut m, i);
    }
    for restart in 1..=2usize {
        let serve = Serve::start(format, &dst, &["--replicaof", &master.addr()]);
        let mut r = serve.conn();
        wait_until("the replica caught up", || {
            let want = field(&info(&mut m, "replication"), "master_repl_offset");
            let text = info(&mut r, "replication");
            if field(&text, "master_link_status").as_deref() == Some("up")
                && field(&text, "slave_repl_offset") == want
            {
                Ok(())
            } else {
                Err(text)
            }
        });
        assert!(serve.signal("TERM").success());
        assert!(dst.join("redcodec-replica-state").exists());
        assert_eq!(stat(&mut m, "sync_full"), 1, "restart {restart}");
        assert_eq!(stat(&mut m, "sync_partial_ok"), 1 + restart as u64);
        for i in 0..10 {
            write_round(&mut m, 100 * restart + i);
        }
    }
    let follower = Follower::start(&url, format, &dst, &["--until-caught-up", "1"]);
    follower.finish("last run");
    assert_eq!(stat(&mut m, "sync_full"), 1);
    std::thread::sleep(SHORT_GONE);
    compare_destination(&master, format, &dst, "after the resumed runs");
    // Served without --replicaof, the store may change: the state is
    // dropped, and the next run makes a full copy.
    assert!(!dst.join("redcodec-replica-state").exists());
    let follower = Follower::start(&url, format, &dst, &["--until-caught-up", "1"]);
    let (_, err) = follower.finish("after serving");
    assert!(err.contains("full resync"), "{err}");
    assert_eq!(stat(&mut m, "sync_full"), 2);
}

/// `REPLICAOF host port` on `c`.
fn replicaof(c: &mut redis::Connection, addr: &str) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(c)
        .unwrap()
}

/// Waits until INFO replication shows the link down with `error`.
fn wait_link_error(c: &mut redis::Connection, error: &str, name: &str) {
    wait_until(&format!("{name}: '{error}' in INFO replication"), || {
        let text = info(c, "replication");
        let e = field(&text, "master_link_error").unwrap_or_default();
        if e.contains(error) && field(&text, "master_link_status").as_deref() == Some("down") {
            Ok(())
        } else {
            Err(text)
        }
    });
}

const NOMASTERLINK: &str = "NOMASTERLINK Can't SYNC while not connected with my master";

/// The keys of a node before a fault, to check them after.
fn sample_data(c: &mut redis::Connection, tag: &str) {
    for i in 0..50 {
        let _: () = redis::cmd("SET")
            .arg(format!("{tag}:{i}"))
            .arg(i)
            .query(c)
            .unwrap();
    }
    let _: () = redis::cmd("RPUSH")
        .arg(format!("{tag}:list"))
        .arg(&["a", "b"])
        .query(c)
        .unwrap();
}

fn assert_data_untouched(c: &mut redis::Connection, tag: &str, name: &str) {
    let keys: i64 = redis::cmd("DBSIZE").query(c).unwrap();
    assert_eq!(keys, 51, "{name}: the data is untouched");
    let v: String = redis::cmd("GET").arg(format!("{tag}:7")).query(c).unwrap();
    assert_eq!(v, "7", "{name}");
    let l: Vec<String> = redis::cmd("LRANGE")
        .arg(format!("{tag}:list"))
        .arg(0)
        .arg(-1)
        .query(c)
        .unwrap();
    assert_eq!(l, ["a", "b"], "{name}");
}

#[test]
fn a_replica_told_to_follow_itself_refuses_itself_and_keeps_its_data() {
    for format in ["kvrocks", "floyd"] {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &[]);
        let mut c = serve.conn();
        sample_data(&mut c, "own");
        assert_eq!(replicaof(&mut c, &serve.addr), "OK");
        wait_link_error(&mut c, NOMASTERLINK, format);
        assert_eq!(
            replicaof(&mut c, &serve.addr),
            "OK Already connected to specified master"
        );
        // A replica's PSYNC gets Redis' exact refusal on the wire.
        let mut raw = serve.raw();
        let want = format!("-{NOMASTERLINK}\r\n");
        let got = exchange(&mut raw, b"PSYNC ? -1\r\n", want.len());
        assert_eq!(String::from_utf8_lossy(&got), want, "{format}");
        std::thread::sleep(Duration::from_secs(2));
        assert_data_untouched(&mut c, "own", format);
        let text = info(&mut c, "replication");
        assert_eq!(field(&text, "role").as_deref(), Some("slave"), "{text}");
        // Released, it is a master with its data.
        let _: () = redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query(&mut c)
            .unwrap();
        assert_data_untouched(&mut c, "own", format);
    }
}

#[test]
fn two_replicas_told_to_follow_each_other_refuse_each_other() {
    let (_ta, dir_a) = store_dir();
    let (_tb, dir_b) = store_dir();
    let a = Serve::start("kvrocks", &dir_a, &[]);
    let b = Serve::start("floyd", &dir_b, &[]);
    let mut ca = a.conn();
    let mut cb = b.conn();
    sample_data(&mut ca, "a");
    sample_data(&mut cb, "b");
    // B first follows a master that is not there: its link is down when
    // A asks it for a stream, and A's when B asks A.
    let nowhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = nowhere.local_addr().unwrap().to_string();
    drop(nowhere);
    assert_eq!(replicaof(&mut cb, &dead), "OK");
    assert_eq!(replicaof(&mut ca, &b.addr), "OK");
    wait_link_error(&mut ca, NOMASTERLINK, "A, following B");
    assert_eq!(replicaof(&mut cb, &a.addr), "OK");
    wait_link_error(&mut cb, NOMASTERLINK, "B, following A");
    // It stays so: each keeps refusing the other, and both keep their data.
    std::thread::sleep(Duration::from_secs(3));
    wait_link_error(&mut ca, NOMASTERLINK, "A, later");
    wait_link_error(&mut cb, NOMASTERLINK, "B, later");
    assert_data_untouched(&mut ca, "a", "A");
    assert_data_untouched(&mut cb, "b", "B");
}

/// A command as a master streams it.
fn resp(words: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", words.len()).into_bytes();
    for w in words {
        out.extend_from_slice(format!("${}\r\n{w}\r\n", w.len()).as_bytes());
    }
    out
}

/// Reads one RESP array command; returns its words.
fn read_command(r: &mut impl std::io::BufRead) -> std::io::Result<Vec<String>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(Vec::new());
    }
    let n: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
    let mut words = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line)?;
        let len: usize = line.trim().trim_start_matches('$').parse().unwrap_or(0);
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf)?;
        buf.truncate(len);
        words.push(String::from_utf8_lossy(&buf).into_owned());
    }
    Ok(words)
}

const FAKE_REPLID: &str = "0123456789abcdef0123456789abcdef01234567";

/// A fake master: a full copy of `rdb` then `stream` to `PSYNC ? -1`;
/// `+CONTINUE` then `resent` to a `PSYNC` that continues. Every PSYNC's
/// arguments are kept.
fn fake_master(
    rdb: Vec<u8>,
    stream: Vec<u8>,
    resent: Vec<u8>,
) -> (String, Arc<parking_lot_free::Log>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let log = Arc::new(parking_lot_free::Log::default());
    let seen = log.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let (rdb, stream, resent, seen) =
                (rdb.clone(), stream.clone(), resent.clone(), seen.clone());
            std::thread::spawn(move || -> std::io::Result<()> {
                use std::io::Write;
                let mut w = conn.try_clone()?;
                let mut r = std::io::BufReader::new(conn);
                loop {
                    let words = read_command(&mut r)?;
                    match words.first().map(|w| w.to_ascii_uppercase()).as_deref() {
                        Some("PING") => w.write_all(b"+PONG\r\n")?,
                        Some("REPLCONF")
                            if words.len() > 1 && words[1].eq_ignore_ascii_case("ack") => {}
                        Some("REPLCONF") => w.write_all(b"+OK\r\n")?,
                        Some("PSYNC") => {
                            seen.push(words[1..].join(" "));
                            if words[1] == "?" {
                                w.write_all(format!("+FULLRESYNC {FAKE_REPLID} 0\r\n").as_bytes())?;
                                w.write_all(format!("${}\r\n", rdb.len()).as_bytes())?;
                                w.write_all(&rdb)?;
                                w.write_all(&stream)?;
                            } else {
                                w.write_all(format!("+CONTINUE {FAKE_REPLID}\r\n").as_bytes())?;
                                w.write_all(&resent)?;
                            }
                        }
                        Some(_) => {}
                        None => return Ok(()),
                    }
                }
            });
        }
    });
    (addr, log)
}

/// A list shared between threads, without another dependency.
mod parking_lot_free {
    /// Lines pushed by the fake master's threads.
    #[derive(Default)]
    pub struct Log(std::sync::Mutex<Vec<String>>);

    impl Log {
        pub fn push(&self, line: String) {
            self.0.lock().unwrap().push(line);
        }

        pub fn all(&self) -> Vec<String> {
            self.0.lock().unwrap().clone()
        }
    }
}

#[test]
fn a_command_the_engine_refuses_stops_the_stream_before_it_and_the_replica_retries() {
    let test = "a master's command the engine refuses";
    let Some(rdb) = real_rdb(test, 20) else {
        return;
    };
    // The stream: two writes, then one no store of a replica can apply
    // (the key holds a string): the data no longer matches the master's;
    // then one more write. Read together, the writes form one group of
    // the stream, which must stop where the stream does.
    let mut stream = resp(&["SELECT", "0"]);
    stream.extend(resp(&["SET", "streamed", "1"]));
    stream.extend(resp(&["SET", "before", "2"]));
    let applied = stream.len();
    let mut refused = resp(&["LPUSH", "streamed", "x"]);
    refused.extend(resp(&["SET", "after", "3"]));
    stream.extend(&refused);
    let (addr, psyncs) = fake_master(rdb, stream, refused);
    for format in ["kvrocks", "floyd"] {
        let (_tmp, dir) = store_dir();
        let before = psyncs.all().len();
        let serve = Serve::start(format, &dir, &["--replicaof", &addr]);
        let mut r = serve.conn();
        let want_psync = format!("{FAKE_REPLID} {}", applied + 1);
        wait_until(
            &format!("{format}: the refusal reported and a retry"),
            || {
                let text = info(&mut r, "replication");
                let error = field(&text, "master_link_error").unwrap_or_default();
                let asked = psyncs.all()[before..].to_vec();
                if error.contains("WRONGTYPE")
                    && asked.iter().filter(|p| **p == want_psync).count() >= 2
                {
                    Ok(())
                } else {
                    Err(format!("{text}\nPSYNCs: {asked:?}"))
                }
            },
        );
        let text = info(&mut r, "replication");
        let error = field(&text, "master_link_error").unwrap();
        assert!(
            error.starts_with(&format!("Stopped following at offset {applied}: the master's lpush was refused here: WRONGTYPE")),
            "{format}: {error}"
        );
        assert_eq!(field(&text, "master_link_status").as_deref(), Some("down"));
        assert_eq!(field(&text, "slave_repl_offset"), Some(applied.to_string()));
        // The data held is kept: the copy and the writes before; the
        // write after the refused one is not applied.
        let v: String = redis::cmd("GET").arg("streamed").query(&mut r).unwrap();
        assert_eq!(v, "1", "{format}");
        let v: String = redis::cmd("GET").arg("before").query(&mut r).unwrap();
        assert_eq!(v, "2", "{format}");
        let after: Option<String> = redis::cmd("GET").arg("after").query(&mut r).unwrap();
        assert_eq!(after, None, "{format}");
        let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(keys, 22, "{format}");
    }
}

#[test]
fn a_write_failed_between_instances_counts_as_applied_and_the_replica_goes_on_after_it() {
    let test = "a master's write that fails between instances";
    let Some(rdb) = real_rdb(test, 20) else {
        return;
    };
    // `SET h s` over the hash `h` writes two instances of blackwidow and
    // nemo (the hash's removal, the string); the store fails it after the
    // first (`REDCODEC_FAIL_BETWEEN_INSTANCES=1`) and completes it before
    // any later read or write. Alone between two PINGs it is applied
    // alone; after `SET before 2` in one read, as a group.
    for (case, failing) in [
        ("alone", [resp(&["PING"]), resp(&["SET", "h", "s"])]),
        (
            "in a group",
            [resp(&["SET", "before", "2"]), resp(&["SET", "h", "s"])],
        ),
    ] {
        let mut stream = resp(&["SELECT", "0"]);
        stream.extend(resp(&["HSET", "h", "f", "v"]));
        stream.extend(failing.concat());
        let applied = stream.len();
        // A PING ends the group before the write after.
        let mut rest = resp(&["PING"]);
        rest.extend(resp(&["SET", "after", "3"]));
        stream.extend(&rest);
        let (addr, psyncs) = fake_master(rdb.clone(), stream, rest);
        for format in ["blackwidow", "nemo"] {
            let name = format!("{format}, {case}");
            let (_tmp, dir) = store_dir();
            let serve = Serve::start_with_env(
                format,
                &dir,
                &["--replicaof", &addr],
                &[("REDCODEC_FAIL_BETWEEN_INSTANCES", "1")],
            );
            let mut r = serve.conn();
            // The retry continues after the failed write, not before it.
            let want_psync = format!("{FAKE_REPLID} {}", applied + 1);
            wait_until(&format!("{name}: the failure reported and a retry"), || {
                let text = info(&mut r, "replication");
                let after: Option<String> =
                    redis::cmd("GET").arg("after").query(&mut r).unwrap_or(None);
                let asked = psyncs.all();
                if asked.contains(&want_psync) && after.as_deref() == Some("3") {
                    Ok(())
                } else {
                    Err(format!("{text}\nPSYNCs: {asked:?}"))
                }
            });
            let v: String = redis::cmd("GET").arg("h").query(&mut r).unwrap();
            assert_eq!(v, "s", "{name}");
            let ty: String = redis::cmd("TYPE").arg("h").query(&mut r).unwrap();
            assert_eq!(ty, "string", "{name}");
            let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
            let before = i64::from(case == "in a group");
            assert_eq!(keys, 22 + before, "{name}");
        }
    }
}
