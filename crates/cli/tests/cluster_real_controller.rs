//! redcodec cluster nodes under the real apache/kvrocks-controller: its
//! server binary (`REDCODEC_KVCTL_BIN`, built from the controller's
//! `cmd/server`) on an etcd (`REDCODEC_ETCD_BIN`, Debian's
//! `etcd-server`), driven only through the controller's HTTP API. Without
//! both binaries a test records a skip, or fails with
//! `REDCODEC_REQUIRE_KVCTL=1`; the mixed test also needs a real Kvrocks
//! (`REDCODEC_KVROCKS_BIN`, see `kvrocks_support`).
//!
//! The controller's Go module is refused by the module proxy CI reaches,
//! so CI cannot install it: these tests are run where the binaries exist
//! (docs/src/cluster.md says how and when).
//!
//! The controller's migration task ends on its first one-second tick: it
//! reads `migrating_slot:` from CLUSTER INFO, where Kvrocks 2.10 (and
//! redcodec, which matches it) write `migrating_slot(s): `, so it aborts
//! the task with "mismatched slot" and leaves the topology as it was; the
//! slot itself has moved on the nodes. [`Controller::move_slot`] then
//! finishes as an operator does: the controller's `slot_only` API
//! publishes the topology that gives the slot to the target.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod serve_support;

mod cluster_support;
use cluster_support::{Conn, Node, R};

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

/// The controller's and etcd's binaries, or a recorded skip of `test`.
fn controller_bins(test: &str) -> Option<(PathBuf, PathBuf)> {
    let var = |name: &str| std::env::var_os(name).filter(|p| !p.is_empty());
    match (var("REDCODEC_KVCTL_BIN"), var("REDCODEC_ETCD_BIN")) {
        (Some(kvctl), Some(etcd)) => Some((kvctl.into(), etcd.into())),
        _ => {
            redcodec_conformance::skip::unavailable(
                "REDCODEC_REQUIRE_KVCTL",
                test,
                "REDCODEC_KVCTL_BIN and REDCODEC_ETCD_BIN do not both name binaries \
                 (kvrocks-controller's server and etcd)",
            );
            None
        }
    }
}

/// A free loopback port.
fn free_port() -> u16 {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    assert!(port > 27900, "a port above 27900: {port}");
    port
}

/// Calls `f` until it returns `Some`, for at most 60 s.
fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "never happened in 60 s: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One HTTP/1.0 exchange (no chunked replies); the status and the JSON
/// body, or `None` when nothing answers.
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> Option<(u16, Value)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).ok()?;
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).ok()?;
    let reply = String::from_utf8_lossy(&reply);
    let (head, body) = reply.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, serde_json::from_str(body).unwrap_or(Value::Null)))
}

