//! The Ardb store on RocksDB: `ardb.comparator`'s order on disk after a
//! reopen, the namespace family created on first write, other namespaces
//! of the same store, DEL by range or record by record, and metadata whose
//! size Ardb stored as unknown.

mod common;

use std::sync::Arc;

use common::{Fixture, T0_MS};
use redcodec::codec::{Codec, DataType, Place, SubId, SubKind, SubValue};
use redcodec::engine::store::Batch;
use redcodec::engine::{Engine, EngineOptions, ManualClock, OpenMode};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

/// The namespace family of the default codec (`rocksdb` / `0`).
const NS: Place = Place::new(0, 1);

fn open(dir: &std::path::Path, namespace: Option<&str>) -> Engine<AnyCodec> {
    let options = FormatOptions {
        namespace: namespace.map(|n| n.as_bytes().to_vec()),
        cluster: false,
    };
    let codec = Format::Ardb.codec(&options).expect("codec");
    let clock = Arc::new(ManualClock::at_ms(T0_MS));
    Engine::open(codec, dir, EngineOptions::with_clock(clock)).expect("open")
}

/// Every key of the namespace family, in stored order, as user key and
/// type byte (the key bytes after the one-byte length of these short keys).
fn stored_keys(engine: &Engine<AnyCodec>) -> Vec<(String, u8)> {
    let mut out = Vec::new();
    engine
        .store()
        .for_each_pair(|place, key, _| {
            assert_eq!(place, NS, "records live in the namespace family only");
            let len = usize::from(key[0]);
            let user = String::from_utf8_lossy(&key[1..1 + len]).into_owned();
            out.push((user, key[1 + len]));
            Ok(())
        })
        .expect("iterate");
    out
}

#[test]
fn comparator_order_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let e = open(dir.path(), None);
        for line in [
            ["SET", "b", "1"].as_slice(),
            &["HSET", "a", "-3", "x", "9", "y", "10", "z", "09", "w"],
            &["RPUSH", "a2", "p"],
            &["SET", "aa", "2"],
        ] {
            let reply = e.execute(line);
            assert!(!reply.is_error(), "{line:?}: {reply}");
        }
        e.store().flush().unwrap();
    }
    let e = open(dir.path(), None);
    let keys = stored_keys(&e);
    let users: Vec<&str> = keys.iter().map(|(u, _)| u.as_str()).collect();
    // Every record of `a` (META, then its fields), then `a2`, then `aa`,
    // then `b`: raw user-key bytes, shorter first, never length-prefix
    // order (which would put `b` before `aa`).
    assert_eq!(users, ["a", "a", "a", "a", "a", "a2", "a2", "aa", "b"]);
    assert_eq!(keys[0].1, 1, "META first");
    assert!(keys[1..5].iter().all(|(_, t)| *t == 4), "then hash fields");
    // Fields in Data order: integers numerically, then strings.
    assert_eq!(
        e.execute(&["HKEYS", "a"]).to_cli_string(),
        "1) \"-3\"\n2) \"9\"\n3) \"10\"\n4) \"09\""
    );
    assert_eq!(e.execute(&["GET", "aa"]).to_cli_string(), "\"2\"");
    assert_eq!(
        e.execute(&["KEYS", "*"]).to_cli_string(),
        "1) \"a\"\n2) \"a2\"\n3) \"aa\"\n4) \"b\""
    );
}

#[test]
fn families_are_recorded_with_the_comparator_name() {
    let dir = tempfile::tempdir().unwrap();
    {
        let e = open(dir.path(), None);
        assert_eq!(e.execute(&["SET", "k", "v"]).to_cli_string(), "OK");
    }
    // RocksDB refuses to open a family under another comparator: the name
    // `ardb.comparator` is in the MANIFEST.
    let path = dir.path().join("rocksdb");
    let err = rocksdb::DB::open_cf(&rocksdb::Options::default(), &path, ["default", "0"])
        .expect_err("a bytewise open must fail");
    assert!(
        err.to_string().contains("ardb.comparator"),
        "unexpected error: {err}"
    );
}

