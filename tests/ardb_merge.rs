//! Ardb stores holding RocksDB merge operands (`formats-spec/ardb.md` §14).
//!
//! redcodec writes a store, then the `rocksdb` crate writes merge operands
//! into it exactly as Ardb does in non-redis-compatible mode (same keys, same
//! operand bytes, the same puts beside them), and redcodec reads it back
//! read-only and read-write: every answer is Ardb's. A compaction then
//! resolves the operands into values, which read the same.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::T0_MS;
use redcodec::ardb::keys::meta_key;
use redcodec::ardb::merge::{self, encode_operand, op, Scalar};
use redcodec::ardb::{comparator, elements};
use redcodec::codec::{Place, SubIdRef, SubKind};
use redcodec::engine::check::check;
use redcodec::engine::{Engine, EngineOptions, ManualClock};
use redcodec::formats::{AnyCodec, Format, FormatOptions};
use rocksdb::{ColumnFamilyDescriptor, MergeOperands, Options, WriteBatch, DB};

/// The namespace family of the default codec (`rocksdb` / `0`).
const NS: Place = Place::new(0, 1);

fn open(dir: &Path, options: EngineOptions) -> Engine<AnyCodec> {
    let codec = Format::Ardb
        .codec(&FormatOptions::default())
        .expect("codec");
    Engine::open(codec, dir, options).expect("open")
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::at_ms(T0_MS))
}

/// Family options as Ardb opens them: `ardb.comparator` and `ardb.merger`.
fn ardb_family_options() -> Options {
    let mut opts = Options::default();
    opts.set_comparator(comparator::SPEC.name, Box::new(comparator::SPEC.compare));
    opts.set_merge_operator(
        merge::NAME,
        |key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands| {
            merge::full_merge_operator(key, existing, &mut operands.iter())
        },
        |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None,
    );
    opts
}

/// Opens the store's RocksDB instance as Ardb would (every family with
/// `ardb.comparator` and `ardb.merger`), runs `write` on the namespace
/// family `namespace`, and closes it.
fn as_ardb_in(dir: &Path, namespace: &str, write: impl FnOnce(&DB, &rocksdb::ColumnFamily)) {
    let path = dir.join("rocksdb");
    let families = DB::list_cf(&Options::default(), &path).expect("families");
    let families = families
        .iter()
        .map(|name| ColumnFamilyDescriptor::new(name, ardb_family_options()));
    let db = DB::open_cf_descriptors(&Options::default(), &path, families).expect("open as ardb");
    let cf = db.cf_handle(namespace).expect("namespace family");
    write(&db, cf);
}

/// [`as_ardb_in`] the default namespace `0`.
fn as_ardb(dir: &Path, write: impl FnOnce(&DB, &rocksdb::ColumnFamily)) {
    as_ardb_in(dir, "0", write);
}

fn field_key(key: &[u8], field: &[u8]) -> Vec<u8> {
    elements::sub_key(SubKind::HashField, key, SubIdRef::Name(field))
}

fn s(text: &str) -> Scalar {
    Scalar::Str(text.as_bytes().to_vec())
}

/// The hash META value Ardb puts beside `HSETNX` and `HINCRBY`: size −1.
const HASH_SIZE_UNKNOWN: [u8; 5] = [0x03, 0x00, 0x00, 0x01, 0x00];

