//! Pipelines that `redcodec serve` commits as groups (one store write for
//! the consecutive keyed commands a connection sent at once): every reply
//! compared byte for byte with redis-server 7.0's for the same pipeline
//! of mixed reads and writes on the same keys, errors in the middle, and
//! a client blocked meanwhile; and many connections pipelining writes to
//! shared keys, with exact final values. Without redis-server the
//! comparison is recorded as skipped, unless `REDCODEC_REQUIRE_REDIS=1`,
//! where it fails.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use redcodec_conformance::target::RedisServer;

mod serve_support;
use serve_support::{assert_same_keys, formats, store_dir, wait_blocked, Serve};

/// One request as RESP.
fn request(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// Where the RESP2 reply starting at `at` ends, if `buf` holds all of it.
fn reply_end(buf: &[u8], at: usize) -> Option<usize> {
    let line_end = at + buf.get(at..)?.windows(2).position(|w| w == b"\r\n")? + 2;
    let number = || -> i64 {
        std::str::from_utf8(&buf[at + 1..line_end - 2])
            .unwrap()
            .parse()
            .unwrap()
    };
    match buf[at] {
        b'+' | b'-' | b':' => Some(line_end),
        b'$' => match number() {
            n if n < 0 => Some(line_end),
            n => {
                let end = line_end + n as usize + 2;
                (buf.len() >= end).then_some(end)
            }
        },
        b'*' => {
            let mut end = line_end;
            for _ in 0..number().max(0) {
                end = reply_end(buf, end)?;
            }
            Some(end)
        }
        other => panic!("unexpected reply type {:?}", other as char),
    }
}

/// Sends `requests` in one write and returns the bytes of their
/// `requests.len()` replies.
fn pipeline(conn: &mut TcpStream, requests: &[Vec<&str>]) -> Vec<u8> {
    let bytes: Vec<u8> = requests.iter().flat_map(|r| request(r)).collect();
    conn.write_all(&bytes).unwrap();
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let mut end = 0;
        let mut complete = 0;
        while complete < requests.len() {
            match reply_end(&buf, end) {
                Some(e) => {
                    end = e;
                    complete += 1;
                }
                None => break,
            }
        }
        if complete == requests.len() {
            assert_eq!(end, buf.len(), "more replies than requests");
            return buf;
        }
        let n = conn.read(&mut chunk).expect("the replies arrive");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Requests built as owned strings, borrowed as [`pipeline`] takes them.
fn borrowed(owned: &[Vec<String>]) -> Vec<Vec<&str>> {
    owned
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect()
}

fn raw(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// Mixed reads and writes on a few keys of every type, with errors
/// (WRONGTYPE, not an integer, unknown command, wrong arity) and
/// commands that cannot join a group (PING, MULTI/EXEC) in the middle.
fn mixed() -> Vec<Vec<&'static str>> {
    let text = "
        SET s 10 | INCR s | INCRBY s 5 | APPEND s x | INCR s | GET s | STRLEN s
        LPUSH s a | GETRANGE s 0 1 | SETRANGE s 1 yy | GET s
        LPUSH l a b c | LPOP l | RPUSH l d | LRANGE l 0 -1 | LLEN l | LINDEX l 0
        HSET l f v | INCR l | RPOPLPUSH l l2 | LRANGE l2 0 -1
        HSET h f1 v1 f2 v2 | HGET h f1 | HINCRBY h n 3 | HMGET h f1 f2 n x | HDEL h f2
        HLEN h | HEXISTS h f2 | HGET s f
        ZADD z 1 a 2 b | ZINCRBY z 5 a | ZRANGE z 0 -1 WITHSCORES | ZSCORE z a
        ZADD h 1 x | ZREM z b | ZCARD z | ZRANK z a
        SADD set a b c | SISMEMBER set b | SREM set b | SCARD set | SADD z m
        set r 1 | SET r 2 | SeT r 3 | get r | GET r | GeT | gEt r | INCR r | incr r | INCR
        incr r r | Incr r | get r r | GET r
        PING | NOSUCHCOMMAND x | GET | INCR s
        EXPIRE s 100 | TTL s | PERSIST s | TTL s | SET e v EX 100 | TTL e
        EXPIRE e -1 | EXISTS e | GET e | SET e w NX | GET e | SET e u XX GET
        MSET a 1 b 2 | MGET a b c | RENAME a c | GET c | GET a | INCR c
        MULTI | INCR c | LPUSH l e | EXEC | GET c | LLEN l
        DEL s l | EXISTS s l h | TYPE h | TYPE z | GETDEL h | GETDEL c | GET c
        LPOP l2 | LPOP l2 | LLEN l2 | DEL h z set e b l2 | DBSIZE";
    text.split('|')
        .map(|r| r.split_whitespace().collect::<Vec<_>>())
        .filter(|r| !r.is_empty())
        .collect()
}

#[test]
fn pipelines_of_mixed_commands_reply_as_redis_server_does() {
    let Some(redis) = RedisServer::start_or_skip("group commit: pipelines against redis-server")
    else {
        return;
    };
    let requests = mixed();
    let mut r = raw(redis.port());
    // Twice: on an empty keyspace, then again over what the first left.
    let expected = [pipeline(&mut r, &requests), pipeline(&mut r, &requests)];
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "always"]);
        let port: u16 = server.port().parse().unwrap();
        let mut c = raw(port);
        for (round, expected) in expected.iter().enumerate() {
            let got = pipeline(&mut c, &requests);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(expected),
                "{format}: round {round}: the pipeline's replies differ from redis-server's"
            );
        }
    }
}

