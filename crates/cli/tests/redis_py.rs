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

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use redcodec_codec::{Codec, RelativeExpiry};
use redcodec_conformance::target::{RedisServer, Target};
use redcodec_formats::{Format, FormatOptions};

mod serve_support;
use serve_support::{store_dir, Serve};

/// The redis-py release the check is written for.
const REDIS_PY: &str = "5.2.1";
/// The password every server under test requires.
const PASSWORD: &str = "py-check-secret";
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_check.py"
);

/// Why the check cannot run on this machine: a skip, or a failure when
/// `REDCODEC_REQUIRE_PYTHON=1`.
fn unavailable(reason: String) -> Option<PathBuf> {
    redcodec_conformance::skip::unavailable(
        "REDCODEC_REQUIRE_PYTHON",
        "redis-py against serve",
        &reason,
    );
    None
}

fn failed(what: &str, out: &Output) -> String {
    format!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Where the virtual environment is kept, outside the clone.
fn venv_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    cache
        .join("redcodec-venv")
        .join(format!("redis-py-{REDIS_PY}"))
}

/// The venv's python when it imports the pinned redis-py.
fn ready(venv: &Path) -> bool {
    Command::new(venv.join("bin/python"))
        .args([
            "-c",
            &format!("import redis, sys; sys.exit(redis.__version__ != '{REDIS_PY}')"),
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The python of a venv holding redis-py, made (in a scratch directory
/// renamed into place when whole) if it is not there yet.
fn redis_py() -> Option<PathBuf> {
    let venv = venv_dir();
    if ready(&venv) {
        return Some(venv.join("bin/python"));
    }
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => return unavailable(failed("python3 --version", &o)),
        Err(e) => return unavailable(format!("python3 is not installed: {e}")),
    }
    let parent = venv.parent().expect("the venv has a parent");
    std::fs::create_dir_all(parent).expect("the cache directory can be made");
    let scratch = tempfile::tempdir_in(parent).expect("a scratch directory");
    let new = scratch.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&new)
        .output()
        .expect("python3 runs");
    if !made.status.success() {
        return unavailable(failed(
            "python3 -m venv (Debian: apt-get install python3-venv)",
            &made,
        ));
    }
    let pip = Command::new(new.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--timeout", "30"])
        .args(["--retries", "2", &format!("redis=={REDIS_PY}")])
        .output()
        .expect("the venv's python runs");
    if !pip.status.success() {
        return unavailable(failed(&format!("pip install redis=={REDIS_PY}"), &pip));
    }
    // Another run may have put a venv there meanwhile: either one will do.
    if std::fs::rename(&new, &venv).is_err() && !ready(&venv) {
        panic!("cannot put the venv in place at {}", venv.display());
    }
    Some(venv.join("bin/python"))
}

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
    let Some(python) = redis_py() else { return };

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
