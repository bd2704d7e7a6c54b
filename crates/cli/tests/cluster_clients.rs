//! Cluster clients on three redcodec nodes whose topology the test sets
//! with `CLUSTERX SETNODES`: redis-py's `RedisCluster`
//! (`tests/clients/redis_py_cluster.py`) and `redis-cli -c` following
//! MOVED.
//!
//! redis-py comes from the virtual environment `redis_py.rs` keeps
//! (`$XDG_CACHE_HOME/redcodec-venv/redis-py-<version>`, else under
//! `~/.cache`), made here the same way when missing. Without python3,
//! its venv module or PyPI the redis-py test is reported as skipped
//! unless `REDCODEC_REQUIRE_PYTHON=1`; without `redis-cli`, the redis-cli
//! test is skipped unless `REDCODEC_REQUIRE_REDIS=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod serve_support;

mod cluster_support;
use cluster_support::{three_nodes, R};

/// The redis-py release (the one `redis_py.rs` pins).
const REDIS_PY: &str = "5.2.1";
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_cluster.py"
);

fn failed(what: &str, out: &Output) -> String {
    format!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn skip_python(reason: String) -> Option<PathBuf> {
    redcodec_conformance::skip::unavailable(
        "REDCODEC_REQUIRE_PYTHON",
        "redis-py RedisCluster against serve --cluster",
        &reason,
    );
    None
}

fn venv_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    cache
        .join("redcodec-venv")
        .join(format!("redis-py-{REDIS_PY}"))
}

fn ready(venv: &Path) -> bool {
    Command::new(venv.join("bin/python"))
        .args([
            "-c",
            &format!("import redis, sys; sys.exit(redis.__version__ != '{REDIS_PY}')"),
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The venv's python with redis-py, made if missing.
fn redis_py() -> Option<PathBuf> {
    let venv = venv_dir();
    if ready(&venv) {
        return Some(venv.join("bin/python"));
    }
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => return skip_python(failed("python3 --version", &o)),
        Err(e) => return skip_python(format!("python3 is not installed: {e}")),
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
        return skip_python(failed("python3 -m venv", &made));
    }
    let pip = Command::new(new.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--timeout", "30"])
        .args(["--retries", "2", &format!("redis=={REDIS_PY}")])
        .output()
        .expect("the venv's python runs");
    if !pip.status.success() {
        return skip_python(failed(&format!("pip install redis=={REDIS_PY}"), &pip));
    }
    if std::fs::rename(&new, &venv).is_err() && !ready(&venv) {
        panic!("cannot put the venv in place at {}", venv.display());
    }
    Some(venv.join("bin/python"))
}

#[test]
fn redis_py_redis_cluster_on_three_nodes() {
    let Some(python) = redis_py() else { return };
    let (nodes, _) = three_nodes();
    let ports: Vec<String> = nodes.iter().map(|n| n.port().to_string()).collect();
    let out = Command::new(&python)
        .arg(SCRIPT)
        .arg("127.0.0.1")
        .args(&ports)
        .output()
        .expect("the venv's python runs");
    assert!(
        out.status.success(),
        "{}",
        failed("redis_py_cluster.py", &out)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("redis-py RedisCluster: ok"), "{said}");
    // The keys are where their slots say (redis-py wrote through MOVED
    // or the slot map, never to the wrong node).
    let mut total = 0;
    for n in &nodes {
        let R::Int(size) = n.conn().call(&["DBSIZE"]) else {
            panic!()
        };
        assert!(size > 0, "{} holds no key", n.addr());
        total += size;
    }
    assert_eq!(total, 300 + 2 + 1 + 50 + 40);
}

fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-c", "-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .expect("redis-cli runs");
    assert!(out.status.success(), "{}", failed("redis-cli", &out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn redis_cli_follows_moved() {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        redcodec_conformance::skip::unavailable(
            "REDCODEC_REQUIRE_REDIS",
            "redis-cli -c against serve --cluster",
            "redis-cli is not installed",
        );
        return;
    }
    let (nodes, _) = three_nodes();
    // foo is in slot 12182: the third node's. Ask the first.
    let first = nodes[0].port();
    assert_eq!(
        nodes[0].conn().call(&["SET", "foo", "x"]),
        R::err(&format!("MOVED 12182 {}", nodes[2].addr()))
    );
    assert_eq!(redis_cli(first, &["SET", "foo", "bar"]), "OK");
    assert_eq!(redis_cli(first, &["GET", "foo"]), "bar");
    assert_eq!(nodes[2].conn().call(&["GET", "foo"]), R::bulk("bar"));
    assert_eq!(nodes[0].conn().call(&["DBSIZE"]), R::Int(0));
}
