//! redis-py (and dramatiq, a job queue on it) for the tests that run
//! them: installed once, pinned, into virtual environments outside the
//! clone (`$XDG_CACHE_HOME/redcodec-venv/`, else `~/.cache/redcodec-venv/`)
//! and reused. Without `python3`, its
//! `venv` module or PyPI a test is reported as skipped
//! (`redcodec_conformance::skip`, counted by `scripts/test`), unless
//! `REDCODEC_REQUIRE_PYTHON=1` (set by `.ci/run`), where it fails.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The redis-py release the tests are written for.
pub const REDIS_PY: &str = "5.2.1";

/// Why `test` cannot run redis-py on this machine: a skip, or a failure
/// when `REDCODEC_REQUIRE_PYTHON=1`.
fn unavailable(test: &str, reason: String) -> Option<PathBuf> {
    redcodec_conformance::skip::unavailable("REDCODEC_REQUIRE_PYTHON", test, &reason);
    None
}

/// `what` failed: its status and output.
pub fn failed(what: &str, out: &Output) -> String {
    format!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Where the virtual environment `name` is kept, outside the clone.
fn venv_dir(name: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    cache.join("redcodec-venv").join(name)
}

/// Whether the venv's python runs `probe` (a check that the pinned
/// packages import at their versions) successfully.
fn ready(venv: &Path, probe: &str) -> bool {
    Command::new(venv.join("bin/python"))
        .args(["-c", probe])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The python of a venv holding redis-py, made (in a scratch directory
/// renamed into place when whole) if it is not there yet.
pub fn redis_py(test: &str) -> Option<PathBuf> {
    venv(
        test,
        &format!("redis-py-{REDIS_PY}"),
        &[&format!("redis=={REDIS_PY}")],
        &format!("import redis, sys; sys.exit(redis.__version__ != '{REDIS_PY}')"),
    )
}

/// The dramatiq release (a job-queue library whose Redis broker is one
/// Lua script run through EVALSHA) the tests are written for.
pub const DRAMATIQ: &str = "2.2.1";

/// The python of a venv holding dramatiq with its Redis broker and the
/// pinned redis-py, made if it is not there yet.
pub fn dramatiq(test: &str) -> Option<PathBuf> {
    venv(
        test,
        &format!("dramatiq-{DRAMATIQ}-redis-py-{REDIS_PY}"),
        &[
            &format!("dramatiq[redis]=={DRAMATIQ}"),
            &format!("redis=={REDIS_PY}"),
        ],
        &format!(
            "import dramatiq, redis, sys; \
             sys.exit(dramatiq.__version__ != '{DRAMATIQ}' or redis.__version__ != '{REDIS_PY}')"
        ),
    )
}

/// The python of the venv `name` holding `requirements` (pip's syntax),
/// made (in a scratch directory renamed into place when whole) unless
/// `probe` already succeeds in it.
fn venv(test: &str, name: &str, requirements: &[&str], probe: &str) -> Option<PathBuf> {
    let venv = venv_dir(name);
    if ready(&venv, probe) {
        return Some(venv.join("bin/python"));
    }
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => return unavailable(test, failed("python3 --version", &o)),
        Err(e) => return unavailable(test, format!("python3 is not installed: {e}")),
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
        return unavailable(
            test,
            failed(
                "python3 -m venv (Debian: apt-get install python3-venv)",
                &made,
            ),
        );
    }
    let pip = Command::new(new.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--timeout", "30"])
        .args(["--retries", "2"])
        .args(requirements)
        .output()
        .expect("the venv's python runs");
    if !pip.status.success() {
        return unavailable(
            test,
            failed(&format!("pip install {}", requirements.join(" ")), &pip),
        );
    }
    // Another run may have put a venv there meanwhile: either one will do.
    if std::fs::rename(&new, &venv).is_err() && !ready(&venv, probe) {
        panic!("cannot put the venv in place at {}", venv.display());
    }
    Some(venv.join("bin/python"))
}

/// Runs the client script `script ADDR LABEL` with `python` against
/// redis-server (when there is one) and `serve` on every format; each run
/// must succeed and print `{what} on {label}: ok`.
pub fn on_every_server(python: &Path, script: &str, what: &str) {
    use crate::serve_support::{formats, store_dir, Serve};
    let check = |addr: &str, label: &str| {
        let out = Command::new(python)
            .args([script, addr, label])
            .output()
            .expect("the venv's python runs");
        assert!(out.status.success(), "{}", failed(label, &out));
        let said = String::from_utf8_lossy(&out.stdout);
        let line = format!("{what} on {label}: ok");
        assert!(said.contains(&line), "{label}: no `{line}` in {said}");
    };
    let test = format!("{what} against redis-server");
    if let Some(redis) = redcodec_conformance::target::RedisServer::start_or_skip(&test) {
        check(&format!("127.0.0.1:{}", redis.port()), "redis-server");
    }
    for format in formats() {
        let (_tmp, dir) = store_dir();
        let server = Serve::start(format, &dir, &["--sync", "no"]);
        check(&server.addr, format);
    }
}
