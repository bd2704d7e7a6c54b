//! `redcodec serve` as a replica of a real redis-server 7.0 master, on
//! every format: a full copy while the master keeps taking writes of every
//! type with TTLs, then the stream; a link killed from the master resumed
//! by a partial resync; a malformed RDB from a fake master refused with the
//! data kept, or, loaded as it arrived into an empty replica, flushed; a
//! transfer cut halfway copied again whole; READONLY; REPLICAOF NO ONE; a replica SIGKILLed while it
//! loads a full copy, restarted: it never serves the half copy as complete
//! and ends equal.
//!
//! Needs `redis-server` on PATH. Without it each test is reported as
//! skipped (`redcodec_conformance::skip`), unless `REDCODEC_REQUIRE_REDIS=1`
//! (set by CI), where it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
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

/// Waits until the replica's link is up and it applied everything the
/// master sent (its offset equals the master's).
fn wait_caught_up(master: &mut redis::Connection, replica: &mut redis::Connection, name: &str) {
    wait_until(&format!("{name} caught up"), || {
        let m = info(master, "replication");
        let r = info(replica, "replication");
        let want = field(&m, "master_repl_offset");
        if field(&r, "master_link_status").as_deref() == Some("up")
            && field(&r, "slave_repl_offset") == want
        {
            Ok(())
        } else {
            Err(format!("master {want:?}, replica:\n{r}"))
        }
    });
}

/// The replica holds what the master holds: same keys, types, values,
/// expiry within a second.
fn assert_equal(master: &mut redis::Connection, replica: &mut redis::Connection, name: &str) {
    assert_equal_but(master, replica, name, &[]);
}

/// [`assert_equal`], but for the keys in `except`.
fn assert_equal_but(
    master: &mut redis::Connection,
    replica: &mut redis::Connection,
    name: &str,
    except: &[&str],
) {
    let mut want = contents(master);
    let mut got = contents(replica);
    for k in except {
        want.remove(k.as_bytes());
        got.remove(k.as_bytes());
    }
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{name}: keys missing on the replica {missing:?}, extra {extra:?}"
    );
    for (key, (value, expiry)) in &want {
        let (gv, ge) = &got[key];
        assert_eq!(gv, value, "{name}: key {:?}", String::from_utf8_lossy(key));
        match (expiry, ge) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!(
                (a - b).abs() <= 1000,
                "{name}: key {:?} expires at {a} on the master, {b} on the replica",
                String::from_utf8_lossy(key)
            ),
            _ => panic!(
                "{name}: key {:?}: expiry {expiry:?} on the master, {ge:?} on the replica",
                String::from_utf8_lossy(key)
            ),
        }
    }
    assert!(
        !want.is_empty(),
        "{name}: the comparison compared something"
    );
}

/// A starting dataset on the master: every type in compact and big
/// encodings, some keys with expiries.
fn seed(c: &mut redis::Connection) {
    let words: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
    let long = "x".repeat(100);
    q(c, &["SET", "s:plain", "hello"]);
    q(c, &["SET", "s:int", "12345"]);
    q(c, &["SET", "s:long", &long]);
    q(c, &["SET", "s:ttl", "v", "EX", "3600"]);
    q(c, &["RPUSH", "l:small", "a", "b", "c"]);
    let mut rpush = vec!["RPUSH", "l:big"];
    rpush.extend(words.iter().map(String::as_str));
    q(c, &rpush);
    q(c, &["SADD", "set:ints", "1", "2", "3"]);
    let mut sadd = vec!["SADD", "set:big"];
    sadd.extend(words.iter().map(String::as_str));
    q(c, &sadd);
    q(c, &["ZADD", "z:small", "1", "a", "2.5", "b"]);
    let scored: Vec<(String, String)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| ((i as f64 / 7.0).to_string(), w.clone()))
        .collect();
    let mut zadd = vec!["ZADD", "z:big"];
    for (s, m) in &scored {
        zadd.push(s);
        zadd.push(m);
    }
    q(c, &zadd);
    q(c, &["HSET", "h:small", "f", "v"]);
    let mut hset = vec!["HSET", "h:big"];
    for w in &words {
        hset.push(w);
        hset.push(&long);
    }
    q(c, &hset);
    q(c, &["PEXPIRE", "h:big", "7200000"]);
}