/// etcd and kvrocks-controller on it, both killed on drop.
struct Controller {
    etcd: Child,
    server: Child,
    /// The controller's HTTP address.
    addr: String,
    /// Where the controller logs (JSON lines).
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Controller {
    /// Starts etcd on a fresh data directory and the controller on it;
    /// returns once the controller leads and answers.
    fn start(kvctl: &Path, etcd_bin: &Path) -> Controller {
        let tmp = tempfile::tempdir().unwrap();
        let (client, peer, http_port) = (free_port(), free_port(), free_port());
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let etcd_log = std::fs::File::create(tmp.path().join("etcd.log")).unwrap();
        let etcd = Command::new(etcd_bin)
            .arg("--data-dir")
            .arg(tmp.path().join("etcd"))
            .args(["--listen-client-urls", &client_url])
            .args(["--advertise-client-urls", &client_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("default={peer_url}")])
            .stdout(Stdio::null())
            .stderr(etcd_log)
            .spawn()
            .expect("etcd starts");
        let etcd_addr = format!("127.0.0.1:{client}");
        eventually("etcd answers /health", || {
            let (status, body) = http(&etcd_addr, "GET", "/health", None)?;
            (status == 200 && body["health"] == "true").then_some(())
        });
        let addr = format!("127.0.0.1:{http_port}");
        let config = tmp.path().join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "addr: \"{addr}\"\nstorage_type: etcd\netcd:\n  addrs:\n    - \"{etcd_addr}\"\n\
                 controller:\n  failover:\n    gc_interval_seconds: 3600\n    \
                 ping_interval_seconds: 5\n    min_alive_size: 10\n    max_failure_ratio: 0.6\n"
            ),
        )
        .unwrap();
        let log = tmp.path().join("controller.log");
        let out = std::fs::File::create(&log).unwrap();
        let server = Command::new(kvctl)
            .arg("-c")
            .arg(&config)
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("kvrocks-controller starts");
        let c = Controller {
            etcd,
            server,
            addr,
            log,
            _tmp: tmp,
        };
        eventually("the controller leads and lists namespaces", || {
            let (status, _) = http(&c.addr, "GET", "/api/v1/namespaces", None)?;
            (status == 200).then_some(())
        });
        c
    }

    /// A call that must answer `status` with `{"data": data}`.
    fn call(&self, method: &str, path: &str, body: Option<Value>, status: u16) -> Value {
        let (got, reply) = http(
            &self.addr,
            method,
            &format!("/api/v1/{path}"),
            body.as_ref(),
        )
        .unwrap_or_else(|| panic!("the controller did not answer {method} {path}"));
        assert_eq!(got, status, "{method} {path}: {reply}\n{}", self.log_text());
        reply["data"].clone()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `POST /namespaces`.
    fn create_namespace(&self, ns: &str) {
        let data = self.call("POST", "namespaces", Some(json!({ "namespace": ns })), 201);
        assert_eq!(data, "created");
    }

    /// `POST /namespaces/{ns}/clusters`: one master a node, the slots split
    /// evenly in the order given.
    fn create_cluster(&self, ns: &str, name: &str, nodes: &[String]) {
        self.create_cluster_of(ns, name, nodes, 1);
    }

    /// `POST /namespaces/{ns}/clusters` with `replicas` nodes a shard:
    /// the first of each group of `replicas` is its master, the others
    /// its replicas.
    fn create_cluster_of(&self, ns: &str, name: &str, nodes: &[String], replicas: usize) {
        let body = json!({ "name": name, "nodes": nodes, "replicas": replicas });
        let data = self.call(
            "POST",
            &format!("namespaces/{ns}/clusters"),
            Some(body),
            201,
        );
        assert_eq!(data, "created");
    }

    /// `GET /namespaces/{ns}/clusters/{name}`: the cluster's metadata.
    fn cluster(&self, ns: &str, name: &str) -> Cluster {
        let data = self.call(
            "GET",
            &format!("namespaces/{ns}/clusters/{name}"),
            None,
            200,
        );
        let c = &data["cluster"];
        Cluster {
            version: c["version"].as_i64().unwrap(),
            shards: c["shards"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| Shard {
                    id: s["nodes"][0]["id"].as_str().unwrap().to_string(),
                    addr: s["nodes"][0]["addr"].as_str().unwrap().to_string(),
                    // `null` for a shard without a slot.
                    slots: s["slot_ranges"]
                        .as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|r| r.as_str().unwrap().to_string())
                        .collect(),
                })
                .collect(),
        }
    }

    /// `POST …/shards`: a shard of one master, no slot.
    fn add_shard(&self, ns: &str, name: &str, addr: &str) {
        let path = format!("namespaces/{ns}/clusters/{name}/shards");
        let data = self.call("POST", &path, Some(json!({ "nodes": [addr] })), 201);
        assert_eq!(data, "ok");
    }

    /// The controller's log lines that end a migration task of `slot`
    /// from shard `source` to shard `target` of `ns`/`name`: (message,
    /// error).
    fn task_ends(
        &self,
        ns: &str,
        name: &str,
        (source, target, slot): (usize, usize, u16),
    ) -> Vec<(String, String)> {
        self.log_text()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|v| {
                let t = &v["task"];
                t["namespace"] == ns
                    && t["cluster"] == name
                    && t["source"] == source
                    && t["target"] == target
                    && t["slot"] == slot
            })
            .map(|v| {
                let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                (text("msg"), text("error"))
            })
            .collect()
    }

    /// Moves `slot` from shard `source` to shard `target` through the
    /// controller: `POST …/shards/migration/slot_data`, the source's
    /// CLUSTER INFO polled until the move succeeded, the controller's
    /// task waited for; when the controller aborted it with "mismatched
    /// slot" (see the top of this file), `POST …/shards/migration/slot_only`
    /// publishes the new topology. Returns once every node of the cluster
    /// has the version that gives the slot to the target; tells whether
    /// `slot_only` was needed.
    fn move_slot(&self, ns: &str, name: &str, source: usize, target: usize, slot: u16) -> bool {
        let before = self.cluster(ns, name);
        let (src, dst) = (&before.shards[source], &before.shards[target]);
        let task = (source, target, slot);
        let ended = self.task_ends(ns, name, task).len();
        let body = json!({ "source": source, "target": target, "slot": slot });
        let path = format!("namespaces/{ns}/clusters/{name}/shards/migration/slot_data");
        assert_eq!(self.call("POST", &path, Some(body), 200), "ok");

        // The nodes move the slot.
        let mut c = Conn::open(&src.addr);
        eventually(&format!("slot {slot} migrated from {}", src.addr), || {
            let state = info_field(&mut c, "migrating_state");
            assert_ne!(state.as_deref(), Some("fail"), "the migration failed");
            (state.as_deref() == Some("success")
                && info_field(&mut c, "migrating_slot(s)") == Some(slot.to_string()))
            .then_some(())
        });
        assert_eq!(info_field(&mut c, "destination_node"), Some(dst.id.clone()));

        // The controller ends its task.
        let (msg, error) = eventually("the controller ends its migration task", || {
            self.task_ends(ns, name, task).into_iter().nth(ended)
        });
        let aborted = match msg.as_str() {
            "Success to migrate the slot" => false,
            "Aborted the migrate task" => {
                assert_eq!(error, "mismatched slot", "why the controller aborted");
                let body =
                    json!({ "source": source, "target": target, "slots": [slot.to_string()] });
                let path = format!("namespaces/{ns}/clusters/{name}/shards/migration/slot_only");
                assert_eq!(self.call("POST", &path, Some(body), 200), "ok");
                true
            }
            other => panic!("the controller's task ended with {other:?}"),
        };

        // The topology gives the slot to the target, on every node.
        let after = self.cluster(ns, name);
        assert_eq!(after.version, before.version + 1);
        assert!(
            !after.shards[source].owns(slot) && after.shards[target].owns(slot),
            "{after:?}"
        );
        for shard in &after.shards {
            let mut c = Conn::open(&shard.addr);
            eventually(
                &format!("{} at version {}", shard.addr, after.version),
                || {
                    (info_field(&mut c, "cluster_current_epoch") == Some(after.version.to_string()))
                        .then_some(())
                },
            );
        }
        aborted
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        for child in [&mut self.server, &mut self.etcd] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A cluster as the controller keeps it.
#[derive(Debug)]
struct Cluster {
    version: i64,
    shards: Vec<Shard>,
}

/// A shard of one master.
#[derive(Debug)]
struct Shard {
    id: String,
    addr: String,
    /// `"0-5460"`, `"16383"`, …
    slots: Vec<String>,
}

impl Shard {
    fn owns(&self, slot: u16) -> bool {
        self.slots.iter().any(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            (a.parse().unwrap()..=b.parse().unwrap()).contains(&slot)
        })
    }
}

