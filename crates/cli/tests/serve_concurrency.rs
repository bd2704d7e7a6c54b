//! Many clients over few keys on `redcodec serve`, on every format, with
//! fixed operation counts: the end state and every reply are checked
//! against a serial model (exact counter totals, every list element popped
//! once, set members popped once, set replies, MULTI/EXEC blocks seen whole, a client reading its own
//! writes, blocking pops woken once per element). `STRESS_SCALE=N`
//! multiplies every count (`scripts/stress` runs it longer).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use redis::Commands;

mod serve_support;
use serve_support::{connect, formats, store_dir, wait_blocked, Serve};

/// Concurrent clients per test.
const CLIENTS: usize = 8;

/// The multiplier of every operation count (`STRESS_SCALE`, default 1).
fn scale() -> usize {
    std::env::var("STRESS_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// Runs `body(client index, connection)` on `CLIENTS` threads at once
/// and collects what each returns.
fn clients<T: Send + 'static>(
    server: &Serve,
    n: usize,
    body: impl Fn(usize, &mut redis::Connection) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let mut c = server.conn();
            let body = Arc::clone(&body);
            thread::spawn(move || body(t, &mut c))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .collect()
}

fn start(format: &str) -> (tempfile::TempDir, Serve) {
    let (tmp, dir) = store_dir();
    let server = Serve::start(format, &dir, &["--sync", "no"]);
    (tmp, server)
}

/// Asserts that `got` holds every element the pushers wrote (`p{t}-{i}`
/// for `pushers` pushers of `per_pusher` each), each once (`got_how`:
/// "popped", "delivered"); returns how many they wrote.
fn assert_each_once(
    format: &str,
    got: &[String],
    pushers: usize,
    per_pusher: usize,
    got_how: &str,
) -> usize {
    let pushed: BTreeSet<String> = (0..pushers)
        .flat_map(|t| (0..per_pusher).map(move |i| format!("p{t}-{i}")))
        .collect();
    let unique: BTreeSet<String> = got.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        got.len(),
        "{format}: an element {got_how} twice"
    );
    assert_eq!(unique, pushed, "{format}: {got_how} differs from pushed");
    pushed.len()
}

/// Runs `test` against a server on a store of every format, and prints
/// the summary line it returns.
fn on_every_format(test: impl Fn(&str, &Serve) -> String) {
    for format in formats() {
        let (_tmp, server) = start(format);
        println!("{}", test(format, &server));
    }
}

#[test]
fn counters_total_exactly() {
    let ops = 150 * scale();
    on_every_format(|format, server| {
        clients(server, CLIENTS, move |t, c| {
            for i in 0..ops {
                let key = format!("c{}", (t + i) % 2);
                let _: i64 = c.incr(&key, 1).unwrap();
                let _: i64 = c.hincr("h", format!("f{}", i % 3), 2).unwrap();
                let _: f64 = c.zincr("z", format!("m{}", i % 2), 3).unwrap();
                let _: i64 = redis::cmd("INCRBY").arg("c2").arg(-1).query(c).unwrap();
            }
        });
        let mut c = server.conn();
        let total = i64::try_from(CLIENTS * ops).unwrap();
        let c0: i64 = c.get("c0").unwrap();
        let c1: i64 = c.get("c1").unwrap();
        let c2: i64 = c.get("c2").unwrap();
        assert_eq!(c0 + c1, total, "{format}: INCR lost or doubled an update");
        assert_eq!(c2, -total, "{format}: INCRBY");
        let h: BTreeMap<String, i64> = c.hgetall("h").unwrap();
        assert_eq!(
            h.values().sum::<i64>(),
            2 * total,
            "{format}: HINCRBY {h:?}"
        );
        let z: Vec<(String, f64)> = c.zrange_withscores("z", 0, -1).unwrap();
        let zsum: f64 = z.iter().map(|(_, s)| s).sum();
        #[allow(clippy::cast_precision_loss)]
        let want = (3 * total) as f64;
        assert!(
            (zsum - want).abs() < f64::EPSILON,
            "{format}: ZINCRBY {z:?}"
        );
        format!(
            "{format}: {} counter commands by {CLIENTS} clients, totals exact",
            4 * CLIENTS * ops
        )
    });
}

