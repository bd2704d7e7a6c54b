//! Crash safety of `redcodec serve` on every format: a client drives a
//! seeded mix of acknowledged writes (SET, HSET, RPUSH, SADD, ZADD, DEL of
//! several keys of several types, EXPIRE; SET over keys of every other
//! type), the server is killed with SIGKILL while it works, restarted, and
//! the whole key space is compared with a model of the acknowledged
//! commands; `redcodec check` must then find nothing.
//!
//! - `--sync always`: the store equals the model, with or without the one
//!   command in flight at the kill (exactly that command, whole).
//! - `--sync everysec`: the store equals the model after some prefix of the
//!   acknowledged commands (a kill may lose the unsynced tail, never a
//!   command in the middle nor half a command), and is consistent.
//!
//! `CRASH_KILLS=N` sets the kills per format (default 5; `scripts/crash`
//! runs 50).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
mod serve_support;
use common::command;
use serve_support::{formats, store_dir, Serve};

/// One key's value in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    Str(String),
    Hash(BTreeMap<String, String>),
    List(Vec<String>),
    Set(BTreeSet<String>),
    ZSet(BTreeMap<String, i64>),
}

/// Every key's value and whether it has an expiry.
type Model = BTreeMap<String, (Val, bool)>;

/// A write the client sends.
#[derive(Clone, Debug)]
enum Cmd {
    Set(String, String),
    HSet(String, String, String),
    RPush(String, String, String),
    SAdd(String, String),
    ZAdd(String, i64, String),
    Del(Vec<String>),
    Expire(String),
}

/// A small seeded generator (64-bit LCG, high bits).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

const KEYS: u64 = 10;

fn key(rng: &mut Rng) -> String {
    format!("k{}", rng.next(KEYS))
}

/// The next command: a seeded mix, often switching a key's type.
fn generate(rng: &mut Rng, model: &Model, serial: u64) -> Cmd {
    let k = key(rng);
    match rng.next(100) {
        0..=14 => Cmd::Set(k, format!("v{serial}")),
        15..=29 => Cmd::HSet(k, format!("f{}", rng.next(5)), format!("h{serial}")),
        30..=44 => Cmd::RPush(k, format!("a{serial}"), format!("b{serial}")),
        45..=56 => Cmd::SAdd(k, format!("m{}", rng.next(6))),
        57..=68 => Cmd::ZAdd(
            k,
            i64::try_from(serial).unwrap(),
            format!("m{}", rng.next(6)),
        ),
        69..=80 => {
            let n = 1 + rng.next(3);
            Cmd::Del((0..n).map(|_| key(rng)).collect())
        }
        81..=88 => Cmd::Expire(k),
        _ => {
            // SET over a key of another type, when there is one.
            let other = model
                .iter()
                .find(|(_, (v, _))| !matches!(v, Val::Str(_)))
                .map_or(k, |(k, _)| k.clone());
            Cmd::Set(other, format!("v{serial}"))
        }
    }
}

/// Applies `cmd` to `model` as Redis would; `false` when Redis answers
/// WRONGTYPE (and changes nothing).
fn apply(model: &mut Model, cmd: &Cmd) -> bool {
    fn typed<'a>(
        model: &'a mut Model,
        k: &str,
        empty: Val,
        same: fn(&Val) -> bool,
    ) -> Option<&'a mut Val> {
        let entry = model.entry(k.to_string()).or_insert((empty, false));
        same(&entry.0).then_some(&mut entry.0)
    }
    match cmd {
        Cmd::Set(k, v) => {
            model.insert(k.clone(), (Val::Str(v.clone()), false));
        }
        Cmd::HSet(k, f, v) => {
            let Some(Val::Hash(h)) = typed(model, k, Val::Hash(BTreeMap::new()), |v| {
                matches!(v, Val::Hash(_))
            }) else {
                return false;
            };
            h.insert(f.clone(), v.clone());
        }
        Cmd::RPush(k, a, b) => {
            let Some(Val::List(l)) = typed(model, k, Val::List(Vec::new()), |v| {
                matches!(v, Val::List(_))
            }) else {
                return false;
            };
            l.extend([a.clone(), b.clone()]);
        }
        Cmd::SAdd(k, m) => {
            let Some(Val::Set(s)) = typed(model, k, Val::Set(BTreeSet::new()), |v| {
                matches!(v, Val::Set(_))
            }) else {
                return false;
            };
            s.insert(m.clone());
        }
        Cmd::ZAdd(k, score, m) => {
            let Some(Val::ZSet(z)) = typed(model, k, Val::ZSet(BTreeMap::new()), |v| {
                matches!(v, Val::ZSet(_))
            }) else {
                return false;
            };
            z.insert(m.clone(), *score);
        }
        Cmd::Del(keys) => {
            for k in keys {
                model.remove(k);
            }
        }
        Cmd::Expire(k) => {
            if let Some(entry) = model.get_mut(k) {
                entry.1 = true;
            }
        }
    }
    true
}