/// A CLUSTER INFO field, split as the controller's `util.ClusterInfoCmd`
/// splits it (`None` too before the node has a topology).
fn info_field(c: &mut Conn, key: &str) -> Option<String> {
    let R::Bulk(Some(info)) = c.call(&["CLUSTER", "INFO"]) else {
        return None;
    };
    let info = String::from_utf8_lossy(&info);
    info.split('\n').find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// Every node's CLUSTER NODES and CLUSTER INFO say what the controller
/// keeps: its ids, addresses, slots and version.
fn nodes_agree(cluster: &Cluster) {
    for shard in &cluster.shards {
        let mut c = Conn::open(&shard.addr);
        let nodes = c.call(&["CLUSTER", "NODES"]).text();
        let mut lines: Vec<Vec<&str>> = nodes.lines().map(|l| l.split(' ').collect()).collect();
        lines.sort_by_key(|f| f[0]);
        let mut want: Vec<&Shard> = cluster.shards.iter().collect();
        want.sort_by_key(|s| s.id.as_str());
        assert_eq!(lines.len(), want.len(), "{}: {nodes}", shard.addr);
        for (f, s) in lines.iter().zip(want) {
            assert_eq!(f[0], s.id, "{nodes}");
            let port: u16 = s.addr.rsplit(':').next().unwrap().parse().unwrap();
            assert_eq!(f[1], format!("{}@{}", s.addr, port + 10000));
            let me = if s.id == shard.id {
                "myself,master"
            } else {
                "master"
            };
            assert_eq!((f[2], f[3]), (me, "-"), "{nodes}");
            assert_eq!(f[6], cluster.version.to_string());
            assert_eq!(f[7], "connected");
            assert_eq!(f[8..].join(" "), s.slots.join(" "), "{nodes}");
        }
        let owning = cluster
            .shards
            .iter()
            .filter(|s| !s.slots.is_empty())
            .count();
        for (k, v) in [
            ("cluster_state", "ok".to_string()),
            ("cluster_slots_assigned", "16384".into()),
            ("cluster_known_nodes", cluster.shards.len().to_string()),
            ("cluster_size", owning.to_string()),
            ("cluster_current_epoch", cluster.version.to_string()),
        ] {
            assert_eq!(info_field(&mut c, k), Some(v), "{k} on {}", shard.addr);
        }
    }
}

/// Waits until `c` holds no key of `slot` (a node deletes the keys of a
/// slot it gave away once it has taken the topology that says so).
fn emptied(c: &mut Conn, slot: u16) {
    eventually(&format!("slot {slot} emptied"), || {
        (c.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]) == R::Int(0)).then_some(())
    });
}

