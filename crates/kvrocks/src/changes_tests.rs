//! Batches built as Kvrocks builds them (its key and metadata encodings,
//! RocksDB's own `WriteBatch`), read back as changes.

use super::*;
use crate::keys::KeyScheme;
use redcodec_codec::{ListBounds, Meta};
use rocksdb::{ColumnFamilyDescriptor, Options, WriteBatch, DB};

struct Db {
    _dir: tempfile::TempDir,
    db: DB,
}

fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let descs = [
        "metadata",
        "zset_score",
        "pubsub",
        "propagate",
        "stream",
        "search",
    ]
    .into_iter()
    .map(|n| ColumnFamilyDescriptor::new(n, Options::default()));
    let db = DB::open_cf_descriptors(&opts, dir.path(), descs).unwrap();
    Db { _dir: dir, db }
}

fn ns() -> KeyScheme {
    KeyScheme::new(crate::DEFAULT_NAMESPACE, false).unwrap()
}

fn meta_of(data_type: DataType, version: u64, size: u64, expire_ms: u64) -> Vec<u8> {
    let mut m = meta::new_meta(data_type, version);
    m.size = size;
    m.expire_ms = expire_ms;
    meta::encode(&m).unwrap()
}

fn list_meta(version: u64, head: u64, tail: u64) -> Vec<u8> {
    let mut m = meta::new_meta(DataType::List, version);
    m.size = tail - head;
    m.list = ListBounds::Array { head, tail };
    meta::encode(&m).unwrap()
}

fn cmds(changes: &Changes) -> Vec<String> {
    changes
        .changes
        .iter()
        .map(|c| match c {
            Change::Command { namespace, args } => {
                assert_eq!(namespace, crate::DEFAULT_NAMESPACE);
                args.iter().map(|a| lossy(a)).collect::<Vec<_>>().join(" ")
            }
            Change::FlushNamespace(ns) => format!("FLUSHNS {}", lossy(ns)),
            Change::FlushAll => "FLUSHALL".into(),
        })
        .collect()
}

impl Db {
    fn meta_put(&self, b: &mut WriteBatch, key: &[u8], value: &[u8]) {
        b.put_cf(
            &self.db.cf_handle("metadata").unwrap(),
            ns().ns_key(key),
            value,
        );
    }
    fn meta_del(&self, b: &mut WriteBatch, key: &[u8]) {
        b.delete_cf(&self.db.cf_handle("metadata").unwrap(), ns().ns_key(key));
    }
}

fn decoded(b: &WriteBatch) -> Changes {
    decode(b.data(), false).unwrap()
}

#[test]
fn a_string_with_an_expiry() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"1");
    d.meta_put(
        &mut b,
        b"s",
        &meta::encode(&Meta::string(b"v a l".to_vec(), 1_900_000_000_123)).unwrap(),
    );
    let c = decoded(&b);
    assert_eq!(cmds(&c), ["SET s v a l", "PEXPIREAT s 1900000000123"]);
    assert_eq!(c.next_sequence, c.sequence + 1);
}

#[test]
fn a_new_hash_is_its_whole_content() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    b.put(ns().sub_key(b"h", 7, b"f1"), b"v1");
    b.put(ns().sub_key(b"h", 7, b"f2"), b"v2");
    d.meta_put(&mut b, b"h", &meta_of(DataType::Hash, 7, 2, 0));
    assert_eq!(cmds(&decoded(&b)), ["DEL h", "HSET h f1 v1 f2 v2"]);
}

#[test]
fn members_added_and_removed_keep_the_rest() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    b.put(ns().sub_key(b"h", 7, b"f3"), b"v3");
    d.meta_put(
        &mut b,
        b"h",
        &meta_of(DataType::Hash, 7, 3, 5_000_000_000_000),
    );
    assert_eq!(
        cmds(&decoded(&b)),
        ["HSET h f3 v3", "PEXPIREAT h 5000000000000"]
    );

    let mut b = WriteBatch::default();
    b.put_log_data(b"4");
    b.delete(ns().sub_key(b"s", 9, b"a"));
    b.delete(ns().sub_key(b"s", 9, b"b"));
    d.meta_put(&mut b, b"s", &meta_of(DataType::Set, 9, 4, 0));
    assert_eq!(cmds(&decoded(&b)), ["SREM s a b", "PERSIST s"]);

    // A field updated in place: no metadata written.
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    b.put(ns().sub_key(b"h", 7, b"f1"), b"new");
    assert_eq!(cmds(&decoded(&b)), ["HSET h f1 new"]);
}

