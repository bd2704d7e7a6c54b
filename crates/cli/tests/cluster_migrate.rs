//! `CLUSTERX MIGRATE`: a slot moves to another redcodec node while a
//! client writes to it, as Kvrocks moves it (`migrate-type
//! redis-command`): every acknowledged write is readable on the
//! destination afterwards; the source answers MOVED, and deletes the
//! slot's keys once the controller's next topology gives the slot away.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod serve_support;

mod cluster_support;
use cluster_support::{node_id, routed, set_nodes, topology, Conn, Node, R};

/// Writes `key` through whichever node serves it: follows MOVED, retries
/// TRYAGAIN. Returns once the write is acknowledged.
fn routed_set(conns: &mut Vec<(String, Conn)>, at: &mut usize, key: &str, value: &str) {
    match routed(conns, at, &["SET", key, value]) {
        R::Status(s) if s == "OK" => {}
        other => panic!("SET {key}: {other:?}"),
    }
}

/// A source owning every slot and a destination owning none, and the slot
/// of `{m}`, the one the tests move.
fn source_and_destination() -> (Node, Node, String) {
    let src = Node::start(0, &[]);
    let dst = Node::start(1, &[]);
    let text = topology(&[(&src.id, src.port(), "0-16383"), (&dst.id, dst.port(), "")]);
    let nodes = [src, dst];
    set_nodes(&nodes, &text, 1);
    let [src, dst] = nodes;
    let R::Int(slot) = src.conn().call(&["CLUSTER", "KEYSLOT", "{m}"]) else {
        panic!()
    };
    (src, dst, slot.to_string())
}

/// Acknowledged writes, `(key, value)`, in the order they were made.
type Acked = Vec<(String, String)>;

/// Clients that SET keys through whichever node serves them (see
/// [`routed_set`]) until stopped, counting acknowledged writes.
struct Writers {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    threads: Vec<JoinHandle<(Acked, String)>>,
}

