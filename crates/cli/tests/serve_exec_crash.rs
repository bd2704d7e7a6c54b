//! Crash atomicity of `MULTI`/`EXEC` on every format: a client sends
//! transactions of 201 writes (100 `SET`s and 100 `HSET`s to keys of
//! their own, and one `INCR` of a shared counter) to `redcodec serve
//! --sync always`, and the server is killed with SIGKILL at varying
//! points. After each restart every transaction is wholly present or
//! wholly absent: every acknowledged one present, the one in flight
//! either way, and the counter equal to the number present. On the
//! formats with several instances, every third round ends instead at the
//! first write that spans two instances, right after the first
//! instance's batch (`REDCODEC_ABORT_BETWEEN_INSTANCES=1`): the
//! transaction is then completed at the restart.
//!
//! `CRASH_KILLS=N` sets the kills per format (default 4).

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
mod serve_support;
use serve_support::{formats, store_dir, Serve};

/// Writes of each kind per transaction.
const WRITES: usize = 100;

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

fn string_key(t: usize, i: usize) -> String {
    format!("t{t}:s{i}")
}

fn hash_key(t: usize, i: usize) -> String {
    format!("t{t}:h{i}")
}

/// Transaction `t`.
fn transaction(t: usize) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.atomic();
    for i in 0..WRITES {
        pipe.cmd("SET").arg(string_key(t, i)).arg(format!("v{t}"));
        pipe.cmd("HSET")
            .arg(hash_key(t, i))
            .arg("f")
            .arg(format!("v{t}"));
    }
    pipe.cmd("INCR").arg("counter");
    pipe
}

/// How many of transaction `t`'s keys hold its values (0 to 2 × WRITES).
fn present(c: &mut redis::Connection, t: usize) -> usize {
    let strings: Vec<Option<String>> = redis::cmd("MGET")
        .arg((0..WRITES).map(|i| string_key(t, i)).collect::<Vec<_>>())
        .query(c)
        .expect("MGET");
    let want = format!("v{t}");
    let mut n = strings
        .iter()
        .filter(|v| v.as_deref() == Some(want.as_str()))
        .count();
    for i in 0..WRITES {
        let v: Option<String> = redis::cmd("HGET")
            .arg(hash_key(t, i))
            .arg("f")
            .query(c)
            .expect("HGET");
        n += usize::from(v.as_deref() == Some(want.as_str()));
    }
    n
}

/// Sends transactions from `next` until the server dies (killed after
/// `target` acknowledgements and a short pause, or aborted by the hook).
/// Returns the acknowledged transactions' count and the one in flight.
fn drive(server: &Serve, next: usize, target: usize, pause_us: u64) -> (usize, usize) {
    let mut c = server.conn();
    let acked = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let pid = server.pid().to_string();
    let killer = {
        let (acked, stop) = (acked.clone(), stop.clone());
        thread::spawn(move || {
            while acked.load(Ordering::SeqCst) < target {
                if stop.load(Ordering::SeqCst) {
                    // The server died by itself (the abort hook).
                    return;
                }
                thread::sleep(Duration::from_micros(200));
            }
            // A varying point in the next transaction.
            thread::sleep(Duration::from_micros(pause_us));
            let status = Command::new("kill")
                .args(["-KILL", &pid])
                .status()
                .expect("kill runs");
            assert!(status.success());
        })
    };
    let mut t = next;
    loop {
        match transaction(t).query::<Vec<redis::Value>>(&mut c) {
            Ok(replies) => {
                assert_eq!(replies.len(), 2 * WRITES + 1, "transaction {t}");
                acked.fetch_add(1, Ordering::SeqCst);
                t += 1;
            }
            Err(e)
                if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() =>
            {
                break;
            }
            Err(e) => panic!("transaction {t}: unexpected error {e}"),
        }
    }
    // The server is not reaped before the killer ends, so its pid cannot
    // name another process.
    stop.store(true, Ordering::SeqCst);
    killer.join().expect("killer");
    (t - next, t)
}

fn kills() -> usize {
    std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4)
}

#[test]
fn exec_is_wholly_present_or_wholly_absent_after_a_crash() {
    for (f, format) in formats().enumerate() {
        let (_tmp, dir) = store_dir();
        let mut rng = Rng(31 + f as u64);
        // Transactions `0..done` happened; `in_flight` may have.
        let (mut done, mut in_flight) = (0usize, None::<usize>);
        let (mut killed, mut aborted, mut flight_happened) = (0, 0, 0);
        let mut must_have_happened = false;
        let mut round = 0usize;
        loop {
            let hook = matches!(format, "blackwidow" | "nemo" | "floyd") && round % 3 == 2;
            round += 1;
            let env: &[(&str, &str)] = if hook {
                &[("REDCODEC_ABORT_BETWEEN_INSTANCES", "1")]
            } else {
                &[]
            };
            let server = Serve::start_with_env(format, &dir, &["--sync", "always"], env);
            let mut c = server.conn();
            // Every transaction so far: whole or absent.
            for t in 0..done + usize::from(in_flight.is_some()) {
                let n = present(&mut c, t);
                let whole = n == 2 * WRITES;
                assert!(
                    whole || n == 0,
                    "{format}, round {round}: transaction {t} is partly present \
                     ({n} of {} writes)",
                    2 * WRITES
                );
                if t < done {
                    assert!(whole, "{format}: acknowledged transaction {t} is missing");
                } else if must_have_happened {
                    assert!(whole, "{format}: transaction {t} was not completed");
                    flight_happened += 1;
                } else if whole {
                    flight_happened += 1;
                }
            }
            must_have_happened = false;
            if let Some(t) = in_flight.take() {
                if present(&mut c, t) == 2 * WRITES {
                    done = t + 1;
                }
            }
            let counter: Option<usize> = redis::cmd("GET")
                .arg("counter")
                .query(&mut c)
                .expect("GET counter");
            assert_eq!(counter.unwrap_or(0), done, "{format}: the counter");
            // Transactions past the last one sent were never written.
            assert_eq!(present(&mut c, done + 1), 0, "{format}");
            drop(c);
            if killed == kills() {
                break;
            }
            let target = 1 + usize::try_from(rng.next(4)).expect("small");
            let pause_us = rng.next(4000);
            let (acked, next) = drive(&server, done, target, pause_us);
            let status = server.wait();
            assert!(!status.success(), "{format}: the server was killed");
            done += acked;
            if status.signal() == Some(6) {
                // Aborted after the first instance's batch: the restart
                // completes the transaction from its intent record.
                aborted += 1;
                must_have_happened = true;
            } else {
                killed += 1;
            }
            in_flight = Some(next);
        }
        println!(
            "{format}: {killed} kills and {aborted} crashes between two instances; \
             {done} transactions of {} writes present, the one in flight happened \
             {flight_happened} times",
            2 * WRITES + 1
        );
    }
}
