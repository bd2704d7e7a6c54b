//! `redcodec serve --format kvrocks --cluster`: Kvrocks' cluster protocol
//! (CLUSTERX, CLUSTER, MOVED, CROSSSLOT…) with Kvrocks' replies and texts
//! (src/commands/cmd_cluster.cc, src/cluster/cluster.cc), the topology
//! kept in `nodes.conf` across a restart, and the `redis` crate's cluster
//! client over three nodes.

use std::process::Command;

mod serve_support;
use serve_support::store_dir;

mod cluster_support;
use cluster_support::{node_id, three_nodes, topology, Node, R, THIRDS};

/// Starts `serve --cluster --port 0` on a fresh store with `args`, which
/// must refuse to start; its standard error.
fn refused_start(args: &[&str]) -> String {
    let (_tmp, dir) = store_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(["serve", "--cluster", "--port", "0"])
        .args(args)
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success(), "served with {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn cluster_needs_the_kvrocks_format() {
    for format in ["nemo", "blackwidow", "floyd", "ardb"] {
        let err = refused_start(&["--format", format]);
        assert!(
            err.contains("serve --cluster needs --format kvrocks"),
            "{format}: {err}"
        );
    }
}

#[test]
fn before_a_topology() {
    let node = Node::start(0, &[]);
    let mut c = node.conn();
    let down = R::err("CLUSTERDOWN The cluster is not initialized");
    for sub in ["INFO", "NODES", "SLOTS"] {
        assert_eq!(c.call(&["CLUSTER", sub]), down, "CLUSTER {sub}");
    }
    assert_eq!(c.call(&["CLUSTER", "REPLICAS", &node.id]), down);
    assert_eq!(
        c.call(&["SET", "foo", "1"]),
        R::err("CLUSTERDOWN Hash slot not served")
    );
    // Keyless commands run.
    assert_eq!(c.call(&["PING"]), R::Status("PONG".into()));
    assert_eq!(c.call(&["DBSIZE"]), R::Int(0));
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), R::bulk("-1"));
    assert_eq!(c.call(&["CLUSTERX", "MYID"]), R::bulk(""));
    assert_eq!(c.call(&["CLUSTER", "KEYSLOT", "foo"]), R::Int(12182));
    assert_eq!(c.call(&["CLUSTER", "KEYSLOT", "{user}a"]), R::Int(5474));
    let info = c.call(&["INFO", "cluster"]).text();
    assert!(info.contains("cluster_enabled:1\r\n"), "{info}");
}