impl Writers {
    /// `n` writers starting at `addr`; writer `w`'s write number `i` sets
    /// `key(w, i)` to `i`.
    fn start(addr: &str, n: usize, key: fn(usize, u64) -> String) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let threads = (0..n)
            .map(|w| {
                let (stop, written) = (stop.clone(), written.clone());
                let addr = addr.to_string();
                std::thread::spawn(move || {
                    let mut conns = vec![(addr.clone(), Conn::open(&addr))];
                    let mut at = 0;
                    let mut acked = Vec::new();
                    let mut i = 0u64;
                    while !stop.load(Ordering::SeqCst) {
                        let (key, value) = (key(w, i), i.to_string());
                        routed_set(&mut conns, &mut at, &key, &value);
                        acked.push((key, value));
                        i += 1;
                        written.fetch_add(1, Ordering::SeqCst);
                    }
                    (acked, conns[at].0.clone())
                })
            })
            .collect();
        Writers {
            stop,
            written,
            threads,
        }
    }

    /// Acknowledged writes so far, of all writers.
    fn written(&self) -> u64 {
        self.written.load(Ordering::SeqCst)
    }

    /// Waits until `n` writes were acknowledged (a minute at most).
    fn wait_for(&self, n: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.written() < n {
            assert!(Instant::now() < deadline, "the writers are stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Stops them: every acknowledged `(key, value)` in order, and the
    /// node each writer was writing to at the end.
    fn stop(self) -> (Acked, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        let mut acked = Vec::new();
        let mut at = Vec::new();
        for t in self.threads {
            let (a, addr) = t.join().unwrap();
            acked.extend(a);
            at.push(addr);
        }
        (acked, at)
    }
}

/// Keys of each type written in the slot before it moves.
const PRELOAD: usize = 1000;

fn info(c: &mut Conn) -> String {
    c.call(&["CLUSTER", "INFO"]).text()
}

#[test]
fn a_slot_moves_while_a_client_writes() {
    let (src, dst, slot) = source_and_destination();
    let mut s = src.conn();

    // Keys of every type in the slot, some with a TTL; and keys elsewhere.
    for i in 0..PRELOAD {
        let k = |t: &str| format!("{{m}}{t}:{i}");
        assert_eq!(s.call(&["SET", &k("s"), &i.to_string()]), R::ok());
        assert_eq!(
            s.call(&["HSET", &k("h"), "f", "v", "g", &i.to_string()]),
            R::Int(2)
        );
        assert_eq!(s.call(&["RPUSH", &k("l"), "a", "b", "c"]), R::Int(3));
        assert_eq!(s.call(&["SADD", &k("t"), "x", "y"]), R::Int(2));
        assert_eq!(
            s.call(&["ZADD", &k("z"), "1.5", "m1", "-inf", "m2"]),
            R::Int(2)
        );
        assert_eq!(s.call(&["PEXPIRE", &k("h"), "86400000"]), R::Int(1));
        assert_eq!(s.call(&["SET", &format!("other:{i}"), "o"]), R::ok());
    }
    let big: Vec<String> = (0..100).map(|i| format!("e{i}")).collect();
    let mut sadd = vec!["SADD", "{m}big"];
    sadd.extend(big.iter().map(String::as_str));
    assert_eq!(s.call(&sadd), R::Int(100));
    let R::Int(ttl_before) = s.call(&["PEXPIRETIME", "{m}h:7"]) else {
        panic!()
    };

    // A writer that keeps writing new keys and overwriting old ones,
    // before, during and after the move.
    let writer = Writers::start(src.addr(), 1, |_, i| format!("{{m}}w:{}", i % 500));
    writer.wait_for(100);
    assert_eq!(
        s.call(&["CLUSTERX", "MIGRATE", &slot, &dst.id, "sync"]),
        R::ok()
    );
    writer.wait_for(writer.written() + 100);
    let (acked, writing_to) = writer.stop();
    assert_eq!(writing_to, [dst.addr()], "the writer followed MOVED");

    let si = info(&mut s);
    assert!(
        si.contains(&format!(
            "migrating_slot(s): {slot}\r\ndestination_node: {}\r\nmigrating_state: success\r\n",
            dst.id
        )),
        "{si}"
    );
    let mut d = dst.conn();
    let di = info(&mut d);
    assert!(
        di.contains(&format!(
            "importing_slot(s): {slot}\r\nimport_state: success\r\n"
        )),
        "{di}"
    );
    // The source sends the slot on; the destination serves it.
    let moved = R::err(&format!("MOVED {slot} {}", dst.addr()));
    assert_eq!(s.call(&["GET", "{m}s:1"]), moved);
    assert_eq!(s.call(&["SET", "{m}new", "1"]), moved);
    assert_eq!(s.call(&["GET", "other:1"]), R::bulk("o"));

    // Every acknowledged write is there (the last value of each key).
    let mut last = std::collections::BTreeMap::new();
    for (k, v) in acked {
        last.insert(k, v);
    }
    for (k, v) in &last {
        assert_eq!(d.call(&["GET", k]), R::bulk(v), "{k}");
    }
    for i in [0, 7, PRELOAD - 1] {
        let k = |t: &str| format!("{{m}}{t}:{i}");
        assert_eq!(d.call(&["GET", &k("s")]), R::bulk(&i.to_string()));
        assert_eq!(d.call(&["HGET", &k("h"), "g"]), R::bulk(&i.to_string()));
        assert_eq!(
            d.call(&["LRANGE", &k("l"), "0", "-1"]),
            R::Array(Some(vec![R::bulk("a"), R::bulk("b"), R::bulk("c")]))
        );
        assert_eq!(d.call(&["SCARD", &k("t")]), R::Int(2));
        assert_eq!(d.call(&["ZSCORE", &k("z"), "m2"]), R::bulk("-inf"));
        assert_eq!(d.call(&["ZSCORE", &k("z"), "m1"]), R::bulk("1.5"));
    }
    assert_eq!(d.call(&["PEXPIRETIME", "{m}h:7"]), R::Int(ttl_before));
    assert_eq!(d.call(&["PEXPIRETIME", "{m}s:7"]), R::Int(-1));
    assert_eq!(d.call(&["SCARD", "{m}big"]), R::Int(100));
    let expected = (PRELOAD * 5 + 1 + last.len()) as i64;
    assert_eq!(
        d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]),
        R::Int(expected)
    );
    let R::Int(other_slot) = d.call(&["CLUSTER", "KEYSLOT", "other:1"]) else {
        panic!()
    };
    assert_eq!(
        d.call(&["GET", "other:1"]),
        R::err(&format!("MOVED {other_slot} {}", src.addr()))
    );

    // The controller's next topology gives the slot away: the source
    // deletes its keys, the destination serves it by the topology.
    let s_num: u16 = slot.parse().unwrap();
    let ranges = |a: u16| {
        let mut r = Vec::new();
        if a > 0 {
            r.push(format!("0-{}", a - 1));
        }
        if a < 16383 {
            r.push(format!("{}-16383", a + 1));
        }
        r.join(" ")
    };
    let next = topology(&[
        (&src.id, src.port(), &ranges(s_num)),
        (&dst.id, dst.port(), &slot),
    ]);
    for n in [&src, &dst] {
        assert_eq!(
            n.conn().call(&["CLUSTERX", "SETNODES", &next, "2"]),
            R::ok()
        );
    }
    assert_eq!(s.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]), R::Int(0));
    assert_eq!(s.call(&["DBSIZE"]), R::Int(PRELOAD as i64));
    assert_eq!(
        d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]),
        R::Int(expected)
    );
    assert_eq!(d.call(&["GET", "{m}s:3"]), R::bulk("3"));
    assert_eq!(
        s.call(&["GET", "{m}s:3"]),
        R::err(&format!("MOVED {slot} {}", dst.addr()))
    );
}

