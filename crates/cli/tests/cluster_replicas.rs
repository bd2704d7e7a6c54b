//! Replication set by the cluster topology, as Kvrocks'
//! `SetMasterSlaveRepl`: a node the controller lists as
//! `slave <master-id>` follows that master, a failover (the replica listed
//! as the master) turns the roles around, a restarted replica follows
//! again from `nodes.conf`, and clients cannot change it with REPLICAOF.

mod serve_support;

mod cluster_support;
use cluster_support::{Conn, Node, R};

use std::time::{Duration, Instant};

/// `SETNODES` text: `master` serves every slot, `replica` follows it.
fn master_and_replica(master: &Node, replica: &Node) -> String {
    format!(
        "{m} 127.0.0.1 {mp} master - 0-16383\n{r} 127.0.0.1 {rp} slave {m}",
        m = master.id,
        mp = master.port(),
        r = replica.id,
        rp = replica.port(),
    )
}

fn set_nodes(nodes: &[&Node], text: &str, version: &str) {
    for n in nodes {
        assert_eq!(
            n.conn().call(&["CLUSTERX", "SETNODES", text, version]),
            R::ok()
        );
    }
}

/// A field of an `INFO` section.
fn info_field(c: &mut Conn, section: &str, name: &str) -> String {
    let info = c.call(&["INFO", section]).text();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in {info}"))
        .trim()
        .to_string()
}

/// A field of `INFO replication`.
fn replication(c: &mut Conn, name: &str) -> String {
    info_field(c, "replication", name)
}

/// A counter of `INFO stats`.
fn stat(c: &mut Conn, name: &str) -> u64 {
    info_field(c, "stats", name).parse().unwrap()
}

/// Polls a READONLY connection to `node` until `key` holds `value`.
fn wait_for(node: &Node, key: &str, value: &str) {
    let mut c = node.conn();
    assert_eq!(c.call(&["READONLY"]), R::ok());
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got = c.call(&["GET", key]);
        if got == R::bulk(value) {
            return;
        }
        assert!(Instant::now() < deadline, "{key} is {got:?}, not {value}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_replica_of_the_topology_follows_its_master_and_a_failover_turns_them_around() {
    let a = Node::start(0, &[]);
    let b = Node::start(1, &[]);
    let mut ca = a.conn();
    assert_eq!(
        ca.call(&["SET", "foo", "1"]),
        R::err("CLUSTERDOWN Hash slot not served")
    );

    set_nodes(&[&a, &b], &master_and_replica(&a, &b), "1");
    assert_eq!(ca.call(&["SET", "foo", "1"]), R::ok());
    assert_eq!(ca.call(&["HSET", "h", "f", "v"]), R::Int(1));
    wait_for(&b, "foo", "1");
    let mut cb = b.conn();
    assert_eq!(replication(&mut cb, "role"), "slave");
    assert_eq!(replication(&mut cb, "master_port"), a.port().to_string());
    assert_eq!(replication(&mut ca, "role"), "master");
    assert_eq!(cb.call(&["READONLY"]), R::ok());
    assert_eq!(cb.call(&["HGET", "h", "f"]), R::bulk("v"));

    // The topology decides; clients cannot change it.
    let refused = R::err("ERR can't change to slave in cluster mode");
    for node in [&mut ca, &mut cb] {
        assert_eq!(node.call(&["REPLICAOF", "NO", "ONE"]), refused);
        assert_eq!(node.call(&["SLAVEOF", "127.0.0.1", "1"]), refused);
    }

    // The same topology again changes nothing; the stream goes on.
    set_nodes(&[&a, &b], &master_and_replica(&a, &b), "1");
    assert_eq!(ca.call(&["SET", "foo", "2"]), R::ok());
    wait_for(&b, "foo", "2");

    // Failover: the replica is the master now, the old master its replica.
    // (No PING from the master may come in between: it would put the old
    // master ahead of the replica's copy of its stream.)
    for c in [&mut ca, &mut cb] {
        assert_eq!(
            c.call(&["CONFIG", "SET", "repl-ping-replica-period", "3600"]),
            R::ok()
        );
    }
    wait_for(&b, "foo", "2");
    let a_replid = replication(&mut ca, "master_replid");
    let a_offset = replication(&mut ca, "master_repl_offset");
    set_nodes(&[&b, &a], &master_and_replica(&b, &a), "2");
    assert_eq!(replication(&mut cb, "role"), "master");
    // The new master's stream continues the one it followed.
    assert_eq!(replication(&mut cb, "master_replid2"), a_replid);
    let continued: u64 = a_offset.parse::<u64>().unwrap() + 1;
    assert_eq!(
        replication(&mut cb, "second_repl_offset"),
        continued.to_string()
    );
    assert_eq!(cb.call(&["SET", "foo", "3"]), R::ok(), "writable at once");
    wait_for(&a, "foo", "3");
    assert_eq!(replication(&mut ca, "role"), "slave");
    assert_eq!(replication(&mut ca, "master_port"), b.port().to_string());
    // The old master offered its own stream and continued: no copy.
    assert_eq!(
        (stat(&mut cb, "sync_partial_ok"), stat(&mut cb, "sync_full")),
        (1, 0)
    );

    // A restarted replica finds itself in nodes.conf and follows again,
    // from where it stopped (a partial resync).
    drop(ca);
    let partial_before = stat(&mut cb, "sync_partial_ok");
    let a = a.restart(&[]);
    assert_eq!(cb.call(&["SET", "bar", "after-restart"]), R::ok());
    wait_for(&a, "bar", "after-restart");
    assert_eq!(stat(&mut cb, "sync_partial_ok"), partial_before + 1);
    let mut ca = a.conn();
    assert_eq!(replication(&mut ca, "master_port"), b.port().to_string());

    // CLUSTER RESET stops following (on an empty store, as Kvrocks).
    assert_eq!(cb.call(&["FLUSHALL"]), R::ok());
    wait_for_empty(&a);
    assert_eq!(ca.call(&["CLUSTER", "RESET"]), R::ok());
    assert_eq!(replication(&mut ca, "role"), "master");
}

/// Polls `node` until its store is empty.
fn wait_for_empty(node: &Node) {
    let mut c = node.conn();
    let deadline = Instant::now() + Duration::from_secs(120);
    while c.call(&["DBSIZE"]) != R::Int(0) {
        assert!(Instant::now() < deadline, "never empty");
        std::thread::sleep(Duration::from_millis(20));
    }
}
