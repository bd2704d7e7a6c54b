//! `CLUSTERX MIGRATE` with `migrate-type raw-key-value` on a redcodec
//! source: the slot's stored records go as Kvrocks write batches
//! (`APPLYBATCH`). A slot of every type (TTLs, big collections) moves
//! while a client writes to it, every acknowledged write arrives; the
//! destination holds what `redis-command` gives; a destination killed
//! mid-move leaves the slot whole on the source; and, with
//! `REDCODEC_KVROCKS_BIN`, the slot moves raw to a real Kvrocks node and
//! back.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod serve_support;

mod cluster_support;
use cluster_support::{migration_end, routed, set_nodes, topology, Conn, Node, R};

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

/// How long a move may take on a busy machine.
const MIGRATION_BOUND: Duration = Duration::from_secs(300);

/// Keys of each small type in the slot.
const SMALL: usize = 200;
/// Elements of each big collection.
const BIG: usize = 3000;
/// An absolute expiry far ahead (2100-01-01), plus the key's number.
const FAR: u64 = 4_102_444_800_000;

fn ok(r: R) {
    assert_eq!(r, R::ok());
}

/// Runs `args` and checks it is not an error.
fn run(c: &mut Conn, args: &[&str]) {
    let r = c.call(args);
    assert!(!matches!(r, R::Error(_)), "{args:?}: {r:?}");
}

