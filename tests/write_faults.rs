//! Storage that fails: a write or read the store refuses gives the client
//! `ERR storage error: …` and leaves the data exactly as it was, for every
//! write command on every format; a write that spans two RocksDB
//! instances and fails after the first is completed before anything else
//! reads or writes the store (formats-spec/real-data-directories.md §8.2).

mod common;

use std::sync::Arc;

use common::{Fixture, T0_MS};
use redcodec::codec::Codec;
use redcodec::engine::check::check;
use redcodec::engine::cmdline::split_args;
use redcodec::engine::store::faults::{INJECTED_READ, INJECTED_WRITE};
use redcodec::engine::store::{FaultyStore, MemStore};
use redcodec::engine::{Engine, EngineOptions, ManualClock};
use redcodec::formats::{AnyCodec, Format, FormatOptions};

/// Keys of every type the write commands below work on.
const SETUP: &[&str] = &[
    "SET s 10",
    "SET f 1.5",
    "SET e 1 EX 1000",
    "HSET h f 1 g 2",
    "RPUSH l a b c",
    "SADD t a b c",
    "SADD u b c d",
    "ZADD z 1 a 2 b 3 c",
    "ZADD y 2 b 5 e",
];

/// One command of every write kind, each of which writes on the keys of
/// [`SETUP`].
const WRITES: &[&str] = &[
    "SET s v",
    "SET h v",
    "SET l v",
    "SET n v NX",
    "SETNX n v",
    "SETEX n 100 v",
    "PSETEX n 100000 v",
    "GETSET s v",
    "GETDEL s",
    "GETEX s EX 100",
    "APPEND s x",
    "SETRANGE s 1 x",
    "SETBIT s 0 1",
    "INCR s",
    "DECR s",
    "INCRBY s 5",
    "DECRBY s 5",
    "INCRBYFLOAT f 1.25",
    "MSET a 1 b 2",
    "MSETNX a 1 b 2",
    "DEL s h l",
    "UNLINK t z",
    "EXPIRE h 100",
    "PEXPIRE l 100000",
    "EXPIREAT z 2000000000",
    "PEXPIREAT t 2000000000000",
    "PERSIST e",
    "RENAME h h2",
    "RENAMENX l l2",
    "COPY z z2",
    "HSET h f 9 n 1",
    "HSETNX h n 1",
    "HMSET h a 1",
    "HDEL h f",
    "HINCRBY h f 2",
    "HINCRBYFLOAT h f 0.5",
    "LPUSH l x",
    "RPUSH l x",
    "LPUSHX l x",
    "RPUSHX l x",
    "LPOP l",
    "RPOP l 2",
    "LSET l 1 x",
    "LINSERT l BEFORE b x",
    "LREM l 0 a",
    "LTRIM l 1 1",
    "LMOVE l l2 LEFT RIGHT",
    "RPOPLPUSH l l",
    "LMPOP 1 l LEFT",
    "SADD t x",
    "SREM t a",
    "SPOP t",
    "SMOVE t u a",
    "SINTERSTORE d t u",
    "SUNIONSTORE d t u",
    "SDIFFSTORE d t u",
    "ZADD z 5 d",
    "ZINCRBY z 1 a",
    "ZREM z a",
    "ZPOPMIN z",
    "ZPOPMAX z 2",
    "ZMPOP 1 z MIN",
    "ZREMRANGEBYRANK z 0 0",
    "ZREMRANGEBYSCORE z 1 2",
    "ZREMRANGEBYLEX z [a [b",
    "ZUNIONSTORE d 2 z y",
    "ZINTERSTORE d 2 z y",
    "ZDIFFSTORE d 2 z y",
    "ZRANGESTORE d z 0 -1",
    "FLUSHDB",
    "FLUSHALL",
];

type Faulty = Engine<AnyCodec, FaultyStore<MemStore>>;

/// An in-memory engine of `format` behind a [`FaultyStore`], with
/// [`SETUP`] run.
fn faulty(format: Format) -> Faulty {
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let store = FaultyStore::new(MemStore::new(codec.layout()));
    let engine = Engine::over(codec, store, Arc::new(ManualClock::at_ms(T0_MS))).expect("engine");
    for line in SETUP {
        let reply = run(&engine, line);
        assert!(!reply.starts_with("(error)"), "{line}: {reply}");
    }
    engine
}

fn run(engine: &Faulty, line: &str) -> String {
    engine
        .execute(&split_args(line).expect("command line"))
        .to_cli_string()
}

#[test]
fn a_failed_write_is_an_error_reply_and_writes_nothing() {
    for &format in Format::ALL {
        for line in WRITES {
            let e = faulty(format);
            let before = e.store().inner().pairs();
            e.store().fail_write(1);
            let reply = run(&e, line);
            assert_eq!(
                reply,
                format!("(error) ERR storage error: {INJECTED_WRITE}"),
                "{}: {line}",
                format.name()
            );
            assert!(
                e.store().inner().pairs() == before,
                "{}: {line} changed the store",
                format.name()
            );
            // The same command on the same data, storage working: it
            // writes (so the failure above cut a real write).
            let reply = run(&e, line);
            assert!(
                !reply.starts_with("(error)"),
                "{}: {line}: {reply}",
                format.name()
            );
            assert!(
                e.store().inner().pairs() != before,
                "{}: {line} wrote nothing",
                format.name()
            );
        }
    }
}

