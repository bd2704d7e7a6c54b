//! redis-py's `Lock` (its acquire, extend, reacquire and release are Lua
//! scripts run through EVALSHA) against `redcodec serve` on every format,
//! and first against a real redis-server when one is installed:
//! `tests/clients/redis_py_lock.py`, with 8 threads contending.
//!
//! redis-py comes from the shared virtual environment (see
//! `redis_py_support`); without python3 or PyPI the test is reported as
//! skipped, unless `REDCODEC_REQUIRE_PYTHON=1`, where it fails.

mod serve_support;

mod redis_py_support;
use redis_py_support::{on_every_server, redis_py};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_lock.py"
);

#[test]
fn redis_py_lock_on_every_format() {
    let Some(python) = redis_py("redis-py Lock against serve") else {
        return;
    };
    on_every_server(&python, SCRIPT, "redis-py lock");
}
