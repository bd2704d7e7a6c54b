//! Writes that replace what a key holds, on a RocksDB store of every
//! format: FLUSHALL and FLUSHDB leave no range deletion where nothing was
//! stored (one would be read by every later point read of that place
//! until a compaction), and a SET over a key held in several types (a
//! store the real system wrote) leaves the string alone.

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
