//! `redcodec migrate --to redis-cluster://HOST:PORT`: a store (or a live
//! server) copied into a cluster, every key sent to the master owning its
//! slot, as a user runs it. Against a real cluster of three `redis-server`
//! masters (made by `redis-cli --cluster create`), and against three
//! `redcodec serve --format kvrocks --cluster` nodes.
//!
//! The real cluster needs `redis-server` and `redis-cli` on PATH. Without
//! them its test is reported as skipped (`redcodec_conformance::skip`),
//! unless `REDCODEC_REQUIRE_REDIS=1` (set by `.ci/run`), where it fails.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

mod serve_support;

mod cluster_support;
use cluster_support::{set_nodes, three_nodes, topology, Node, THIRDS};

/// Stores are written at this fixed time, 2035-01-01T00:00:00Z: their
/// expiries lie ahead of the servers' real clocks, known to the
/// millisecond.
const CLOCK: &str = "2051222400000";
const CLOCK_MS: u64 = 2_051_222_400_000;

/// How long a cluster may take to agree on its topology.
const CONVERGE: Duration = Duration::from_secs(60);

/// What the store holds, key by key, as a reader sees it.
#[derive(Clone, Debug, PartialEq)]
enum Expected {
    String(Vec<u8>),
    List(Vec<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<(Vec<u8>, f64)>),
}

/// The keys of [`store_script`] with their values and absolute expiries
/// (`-1`: none): every type, keys spread over every slot range, keys of
/// one hash tag, binary bytes, and collections bigger than a chunk.
fn expected() -> BTreeMap<Vec<u8>, (Expected, i64)> {
    let mut out = BTreeMap::new();
    for i in 0..60u32 {
        let ttl = if i % 3 == 0 {
            (CLOCK_MS + 60_000 + u64::from(i) * 7) as i64
        } else {
            -1
        };
        let value = match i % 5 {
            0 => Expected::String(format!("v{i}\x00\u{ff}").into_bytes()),
            1 => Expected::List((0..4).map(|j| format!("e{i}-{j}").into_bytes()).collect()),
            2 => Expected::Hash(
                (0..3)
                    .map(|j| {
                        (
                            format!("f{j}").into_bytes(),
                            format!("{i}.{j}").into_bytes(),
                        )
                    })
                    .collect(),
            ),
            3 => Expected::Set((0..3).map(|j| format!("m{j}").into_bytes()).collect()),
            _ => Expected::ZSet(vec![
                (b"low".to_vec(), -f64::from(i) - 0.25),
                (b"high".to_vec(), f64::from(i) + 0.5),
            ]),
        };
        out.insert(format!("key:{i}").into_bytes(), (value, ttl));
    }
    for name in ["{user7}:name", "{user7}:mail"] {
        let value = Expected::String(name.as_bytes().to_vec());
        out.insert(name.as_bytes().to_vec(), (value, -1));
    }
    let big: Vec<Vec<u8>> = (0..2500).map(|i| format!("i{i}").into_bytes()).collect();
    out.insert(b"big:list".to_vec(), (Expected::List(big), -1));
    let fields = (0..1500)
        .map(|i| (format!("f{i}").into_bytes(), format!("v{i}").into_bytes()))
        .collect();
    let ttl = (CLOCK_MS + 3_600_500) as i64;
    out.insert(b"big:hash".to_vec(), (Expected::Hash(fields), ttl));
    out
}