/// One round of writes of every type (round `i`), as an application
/// makes them: expiries relative and absolute, increments, pops,
/// transactions (which reach replicas as MULTI … EXEC) and, where the
/// master runs them (`scripts`), Lua scripts.
fn write_round(c: &mut redis::Connection, i: usize, scripts: bool) {
    let k = |p: &str| format!("{p}:{}", i % 17);
    let n = i.to_string();
    q(c, &["SET", &k("str"), &n, "EX", "3600"]);
    q(c, &["APPEND", &k("app"), "ab"]);
    q(c, &["INCRBY", &k("cnt"), "3"]);
    q(c, &["INCRBYFLOAT", &k("flt"), "1.5"]);
    q(c, &["SETEX", &k("sx"), "5000", &n]);
    q(c, &["RPUSH", &k("list"), &n, "x", "y"]);
    q(c, &["LPUSH", &k("list"), &n]);
    q(c, &["LPOP", &k("list")]);
    q(c, &["LTRIM", &k("list"), "0", "20"]);
    q(c, &["SADD", &k("set"), &n, "m"]);
    q(c, &["SREM", &k("set"), &(i / 2).to_string()]);
    q(c, &["ZADD", &k("zset"), &n, &format!("m{}", i % 5)]);
    q(c, &["ZINCRBY", &k("zset"), "0.25", "m0"]);
    q(c, &["HSET", &k("hash"), &format!("f{}", i % 7), &n]);
    q(c, &["HINCRBY", &k("hash"), "count", "1"]);
    q(c, &["HINCRBYFLOAT", &k("hash"), "float", "0.5"]);
    // 2036: within every format's expiry range (blackwidow stores seconds
    // in 32 bits).
    q(c, &["PEXPIREAT", &k("hash"), "2100000000000"]);
    if i.is_multiple_of(5) {
        q(c, &["DEL", &k("app")]);
        q(c, &["PERSIST", &k("str")]);
        q(c, &["EXPIRE", &k("set"), "9000"]);
        q(c, &["BLPOP", &k("list"), "1"]);
    }
    if i.is_multiple_of(7) {
        q(c, &["MULTI"]);
        q(c, &["SET", &k("tx"), &n]);
        q(c, &["INCR", &k("txn")]);
        q(c, &["EXEC"]);
    }
    if scripts && i.is_multiple_of(7) {
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
        q(c, &["RENAME", &k("cnt"), &k("renamed")]);
        q(c, &["SET", &k("short"), "gone soon", "PX", "300"]);
    }
}

/// Writes rounds until `stop`, counting them (Lua scripts among them
/// when `scripts`).
fn writer(
    url: String,
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicUsize>,
    scripts: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut c = connect(&url);
        let mut i = 0;
        while !stop.load(Ordering::SeqCst) && i < 100_000 {
            write_round(&mut c, i, scripts);
            i += 1;
            rounds.store(i, Ordering::SeqCst);
        }
    })
}

/// The INFO replication fields of a Redis 7.0 replica whose link is up,
/// in Redis' order.
const REPLICA_FIELDS: &[&str] = &[
    "role",
    "master_host",
    "master_port",
    "master_link_status",
    "master_last_io_seconds_ago",
    "master_sync_in_progress",
    "slave_read_repl_offset",
    "slave_repl_offset",
    "slave_priority",
    "slave_read_only",
    "replica_announced",
    "connected_slaves",
    "master_failover_state",
    "master_replid",
    "master_replid2",
    "master_repl_offset",
    "second_repl_offset",
    "repl_backlog_active",
    "repl_backlog_size",
    "repl_backlog_first_byte_offset",
    "repl_backlog_histlen",
];

#[test]
fn replicas_of_every_format_follow_a_master_that_keeps_writing() {
    let test = "replicas of every format follow a redis-server master";
    let Some(master) = Master::start(test, &[]) else {
        return;
    };
    let mut m = master.conn();
    seed(&mut m);
    // An expiry in 2100: past what some formats store (seconds in 32
    // bits); those leave the key out of the copy and name it.
    q(&mut m, &["SET", "far", "1", "PXAT", "4102444800000"]);
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let writing = writer(master.url(), stop.clone(), rounds.clone(), true);
    wait_rounds(&rounds, 20);
    // Replicas start while the master writes: their full copies and the
    // writes made meanwhile meet.
    let mut replicas = Vec::new();
    for format in formats() {
        let (tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--replicaof", &master.addr()]);
        replicas.push((format, tmp, serve));
    }
    let started = rounds.load(Ordering::SeqCst);
    wait_rounds(&rounds, started + 100);
    stop.store(true, Ordering::SeqCst);
    writing.join().unwrap();
    // The keys set to live 300 ms are gone on both sides before the
    // comparison (it reads the master, then the replica).
    std::thread::sleep(SHORT_GONE);
    let master_replid = field(&info(&mut m, "replication"), "master_replid").unwrap();
    for (format, _tmp, serve) in &replicas {
        let mut r = serve.conn();
        wait_caught_up(&mut m, &mut r, format);
        assert_equal_but(&mut m, &mut r, format, &["far"]);
        let far: i64 = redis::cmd("PEXPIRETIME").arg("far").query(&mut r).unwrap();
        match far {
            4_102_444_800_000 => assert_ne!(*format, "blackwidow"),
            -2 => assert_ne!(*format, "kvrocks", "far was left out"),
            other => panic!("{format}: far expires at {other}"),
        }
        let text = info(&mut r, "replication");
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_once(':').map(|(n, _)| n))
            .collect();
        assert_eq!(names, REPLICA_FIELDS, "{format}: {text}");
        assert_eq!(field(&text, "role").as_deref(), Some("slave"));
        assert_eq!(field(&text, "master_port"), Some(master.port.to_string()));
        assert_eq!(field(&text, "master_replid"), Some(master_replid.clone()));
    }
    let stats = info(&mut m, "replication");
    assert_eq!(
        field(&stats, "connected_slaves"),
        Some(replicas.len().to_string()),
        "{stats}"
    );
}