#[test]
fn the_namespace_family_is_created_by_the_first_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocksdb");
    {
        let e = open(dir.path(), None);
        for read in [
            &["GET", "k"][..],
            &["HLEN", "h"],
            &["KEYS", "*"],
            &["DEL", "k"],
        ] {
            assert!(!e.execute(read).is_error(), "{read:?}");
        }
        assert_eq!(e.execute(&["FLUSHALL"]).to_cli_string(), "OK");
        assert!(!e.store().has_cf(NS));
    }
    assert_eq!(
        rocksdb::DB::list_cf(&rocksdb::Options::default(), &path).unwrap(),
        ["default"]
    );
    {
        let e = open(dir.path(), None);
        // Read before the family exists, then through the handle its
        // creation left, in the same store.
        assert_eq!(e.execute(&["GET", "k"]).to_cli_string(), "(nil)");
        assert_eq!(e.execute(&["SET", "k", "v"]).to_cli_string(), "OK");
        assert!(e.store().has_cf(NS));
        assert_eq!(e.execute(&["GET", "k"]).to_cli_string(), "\"v\"");
    }
    assert_eq!(
        rocksdb::DB::list_cf(&rocksdb::Options::default(), &path).unwrap(),
        ["default", "0"]
    );
    let e = open(dir.path(), None);
    assert_eq!(e.execute(&["GET", "k"]).to_cli_string(), "\"v\"");
}

#[test]
fn other_namespaces_of_the_store_are_opened_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    {
        let tenant = open(dir.path(), Some("tenant"));
        assert_eq!(tenant.execute(&["SET", "k", "t"]).to_cli_string(), "OK");
    }
    {
        let zero = open(dir.path(), None);
        assert_eq!(zero.execute(&["GET", "k"]).to_cli_string(), "(nil)");
        assert_eq!(zero.execute(&["SET", "k", "z"]).to_cli_string(), "OK");
        assert_eq!(zero.execute(&["FLUSHALL"]).to_cli_string(), "OK");
        assert_eq!(zero.execute(&["SET", "j", "z"]).to_cli_string(), "OK");
        assert_eq!(zero.store().other_families(0), ["tenant"]);
        let mut dump = Vec::new();
        zero.store().dump(&mut dump).unwrap();
        assert_eq!(
            String::from_utf8(dump).unwrap(),
            "rocksdb\t0\t016a0100\t0200000104017a\n\
             rocksdb\ttenant\t016b0100\t02000001040174\n"
        );
    }
    let tenant = open(dir.path(), Some("tenant"));
    assert_eq!(tenant.execute(&["GET", "k"]).to_cli_string(), "\"t\"");
    assert_eq!(tenant.execute(&["GET", "j"]).to_cli_string(), "(nil)");
}

/// `(point deletions, range deletions)` over the namespace family's files
/// (RocksDB's `# deletions` counts both kinds).
fn deletions(f: &Fixture) -> (u64, u64) {
    f.engine.store().flush().unwrap();
    let props = f
        .engine
        .store()
        .property(NS, "rocksdb.aggregated-table-properties")
        .unwrap()
        .expect("table properties");
    let field = |name: &str| {
        props
            .split(';')
            .find_map(|p| {
                let (k, v) = p.split_once('=')?;
                (k.trim() == name).then(|| v.trim().parse().expect("a count"))
            })
            .unwrap_or_else(|| panic!("no {name} in {props}"))
    };
    let ranges = field("# range deletions");
    (field("# deletions") - ranges, ranges)
}