/// The `redis` crate's cluster client, seeded with `addrs`.
fn client(addrs: &[String]) -> redis::cluster::ClusterConnection {
    let urls: Vec<String> = addrs.iter().map(|a| format!("redis://{a}/")).collect();
    redis::cluster::ClusterClient::new(urls)
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Every key in `acked` holds its value, read through a fresh cluster
/// client.
fn all_present(addrs: &[String], acked: &[(String, usize)]) {
    let mut conn = client(addrs);
    for (k, v) in acked {
        let got: Option<usize> = redis::cmd("GET").arg(k).query(&mut conn).unwrap();
        assert_eq!(got, Some(*v), "acknowledged write {k} = {v}");
    }
}

/// A cluster client that writes until told to stop; what it counted
/// acknowledged.
struct Writer {
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<(Vec<(String, usize)>, usize)>,
}

impl Writer {
    /// Writes `{tag}:w<i>` and `w<i>` keys, alternately, through a
    /// cluster client on `addrs`.
    fn start(addrs: Vec<String>, tag: &'static str) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let acked = Arc::new(AtomicUsize::new(0));
        let (s, a) = (stop.clone(), acked.clone());
        let thread = std::thread::spawn(move || {
            let mut conn = client(&addrs);
            let (mut done, mut failed) = (Vec::new(), 0);
            let mut i = 0;
            while !s.load(Ordering::SeqCst) {
                let key = if i % 2 == 0 {
                    format!("{{{tag}}}:w{i}")
                } else {
                    format!("w{i}")
                };
                match redis::cmd("SET").arg(&key).arg(i).query::<()>(&mut conn) {
                    Ok(()) => {
                        done.push((key, i));
                        a.fetch_add(1, Ordering::SeqCst);
                    }
                    // Not acknowledged: not counted (a MOVED ping-pong
                    // may outlast the client's retries until the
                    // controller publishes the new topology).
                    Err(_) => failed += 1,
                }
                i += 1;
                // At most about 1,000 writes a second, 500 to the moving
                // slot: below what a migration at the default
                // `migrate-speed` (4096 commands a second, a rewritten
                // key taking two) sends again, so its catch-up rounds
                // shrink.
                std::thread::sleep(Duration::from_millis(1));
            }
            (done, failed)
        });
        Writer {
            stop,
            acked,
            thread,
        }
    }

    /// Waits for `n` more acknowledged writes.
    fn wait_for(&self, n: usize) {
        let from = self.acked.load(Ordering::SeqCst);
        eventually(&format!("{n} more acknowledged writes"), || {
            (self.acked.load(Ordering::SeqCst) >= from + n).then_some(())
        });
    }

    /// Stops; the acknowledged writes and the count of failed ones.
    fn stop(self) -> (Vec<(String, usize)>, usize) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the writer does not panic")
    }
}