/// Every format as a master, followed by a redcodec replica of the next
/// format in the list (so every format is also a replica), while the
/// master keeps taking writes; then equal key by key.
#[test]
fn redcodec_replicas_follow_redcodec_masters_of_every_format() {
    let all: Vec<&str> = formats().collect();
    let mut pairs = Vec::new();
    for (i, format) in all.iter().enumerate() {
        let (mtmp, mdir) = store_dir();
        let master = Serve::start(format, &mdir, &[]);
        let mut m = master.conn();
        seed(&mut m);
        pairs.push((*format, all[(i + 1) % all.len()], mtmp, master));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let rounds: Vec<Arc<AtomicUsize>> = pairs.iter().map(|_| Arc::default()).collect();
    let writers: Vec<_> = pairs
        .iter()
        .zip(&rounds)
        .map(|((_, _, _, master), n)| {
            let url = master.url("");
            writer(url, stop.clone(), n.clone(), false)
        })
        .collect();
    for n in &rounds {
        wait_rounds(n, 10);
    }
    // Replicas start while their masters write.
    let mut replicas = Vec::new();
    for (_, replica_format, _, master) in &pairs {
        let (tmp, dir) = store_dir();
        let addr = master.addr.clone();
        let serve = Serve::start(replica_format, &dir, &["--replicaof", &addr]);
        replicas.push((tmp, serve));
    }
    for n in &rounds {
        let now = n.load(Ordering::SeqCst);
        wait_rounds(n, now + 40);
    }
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    // The keys set to live 300 ms are gone on both sides.
    std::thread::sleep(SHORT_GONE);
    for ((master_format, replica_format, _, master), (_, replica)) in pairs.iter().zip(&replicas) {
        let name = format!("{replica_format} replica of a {master_format} master");
        let mut m = master.conn();
        let mut r = replica.conn();
        wait_caught_up(&mut m, &mut r, &name);
        assert_equal(&mut m, &mut r, &name);
        let text = info(&mut r, "replication");
        assert_eq!(field(&text, "role").as_deref(), Some("slave"), "{name}");
        let mine = info(&mut m, "replication");
        assert_eq!(
            field(&mine, "connected_slaves").as_deref(),
            Some("1"),
            "{name}"
        );
        // ROLE on the master: its offset, and the replica online with its
        // listening port.
        let role: (String, i64, Vec<(String, String, String)>) =
            redis::cmd("ROLE").query(&mut m).unwrap();
        assert_eq!(role.0, "master", "{name}");
        assert_eq!(
            Some(role.1.to_string()),
            field(&mine, "master_repl_offset"),
            "{name}"
        );
        assert_eq!(role.2.len(), 1, "{name}: {role:?}");
        assert_eq!(role.2[0].1, replica.port(), "{name}: {role:?}");
        assert_eq!(
            field(&text, "master_replid"),
            field(&mine, "master_replid"),
            "{name}"
        );
    }
}

#[test]
fn a_link_killed_by_the_master_resumes_with_a_partial_resync() {
    let test = "a killed replication link resumes with PSYNC";
    // A backlog that covers the writes made while the link is down (an
    // operator sizes it so; the default 1 MB is gone in a moment under a
    // writer that never pauses).
    let args = ["--repl-diskless-sync", "no", "--repl-backlog-size", "64mb"];
    let Some(master) = Master::start(test, &args) else {
        return;
    };
    let mut m = master.conn();
    seed(&mut m);
    let (_tmp, dir) = store_dir();
    let serve = Serve::start("blackwidow", &dir, &["--replicaof", &master.addr()]);
    let mut r = serve.conn();
    wait_caught_up(&mut m, &mut r, "first sync");
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let writing = writer(master.url(), stop.clone(), rounds.clone(), true);
    for kill in 1..=3 {
        wait_rounds(&rounds, kill * 40);
        // The link is back (after the previous kill) and streaming.
        wait_until("the replica online", || {
            let text = info(&mut m, "replication");
            match field(&text, "slave0") {
                Some(line) if line.contains("state=online") => Ok(()),
                _ => Err(text),
            }
        });
        let killed: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("replica")
            .query(&mut m)
            .unwrap();
        assert_eq!(killed, 1, "the replica's link was connected");
    }
    let now = rounds.load(Ordering::SeqCst);
    wait_rounds(&rounds, now + 40);
    stop.store(true, Ordering::SeqCst);
    writing.join().unwrap();
    std::thread::sleep(SHORT_GONE);
    wait_caught_up(&mut m, &mut r, "after the kills");
    assert_equal(&mut m, &mut r, "after the kills");
    let stats = info(&mut m, "stats");
    let partial: u64 = field(&stats, "sync_partial_ok").unwrap().parse().unwrap();
    let full: u64 = field(&stats, "sync_full").unwrap().parse().unwrap();
    assert!(partial >= 1, "no partial resync: {stats}");
    assert_eq!(full, 1, "one full sync only: {stats}");
}

/// A fake master: answers the handshake, then sends `rdb` as the full
/// copy (`$len`), and counts the connections it got.
fn fake_master(rdb: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    fake_master_cutting(rdb, 0)
}

/// [`fake_master`] that, on its first `cut` connections, sends only the
/// first half of the RDB and closes the connection.
fn fake_master_cutting(rdb: Vec<u8>, cut: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let nth = count.fetch_add(1, Ordering::SeqCst);
            let rdb = rdb.clone();
            let sent = if nth < cut { rdb.len() / 2 } else { rdb.len() };
            std::thread::spawn(move || {
                let _ = serve_fake(stream, &rdb, sent);
            });
        }
    });
    (addr, connections)
}

