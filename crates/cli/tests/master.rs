//! `redcodec serve` as a replication master, followed by real
//! redis-server 7.0 replicas, on every format: whole RDB files redis-server
//! loads, full and partial resynchronisation, the deterministic forms of
//! the non-deterministic commands, concurrency, WAIT, INFO, and Redis'
//! replies to malformed PSYNC and REPLCONF.
//!
//! Needs `redis-server` on PATH; without it each test is recorded as
//! skipped, unless `REDCODEC_REQUIRE_REDIS=1` (CI), where it fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use redcodec_conformance::skip::Tool;
use redcodec_conformance::target::RedisServer;
use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
use redcodec_rdb::{EncodeOptions, Value as RdbValue};
use redis::Value;

mod serve_support;
use serve_support::{
    assert_same_keys, connect, formats, read_key, sorted, sorted_pairs, store_dir, Serve,
};

const REDIS_SERVER: Tool = Tool::new("redis-server", "redis-server", "REDCODEC_REQUIRE_REDIS");

/// A redis-server child, killed on drop.
struct Redis {
    _server: RedisServer,
    port: u16,
}

impl Redis {
    /// Starts redis-server with persistence off and `extra` options.
    fn start(dir: &Path, extra: &[&str]) -> Redis {
        let server = RedisServer::start_with(Some(dir), extra).expect("redis-server starts");
        let port = server.port();
        Redis {
            _server: server,
            port,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn conn(&self) -> redis::Connection {
        connect(&self.url())
    }
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// The values of the RDB file test: every type, small and big, binary.
fn rdb_samples() -> Vec<(Vec<u8>, RdbValue, Option<u64>)> {
    let far = 4_000_000_000_000u64; // year 2096, in ms
    let mut v = vec![
        (b("s:plain"), RdbValue::String(b("hello")), None),
        (b("s:int"), RdbValue::String(b("12345")), None),
        (b("s:neg"), RdbValue::String(b("-7")), None),
        (b("s:wide"), RdbValue::String(b("9007199254740993")), None),
        (b("s:empty"), RdbValue::String(Vec::new()), None),
        (
            b("s:lzf"),
            RdbValue::String(b(&"abcdefgh".repeat(100))),
            Some(far),
        ),
        (
            b"bin\x00\xff key".to_vec(),
            RdbValue::String(vec![0, 1, 2, 255, 13, 10]),
            None,
        ),
        (
            b("l:small"),
            RdbValue::List(vec![b("a"), b("1"), b("")]),
            None,
        ),
        (
            b("l:big"),
            RdbValue::List(
                (0..20_000)
                    .map(|i| format!("item{i}").into_bytes())
                    .collect(),
            ),
            Some(far + 1),
        ),
        (
            b("l:plain"),
            RdbValue::List(vec![vec![b'x'; 10_000], b("tail")]),
            None,
        ),
        (
            b("set:int"),
            RdbValue::Set(vec![b("1"), b("-5"), b("70000")]),
            None,
        ),
        (
            b("set:wide"),
            RdbValue::Set(vec![b("1"), b("5000000000")]),
            None,
        ),
        (
            b("set:big"),
            RdbValue::Set((0..1000).map(|i| format!("m{i}").into_bytes()).collect()),
            None,
        ),
        (
            b("z:small"),
            RdbValue::ZSet(vec![(b("a"), 1.0), (b("b"), -2.5), (b("c"), f64::INFINITY)]),
            None,
        ),
        (
            b("z:big"),
            RdbValue::ZSet(
                (0..500)
                    .map(|i| (format!("m{i}").into_bytes(), i as f64 / 3.0))
                    .collect(),
            ),
            Some(far),
        ),
        (
            b("h:small"),
            RdbValue::Hash(vec![(b("f"), b("v")), (b("n"), b("42"))]),
            None,
        ),
        (
            b("h:big"),
            RdbValue::Hash(
                (0..300)
                    .map(|i| {
                        (
                            format!("f{i}").into_bytes(),
                            "v".repeat(i % 90).into_bytes(),
                        )
                    })
                    .collect(),
            ),
            None,
        ),
    ];
    v.push((
        b("h:longvalue"),
        RdbValue::Hash(vec![(b("f"), vec![b'y'; 100])]),
        None,
    ));
    v
}

#[test]
fn redis_server_loads_an_rdb_file_written_here() {
    if REDIS_SERVER
        .find("RDB file written here loads into redis-server")
        .is_none()
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let samples = rdb_samples();
    let file = std::fs::File::create(tmp.path().join("x.rdb")).unwrap();
    let mut w = RdbFileWriter::new(
        file,
        &FileInfo::new(1_700_000_000),
        EncodeOptions::default(),
    )
    .unwrap();
    w.select_db(0, samples.len() as u64, 3).unwrap();
    for (key, value, expire) in &samples {
        w.key(key, value, *expire).unwrap();
    }
    w.finish().unwrap();

    let redis = Redis::start(tmp.path(), &["--dbfilename", "x.rdb"]);
    let mut c = redis.conn();
    let size: usize = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(size, samples.len(), "every key loaded");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for (key, value, expire) in &samples {
        let (ty, got, pttl) = read_key(&mut c, key);
        let want_ty = match value {
            RdbValue::String(_) => "string",
            RdbValue::List(_) => "list",
            RdbValue::Set(_) => "set",
            RdbValue::ZSet(_) => "zset",
            RdbValue::Hash(_) => "hash",
        };
        assert_eq!(ty, want_ty, "{key:?}");
        let want = match value {
            RdbValue::String(s) => Value::BulkString(s.clone()),
            RdbValue::List(items) => {
                Value::Array(items.iter().map(|i| Value::BulkString(i.clone())).collect())
            }
            RdbValue::Set(m) => sorted(Value::Array(
                m.iter().map(|i| Value::BulkString(i.clone())).collect(),
            )),
            RdbValue::ZSet(m) => {
                let mut m = m.clone();
                m.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                let got = scored(&got);
                assert_eq!(got, m, "{key:?}");
                check_ttl(&ty, pttl, *expire, now, key);
                continue;
            }
            RdbValue::Hash(p) => sorted_pairs(Value::Array(
                p.iter()
                    .flat_map(|(f, v)| [Value::BulkString(f.clone()), Value::BulkString(v.clone())])
                    .collect(),
            )),
        };
        assert_eq!(got, want, "{key:?}");
        check_ttl(&ty, pttl, *expire, now, key);
    }
}

/// A ZRANGE WITHSCORES reply as (member, score) pairs.
fn scored(v: &Value) -> Vec<(Vec<u8>, f64)> {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}")
    };
    items
        .chunks(2)
        .map(|p| match (&p[0], &p[1]) {
            (Value::BulkString(m), Value::BulkString(s)) => {
                let s = String::from_utf8_lossy(s);
                let score = match s.as_ref() {
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    other => other.parse().unwrap(),
                };
                (m.clone(), score)
            }
            other => panic!("not a pair: {other:?}"),
        })
        .collect()
}

/// The TTL of a key loaded from the file: none, or the file's expiry.
fn check_ttl(ty: &str, pttl: i64, expire: Option<u64>, now: i64, key: &[u8]) {
    match expire {
        None => assert_eq!(pttl, -1, "{ty} {key:?}"),
        Some(at) => {
            let left = at as i64 - now;
            assert!((pttl - left).abs() < 5_000, "{key:?}: {pttl} vs {left}");
        }
    }
}

/// INFO replication's field `name` (of the master, or of a replica).
fn info_field(c: &mut redis::Connection, section: &str, name: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg(section).query(c).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

/// Waits until the replica's link is up and it processed the master's
/// whole stream.
fn wait_caught_up(master: &mut redis::Connection, replica: &mut redis::Connection, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let m = info_field(master, "replication", "master_repl_offset");
        let up = info_field(replica, "replication", "master_link_status");
        let r = info_field(replica, "replication", "master_repl_offset");
        if up.as_deref() == Some("up") && m.is_some() && m == r {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the replica never caught up: master {m:?}, replica {r:?}, link {up:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every key of the master reads the same on the replica: type, value,
/// and TTL within a second. Waits first for the keys written to expire
/// at once (formats that keep seconds may keep them up to a second) and
/// for the replica to catch up.
fn assert_same(master: &mut redis::Connection, replica: &mut redis::Connection, what: &str) {
    std::thread::sleep(Duration::from_millis(2500));
    wait_caught_up(master, replica, what);
    assert_same_keys(master, replica, what);
}

/// One client's writes: every type, TTLs, the commands Redis rewrites
/// before propagating, on its own keys and on keys all clients share.
fn writes(url: &str, client: usize, rounds: usize) {
    let mut c = connect(url);
    let p = format!("c{client}");
    for i in 0..rounds {
        let run = |c: &mut redis::Connection, args: &[&str]| {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            let _: Value = cmd.query(c).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        };
        let i_s = i.to_string();
        run(
            &mut c,
            &["SET", &format!("{p}:s{}", i % 7), &i_s, "EX", "1000"],
        );
        run(&mut c, &["SETEX", &format!("{p}:sx"), "2000", &i_s]);
        run(&mut c, &["PSETEX", &format!("{p}:psx"), "3000000", "v"]);
        run(
            &mut c,
            &["SET", &format!("{p}:px"), "v", "PX", "4000000", "GET"],
        );
        run(
            &mut c,
            &["EXPIRE", &format!("{p}:s{}", (i + 3) % 7), "5000"],
        );
        run(&mut c, &["PEXPIRE", &format!("{p}:psx"), "6000000"]);
        run(&mut c, &["GETEX", &format!("{p}:sx"), "EX", "7000"]);
        run(&mut c, &["INCRBYFLOAT", "shared:float", "1.5"]);
        run(&mut c, &["HINCRBYFLOAT", "shared:hash", &p, "0.25"]);
        run(
            &mut c,
            &["RPUSH", "shared:list", &format!("{p}-{i}"), "x", "y"],
        );
        run(&mut c, &["LPOP", "shared:list"]);
        run(&mut c, &["BLPOP", "shared:list", "0.01"]);
        run(
            &mut c,
            &[
                "BLMOVE",
                "shared:list",
                "shared:list2",
                "LEFT",
                "RIGHT",
                "0.01",
            ],
        );
        run(
            &mut c,
            &["SADD", "shared:set", &format!("{p}-{i}"), "a", "b", "c"],
        );
        run(&mut c, &["SPOP", "shared:set"]);
        run(&mut c, &["SPOP", "shared:set", "2"]);
        run(&mut c, &["ZADD", "shared:z", &i_s, &format!("{p}-{i}")]);
        run(&mut c, &["ZINCRBY", "shared:z", "0.5", &format!("{p}-{i}")]);
        run(&mut c, &["BZPOPMIN", "shared:z", "0.01"]);
        run(
            &mut c,
            &[
                "HSET",
                &format!("{p}:h"),
                &format!("f{}", i % 20),
                &"v".repeat(i % 100),
            ],
        );
        run(&mut c, &["SADD", &format!("{p}:ints"), &i_s]);
        // A key that expires at once, then is written again: the master
        // met it expired, the replica still holds it.
        run(&mut c, &["SADD", &format!("{p}:short"), "old"]);
        run(&mut c, &["PEXPIRE", &format!("{p}:short"), "1"]);
        std::thread::sleep(Duration::from_millis(3));
        run(&mut c, &["SADD", &format!("{p}:short"), &format!("new{i}")]);
        // A relative expiry in the past deletes.
        run(&mut c, &["SET", &format!("{p}:gone"), "x"]);
        run(&mut c, &["EXPIRE", &format!("{p}:gone"), "-1"]);
        // A transaction.
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("INCR")
            .arg(format!("{p}:tx"))
            .cmd("LPUSH")
            .arg(format!("{p}:txl"))
            .arg(&i_s)
            .cmd("SET")
            .arg(format!("{p}:txs"))
            .arg(&i_s)
            .arg("EX")
            .arg(9000);
        let _: Value = pipe.query(&mut c).unwrap();
        if i % 10 == 0 {
            let dump: Vec<u8> = redis::cmd("DUMP")
                .arg(format!("{p}:h"))
                .query(&mut c)
                .unwrap();
            let _: Value = redis::cmd("RESTORE")
                .arg(format!("{p}:restored"))
                .arg(8_000_000)
                .arg(dump)
                .arg("REPLACE")
                .query(&mut c)
                .unwrap();
            run(&mut c, &["DEL", &format!("{p}:s{}", i % 7)]);
            run(
                &mut c,
                &["ZADD", &format!("{p}:bigz"), &i_s, &"m".repeat(70 + i % 5)],
            );
        }
    }
}

#[test]
fn redis_server_replicas_follow_every_format() {
    if REDIS_SERVER
        .find("redis-server replicas follow serve")
        .is_none()
    {
        return;
    }
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &[]);
        let mut m = server.conn();
        // Data before the replica: it arrives in the snapshot.
        writes(&server.url(""), 9, 20);
        // Concurrent writers, running while the replica connects, takes
        // its snapshot and follows the stream.
        let url = server.url("");
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let url = url.clone();
                std::thread::spawn(move || writes(&url, t, 150))
            })
            .collect();
        // What a master killed while writing a snapshot leaves behind: the
        // next full resync removes it (no process has that id).
        let leftover = dir.join("redcodec-master-snapshot-4000000000-x");
        std::fs::create_dir_all(leftover.join("store")).unwrap();
        let rdir = tempfile::tempdir().unwrap();
        let replica = Redis::start(rdir.path(), &["--replicaof", "127.0.0.1", &server.port()]);
        let mut r = replica.conn();
        // A blocked client served by a push of another.
        let blocked = {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut c = connect(&url);
                let got: Value = redis::cmd("BLPOP")
                    .arg("queue")
                    .arg(0)
                    .query(&mut c)
                    .unwrap();
                got
            })
        };
        let mut pusher = server.conn();
        serve_support::wait_blocked(&mut pusher, 1);
        let _: Value = redis::cmd("RPUSH")
            .arg("queue")
            .arg("job")
            .arg("next")
            .query(&mut pusher)
            .unwrap();
        assert_ne!(blocked.join().unwrap(), Value::Nil);
        for t in threads {
            t.join().unwrap();
        }
        wait_caught_up(&mut m, &mut r, format);
        assert_same(
            &mut m,
            &mut r,
            &format!("{format}: after concurrent writes"),
        );
        // A PUBLISH reaches the replica's subscribers through the stream.
        let mut subscriber = for_subscriber(replica.conn());
        let mut subscriber = subscriber.as_pubsub();
        subscriber.subscribe("news").unwrap();
        publish(&mut m, "news", format);
        expect_message(&mut subscriber, "news", format);
        drop(subscriber);
        // The snapshot was read from a checkpoint, removed once written.
        let checkpoints: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("redcodec-master-snapshot-"))
            .collect();
        assert!(
            checkpoints.is_empty(),
            "{format}: checkpoints left in the data directory: {checkpoints:?}"
        );
        let acked: i64 = redis::cmd("WAIT").arg(1).arg(10_000).query(&mut m).unwrap();
        assert_eq!(acked, 1, "{format}: WAIT counts the replica");
        let info: String = redis::cmd("INFO").arg("replication").query(&mut m).unwrap();
        let fields: Vec<&str> = info
            .lines()
            .filter_map(|l| l.split(':').next())
            .filter(|n| !n.is_empty() && !n.starts_with('#'))
            .collect();
        assert_eq!(
            fields,
            [
                "role",
                "connected_slaves",
                "slave0",
                "master_failover_state",
                "master_replid",
                "master_replid2",
                "master_repl_offset",
                "second_repl_offset",
                "repl_backlog_active",
                "repl_backlog_size",
                "repl_backlog_first_byte_offset",
                "repl_backlog_histlen"
            ],
            "{format}: {info}"
        );
        assert!(info.contains(",state=online,"), "{format}: {info}");
        assert!(
            info.contains(&format!("port={},", replica.port)),
            "{format}: {info}"
        );

        // Partial resynchronisation after the link drops mid-stream.
        let threads: Vec<_> = (5..7)
            .map(|t| {
                let url = url.clone();
                std::thread::spawn(move || writes(&url, t, 40))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let killed: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("replica")
            .query(&mut m)
            .unwrap();
        assert_eq!(killed, 1, "{format}: the replica's link");
        for t in threads {
            t.join().unwrap();
        }
        wait_caught_up(&mut m, &mut r, format);
        assert_same(
            &mut m,
            &mut r,
            &format!("{format}: after the partial resync"),
        );
        let ok = info_field(&mut m, "stats", "sync_partial_ok");
        assert_eq!(ok.as_deref(), Some("1"), "{format}: one partial resync");
        let full = info_field(&mut m, "stats", "sync_full");
        assert_eq!(full.as_deref(), Some("1"), "{format}: one full resync");
    }
}