#[test]
fn list_pushes_are_popped_exactly_once() {
    let per_pusher = 200 * scale();
    let pushers = CLIENTS / 2;
    on_every_format(|format, server| {
        let done = Arc::new(AtomicBool::new(false));
        let popped = {
            let flag = Arc::clone(&done);
            let server_addr = server.url("");
            let poppers = thread::spawn(move || {
                let server_addr = Arc::new(server_addr);
                let handles: Vec<_> = (0..CLIENTS - pushers)
                    .map(|t| {
                        let done = Arc::clone(&flag);
                        let url = Arc::clone(&server_addr);
                        thread::spawn(move || {
                            let mut c = connect(&url);
                            let mut got = Vec::new();
                            loop {
                                // Read the flag before popping: an empty
                                // list after the pushers finished is empty
                                // for good.
                                let finished = done.load(Ordering::SeqCst);
                                let v: Option<Vec<String>> = if t % 2 == 0 {
                                    redis::cmd("LPOP").arg("l").arg(3).query(&mut c).unwrap()
                                } else {
                                    redis::cmd("RPOP").arg("l").arg(2).query(&mut c).unwrap()
                                };
                                match v {
                                    Some(v) if !v.is_empty() => got.extend(v),
                                    _ if finished => return got,
                                    _ => thread::yield_now(),
                                }
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().expect("popper"))
                    .collect::<Vec<_>>()
            });
            clients(server, pushers, move |t, c| {
                for i in (0..per_pusher).step_by(2) {
                    let a = format!("p{t}-{i}");
                    let b = format!("p{t}-{}", i + 1);
                    if i % 4 == 0 {
                        let _: i64 = c.rpush("l", &[a, b]).unwrap();
                    } else {
                        let _: i64 = c.lpush("l", &[a, b]).unwrap();
                    }
                }
            });
            done.store(true, Ordering::SeqCst);
            poppers.join().expect("poppers")
        };
        let mut c = server.conn();
        let left: i64 = c.llen("l").unwrap();
        assert_eq!(left, 0, "{format}: elements left behind");
        let pushed = assert_each_once(format, &popped, pushers, per_pusher, "popped");
        format!("{format}: {pushed} elements pushed and popped once each by {CLIENTS} clients")
    });
}

#[test]
fn set_replies_and_members_match_a_serial_model() {
    let ops = 200 * scale();
    on_every_format(|format, server| {
        // Each client owns its members of two shared sets, so every reply
        // is predictable from its own serial model.
        let models = clients(server, CLIENTS, move |t, c| {
            let mut model: [BTreeSet<String>; 2] = Default::default();
            let mut x: u64 = 0x9e37_79b9 + t as u64;
            for _ in 0..ops {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let set = usize::from(x >> 63 == 1);
                let member = format!("t{t}-m{}", (x >> 33) % 16);
                let key = format!("s{set}");
                if (x >> 40).is_multiple_of(3) {
                    let n: i64 = c.srem(&key, &member).unwrap();
                    assert_eq!(n == 1, model[set].remove(&member), "{key} SREM {member}");
                } else {
                    let n: i64 = c.sadd(&key, &member).unwrap();
                    assert_eq!(n == 1, model[set].insert(member.clone()), "{key} SADD");
                }
                let is: bool = c.sismember(&key, &member).unwrap();
                assert_eq!(is, model[set].contains(&member), "{key} read after write");
            }
            model
        });
        let mut c = server.conn();
        for set in 0..2 {
            let want: BTreeSet<String> = models.iter().flat_map(|m| m[set].clone()).collect();
            let key = format!("s{set}");
            let got: BTreeSet<String> = c.smembers(&key).unwrap();
            assert_eq!(got, want, "{format}: {key}");
            let card: usize = c.scard(&key).unwrap();
            assert_eq!(card, want.len(), "{format}: SCARD of {key}");
        }
        format!(
            "{format}: {} SADD/SREM by {CLIENTS} clients match the serial model",
            CLIENTS * ops
        )
    });
}

#[test]
fn set_members_are_popped_exactly_once() {
    let members = 100 * scale();
    on_every_format(|format, server| {
        let mut c = server.conn();
        // Integers of every width Redis' intset test uses, and words.
        let all: BTreeSet<String> = (0..members)
            .map(|i| match i % 3 {
                0 => i.to_string(),
                1 => (u64::MAX - i as u64).to_string(),
                _ => format!("m{i}"),
            })
            .collect();
        for round in 0..3 {
            let _: () = redis::cmd("DEL").arg("s").query(&mut c).unwrap();
            let _: () = redis::cmd("SADD").arg("s").arg(&all).query(&mut c).unwrap();
            // Half the clients pop one at a time, half three at a time.
            let popped = clients(server, CLIENTS, move |t, c| {
                let mut got = Vec::new();
                loop {
                    let batch: Vec<String> = if t % 2 == 0 {
                        let one: Option<String> = c.spop("s").unwrap();
                        one.into_iter().collect()
                    } else {
                        redis::cmd("SPOP").arg("s").arg(3).query(c).unwrap()
                    };
                    if batch.is_empty() {
                        return got;
                    }
                    got.extend(batch);
                }
            });
            let mut seen = BTreeSet::new();
            for m in popped.into_iter().flatten() {
                assert!(
                    all.contains(&m),
                    "{format} round {round}: popped {m}, never added"
                );
                assert!(
                    seen.insert(m.clone()),
                    "{format} round {round}: {m} popped twice"
                );
            }
            assert_eq!(seen, all, "{format} round {round}: every member popped");
            let card: i64 = c.scard("s").unwrap();
            assert_eq!(card, 0, "{format} round {round}");
        }
        format!("{format}: 3 x {members} members popped once each by {CLIENTS} clients")
    });
}

#[test]
fn multi_exec_blocks_are_seen_whole() {
    let blocks = 60 * scale();
    on_every_format(|format, server| {
        clients(server, CLIENTS, move |_, c| {
            for _ in 0..blocks {
                let (a, b, l): (i64, i64, i64) = redis::pipe()
                    .atomic()
                    .incr("a", 1)
                    .incr("b", 1)
                    .rpush("order", "x")
                    .query(c)
                    .unwrap();
                assert_eq!(a, b, "another command ran inside EXEC");
                assert_eq!(a, l, "another command ran inside EXEC");
            }
        });
        let mut c = server.conn();
        let a: usize = c.get("a").unwrap();
        let b: usize = c.get("b").unwrap();
        let l: usize = c.llen("order").unwrap();
        assert_eq!(
            (a, b, l),
            (CLIENTS * blocks, CLIENTS * blocks, CLIENTS * blocks),
            "{format}"
        );
        format!(
            "{format}: {} EXEC blocks by {CLIENTS} clients, none split",
            CLIENTS * blocks
        )
    });
}

#[test]
fn each_client_reads_its_own_writes() {
    let ops = 200 * scale();
    on_every_format(|format, server| {
        clients(server, CLIENTS, move |t, c| {
            let mine = format!("own{t}");
            let shared = format!("k{}", t % 2);
            let mut last_seen: BTreeMap<usize, usize> = BTreeMap::new();
            for i in 0..ops {
                // A key only this client writes reads back exactly.
                let _: () = c.set(&mine, i).unwrap();
                let v: usize = c.get(&mine).unwrap();
                assert_eq!(v, i, "{mine}");
                let _: () = c.hset("h", format!("f{t}"), i).unwrap();
                let v: usize = c.hget("h", format!("f{t}")).unwrap();
                assert_eq!(v, i, "field of client {t}");
                // A key all clients write: its own write or a later one by
                // another client, and no client's sequence goes back.
                let _: () = c.set(&shared, format!("{t}:{i}")).unwrap();
                let v: String = c.get(&shared).unwrap();
                let (w, j) = v.split_once(':').expect("value shape");
                let (w, j): (usize, usize) = (w.parse().unwrap(), j.parse().unwrap());
                assert!(w != t || j == i, "{shared}: own older write {v} after {i}");
                let prev = last_seen.insert(w, j).unwrap_or(0);
                assert!(
                    j >= prev,
                    "{shared}: client {w} went back from {prev} to {j}"
                );
            }
        });
        format!(
            "{format}: {} writes each read back by {CLIENTS} clients",
            3 * CLIENTS * ops
        )
    });
}

#[test]
fn blocking_pops_are_woken_once_per_element() {
    let per_pusher = 100 * scale();
    let consumers = CLIENTS / 2;
    let pushers = CLIENTS - consumers;
    on_every_format(|format, server| {
        let url = server.url("");
        let handles: Vec<_> = (0..consumers)
            .map(|_| {
                let url = url.clone();
                thread::spawn(move || {
                    let mut c = connect(&url);
                    let mut got = Vec::new();
                    loop {
                        // A generous upper bound, never reached when
                        // every element wakes one consumer.
                        let v: Option<(String, String)> = c.blpop(&["q1", "q2"], 120.0).unwrap();
                        let (_, v) = v.expect("an element was never delivered");
                        if v == "stop" {
                            return got;
                        }
                        got.push(v);
                    }
                })
            })
            .collect();
        let mut admin = server.conn();
        wait_blocked(&mut admin, consumers);
        clients(server, pushers, move |t, c| {
            for i in (0..per_pusher).step_by(2) {
                let key = if i % 4 == 0 { "q1" } else { "q2" };
                let a = format!("p{t}-{i}");
                let b = format!("p{t}-{}", i + 1);
                let _: i64 = c.rpush(key, &[a, b]).unwrap();
            }
        });
        // One stop per consumer: each stops at its first.
        for _ in 0..consumers {
            let _: i64 = admin.rpush("q2", "stop").unwrap();
        }
        let popped: Vec<String> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("consumer"))
            .collect();
        let pushed = assert_each_once(format, &popped, pushers, per_pusher, "delivered");
        let left: i64 = admin.exists(&["q1", "q2"]).unwrap();
        assert_eq!(left, 0, "{format}: elements left behind");
        format!("{format}: {pushed} elements to {consumers} blocked consumers, each delivered once")
    });
}
