//! redis-py's `Lock` (its acquire, extend, reacquire and release are Lua
//! scripts run through EVALSHA) against `redcodec serve` on every format,
//! and first against a real redis-server when one is installed:
//! `tests/clients/redis_py_lock.py`, with 8 threads contending.
//!
//! redis-py comes from the shared virtual environment (see
//! `redis_py_support`); without python3 or PyPI the test is reported as
//! skipped, unless `REDCODEC_REQUIRE_PYTHON=1`, where it fails.

use std::path::Path;
use std::process::Command;

use redcodec_conformance::target::RedisServer;

mod serve_support;
use serve_support::{formats, store_dir, Serve};

mod redis_py_support;
use redis_py_support::{failed, redis_py};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_lock.py"
);

fn check(python: &Path, addr: &str, label: &str) {
    let out = Command::new(python)
        .args([SCRIPT, addr, label])
        .output()
        .expect("the venv's python runs");
    assert!(out.status.success(), "{}", failed(label, &out));
    let said = String::from_utf8_lossy(&out.stdout);
    let line = format!("redis-py lock on {label}: ok");
    assert!(said.contains(&line), "{label}: no `{line}` in {said}");
}

#[test]
fn redis_py_lock_on_every_format() {
    let Some(python) = redis_py("redis-py Lock against serve") else {
        return;
    };
    if let Some(redis) = RedisServer::start_or_skip("redis-py Lock against redis-server") {
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
