//! Cluster clients on three redcodec nodes whose topology the test sets
//! with `CLUSTERX SETNODES`: redis-py's `RedisCluster`
//! (`tests/clients/redis_py_cluster.py`) and `redis-cli -c` following
//! MOVED.
//!
//! redis-py comes from the virtual environment `redis_py_support` keeps. Without python3,
//! its venv module or PyPI the redis-py test is reported as skipped
//! unless `REDCODEC_REQUIRE_PYTHON=1`; without `redis-cli`, the redis-cli
//! test is skipped unless `REDCODEC_REQUIRE_REDIS=1`.

use std::process::Command;

mod serve_support;

mod redis_py_support;
use redis_py_support::{failed, redis_py};

mod cluster_support;
use cluster_support::{three_nodes, R};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/redis_py_cluster.py"
);

#[test]
fn redis_py_redis_cluster_on_three_nodes() {
    let Some(python) = redis_py("redis-py RedisCluster against serve --cluster") else {
        return;
    };
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
    assert_eq!(total, 300 + 2 + 1 + 50 + 40 + 2);
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
