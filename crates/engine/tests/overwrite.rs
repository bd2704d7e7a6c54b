//! Writes that replace what a key holds, on a RocksDB store of every
//! format: FLUSHALL and FLUSHDB leave no range deletion where nothing was
//! stored (one would be read by every later point read of that place
//! until a compaction), telling a range empty costs a bounded look over
//! its deleted records and sees a transaction's own writes, and a SET
//! over a key held in several types (a store the real system wrote)
//! leaves the string alone.

use std::path::Path;
use std::sync::Arc;

use redcodec_codec::{Codec, DataType, MetaLookup};
use redcodec_engine::store::Batch;
use redcodec_engine::{Engine, EngineOptions, ManualClock, OpenMode, Reply};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redcodec_testkit::table_files;

const START_MS: u64 = 1_700_000_000_000;

fn open(format: Format, dir: &Path) -> Engine<AnyCodec> {
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let options = EngineOptions {
        mode: OpenMode::CreateIfMissing,
        ..EngineOptions::with_clock(Arc::new(ManualClock::at_ms(START_MS)))
    };
    Engine::open(codec, dir, options).expect("engine")
}

fn run(engine: &Engine<AnyCodec>, line: &str) -> Reply {
    let words: Vec<&str> = line.split(' ').collect();
    let reply = engine.execute(&words);
    assert!(!reply.is_error(), "{line}: {reply:?}");
    reply
}

#[test]
fn a_flush_of_nothing_stored_leaves_no_range_deletion_behind() {
    for &format in Format::ALL {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = open(format, dir.path());
        // What the format writes when a store is made (Nemo's own records).
        engine.store().flush().expect("flush");
        let made = table_files(dir.path());
        run(&engine, "FLUSHALL");
        run(&engine, "FLUSHDB");
        // A memtable holding a range deletion is written to a table file
        // of its own; one holding nothing is not written at all.
        engine.store().flush().expect("flush");
        assert_eq!(table_files(dir.path()), made, "{format:?}");

        // A flush of something stored still deletes it.
        run(&engine, "SET k v");
        run(&engine, "HSET h f v");
        run(&engine, "FLUSHALL");
        assert_eq!(run(&engine, "EXISTS k h"), Reply::Integer(0), "{format:?}");
        engine.store().flush().expect("flush");
        assert_eq!(run(&engine, "EXISTS k h"), Reply::Integer(0), "{format:?}");
    }
}

#[test]
fn a_range_holding_only_deleted_records_is_told_empty_by_a_bounded_look() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = open(Format::Kvrocks, dir.path());
    let codec = engine.codec();
    let store = engine.store();
    let range = codec
        .flush_all_ranges()
        .into_iter()
        .find(|r| r.place == codec.meta_record(b"k", DataType::String).unwrap().place)
        .expect("the metadata family's range");
    assert!(!store.may_hold(&range).expect("look"), "an empty store");
    run(&engine, "SET k v");
    assert!(store.may_hold(&range).expect("look"), "a record");
    run(&engine, "DEL k");
    assert!(
        !store.may_hold(&range).expect("look"),
        "a few deleted records: empty"
    );
    // More deleted records than the look steps over: taken to hold some
    // (the flush then deletes the range, as it did every range before).
    let many = redcodec_engine::Store::MAX_SKIPPED_FOR_EMPTY as usize + 100;
    for i in 0..many {
        run(&engine, &format!("SET k{i} v"));
        run(&engine, &format!("DEL k{i}"));
    }
    assert!(store.may_hold(&range).expect("look"));
    run(&engine, "SET after v");
    run(&engine, "FLUSHALL");
    assert_eq!(run(&engine, "DBSIZE"), Reply::Integer(0));
}

#[test]
fn a_flush_in_a_transaction_deletes_what_the_transaction_wrote_before_it() {
    for &format in Format::ALL {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = open(format, dir.path());
        // The store holds nothing: only the group holds the SET.
        let replies =
            engine.atomically(|e| [e.execute(&["SET", "k", "v"]), e.execute(&["FLUSHALL"])]);
        assert!(replies.is_ok(), "{format:?}");
        assert_eq!(run(&engine, "EXISTS k"), Reply::Integer(0), "{format:?}");
    }
}

#[test]
fn set_over_a_key_held_in_several_types_leaves_only_the_string() {
    for &format in Format::ALL {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = open(format, dir.path());
        if engine.codec().capabilities().meta_lookup != MetaLookup::PerType {
            continue;
        }
        run(&engine, "SET k old");
        run(&engine, "HSET h f v");
        // `k` becomes a hash as well, as a real Pika store can hold it
        // (h's metadata, whose field is not stored under `k`: the hash is
        // removed by its metadata alone).
        let codec = engine.codec();
        let store = engine.store();
        let h = codec.meta_record(b"h", DataType::Hash).expect("record");
        let h_meta = store.get(h.place, &h.key).expect("read").expect("stored");
        let k = codec.meta_record(b"k", DataType::Hash).expect("record");
        let mut damage = Batch::default();
        damage.put(k.place, k.key.clone(), h_meta);
        store.write(damage).expect("write");

        run(&engine, "SET k new");
        assert_eq!(
            run(&engine, "GET k"),
            Reply::bulk(b"new".to_vec()),
            "{format:?}"
        );
        assert_eq!(
            run(&engine, "TYPE k"),
            Reply::Status("string".into()),
            "{format:?}"
        );
        // The hash is gone, not only hidden behind the string.
        run(&engine, "DEL k");
        assert_eq!(
            run(&engine, "TYPE k"),
            Reply::Status("none".into()),
            "{format:?}"
        );
    }
}