/// A store written by redcodec, then given operands by "Ardb".
fn store_with_operands(dir: &Path) {
    {
        let e = open(dir, EngineOptions::with_clock(clock()));
        for line in [
            ["SET", "counter", "10"].as_slice(),
            &["SET", "s", "hello"],
            &["SET", "e", "value"],
            &["HSET", "h", "f", "5", "g", "x"],
            &["SET", "text", "1.5"],
        ] {
            let reply = e.execute(line);
            assert!(!reply.is_error(), "{line:?}: {reply}");
        }
    }
    as_ardb(dir, |db, cf| {
        // INCRBY counter 5, INCR counter, DECRBY counter 2: 10 + 5 + 1 − 2.
        let counter = meta_key(b"counter");
        db.merge_cf(cf, &counter, encode_operand(op::INCRBY, &[Scalar::Int(5)]))
            .unwrap();
        db.merge_cf(cf, &counter, encode_operand(op::INCR, &[Scalar::Int(1)]))
            .unwrap();
        // APPEND s " world".
        db.merge_cf(
            cf,
            meta_key(b"s"),
            encode_operand(op::APPEND, &[s(" world")]),
        )
        .unwrap();
        // Some operands in an SST, the rest in the WAL.
        db.flush_cf(cf).unwrap();
        db.merge_cf(cf, &counter, encode_operand(op::DECRBY, &[Scalar::Int(2)]))
            .unwrap();
        // EXPIRE e 60: every expiry command writes op 55, absolute ms.
        let at = T0_MS as i64 + 60_000;
        db.merge_cf(
            cf,
            meta_key(b"e"),
            encode_operand(op::PEXPIREAT, &[Scalar::Int(at)]),
        )
        .unwrap();
        // HINCRBY h f 3: the META put and the field operand in one batch.
        let mut batch = WriteBatch::default();
        batch.put_cf(cf, meta_key(b"h"), HASH_SIZE_UNKNOWN);
        batch.merge_cf(
            cf,
            field_key(b"h", b"f"),
            encode_operand(op::HINCR, &[Scalar::Int(3)]),
        );
        db.write(batch).unwrap();
        // HSETNX h n new, HSETNX h g y: META operand, field operand, META put.
        for (field, value) in [("n", "new"), ("g", "y")] {
            let mut batch = WriteBatch::default();
            batch.merge_cf(
                cf,
                meta_key(b"h"),
                encode_operand(op::HSETNX, &[Scalar::Int(1)]),
            );
            batch.merge_cf(
                cf,
                field_key(b"h", field.as_bytes()),
                encode_operand(op::HSETNX, &[s(value)]),
            );
            batch.put_cf(cf, meta_key(b"h"), HASH_SIZE_UNKNOWN);
            db.write(batch).unwrap();
        }
        // Operands on missing keys: INCRBY creates the key, INCRBYFLOAT
        // too (a float64), EXPIRE leaves the empty value (a missing key).
        db.merge_cf(
            cf,
            meta_key(b"fresh"),
            encode_operand(op::INCRBY, &[Scalar::Int(7)]),
        )
        .unwrap();
        db.merge_cf(
            cf,
            meta_key(b"fl"),
            encode_operand(op::INCRBYFLOAT, &[Scalar::Float(0.1)]),
        )
        .unwrap();
        db.merge_cf(
            cf,
            meta_key(b"ghost"),
            encode_operand(op::PEXPIREAT, &[Scalar::Int(T0_MS as i64 + 5_000)]),
        )
        .unwrap();
        // INCRBYFLOAT on the text "1.5" (SET stores it as a string): Ardb
        // skips it, the value stays.
        db.merge_cf(
            cf,
            meta_key(b"text"),
            encode_operand(op::INCRBYFLOAT, &[Scalar::Float(1.0)]),
        )
        .unwrap();
    });
}

/// Ardb's answers for the store of [`store_with_operands`].
fn assert_ardb_answers(e: &Engine<AnyCodec>) {
    let answers: [(&[&str], &str); 17] = [
        (&["GET", "counter"], "\"14\""),
        (&["GET", "s"], "\"hello world\""),
        (&["GET", "e"], "\"value\""),
        (&["TTL", "e"], "(integer) 60"),
        (&["HGET", "h", "f"], "\"8\""),
        (&["HGET", "h", "g"], "\"x\""),
        (&["HGET", "h", "n"], "\"new\""),
        (&["HLEN", "h"], "(integer) 3"),
        (&["TTL", "h"], "(integer) -1"),
        (&["GET", "fresh"], "\"7\""),
        (&["GET", "fl"], "\"0.10000000000000001\""),
        (&["GET", "text"], "\"1.5\""),
        (&["GET", "ghost"], "(nil)"),
        (&["TTL", "ghost"], "(integer) -2"),
        (&["EXISTS", "ghost", "fresh", "fl"], "(integer) 2"),
        (&["TYPE", "ghost"], "none"),
        (&["DBSIZE"], "(integer) 7"),
    ];
    for (command, want) in answers {
        assert_eq!(e.execute(command).to_cli_string(), want, "{command:?}");
    }
    let report = check(e).expect("check");
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(report.keys, 7);
}

/// The merged bytes of a few records, as `ardb.merger` computes them.
fn assert_merged_bytes(e: &Engine<AnyCodec>) {
    let get = |key: &[u8]| e.store().get(NS, key).expect("get");
    // 14 as an int64 Data; the value Ardb's own compaction would write.
    assert_eq!(
        get(&meta_key(b"counter")),
        Some(vec![0x02, 0x00, 0x00, 0x01, 0x01, 0x1c])
    );
    // The ttl of e is T0 + 60 s.
    let mut e_value = vec![0x02, 0x00];
    redcodec::ardb::primitives::put_varint64(&mut e_value, T0_MS as i64 + 60_000);
    e_value.extend_from_slice(&[0x01, 0x04, 0x05]);
    e_value.extend_from_slice(b"value");
    assert_eq!(get(&meta_key(b"e")), Some(e_value));
    // HINCRBY on the int-encoded 5: an int-encoded 8.
    assert_eq!(
        get(&field_key(b"h", b"f")),
        Some(vec![0x04, 0x01, 0x01, 0x10])
    );
    // INCRBYFLOAT keeps a float64 Data.
    let mut fl = vec![0x02, 0x00, 0x00, 0x01];
    redcodec::ardb::primitives::Data::Float(0.1).encode(&mut fl);
    assert_eq!(get(&meta_key(b"fl")), Some(fl));
}