/// Reads one RESP array command; returns its words.
fn read_command(r: &mut BufReader<TcpStream>) -> std::io::Result<Vec<String>> {
    let mut line = String::new();
    r.read_line(&mut line)?;
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

/// Serves one replica: the handshake, then `$<len>` and the first `sent`
/// bytes of `rdb` (all of them, or the connection is closed after).
fn serve_fake(stream: TcpStream, rdb: &[u8], sent: usize) -> std::io::Result<()> {
    let mut w = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    loop {
        let words = read_command(&mut r)?;
        match words.first().map(|w| w.to_ascii_uppercase()).as_deref() {
            Some("PING") => w.write_all(b"+PONG\r\n")?,
            Some("REPLCONF") => w.write_all(b"+OK\r\n")?,
            Some("PSYNC") => {
                w.write_all(format!("+FULLRESYNC {} 0\r\n", "f".repeat(40)).as_bytes())?;
                w.write_all(b"\n\n")?;
                w.write_all(format!("${}\r\n", rdb.len()).as_bytes())?;
                w.write_all(&rdb[..sent])?;
                if sent < rdb.len() {
                    return w.shutdown(std::net::Shutdown::Both);
                }
            }
            Some(_) => {}
            None => return Ok(()),
        }
    }
}

/// A fake master whose RDB of `keys` keys (a real redis-server's) ends in
/// a CRC64 that no longer matches: every key reads, and the whole file
/// must still be refused.
fn bad_checksum_master(test: &str, keys: usize) -> Option<(String, Arc<AtomicUsize>)> {
    let mut rdb = real_rdb(test, keys)?;
    let last = rdb.len() - 1;
    rdb[last] ^= 0x20;
    Some(fake_master(rdb))
}

/// Makes the replica `r` follow the fake master at `addr` whose RDB ends
/// in a wrong checksum, and waits until it reported that and tried again.
fn follow_a_bad_checksum(
    r: &mut redis::Connection,
    addr: &str,
    connections: &AtomicUsize,
    format: &str,
) {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let before = connections.load(Ordering::SeqCst);
    let _: () = redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(r)
        .unwrap();
    wait_until(&format!("{format}: the error reported and a retry"), || {
        let text = info(r, "replication");
        let error = field(&text, "master_link_error").unwrap_or_default();
        if error.contains("wrong checksum") && connections.load(Ordering::SeqCst) >= before + 2 {
            Ok(())
        } else {
            Err(text)
        }
    });
}

#[test]
fn a_malformed_rdb_is_reported_and_the_data_kept_and_the_replica_retries() {
    let Some((addr, connections)) = bad_checksum_master("a malformed RDB from a master", 50) else {
        return;
    };
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &[]);
        let mut r = serve.conn();
        let _: () = redis::cmd("SET")
            .arg("kept")
            .arg("1")
            .query(&mut r)
            .unwrap();
        follow_a_bad_checksum(&mut r, &addr, &connections, format);
        let text = info(&mut r, "replication");
        assert_eq!(field(&text, "master_link_status").as_deref(), Some("down"));
        // As Redis reports a link that was never up since REPLICAOF.
        assert_eq!(
            field(&text, "master_link_down_since_seconds").as_deref(),
            Some("-1"),
            "{format}"
        );
        let kept: String = redis::cmd("GET").arg("kept").query(&mut r).unwrap();
        assert_eq!(kept, "1", "{format}: the data held is kept");
        let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(keys, 1, "{format}: nothing of the bad RDB was loaded");
    }
}

/// A replica that holds no key loads the RDB as it arrives: one whose CRC
/// turns out wrong at its very end leaves it empty again (every key
/// loaded before is flushed, the load marker removed), and it retries.
#[test]
fn a_malformed_rdb_loaded_as_it_arrives_leaves_an_empty_replica_empty() {
    let test = "a malformed RDB into an empty replica";
    let Some((addr, connections)) = bad_checksum_master(test, 5000) else {
        return;
    };
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &[]);
        let mut r = serve.conn();
        follow_a_bad_checksum(&mut r, &addr, &connections, format);
        // Between two attempts: neither loading nor holding a key.
        wait_until(
            &format!("{format}: empty between attempts"),
            || match redis::cmd("DBSIZE").query::<i64>(&mut r) {
                Ok(0) => Ok(()),
                Ok(n) => Err(format!("{n} keys")),
                Err(e) => Err(e.to_string()),
            },
        );
        let _: () = redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query(&mut r)
            .unwrap();
        let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(keys, 0, "{format}: nothing of the bad RDB is kept");
        drop(r);
        drop(serve);
        assert!(
            !dir.join("redcodec-replica-loading").exists(),
            "{format}: the load marker is removed"
        );
        let serve = Serve::start(format, &dir, &[]);
        let keys: i64 = redis::cmd("DBSIZE").query(&mut serve.conn()).unwrap();
        assert_eq!(keys, 0, "{format}: nothing of the bad RDB after a restart");
    }
}

/// A link cut halfway through an RDB loaded as it arrives: the half copy
/// is flushed, and the next full copy loads whole.
#[test]
fn a_transfer_cut_while_loading_as_it_arrives_is_copied_again_whole() {
    let test = "a transfer cut into an empty replica";
    let Some(rdb) = real_rdb(test, 5000) else {
        return;
    };
    for format in formats() {
        let (addr, connections) = fake_master_cutting(rdb.clone(), 1);
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--replicaof", &addr]);
        let mut r = serve.conn();
        wait_link_up(&mut r, &format!("{format}: the second copy loaded"));
        // The first connection was cut; a later one copied it whole.
        assert!(connections.load(Ordering::SeqCst) >= 2, "{format}");
        let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(keys, 5000, "{format}");
        let value: String = redis::cmd("GET").arg("k:4999").query(&mut r).unwrap();
        // DEBUG POPULATE cuts `value:4999` to the 8 bytes asked for.
        assert_eq!(value, "value:49", "{format}");
    }
}

