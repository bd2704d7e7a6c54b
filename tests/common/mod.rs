//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::sync::Arc;

use redcodec::codec::{Codec, DataType, Meta, Place, Record};
use redcodec::engine::store::Batch;
use redcodec::engine::{Engine, EngineOptions, ManualClock, Reply};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

/// The time every fixed-clock test starts at: 2023-11-14T22:13:20Z.
pub const T0_MS: u64 = 1_700_000_000_000;

/// Writes of a string, a hash, a sorted set and a list: the start of every
/// format's snapshot script.
pub const EVERY_TYPE_SCRIPT: &[&str] = &[
    "SET foo bar",
    "HSET h f v",
    "ZADD z 1.5 m -1.5 n",
    "RPUSH l a b",
    "LPUSH l z",
];

/// What blackwidow's and floyd's snapshot scripts write after
/// [`EVERY_TYPE_SCRIPT`]: a set, expiry in milliseconds, a binary key, and
/// a list emptied by a pop.
pub const PIKA_SNAPSHOT_SCRIPT: &[&str] = &[
    "SADD s x",
    "PEXPIRE foo 5000",
    "PEXPIRE h 1500",
    "SET \"\\x00\\xff\" bin",
    "LPUSH e only",
    "LPOP e",
];

/// Pika's worked example (part C of the reference): a string, a hash, a
/// sorted set and a list written one by one, with their replies.
pub const PIKA_WORKED_EXAMPLE: &[(&str, &str)] = &[
    ("SET foo bar", "OK"),
    ("HSET h f v", "(integer) 1"),
    ("ZADD z 1.5 m", "(integer) 1"),
    ("RPUSH l a", "(integer) 1"),
];

/// An engine of `format` in a fresh temporary directory on a manual clock.
pub struct Fixture {
    pub engine: Engine<AnyCodec>,
    pub clock: Arc<ManualClock>,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new(format: Format) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(ManualClock::at_ms(T0_MS));
        let codec = format.codec(&FormatOptions::default()).expect("codec");
        let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
            .expect("open");
        Fixture { engine, clock, dir }
    }

    /// A fixture after blackwidow's and floyd's snapshot script
    /// ([`EVERY_TYPE_SCRIPT`] then [`PIKA_SNAPSHOT_SCRIPT`]).
    pub fn pika_snapshot(format: Format) -> Fixture {
        let f = Fixture::new(format);
        f.run_ok(EVERY_TYPE_SCRIPT);
        f.run_ok(PIKA_SNAPSHOT_SCRIPT);
        f
    }

    /// A fixture whose hash `h` (field `f` = `v`) was deleted at once,
    /// in the same tick of the clock as it was written.
    pub fn hash_deleted(format: Format) -> Fixture {
        let f = Fixture::new(format);
        f.run("HSET h f v");
        assert_eq!(f.run("DEL h").to_cli_string(), "(integer) 1");
        f
    }

    /// Writes one raw record, as another program might have.
    pub fn put(&self, place: Place, key: Vec<u8>, value: Vec<u8>) {
        let mut batch = Batch::default();
        batch.put(place, key, value);
        self.engine.store().write(batch).unwrap();
    }

    /// The metadata record of `key` as type `t`, and what it holds.
    pub fn meta(&self, key: &[u8], t: DataType) -> (Record, Meta) {
        let codec = self.engine.codec();
        let record = codec.meta_record(key, t).unwrap();
        let raw = self
            .engine
            .store()
            .get(record.place, &record.key)
            .unwrap()
            .unwrap();
        let meta = codec.decode_meta(t, &raw).unwrap();
        (record, meta)
    }

    /// Runs a command given as space-separated words.
    pub fn run(&self, line: &str) -> Reply {
        let args = redcodec::engine::cmdline::split_args(line).expect("command line");
        self.engine.execute(&args)
    }

    /// Runs each command line and asserts its reply as `redis-cli` prints it.
    pub fn expect(&self, script: &[(&str, &str)]) {
        for (line, reply) in script {
            assert_eq!(self.run(line).to_cli_string(), *reply, "{line}");
        }
    }

    /// Runs each command line and asserts that none of them fails.
    pub fn run_ok(&self, lines: &[&str]) {
        for line in lines {
            let reply = self.run(line);
            assert!(!reply.is_error(), "{line}: {reply}");
        }
    }

    /// Writes a hash `key` with `n` fields (`field<i>` = `value<i>`), in
    /// commands of 1,000 fields.
    pub fn big_hash(&self, key: &str, n: usize) {
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let mut line = format!("HSET {key}");
            for i in chunk {
                line.push_str(&format!(" field{i} value{i}"));
            }
            let reply = self.run(&line);
            assert!(!reply.is_error(), "HSET {key}: {reply}");
        }
    }

    /// The store's dump, as `redcodec dump` prints it.
    pub fn dump(&self) -> String {
        let mut out = Vec::new();
        self.engine.store().dump(&mut out).expect("dump");
        String::from_utf8(out).expect("dump is text")
    }

    /// Asserts that the store's dump is `expected`, line by line.
    pub fn assert_dump<S: AsRef<str>>(&self, expected: &[S]) {
        let dump = self.dump();
        let expected: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
        assert_eq!(
            dump.lines().collect::<Vec<_>>(),
            expected,
            "dump was:\n{dump}"
        );
    }

    /// Number of stored pairs in the column family named `cf`.
    pub fn count_in(&self, cf: &str) -> usize {
        self.dump()
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some(cf))
            .count()
    }
}