/// `redcodec exec` lines writing [`expected`].
fn store_script() -> String {
    let quote = |b: &[u8]| {
        let mut s = String::from("\"");
        for &c in b {
            s.push_str(&format!("\\x{c:02x}"));
        }
        s.push('"');
        s
    };
    let mut script = String::new();
    for (key, (value, ttl)) in expected() {
        let k = quote(&key);
        let (command, words): (&str, Vec<String>) = match value {
            Expected::String(v) => ("SET", vec![quote(&v)]),
            Expected::List(items) => ("RPUSH", items.iter().map(|i| quote(i)).collect()),
            Expected::Hash(pairs) => (
                "HSET",
                pairs
                    .iter()
                    .flat_map(|(f, v)| [quote(f), quote(v)])
                    .collect(),
            ),
            Expected::Set(members) => ("SADD", members.iter().map(|m| quote(m)).collect()),
            Expected::ZSet(members) => (
                "ZADD",
                members
                    .iter()
                    .flat_map(|(m, s)| [s.to_string(), quote(m)])
                    .collect(),
            ),
        };
        script.push_str(&format!("{command} {k} {}\n", words.join(" ")));
        if ttl > 0 {
            script.push_str(&format!("PEXPIREAT {k} {ttl}\n"));
        }
    }
    script
}

/// A temporary directory with a kvrocks store holding [`expected`] and
/// the path of a checkpoint.
fn source() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (kv, checkpoint) = (dir.path().join("kv"), dir.path().join("c"));
    exec_at(CLOCK, "kvrocks", &kv, &store_script());
    (dir, kv, checkpoint)
}

/// `migrate` of the kvrocks store `kv` into the cluster at `url`,
/// with the checkpoint `checkpoint`.
fn into_cluster<'a>(kv: &'a Path, url: &'a str, checkpoint: &'a Path) -> Args<'a> {
    Args::new("migrate")
        .src("kvrocks", kv)
        .dst_url(url)
        .with(&["--checkpoint", path(checkpoint)])
}

/// Runs `args` (a migration with `--verify`), checks that it migrated
/// and verified every key of [`expected`]; its stdout.
fn migrated_and_verified(args: &[&str]) -> String {
    let stdout = ok(args);
    let n = expected().len();
    assert!(
        stdout.starts_with(&format!("migrated {n} keys,")),
        "{stdout}"
    );
    assert_contains(&stdout, &format!("verify: {n} keys compared, all equal"));
    stdout
}

/// A connection to `host:port`.
fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(10)))
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"))
}

/// The master address (`host:port`) of each slot, from `CLUSTER SLOTS`.
fn owners(con: &mut redis::Connection) -> BTreeMap<u16, String> {
    let ranges: Vec<redis::Value> = command(&["CLUSTER", "SLOTS"]).query(con).unwrap();
    let mut out = BTreeMap::new();
    for range in ranges {
        let redis::Value::Array(parts) = range else {
            panic!("CLUSTER SLOTS entry {range:?}")
        };
        let first: u16 = redis::from_redis_value_ref(&parts[0]).unwrap();
        let last: u16 = redis::from_redis_value_ref(&parts[1]).unwrap();
        let redis::Value::Array(master) = &parts[2] else {
            panic!("CLUSTER SLOTS master {:?}", parts[2])
        };
        let host: String = redis::from_redis_value_ref(&master[0]).unwrap();
        let port: u16 = redis::from_redis_value_ref(&master[1]).unwrap();
        for slot in first..=last {
            out.insert(slot, format!("{host}:{port}"));
        }
    }
    out
}