/// Fills the slot of `{m}` with keys of every type (some with a TTL, a
/// list whose head moved, a binary key) and big collections; keys of
/// other slots too. Returns the slot's keys.
fn load(c: &mut Conn) -> Vec<String> {
    let mut keys = Vec::new();
    for i in 0..SMALL {
        let n = i.to_string();
        let k = |t: &str| format!("{{m}}{t}:{i}");
        ok(c.call(&["SET", &k("s"), &format!("v {i}")]));
        ok(c.call(&["SET", &k("e"), &n, "PXAT", &(FAR + i as u64).to_string()]));
        run(c, &["HSET", &k("h"), "f", &n, "g", &"x".repeat(i * 5)]);
        run(c, &["RPUSH", &k("l"), "a", "b", &n, "d"]);
        run(c, &["LPOP", &k("l")]);
        run(c, &["SADD", &k("t"), "x", &n]);
        run(c, &["ZADD", &k("z"), "1.5", "a", "-inf", "b", &n, "c"]);
        if i % 2 == 0 {
            run(c, &["PEXPIREAT", &k("h"), &(FAR + i as u64).to_string()]);
            run(c, &["PEXPIREAT", &k("z"), &(FAR + i as u64).to_string()]);
        }
        ok(c.call(&["SET", &format!("other:{i}"), "o"]));
        for t in ["s", "e", "h", "l", "t", "z"] {
            keys.push(k(t));
        }
    }
    for chunk in (0..BIG).collect::<Vec<_>>().chunks(500) {
        let mut h = vec!["HSET".to_string(), "{m}bigh".into()];
        let mut l = vec!["RPUSH".to_string(), "{m}bigl".into()];
        let mut z = vec!["ZADD".to_string(), "{m}bigz".into()];
        let mut s = vec!["SADD".to_string(), "{m}bigs".into()];
        for &j in chunk {
            h.extend([format!("f{j}"), format!("v{j}")]);
            l.push(format!("e{j}"));
            z.extend([format!("{}.25", j % 97), format!("m{j}")]);
            s.push(format!("s{j}"));
        }
        for cmd in [h, l, z, s] {
            run(c, &cmd.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
    run(c, &["PEXPIREAT", "{m}bigh", &FAR.to_string()]);
    assert_eq!(
        c.call_bytes(&[b"SET", b"{m}\x00\xff bin", b"\x01\x02\x00"]),
        R::ok()
    );
    keys.extend(["{m}bigh", "{m}bigl", "{m}bigz", "{m}bigs"].map(String::from));
    keys.push("{m}\u{0}\u{ff} bin".into());
    keys
}

/// A key's type, content (hash pairs and set members sorted) and
/// absolute expiry.
fn read_key(c: &mut Conn, key: &str) -> (String, R, R) {
    let k: &[u8] = if key == "{m}\u{0}\u{ff} bin" {
        b"{m}\x00\xff bin"
    } else {
        key.as_bytes()
    };
    let kind = c.call_bytes(&[b"TYPE", k]).text();
    let sorted = |r: R, width: usize| match r {
        R::Array(Some(items)) => {
            let mut groups: Vec<Vec<R>> = items.chunks(width).map(<[R]>::to_vec).collect();
            groups.sort_by_key(|g| format!("{g:?}"));
            R::Array(Some(groups.concat()))
        }
        other => other,
    };
    let content = match kind.as_str() {
        "string" => c.call_bytes(&[b"GET", k]),
        "hash" => sorted(c.call_bytes(&[b"HGETALL", k]), 2),
        "list" => c.call_bytes(&[b"LRANGE", k, b"0", b"-1"]),
        "set" => sorted(c.call_bytes(&[b"SMEMBERS", k]), 1),
        "zset" => c.call_bytes(&[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"]),
        _ => R::Bulk(None),
    };
    (kind, content, c.call_bytes(&[b"PEXPIRETIME", k]))
}

fn read_all(c: &mut Conn, keys: &[String]) -> BTreeMap<String, (String, R, R)> {
    keys.iter().map(|k| (k.clone(), read_key(c, k))).collect()
}

fn slot_of(c: &mut Conn) -> u16 {
    let R::Int(slot) = c.call(&["CLUSTER", "KEYSLOT", "{m}"]) else {
        panic!("KEYSLOT")
    };
    slot as u16
}

/// Every slot but `slot`, as SETNODES ranges.
fn others(slot: u16) -> String {
    let mut r = Vec::new();
    if slot > 0 {
        r.push(format!("0-{}", slot - 1));
    }
    if slot < 16383 {
        r.push(format!("{}-16383", slot + 1));
    }
    r.join(" ")
}

/// What the writer's acknowledged writes left in the keys it touches.
#[derive(Default)]
struct Model {
    strings: BTreeMap<String, String>,
    hash: BTreeMap<String, String>,
    zset_removed: Vec<String>,
    lists: BTreeMap<usize, VecDeque<String>>,
}

/// A client writing to the slot until stopped: new strings, fields of the
/// big hash set and deleted, members of the big sorted set removed, heads
/// of lists popped; it keeps the model of what it was acknowledged.
struct Writer {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    thread: JoinHandle<(Model, String)>,
}

impl Writer {
    fn start(addr: &str) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let (s, w, addr) = (stop.clone(), written.clone(), addr.to_string());
        let thread = std::thread::spawn(move || {
            let mut m = Model {
                hash: (0..BIG)
                    .map(|j| (format!("f{j}"), format!("v{j}")))
                    .collect(),
                ..Model::default()
            };
            for i in 0..SMALL {
                m.lists
                    .insert(i, ["b", &i.to_string(), "d"].map(String::from).into());
            }
            let mut conns = vec![(addr.clone(), Conn::open(&addr))];
            let mut at = 0;
            let mut i = 0usize;
            while !s.load(Ordering::SeqCst) {
                let n = i.to_string();
                match i % 4 {
                    0 => {
                        let key = format!("{{m}}w:{}", i % 700);
                        let r = routed(&mut conns, &mut at, &["SET", &key, &n]);
                        assert_eq!(r, R::ok());
                        m.strings.insert(key, n);
                    }
                    1 => {
                        let f = format!("f{}", (i * 7) % BIG);
                        routed(&mut conns, &mut at, &["HSET", "{m}bigh", &f, &n]);
                        m.hash.insert(f, n);
                    }
                    2 => {
                        let f = format!("f{}", (i * 13) % BIG);
                        routed(&mut conns, &mut at, &["HDEL", "{m}bigh", &f]);
                        m.hash.remove(&f);
                        let z = format!("m{}", (i * 11) % BIG);
                        routed(&mut conns, &mut at, &["ZREM", "{m}bigz", &z]);
                        m.zset_removed.push(z);
                    }
                    _ => {
                        let l = (i / 4) % SMALL;
                        routed(&mut conns, &mut at, &["LPOP", &format!("{{m}}l:{l}")]);
                        m.lists.get_mut(&l).unwrap().pop_front();
                    }
                }
                i += 1;
                w.fetch_add(1, Ordering::SeqCst);
            }
            (m, conns[at].0.clone())
        });
        Writer {
            stop,
            written,
            thread,
        }
    }

    fn wait_for(&self, n: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.written.load(Ordering::SeqCst) < n {
            assert!(Instant::now() < deadline, "the writer is stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn stop(self) -> (Model, String) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

/// `before` (the slot read before the move) with the writer's model
/// applied: what the slot must hold after it.
fn expected(
    mut before: BTreeMap<String, (String, R, R)>,
    m: &Model,
) -> BTreeMap<String, (String, R, R)> {
    let bulk = |s: &str| R::bulk(s);
    for (k, v) in &m.strings {
        before.insert(k.clone(), ("string".into(), bulk(v), R::Int(-1)));
    }
    let mut pairs: Vec<(String, String)> = m.hash.clone().into_iter().collect();
    pairs.sort_by_key(|(f, v)| format!("{:?}", [bulk(f), bulk(v)]));
    let h = before.get_mut("{m}bigh").unwrap();
    h.1 = R::Array(Some(
        pairs.iter().flat_map(|(f, v)| [bulk(f), bulk(v)]).collect(),
    ));
    let z = before.get_mut("{m}bigz").unwrap();
    if let R::Array(Some(items)) = &z.1 {
        let kept: Vec<R> = items
            .chunks(2)
            .filter(|p| !m.zset_removed.iter().any(|r| p[0] == bulk(r)))
            .flat_map(<[R]>::to_vec)
            .collect();
        z.1 = R::Array(Some(kept));
    }
    for (i, l) in &m.lists {
        let key = format!("{{m}}l:{i}");
        if l.is_empty() {
            before.insert(key, ("none".into(), R::Bulk(None), R::Int(-2)));
        } else {
            let e = before.get_mut(&key).unwrap();
            e.1 = R::Array(Some(l.iter().map(|s| bulk(s)).collect()));
        }
    }
    before
}

/// A source owning every slot and a destination owning none.
fn pair() -> (Node, Node, u16) {
    let src = Node::start(0, &[]);
    let dst = Node::start(1, &[]);
    let text = topology(&[(&src.id, src.port(), "0-16383"), (&dst.id, dst.port(), "")]);
    let nodes = [src, dst];
    set_nodes(&nodes, &text, 1);
    let [src, dst] = nodes;
    let slot = slot_of(&mut src.conn());
    (src, dst, slot)
}

#[test]
fn a_slot_moves_raw_while_a_client_writes() {
    let (src, dst, slot) = pair();
    let mut s = src.conn();
    let mut keys = load(&mut s);
    let before = read_all(&mut s, &keys);
    // Small paced batches: the move lasts while the writer writes.
    ok(s.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]));
    ok(s.call(&["CONFIG", "SET", "migrate-batch-size-kb", "4"]));
    ok(s.call(&["CONFIG", "SET", "migrate-batch-rate-limit-mb", "1"]));
    let writer = Writer::start(src.addr());
    writer.wait_for(200);
    ok(s.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &dst.id]));
    assert_eq!(migration_end(&mut s, MIGRATION_BOUND), "success");
    writer.wait_for(writer.written.load(Ordering::SeqCst) + 200);
    let (model, writing_to) = writer.stop();
    assert_eq!(writing_to, dst.addr(), "the writer followed MOVED");
    let di = dst.conn().call(&["CLUSTER", "INFO"]).text();
    assert!(
        di.contains(&format!(
            "importing_slot(s): {slot}\r\nimport_state: success\r\n"
        )),
        "{di}"
    );

    keys.extend(model.strings.keys().cloned());
    let want = expected(before, &model);
    let mut d = dst.conn();
    let got = read_all(&mut d, &keys);
    for (k, v) in &want {
        assert_eq!(got.get(k), Some(v), "{k} on the destination");
    }
    let live = want.values().filter(|(t, _, _)| t != "none").count();
    assert_eq!(
        d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]),
        R::Int(live as i64)
    );
    // The source sends the slot on; keys of other slots stay.
    assert_eq!(
        s.call(&["GET", "{m}s:1"]),
        R::err(&format!("MOVED {slot} {}", dst.addr()))
    );
    assert_eq!(s.call(&["GET", "other:1"]), R::bulk("o"));
}

#[test]
fn raw_and_commands_give_the_destination_the_same_slot() {
    let mut got = Vec::new();
    for kind in ["redis-command", "raw-key-value"] {
        let (src, dst, slot) = pair();
        let mut s = src.conn();
        let keys = load(&mut s);
        let before = read_all(&mut s, &keys);
        ok(s.call(&["CONFIG", "SET", "migrate-type", kind]));
        ok(s.call(&["CONFIG", "SET", "migrate-speed", "0"]));
        ok(s.call(&[
            "CLUSTERX",
            "MIGRATE",
            &slot.to_string(),
            &dst.id,
            "sync",
            "120",
        ]));
        let after = read_all(&mut dst.conn(), &keys);
        assert_eq!(after, before, "{kind}: the slot as it was on the source");
        let count = dst
            .conn()
            .call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]);
        assert_eq!(count, R::Int(keys.len() as i64), "{kind}");
        got.push(after);
    }
    assert_eq!(got[0], got[1], "both types give the same slot");
}