#[test]
fn one_migration_at_a_time_and_a_failure_keeps_the_slot() {
    let src = Node::start(0, &[]);
    // A destination that accepts and never answers: the migration waits
    // on its CLUSTER IMPORT.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let other = node_id(5);
    let text = topology(&[(&src.id, src.port(), "0-16383"), (&other, silent_port, "")]);
    let mut s = src.conn();
    assert_eq!(s.call(&["CLUSTERX", "SETNODES", &text, "1"]), R::ok());
    assert_eq!(s.call(&["SET", "{m}a", "1"]), R::ok());
    let R::Int(slot) = s.call(&["CLUSTER", "KEYSLOT", "{m}"]) else {
        panic!()
    };
    let slot = slot.to_string();

    assert_eq!(
        s.call(&["CLUSTERX", "MIGRATE", &slot, &node_id(6)]),
        R::err("ERR Can't find the destination node id")
    );
    assert_eq!(
        s.call(&["CLUSTERX", "MIGRATE", &slot, &src.id]),
        R::err("ERR Can't migrate slot to myself")
    );
    assert_eq!(s.call(&["CLUSTERX", "MIGRATE", &slot, &other]), R::ok());
    let (mut peer, _) = silent.accept().unwrap();
    assert_eq!(
        s.call(&["CLUSTERX", "MIGRATE", "0", &other]),
        R::err("ERR There is already a migrating job")
    );
    let nodes = s.call(&["CLUSTER", "NODES"]).text();
    assert!(nodes.contains(&format!(" [{slot}->-{other}]")), "{nodes}");
    let si = info(&mut s);
    assert!(
        si.contains(&format!(
            "migrating_slot(s): {slot}\r\ndestination_node: {other}\r\nmigrating_state: start\r\n"
        )),
        "{si}"
    );
    // Writes still go to the source meanwhile.
    assert_eq!(s.call(&["SET", "{m}b", "2"]), R::ok());

    // The destination fails: the slot stays here.
    let mut first = [0u8; 64];
    let _ = std::io::Read::read(&mut peer, &mut first);
    std::io::Write::write_all(&mut peer, b"-ERR refused\r\n").unwrap();
    drop(peer);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let si = info(&mut s);
        if si.contains("migrating_state: fail") {
            assert!(
                si.contains(&format!("migrating_slot(s): {slot}\r\n")),
                "{si}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the migration never failed: {si}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.call(&["GET", "{m}a"]), R::bulk("1"));
    assert_eq!(s.call(&["SET", "{m}c", "3"]), R::ok());
}

#[test]
fn a_migration_authenticates_with_the_source_password() {
    let src = Node::start(0, &["--requirepass", "pw"]);
    let dst = Node::start(1, &["--requirepass", "pw"]);
    let text = topology(&[(&src.id, src.port(), "0-16383"), (&dst.id, dst.port(), "")]);
    let conn = |n: &Node| {
        let mut c = n.conn();
        assert_eq!(c.call(&["AUTH", "pw"]), R::ok());
        c
    };
    let (mut s, mut d) = (conn(&src), conn(&dst));
    for c in [&mut s, &mut d] {
        assert_eq!(c.call(&["CLUSTERX", "SETNODES", &text, "1"]), R::ok());
    }
    assert_eq!(s.call(&["SET", "foo", "bar"]), R::ok());
    assert_eq!(
        s.call(&["CLUSTERX", "MIGRATE", "12182", &dst.id, "sync", "60"]),
        R::ok()
    );
    assert_eq!(d.call(&["GET", "foo"]), R::bulk("bar"));
    assert_eq!(
        s.call(&["GET", "foo"]),
        R::err(&format!("MOVED 12182 {}", dst.addr()))
    );
}

/// Keys written into the migrated slot by the kill tests.
const SLOW_KEYS: usize = 400;

/// A source owning every slot with [`SLOW_KEYS`] keys in the slot of
/// `{m}`, a destination owning none, and a migration of that slot started
/// at 160 commands a second (`migrate-speed`: about 3 s for the slot).
/// Returns once the destination holds some of the slot's keys, not all.
fn slow_migration() -> (Node, Node, String) {
    let (src, dst, slot) = source_and_destination();
    let mut s = src.conn();
    for i in 0..SLOW_KEYS {
        assert_eq!(s.call(&["SET", &format!("{{m}}{i}"), "v"]), R::ok());
    }
    assert_eq!(s.call(&["CONFIG", "SET", "migrate-speed", "160"]), R::ok());
    assert_eq!(s.call(&["CLUSTERX", "MIGRATE", &slot, &dst.id]), R::ok());
    let mut d = dst.conn();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let R::Int(n) = d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]) else {
            panic!()
        };
        if n > 0 {
            assert!(
                (n as usize) < SLOW_KEYS,
                "the whole slot arrived at 160 commands a second"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no key of the slot arrived");
        std::thread::sleep(Duration::from_millis(10));
    }
    (src, dst, slot)
}

/// Polls `f` until it holds, for up to a minute.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_source_killed_mid_migration_leaves_no_partial_slot_on_the_destination() {
    let (src, dst, slot) = slow_migration();
    src.serve.signal("KILL");
    let mut d = dst.conn();
    eventually("the destination drops the partial slot", || {
        d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]) == R::Int(0)
    });
    let di = info(&mut d);
    assert!(
        di.contains(&format!(
            "importing_slot(s): {slot}\r\nimport_state: error\r\n"
        )),
        "{di}"
    );
}