#[test]
fn operands_read_back_as_ardb_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    store_with_operands(dir.path());

    // Read-only (a secondary instance): RocksDB merges on every read.
    {
        let options = EngineOptions {
            clock: clock(),
            ..EngineOptions::read_only()
        };
        let e = open(dir.path(), options);
        assert_ardb_answers(&e);
        assert_merged_bytes(&e);
        // The empty value a no-op merge leaves is there, and reads as missing.
        assert_eq!(
            e.store().get(NS, &meta_key(b"ghost")).unwrap(),
            Some(Vec::new())
        );
    }

    // Read-write: the same answers; then a compaction writes the merged
    // values (dropping the empty one) and nothing changes.
    let e = open(dir.path(), EngineOptions::with_clock(clock()));
    assert_ardb_answers(&e);
    let before = dump(&e);
    e.store().compact_all().unwrap();
    assert_ardb_answers(&e);
    assert_merged_bytes(&e);
    assert_eq!(e.store().get(NS, &meta_key(b"ghost")).unwrap(), None);
    let ghost_line = before
        .lines()
        .find(|l| l.contains(&format!("\t{}\t", hex(&meta_key(b"ghost")))))
        .expect("the empty value is dumped before the compaction")
        .to_string();
    assert!(ghost_line.ends_with('\t'), "{ghost_line}");
    assert_eq!(dump(&e), before.replace(&format!("{ghost_line}\n"), ""));

    // Commands build on the merged values.
    for (command, want) in [
        (["INCRBY", "counter", "6"].as_slice(), "(integer) 20"),
        (&["APPEND", "s", "!"], "(integer) 12"),
        (&["HINCRBY", "h", "f", "2"], "(integer) 10"),
        (&["SET", "ghost", "back"], "OK"),
        (&["GET", "ghost"], "\"back\""),
    ] {
        assert_eq!(e.execute(command).to_cli_string(), want, "{command:?}");
    }
    assert!(check(&e).expect("check").is_clean());
}

#[test]
fn an_operand_redcodec_cannot_merge_fails_that_key_only() {
    let dir = tempfile::tempdir().unwrap();
    {
        let e = open(dir.path(), EngineOptions::with_clock(clock()));
        assert_eq!(e.execute(&["SET", "n", "1"]).to_cli_string(), "OK");
    }
    as_ardb(dir.path(), |db, cf| {
        // PFADD hll a: the HLL update is not reproduced.
        db.merge_cf(cf, meta_key(b"hll"), encode_operand(op::PFADD, &[s("a")]))
            .unwrap();
        db.merge_cf(
            cf,
            meta_key(b"n"),
            encode_operand(op::INCR, &[Scalar::Int(1)]),
        )
        .unwrap();
    });
    let options = EngineOptions {
        clock: clock(),
        ..EngineOptions::read_only()
    };
    let e = open(dir.path(), options);
    let reply = e.execute(&["GET", "hll"]);
    assert!(reply.is_error(), "{reply}");
    assert!(
        reply.to_cli_string().contains("Merge operator failed"),
        "{reply}"
    );
    assert_eq!(e.execute(&["GET", "n"]).to_cli_string(), "\"2\"");
}

#[test]
fn other_namespaces_are_opened_with_the_merge_operator() {
    let dir = tempfile::tempdir().unwrap();
    let open_ns = |namespace: &str, options: EngineOptions| {
        let format_options = FormatOptions {
            namespace: Some(namespace.as_bytes().to_vec()),
            cluster: false,
        };
        let codec = Format::Ardb.codec(&format_options).expect("codec");
        Engine::open(codec, dir.path(), options)
    };
    {
        let e = open_ns("tenant", EngineOptions::with_clock(clock())).expect("open");
        assert_eq!(e.execute(&["SET", "x", "1"]).to_cli_string(), "OK");
    }
    // Operands left in the WAL. A read-write open replays them into the
    // family's memtable, which needs the family's merge operator: without
    // one, RocksDB's default point-in-time recovery silently drops the batch
    // from its first operand on (the put of `y` survives, the operands do
    // not), and a secondary instance fails to open.
    as_ardb_in(dir.path(), "tenant", |db, cf| {
        let mut batch = WriteBatch::default();
        batch.put_cf(cf, meta_key(b"y"), [0x02, 0x00, 0x00, 0x01, 0x01, 0x02]);
        batch.merge_cf(
            cf,
            meta_key(b"y"),
            encode_operand(op::INCRBY, &[Scalar::Int(40)]),
        );
        batch.merge_cf(
            cf,
            meta_key(b"x"),
            encode_operand(op::INCR, &[Scalar::Int(1)]),
        );
        db.write(batch).unwrap();
    });
    // Namespace 0's engine opens `tenant` as another family, read-write:
    // the replay keeps the operands.
    let zero = open_ns("0", EngineOptions::with_clock(clock())).expect("open 0");
    assert_eq!(zero.store().other_families(0), ["tenant"]);
    drop(zero);
    let read_only = EngineOptions {
        clock: clock(),
        ..EngineOptions::read_only()
    };
    let tenant = open_ns("tenant", read_only).expect("open tenant");
    assert_eq!(tenant.execute(&["GET", "x"]).to_cli_string(), "\"2\"");
    assert_eq!(tenant.execute(&["GET", "y"]).to_cli_string(), "\"41\"");
}

fn dump(e: &Engine<AnyCodec>) -> String {
    let mut out = Vec::new();
    e.store().dump(&mut out).expect("dump");
    String::from_utf8(out).expect("dump is text")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