/// A connection to `url` in database `db`.
fn in_db(url: &str, db: u32) -> redis::Connection {
    connect(&format!("{url}{db}"))
}

#[test]
fn an_ardb_master_replicates_every_database() {
    if REDIS_SERVER
        .find("an ardb master replicates every database")
        .is_none()
    {
        return;
    }
    let (_tmp, dir) = store_dir();
    let server = Serve::start("ardb", &dir, &[]);
    let url = server.url("");
    // Before the replicas: in the snapshot, one section per database.
    writes(&url, 9, 5);
    writes(&format!("{url}3"), 8, 5);
    writes(&format!("{url}15"), 7, 3);
    let rdir = tempfile::tempdir().unwrap();
    let redis = Redis::start(rdir.path(), &["--replicaof", "127.0.0.1", &server.port()]);
    let (_rtmp, rcdir) = store_dir();
    let addr = format!("127.0.0.1:{}", server.port());
    let redcodec = Serve::start("ardb", &rcdir, &["--replicaof", &addr]);
    // While they follow: writers in three databases at once, each
    // stream command after the SELECT of its own.
    let threads: Vec<_> = [(0, 0), (1, 5), (2, 3)]
        .into_iter()
        .map(|(t, db)| {
            let url = format!("{url}{db}");
            std::thread::spawn(move || writes(&url, t, 8))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Keys written to expire at once are gone on every side.
    std::thread::sleep(Duration::from_millis(2500));
    let replicas = [
        ("redis-server", redis.url()),
        ("redcodec ardb", redcodec.url("")),
    ];
    for (name, replica_url) in &replicas {
        wait_caught_up(&mut in_db(&url, 0), &mut in_db(replica_url, 0), name);
        for db in [0, 3, 5, 15] {
            let mut m = in_db(&url, db);
            let mut r = in_db(replica_url, db);
            assert_same_keys(&mut m, &mut r, &format!("{name}, database {db}"));
        }
        let mut empty = in_db(replica_url, 1);
        let dbsize: i64 = redis::cmd("DBSIZE").query(&mut empty).unwrap();
        assert_eq!(dbsize, 0, "{name}: database 1 was never written");
    }
}

/// Reads one line (through CRLF) from a raw connection.
fn line(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        s.read_exact(&mut byte).unwrap();
        out.push(byte[0]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn raw_command(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    line(&mut s)
}

#[test]
fn psync_outside_the_backlog_is_a_full_resync_and_bad_requests_get_redis_errors() {
    if REDIS_SERVER
        .find("PSYNC and REPLCONF against serve")
        .is_none()
    {
        return;
    }
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &[]);
    let mut m = server.conn();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-backlog-size")
        .arg("16kb")
        .query(&mut m)
        .unwrap();
    let size: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("repl-backlog-size")
        .query(&mut m)
        .unwrap();
    assert_eq!(size, ["repl-backlog-size", "16384"]);
    // A first replica (raw) starts the backlog.
    let mut first = TcpStream::connect(&server.addr).unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    first.write_all(b"PSYNC ? -1\r\n").unwrap();
    let head = line(&mut first);
    assert!(head.starts_with("+FULLRESYNC "), "{head}");
    let replid = head.split(' ').nth(1).unwrap().to_string();
    // Without `capa eof`: `$<length>` and the file (newlines may come
    // first, while the snapshot is written).
    let mut bulk = line(&mut first);
    while bulk == "\n" || bulk.starts_with('\n') {
        bulk = bulk.trim_start_matches('\n').to_string();
        if bulk.is_empty() {
            bulk = line(&mut first);
        }
    }
    let len: usize = bulk.trim_start_matches('$').trim_end().parse().unwrap();
    let mut file = vec![0u8; len];
    first.read_exact(&mut file).unwrap();
    assert!(file.starts_with(b"REDIS0010"), "{:?}", &file[..9]);
    assert_eq!(file[len - 9], 0xff, "EOF before the CRC");
    for i in 0..100 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg("v".repeat(500))
            .query(&mut m)
            .unwrap();
    }
    let offset: u64 = info_field(&mut m, "replication", "master_repl_offset")
        .unwrap()
        .parse()
        .unwrap();
    let first_byte: u64 = info_field(&mut m, "replication", "repl_backlog_first_byte_offset")
        .unwrap()
        .parse()
        .unwrap();
    assert!(offset > 16384 && first_byte > 1, "{offset} {first_byte}");
    let too_old = raw_command(&server.addr, &format!("PSYNC {replid} 1\r\n"));
    assert!(too_old.starts_with("+FULLRESYNC "), "{too_old}");
    let other_id = raw_command(
        &server.addr,
        &format!("PSYNC {} {}\r\n", "f".repeat(40), offset + 1),
    );
    assert!(other_id.starts_with("+FULLRESYNC "), "{other_id}");
    let within = raw_command(&server.addr, &format!("PSYNC {replid} {first_byte}\r\n"));
    assert_eq!(within, format!("+CONTINUE {replid}\r\n"));
    let partial_err = info_field(&mut m, "stats", "sync_partial_err");
    assert_eq!(partial_err.as_deref(), Some("2"));

    // Malformed requests: the replies of a real redis-server.
    let rdir = tempfile::tempdir().unwrap();
    let redis = Redis::start(rdir.path(), &[]);
    let redis_addr = format!("127.0.0.1:{}", redis.port);
    for request in [
        "PSYNC ? notanumber\r\n",
        "PSYNC ?\r\n",
        "SYNC extra\r\n",
        "REPLCONF foo bar\r\n",
        "REPLCONF listening-port x\r\n",
        "REPLCONF listening-port\r\n",
        "REPLCONF capa eof capa psync2\r\n",
        "WAIT 1\r\n",
        "WAIT x 0\r\n",
        "WAIT 0 -1\r\n",
        "WAIT 0 0\r\n",
    ] {
        assert_eq!(
            raw_command(&server.addr, request),
            raw_command(&redis_addr, request),
            "{request:?}"
        );
    }
}

/// Reads one RESP array of bulk strings (a command of the stream).
fn read_command(s: &mut TcpStream) -> Vec<String> {
    let head = line(s);
    let n: usize = head
        .strip_prefix('*')
        .unwrap_or_else(|| panic!("not an array: {head:?}"))
        .trim_end()
        .parse()
        .unwrap();
    (0..n)
        .map(|_| {
            let len: usize = line(s).trim_start_matches('$').trim_end().parse().unwrap();
            let mut arg = vec![0u8; len + 2];
            s.read_exact(&mut arg).unwrap();
            arg.truncate(len);
            String::from_utf8(arg).unwrap()
        })
        .collect()
}

#[test]
fn the_stream_carries_redis_7_deterministic_forms() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &[]);
    let mut c = server.conn();
    let mut replica = TcpStream::connect(&server.addr).unwrap();
    replica
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    replica.write_all(b"PSYNC ? -1\r\n").unwrap();
    assert!(line(&mut replica).starts_with("+FULLRESYNC "));
    let mut bulk = line(&mut replica);
    while bulk.trim_start_matches('\n').is_empty() {
        bulk = line(&mut replica);
    }
    let len: usize = bulk
        .trim_start_matches(['\n', '$'])
        .trim_end()
        .parse()
        .unwrap();
    let mut file = vec![0u8; len];
    replica.read_exact(&mut file).unwrap();

    let mut run = |args: &[&str]| -> Value {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c).unwrap()
    };
    // Command names compare case-insensitively (the blocking pops run
    // their non-blocking forms in lower case; a replica reads either).
    let expect = |replica: &mut TcpStream, want: &[&str]| {
        let mut got = read_command(replica);
        got[0].make_ascii_uppercase();
        assert_eq!(got, want, "stream");
    };
    let pexpiretime =
        |run: &mut dyn FnMut(&[&str]) -> Value, key: &str| match run(&["PEXPIRETIME", key]) {
            Value::Int(ms) => ms.to_string(),
            other => panic!("{other:?}"),
        };

    run(&["SET", "a", "1", "EX", "100"]);
    expect(&mut replica, &["SELECT", "0"]);
    let at = pexpiretime(&mut run, "a");
    expect(&mut replica, &["SET", "a", "1", "PXAT", &at]);
    run(&["SETEX", "b", "100", "v"]);
    let at = pexpiretime(&mut run, "b");
    expect(&mut replica, &["SET", "b", "v", "PXAT", &at]);
    run(&["EXPIRE", "a", "200"]);
    let at = pexpiretime(&mut run, "a");
    expect(&mut replica, &["PEXPIREAT", "a", &at]);
    run(&["GETEX", "a", "PERSIST"]);
    expect(&mut replica, &["PERSIST", "a"]);
    run(&["GET", "a"]);
    run(&["EXPIRE", "b", "-1"]);
    expect(&mut replica, &["DEL", "b"]);
    run(&["SADD", "s", "x", "y"]);
    expect(&mut replica, &["SADD", "s", "x", "y"]);
    run(&["SADD", "s", "x"]);
    let Value::BulkString(popped) = run(&["SPOP", "s"]) else {
        panic!("SPOP")
    };
    expect(
        &mut replica,
        &["SREM", "s", &String::from_utf8(popped).unwrap()],
    );
    run(&["SPOP", "s"]);
    expect(&mut replica, &["DEL", "s"]);
    run(&["INCRBYFLOAT", "f", "1.5"]);
    expect(&mut replica, &["SET", "f", "1.5", "KEEPTTL"]);
    // Kvrocks' CAS: a swap as a SET with its absolute expiry (or none);
    // a CAS or CAD that changed nothing (0, -1) sends nothing.
    run(&["CAS", "f", "other", "x"]);
    run(&["CAS", "missing", "1.5", "x"]);
    run(&["CAD", "missing", "1.5"]);
    run(&["CAS", "f", "1.5", "2", "EX", "100"]);
    let at = pexpiretime(&mut run, "f");
    expect(&mut replica, &["SET", "f", "2", "PXAT", &at]);
    run(&["CAS", "f", "2", "3"]);
    expect(&mut replica, &["SET", "f", "3"]);
    run(&["CAD", "f", "3"]);
    expect(&mut replica, &["CAD", "f", "3"]);
    // BITFIELD and SETBIT go as they came, and only when they changed
    // the string (Redis counts no change for a field or bit set to what
    // it held, nor for BITFIELD's reads).
    run(&["BITFIELD", "bf", "SET", "u8", "0", "7"]);
    expect(&mut replica, &["BITFIELD", "bf", "SET", "u8", "0", "7"]);
    run(&["BITFIELD", "bf", "GET", "u8", "0"]);
    run(&["BITFIELD", "bf", "SET", "u8", "0", "7", "GET", "i4", "4"]);
    run(&["SETBIT", "bf", "5", "1"]);
    run(&["SETBIT", "bf", "0", "1"]);
    expect(&mut replica, &["SETBIT", "bf", "0", "1"]);
    // PFCOUNT goes when it stored the cardinality in the HLL's cache,
    // as Redis sends it; not when the cache was valid.
    run(&["PFADD", "hll", "a", "b"]);
    expect(&mut replica, &["PFADD", "hll", "a", "b"]);
    run(&["PFCOUNT", "hll"]);
    expect(&mut replica, &["PFCOUNT", "hll"]);
    run(&["PFCOUNT", "hll"]);
    run(&["PFCOUNT", "hll", "nothing"]);
    run(&["PFCOUNT", "nothing"]);
    run(&["RPUSH", "l", "a", "b"]);
    expect(&mut replica, &["RPUSH", "l", "a", "b"]);
    run(&["BLPOP", "l", "1"]);
    expect(&mut replica, &["LPOP", "l"]);
    run(&["BLPOP", "nothing", "0.01"]);
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("INCR")
        .arg("n")
        .cmd("GET")
        .arg("n")
        .cmd("SET")
        .arg("d")
        .arg("1");
    let _: Value = pipe.query(&mut c).unwrap();
    expect(&mut replica, &["MULTI"]);
    expect(&mut replica, &["INCR", "n"]);
    expect(&mut replica, &["SET", "d", "1"]);
    expect(&mut replica, &["EXEC"]);
    // PUBLISH goes to the replicas, whose subscribers get it too.
    publish(&mut c, "news", "hi");
    expect(&mut replica, &["PUBLISH", "news", "hi"]);
    let mut run = |args: &[&str]| -> Value {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c).unwrap()
    };
    run(&["SADD", "e", "old"]);
    expect(&mut replica, &["SADD", "e", "old"]);
    run(&["PEXPIRE", "e", "1"]);
    let _ = read_command(&mut replica); // PEXPIREAT e <ms>
    std::thread::sleep(Duration::from_millis(50));
    run(&["SADD", "e", "new"]);
    expect(&mut replica, &["DEL", "e"]);
    expect(&mut replica, &["SADD", "e", "new"]);
}