#[test]
fn sorted_set_scores_are_exact() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"5");
    for (m, s) in [(&b"a"[..], 0.1f64), (b"b", -2.5e300), (b"c", f64::INFINITY)] {
        b.put(ns().sub_key(b"z", 3, m), crate::score::to_bytes(s));
    }
    d.meta_put(&mut b, b"z", &meta_of(DataType::ZSet, 3, 3, 0));
    assert_eq!(
        cmds(&decoded(&b)),
        ["DEL z", "ZADD z 1e-1 a -2.5e300 b +inf c"]
    );
}

#[test]
fn list_commands_from_the_log_data() {
    let d = db();
    let mid = meta::LIST_INITIAL_INDEX;
    let idx = |i: u64| i.to_be_bytes();
    // A new list: its whole content, in index order.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 6");
    b.put(ns().sub_key(b"l", 1, &idx(mid - 1)), b"a");
    b.put(ns().sub_key(b"l", 1, &idx(mid - 2)), b"b");
    d.meta_put(&mut b, b"l", &list_meta(1, mid - 2, mid));
    assert_eq!(cmds(&decoded(&b)), ["DEL l", "RPUSH l b a"]);
    // Pushed onto a list of 2.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 7");
    b.put(ns().sub_key(b"l", 1, &idx(mid)), b"c d");
    d.meta_put(&mut b, b"l", &list_meta(1, mid - 2, mid + 1));
    assert_eq!(cmds(&decoded(&b)), ["RPUSH l c d", "PERSIST l"]);
    // Popped.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 3");
    b.delete(ns().sub_key(b"l", 1, &idx(mid - 2)));
    d.meta_put(&mut b, b"l", &list_meta(1, mid - 1, mid + 1));
    assert_eq!(cmds(&decoded(&b)), ["LPOP l", "PERSIST l"]);
    // LREM of an element with spaces: the raw log bytes keep it.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 5 -2 x  y");
    b.delete(ns().sub_key(b"l", 1, &idx(mid)));
    d.meta_put(&mut b, b"l", &list_meta(1, mid - 1, mid + 3));
    assert_eq!(cmds(&decoded(&b)), ["LREM l -2 x  y", "PERSIST l"]);
    // LINSERT: pivot and element with spaces.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 1 1 p q r s");
    b.put(ns().sub_key(b"l", 1, &idx(mid + 1)), b"p q");
    b.put(ns().sub_key(b"l", 1, &idx(mid)), b"r s");
    d.meta_put(&mut b, b"l", &list_meta(1, mid - 1, mid + 5));
    assert_eq!(
        cmds(&decoded(&b)),
        ["LINSERT l BEFORE p q r s", "PERSIST l"]
    );
    // LSET, LTRIM.
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 0 -1");
    b.put(ns().sub_key(b"l", 1, &idx(mid)), b"z");
    assert_eq!(cmds(&decoded(&b)), ["LSET l -1 z"]);
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 2 1 2");
    b.delete(ns().sub_key(b"l", 1, &idx(mid)));
    d.meta_put(&mut b, b"l", &list_meta(1, mid + 1, mid + 3));
    assert_eq!(cmds(&decoded(&b)), ["LTRIM l 1 2", "PERSIST l"]);
}