/// An RDB holding key `k` twice in database 0 (a set, then another set;
/// redis-server would refuse to load it), a hash twice, and other keys.
fn rdb_with_a_key_twice() -> Vec<u8> {
    use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
    use redcodec_rdb::{EncodeOptions, Value};
    let set =
        |members: &[&str]| Value::Set(members.iter().map(|m| m.as_bytes().to_vec()).collect());
    let hash = |f: &str, v: &str| Value::Hash(vec![(f.as_bytes().to_vec(), v.as_bytes().to_vec())]);
    let mut w =
        RdbFileWriter::new(Vec::new(), &FileInfo::new(0), EncodeOptions::default()).unwrap();
    w.select_db(0, 0, 0).unwrap();
    w.key(b"k", &set(&["a", "b"]), None).unwrap();
    w.key(b"h", &hash("f1", "1"), None).unwrap();
    for i in 0..100 {
        let key = format!("s{i}");
        w.key(key.as_bytes(), &Value::String(b"v".to_vec()), None)
            .unwrap();
    }
    w.key(b"k", &set(&["c"]), None).unwrap();
    w.key(b"h", &hash("f2", "2"), None).unwrap();
    w.finish().unwrap().0
}

/// A load into an emptied store reads no key's state, except a key it
/// may have written already: a key twice in the RDB is replaced, as
/// `RESTORE … REPLACE` replaces it, on every format (ardb keeps no
/// versions: the first value's elements would show through).
#[test]
fn a_key_twice_in_the_rdb_is_replaced_on_every_format() {
    let (addr, _connections) = fake_master(rdb_with_a_key_twice());
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--replicaof", &addr]);
        let mut r = serve.conn();
        wait_link_up(&mut r, &format!("{format}: the full copy loaded"));
        let mut members: Vec<String> = redis::cmd("SMEMBERS").arg("k").query(&mut r).unwrap();
        members.sort();
        assert_eq!(members, ["c"], "{format}");
        let fields: Vec<String> = redis::cmd("HGETALL").arg("h").query(&mut r).unwrap();
        assert_eq!(fields, ["f2", "2"], "{format}");
        let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(keys, 102, "{format}");
    }
}

/// A replica judges no key expired for its master's commands, however
/// late it applies them: the master says when a key expires (a DEL). Here
/// the replica's clock is in 2100, so every key with a TTL of the master's
/// has expired by it, in the full copy and in the stream. Nor does a
/// compaction on the replica drop such a key (or a collection's
/// elements), or its active expiry delete it: a full COMPACT runs after
/// the copy, and the master's later writes still find every key.
#[test]
fn a_replica_whose_clock_passed_the_expiries_loses_no_master_write() {
    let test = "a replica's clock past its master's expiries";
    let Some(master) = Master::start(test, &[]) else {
        return;
    };
    const YEAR_2100_MS: &str = "4102444800000";
    for format in formats() {
        let mut m = master.conn();
        q(&mut m, &["FLUSHALL"]);
        q(&mut m, &["SET", "early", "e", "EX", "1000"]);
        q(&mut m, &["HSET", "early-h", "f", "1", "g", "2"]);
        q(&mut m, &["EXPIRE", "early-h", "1000"]);
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(
            format,
            &dir,
            &["--fixed-clock", YEAR_2100_MS, "--replicaof", &master.addr()],
        );
        let mut r = serve.conn();
        wait_caught_up(&mut m, &mut r, format);
        compact(&mut r, format);
        for cmd in [
            &["PERSIST", "early"][..],
            &["PERSIST", "early-h"],
            &["SET", "k1", "v", "EX", "100"],
            &["PERSIST", "k1"],
            &["HSET", "h", "f", "1"],
            &["EXPIRE", "h", "100"],
            &["HSET", "h", "g", "2"],
            &["PERSIST", "h"],
            &["SET", "c", "10", "EX", "100"],
            &["INCR", "c"],
            &["PERSIST", "c"],
            &["SET", "r", "v", "EX", "100"],
            &["RENAME", "r", "r2"],
            &["PERSIST", "r2"],
            &["SET", "after", "1"],
        ] {
            q(&mut m, cmd);
        }
        wait_caught_up(&mut m, &mut r, format);
        let got = |r: &mut redis::Connection, args: &[&str]| -> redis::Value {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            cmd.query(r).unwrap()
        };
        for (key, want) in [
            ("early", "e"),
            ("k1", "v"),
            ("c", "11"),
            ("r2", "v"),
            ("after", "1"),
        ] {
            let value = got(&mut r, &["GET", key]);
            assert_eq!(
                value,
                redis::Value::BulkString(want.into()),
                "{format}: {key}"
            );
        }
        for hash in ["h", "early-h"] {
            let mut fields: Vec<String> = redis::cmd("HGETALL").arg(hash).query(&mut r).unwrap();
            fields.sort();
            assert_eq!(fields, ["1", "2", "f", "g"], "{format}: {hash}");
        }
        assert_eq!(
            got(&mut r, &["EXISTS", "r"]),
            redis::Value::Int(0),
            "{format}"
        );
    }
}