#[test]
fn argument_errors_have_kvrocks_texts() {
    let node = Node::start(0, &[]);
    let mut c = node.conn();
    let id = node.id.clone();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["CLUSTER", "SHARDS"],
            "ERR CLUSTER command, CLUSTER INFO|NODES|SLOTS|KEYSLOT|RESET|REPLICAS",
        ),
        (
            vec!["CLUSTER", "INFO", "x"],
            "ERR CLUSTER command, CLUSTER INFO|NODES|SLOTS|KEYSLOT|RESET|REPLICAS",
        ),
        (vec!["CLUSTER", "RESET", "medium"], "ERR syntax error"),
        (vec!["CLUSTER", "IMPORT", "1"], "ERR wrong number of arguments"),
        (vec!["CLUSTER", "IMPORT", "1", "4"], "ERR Invalid import state"),
        (
            vec!["CLUSTER", "IMPORT", "16384", "0"],
            "ERR Invalid slot id: out of numeric range",
        ),
        (
            vec!["CLUSTERX", "FOO"],
            "ERR CLUSTERX command, CLUSTERX VERSION|MYID|SETNODEID|SETNODES|SETSLOT|MIGRATE",
        ),
        (
            vec!["CLUSTERX", "SETNODEID", "abc"],
            "ERR CLUSTERX command, CLUSTERX VERSION|MYID|SETNODEID|SETNODES|SETSLOT|MIGRATE",
        ),
        (vec!["CLUSTERX", "SETNODES", "x", "v"], "ERR Invalid version"),
        (
            vec!["CLUSTERX", "SETNODES", "x", "1", "please"],
            "ERR Invalid setnodes options",
        ),
        (
            vec!["CLUSTERX", "SETNODES", "x", "1"],
            "ERR Invalid cluster nodes info",
        ),
        (vec!["CLUSTERX", "SETNODES", "x", "-1"], "ERR Invalid cluster version"),
        (
            vec!["CLUSTERX", "SETSLOT", "1", "TO", &id, "1"],
            "ERR Invalid setslot options",
        ),
        (
            vec!["CLUSTERX", "SETSLOT", "5-2", "NODE", &id, "1"],
            "ERR Invalid slot range: `5-2`. The slot range `int1-int2` needs to satisfy the condition (int1 <= int2).",
        ),
        (
            vec!["CLUSTERX", "MIGRATE", "1", &id, "async", "5"],
            "ERR Async migration does not support timeout",
        ),
        (
            vec!["CLUSTERX", "MIGRATE", "1", &id, "sync", "-1"],
            "ERR timeout is negative",
        ),
        (vec!["CLUSTERX", "MIGRATE", "1", &id, "later"], "ERR Invalid sync flag"),
        (
            vec!["CLUSTER", "COUNTKEYSINSLOT", "16384"],
            "ERR Invalid slot",
        ),
        (
            vec!["CLUSTER", "GETKEYSINSLOT", "1", "-1"],
            "ERR Invalid slot or number of keys",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(c.call(&args), R::err(want), "{args:?}");
    }
    let bad = |line: String| {
        let mut c = node.conn();
        match c.call(&["CLUSTERX", "SETNODES", &line, "1"]) {
            R::Error(e) => e,
            other => panic!("{line}: {other:?}"),
        }
    };
    let other = node_id(9);
    assert_eq!(
        bad(format!("{id} h 99999 master -")),
        "ERR Invalid cluster node port"
    );
    assert_eq!(
        bad(format!("{id} h 1 boss -")),
        "ERR Invalid cluster node role"
    );
    assert_eq!(
        bad(format!("{id} h 1 master - 16384")),
        "ERR Slot is out of range"
    );
    assert_eq!(
        bad(format!("{id} h 1 master - 0-10\n{other} h 2 master - 10")),
        "ERR Slot distribution is overlapped"
    );
    assert_eq!(
        bad(format!("{id} h 1 master - 0 {other} h 2 master - 1")),
        "ERR Invalid nodes definition: Missing newline between node entries."
    );
}

