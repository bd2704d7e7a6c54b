//! `APPLYBATCH`, the command of Kvrocks' `raw-key-value` slot migration:
//! write batches in Kvrocks' own layout, built here as Kvrocks'
//! `BatchSender` builds them (one `LogData` for the first key of a batch,
//! then each key's metadata and subkeys, a list split over two batches),
//! sent on an importing connection and read back as the keys they hold.
//! With `REDCODEC_KVROCKS_BIN`, a real Kvrocks 2.10 node also moves a slot
//! to a redcodec node this way, and the slot comes back as commands.

use std::time::Duration;

use redcodec_codec::{DataType, ListBounds, Meta};
use redcodec_kvrocks::keys::KeyScheme;
use redcodec_kvrocks::meta;
use rocksdb::{ColumnFamilyDescriptor, Options, WriteBatch, DB};

mod serve_support;

mod cluster_support;
use cluster_support::{migration_end, node_id, topology, Conn, Node, R};

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

/// A scratch RocksDB with Kvrocks' column families in Kvrocks' order, so
/// that `put_cf` writes Kvrocks' column family ids (metadata 1, scores 2).
struct Families {
    _dir: tempfile::TempDir,
    db: DB,
}

impl Families {
    fn open() -> Families {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let names = [
            "metadata",
            "zset_score",
            "pubsub",
            "propagate",
            "stream",
            "search",
        ];
        let descs = names
            .into_iter()
            .map(|n| ColumnFamilyDescriptor::new(n, Options::default()));
        let db = DB::open_cf_descriptors(&opts, dir.path(), descs).unwrap();
        Families { _dir: dir, db }
    }

    fn meta(&self, b: &mut WriteBatch, key: &[u8], value: &[u8]) {
        let cf = self.db.cf_handle("metadata").unwrap();
        b.put_cf(&cf, slotted().ns_key(key), value);
    }
}

fn slotted() -> KeyScheme {
    KeyScheme::new(redcodec_kvrocks::DEFAULT_NAMESPACE, true).unwrap()
}

fn collection(data_type: DataType, version: u64, size: u64, expire_ms: u64) -> Vec<u8> {
    let mut m = meta::new_meta(data_type, version);
    m.size = size;
    m.expire_ms = expire_ms;
    if data_type == DataType::List {
        m.list = ListBounds::Array {
            head: meta::LIST_INITIAL_INDEX,
            tail: meta::LIST_INITIAL_INDEX + size,
        };
    }
    meta::encode(&m).unwrap()
}

#[test]
fn applybatch_imports_a_slot_from_raw_batches() {
    let node = Node::start(1, &[]);
    let src = node_id(0);
    let text = topology(&[(&src, 7999, "0-16383"), (&node.id, node.port(), "")]);
    let mut link = node.conn();
    assert_eq!(link.call(&["CLUSTERX", "SETNODES", &text, "1"]), R::ok());
    let R::Int(slot) = link.call(&["CLUSTER", "KEYSLOT", "{m}"]) else {
        panic!("KEYSLOT")
    };
    let slot = slot.to_string();
    assert_eq!(link.call(&["CLUSTER", "IMPORT", &slot, "0"]), R::ok());

    let f = Families::open();
    let idx = |i: u64| (meta::LIST_INITIAL_INDEX + i).to_be_bytes();
    let far = 4_102_444_800_000; // 2100-01-01
                                 // Batch 1: the hash's LogData heads it; a hash with a TTL, a string,
                                 // a sorted set and the first two elements of a list of three.
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    f.meta(&mut b, b"{m}h", &collection(DataType::Hash, 7, 2, far));
    b.put(slotted().sub_key(b"{m}h", 7, b"f"), b"v 1");
    b.put(slotted().sub_key(b"{m}h", 7, b"g"), b"\x00\xff");
    f.meta(
        &mut b,
        b"{m}s",
        &meta::encode(&Meta::string(b"text".to_vec(), 0)).unwrap(),
    );
    f.meta(&mut b, b"{m}z", &collection(DataType::ZSet, 8, 2, 0));
    // Each member and its score-index record, as Kvrocks sends them.
    let scores = f.db.cf_handle("zset_score").unwrap();
    for (member, score) in [(&b"a"[..], 1.5f64), (b"b", -2.0)] {
        let score = redcodec_kvrocks::score::to_bytes(score);
        b.put(slotted().sub_key(b"{m}z", 8, member), score);
        b.put_cf(
            &scores,
            slotted().sub_key(b"{m}z", 8, &[&score[..], member].concat()),
            b"",
        );
    }
    f.meta(&mut b, b"{m}l", &collection(DataType::List, 9, 3, 0));
    b.put(slotted().sub_key(b"{m}l", 9, &idx(0)), b"x");
    b.put(slotted().sub_key(b"{m}l", 9, &idx(1)), b"y");
    let size = i64::try_from(b.data().len()).unwrap();
    assert_eq!(
        link.call_bytes(&[b"APPLYBATCH", b.data()]),
        R::Int(size),
        "the reply is the batch's size, as Kvrocks'"
    );
    // Batch 2: the rest of the list, under the list's own LogData (RPUSH).
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 7");
    b.put(slotted().sub_key(b"{m}l", 9, &idx(2)), b"z");
    let size = i64::try_from(b.data().len()).unwrap();
    assert_eq!(
        link.call_bytes(&[b"APPLYBATCH", b.data(), b"lowpri"]),
        R::Int(size)
    );
    assert_eq!(link.call(&["CLUSTER", "IMPORT", &slot, "1"]), R::ok());

    assert_eq!(link.call(&["HGET", "{m}h", "f"]), R::bulk("v 1"));
    assert_eq!(
        link.call_bytes(&[b"HGET", b"{m}h", b"g"]),
        R::Bulk(Some(b"\x00\xff".to_vec()))
    );
    assert_eq!(link.call(&["PEXPIRETIME", "{m}h"]), R::Int(far as i64));
    assert_eq!(link.call(&["GET", "{m}s"]), R::bulk("text"));
    assert_eq!(
        link.call(&["ZRANGE", "{m}z", "0", "-1", "WITHSCORES"]),
        R::Array(Some(
            ["b", "-2", "a", "1.5"].into_iter().map(R::bulk).collect()
        ))
    );
    assert_eq!(
        link.call(&["LRANGE", "{m}l", "0", "-1"]),
        R::Array(Some(["x", "y", "z"].into_iter().map(R::bulk).collect()))
    );

    // Bad input: an error, nothing applied; arguments as Kvrocks checks them.
    assert_eq!(
        link.call(&["APPLYBATCH", "x", "lowpri", "more"]),
        R::err("ERR wrong number of arguments")
    );
    assert_eq!(
        link.call(&["APPLYBATCH", "x", "high"]),
        R::err("ERR only support LOWPRI option")
    );
    let R::Error(e) = link.call_bytes(&[b"APPLYBATCH", b"not a batch"]) else {
        panic!("a bad batch is refused")
    };
    assert!(e.starts_with("ERR the write batch does not decode"), "{e}");
    assert_eq!(link.call(&["MULTI"]), R::ok());
    assert_eq!(
        link.call(&["APPLYBATCH", "x"]),
        R::err("ERR Command not allowed inside a transaction")
    );
    assert_eq!(link.call(&["DISCARD"]), R::ok());
}