/// Runs a full COMPACT on `c`'s server and waits until it ended
/// (Kvrocks' INFO rocksdb `is_compacting`).
fn compact(c: &mut redis::Connection, name: &str) {
    q(c, &["COMPACT"]);
    wait_until(&format!("{name}: COMPACT ended"), || {
        let text = info(c, "rocksdb");
        match field(&text, "is_compacting").as_deref() {
            Some("no") => Ok(()),
            _ => Err(text),
        }
    });
}

#[test]
fn a_replica_refuses_writes_until_replicaof_no_one() {
    let test = "READONLY and REPLICAOF NO ONE";
    let Some(master) = Master::start(test, &[]) else {
        return;
    };
    let mut m = master.conn();
    q(&mut m, &["SET", "from-master", "1"]);
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &[]);
        let mut r = serve.conn();
        let (host, port) = master
            .addr()
            .rsplit_once(':')
            .map(|(h, p)| (h.to_string(), p.to_string()))
            .unwrap();
        let _: () = redis::cmd("SLAVEOF")
            .arg(&host)
            .arg(&port)
            .query(&mut r)
            .unwrap();
        // Once the full copy is loaded: while it loads, REPLICAOF gets
        // LOADING, as in Redis (it is not a command allowed while loading).
        wait_caught_up(&mut m, &mut r, format);
        let again: String = redis::cmd("REPLICAOF")
            .arg(&host)
            .arg(&port)
            .query(&mut r)
            .unwrap();
        assert_eq!(again, "OK Already connected to specified master");
        // ROLE, as Redis 7.0 answers it on a replica.
        let role: (String, String, i64, String, i64) = redis::cmd("ROLE").query(&mut r).unwrap();
        let offset = field(&info(&mut m, "replication"), "master_repl_offset");
        assert_eq!(
            role,
            (
                "slave".into(),
                host.clone(),
                port.parse().unwrap(),
                "connected".into(),
                offset.unwrap().parse().unwrap()
            ),
            "{format}"
        );
        // Redis' exact text, on the wire.
        let mut raw = serve.raw();
        for write in [
            &["SET", "x", "1"][..],
            &["DEL", "from-master"],
            &["BLPOP", "l", "0"],
        ] {
            let mut request = format!("*{}\r\n", write.len());
            for w in write {
                request.push_str(&format!("${}\r\n{w}\r\n", w.len()));
            }
            let want = b"-READONLY You can't write against a read only replica.\r\n";
            let got = exchange(&mut raw, request.as_bytes(), want.len());
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(want),
                "{format} {write:?}"
            );
        }
        let got: String = redis::cmd("GET").arg("from-master").query(&mut r).unwrap();
        assert_eq!(got, "1", "{format}: reads are served");
        // Nor through a script, as Redis' own replica refuses it: the
        // write it calls, or, for a script that declares it may write,
        // the script itself. A script that only reads runs.
        let del = "return redis.call('del', 'from-master')";
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(del)
            .query(&mut r)
            .unwrap();
        for (script, want) in [
            (
                del.to_string(),
                format!("-READONLY You can't write against a read only replica. script: {sha}, on @user_script:1.\r\n"),
            ),
            (
                "#!lua\nreturn 1".to_string(),
                "-READONLY You can't write against a read only replica.\r\n".to_string(),
            ),
        ] {
            let request = format!("*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n", script.len());
            let got = exchange(&mut raw, request.as_bytes(), want.len());
            assert_eq!(String::from_utf8_lossy(&got), want, "{format}");
        }
        for script in [
            "return redis.call('get', 'from-master')",
            "#!lua flags=no-writes\nreturn redis.call('get', 'from-master')",
        ] {
            let read: String = redis::cmd("EVAL").arg(script).arg(0).query(&mut r).unwrap();
            assert_eq!(read, "1", "{format}: {script}");
        }
        let err = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg("#!lua name=l\nredis.register_function('f', function() return 1 end)")
            .query::<String>(&mut r)
            .unwrap_err();
        assert_eq!(err.code(), Some("READONLY"), "{format}: {err}");
        // The master's writes reach WATCH on the replica, as a client's do.
        let _: () = redis::cmd("WATCH")
            .arg("from-master")
            .query(&mut r)
            .unwrap();
        q(&mut m, &["SET", "from-master", "2"]);
        wait_caught_up(&mut m, &mut r, format);
        let _: () = redis::cmd("MULTI").query(&mut r).unwrap();
        let _: () = redis::cmd("GET").arg("from-master").query(&mut r).unwrap();
        let exec: redis::Value = redis::cmd("EXEC").query(&mut r).unwrap();
        assert_eq!(exec, redis::Value::Nil, "{format}: the transaction aborts");
        q(&mut m, &["SET", "from-master", "1"]);
        wait_caught_up(&mut m, &mut r, format);
        let _: () = redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query(&mut r)
            .unwrap();
        let _: () = redis::cmd("SET").arg("x").arg("1").query(&mut r).unwrap();
        let got: String = redis::cmd("GET").arg("from-master").query(&mut r).unwrap();
        assert_eq!(got, "1", "{format}: the data is kept");
        let role = field(&info(&mut r, "replication"), "role");
        assert_eq!(role.as_deref(), Some("master"), "{format}");
        let role: (String, i64, Vec<redis::Value>) = redis::cmd("ROLE").query(&mut r).unwrap();
        assert_eq!(role.0, "master", "{format}");
        assert!(role.2.is_empty(), "{format}: no replica");
        // The master's later writes no longer arrive.
        q(&mut m, &["SET", "later", "1"]);
        std::thread::sleep(Duration::from_millis(200));
        let later: Option<String> = redis::cmd("GET").arg("later").query(&mut r).unwrap();
        assert_eq!(later, None, "{format}");
        q(&mut m, &["DEL", "later"]);
    }
}