#[test]
fn a_failed_read_is_an_error_reply_and_writes_nothing() {
    let error = format!("(error) ERR storage error: {INJECTED_READ}");
    for &format in Format::ALL {
        let mut refused = 0;
        for line in WRITES {
            let e = faulty(format);
            let before = e.store().inner().pairs();
            let writes = e.store().writes();
            e.store().fail_reads(true);
            let reply = run(&e, line);
            // A command that reads nothing (FLUSHALL deletes every range)
            // may still write; one that reads fails whole.
            if reply.starts_with("(error)") {
                refused += 1;
                assert_eq!(reply, error, "{}: {line}", format.name());
                assert_eq!(e.store().writes(), writes, "{}: {line}", format.name());
                assert!(
                    e.store().inner().pairs() == before,
                    "{}: {line}",
                    format.name()
                );
            }
        }
        assert!(refused >= WRITES.len() / 2, "{}: {refused}", format.name());
        let e = faulty(format);
        e.store().fail_reads(true);
        for read in [
            "GET s",
            "HGETALL h",
            "LRANGE l 0 -1",
            "SMEMBERS t",
            "ZRANGE z 0 -1",
            "SCAN 0",
        ] {
            assert_eq!(run(&e, read), error, "{}: {read}", format.name());
        }
    }
}

/// The error a write that fails between two instances gives.
const BETWEEN: &str = "(error) ERR storage error: injected failure between instances";

/// The formats that keep each type in a RocksDB instance of its own, so
/// that `SET` over a hash writes two instances.
fn multi_instance_formats() -> [Format; 2] {
    [Format::Blackwidow, Format::Nemo]
}

/// A store of `format` with `setup` run, on which `SET k s` failed
/// between its two instances.
fn failed_between(format: Format, setup: &[&str]) -> Fixture {
    let f = Fixture::new(format);
    f.run_ok(setup);
    f.engine.store().fail_between_instances(1);
    let reply = f.run("SET k s").to_cli_string();
    assert_eq!(reply, BETWEEN, "{}", format.name());
    assert!(f.engine.store().intent_pending(), "{}", format.name());
    f
}

/// Closes `f`'s engine and opens its store again; `check` must be clean.
fn reopen(f: Fixture, format: Format) -> (Engine<AnyCodec>, tempfile::TempDir) {
    let Fixture { engine, clock, dir } = f;
    drop(engine);
    let codec = format.codec(&FormatOptions::default()).expect("codec");
    let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock)).expect("reopen");
    assert!(check(&engine).unwrap().is_clean(), "{}", format.name());
    (engine, dir)
}

#[test]
fn a_write_failed_between_instances_completes_before_the_next_read() {
    for format in multi_instance_formats() {
        let f = failed_between(format, &["HSET k f v", "SADD other m"]);
        // The next read completes the command first: the key is a string
        // only, never a string and a hash.
        assert_eq!(
            f.run("TYPE k").to_cli_string(),
            "string",
            "{}",
            format.name()
        );
        assert!(!f.engine.store().intent_pending());
        assert_eq!(f.run("GET k").to_cli_string(), "\"s\"");
        assert_eq!(f.run("EXISTS k").to_cli_string(), "(integer) 1");
        assert!(check(&f.engine).unwrap().is_clean(), "{}", format.name());
    }
}

#[test]
fn a_write_failed_between_instances_is_never_undone_by_a_later_one() {
    for format in multi_instance_formats() {
        let f = failed_between(format, &["HSET k f v"]);
        // A write to one instance: the pending command is completed
        // first, so this one is the last word, also after reopening.
        f.run_ok(&["SET k t"]);
        assert_eq!(f.run("GET k").to_cli_string(), "\"t\"");
        let (engine, _dir) = reopen(f, format);
        let got = engine.execute(&["GET", "k"]).to_cli_string();
        assert_eq!(got, "\"t\"", "{}", format.name());
    }
}

#[test]
fn a_write_failed_between_instances_is_completed_at_the_next_open() {
    for format in multi_instance_formats() {
        let f = failed_between(format, &["RPUSH k a b", "HSET h f v"]);
        let intent = f.dir.path().join("redcodec-intent");
        assert!(intent.exists());
        let (engine, _dir) = reopen(f, format);
        assert!(!intent.exists());
        assert_eq!(engine.execute(&["TYPE", "k"]).to_cli_string(), "string");
        assert_eq!(engine.execute(&["GET", "k"]).to_cli_string(), "\"s\"");
        assert_eq!(engine.execute(&["HGET", "h", "f"]).to_cli_string(), "\"v\"");
    }
}
