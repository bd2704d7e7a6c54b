//! Comparing two servers key by key (type, value, expiry within a
//! second) while one follows the other, and writes of every type with
//! TTLs to keep a master busy: for the replication tests beside a real
//! Kvrocks or Pika.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::path::Path;

use crate::serve_support::{connect, Serve};

/// How long convergence may take on a busy machine.
pub const BOUND: Duration = Duration::from_secs(180);

pub fn q<T: redis::FromRedisValue>(c: &mut redis::Connection, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
        .unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

/// A key's value in an order-free form.
#[derive(Debug, PartialEq, Clone)]
pub enum V {
    S(Vec<u8>),
    H(BTreeMap<Vec<u8>, Vec<u8>>),
    L(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    Z(Vec<(Vec<u8>, String)>),
    Other(String),
}

/// How a server's expiries are read.
#[derive(Clone, Copy, Debug)]
pub enum Expiry {
    /// PEXPIRETIME, the absolute time (Redis 7, Kvrocks, redcodec).
    At,
    /// PTTL, the time left (Pika has no PEXPIRETIME).
    Left,
}

/// Every key: its value and PEXPIRETIME (`None`: none).
pub fn contents(c: &mut redis::Connection) -> BTreeMap<Vec<u8>, (V, Option<i64>)> {
    contents_by(c, Expiry::At)
}

/// Every key: its value and its expiry read as `expiry` says (`None`:
/// none); a key that expired meanwhile is left out.
pub fn contents_by(
    c: &mut redis::Connection,
    expiry: Expiry,
) -> BTreeMap<Vec<u8>, (V, Option<i64>)> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    let mut out = BTreeMap::new();
    for key in keys {
        let t: String = redis::cmd("TYPE").arg(&key).query(c).unwrap();
        let v = match t.as_str() {
            "none" => continue,
            "string" => V::S(redis::cmd("GET").arg(&key).query(c).unwrap()),
            "hash" => V::H(redis::cmd("HGETALL").arg(&key).query(c).unwrap()),
            "list" => V::L(
                redis::cmd("LRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .query(c)
                    .unwrap(),
            ),
            "set" => {
                let mut m: Vec<Vec<u8>> = redis::cmd("SMEMBERS").arg(&key).query(c).unwrap();
                m.sort();
                V::Set(m)
            }
            "zset" => V::Z(
                redis::cmd("ZRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query(c)
                    .unwrap(),
            ),
            other => V::Other(other.to_string()),
        };
        let command = match expiry {
            Expiry::At => "PEXPIRETIME",
            Expiry::Left => "PTTL",
        };
        let ms: i64 = redis::cmd(command).arg(&key).query(c).unwrap();
        if ms == -2 {
            continue;
        }
        out.insert(key, (v, (ms >= 0).then_some(ms)));
    }
    out
}

/// Writes of every type, some with TTLs; round `i` touches keys of
/// generation `i % 50`.
pub fn write_round(c: &mut redis::Connection, i: u64) {
    let g = i % 50;
    let s = format!("s:{g}");
    let h = format!("h:{g}");
    let l = format!("l:{g}");
    let st = format!("set:{g}");
    let z = format!("z:{g}");
    let n = i.to_string();
    let _: () = q(c, &["SET", &s, &format!("v {i}")]);
    let _: i64 = q(c, &["HSET", &h, &format!("f{}", i % 7), &n, "fixed", "x y"]);
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
            let _: i64 = q(c, &["PEXPIRE", &s, "300"]);
        }
        5 => {
            let _: i64 = q(c, &["PERSIST", &h]);
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
            let _: Option<Vec<u8>> = q(
                c,
                &["LMOVE", &l, &format!("l:{}", (g + 1) % 50), "LEFT", "RIGHT"],
            );
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
            let _: i64 = q(c, &["SUNIONSTORE", &format!("u:{g}"), &st, "set:0"]);
        }
    }
}

/// Rounds of writes (`round(c, i)` for i = `first`, `first + 1`, …) on a
/// connection of their own, until stopped: a master kept busy while a
/// replica copies and follows it.
pub struct Writer {
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts writing to the server at `url`.
    pub fn start(url: String, first: u64, round: fn(&mut redis::Connection, u64)) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(first));
        let thread = {
            let (stop, rounds) = (stop.clone(), rounds.clone());
            std::thread::spawn(move || {
                let mut c = connect(&url);
                while !stop.load(Ordering::SeqCst) {
                    let i = rounds.fetch_add(1, Ordering::SeqCst);
                    round(&mut c, i);
                }
            })
        };
        Writer {
            stop,
            rounds,
            thread: Some(thread),
        }
    }

    /// Waits for `n` more rounds.
    pub fn more(&self, n: u64) {
        let from = self.rounds.load(Ordering::SeqCst);
        while self.rounds.load(Ordering::SeqCst) < from + n {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops; returns the next round.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        self.rounds.load(Ordering::SeqCst)
    }
}