#[test]
fn a_replica_killed_while_loading_restarts_empty_and_resyncs() {
    let test = "a replica SIGKILLed during a full copy";
    let Some(master) = Master::start(test, &["--enable-debug-command", "yes"]) else {
        return;
    };
    let mut m = master.conn();
    let keys = 500_000;
    q(&mut m, &["DEBUG", "POPULATE", &keys.to_string(), "k", "16"]);
    q(&mut m, &["SET", "last", "1"]);
    let want = keys + 1;
    for format in ["kvrocks", "floyd"] {
        let (_tmp, dir) = store_dir();
        let mut serve = Serve::start(format, &dir, &["--replicaof", &master.addr()]);
        let mut r = serve.conn();
        // Killed once the load has begun: its marker is in the data
        // directory, and clients are refused LOADING.
        let marker = dir.join("redcodec-replica-loading");
        let deadline = Instant::now() + BOUND;
        while !marker.exists() {
            assert!(Instant::now() < deadline, "{format}: the load never began");
            std::thread::sleep(Duration::from_millis(1));
        }
        let loading = redis::cmd("PING").query::<String>(&mut r).unwrap_err();
        assert!(
            loading.to_string().contains("loading"),
            "{format}: {loading}"
        );
        let persistence = info(&mut r, "persistence");
        assert_eq!(
            field(&persistence, "loading").as_deref(),
            Some("1"),
            "{format}"
        );
        let pid = serve.pid();
        assert!(serve.running());
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        drop(serve);
        assert!(
            dir.join("redcodec-replica-loading").exists(),
            "{format}: the load marker is left behind"
        );
        // Restarted: never a half copy served as complete.
        let serve = Serve::start(format, &dir, &["--replicaof", &master.addr()]);
        let mut r = serve.conn();
        let mut seen = Vec::new();
        wait_until(
            &format!("{format}: the full copy again"),
            || match redis::cmd("DBSIZE").query::<i64>(&mut r) {
                Ok(n) => {
                    seen.push(n);
                    if n == want as i64 {
                        Ok(())
                    } else {
                        Err(format!("{n} keys"))
                    }
                }
                Err(e) if e.to_string().contains("is loading the dataset") => Err("loading".into()),
                Err(e) => panic!("{format}: {e}"),
            },
        );
        assert!(
            seen.iter().all(|&n| n == 0 || n == want as i64),
            "{format}: a partial copy was served: {seen:?}"
        );
        wait_caught_up(&mut m, &mut r, format);
        let last: String = redis::cmd("GET").arg("last").query(&mut r).unwrap();
        assert_eq!(last, "1");
        let sample: String = redis::cmd("GET").arg("k:12345").query(&mut r).unwrap();
        let theirs: String = redis::cmd("GET").arg("k:12345").query(&mut m).unwrap();
        assert_eq!(sample, theirs, "{format}");
        assert!(!dir.join("redcodec-replica-loading").exists());
    }
}

