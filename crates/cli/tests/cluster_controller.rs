//! redcodec nodes driven the way apache/kvrocks-controller drives Kvrocks
//! nodes (its `controller/syncer.go`, `controller/migrate/migrator.go`,
//! `util/redis.go`, `metadata/cluster.go`): `CLUSTERX SETNODEID` then
//! `CLUSTERX SETNODES` on every node, `CLUSTER INFO` and `CLUSTER NODES`
//! read back as the controller parses them, a slot moved with an async
//! `CLUSTERX MIGRATE` and `CLUSTER INFO` polled until `migrating_state`
//! says success, then the next version published; a shard added; a
//! cluster client writing and reading throughout.
//!
//! The controller itself is not run here (this test runs in CI, where its
//! Go module cannot be installed); `cluster_real_controller.rs` runs the
//! real one where its binary is given (see docs/src/cluster.md).

use std::time::{Duration, Instant};

mod serve_support;

mod cluster_support;
use cluster_support::{topology, Conn, Node, R};

/// `key:value` lines of CLUSTER INFO, as `util.ClusterInfoCmd` splits them.
fn info_field(c: &mut Conn, key: &str) -> Option<String> {
    let info = c.call(&["CLUSTER", "INFO"]).text();
    info.split('\n').find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// CLUSTER NODES as `metadata.ParseCluster` reads it: the version in
/// field 7, a master's slots from field 9; (id, version, slots) per master.
fn masters(c: &mut Conn) -> Vec<(String, i64, String)> {
    let nodes = c.call(&["CLUSTER", "NODES"]).text();
    nodes
        .lines()
        .map(|line| line.split(' ').collect::<Vec<_>>())
        .filter(|f| f[2].contains("master"))
        .map(|f| {
            assert!(f.len() >= 9, "a master line has at least 9 fields: {f:?}");
            (f[0].to_string(), f[6].parse().unwrap(), f[8..].join(" "))
        })
        .collect()
}

/// Sends the topology the controller would: SETNODEID on a node that has
/// no id yet, then SETNODES.
fn sync(nodes: &[&Node], text: &str, version: i64) {
    for n in nodes {
        let mut c = n.conn();
        if c.call(&["CLUSTERX", "MYID"]) == R::bulk("") {
            assert_eq!(c.call(&["CLUSTERX", "SETNODEID", &n.id]), R::ok());
        }
        assert_eq!(
            c.call(&["CLUSTERX", "SETNODES", text, &version.to_string()]),
            R::ok()
        );
    }
}

/// The controller's migration: async MIGRATE, CLUSTER INFO polled until
/// the slot's state is success.
fn migrate(src: &Node, slot: u16, dst: &Node) {
    let mut c = src.conn();
    assert_eq!(
        c.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &dst.id]),
        R::ok()
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = info_field(&mut c, "migrating_state");
        if state.as_deref() == Some("success") {
            assert_eq!(
                info_field(&mut c, "migrating_slot(s)"),
                Some(slot.to_string())
            );
            assert_eq!(info_field(&mut c, "destination_node"), Some(dst.id.clone()));
            return;
        }
        assert_ne!(state.as_deref(), Some("fail"), "the migration failed");
        assert!(
            Instant::now() < deadline,
            "the migration never ended: {state:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn client(nodes: &[&Node]) -> redis::cluster::ClusterConnection {
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("redis://{}/", n.addr()))
        .collect();
    redis::cluster::ClusterClient::new(urls)
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn create_write_migrate_and_add_a_shard() {
    let a = Node::start(0, &[]);
    let b = Node::start(1, &[]);
    let c = Node::start(2, &[]);
    let text = |parts: &[(&Node, &str)]| {
        topology(
            &parts
                .iter()
                .map(|(n, s)| (n.id.as_str(), n.port(), *s))
                .collect::<Vec<_>>(),
        )
    };
    // Create: three shards, the slots split evenly, version 1.
    let v1 = text(&[(&a, "0-5460"), (&b, "5461-10922"), (&c, "10923-16383")]);
    sync(&[&a, &b, &c], &v1, 1);
    for n in [&a, &b, &c] {
        let mut conn = n.conn();
        assert_eq!(
            info_field(&mut conn, "cluster_current_epoch"),
            Some("1".into())
        );
        assert_eq!(info_field(&mut conn, "cluster_state"), Some("ok".into()));
        let m = masters(&mut conn);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1], (b.id.clone(), 1, "5461-10922".to_string()));
    }
    let mut conn = client(&[&a, &b, &c]);
    for i in 0..500 {
        let () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }

    // Migrate slot 0 (a's) to b, then publish version 2.
    let mut ac = a.conn();
    let R::Int(in_slot_0) = ac.call(&["CLUSTER", "COUNTKEYSINSLOT", "0"]) else {
        panic!()
    };
    for i in 0..20 {
        // Keys of slot 0 whatever the data above: the tag of "{3560}" is slot 0.
        assert_eq!(ac.call(&["SET", &format!("{{3560}}:{i}"), "z"]), R::ok());
    }
    assert_eq!(ac.call(&["CLUSTER", "KEYSLOT", "{3560}"]), R::Int(0));
    migrate(&a, 0, &b);
    let v2 = text(&[(&a, "1-5460"), (&b, "0 5461-10922"), (&c, "10923-16383")]);
    sync(&[&a, &b, &c], &v2, 2);
    assert_eq!(ac.call(&["CLUSTER", "COUNTKEYSINSLOT", "0"]), R::Int(0));
    let mut bc = b.conn();
    assert_eq!(
        bc.call(&["CLUSTER", "COUNTKEYSINSLOT", "0"]),
        R::Int(in_slot_0 + 20)
    );
    assert_eq!(masters(&mut bc)[1].2, "0 5461-10922");

    // Add a shard: a fourth node with no slot (version 3), then a slot
    // of c's moves to it (version 4).
    let d = Node::start(3, &[]);
    let v3 = format!("{v2}\n{} 127.0.0.1 {} master - ", d.id, d.port());
    sync(&[&a, &b, &c, &d], &v3, 3);
    let mut dc = d.conn();
    assert_eq!(info_field(&mut dc, "cluster_known_nodes"), Some("4".into()));
    assert_eq!(info_field(&mut dc, "cluster_size"), Some("3".into()));
    let mut cc = c.conn();
    for i in 0..10 {
        // The tag of "{39296}" is slot 16383.
        assert_eq!(cc.call(&["SET", &format!("{{39296}}:{i}"), "y"]), R::ok());
    }
    migrate(&c, 16383, &d);
    let v4 = text(&[
        (&a, "1-5460"),
        (&b, "0 5461-10922"),
        (&c, "10923-16382"),
        (&d, "16383"),
    ]);
    sync(&[&a, &b, &c, &d], &v4, 4);
    assert_eq!(info_field(&mut dc, "cluster_size"), Some("4".into()));
    assert_eq!(
        dc.call(&["CLUSTER", "COUNTKEYSINSLOT", "16383"]),
        R::Int(10)
    );
    assert_eq!(
        cc.call(&["GET", "{39296}:1"]),
        R::err(&format!("MOVED 16383 {}", d.addr()))
    );

    // A fresh client sees every key, wherever it went.
    let mut conn = client(&[&d]);
    for i in 0..500 {
        let v: i64 = redis::cmd("GET")
            .arg(format!("k{i}"))
            .query(&mut conn)
            .unwrap();
        assert_eq!(v, i);
    }
    for i in 0..20 {
        let v: String = redis::cmd("GET")
            .arg(format!("{{3560}}:{i}"))
            .query(&mut conn)
            .unwrap();
        assert_eq!(v, "z");
    }
    let mut total = 0;
    for n in [&a, &b, &c, &d] {
        let R::Int(size) = n.conn().call(&["DBSIZE"]) else {
            panic!()
        };
        total += size;
    }
    assert_eq!(
        total, 530,
        "no key left behind on a node that gave its slot away"
    );
}