#[test]
fn a_destination_killed_mid_migration_leaves_the_slot_whole_on_the_source() {
    let (src, dst, slot) = slow_migration();
    dst.serve.signal("KILL");
    let mut s = src.conn();
    eventually("the migration fails", || {
        info(&mut s).contains("migrating_state: fail")
    });
    for i in 0..SLOW_KEYS {
        assert_eq!(
            s.call(&["GET", &format!("{{m}}{i}")]),
            R::bulk("v"),
            "{{m}}{i}"
        );
    }
    let R::Int(n) = s.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]) else {
        panic!()
    };
    assert_eq!(n as usize, SLOW_KEYS);
    // The slot is still served here, writes included.
    assert_eq!(s.call(&["SET", "{m}after", "w"]), R::ok());
    assert_eq!(s.call(&["GET", "{m}after"]), R::bulk("w"));
}

#[test]
fn a_script_writing_an_undeclared_key_of_a_moving_slot_is_sent_again() {
    let (src, dst, _slot) = slow_migration();
    let mut s = src.conn();
    // `{m}0` is the slot's first key: already sent when the script runs.
    assert_eq!(
        s.call(&["EVAL", "return redis.call('set', '{m}0', 'new')", "0"]),
        R::ok()
    );
    assert_eq!(
        s.call(&[
            "EVAL",
            "redis.call('set', KEYS[1], 'declared'); return redis.call('set', '{m}1', 'undeclared')",
            "1",
            "{m}2",
        ]),
        R::ok()
    );
    eventually("the migration succeeds", || {
        info(&mut s).contains("migrating_state: success")
    });
    let mut d = dst.conn();
    for (key, value) in [
        ("{m}0", "new"),
        ("{m}1", "undeclared"),
        ("{m}2", "declared"),
    ] {
        assert_eq!(
            d.call(&["GET", key]),
            R::bulk(value),
            "{key} on the destination"
        );
    }
}

/// Writers that outpace the migration (new keys of the moving slot as
/// fast as two connections go, the migration at 1,000 commands a second)
/// used to make every catch-up round larger than the one before, so the
/// slot never moved. The rounds stop growing: writes are refused
/// (TRYAGAIN) for one last round, and the slot moves with every
/// acknowledged write.
#[test]
fn a_slot_moves_under_writes_faster_than_the_migration() {
    let (src, dst, slot) = source_and_destination();
    let mut s = src.conn();
    for i in 0..PRELOAD {
        assert_eq!(s.call(&["SET", &format!("{{m}}p:{i}"), "p"]), R::ok());
    }
    assert_eq!(s.call(&["CONFIG", "SET", "migrate-speed", "1000"]), R::ok());

    let writers = Writers::start(src.addr(), 2, |w, i| format!("{{m}}w{w}:{i}"));
    writers.wait_for(200);
    assert_eq!(s.call(&["CLUSTERX", "MIGRATE", &slot, &dst.id]), R::ok());
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let si = info(&mut s);
        if si.contains("migrating_state: success") {
            break;
        }
        assert!(!si.contains("migrating_state: fail"), "{si}");
        assert!(
            Instant::now() < deadline,
            "the slot did not move in 300 s under the writers: {si}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (acked, _) = writers.stop();
    let mut d = dst.conn();
    for (k, _) in &acked {
        assert!(
            matches!(d.call(&["GET", k]), R::Bulk(Some(_))),
            "{k} lost in the move"
        );
    }
    assert_eq!(
        d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]),
        R::Int((PRELOAD + acked.len()) as i64)
    );
}