/// The tag `{3560}` hashes to slot 0, `{22179}` to slot 1, `{39296}` to
/// slot 16383.
const SLOT_0: &str = "3560";
const SLOT_1: &str = "22179";
const SLOT_16383: &str = "39296";

#[test]
fn three_redcodec_nodes_under_the_real_controller() {
    let Some((kvctl, etcd)) = controller_bins("three redcodec nodes under kvrocks-controller")
    else {
        return;
    };
    let ctl = Controller::start(&kvctl, &etcd);
    let nodes: Vec<Node> = (0..3).map(|i| Node::start(i, &[])).collect();
    let addrs: Vec<String> = nodes.iter().map(|n| n.addr().to_string()).collect();

    // Create: the controller checks every node (CLUSTER INFO answers
    // CLUSTERDOWN "The cluster is not initialized"), gives each a third
    // of the slots and sends SETNODEID and SETNODES (version 1).
    ctl.create_namespace("ns");
    ctl.create_cluster("ns", "c", &addrs);
    let v1 = ctl.cluster("ns", "c");
    assert_eq!(v1.version, 1);
    let slots: Vec<Vec<String>> = v1.shards.iter().map(|s| s.slots.clone()).collect();
    assert_eq!(slots, [["0-5460"], ["5461-10921"], ["10922-16383"]]);
    for n in &nodes {
        let mut c = n.conn();
        eventually(&format!("{} at version 1", n.addr()), || {
            (info_field(&mut c, "cluster_current_epoch") == Some("1".into())).then_some(())
        });
    }
    nodes_agree(&v1);

    // A cluster client writes and reads.
    let mut conn = client(&addrs);
    for i in 0..300 {
        let () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }
    let got: Vec<Option<usize>> = (0..300)
        .map(|i| {
            redis::cmd("GET")
                .arg(format!("k{i}"))
                .query(&mut conn)
                .unwrap()
        })
        .collect();
    assert_eq!(got, (0..300).map(Some).collect::<Vec<_>>());
    for n in &nodes {
        let R::Int(size) = n.conn().call(&["DBSIZE"]) else {
            panic!()
        };
        assert!(size > 50, "{} holds {size} of the 300 keys", n.addr());
    }

    // Slot 0 (the first node's, with 2,000 keys) moves to the second
    // node while the client keeps writing, half of it to slot 0.
    let mut first = nodes[0].conn();
    let mut preloaded = Vec::new();
    for i in 0..2000 {
        let key = format!("{{{SLOT_0}}}:p{i}");
        assert_eq!(first.call(&["SET", &key, &i.to_string()]), R::ok());
        preloaded.push((key, i));
    }
    let writer = Writer::start(addrs.clone(), SLOT_0);
    writer.wait_for(200);
    let slot_only = ctl.move_slot("ns", "c", 0, 1, 0);
    writer.wait_for(200);
    let (acked, failed) = writer.stop();
    let v2 = ctl.cluster("ns", "c");
    nodes_agree(&v2);
    emptied(&mut first, 0);
    let in_slot_0 = acked.iter().filter(|(k, _)| k.starts_with('{')).count();
    assert_eq!(
        nodes[1].conn().call(&["CLUSTER", "COUNTKEYSINSLOT", "0"]),
        R::Int((2000 + in_slot_0) as i64)
    );
    all_present(&addrs, &preloaded);
    all_present(&addrs, &acked);
    eprintln!(
        "slot 0 moved under the controller (slot_only needed: {slot_only}): \
         {} writes acknowledged, {failed} not, all present",
        acked.len()
    );

    // Add a shard (version 3), then move slot 16383 to it (version 4)
    // while the client writes to it.
    let fourth = Node::start(3, &[]);
    ctl.add_shard("ns", "c", fourth.addr());
    let v3 = ctl.cluster("ns", "c");
    assert_eq!((v3.version, v3.shards.len()), (3, 4));
    assert_eq!(v3.shards[3].addr, fourth.addr());
    let mut c = fourth.conn();
    eventually("the new shard's node at version 3", || {
        (info_field(&mut c, "cluster_current_epoch") == Some("3".into())).then_some(())
    });
    nodes_agree(&v3);
    let mut third = nodes[2].conn();
    for i in 0..200 {
        let key = format!("{{{SLOT_16383}}}:p{i}");
        assert_eq!(third.call(&["SET", &key, &i.to_string()]), R::ok());
    }
    let writer = Writer::start(addrs.clone(), SLOT_16383);
    writer.wait_for(100);
    ctl.move_slot("ns", "c", 2, 3, 16383);
    writer.wait_for(100);
    let (acked_2, _) = writer.stop();
    let v4 = ctl.cluster("ns", "c");
    nodes_agree(&v4);
    assert_eq!(v4.shards[3].slots, ["16383"]);
    assert_eq!(v4.shards[2].slots, ["10922-16382"]);
    emptied(&mut third, 16383);
    let in_16383 = acked_2.iter().filter(|(k, _)| k.starts_with('{')).count();
    assert_eq!(
        c.call(&["CLUSTER", "COUNTKEYSINSLOT", "16383"]),
        R::Int((200 + in_16383) as i64)
    );
    // Everything written, through a client that only knows the new node.
    let all = [fourth.addr().to_string()];
    all_present(&all, &acked);
    all_present(&all, &acked_2);
    all_present(&all, &preloaded);
}

