//! The store's read cache (`redcodec_store::read_cache`) changes no reply
//! and no byte: an engine with a cache small enough to evict replies and
//! writes as one without, on every format, command by command and in
//! groups; concurrent read-modify-writes through it lose no update; and
//! writes that bypass its record-by-record upkeep (an unlogged load) are
//! read back at once.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use redcodec_codec::{Codec, DataType};
use redcodec_engine::store::{Batch, Store};
use redcodec_engine::{Engine, EngineOptions, ManualClock, Reply};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redcodec_testkit::command_lines::{line, word, Alphabets};

const START_MS: u64 = 1_700_000_000_000;

/// A cache of a few entries per shard: entries come and go within a case.
const SMALL_CACHE: usize = 16 << 10;

#[derive(Clone, Debug)]
enum Step {
    Cmd(Vec<String>),
    /// Commands run as one group (`Engine::atomically`).
    Group(Vec<Vec<String>>),
    Sleep(u64),
}

/// Writes and reads of every type, deletions of whole keys and of the
/// keyspace, expiry and renames.
const COMMANDS: &[&str] = &[
    "SET key val",
    "SET key val PX 5|50",
    "GET key",
    "MGET key key",
    "INCR key",
    "APPEND key val",
    "DEL key",
    "EXISTS key",
    "TYPE key",
    "PEXPIRE key 10|100",
    "PERSIST key",
    "RENAME key key",
    "HSET key elem val",
    "HDEL key elem",
    "HGET key elem",
    "HINCRBY key elem 3",
    "HGETALL key",
    "LPUSH key elem elem",
    "RPOP key",
    "LINDEX key 0|-1",
    "LSET key 0 elem",
    "SADD key elem",
    "SREM key elem",
    "SISMEMBER key elem",
    "ZADD key 1|2 elem",
    "ZINCRBY key 1 elem",
    "ZSCORE key elem",
    "ZREM key elem",
    "FLUSHDB",
];

const ALPHABETS: Alphabets = &[
    ("key", &["a", "b", "c", "d"]),
    ("elem", &["x", "y", "z"]),
    ("val", &["1", "22", "v", ""]),
];

fn command() -> impl Strategy<Value = Vec<String>> {
    proptest::strategy::Union::new(
        COMMANDS
            .iter()
            .map(|template| line(template, ALPHABETS).boxed()),
    )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => command().prop_map(Step::Cmd),
        2 => proptest::collection::vec(command(), 1..6).prop_map(Step::Group),
        1 => word("1|20", ALPHABETS).prop_map(|ms| Step::Sleep(ms.parse().unwrap_or(1))),
    ]
}

fn codec(format: Format) -> AnyCodec {
    format.codec(&FormatOptions::default()).expect("codec")
}

fn open(
    format: Format,
    dir: &std::path::Path,
    cache: usize,
) -> (Engine<AnyCodec>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::at_ms(START_MS));
    let options = EngineOptions {
        read_cache_bytes: cache,
        ..EngineOptions::with_clock(clock.clone())
    };
    let mut engine = Engine::open(codec(format), dir, options).expect("open");
    engine.stop_expiry_task();
    (engine, clock)
}

fn run(engine: &Engine<AnyCodec>, clock: &ManualClock, steps: &[Step]) -> Vec<Reply> {
    let mut replies = Vec::new();
    for step in steps {
        match step {
            Step::Sleep(ms) => clock.advance_ms(*ms),
            Step::Cmd(words) => replies.push(engine.execute(words)),
            Step::Group(lines) => {
                let group = engine
                    .atomically(|e| lines.iter().map(|l| e.execute(l)).collect::<Vec<_>>())
                    .expect("the group commits");
                replies.extend(group);
            }
        }
    }
    replies
}

/// Every record of a store, family by family.
fn contents(store: &Store) -> Vec<(redcodec_codec::Place, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    store
        .for_each_pair(|place, k, v| {
            out.push((place, k.to_vec(), v.to_vec()));
            Ok(())
        })
        .expect("scan");
    out
}