#[test]
fn a_full_copy_survives_a_sigkill_once_the_link_is_up() {
    // The load writes out of the write-ahead log and flushes before the
    // link counts as up: killed at once after, the replica keeps the copy
    // (restarted without a master to copy from again).
    let test = "a replica SIGKILLed right after its full copy";
    let Some(master) = Master::start(test, &["--enable-debug-command", "yes"]) else {
        return;
    };
    let mut m = master.conn();
    let keys = 20_000;
    q(&mut m, &["DEBUG", "POPULATE", &keys.to_string(), "k", "16"]);
    q(&mut m, &["HSET", "h", "f", "v"]);
    let want = keys + 1;
    for format in ["kvrocks", "blackwidow", "floyd"] {
        let (_tmp, dir) = store_dir();
        let serve = Serve::start(format, &dir, &["--replicaof", &master.addr()]);
        let mut r = serve.conn();
        wait_link_up(&mut r, &format!("{format}: the link up"));
        let status = Command::new("kill")
            .args(["-KILL", &serve.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        drop(serve);
        let serve = Serve::start(format, &dir, &[]);
        let mut r = serve.conn();
        let n: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert_eq!(n, want as i64, "{format}: keys after the kill");
        let sample: String = redis::cmd("GET").arg("k:12345").query(&mut r).unwrap();
        let theirs: String = redis::cmd("GET").arg("k:12345").query(&mut m).unwrap();
        assert_eq!(sample, theirs, "{format}");
        let field_v: String = redis::cmd("HGET").arg("h").arg("f").query(&mut r).unwrap();
        assert_eq!(field_v, "v", "{format}");
    }
}

/// The keys of database `db` of the server at `url`, sorted.
fn keys_of(url: &str, db: u8) -> Vec<String> {
    let mut c = connect(url);
    let _: () = redis::cmd("SELECT").arg(db).query(&mut c).unwrap();
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
    keys.sort();
    keys
}

#[test]
fn the_masters_databases_map_as_select_maps_them_on_each_format() {
    let test = "the master's databases on replicas";
    // A diskless master that waits 2 s for more replicas (sending
    // newlines meanwhile) before it answers PSYNC.
    let args = ["--requirepass", "pw", "--repl-diskless-sync-delay", "2"];
    let Some(master) = Master::start(test, &args) else {
        return;
    };
    let url = format!("redis://:pw@127.0.0.1:{}/", master.port);
    let mut m = connect(&url);
    // In the full copy: a in database 0, b in database 3.
    q(&mut m, &["SET", "a", "0"]);
    q(&mut m, &["SELECT", "3"]);
    q(&mut m, &["SET", "b", "3"]);
    q(&mut m, &["SELECT", "0"]);
    let mut replicas = Vec::new();
    for format in ["ardb", "kvrocks", "nemo"] {
        let (tmp, dir) = store_dir();
        let args = ["--replicaof", &master.addr(), "--masterauth", "pw"];
        let serve = Serve::start(format, &dir, &args);
        let mut r = serve.conn();
        wait_caught_up(&mut m, &mut r, format);
        replicas.push((format, tmp, serve));
    }
    // In the stream: c in database 3, d in database 0; e moved from 0 to
    // 3, f from 3 to 0, d copied as g into 0 with DB 0 named.
    q(&mut m, &["SELECT", "3"]);
    q(&mut m, &["SET", "c", "3"]);
    q(&mut m, &["SET", "f", "3"]);
    q(&mut m, &["SELECT", "0"]);
    q(&mut m, &["SET", "d", "0"]);
    q(&mut m, &["SET", "e", "0"]);
    q(&mut m, &["MOVE", "e", "3"]);
    q(&mut m, &["SELECT", "3"]);
    q(&mut m, &["MOVE", "f", "0"]);
    q(&mut m, &["SELECT", "0"]);
    q(&mut m, &["COPY", "d", "g", "DB", "0"]);
    // Then the master goes on writing: no replica stopped on those.
    q(&mut m, &["SET", "h", "0"]);
    for (format, _tmp, serve) in &replicas {
        let mut r = serve.conn();
        wait_caught_up(&mut m, &mut r, format);
        let url = serve.url("");
        match *format {
            // One namespace per database.
            "ardb" => {
                assert_eq!(keys_of(&url, 0), ["a", "d", "f", "g", "h"]);
                assert_eq!(keys_of(&url, 3), ["b", "c", "e"]);
            }
            // SELECT changes nothing: one keyspace, where nothing moves.
            "kvrocks" => assert_eq!(keys_of(&url, 0), ["a", "b", "c", "d", "e", "f", "g", "h"]),
            // Database 0 only; the others are skipped: e left it, f's
            // value was never copied.
            _ => assert_eq!(keys_of(&url, 0), ["a", "d", "g", "h"]),
        }
    }
    // A wrong password: the link stays down and says why.
    let (_tmp, dir) = store_dir();
    let args = ["--replicaof", &master.addr(), "--masterauth", "wrong"];
    let serve = Serve::start("kvrocks", &dir, &args);
    let mut r = serve.conn();
    wait_until("the AUTH failure reported", || {
        let text = info(&mut r, "replication");
        match field(&text, "master_link_error") {
            Some(e) if e.starts_with("Unable to AUTH to MASTER: -WRONGPASS") => Ok(()),
            _ => Err(text),
        }
    });
}

/// `REPLICAOF host port` sent to `c`.
fn replicaof(c: &mut redis::Connection, addr: &str) {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(c)
        .unwrap();
}

#[test]
fn a_promoted_replica_continues_its_masters_stream_for_the_others() {
    // No PING from the master: the replicas stay at its exact offset.
    let args = ["--repl-ping-replica-period", "3600"];
    let test = "a promoted replica continues its master's stream";
    let Some(master) = Master::start(test, &args) else {
        return;
    };
    let Some(sibling) = Master::start(test, &args) else {
        return;
    };
    let mut m = master.conn();
    seed(&mut m);
    let mut s = sibling.conn();
    replicaof(&mut s, &master.addr());
    let (_tmp, dir) = store_dir();
    let serve = Serve::start("kvrocks", &dir, &["--replicaof", &master.addr()]);
    let mut r = serve.conn();
    wait_caught_up(&mut m, &mut r, "the redcodec replica");
    wait_caught_up(&mut m, &mut s, "the redis-server replica");
    let replid = field(&info(&mut m, "replication"), "master_replid").unwrap();
    let offset: u64 = field(&info(&mut m, "replication"), "master_repl_offset")
        .unwrap()
        .parse()
        .unwrap();

    // Failover: the redcodec replica is promoted; the other replica and
    // the old master follow it.
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    let rep = info(&mut r, "replication");
    assert_eq!(field(&rep, "master_replid2"), Some(replid), "{rep}");
    assert_eq!(
        field(&rep, "second_repl_offset"),
        Some((offset + 1).to_string()),
        "{rep}"
    );
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg("failover")
        .query(&mut r)
        .unwrap();
    replicaof(&mut s, &serve.addr);
    replicaof(&mut m, &serve.addr);
    wait_caught_up(&mut r, &mut s, "the other replica, after the failover");
    wait_caught_up(&mut r, &mut m, "the old master, after the failover");
    assert_equal(&mut r, &mut s, "the other replica");
    assert_equal(&mut r, &mut m, "the old master");
    let stats = info(&mut r, "stats");
    assert_eq!(
        field(&stats, "sync_partial_ok").as_deref(),
        Some("2"),
        "{stats}"
    );
    assert_eq!(field(&stats, "sync_full").as_deref(), Some("0"), "{stats}");
}
