//! A full disk under a replica, on every format, without root: `redcodec
//! serve --replicaof` runs under a file-size limit (`RLIMIT_FSIZE` through
//! `prlimit`, `SIGXFSZ` ignored, so a write past it fails as on a full
//! disk) while a redis-server master takes 4 KiB values. Checked:
//!
//! - the replica stops following with the storage error in
//!   `master_link_error`, and stays up, serving reads;
//! - it never acknowledges more of the stream than it applied: every key
//!   the master's `WAIT`… counted it for is readable on it;
//! - restarted without the limit on the same directory, it follows again
//!   and ends equal to the master, key by key.
//!
//! Needs `redis-server` and `prlimit` on PATH; without redis-server the
//! test is recorded as skipped, unless `REDCODEC_REQUIRE_REDIS=1` (CI).

use std::time::{Duration, Instant};

use redcodec_conformance::skip::Tool;
use redcodec_conformance::target::RedisServer;

mod serve_support;
use serve_support::{assert_same_keys, connect, formats, store_dir, Serve};

const REDIS_SERVER: Tool = Tool::new("redis-server", "redis-server", "REDCODEC_REQUIRE_REDIS");

/// The file-size limit: above what opening a store and its first full copy
/// write, far below what the streamed values need.
const LIMIT_BYTES: usize = 1 << 20;
/// The size of each value.
const VALUE_BYTES: usize = 4096;
/// Values written to the master: four times what the limit holds.
const WRITES: usize = 4 * LIMIT_BYTES / VALUE_BYTES;

fn info_field(c: &mut redis::Connection, name: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg("replication").query(c).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

/// Polls `done` every 50 ms for up to two minutes; fails with `what`.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_full_disk_stops_a_replica_that_loses_nothing_and_follows_again() {
    if REDIS_SERVER.find("a replica on a full disk").is_none() {
        return;
    }
    for format in formats() {
        let mdir = tempfile::tempdir().unwrap();
        let master = RedisServer::start_with(Some(mdir.path()), &[]).expect("redis-server");
        let murl = format!("redis://127.0.0.1:{}/", master.port());
        let mut m = connect(&murl);
        let _: () = redis::cmd("SET")
            .arg("before")
            .arg("v")
            .query(&mut m)
            .unwrap();
        let (_tmp, dir) = store_dir();
        let limit = format!("--fsize={LIMIT_BYTES}");
        let replicaof = format!("127.0.0.1:{}", master.port());
        let replica = Serve::start_wrapped(
            &[
                "sh",
                "-c",
                r#"trap '' XFSZ; exec prlimit "$0" "$@""#,
                &limit,
            ],
            format,
            &dir,
            &["--replicaof", &replicaof, "--sync", "always"],
            &[],
        );
        let mut r = replica.conn();
        wait_for(&format!("{format}: the link up"), || {
            info_field(&mut r, "master_link_status").as_deref() == Some("up")
        });
        let value = "x".repeat(VALUE_BYTES);
        for i in 0..WRITES {
            let _: () = redis::cmd("SET")
                .arg(format!("k{i}"))
                .arg(&value)
                .query(&mut m)
                .unwrap();
        }
        wait_for(
            &format!("{format}: the replica stops on the full disk"),
            || {
                info_field(&mut r, "master_link_error").is_some_and(|e| {
                    e.contains("storage error") || e.contains("No space") || e.contains("too large")
                })
            },
        );
        let error = info_field(&mut r, "master_link_error").unwrap();
        // Still up and serving what it applied; it applied a part only.
        let held: usize = redis::cmd("DBSIZE").query(&mut r).unwrap();
        assert!(
            (1..WRITES).contains(&held),
            "{format}: {held} keys held ({error})"
        );
        // What the master was told is applied, is.
        let acked: i64 = info_field(&mut m, "slave0")
            .and_then(|s| {
                s.split(',')
                    .find_map(|f| f.strip_prefix("offset="))
                    .and_then(|o| o.parse().ok())
            })
            .unwrap_or(0);
        let applied: i64 = info_field(&mut r, "master_repl_offset")
            .and_then(|o| o.parse().ok())
            .unwrap();
        assert!(
            acked <= applied,
            "{format}: the master was told {acked}, the replica applied {applied}"
        );
        for i in 0..held.saturating_sub(1) {
            let got: Option<String> = redis::cmd("GET")
                .arg(format!("k{i}"))
                .query(&mut r)
                .unwrap();
            assert_eq!(
                got.as_deref(),
                Some(value.as_str()),
                "{format}: k{i} of {held}"
            );
        }
        drop(r);
        replica.signal("KILL");

        // Space again: the same directory follows to the end.
        let replica = Serve::start(format, &dir, &["--replicaof", &replicaof]);
        let mut r = replica.conn();
        wait_for(&format!("{format}: caught up after the restart"), || {
            info_field(&mut r, "master_link_status").as_deref() == Some("up")
                && info_field(&mut r, "master_repl_offset")
                    == info_field(&mut m, "master_repl_offset")
        });
        assert_same_keys(&mut m, &mut r, &format!("{format}: after the restart"));
        eprintln!("{format}: stopped at {held} of {WRITES} keys: {error}");
    }
}
