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

mod serve_support;

mod redis_py_support;
use redis_py_support::{dramatiq, on_every_server};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/dramatiq_queue.py"
);

#[test]
fn dramatiq_processes_jobs_on_every_format() {
    let Some(python) = dramatiq("dramatiq against serve") else {
        return;
    };
    on_every_server(&python, SCRIPT, "dramatiq");
}