/// Sends `cmd`: `Ok(true)` acknowledged, `Ok(false)` WRONGTYPE, `Err`
/// the connection broke (the server died).
fn send(c: &mut redis::Connection, cmd: &Cmd) -> Result<bool, redis::RedisError> {
    let q = match cmd {
        Cmd::Set(k, v) => redis::cmd("SET").arg(k).arg(v).clone(),
        Cmd::HSet(k, f, v) => redis::cmd("HSET").arg(k).arg(f).arg(v).clone(),
        Cmd::RPush(k, a, b) => redis::cmd("RPUSH").arg(k).arg(a).arg(b).clone(),
        Cmd::SAdd(k, m) => redis::cmd("SADD").arg(k).arg(m).clone(),
        Cmd::ZAdd(k, s, m) => redis::cmd("ZADD").arg(k).arg(s).arg(m).clone(),
        Cmd::Del(keys) => redis::cmd("DEL").arg(keys).clone(),
        Cmd::Expire(k) => redis::cmd("EXPIRE").arg(k).arg(1_000_000).clone(),
    };
    match q.query::<redis::Value>(c) {
        Ok(_) => Ok(true),
        Err(e) if e.code() == Some("WRONGTYPE") => Ok(false),
        Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() => {
            Err(e)
        }
        Err(e) => panic!("{cmd:?}: unexpected error {e}"),
    }
}

/// The whole key space as the server shows it.
fn read_state(c: &mut redis::Connection) -> Model {
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    let mut model = Model::new();
    for k in keys {
        let ty: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
        let q = |name: &str| redis::cmd(name).arg(&k).clone();
        let val = match ty.as_str() {
            "string" => Val::Str(q("GET").query(c).unwrap()),
            "hash" => Val::Hash(q("HGETALL").query(c).unwrap()),
            "list" => Val::List(q("LRANGE").arg(0).arg(-1).query(c).unwrap()),
            "set" => Val::Set(q("SMEMBERS").query(c).unwrap()),
            "zset" => {
                let z: Vec<(String, i64)> = q("ZRANGE")
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query(c)
                    .unwrap();
                Val::ZSet(z.into_iter().collect())
            }
            other => panic!("{k}: type {other}"),
        };
        let ttl: i64 = q("TTL").query(c).unwrap();
        assert!(ttl == -1 || ttl > 0, "{k}: TTL {ttl}");
        model.insert(k, (val, ttl > 0));
    }
    model
}

/// Figures of one run.
#[derive(Default)]
struct Figures {
    kills: usize,
    acknowledged: usize,
    in_flight_happened: usize,
    between_instances: usize,
    lost: usize,
}