/// Polls the replica `r` until its link to the master is up.
pub fn wait_link_up(r: &mut redis::Connection, what: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        let rep = info(r, "replication");
        if field(&rep, "master_link_status").as_deref() == Some("up") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the link never came up: {rep}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `redcodec serve --format <format>` in `dir` as a replica of the
/// master on `port` (at `url`) while [`write_round`]-like rounds from
/// `first` on keep the master busy; returns once its link is up and 300
/// more rounds went through the stream, the writes stopped.
pub fn follow_while_writing(
    url: String,
    port: u16,
    format: &str,
    dir: &Path,
    first: u64,
    round: fn(&mut redis::Connection, u64),
) -> Serve {
    let writer = Writer::start(url, first, round);
    let addr = format!("127.0.0.1:{port}");
    let serve = Serve::start(format, dir, &["--replicaof", &addr]);
    wait_link_up(&mut serve.conn(), format);
    writer.more(300);
    writer.stop();
    serve
}

/// Asserts that `r` is a replica of the master on `port` and refuses
/// writes as Redis' replicas do.
pub fn assert_read_only_replica(r: &mut redis::Connection, port: u16) {
    let rep = info(r, "replication");
    assert_eq!(field(&rep, "role").as_deref(), Some("slave"), "{rep}");
    assert_eq!(field(&rep, "master_port"), Some(port.to_string()), "{rep}");
    let err = redis::cmd("SET")
        .arg("w")
        .arg("1")
        .query::<()>(r)
        .unwrap_err();
    assert_eq!(err.code(), Some("READONLY"), "{err}");
}

pub fn info(c: &mut redis::Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(c).unwrap()
}

pub fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

/// Polls until master and replica hold the same keys, values and expiries
/// (within a second: [`same`]).
pub fn wait_equal(m: &mut redis::Connection, r: &mut redis::Connection, what: &str) {
    wait_equal_by(m, r, what, Expiry::At, SAME_EXPIRY_MS);
}

/// [`wait_equal`] with expiries read as `expiry` says and equal within
/// `slack_ms`.
pub fn wait_equal_by(
    m: &mut redis::Connection,
    r: &mut redis::Connection,
    what: &str,
    expiry: Expiry,
    slack_ms: i64,
) {
    let deadline = Instant::now() + BOUND;
    loop {
        let want = contents_by(m, expiry);
        let got = contents_by(r, expiry);
        if same_within(&want, &got, slack_ms) {
            return;
        }
        if Instant::now() > deadline {
            let missing: Vec<_> = want
                .iter()
                .filter(|(k, v)| got.get(*k) != Some(v))
                .take(5)
                .collect();
            let extra: Vec<_> = got
                .iter()
                .filter(|(k, v)| want.get(*k) != Some(v))
                .take(5)
                .collect();
            panic!(
                "{what}: the replica never matched the master ({} vs {} keys); master has {missing:?}; replica has {extra:?}; replica INFO: {}",
                want.len(),
                got.len(),
                info(r, "replication")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Expiries this close are the same (ms): they went through two clocks.
pub const SAME_EXPIRY_MS: i64 = 999;

/// Same keys and values, expiries within [`SAME_EXPIRY_MS`].
pub fn same(
    a: &BTreeMap<Vec<u8>, (V, Option<i64>)>,
    b: &BTreeMap<Vec<u8>, (V, Option<i64>)>,
) -> bool {
    same_within(a, b, SAME_EXPIRY_MS)
}

/// Same keys and values, expiries within `slack_ms`.
pub fn same_within(
    a: &BTreeMap<Vec<u8>, (V, Option<i64>)>,
    b: &BTreeMap<Vec<u8>, (V, Option<i64>)>,
    slack_ms: i64,
) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, (va, ea)), (kb, (vb, eb)))| {
            ka == kb
                && va == vb
                && match (ea, eb) {
                    (None, None) => true,
                    (Some(x), Some(y)) => (x - y).abs() <= slack_ms,
                    _ => false,
                }
        })
}