#[test]
fn one_node_routes_and_keeps_its_topology() {
    let node = Node::start(0, &[]);
    let me = node.id.clone();
    let other = node_id(7);
    // A second master that is not running: MOVED only names it.
    let text = topology(&[(&me, node.port(), "0-8191"), (&other, 7999, "8192-16383")]);
    let mut c = node.conn();
    assert_eq!(c.call(&["CLUSTERX", "SETNODES", &text, "2"]), R::ok());
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), R::bulk("2"));
    assert_eq!(c.call(&["CLUSTERX", "MYID"]), R::bulk(&me), "found by port");

    // A slot of this node, a slot of the other, several slots.
    assert_eq!(c.call(&["CLUSTER", "KEYSLOT", "a"]), R::Int(15495));
    assert_eq!(c.call(&["CLUSTER", "KEYSLOT", "b"]), R::Int(3300));
    assert_eq!(c.call(&["SET", "b", "1"]), R::ok());
    assert_eq!(c.call(&["GET", "b"]), R::bulk("1"));
    assert_eq!(
        c.call(&["SET", "a", "1"]),
        R::err("MOVED 15495 127.0.0.1:7999")
    );
    assert_eq!(
        c.call(&["GET", "foo"]),
        R::err("MOVED 12182 127.0.0.1:7999")
    );
    let cross = R::err("CROSSSLOT Attempted to access keys that don't hash to the same slot");
    assert_eq!(c.call(&["MSET", "a", "1", "b", "2"]), cross);
    assert_eq!(c.call(&["DEL", "a", "b"]), cross);
    assert_eq!(c.call(&["MSET", "{b}1", "x", "{b}2", "y"]), R::ok());
    assert_eq!(
        c.call(&["MGET", "{b}1", "{b}2"]),
        R::Array(Some(vec![R::bulk("x"), R::bulk("y")]))
    );
    assert_eq!(
        c.call(&["WATCH", "a"]),
        R::err("MOVED 15495 127.0.0.1:7999")
    );
    assert_eq!(
        c.call(&["BLPOP", "a", "b", "1"]),
        cross,
        "the server's own keyed commands are routed too"
    );
    // Inside MULTI a refused command aborts EXEC, as any refusal does.
    assert_eq!(c.call(&["MULTI"]), R::ok());
    assert_eq!(
        c.call(&["SET", "a", "1"]),
        R::err("MOVED 15495 127.0.0.1:7999")
    );
    assert_eq!(
        c.call(&["EXEC"]),
        R::err("EXECABORT Transaction discarded because of previous errors.")
    );

    // CLUSTER INFO, SLOTS, NODES.
    let info = c.call(&["CLUSTER", "INFO"]).text();
    assert_eq!(
        info,
        "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:2\r\ncluster_size:2\r\ncluster_current_epoch:2\r\ncluster_my_epoch:2\r\n"
    );
    let port = i64::from(node.port());
    let entry = |start, end, port: i64, id: &str| {
        R::Array(Some(vec![
            R::Int(start),
            R::Int(end),
            R::Array(Some(vec![R::bulk("127.0.0.1"), R::Int(port), R::bulk(id)])),
        ]))
    };
    assert_eq!(
        c.call(&["CLUSTER", "SLOTS"]),
        R::Array(Some(vec![
            entry(0, 8191, port, &me),
            entry(8192, 16383, 7999, &other)
        ]))
    );
    let nodes = c.call(&["CLUSTER", "NODES"]).text();
    let lines: Vec<Vec<&str>> = nodes.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2, "{nodes}");
    assert_eq!(
        lines[0][..3],
        [
            me.as_str(),
            &format!("127.0.0.1:{port}@{}", port + 10000),
            "myself,master"
        ]
    );
    assert_eq!(lines[0][3], "-");
    assert_eq!(lines[0][6..], ["2", "connected", "0-8191"]);
    assert_eq!(
        lines[1][..4],
        [other.as_str(), "127.0.0.1:7999@17999", "master", "-"]
    );
    assert_eq!(lines[1][6..], ["2", "connected", "8192-16383"]);

    // Versions: older refused, the same a no-op, force takes any.
    let swapped = topology(&[(&me, node.port(), "8192-16383"), (&other, 7999, "0-8191")]);
    assert_eq!(
        c.call(&["CLUSTERX", "SETNODES", &swapped, "1"]),
        R::err("ERR Invalid cluster version")
    );
    assert_eq!(c.call(&["CLUSTERX", "SETNODES", &swapped, "2"]), R::ok());
    assert_eq!(
        c.call(&["GET", "b"]),
        R::bulk("1"),
        "version 2 again changed nothing"
    );
    // b, {b}1 and {b}2 share slot 3300; an expired key is not counted.
    assert_eq!(c.call(&["SET", "{b}gone", "1", "PX", "1"]), R::ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while c.call(&["EXISTS", "{b}gone"]) != R::Int(0) {
        assert!(
            std::time::Instant::now() < deadline,
            "{{b}}gone never expired"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(c.call(&["CLUSTER", "COUNTKEYSINSLOT", "3300"]), R::Int(3));
    assert_eq!(c.call(&["CLUSTER", "COUNTKEYSINSLOT", "3301"]), R::Int(0));
    let R::Array(Some(keys)) = c.call(&["CLUSTER", "GETKEYSINSLOT", "3300", "10"]) else {
        panic!()
    };
    let mut keys: Vec<String> = keys.iter().map(R::text).collect();
    keys.sort();
    assert_eq!(keys, ["b", "{b}1", "{b}2"]);
    let R::Array(Some(two)) = c.call(&["CLUSTER", "GETKEYSINSLOT", "3300", "2"]) else {
        panic!()
    };
    assert_eq!(two.len(), 2);

    // The topology survives a restart (on another port: the id is kept).
    let conf = std::fs::read_to_string(node.dir.join("nodes.conf")).unwrap();
    assert_eq!(
        conf,
        format!(
            "version 2\nid {me}\nnode {me} 127.0.0.1 {port} master -  0-8191\nnode {other} 127.0.0.1 7999 master -  8192-16383\n"
        )
    );
    drop(c);
    let node = node.restart(&[]);
    let mut c = node.conn();
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), R::bulk("2"));
    assert_eq!(c.call(&["CLUSTERX", "MYID"]), R::bulk(&me));
    assert_eq!(c.call(&["GET", "b"]), R::bulk("1"));
    assert_eq!(c.call(&["GET", "a"]), R::err("MOVED 15495 127.0.0.1:7999"));

    // Losing slots without migrating them keeps their keys (Kvrocks
    // deletes only the keys of slots it migrated away).
    let force = topology(&[(&me, node.port(), "8192-16383"), (&other, 7999, "0-8191")]);
    assert_eq!(
        c.call(&["CLUSTERX", "SETNODES", &force, "1", "force"]),
        R::ok()
    );
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), R::bulk("1"));
    assert_eq!(c.call(&["GET", "b"]), R::err("MOVED 3300 127.0.0.1:7999"));
    assert_eq!(c.call(&["DBSIZE"]), R::Int(3));

    // SETSLOT: the next version only.
    assert_eq!(
        c.call(&["CLUSTERX", "SETSLOT", "3300", "NODE", &me, "5"]),
        R::err("ERR Invalid cluster version")
    );
    assert_eq!(
        c.call(&["CLUSTERX", "SETSLOT", "3300", "NODE", &me, "2"]),
        R::ok()
    );
    assert_eq!(c.call(&["GET", "b"]), R::bulk("1"));

    // RESET needs an empty database; it forgets the topology and the file.
    assert_eq!(
        c.call(&["CLUSTER", "RESET"]),
        R::err("ERR Can't reset cluster while database is not empty")
    );
    assert_eq!(c.call(&["FLUSHALL"]), R::ok());
    assert_eq!(c.call(&["CLUSTER", "RESET", "HARD"]), R::ok());
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), R::bulk("-1"));
    assert!(!node.dir.join("nodes.conf").exists());
}