/// One round: commands from `base` until the server is killed. Returns
/// the models after each acknowledged command (`history[0]` is `base`)
/// and the command in flight.
fn drive(
    server: &Serve,
    rng: &mut Rng,
    serial: &mut u64,
    base: &Model,
    target: usize,
) -> (Vec<Model>, Option<Cmd>) {
    let mut c = server.conn();
    let acked = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let pid = server.pid().to_string();
    let killer = {
        let acked = Arc::clone(&acked);
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            while acked.load(Ordering::SeqCst) < target {
                if stop.load(Ordering::SeqCst) {
                    // The server died by itself (the abort hook).
                    return;
                }
                thread::sleep(Duration::from_micros(200));
            }
            let status = Command::new("kill")
                .args(["-KILL", &pid])
                .status()
                .expect("kill runs");
            assert!(status.success());
        })
    };
    let mut history = vec![base.clone()];
    let mut model = base.clone();
    let pending = loop {
        *serial += 1;
        let cmd = generate(rng, &model, *serial);
        let mut next = model.clone();
        let changes = apply(&mut next, &cmd);
        match send(&mut c, &cmd) {
            Ok(ok) => {
                assert_eq!(ok, changes, "{cmd:?}: WRONGTYPE expected {}", !changes);
                model = next;
                history.push(model.clone());
                acked.fetch_add(1, Ordering::SeqCst);
            }
            Err(_) => break Some(cmd),
        }
    };
    // The server is not reaped before the killer ends, so its pid
    // cannot name another process.
    stop.store(true, Ordering::SeqCst);
    killer.join().expect("killer");
    (history, pending)
}

fn check_clean(format: &str, dir: &std::path::Path) {
    let (ok, out, err) = common::run(
        &["check", "--format", format, "--dir", common::path(dir)],
        "",
    );
    assert!(ok, "{format}: check found something:\n{out}\n{err}");
}

/// Kill-and-restart rounds; see the module comment.
fn run_rounds(format: &str, sync: &str, kills: usize, seed: u64, strict: bool) -> Figures {
    let (_tmp, dir) = store_dir();
    let mut rng = Rng(seed);
    let mut figures = Figures::default();
    let mut base = Model::new();
    let mut serial = 0u64;
    let mut outcome: Option<(Vec<Model>, Option<Cmd>)> = None;
    let mut round = 0usize;
    loop {
        // On the formats with several instances (one per type; floyd's
        // by slot, where a DEL of keys in two instances spans them), every
        // third round ends at its first write that spans two instances,
        // right after the first instance's batch, instead of at a SIGKILL.
        let hook = matches!(format, "blackwidow" | "nemo" | "floyd") && round % 3 == 2;
        round += 1;
        let env: &[(&str, &str)] = if hook {
            &[("REDCODEC_ABORT_BETWEEN_INSTANCES", "1")]
        } else {
            &[]
        };
        let server = Serve::start_with_env(format, &dir, &["--sync", sync], env);
        if let Some((history, pending)) = outcome.take() {
            let mut c = server.conn();
            let state = read_state(&mut c);
            let last = history.last().expect("history");
            let with_pending = pending.as_ref().map(|cmd| {
                let mut m = last.clone();
                apply(&mut m, cmd);
                m
            });
            let acknowledged = history.len() - 1;
            figures.acknowledged += acknowledged;
            if with_pending.as_ref() == Some(&state) && state != *last {
                figures.in_flight_happened += 1;
            } else if state != *last {
                let lost = if strict {
                    None
                } else {
                    history.iter().rposition(|m| *m == state)
                };
                let Some(kept) = lost else {
                    panic!(
                        "{format} --sync {sync}, kill {}: the store is neither the \
                         acknowledged state nor it plus the command in flight \
                         ({pending:?})\nstore: {state:?}\nmodel: {last:?}",
                        figures.kills
                    );
                };
                figures.lost += acknowledged - kept;
            }
            base = state;
            check_clean(format, &dir);
        }
        if figures.kills == kills {
            break;
        }
        let target = 5 + usize::try_from(rng.next(60)).unwrap();
        let (history, pending) = drive(&server, &mut rng, &mut serial, &base, target);
        let status = server.wait();
        assert!(!status.success(), "{format}: the server was killed");
        if status.signal() == Some(6) {
            figures.between_instances += 1;
        } else {
            figures.kills += 1;
        }
        outcome = Some((history, pending));
    }
    figures
}