/// Checks that the masters at `addrs` hold exactly the keys of
/// [`expected`], each on the master its slot names, with equal values
/// and expiries.
fn assert_keys_on_their_owners(addrs: &[String]) {
    let owner = owners(&mut connect(&addrs[0]));
    let expected = expected();
    let mut seen = 0;
    for addr in addrs {
        let mut con = connect(addr);
        let mut cursor = 0u64;
        loop {
            let (next, keys): (u64, Vec<Vec<u8>>) = command(&["SCAN", &cursor.to_string()])
                .arg("COUNT")
                .arg(500)
                .query(&mut con)
                .unwrap();
            for key in keys {
                let slot: u16 = redis::cmd("CLUSTER")
                    .arg("KEYSLOT")
                    .arg(&key)
                    .query(&mut con)
                    .unwrap();
                assert_eq!(
                    owner.get(&slot),
                    Some(addr),
                    "key {} (slot {slot}) is on {addr}",
                    String::from_utf8_lossy(&key)
                );
                let (value, ttl) = expected
                    .get(&key)
                    .unwrap_or_else(|| panic!("unexpected key {}", String::from_utf8_lossy(&key)));
                assert_eq!(&read(&mut con, &key, value), value);
                let expiry: i64 = redis::cmd("PEXPIRETIME").arg(&key).query(&mut con).unwrap();
                assert_eq!(expiry, *ttl, "expiry of {}", String::from_utf8_lossy(&key));
                seen += 1;
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
    }
    assert_eq!(seen, expected.len(), "every key, once");
}

/// Reads `key` as the type `like` has.
fn read(con: &mut redis::Connection, key: &[u8], like: &Expected) -> Expected {
    match like {
        Expected::String(_) => Expected::String(redis::cmd("GET").arg(key).query(con).unwrap()),
        Expected::List(_) => Expected::List(
            redis::cmd("LRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .query(con)
                .unwrap(),
        ),
        Expected::Hash(_) => Expected::Hash(redis::cmd("HGETALL").arg(key).query(con).unwrap()),
        Expected::Set(_) => {
            let mut members: Vec<Vec<u8>> = redis::cmd("SMEMBERS").arg(key).query(con).unwrap();
            members.sort();
            Expected::Set(members)
        }
        Expected::ZSet(_) => {
            // ZRANGE gives members by score, as `expected` lists them.
            let members: Vec<(Vec<u8>, f64)> = redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(con)
                .unwrap();
            Expected::ZSet(members)
        }
    }
}

/// Three `redis-server` masters in cluster mode, killed on drop.
struct RedisCluster {
    children: Vec<Child>,
    ports: Vec<u16>,
    _dir: tempfile::TempDir,
}

impl RedisCluster {
    /// Starts and creates the cluster; `None` (the test is skipped) if
    /// that is impossible and `REDCODEC_REQUIRE_REDIS=1` is not set.
    fn start() -> Option<RedisCluster> {
        match RedisCluster::try_start() {
            Ok(cluster) => Some(cluster),
            Err(e) => {
                redcodec_conformance::skip::unavailable(
                    "REDCODEC_REQUIRE_REDIS",
                    "migration into a redis-server cluster",
                    &e,
                );
                None
            }
        }
    }

    fn try_start() -> Result<RedisCluster, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let base = dir.path().to_path_buf();
        let mut cluster = RedisCluster {
            children: Vec::new(),
            ports: Vec::new(),
            _dir: dir,
        };
        for i in 0..3 {
            let node_dir = base.join(i.to_string());
            std::fs::create_dir_all(&node_dir).map_err(|e| e.to_string())?;
            let config = node_dir.join("nodes.conf");
            let config = config.to_str().ok_or("a temporary path in UTF-8")?;
            let cluster_mode = ["--cluster-enabled", "yes", "--cluster-config-file", config];
            let (child, port) = start_redis(&node_dir, &cluster_mode)?;
            cluster.children.push(child);
            cluster.ports.push(port);
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for addr in cluster.addrs() {
            create.arg(addr);
        }
        let out = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .map_err(|e| format!("cannot run redis-cli: {e} (is it installed?)"))?;
        if !out.status.success() {
            return Err(format!(
                "redis-cli --cluster create failed: {}",
                text(&out.stdout)
            ));
        }
        cluster.converge();
        Ok(cluster)
    }

    fn addrs(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect()
    }

    /// Waits until every node reports the cluster up with every slot.
    fn converge(&self) {
        let deadline = Instant::now() + CONVERGE;
        for addr in self.addrs() {
            loop {
                let info: String = command(&["CLUSTER", "INFO"])
                    .query(&mut connect(&addr))
                    .unwrap();
                if info.contains("cluster_state:ok") && owners(&mut connect(&addr)).len() == 16384 {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{addr} never saw the cluster up:\n{info}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// The node id of the master at `addr`.
    fn id(addr: &str) -> String {
        command(&["CLUSTER", "MYID"])
            .query(&mut connect(addr))
            .unwrap()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port free, with its cluster bus port (+10000).
fn free_port() -> Result<u16, String> {
    for _ in 0..50 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        if port < 55000 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return Ok(port);
        }
    }
    Err("no free port pair for a cluster node".into())
}

/// Starts a `redis-server` in `dir` with `extra` options; checks that
/// the server answering on its port is this child (`INFO` `process_id`),
/// trying another port if not.
fn start_redis(dir: &Path, extra: &[&str]) -> Result<(Child, u16), String> {
    let mut why = String::new();
    for _ in 0..3 {
        let port = free_port()?;
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start redis-server: {e} (is it installed?)"))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let own = format!("process_id:{}", child.id());
        why = format!("redis-server never answered on port {port}");
        while Instant::now() < deadline {
            let info: Result<String, _> = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                .and_then(|mut c| command(&["INFO", "server"]).query(&mut c));
            match info {
                Ok(info) if info.contains(&own) => return Ok((child, port)),
                Ok(_) => {
                    why = format!("another server answers on port {port}");
                    break;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    Err(why)
}

/// The slot of `key`, as a node computes it.
fn keyslot(addr: &str, key: &str) -> u16 {
    command(&["CLUSTER", "KEYSLOT", key])
        .query(&mut connect(addr))
        .unwrap()
}

#[test]
fn a_store_goes_into_a_redis_cluster_each_key_to_its_slots_master() {
    let Some(mut cluster) = RedisCluster::start() else {
        return;
    };
    let addrs = cluster.addrs();
    let (dir, kv, checkpoint) = source();

    // One key's slot is being migrated: its owner answers ASK for it,
    // and the key goes to the importing node after ASKING.
    let asked = "key:7";
    let slot = keyslot(&addrs[0], asked);
    let owner = owners(&mut connect(&addrs[0]))[&slot].clone();
    let importer = addrs.iter().find(|a| **a != owner).unwrap().clone();
    let setslot = |at: &str, words: &[&str]| {
        let mut c = command(&["CLUSTER", "SETSLOT", &slot.to_string()]);
        for w in words {
            c.arg(*w);
        }
        let _: () = c.query(&mut connect(at)).unwrap();
    };
    setslot(&importer, &["IMPORTING", &RedisCluster::id(&owner)]);
    setslot(&owner, &["MIGRATING", &RedisCluster::id(&importer)]);

    // The seed is the second master: any node will do.
    let url = format!("redis-cluster://{}", addrs[1]);
    let stdout = migrated_and_verified(&into_cluster(&kv, &url, &checkpoint).with(&["--verify"]));
    assert_contains(&stdout, &format!("to {url} in"));
    assert!(!checkpoint.exists(), "the checkpoint goes when done");
    let n = expected().len();
    let (held,): (bool,) = redis::pipe()
        .cmd("ASKING")
        .ignore()
        .cmd("EXISTS")
        .arg(asked)
        .query(&mut connect(&importer))
        .unwrap();
    assert!(held, "{asked} went to the importing node {importer}");

    // The slot's move completes: every key is then on its slot's master.
    let importer_id = RedisCluster::id(&importer);
    setslot(&importer, &["NODE", &importer_id]);
    setslot(&owner, &["NODE", &importer_id]);
    for addr in &addrs {
        setslot(addr, &["NODE", &importer_id]);
    }
    cluster.converge();
    assert_keys_on_their_owners(&addrs);
    let verify = Args::new("verify").src("kvrocks", &kv).dst_url(&url);
    assert_contains(&ok(&verify), &format!("{n} keys compared, all equal"));

    // A cluster holding keys is refused without --merge.
    let again = redcodec(&into_cluster(&kv, &url, &checkpoint), "");
    assert!(!again.status.success());
    assert_contains(&text(&again.stderr), "already holds");

    // A live server into the cluster: the keys come back the same.
    let single = dir.path().join("single");
    std::fs::create_dir_all(&single).unwrap();
    let (child, port) = start_redis(&single, &[]).expect("redis-server starts");
    cluster.children.push(child); // killed with the cluster
    let server = format!("redis://127.0.0.1:{port}/0");
    ok(&Args::new("migrate")
        .src("kvrocks", &kv)
        .dst_url(&server)
        .with(&["--checkpoint", path(&checkpoint)]));
    for addr in &addrs {
        let _: () = redis::cmd("FLUSHALL").query(&mut connect(addr)).unwrap();
    }
    migrated_and_verified(&Args::new("migrate").src_url(&server).dst_url(&url).with(&[
        "--checkpoint",
        path(&checkpoint),
        "--verify",
    ]));
    assert_keys_on_their_owners(&addrs);
}

/// Three `redcodec serve --cluster` nodes, each given a third of the
/// slots (version 1), and the topology text. With `stale_seed` the first
/// (the seed) believes the second also owns the third's slots: keys of
/// those go to the second, which answers `MOVED` towards the third.
fn redcodec_cluster(stale_seed: bool) -> (Vec<Node>, String) {
    let (nodes, truth) = three_nodes();
    if stale_seed {
        let stale = topology(&[
            (nodes[0].id.as_str(), nodes[0].port(), THIRDS[0]),
            (nodes[1].id.as_str(), nodes[1].port(), "5461-16383"),
        ]);
        set_nodes(&nodes[..1], &stale, 2);
    }
    (nodes, truth)
}

fn addrs(nodes: &[Node]) -> Vec<String> {
    nodes.iter().map(|n| n.addr().to_string()).collect()
}

#[test]
fn a_store_goes_into_redcodec_cluster_nodes_following_moved() {
    let (nodes, truth) = redcodec_cluster(true);
    let (_dir, kv, checkpoint) = source();
    let url = format!("redis-cluster://{}", nodes[0].addr());
    migrated_and_verified(&into_cluster(&kv, &url, &checkpoint).with(&["--verify"]));
    // The seed learns the truth; every key is on its slot's master.
    set_nodes(&nodes[..1], &truth, 3);
    assert_keys_on_their_owners(&addrs(&nodes));
}

#[test]
fn an_interrupted_migration_into_a_cluster_resumes() {
    let (nodes, _) = redcodec_cluster(false);
    let (_dir, kv, checkpoint) = source();
    let url = format!("redis-cluster://{}", nodes[2].addr());
    let args = |extra: &[&'static str]| {
        into_cluster(&kv, &url, &checkpoint)
            .with(&["--batch-elements", "20"])
            .with(extra)
    };
    // 20 elements a pipeline: "big:hash" (1,500) is whole after 75, and
    // "big:list" (2,500) half sent after 100.
    kill_when_paused(
        binary().args(&*args(&["--pause-after-commits", "100"])),
        100,
    );
    assert!(
        checkpoint.exists(),
        "the interrupted run leaves its checkpoint"
    );
    let written: usize = addrs(&nodes)
        .iter()
        .map(|a| -> usize { redis::cmd("DBSIZE").query(&mut connect(a)).unwrap() })
        .sum();
    let n = expected().len();
    assert!((1..n).contains(&written), "part of the keys: {written}");

    let refused = redcodec(&args(&[]), "");
    assert!(!refused.status.success());
    assert_contains(&text(&refused.stderr), "resume it (--resume)");

    let stdout = migrated_and_verified(&args(&["--resume", "--verify"]));
    assert_contains(&stdout, "resumed after key \"big:hash\"");
    assert!(!checkpoint.exists());
    assert_keys_on_their_owners(&addrs(&nodes));
}
