//! A real job-queue library against `redcodec serve` on every format, and
//! first against a real redis-server when one is installed: dramatiq
//! (PyPI), whose Redis broker runs every queue operation (enqueue, fetch,
//! ack, nack, requeue, dead-lettering) as one Lua script through EVALSHA.
//! `tests/clients/dramatiq_queue.py` enqueues plain, delayed,
//! prioritised, retried and always-failing jobs, runs a 4-thread worker,
//! and checks results, retries, queue sizes and the dead letters.
//!
//! BullMQ, the first choice, cannot run on redcodec: every one of its
//! job scripts writes its event stream with XADD, and redcodec has no
//! streams (see the scripting page of the book).
//!
//! dramatiq comes from a virtual environment shared with the redis-py
//! tests (see `redis_py_support`); without python3 or PyPI the test is
//! reported as skipped, unless `REDCODEC_REQUIRE_PYTHON=1`, where it fails.

use std::path::Path;
use std::process::Command;

use redcodec_conformance::target::RedisServer;

mod serve_support;
use serve_support::{formats, store_dir, Serve};

mod redis_py_support;
use redis_py_support::{dramatiq, failed};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/dramatiq_queue.py"
);

fn check(python: &Path, addr: &str, label: &str) {
    let out = Command::new(python)
        .args([SCRIPT, addr, label])
        .output()
        .expect("the venv's python runs");
    assert!(out.status.success(), "{}", failed(label, &out));
    let said = String::from_utf8_lossy(&out.stdout);
    let line = format!("dramatiq on {label}: ok");
    assert!(said.contains(&line), "{label}: no `{line}` in {said}");
}

#[test]
fn dramatiq_processes_jobs_on_every_format() {
    let Some(python) = dramatiq("dramatiq against serve") else {
        return;
    };
    if let Some(redis) = RedisServer::start_or_skip("dramatiq against redis-server") {
        check(
            &python,
            &format!("127.0.0.1:{}", redis.port()),
            "redis-server",
        );
    }
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        check(&python, &server.addr, format);
    }
}