/// A replica with replicas of its own passes on its master's PUBLISH, as
/// a Redis replica passes its master's stream on: a subscriber two links
/// down gets the message.
#[test]
fn a_replica_passes_its_masters_publish_on_to_its_own_replicas() {
    let (_top_dir, dir) = store_dir();
    let top = Serve::start("kvrocks", &dir, &[]);
    let (_middle_dir, dir) = store_dir();
    let middle = Serve::start("kvrocks", &dir, &["--replicaof", &top.addr]);
    let (_bottom_dir, dir) = store_dir();
    let bottom = Serve::start("floyd", &dir, &["--replicaof", &middle.addr]);
    let (mut t, mut m, mut b) = (top.conn(), middle.conn(), bottom.conn());
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut t).unwrap();
    // (The middle replica's own stream counts its own offsets: the key
    // arriving two links down says the chain is up.)
    wait_for_value(&mut b, "k", "v");
    let mut subscriber = for_subscriber(bottom.conn());
    let mut subscriber = subscriber.as_pubsub();
    subscriber.subscribe("news").unwrap();
    publish(&mut t, "news", "two links down");
    expect_message(&mut subscriber, "news", "two links down");
    // The middle replica's own clients' PUBLISH goes nowhere.
    publish(&mut m, "news", "from the middle");
    publish(&mut t, "news", "last");
    expect_message(&mut subscriber, "news", "last");
}