#[test]
fn a_cached_store_replies_and_writes_as_one_without_on_every_format() {
    for &format in Format::ALL {
        let mut runner = TestRunner::new(Config {
            cases: 8,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&proptest::collection::vec(step(), 20..80), |steps| {
            let dirs = [(); 2].map(|()| tempfile::tempdir().expect("tempdir"));
            let (plain, plain_clock) = open(format, dirs[0].path(), 0);
            let (cached, cached_clock) = open(format, dirs[1].path(), SMALL_CACHE);
            let want = run(&plain, &plain_clock, &steps);
            let got = run(&cached, &cached_clock, &steps);
            prop_assert_eq!(got, want, "{:?}", steps);
            prop_assert!(
                contents(cached.store()) == contents(plain.store()),
                "the stores differ after {:?}",
                steps
            );
            let (entries, bytes) = cached.store().read_cache_size().expect("a cache");
            prop_assert!(bytes <= SMALL_CACHE, "{} entries, {} bytes", entries, bytes);
            prop_assert!(plain.store().read_cache_size().is_none());
            Ok(())
        });
        if let Err(e) = result {
            panic!("{format}: {e}");
        }
    }
}

#[test]
fn concurrent_increments_through_the_cache_lose_no_update() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 1500;
    const KEYS: usize = 6;
    for format in [Format::Kvrocks, Format::Blackwidow, Format::Floyd] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (engine, _clock) = open(format, dir.path(), 1 << 20);
        let engine = Arc::new(engine);
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let engine = engine.clone();
                std::thread::spawn(move || {
                    for i in 0..ROUNDS {
                        let key = format!("counter{}", (i + t) % KEYS);
                        engine.execute(&["INCR", key.as_str()]);
                        engine.execute(&["HINCRBY", "hash", key.as_str(), "1"]);
                        // A read of every key between, filling the cache
                        // while the other threads write.
                        let other = format!("counter{}", (i * 7 + t) % KEYS);
                        engine.execute(&["GET", other.as_str()]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let per_key = (THREADS * ROUNDS / KEYS).to_string();
        for k in 0..KEYS {
            let key = format!("counter{k}");
            let want = Reply::Bulk(per_key.clone().into_bytes());
            assert_eq!(
                engine.execute(&["GET", key.as_str()]),
                want,
                "{format} {key}"
            );
            assert_eq!(
                engine.execute(&["HGET", "hash", key.as_str()]),
                want,
                "{format} hash field {key}"
            );
        }
    }
}

#[test]
fn an_unlogged_load_over_cached_records_reads_back_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, _clock) = open(Format::Kvrocks, dir.path(), 1 << 20);
    assert_eq!(engine.execute(&["SET", "k", "old"]), Reply::ok());
    assert_eq!(engine.execute(&["GET", "k"]), Reply::Bulk(b"old".to_vec()));
    assert_eq!(engine.execute(&["GET", "absent"]), Reply::Nil);
    let (entries, _) = engine.store().read_cache_size().expect("a cache");
    assert!(entries >= 2, "the reads were not cached: {entries}");
    // The records of SET k new and SET absent v, written as a load does.
    let mut batch = Batch::default();
    for (key, value) in [("k", "new"), ("absent", "v")] {
        let shadow = tempfile::tempdir().expect("tempdir");
        let (scratch, _) = open(Format::Kvrocks, shadow.path(), 0);
        assert_eq!(scratch.execute(&["SET", key, value]), Reply::ok());
        let record = engine
            .codec()
            .meta_record(key.as_bytes(), DataType::String)
            .expect("record");
        let raw = scratch
            .store()
            .get(record.place, &record.key)
            .expect("read")
            .expect("written");
        batch.put(record.place, record.key, raw);
    }
    engine.store().write_unlogged(batch).expect("load");
    assert_eq!(engine.execute(&["GET", "k"]), Reply::Bulk(b"new".to_vec()));
    assert_eq!(
        engine.execute(&["GET", "absent"]),
        Reply::Bulk(b"v".to_vec())
    );
}