#[test]
fn del_uses_one_range_delete_from_100_elements() {
    let f = Fixture::new(Format::Ardb);
    f.big_hash("big", 100);
    f.big_hash("small", 99);
    assert_eq!(deletions(&f), (0, 0));
    assert_eq!(f.run("DEL small").to_cli_string(), "(integer) 1");
    // 99 fields and the META record, one by one.
    assert_eq!(deletions(&f), (100, 0));
    assert_eq!(f.run("DEL big").to_cli_string(), "(integer) 1");
    // [META big, END big) at once.
    assert_eq!(deletions(&f), (100, 1));
    assert_eq!(f.dump(), "");
    assert_eq!(f.run("DBSIZE").to_cli_string(), "(integer) 0");
}

/// Puts raw records into the namespace family.
fn put_raw(f: &Fixture, pairs: &[(Vec<u8>, Vec<u8>)]) {
    let mut batch = Batch::default();
    for (k, v) in pairs {
        batch.put(NS, k.clone(), v.clone());
    }
    f.engine.store().write(batch).unwrap();
}

/// A hash `h` as Ardb leaves it after a later HSET in redis-compatible
/// mode: size −1 ("unknown"), with `n` fields `f0..`.
fn unknown_size_hash(f: &Fixture, n: usize) {
    let codec = f.engine.codec();
    let meta = codec
        .decode_meta(DataType::Hash, &[0x03, 0x00, 0x00, 0x01, 0x00])
        .unwrap();
    assert!(codec.capabilities().size_unknown(&meta));
    let mut pairs = vec![(
        codec.meta_record(b"h", DataType::Hash).unwrap().key,
        vec![0x03, 0x00, 0x00, 0x01, 0x00],
    )];
    for i in 0..n {
        let field = SubId::Name(format!("f{i}").into_bytes());
        pairs.push((
            codec.sub_key(SubKind::HashField.of(b"h", &meta), field.view()),
            codec.encode_sub_value(
                SubKind::HashField.of(b"h", &meta),
                SubValue::Bytes(b"v".to_vec()).view(),
            ),
        ));
    }
    put_raw(f, &pairs);
}

#[test]
fn an_unknown_size_is_counted_and_stays_unknown() {
    let f = Fixture::new(Format::Ardb);
    unknown_size_hash(&f, 3);
    assert_eq!(f.run("HLEN h").to_cli_string(), "(integer) 3");
    assert_eq!(f.run("EXISTS h").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HSET h f9 v").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HLEN h").to_cli_string(), "(integer) 4");
    // Still stored as −1 (zigzag 01), as Ardb itself keeps it.
    assert!(f.dump().starts_with("rocksdb\t0\t01680100\t0300000100\n"));
    assert_eq!(f.run("HDEL h f0 f1 f2").to_cli_string(), "(integer) 3");
    assert_eq!(f.run("HLEN h").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HDEL h f9").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("EXISTS h").to_cli_string(), "(integer) 0");
    assert_eq!(f.dump(), "");
}

#[test]
fn del_of_an_unknown_size_is_a_range_delete() {
    let f = Fixture::new(Format::Ardb);
    unknown_size_hash(&f, 5);
    assert_eq!(deletions(&f), (0, 0));
    assert_eq!(f.run("DEL h").to_cli_string(), "(integer) 1");
    assert_eq!(deletions(&f), (0, 1));
    assert_eq!(f.dump(), "");
}

#[test]
fn dump_refuses_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let codec = Format::Ardb.codec(&FormatOptions::default()).unwrap();
    let options = EngineOptions {
        clock: Arc::new(ManualClock::at_ms(T0_MS)),
        mode: OpenMode::MustExist,
        ..EngineOptions::default()
    };
    let err = Engine::open(codec, dir.path(), options)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("holds no ardb store"), "{err}");
}