#[test]
fn a_destination_killed_mid_raw_move_leaves_the_slot_whole_on_the_source() {
    let (src, dst, slot) = pair();
    let mut s = src.conn();
    let value = "v".repeat(1000);
    for i in 0..3000 {
        ok(s.call(&["SET", &format!("{{m}}{i}"), &value]));
    }
    run(&mut s, &["HSET", "{m}h", "f", "1", "g", "2"]);
    ok(s.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]));
    // About 3 s for the slot.
    ok(s.call(&["CONFIG", "SET", "migrate-batch-rate-limit-mb", "1"]));
    ok(s.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &dst.id]));
    let mut d = dst.conn();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let R::Int(n) = d.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]) else {
            panic!()
        };
        if n > 0 {
            assert!(n < 3001, "the whole slot arrived at 1 MB a second");
            break;
        }
        assert!(Instant::now() < deadline, "no key of the slot arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    dst.serve.signal("KILL");
    assert_eq!(migration_end(&mut s, MIGRATION_BOUND), "fail");
    let si = s.call(&["CLUSTER", "INFO"]).text();
    assert!(
        si.contains(&format!("migrating_slot(s): {slot}\r\n")),
        "{si}"
    );
    for i in 0..3000 {
        assert_eq!(
            s.call(&["GET", &format!("{{m}}{i}")]),
            R::bulk(&value),
            "{{m}}{i}"
        );
    }
    assert_eq!(s.call(&["HGET", "{m}h", "g"]), R::bulk("2"));
    assert_eq!(
        s.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]),
        R::Int(3001)
    );
    ok(s.call(&["SET", "{m}after", "w"]));
    assert_eq!(s.call(&["GET", "{m}after"]), R::bulk("w"));
}