/// `c`, for a subscriber: its reads wait up to a minute for a message.
fn for_subscriber(c: redis::Connection) -> redis::Connection {
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    c
}

/// PUBLISH `message` on `channel` through `c`.
fn publish(c: &mut redis::Connection, channel: &str, message: &str) {
    let _: i64 = redis::cmd("PUBLISH")
        .arg(channel)
        .arg(message)
        .query(c)
        .unwrap();
}

/// The next message `subscriber` gets is `payload` on `channel`.
fn expect_message(subscriber: &mut redis::PubSub, channel: &str, payload: &str) {
    let message = subscriber.get_message().unwrap();
    assert_eq!(message.get_channel_name(), channel);
    assert_eq!(message.get_payload::<String>().unwrap(), payload);
}

/// Waits until `GET key` on `c` answers `value` (a replica still loading
/// its first copy answers LOADING meanwhile).
fn wait_for_value(c: &mut redis::Connection, key: &str, value: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got: Option<String> = redis::cmd("GET").arg(key).query(c).ok().flatten();
        if got.as_deref() == Some(value) {
            return;
        }
        assert!(Instant::now() < deadline, "{key} never read {value}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// CLIENT PAUSE WRITE on a replica holds its master's writes too, as in
/// Redis 7.0: they are applied once the pause ends, while reads go on.
#[test]
fn a_paused_replica_applies_its_masters_writes_once_the_pause_ends() {
    let (_master_dir, dir) = store_dir();
    let master = Serve::start("kvrocks", &dir, &[]);
    let (_replica_dir, dir) = store_dir();
    let replica = Serve::start("blackwidow", &dir, &["--replicaof", &master.addr]);
    let (mut m, mut r) = (master.conn(), replica.conn());
    let _: () = redis::cmd("SET").arg("k").arg("1").query(&mut m).unwrap();
    wait_for_value(&mut r, "k", "1");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(600_000)
        .arg("WRITE")
        .query(&mut r)
        .unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("2").query(&mut m).unwrap();
    // Long enough for the write to arrive and be applied, were it not held.
    std::thread::sleep(Duration::from_millis(500));
    let held: String = redis::cmd("GET").arg("k").query(&mut r).unwrap();
    assert_eq!(held, "1");
    let _: () = redis::cmd("CLIENT").arg("UNPAUSE").query(&mut r).unwrap();
    wait_for_value(&mut r, "k", "2");
}

#[test]
fn wait_for_a_replica_that_never_comes_ends_at_timeout_or_shutdown() {
    let (_tmp, dir) = store_dir();
    let server = Serve::start("kvrocks", &dir, &[]);
    let mut c = server.conn();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let none: i64 = redis::cmd("WAIT").arg(1).arg(50).query(&mut c).unwrap();
    assert_eq!(none, 0, "the timeout ends it");
    let url = server.url("");
    let waiting = std::thread::spawn(move || {
        let mut c = connect(&url);
        redis::cmd("WAIT").arg(1).arg(0).query::<i64>(&mut c)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        if list.contains("cmd=wait") {
            break;
        }
        assert!(Instant::now() < deadline, "WAIT never ran: {list}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = redis::cmd("SHUTDOWN").query::<Value>(&mut c);
    assert!(server.wait().success(), "the server shuts down");
    // Answered with the count, or closed by the shutdown.
    if let Ok(n) = waiting.join().unwrap() {
        assert_eq!(n, 0);
    }
}

/// SHUTDOWN on a master, waiting for its exit.
fn shut_down(server: Serve) {
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut server.conn());
    assert!(server.wait().success());
}

#[test]
fn a_master_stopped_cleanly_keeps_its_replicas_streams_across_the_restart() {
    if REDIS_SERVER
        .find("a restarted master keeps its replicas' streams")
        .is_none()
    {
        return;
    }
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let first = Serve::start(format, &dir, &[]);
        let mut m = first.conn();
        let rdir = tempfile::tempdir().unwrap();
        let replica = Redis::start(rdir.path(), &["--replicaof", "127.0.0.1", &first.port()]);
        let mut r = replica.conn();
        writes(&first.url(""), 1, 20);
        wait_caught_up(&mut m, &mut r, format);
        let replid = info_field(&mut m, "replication", "master_replid").unwrap();
        let offset: u64 = info_field(&mut m, "replication", "master_repl_offset")
            .unwrap()
            .parse()
            .unwrap();
        drop(m);
        shut_down(first);
        assert!(dir.join("redcodec-master-state").exists(), "{format}");

        // Started again: the old stream is master_replid2, the replica
        // pointed at the new address continues it (+CONTINUE).
        let second = Serve::start(format, &dir, &[]);
        let mut m = second.conn();
        assert!(
            !dir.join("redcodec-master-state").exists(),
            "read and removed"
        );
        assert_eq!(
            info_field(&mut m, "replication", "master_replid2"),
            Some(replid.clone())
        );
        assert_eq!(
            info_field(&mut m, "replication", "second_repl_offset"),
            Some((offset + 1).to_string())
        );
        let _: () = redis::cmd("SET")
            .arg("after")
            .arg("restart")
            .query(&mut m)
            .unwrap();
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(second.port())
            .query(&mut r)
            .unwrap();
        writes(&second.url(""), 2, 10);
        assert_same(&mut m, &mut r, format);
        assert_eq!(
            info_field(&mut m, "stats", "sync_partial_ok").as_deref(),
            Some("1"),
            "{format}"
        );
        assert_eq!(
            info_field(&mut m, "stats", "sync_full").as_deref(),
            Some("0")
        );
        drop(m);
        shut_down(second);

        // A store written to between the stop and the start: the saved
        // stream no longer describes it, and is dropped.
        let exec = std::process::Command::new(env!("CARGO_BIN_EXE_redcodec"))
            .args(["exec", "--format", format, "--dir"])
            .arg(&dir)
            .args(["--", "SET", "behind", "the-back"])
            .output()
            .unwrap();
        assert!(exec.status.success(), "{exec:?}");
        let third = Serve::start(format, &dir, &[]);
        let mut m = third.conn();
        assert_eq!(
            info_field(&mut m, "replication", "second_repl_offset").as_deref(),
            Some("-1"),
            "{format}: the stream is not continued"
        );
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(third.port())
            .query(&mut r)
            .unwrap();
        assert_same(&mut m, &mut r, format);
        assert_eq!(
            info_field(&mut m, "stats", "sync_full").as_deref(),
            Some("1")
        );
    }
}
