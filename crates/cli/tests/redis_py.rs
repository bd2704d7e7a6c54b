//! `redcodec serve` as redis-py sees it: `tests/clients/redis_py_check.py`
//! run with redis-py (from PyPI, pinned) against a server on every format,
//! in RESP3 and RESP2. The script first runs against a real `redis-server`
//! when one is installed, so what it expects is what Redis answers.
//!
//! redis-py is installed once into a virtual environment outside the clone
//! (`$XDG_CACHE_HOME/redcodec-venv/`, else `~/.cache/redcodec-venv/`) and
//! reused. Without `python3`, its `venv` module or PyPI, the test is
//! reported as skipped (`redcodec_conformance::skip`, counted by
//! `scripts/test`), unless `REDCODEC_REQUIRE_PYTHON=1` (set by `.ci/run`),
//! where it fails.

use std::path::Path;
use std::process::Command;

use redcodec_codec::{Codec, RelativeExpiry};
use redcodec_conformance::target::{RedisServer, Target};
use redcodec_formats::{Format, FormatOptions};

mod serve_support;
use serve_support::{store_dir, Serve};

mod redis_py_support;
use redis_py_support::{failed, redis_py, REDIS_PY};

/// The password every server under test requires.
const PASSWORD: &str = "py-check-secret";
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_check.py"
);

/// Runs the check against `addr` and fails the test with its output.
fn check(python: &Path, addr: &str, label: &str, extra: &[&str]) {
    let out = Command::new(python)
        .arg(SCRIPT)
        .args([addr, PASSWORD, label])
        .args(extra)
        .output()
        .expect("the venv's python runs");
    assert!(out.status.success(), "{}", failed(label, &out));
    let said = String::from_utf8_lossy(&out.stdout);
    for proto in ["RESP3", "RESP2"] {
        let line = format!("redis-py {REDIS_PY} {proto} on {label}: ok");
        assert!(said.contains(&line), "{label}: no `{line}` in {said}");
    }
}

#[test]
fn redis_py_on_every_format_in_resp3_and_resp2() {
    let Some(python) = redis_py("redis-py against serve") else {
        return;
    };

    // The script against Redis itself, when it is installed.
    if let Some(mut redis) = RedisServer::start_or_skip("redis-py against redis-server") {
        let set = ["CONFIG", "SET", "requirepass", PASSWORD].map(|a| a.as_bytes().to_vec());
        redis.execute(&set).expect("CONFIG SET requirepass");
        let addr = format!("127.0.0.1:{}", redis.port());
        check(&python, &addr, "redis-server", &[]);
    }

    for &format in Format::ALL {
        let codec = format.codec(&FormatOptions::default()).expect("codec");
        // A format that keeps a key through its whole last second
        // (nemo) reports that second's end as the expiry.
        let through_second =
            codec.capabilities().relative_expiry == RelativeExpiry::SecondsMinusOne;
        let extra: &[&str] = if through_second {
            &["--expiry-through-second"]
        } else {
            &[]
        };
        let (_tmp, dir) = store_dir();
        let server = Serve::start(
            format.name(),
            &dir,
            &["--requirepass", PASSWORD, "--sync", "no"],
        );
        check(&python, &server.addr, format.name(), extra);
    }
}