#[test]
fn a_slot_migration_batch_shares_one_log_data() {
    // Kvrocks' `BatchSender`: the first key's `LogData` (a hash) heads the
    // batch; a string and the first two elements of a list of three
    // follow, metadata first; the list's last element comes in the next
    // batch, under the list's own `LogData` ("3 7": RPUSH).
    let d = db();
    let mid = meta::LIST_INITIAL_INDEX;
    let idx = |i: u64| i.to_be_bytes();
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    d.meta_put(&mut b, b"h", &meta_of(DataType::Hash, 7, 1, 0));
    b.put(ns().sub_key(b"h", 7, b"f"), b"v");
    d.meta_put(
        &mut b,
        b"s",
        &meta::encode(&Meta::string(b"x".to_vec(), 0)).unwrap(),
    );
    d.meta_put(&mut b, b"l", &list_meta(3, mid, mid + 3));
    b.put(ns().sub_key(b"l", 3, &idx(mid)), b"a");
    b.put(ns().sub_key(b"l", 3, &idx(mid + 1)), b"b");
    let c = decoded(&b);
    assert!(c.skipped.is_empty(), "{:?}", c.skipped);
    assert_eq!(
        cmds(&c),
        ["DEL h", "HSET h f v", "SET s x", "RPUSH l a b", "PERSIST l"]
    );
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 7");
    b.put(ns().sub_key(b"l", 3, &idx(mid + 2)), b"c");
    assert_eq!(cmds(&decoded(&b)), ["RPUSH l c"]);
}

#[test]
fn lmove_is_one_command() {
    let d = db();
    let mid = meta::LIST_INITIAL_INDEX;
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 12 s r c d left right");
    b.delete(ns().sub_key(b"s r", 1, &mid.to_be_bytes()));
    d.meta_del(&mut b, b"s r");
    b.put(ns().sub_key(b"c d", 4, &mid.to_be_bytes()), b"x");
    d.meta_put(&mut b, b"c d", &list_meta(4, mid, mid + 1));
    assert_eq!(
        cmds(&decoded(&b)),
        ["LMOVE s r c d left right", "DEL s r", "PERSIST c d"]
    );
}

#[test]
fn a_transaction_batch_replays_each_list_command() {
    // MULTI; RPUSH l x; LPOP l; EXEC: one batch, one LogData per command.
    let d = db();
    let mid = meta::LIST_INITIAL_INDEX;
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 7");
    b.put(ns().sub_key(b"l", 1, &(mid + 2).to_be_bytes()), b"x");
    d.meta_put(&mut b, b"l", &list_meta(1, mid, mid + 3));
    b.put_log_data(b"3 3");
    b.delete(ns().sub_key(b"l", 1, &mid.to_be_bytes()));
    d.meta_put(&mut b, b"l", &list_meta(1, mid + 1, mid + 3));
    b.put_log_data(b"r 0123456789012345678901234567890123456789");
    assert_eq!(cmds(&decoded(&b)), ["RPUSH l x", "LPOP l", "PERSIST l"]);
}

#[test]
fn deletes_flushes_and_recreation() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"0");
    d.meta_del(&mut b, b"a");
    d.meta_del(&mut b, b"b");
    assert_eq!(cmds(&decoded(&b)), ["DEL a", "DEL b"]);
    // An expired set written again under a new version: the old version's
    // subkeys are not members.
    let mut b = WriteBatch::default();
    b.put_log_data(b"4");
    b.put(ns().sub_key(b"s", 2, b"m"), b"");
    b.put(ns().sub_key(b"s", 1, b"old"), b"");
    d.meta_put(&mut b, b"s", &meta_of(DataType::Set, 2, 1, 0));
    assert_eq!(cmds(&decoded(&b)), ["DEL s", "SADD s m"]);
    // Size 0: gone.
    let mut b = WriteBatch::default();
    d.meta_put(&mut b, b"h", &meta_of(DataType::Hash, 2, 0, 0));
    assert_eq!(cmds(&decoded(&b)), ["DEL h"]);
    // FLUSHDB of a namespace, FLUSHALL.
    let meta = d.db.cf_handle("metadata").unwrap();
    let begin = b"\x0b__namespace".to_vec();
    let mut b = WriteBatch::default();
    b.delete_range_cf(&meta, &begin, &string_next(&begin));
    assert_eq!(cmds(&decoded(&b)), ["FLUSHNS __namespace"]);
    let mut b = WriteBatch::default();
    b.delete_range_cf(&meta, ns().ns_key(b"a"), ns().ns_key(b"zz"));
    assert_eq!(cmds(&decoded(&b)), ["FLUSHALL"]);
}