#[test]
fn a_cluster_node_has_no_namespace_tokens() {
    // As Kvrocks' configuration refuses them: a slot's migration moves
    // the default namespace's keys only, a namespace's would stay behind.
    let err = refused_start(&[
        "--format",
        "kvrocks",
        "--requirepass",
        "adm",
        "--namespace-token",
        "ns1=tok1",
    ]);
    assert!(
        err.contains("enabled cluster mode wasn't allowed while the namespace exists"),
        "{err}"
    );
    // Nor does one get added later.
    let node = Node::start(0, &["--requirepass", "adm"]);
    let mut admin = node.conn();
    assert_eq!(admin.call(&["AUTH", "adm"]), R::ok());
    assert_eq!(
        admin.call(&["NAMESPACE", "ADD", "ns1", "tok1"]),
        R::err("ERR forbidden to add namespace when cluster mode was enabled")
    );
}

#[test]
fn three_nodes_under_the_redis_crate_cluster_client() {
    let (nodes, _) = three_nodes();
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("redis://{}/", n.addr()))
        .collect();
    let client = redis::cluster::ClusterClient::new(urls).expect("a cluster client");
    let mut conn = client.get_connection().expect("connects to the cluster");
    for i in 0..600 {
        let () = redis::cmd("SET")
            .arg(format!("key:{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }
    for i in 0..600 {
        let v: i64 = redis::cmd("GET")
            .arg(format!("key:{i}"))
            .query(&mut conn)
            .unwrap();
        assert_eq!(v, i);
    }
    // Each key is on the node serving its slot, and only there.
    let mut total = 0;
    for (n, slots) in nodes.iter().zip(THIRDS) {
        let (lo, hi) = slots.split_once('-').unwrap();
        let (lo, hi): (i64, i64) = (lo.parse().unwrap(), hi.parse().unwrap());
        let mut c = n.conn();
        let R::Int(size) = c.call(&["DBSIZE"]) else {
            panic!()
        };
        total += size;
        let R::Array(Some(keys)) = c.call(&["KEYS", "*"]) else {
            panic!()
        };
        for k in keys {
            let R::Int(slot) = c.call(&["CLUSTER", "KEYSLOT", &k.text()]) else {
                panic!()
            };
            assert!(
                (lo..=hi).contains(&slot),
                "{} holds {} of slot {slot}",
                n.addr(),
                k.text()
            );
        }
    }
    assert_eq!(total, 600);
}

#[test]
fn without_cluster_mode() {
    let (_tmp, dir) = store_dir();
    let serve = serve_support::Serve::start("kvrocks", &dir, &["--sync", "no"]);
    let mut c = cluster_support::Conn::open(&serve.addr);
    let off = R::err("ERR Cluster mode is not enabled");
    assert_eq!(c.call(&["CLUSTER", "INFO"]), off);
    assert_eq!(c.call(&["CLUSTERX", "VERSION"]), off);
    // Arguments are checked first, as Kvrocks parses before it runs.
    assert_eq!(
        c.call(&["CLUSTER", "SHARDS"]),
        R::err("ERR CLUSTER command, CLUSTER INFO|NODES|SLOTS|KEYSLOT|RESET|REPLICAS")
    );
    assert_eq!(c.call(&["SET", "foo", "1"]), R::ok());
    assert_eq!(c.call(&["READONLY"]), R::ok());
    let info = c.call(&["INFO", "cluster"]).text();
    assert!(info.contains("cluster_enabled:0\r\n"), "{info}");
    assert!(!dir.join("nodes.conf").exists());
}

#[test]
fn a_replica_serves_reads_after_readonly() {
    let node = Node::start(1, &[]);
    let master = node_id(0);
    let text = format!(
        "{master} 127.0.0.1 7999 master - 0-16383\n{} 127.0.0.1 {} slave {master}",
        node.id,
        node.port()
    );
    let mut c = node.conn();
    assert_eq!(c.call(&["CLUSTERX", "SETNODES", &text, "1"]), R::ok());
    let moved = R::err("MOVED 12182 127.0.0.1:7999");
    assert_eq!(c.call(&["GET", "foo"]), moved);
    assert_eq!(c.call(&["READONLY"]), R::ok());
    assert_eq!(c.call(&["GET", "foo"]), R::Bulk(None));
    assert_eq!(
        c.call(&["SET", "foo", "1"]),
        moved,
        "writes go to the master"
    );
    assert_eq!(c.call(&["READWRITE"]), R::ok());
    assert_eq!(c.call(&["GET", "foo"]), moved);
    let R::Array(Some(slots)) = c.call(&["CLUSTER", "SLOTS"]) else {
        panic!()
    };
    assert_eq!(slots.len(), 1);
    let R::Array(Some(entry)) = &slots[0] else {
        panic!()
    };
    assert_eq!(
        entry.len(),
        4,
        "start, end, the master, its replica: {entry:?}"
    );
    assert_eq!(
        entry[3],
        R::Array(Some(vec![
            R::bulk("127.0.0.1"),
            R::Int(i64::from(node.port())),
            R::bulk(&node.id)
        ]))
    );
    let replicas = c.call(&["CLUSTER", "REPLICAS", &master]).text();
    let fields: Vec<&str> = replicas.trim_end().split(' ').collect();
    assert_eq!(
        fields[..3],
        [
            node.id.as_str(),
            &format!(
                "127.0.0.1:{}@{}",
                node.port(),
                u32::from(node.port()) + 10000
            ),
            "slave"
        ]
    );
    assert_eq!(fields[3], master);
    assert_eq!(fields[6..], ["1", "connected"]);
    assert_eq!(
        c.call(&["CLUSTER", "REPLICAS", &node.id]),
        R::err("ERR The node isn't a master")
    );
    assert_eq!(
        c.call(&["CLUSTER", "IMPORT", "5", "0"]),
        R::err("ERR Slave can't import slot")
    );
    assert_eq!(
        c.call(&["CLUSTERX", "MIGRATE", "5", &master]),
        R::err("ERR Can't migrate slot which doesn't belong to me")
    );
}

#[test]
fn an_import_is_served_to_its_link_and_after_asking() {
    let node = Node::start(1, &[]);
    let src = node_id(0);
    let text = topology(&[(&src, 7999, "0-16383"), (&node.id, node.port(), "")]);
    let mut link = node.conn();
    assert_eq!(link.call(&["CLUSTERX", "SETNODES", &text, "1"]), R::ok());
    assert_eq!(link.call(&["CLUSTER", "IMPORT", "12182", "0"]), R::ok());
    // The importing connection writes the slot; others are sent away,
    // but for one command after ASKING.
    assert_eq!(link.call(&["SET", "foo", "1"]), R::ok());
    assert_eq!(
        link.call(&["SET", "a", "1"]),
        R::err("MOVED 15495 127.0.0.1:7999")
    );
    let mut other = node.conn();
    let moved = R::err("MOVED 12182 127.0.0.1:7999");
    assert_eq!(other.call(&["GET", "foo"]), moved);
    assert_eq!(other.call(&["ASKING"]), R::ok());
    assert_eq!(other.call(&["GET", "foo"]), R::bulk("1"));
    assert_eq!(
        other.call(&["GET", "foo"]),
        moved,
        "ASKING counts for one command"
    );
    assert_eq!(
        link.call(&["CLUSTER", "IMPORT", "12182", "0"]),
        R::ok(),
        "the same import again"
    );
    assert_eq!(
        link.call(&["CLUSTER", "IMPORT", "7", "0"]),
        R::err("ERR only one importing job is allowed, current importing: 12182")
    );
    assert_eq!(
        link.call(&["CLUSTER", "IMPORT", "7", "1"]),
        R::err("ERR mismatch slot, importing slot(s): 12182, but got: 7")
    );
    let nodes = other.call(&["CLUSTER", "NODES"]).text();
    assert!(nodes.contains(&format!(" [12182-<-{src}]\n")), "{nodes}");
    let info = other.call(&["CLUSTER", "INFO"]).text();
    assert!(
        info.ends_with("importing_slot(s): 12182\r\nimport_state: start\r\n"),
        "{info}"
    );
    assert_eq!(
        other.call(&["CLUSTER", "RESET"]),
        R::err("ERR Can't reset cluster while importing slot")
    );

    // The link drops mid-import: the import fails and its keys go.
    drop(link);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let info = other.call(&["CLUSTER", "INFO"]).text();
        if info.contains("import_state: error") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{info}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        other.call(&["CLUSTER", "COUNTKEYSINSLOT", "12182"]),
        R::Int(0)
    );

    // A finished import is served to everyone until the next topology.
    let mut link = node.conn();
    assert_eq!(link.call(&["CLUSTER", "IMPORT", "12182", "0"]), R::ok());
    assert_eq!(link.call(&["SET", "foo", "2"]), R::ok());
    assert_eq!(link.call(&["CLUSTER", "IMPORT", "12182", "1"]), R::ok());
    drop(link);
    assert_eq!(other.call(&["GET", "foo"]), R::bulk("2"));
    assert_eq!(other.call(&["SET", "foo", "3"]), R::ok());
    assert_eq!(
        other.call(&["CLUSTER", "IMPORT", "0", "2"]),
        R::err("ERR mismatch slot, importing slot(s): 12182, but got: 0")
    );
    assert_eq!(
        other.call(&["CLUSTER", "IMPORT", "12182", "3"]),
        R::err("ERR Invalid import state")
    );
    assert_eq!(other.call(&["CLUSTERX", "SETNODES", &text, "2"]), R::ok());
    assert_eq!(other.call(&["GET", "foo"]), moved);
}

#[test]
fn resp3_gets_verbatim_text_as_kvrocks_sends_it() {
    let node = Node::start(0, &[]);
    let text = topology(&[(&node.id, node.port(), "0-16383")]);
    assert_eq!(
        node.conn().call(&["CLUSTERX", "SETNODES", &text, "1"]),
        R::ok()
    );
    let mut c = node.serve.conn3();
    for sub in ["INFO", "NODES"] {
        let v: redis::Value = redis::cmd("CLUSTER").arg(sub).query(&mut c).unwrap();
        assert!(
            matches!(&v, redis::Value::VerbatimString { text, .. } if !text.is_empty()),
            "CLUSTER {sub}: {v:?}"
        );
    }
    let v: redis::Value = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg("foo")
        .query(&mut c)
        .unwrap();
    assert_eq!(v, redis::Value::Int(12182));
}