/// Every key of the slot's test data, read as type and content.
fn contents(c: &mut Conn) -> Vec<(String, R)> {
    let mut out = Vec::new();
    for i in 0..200 {
        out.push((format!("s{i}"), c.call(&["GET", &format!("{{m}}s{i}")])));
        out.push((format!("h{i}"), c.call(&["HGETALL", &format!("{{m}}h{i}")])));
        out.push((
            format!("l{i}"),
            c.call(&["LRANGE", &format!("{{m}}l{i}"), "0", "-1"]),
        ));
        out.push((
            format!("t{i}"),
            c.call(&["SMEMBERS", &format!("{{m}}t{i}")]),
        ));
        out.push((
            format!("z{i}"),
            c.call(&["ZRANGE", &format!("{{m}}z{i}"), "0", "-1", "WITHSCORES"]),
        ));
        out.push((
            format!("ttl{i}"),
            c.call(&["PEXPIRETIME", &format!("{{m}}h{i}")]),
        ));
    }
    out
}

#[test]
fn a_real_kvrocks_node_moves_a_slot_here_raw_and_takes_it_back() {
    let test = "a slot moved between a real Kvrocks node and a redcodec node";
    let Some(bin) = kvrocks_bin(test) else {
        return;
    };
    let kv = Kvrocks::start(&bin, "cluster-enabled yes\n");
    let kv_conn = || Conn::open(&kv.addr());
    let rc = Node::start(1, &[]);
    let kv_id = node_id(0);
    let set = |kv_slots: &str, rc_slots: &str, version: &str| {
        let text = topology(&[(&kv_id, kv.port, kv_slots), (&rc.id, rc.port(), rc_slots)]);
        let mut k = kv_conn();
        assert_eq!(k.call(&["CLUSTERX", "SETNODEID", &kv_id]), R::ok());
        assert_eq!(k.call(&["CLUSTERX", "SETNODES", &text, version]), R::ok());
        assert_eq!(
            rc.conn().call(&["CLUSTERX", "SETNODES", &text, version]),
            R::ok()
        );
    };
    set("0-16383", "", "1");
    let mut k = kv_conn();
    let R::Int(slot) = k.call(&["CLUSTER", "KEYSLOT", "{m}"]) else {
        panic!("KEYSLOT")
    };
    for i in 0..200 {
        let n = i.to_string();
        let key = |p: &str| format!("{{m}}{p}{i}");
        assert_eq!(k.call(&["SET", &key("s"), &format!("v {i}")]), R::ok());
        k.call(&["HSET", &key("h"), "f", &n, "g", &"x".repeat(i * 7)]);
        k.call(&["RPUSH", &key("l"), "a", &n, "c"]);
        k.call(&["SADD", &key("t"), "x", &n]);
        k.call(&["ZADD", &key("z"), "1.5", "a", &format!("-{i}.25"), "b"]);
        k.call(&["PEXPIREAT", &key("h"), "4102444800000"]);
    }
    let before = contents(&mut k);

    // Kvrocks -> redcodec, raw-key-value (APPLYBATCH).
    assert_eq!(
        k.call(&["CONFIG", "SET", "migrate-type", "raw-key-value"]),
        R::ok()
    );
    assert_eq!(
        k.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &rc.id]),
        R::ok()
    );
    assert_eq!(migration_end(&mut k, Duration::from_secs(120)), "success");
    let others = format!("0-{} {}-16383", slot - 1, slot + 1);
    set(&others, &slot.to_string(), "2");
    let mut r = rc.conn();
    assert_eq!(contents(&mut r), before, "the slot as Kvrocks sent it raw");

    // redcodec -> Kvrocks, commands.
    assert_eq!(
        r.call(&["CLUSTERX", "MIGRATE", &slot.to_string(), &kv_id]),
        R::ok()
    );
    assert_eq!(migration_end(&mut r, Duration::from_secs(120)), "success");
    set("0-16383", "", "3");
    assert_eq!(contents(&mut kv_conn()), before, "the slot back on Kvrocks");
}