#[test]
fn a_slot_moves_raw_to_a_real_kvrocks_node_and_back() {
    let test = "a slot moved raw between redcodec and a real Kvrocks node";
    let Some(bin) = kvrocks_bin(test) else {
        return;
    };
    let kv = Kvrocks::start(&bin, "cluster-enabled yes\n");
    let rc = Node::start(0, &[]);
    let kv_id = cluster_support::node_id(1);
    let set = |rc_slots: &str, kv_slots: &str, version: &str| {
        let text = topology(&[(&rc.id, rc.port(), rc_slots), (&kv_id, kv.port, kv_slots)]);
        let mut k = Conn::open(&kv.addr());
        ok(k.call(&["CLUSTERX", "SETNODEID", &kv_id]));
        ok(k.call(&["CLUSTERX", "SETNODES", &text, version]));
        ok(rc.conn().call(&["CLUSTERX", "SETNODES", &text, version]));
    };
    set("0-16383", "", "1");
    let mut r = rc.conn();
    let slot = slot_of(&mut r);
    let mut keys = load(&mut r);
    let before = read_all(&mut r, &keys);

    // redcodec -> Kvrocks, raw, while a client writes (fields deleted
    // meanwhile must not come back on Kvrocks).
    ok(r.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]));
    ok(r.call(&["CONFIG", "SET", "migrate-batch-size-kb", "4"]));
    ok(r.call(&["CONFIG", "SET", "migrate-batch-rate-limit-mb", "1"]));
    let writer = Writer::start(rc.addr());
    writer.wait_for(200);
    ok(r.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &kv_id]));
    assert_eq!(migration_end(&mut r, MIGRATION_BOUND), "success");
    writer.wait_for(writer.written.load(Ordering::SeqCst) + 200);
    let (model, writing_to) = writer.stop();
    assert_eq!(
        writing_to,
        kv.addr(),
        "the writer followed MOVED to Kvrocks"
    );
    set(&others(slot), &slot.to_string(), "2");
    keys.extend(model.strings.keys().cloned());
    let want = expected(before, &model);
    let mut k = Conn::open(&kv.addr());
    let on_kvrocks = read_all(&mut k, &keys);
    for (key, v) in &want {
        assert_eq!(on_kvrocks.get(key), Some(v), "{key} on Kvrocks");
    }

    // Kvrocks -> redcodec, raw.
    ok(k.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]));
    ok(k.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &rc.id]));
    assert_eq!(migration_end(&mut k, MIGRATION_BOUND), "success");
    set("0-16383", "", "3");
    let back = read_all(&mut rc.conn(), &keys);
    for (key, v) in &want {
        assert_eq!(back.get(key), Some(v), "{key} back on redcodec");
    }
}