#[test]
fn key_walks_step_over_the_element_records() {
    let f = Fixture::new(Format::Ardb);
    f.big_hash("b", 500);
    f.run_ok(&[
        "SET a 1",
        "RPUSH c x y z",
        "SADD d m",
        "SET e 2",
        "ZADD f 1 m",
    ]);
    f.big_hash("g", 3);
    assert_eq!(f.run("DBSIZE").to_cli_string(), "(integer) 7");
    assert_eq!(
        f.run("KEYS *").to_cli_string().replace('\n', " "),
        "1) \"a\" 2) \"b\" 3) \"c\" 4) \"d\" 5) \"e\" 6) \"f\" 7) \"g\""
    );
    // Resuming after a collection skips its records too.
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let reply = f.engine.execute(&["SCAN", &cursor, "COUNT", "2"]);
        let redcodec::engine::Reply::Array(parts) = reply else {
            panic!("SCAN replied {reply}");
        };
        let (redcodec::engine::Reply::Bulk(next), redcodec::engine::Reply::Array(keys)) =
            (&parts[0], &parts[1])
        else {
            panic!("unexpected SCAN reply");
        };
        for k in keys {
            seen.push(k.to_string());
        }
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 7, "{seen:?}");
}

#[test]
fn scard_and_zcard_count_sets_and_zsets_of_unknown_size() {
    let f = Fixture::new(Format::Ardb);
    let codec = f.engine.codec();
    // Non-compat SADD / ZADD metas: size −1, no min/max members.
    let set_meta = [0x07, 0x00, 0x00, 0x01, 0x00];
    let zset_meta = [0x09, 0x00, 0x00, 0x01, 0x00];
    let set = codec.decode_meta(DataType::Set, &set_meta).unwrap();
    let zset = codec.decode_meta(DataType::ZSet, &zset_meta).unwrap();
    let mut pairs = vec![
        (
            codec.meta_record(b"s", DataType::Set).unwrap().key,
            set_meta.to_vec(),
        ),
        (
            codec.meta_record(b"z", DataType::ZSet).unwrap().key,
            zset_meta.to_vec(),
        ),
    ];
    for m in ["a", "7", "b"] {
        let id = SubId::Name(m.as_bytes().to_vec());
        pairs.push((
            codec.sub_key(SubKind::SetMember.of(b"s", &set), id.view()),
            codec.encode_sub_value(SubKind::SetMember.of(b"s", &set), SubValue::Empty.view()),
        ));
    }
    for (m, score) in [("x", 1.0), ("y", 2.5)] {
        let id = SubId::Name(m.as_bytes().to_vec());
        pairs.push((
            codec.sub_key(SubKind::ZSetMember.of(b"z", &zset), id.view()),
            codec.encode_sub_value(
                SubKind::ZSetMember.of(b"z", &zset),
                SubValue::Score(score).view(),
            ),
        ));
        let scored = SubId::Scored {
            score,
            member: m.as_bytes().to_vec(),
        };
        pairs.push((
            codec.sub_key(SubKind::ZSetScore.of(b"z", &zset), scored.view()),
            codec.encode_sub_value(SubKind::ZSetScore.of(b"z", &zset), SubValue::Empty.view()),
        ));
    }
    put_raw(&f, &pairs);
    assert_eq!(f.run("SCARD s").to_cli_string(), "(integer) 3");
    assert_eq!(f.run("ZCARD z").to_cli_string(), "(integer) 2");
    assert_eq!(f.run("DBSIZE").to_cli_string(), "(integer) 2");
    assert_eq!(f.run("SREM s 7").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("SCARD s").to_cli_string(), "(integer) 2");
    assert_eq!(
        f.run("ZRANGE z 0 -1 WITHSCORES").to_cli_string(),
        "1) \"x\"\n2) \"1\"\n3) \"y\"\n4) \"2.5\""
    );
    // A set with members but no stored bounds gets none from one SADD.
    assert_eq!(f.run("SADD s c").to_cli_string(), "(integer) 1");
    assert!(f.dump().contains("rocksdb\t0\t01730100\t0700000100\n"));
}