fn kills() -> usize {
    std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

#[test]
fn sync_always_keeps_every_acknowledged_write() {
    for (i, format) in formats().enumerate() {
        let f = run_rounds(format, "always", kills(), 7 + i as u64, true);
        assert_eq!(f.lost, 0);
        println!(
            "{format} --sync always: {} kills and {} crashes between two instances, \
             {} acknowledged writes, none lost, the command in flight happened {} \
             times, check clean",
            f.kills, f.between_instances, f.acknowledged, f.in_flight_happened
        );
    }
}

#[test]
fn sync_everysec_keeps_a_consistent_prefix() {
    for (i, format) in formats().enumerate() {
        let f = run_rounds(format, "everysec", kills(), 1000 + i as u64, false);
        println!(
            "{format} --sync everysec: {} kills and {} crashes between two instances, \
             {} acknowledged writes, {} lost (the unsynced tail), the command in \
             flight happened {} times, check clean",
            f.kills, f.between_instances, f.acknowledged, f.lost, f.in_flight_happened
        );
    }
}

/// A crash between the batches of a command that writes two instances
/// (blackwidow and nemo keep one per type; floyd one per slot range, so a
/// DEL of `a`, `b`, `c` (instance 0) and `d` (instance 2)): the hook
/// `REDCODEC_ABORT_BETWEEN_INSTANCES=1` aborts the server right after the
/// first instance's batch. After a restart the command happened whole.
#[test]
fn a_crash_between_two_instances_leaves_the_whole_command() {
    type Setup = fn(&mut redis::Connection);
    let cases: [(&str, Setup, Cmd); 4] = [
        (
            "SET over a hash",
            |c| {
                command(&["HSET", "k", "f", "v"]).exec(c).unwrap();
            },
            Cmd::Set("k".into(), "new".into()),
        ),
        (
            "SET over a zset",
            |c| redis::cmd("ZADD").arg("k").arg(1).arg("m").exec(c).unwrap(),
            Cmd::Set("k".into(), "new".into()),
        ),
        (
            "DEL of keys of four types",
            |c| {
                redis::cmd("SET").arg("a").arg("1").exec(c).unwrap();
                command(&["HSET", "b", "f", "v"]).exec(c).unwrap();
                redis::cmd("RPUSH").arg("c").arg("x").exec(c).unwrap();
                redis::cmd("SADD").arg("d").arg("m").exec(c).unwrap();
                redis::cmd("SET").arg("keep").arg("1").exec(c).unwrap();
            },
            Cmd::Del(vec!["a".into(), "b".into(), "c".into(), "d".into()]),
        ),
        (
            "SET over a list",
            |c| {
                command(&["RPUSH", "k", "x", "y"]).exec(c).unwrap();
            },
            Cmd::Set("k".into(), "new".into()),
        ),
    ];
    // The cases that write two instances on each format (by index).
    let spanning: [(&str, &[usize]); 3] = [
        ("blackwidow", &[0, 1, 2, 3]),
        ("nemo", &[0, 1, 2, 3]),
        ("floyd", &[2]),
    ];
    for (format, indexes) in spanning {
        for (name, setup, cmd) in indexes.iter().map(|&i| &cases[i]) {
            let (_tmp, dir) = store_dir();
            let server = Serve::start(format, &dir, &["--sync", "always"]);
            let mut c = server.conn();
            setup(&mut c);
            let before = read_state(&mut c);
            drop(c);
            assert!(server.signal("TERM").success());
            let server = Serve::start_with_env(
                format,
                &dir,
                &["--sync", "always"],
                &[("REDCODEC_ABORT_BETWEEN_INSTANCES", "1")],
            );
            let mut c = server.conn();
            assert!(
                send(&mut c, cmd).is_err(),
                "{format} {name}: the server aborted"
            );
            assert!(!server.wait().success(), "{format} {name}");
            // Read-only, `check` sees the write not yet completed.
            let (ok, out, _) = common::run(
                &["check", "--format", format, "--dir", common::path(&dir)],
                "",
            );
            assert!(
                !ok && out.contains("pending-intent\t"),
                "{format} {name}: {out}"
            );
            let server = Serve::start(format, &dir, &["--sync", "always"]);
            let mut c = server.conn();
            let mut after = before.clone();
            apply(&mut after, cmd);
            let state = read_state(&mut c);
            assert_eq!(
                state, after,
                "{format} {name}: the command did not happen whole"
            );
            check_clean(format, &dir);
        }
    }
}