const REDIS_SERVER: redcodec_conformance::skip::Tool =
    redcodec_conformance::skip::Tool::new("redis-server", "redis-server", "REDCODEC_REQUIRE_REDIS");

/// `field` of `INFO replication`.
fn replication_field(c: &mut Conn, field: &str) -> Option<String> {
    let info = c.call(&["INFO", "replication"]).text();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().to_string())
}

/// A destination followed by a replica (a real redis-server) takes the
/// batches as the commands they make (its replicas get commands), not
/// directly: the slot reaches the replica too.
#[test]
fn a_raw_move_into_a_node_with_a_replica_reaches_the_replica() {
    if REDIS_SERVER
        .find("a raw slot move reaches the destination's redis-server replica")
        .is_none()
    {
        return;
    }
    let (src, dst, slot) = pair();
    let rdir = tempfile::tempdir().unwrap();
    let replica = redcodec_conformance::target::RedisServer::start_with(
        Some(rdir.path()),
        &["--replicaof", "127.0.0.1", &dst.port().to_string()],
    )
    .expect("redis-server starts");
    let mut r = Conn::open(&format!("127.0.0.1:{}", replica.port()));
    let mut d = dst.conn();
    let caught_up = |r: &mut Conn, d: &mut Conn| {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let up = replication_field(r, "master_link_status");
            let (m, o) = (
                replication_field(d, "master_repl_offset"),
                replication_field(r, "master_repl_offset"),
            );
            if up.as_deref() == Some("up") && m.is_some() && m == o {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replica never caught up: {up:?} {m:?} {o:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    caught_up(&mut r, &mut d);

    let mut s = src.conn();
    let keys = load(&mut s);
    let before = read_all(&mut s, &keys);
    ok(s.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]));
    ok(s.call(&[
        "CLUSTERX",
        "MIGRATE",
        &slot.to_string(),
        &dst.id,
        "sync",
        "120",
    ]));
    assert_eq!(read_all(&mut d, &keys), before, "the destination");
    caught_up(&mut r, &mut d);
    assert_eq!(read_all(&mut r, &keys), before, "the destination's replica");
}