#[test]
fn a_blocked_client_is_served_before_the_pipelines_next_command() {
    let Some(redis) = RedisServer::start_or_skip("group commit: BLPOP woken inside a pipeline")
    else {
        return;
    };
    let requests: Vec<Vec<&str>> = [
        "SET k 1",
        "LPUSH q a",
        "LPOP q",
        "INCR k",
        "RPUSH q b c",
        "LRANGE q 0 -1",
        "INCR k",
    ]
    .iter()
    .map(|r| r.split_whitespace().collect())
    .collect();
    let run = |port: u16| -> (Vec<u8>, Vec<u8>) {
        let mut blocked = raw(port);
        blocked.write_all(&request(&["BLPOP", "q", "0"])).unwrap();
        let mut watcher = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        wait_blocked(&mut watcher, 1);
        let mut c = raw(port);
        let replies = pipeline(&mut c, &requests);
        let mut woken = Vec::new();
        let mut chunk = [0u8; 1024];
        while reply_end(&woken, 0).is_none() {
            let n = blocked.read(&mut chunk).expect("BLPOP answers");
            assert!(n > 0, "the blocked client was disconnected");
            woken.extend_from_slice(&chunk[..n]);
        }
        (replies, woken)
    };
    let expected = run(redis.port());
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let got = run(server.port().parse().unwrap());
        assert_eq!(
            String::from_utf8_lossy(&got.0),
            String::from_utf8_lossy(&expected.0),
            "{format}: the pipeline's replies differ from redis-server's"
        );
        assert_eq!(
            String::from_utf8_lossy(&got.1),
            String::from_utf8_lossy(&expected.1),
            "{format}: BLPOP's reply differs from redis-server's"
        );
    }
}

/// Connections pipelining at once.
const CLIENTS: usize = 6;
/// Pipelines per connection.
const ROUNDS: usize = 40;
/// Requests per pipeline: INCR, INCRBY, LPUSH, HINCRBY and a read of
/// the connection's own key, repeated.
const DEPTH: usize = 8;