/// Keys of every type in the slot of hash tag `tag`, written on `c`; a
/// third carry a TTL.
fn write_typed(c: &mut Conn, tag: &str, n: usize) -> Vec<String> {
    let mut keys = Vec::new();
    for i in 0..n {
        let k = |t: &str| format!("{{{tag}}}:{t}{i}");
        let (s, h, l, st, z) = (k("s"), k("h"), k("l"), k("set"), k("z"));
        assert_eq!(c.call(&["SET", &s, &format!("v{i}")]), R::ok());
        assert_eq!(
            c.call(&["HSET", &h, "a", "1", "b", &i.to_string()]),
            R::Int(2)
        );
        assert_eq!(c.call(&["RPUSH", &l, "x", "y", &i.to_string()]), R::Int(3));
        assert_eq!(c.call(&["SADD", &st, "m", &i.to_string()]), R::Int(2));
        let score = format!("-{i}.5");
        assert_eq!(c.call(&["ZADD", &z, &score, "a", "3", "b"]), R::Int(2));
        if i % 3 == 0 {
            for key in [&s, &h, &l] {
                assert_eq!(c.call(&["PEXPIRE", key, "3600000"]), R::Int(1));
            }
        }
        keys.extend([s, h, l, st, z]);
    }
    keys
}

/// What `c` holds under `keys`: each key's value in a canonical form and
/// whether it has a TTL (checked to be within an hour).
fn contents(c: &mut Conn, keys: &[String]) -> Vec<(String, String, bool)> {
    keys.iter()
        .map(|k| {
            let kind = c.call(&["TYPE", k]).text();
            let value = match kind.as_str() {
                "string" => format!("{:?}", c.call(&["GET", k])),
                "hash" => format!("{:?}", c.call(&["HGETALL", k])),
                "list" => format!("{:?}", c.call(&["LRANGE", k, "0", "-1"])),
                "set" => {
                    let R::Array(Some(mut m)) = c.call(&["SMEMBERS", k]) else {
                        panic!("SMEMBERS {k}")
                    };
                    m.sort_by_key(|r| format!("{r:?}"));
                    format!("{m:?}")
                }
                "zset" => format!("{:?}", c.call(&["ZRANGE", k, "0", "-1", "WITHSCORES"])),
                other => panic!("{k} is a {other}"),
            };
            let R::Int(ttl) = c.call(&["PTTL", k]) else {
                panic!("PTTL {k}")
            };
            assert!(
                ttl == -1 || (0..=3_600_000).contains(&ttl),
                "PTTL {k}: {ttl}"
            );
            (format!("{kind} {k}"), value, ttl >= 0)
        })
        .collect()
}