#[test]
fn other_namespaces_and_cluster_slots() {
    let d = db();
    let other = KeyScheme::new(b"tenant", true).unwrap();
    let mut b = WriteBatch::default();
    b.put_log_data(b"1");
    b.put_cf(
        &d.db.cf_handle("metadata").unwrap(),
        other.ns_key(b"k"),
        meta::encode(&Meta::string(b"v".to_vec(), 0)).unwrap(),
    );
    let c = decode(b.data(), true).unwrap();
    assert_eq!(
        c.changes,
        vec![Change::Command {
            namespace: b"tenant".to_vec(),
            args: vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()],
        }]
    );
}

#[test]
fn types_not_modelled_are_reported_and_deleted() {
    let d = db();
    let mut b = WriteBatch::default();
    b.put_log_data(b"6");
    // A bitmap's metadata: flags 0x86, expire, version, size.
    let mut raw = vec![0x86];
    raw.extend_from_slice(&0u64.to_be_bytes());
    raw.extend_from_slice(&1u64.to_be_bytes());
    raw.extend_from_slice(&1u64.to_be_bytes());
    d.meta_put(&mut b, b"bm", &raw);
    let c = decoded(&b);
    assert_eq!(cmds(&c), ["DEL bm"]);
    assert_eq!(c.skipped.len(), 1);
    assert!(c.skipped[0].reason.contains("bitmap"), "{:?}", c.skipped);
}

#[test]
fn bad_bytes_are_errors() {
    let d = db();
    let mut b = WriteBatch::default();
    d.meta_put(&mut b, b"h", &[0x82, 1, 2]);
    assert!(matches!(
        decode(b.data(), false),
        Err(ChangeError::Meta { .. })
    ));
    let mut b = WriteBatch::default();
    b.put(b"\x05ab", b"");
    assert!(matches!(decode(b.data(), false), Err(ChangeError::Key(_))));
    let mut b = WriteBatch::default();
    b.put_log_data(b"3 6");
    b.put(ns().sub_key(b"l", 1, b"short"), b"a");
    d.meta_put(&mut b, b"l", &list_meta(1, 5, 6));
    assert!(matches!(
        decode(b.data(), false),
        Err(ChangeError::ListIndex(_))
    ));
    assert!(matches!(
        decode(b"garbage", false),
        Err(ChangeError::Batch(_))
    ));
    // Every truncation of a real batch is an error, never a panic.
    let mut b = WriteBatch::default();
    b.put_log_data(b"2");
    b.put(ns().sub_key(b"h", 7, b"f1"), b"v1");
    d.meta_put(&mut b, b"h", &meta_of(DataType::Hash, 7, 1, 0));
    let data = b.data().to_vec();
    for len in 0..data.len() {
        assert!(decode(&data[..len], false).is_err());
    }
}

#[test]
fn log_data_forms() {
    assert_eq!(
        LogData::parse(b"3 5 -1 a b"),
        Some(LogData {
            type_code: 3,
            args: b"5 -1 a b".to_vec()
        })
    );
    assert_eq!(LogData::parse(b"r 0123"), None);
    assert_eq!(LogData::parse(b""), None);
    assert_eq!(LogData::parse(b"2x"), None);
    assert_eq!(LogData::parse(b"0").unwrap().command(), None);
}

#[test]
fn namespace_tokens_written_by_a_master_are_read_and_other_propagate_records_are_not() {
    let d = db();
    let propagate = d.db.cf_handle("propagate").unwrap();
    let mut b = WriteBatch::default();
    // Kvrocks' ShiftReplId writes its replication id there too.
    b.put_cf(&propagate, b"replid", b"ABC");
    b.put_cf(
        &propagate,
        crate::layout::NAMESPACE_TOKENS_KEY,
        br#"{"t1":"n1","t2":"n2"}"#,
    );
    let c = decoded(&b);
    assert!(c.changes.is_empty());
    assert_eq!(
        c.namespace_tokens.as_deref(),
        Some(br#"{"t1":"n1","t2":"n2"}"#.as_slice())
    );
    let mut b = WriteBatch::default();
    b.put_cf(&propagate, b"replid", b"ABC");
    assert_eq!(decoded(&b).namespace_tokens, None);
}