#[test]
fn concurrent_pipelines_on_shared_keys_end_exact() {
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let port: u16 = server.port().parse().unwrap();
        let threads: Vec<_> = (0..CLIENTS)
            .map(|t| {
                thread::spawn(move || {
                    let mut c = raw(port);
                    for round in 0..ROUNDS {
                        let mut owned: Vec<Vec<String>> = Vec::new();
                        for i in 0..DEPTH {
                            let n = round * DEPTH + i;
                            owned.push(vec!["INCR".into(), "counter".into()]);
                            owned.push(vec!["INCRBY".into(), "by3".into(), "3".into()]);
                            owned.push(vec!["LPUSH".into(), "list".into(), format!("{t}-{n}")]);
                            owned.push(vec![
                                "HINCRBY".into(),
                                "hash".into(),
                                "f".into(),
                                "1".into(),
                            ]);
                            owned.push(vec!["SET".into(), format!("own{t}"), n.to_string()]);
                            owned.push(vec!["GET".into(), format!("own{t}")]);
                        }
                        let requests = borrowed(&owned);
                        let replies = pipeline(&mut c, &requests);
                        // Each GET reads the SET just before it.
                        let text = String::from_utf8_lossy(&replies);
                        for i in 0..DEPTH {
                            let n = (round * DEPTH + i).to_string();
                            let own = format!("+OK\r\n${}\r\n{n}\r\n", n.len());
                            assert!(text.contains(&own), "client {t}: GET after SET {n}: {text}");
                        }
                        assert!(
                            !text.starts_with('-') && !text.contains("\r\n-"),
                            "client {t}: an error: {text}"
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("client thread");
        }
        let total = CLIENTS * ROUNDS * DEPTH;
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        let q = |c: &mut redis::Connection, args: &[&str]| -> redis::Value {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            cmd.query(c).unwrap()
        };
        let int = |v: redis::Value| -> i64 { redis::from_redis_value(v).unwrap() };
        assert_eq!(
            int(q(&mut c, &["GET", "counter"])),
            total as i64,
            "{format}"
        );
        assert_eq!(
            int(q(&mut c, &["GET", "by3"])),
            3 * total as i64,
            "{format}"
        );
        assert_eq!(
            int(q(&mut c, &["HGET", "hash", "f"])),
            total as i64,
            "{format}"
        );
        let list: Vec<String> =
            redis::from_redis_value(q(&mut c, &["LRANGE", "list", "0", "-1"])).unwrap();
        let unique: BTreeSet<&String> = list.iter().collect();
        assert_eq!(list.len(), total, "{format}: LPUSHed elements");
        assert_eq!(unique.len(), total, "{format}: an element pushed twice");
        // Each connection's elements in the order it pushed them.
        for t in 0..CLIENTS {
            let mine: Vec<usize> = list
                .iter()
                .rev()
                .filter_map(|e| e.strip_prefix(&format!("{t}-")))
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(
                mine,
                (0..ROUNDS * DEPTH).collect::<Vec<_>>(),
                "{format}: client {t}"
            );
        }
    }
}

/// Many connections pipelining scripts that read then write shared keys
/// (side by side in lanes, each holding its declared keys), some
/// reaching past them (run again holding the engine whole), beside
/// connections sending the same scripts one at a time (each a group of
/// one): no increment is lost or applied twice.
/// Connections sending scripts one at a time in the scripts' test.
const LONE_CLIENTS: usize = 2;
/// Rounds of scripts each of them sends.
const LONE_CALLS: usize = 120;

#[test]
fn concurrent_scripts_on_shared_keys_end_exact() {
    let get_set = "local v = tonumber(redis.call('GET', KEYS[1]) or '0') \
                   redis.call('SET', KEYS[1], v + 1) return v";
    let incr = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    let undeclared = "redis.call('INCR', KEYS[1]) return redis.call('INCR', 'undeclared')";
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let port: u16 = server.port().parse().unwrap();
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        let load = |c: &mut redis::Connection, body: &str| -> String {
            redis::cmd("SCRIPT").arg("LOAD").arg(body).query(c).unwrap()
        };
        let shas = [
            load(&mut c, get_set),
            load(&mut c, incr),
            load(&mut c, undeclared),
        ];
        let lone: Vec<_> = (0..LONE_CLIENTS)
            .map(|_| {
                let [get_set, incr, undeclared] = shas.clone();
                thread::spawn(move || {
                    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                        .unwrap()
                        .get_connection()
                        .unwrap();
                    let mut evalsha = |sha: &str, key: &str, arg: &str| -> i64 {
                        let cmd = redis::cmd("EVALSHA")
                            .arg(sha)
                            .arg(1)
                            .arg(key)
                            .arg(arg)
                            .clone();
                        cmd.query(&mut c).unwrap()
                    };
                    let mut last_read = -1;
                    for n in 0..LONE_CALLS {
                        let v = evalsha(&get_set, "gs", "-");
                        assert!(v > last_read, "a lone client read {v} after {last_read}");
                        last_read = v;
                        evalsha(&incr, "counter", "2");
                        if n % 4 == 0 {
                            evalsha(&undeclared, "counted", "-");
                        }
                    }
                })
            })
            .collect();
        let threads: Vec<_> = (0..CLIENTS)
            .map(|t| {
                let [get_set, incr, undeclared] = shas.clone();
                thread::spawn(move || {
                    let mut c = raw(port);
                    let mut last_read = -1i64;
                    for round in 0..ROUNDS {
                        let mut owned: Vec<Vec<String>> = Vec::new();
                        for i in 0..DEPTH {
                            let evalsha = |sha: &str, key: String, arg: &str| {
                                vec!["EVALSHA".into(), sha.into(), "1".into(), key, arg.into()]
                            };
                            owned.push(evalsha(&get_set, "gs".into(), "-"));
                            owned.push(evalsha(&incr, "counter".into(), "2"));
                            owned.push(evalsha(&incr, format!("own{t}"), "1"));
                            if (round + i) % 4 == 0 {
                                owned.push(evalsha(&undeclared, "counted".into(), "-"));
                            }
                        }
                        let requests = borrowed(&owned);
                        let replies = pipeline(&mut c, &requests);
                        let text = String::from_utf8_lossy(&replies);
                        assert!(!text.contains('-'), "client {t}: an error: {text}");
                        // The values get_set read, in this connection's order:
                        // increasing (other connections' increments between).
                        for (r, line) in requests.iter().zip(text.split("\r\n")) {
                            if r[1] == get_set {
                                let v: i64 = line.trim_start_matches(':').parse().unwrap();
                                assert!(v > last_read, "client {t}: read {v} after {last_read}");
                                last_read = v;
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads.into_iter().chain(lone) {
            t.join().expect("client thread");
        }
        let int = |c: &mut redis::Connection, key: &str| -> i64 {
            redis::cmd("GET").arg(key).query(c).unwrap()
        };
        let total = (CLIENTS * ROUNDS * DEPTH + LONE_CLIENTS * LONE_CALLS) as i64;
        let undeclared_runs = (0..ROUNDS)
            .flat_map(|round| (0..DEPTH).map(move |i| round + i))
            .filter(|n| n % 4 == 0)
            .count() as i64
            * CLIENTS as i64
            + (LONE_CLIENTS * LONE_CALLS.div_ceil(4)) as i64;
        assert_eq!(int(&mut c, "gs"), total, "{format}: read-then-write");
        assert_eq!(int(&mut c, "counter"), 2 * total, "{format}: INCRBY");
        assert_eq!(int(&mut c, "counted"), undeclared_runs, "{format}");
        assert_eq!(int(&mut c, "undeclared"), undeclared_runs, "{format}");
        for t in 0..CLIENTS {
            let own = int(&mut c, &format!("own{t}"));
            assert_eq!(own, (ROUNDS * DEPTH) as i64, "{format}: client {t}");
        }
    }
}

#[test]
fn pipelined_scripts_reply_as_redis_server_does() {
    let Some(redis) =
        RedisServer::start_or_skip("group commit: pipelined scripts against redis-server")
    else {
        return;
    };
    let set_get = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])";
    let incr = "return redis.call('INCR', KEYS[1])";
    let push = "return redis.call('LPUSH', KEYS[1], ARGV[1])";
    let ppush = "return redis.pcall('LPUSH', KEYS[1], ARGV[1])";
    let del = "redis.call('DEL', KEYS[1]) return redis.call('EXISTS', KEYS[1])";
    let undeclared = "redis.call('INCR', KEYS[1]) return redis.call('INCR', 'other')";
    let caught = "redis.call('INCR', KEYS[1]) local r = redis.pcall('GET', 'other') \
                  return {redis.call('GET', KEYS[1]), r}";
    let keys = "local k = redis.call('KEYS', '*') table.sort(k) return k";
    let dbsize = "redis.call('INCR', KEYS[1]) return redis.call('DBSIZE')";
    let long = "local x = 0 for i = 1, 3000000 do x = x + i end \
                return {redis.call('INCR', KEYS[1]), x}";
    let incr_sha = "61636018f4e6b5817b89791bbed242f93fa089e3";
    let requests: Vec<Vec<&str>> = vec![
        vec!["EVAL", set_get, "1", "k", "v1"],
        vec!["EVAL", incr, "1", "n"],
        vec!["EVAL", incr, "1", "n"],
        vec!["EVAL", push, "1", "k", "x"],
        vec!["EVAL", ppush, "1", "k", "x"],
        vec!["EVAL", incr, "1", "n"],
        vec!["INCR", "n"],
        vec!["GET", "k"],
        vec!["EVAL", del, "1", "k"],
        vec!["EVAL", "return redis.call('GET', KEYS[1])", "1", "n"],
        vec!["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
        vec!["EVAL", "return {1, 2, 'x', false}", "0"],
        vec!["EVAL", incr, "-1", "n"],
        vec!["FCALL", "nosuch", "0"],
        vec!["EVAL", push, "1", "l", "a"],
        vec!["EVAL", push, "1", "l", "b"],
        vec!["LRANGE", "l", "0", "-1"],
        vec!["DEL", "l", "n"],
        // Scripts that reach past the keys they declared, in groups that
        // wrote before them: each group runs again holding the engine
        // whole, and replies once.
        vec!["EVAL", incr, "1", "n"],
        vec!["EVAL", undeclared, "1", "n"],
        vec!["EVAL", incr, "1", "n"],
        vec!["EVAL", incr, "1", "m"],
        vec!["EVAL", caught, "1", "m"],
        vec!["EVAL", keys, "0"],
        vec!["EVAL", incr, "1", "m"],
        vec!["EVAL", dbsize, "1", "m"],
        vec!["EVAL", incr, "1", "m"],
        vec!["EVAL", long, "1", "m"],
        vec!["MGET", "n", "m", "other"],
        // Marked as reaching past its keys: skips the lanes.
        vec!["EVAL", incr, "1", "n"],
        vec!["EVAL", undeclared, "1", "n"],
        vec!["EVAL", undeclared, "1", "m"],
        vec!["MGET", "n", "m", "other"],
        vec!["SCRIPT", "LOAD", incr],
        vec!["EVALSHA", incr_sha, "1", "n"],
        vec!["SCRIPT", "FLUSH"],
        vec!["EVALSHA", incr_sha, "1", "n"],
        vec!["EVALSHA", incr_sha, "1", "n"],
        vec!["EVAL", incr, "1", "n"],
        vec!["EVALSHA", incr_sha, "1", "n"],
        vec!["DEL", "n", "m", "other"],
    ];
    let expected = pipeline(&mut raw(redis.port()), &requests);
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "always"]);
        let got = pipeline(&mut raw(server.port().parse().unwrap()), &requests);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{format}: the scripts' replies differ from redis-server's"
        );
    }
}

/// A field of INFO `section` on `c`.
fn info_field(c: &mut redis::Connection, section: &str, name: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg(section).query(c).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(str::to_string)
}

/// Waits (120 s at most) until the replica has applied the master's
/// whole stream.
fn wait_caught_up(master: &mut redis::Connection, replica: &mut redis::Connection, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let m = info_field(master, "replication", "master_repl_offset");
        let up = info_field(replica, "replication", "master_link_status");
        let r = info_field(replica, "replication", "master_repl_offset");
        if up.as_deref() == Some("up") && m.is_some() && m == r {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: the replica never caught up: master {m:?}, replica {r:?}, link {up:?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_redis_server_replica_follows_pipelined_groups() {
    let incr = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    let push = "redis.call('RPUSH', KEYS[1], ARGV[1]) return redis.call('LPOP', KEYS[2])";
    let undeclared = "redis.call('INCR', KEYS[1]) return redis.call('INCR', 'shared:u')";
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        let port: u16 = server.port().parse().unwrap();
        let rdir = tempfile::tempdir().unwrap();
        let Some(replica) = RedisServer::start_with_or_skip(
            "group commit: a redis-server replica follows pipelined groups",
            Some(rdir.path()),
            &["--replicaof", "127.0.0.1", &server.port()],
        ) else {
            return;
        };
        let connect = |port: u16| {
            redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                .unwrap()
                .get_connection()
                .unwrap()
        };
        let mut r = connect(replica.port());
        let mut m = connect(port);
        wait_caught_up(&mut m, &mut r, format);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                thread::spawn(move || {
                    let mut c = raw(port);
                    for round in 0..30 {
                        let (p, n) = (format!("c{t}"), round.to_string());
                        let own = |k: &str| format!("{p}:{k}");
                        let owned: Vec<Vec<String>> = vec![
                            vec!["INCR".into(), "shared:n".into()],
                            vec!["INCRBYFLOAT".into(), "shared:f".into(), "0.5".into()],
                            vec!["RPUSH".into(), "shared:l".into(), format!("{p}-{n}")],
                            vec!["LPOP".into(), "shared:l".into()],
                            vec!["SADD".into(), "shared:s".into(), n.clone(), p.clone()],
                            vec!["SPOP".into(), "shared:s".into()],
                            vec!["HINCRBY".into(), "shared:h".into(), p.clone(), "2".into()],
                            vec!["ZADD".into(), "shared:z".into(), n.clone(), p.clone()],
                            vec![
                                "SET".into(),
                                own("s"),
                                n.clone(),
                                "EX".into(),
                                "1000".into(),
                            ],
                            vec!["EXPIRE".into(), own("s"), "2000".into()],
                            vec!["SET".into(), own("gone"), "x".into()],
                            vec!["EXPIRE".into(), own("gone"), "-1".into()],
                            vec!["APPEND".into(), own("a"), n.clone()],
                            vec!["GET".into(), "shared:n".into()],
                            vec![
                                "EVAL".into(),
                                incr.into(),
                                "1".into(),
                                "shared:n".into(),
                                "10".into(),
                            ],
                            vec![
                                "EVAL".into(),
                                push.into(),
                                "2".into(),
                                "shared:l".into(),
                                "shared:l".into(),
                                p.clone(),
                            ],
                            vec!["EVAL".into(), incr.into(), "1".into(), own("n"), n.clone()],
                            vec!["EVAL".into(), undeclared.into(), "1".into(), own("u")],
                            vec!["SET".into(), "shared:last".into(), p.clone()],
                            vec!["DEL".into(), own("tmp")],
                        ];
                        let requests = borrowed(&owned);
                        pipeline(&mut c, &requests);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("client thread");
        }
        wait_caught_up(&mut m, &mut r, format);
        assert_same_keys(&mut m, &mut r, &format!("{format}: after pipelined groups"));
        let n: i64 = redis::cmd("GET").arg("shared:n").query(&mut r).unwrap();
        assert_eq!(n, 4 * 30 * 11, "{format}: the replica's counter");
        let u: i64 = redis::cmd("GET").arg("shared:u").query(&mut r).unwrap();
        assert_eq!(u, 4 * 30, "{format}: the replica's undeclared counter");
    }
}

/// Rounds of SIGKILL per format in the crash test.
const KILLS: usize = 3;

#[test]
fn sigkill_under_sync_always_loses_no_acknowledged_pipelined_write() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    for format in formats() {
        let (_tmp, dir) = store_dir();
        for round in 0..KILLS {
            let server = Serve::start(format, &dir, &["--sync", "always"]);
            let port: u16 = server.port().parse().unwrap();
            // Pipelines of 16: SET r{round}:{n} n, and RPUSH of n to one
            // list; `acked` counts the pipelines whose replies all came.
            let acked = Arc::new(AtomicUsize::new(0));
            let writer = {
                let acked = acked.clone();
                thread::spawn(move || {
                    let mut c = raw(port);
                    for batch in 0.. {
                        let owned: Vec<Vec<String>> = (0..8)
                            .flat_map(|i| {
                                let n = (batch * 8 + i).to_string();
                                [
                                    vec!["SET".into(), format!("r{round}:{n}"), n.clone()],
                                    vec!["RPUSH".into(), format!("r{round}:list"), n],
                                ]
                            })
                            .collect();
                        let requests = borrowed(&owned);
                        let bytes: Vec<u8> = requests.iter().flat_map(|r| request(r)).collect();
                        if c.write_all(&bytes).is_err() {
                            return;
                        }
                        let mut buf = Vec::new();
                        let mut chunk = [0u8; 4096];
                        let mut end = 0;
                        let mut complete = 0;
                        while complete < requests.len() {
                            match reply_end(&buf, end) {
                                Some(e) => {
                                    end = e;
                                    complete += 1;
                                }
                                None => match c.read(&mut chunk) {
                                    Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                                    _ => return,
                                },
                            }
                        }
                        assert!(!buf.contains(&b'-'), "an error reply: {buf:?}");
                        acked.store(batch + 1, Ordering::SeqCst);
                    }
                })
            };
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while acked.load(Ordering::SeqCst) < 20 + round * 15 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{format}: the writer never got 20 pipelines acknowledged"
                );
                thread::sleep(Duration::from_millis(5));
            }
            server.signal("KILL");
            writer.join().expect("writer");
            let acked = acked.load(Ordering::SeqCst) * 8;
            let server = Serve::start(format, &dir, &["--sync", "always"]);
            let mut c = server.conn();
            for n in 0..acked {
                let got: Option<String> = redis::cmd("GET")
                    .arg(format!("r{round}:{n}"))
                    .query(&mut c)
                    .unwrap();
                assert_eq!(
                    got,
                    Some(n.to_string()),
                    "{format}: round {round}: an acknowledged SET lost"
                );
            }
            let list: Vec<String> = redis::cmd("LRANGE")
                .arg(format!("r{round}:list"))
                .arg(0)
                .arg(-1)
                .query(&mut c)
                .unwrap();
            assert!(
                list.len() >= acked,
                "{format}: round {round}: acknowledged RPUSHes lost"
            );
            for (i, v) in list.iter().enumerate() {
                assert_eq!(
                    *v,
                    i.to_string(),
                    "{format}: round {round}: the list out of order"
                );
            }
            drop(server);
        }
    }
}