#[test]
fn a_slot_moves_between_kvrocks_and_redcodec_under_the_real_controller() {
    let test = "a slot between Kvrocks and redcodec under kvrocks-controller";
    let Some((kvctl, etcd)) = controller_bins(test) else {
        return;
    };
    let Some(kvrocks) = kvrocks_bin(test) else {
        return;
    };
    let ctl = Controller::start(&kvctl, &etcd);
    let kv = Kvrocks::start(&kvrocks, "cluster-enabled yes\n");
    let rc = Node::start(0, &[]);
    let addrs = vec![kv.addr(), rc.addr().to_string()];
    ctl.create_namespace("ns");
    ctl.create_cluster("ns", "mixed", &addrs);
    let v1 = ctl.cluster("ns", "mixed");
    for a in &addrs {
        let mut c = Conn::open(a);
        eventually(&format!("{a} at version 1"), || {
            (info_field(&mut c, "cluster_current_epoch") == Some("1".into())).then_some(())
        });
    }
    nodes_agree(&v1);

    // Slots 0 and 1 are Kvrocks' (shard 0): 100 keys of each type in
    // each. (Every move is of a slot its source has not moved before: a
    // source's CLUSTER INFO keeps its last move's state.)
    let mut k = Conn::open(&kv.addr());
    let mut r = rc.conn();
    assert_eq!(r.call(&["CLUSTER", "KEYSLOT", SLOT_1]), R::Int(1));
    let mut keys = write_typed(&mut k, SLOT_0, 100);
    let written = contents(&mut k, &keys);
    assert_eq!(written.iter().filter(|(_, _, ttl)| *ttl).count(), 34 * 3);
    let keys_1 = write_typed(&mut k, SLOT_1, 100);
    let written_1 = contents(&mut k, &keys_1);

    // Kvrocks → redcodec, as typed commands (Kvrocks' redis-command).
    assert_eq!(
        k.call(&["CONFIG", "SET", "migrate-type", "redis-command"]),
        R::ok()
    );
    ctl.move_slot("ns", "mixed", 0, 1, 0);
    assert_eq!(contents(&mut r, &keys), written);
    nodes_agree(&ctl.cluster("ns", "mixed"));

    // redcodec → Kvrocks (redcodec sends commands), with a key written
    // on redcodec meanwhile.
    assert_eq!(r.call(&["SET", &format!("{{{SLOT_0}}}:new"), "n"]), R::ok());
    keys.push(format!("{{{SLOT_0}}}:new"));
    let written = contents(&mut r, &keys);
    ctl.move_slot("ns", "mixed", 1, 0, 0);
    assert_eq!(contents(&mut k, &keys), written);
    emptied(&mut r, 0);
    nodes_agree(&ctl.cluster("ns", "mixed"));

    // Kvrocks → redcodec, raw (APPLYBATCH of Kvrocks' write batches).
    assert_eq!(
        k.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]),
        R::ok()
    );
    ctl.move_slot("ns", "mixed", 0, 1, 1);
    assert_eq!(contents(&mut r, &keys_1), written_1);
    assert_eq!(
        r.call(&["CLUSTER", "COUNTKEYSINSLOT", "1"]),
        R::Int(keys_1.len() as i64)
    );
    nodes_agree(&ctl.cluster("ns", "mixed"));

    // A cluster client reads the moved keys and writes on both nodes.
    let mut conn = client(&addrs);
    for tag in [SLOT_0, SLOT_1] {
        let v: String = redis::cmd("GET")
            .arg(format!("{{{tag}}}:s7"))
            .query(&mut conn)
            .unwrap();
        assert_eq!(v, "v7");
    }
    for i in 0..100 {
        let () = redis::cmd("SET")
            .arg(format!("m{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }
    let on_kvrocks = (0..100)
        .filter(|i| k.call(&["EXISTS", &format!("m{i}")]) == R::Int(1))
        .count();
    let R::Int(on_redcodec) = r.call(&["DBSIZE"]) else {
        panic!()
    };
    assert!(on_kvrocks > 20, "{on_kvrocks} of 100 keys on Kvrocks");
    assert_eq!(on_kvrocks as i64 + on_redcodec, 100 + keys_1.len() as i64);
}

/// The roles the controller keeps for the nodes of shard `shard`:
/// (address, role) in its order, and the cluster's version.
fn shard_roles(
    ctl: &Controller,
    ns: &str,
    name: &str,
    shard: usize,
) -> (Vec<(String, String)>, i64) {
    let data = ctl.call(
        "GET",
        &format!("namespaces/{ns}/clusters/{name}"),
        None,
        200,
    );
    let c = &data["cluster"];
    let roles = c["shards"][shard]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let text = |k: &str| n[k].as_str().unwrap().to_string();
            (text("addr"), text("role"))
        })
        .collect();
    (roles, c["version"].as_i64().unwrap())
}

/// An `INFO replication` field of the node at `addr`.
fn replication_field(addr: &str, key: &str) -> Option<String> {
    let info = Conn::open(addr).call(&["INFO", "replication"]).text();
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim().to_string())
    })
}

/// Waits until every replica holds the keys of its master.
fn replicas_caught_up(pairs: &[(&Node, &Node)]) {
    for (master, replica) in pairs {
        let mut m = master.conn();
        let mut r = replica.conn();
        eventually(
            &format!("{} holds what {} holds", replica.addr(), master.addr()),
            || {
                let want = m.call(&["DBSIZE"]);
                (r.call(&["DBSIZE"]) == want).then_some(())
            },
        );
    }
}

#[test]
fn replicas_follow_and_a_failover_promotes_one_under_the_real_controller() {
    let Some((kvctl, etcd)) = controller_bins("replicas and a failover under kvrocks-controller")
    else {
        return;
    };
    let ctl = Controller::start(&kvctl, &etcd);
    // Two shards of a master and a replica each.
    let nodes: Vec<Node> = (0..4).map(|i| Node::start(i, &[])).collect();
    let addrs: Vec<String> = nodes.iter().map(|n| n.addr().to_string()).collect();
    ctl.create_namespace("ns");
    ctl.create_cluster_of("ns", "r", &addrs, 2);
    let (roles, version) = shard_roles(&ctl, "ns", "r", 0);
    assert_eq!(version, 1);
    assert_eq!(
        roles,
        [
            (addrs[0].clone(), "master".into()),
            (addrs[1].clone(), "slave".into())
        ]
    );
    for n in &nodes {
        let mut c = n.conn();
        eventually(&format!("{} at version 1", n.addr()), || {
            (info_field(&mut c, "cluster_current_epoch") == Some("1".into())).then_some(())
        });
    }
    // Each replica follows its master, as the topology says.
    for (replica, master) in [(1, 0), (3, 2)] {
        let port = nodes[master].port().to_string();
        eventually(
            &format!("{} follows {}", addrs[replica], addrs[master]),
            || {
                (replication_field(&addrs[replica], "master_port").as_deref()
                    == Some(port.as_str())
                    && replication_field(&addrs[replica], "master_link_status").as_deref()
                        == Some("up"))
                .then_some(())
            },
        );
    }

    // A cluster client writes; the replicas receive it.
    let writer = Writer::start(addrs.clone(), SLOT_0);
    writer.wait_for(300);
    let (acked, _) = writer.stop();
    replicas_caught_up(&[(&nodes[0], &nodes[1]), (&nodes[2], &nodes[3])]);

    // Failover of shard 0: the controller promotes the replica with the
    // largest `slave_repl_offset` and publishes version 2; the old master
    // then follows the new one.
    let path = "namespaces/ns/clusters/r/shards/0/failover";
    assert_eq!(ctl.call("POST", path, None, 200), "ok");
    let roles = eventually("the controller promotes the replica", || {
        let (roles, version) = shard_roles(&ctl, "ns", "r", 0);
        (version == 2).then_some(roles)
    });
    assert_eq!(
        roles,
        [
            (addrs[0].clone(), "slave".into()),
            (addrs[1].clone(), "master".into())
        ]
    );
    let port = nodes[1].port().to_string();
    eventually("the old master follows the new one", || {
        (replication_field(&addrs[0], "master_port").as_deref() == Some(port.as_str())
            && replication_field(&addrs[0], "master_link_status").as_deref() == Some("up"))
        .then_some(())
    });
    assert_eq!(
        replication_field(&addrs[1], "role").as_deref(),
        Some("master")
    );

    // Writes go on through the new master; nothing acknowledged is lost.
    let writer = Writer::start(addrs.clone(), SLOT_0);
    writer.wait_for(300);
    let (acked_2, _) = writer.stop();
    all_present(&addrs, &acked);
    all_present(&addrs, &acked_2);
    replicas_caught_up(&[(&nodes[1], &nodes[0]), (&nodes[2], &nodes[3])]);
    eprintln!(
        "failover under the controller: {} writes before, {} after, all present",
        acked.len(),
        acked_2.len()
    );
}
