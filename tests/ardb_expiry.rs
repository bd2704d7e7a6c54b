//! Ardb's expiry on RocksDB, on a manual clock: the compaction filter keeps
//! an expired key's records and reports the key; the engine's active-expiry
//! task deletes every reported key that is still expired.

mod common;

use common::{Fixture, T0_MS};
use redcodec::formats::Format;

/// Records in the namespace family `0`, as `redcodec dump` lists them.
fn records(f: &Fixture) -> usize {
    f.count_in("0")
}

/// A 10,000-field hash `h` that expires at T0 + 1 s, a key `keep` that
/// does not, and the clock 2 s later: `h` is expired, and no command has
/// read it since. With `background: false` the expiry task is stopped:
/// the test runs the passes itself.
fn expired_big_hash(background: bool) -> Fixture {
    let mut f = Fixture::new(Format::Ardb);
    assert!(f.engine.has_expiry_task());
    if !background {
        f.engine.stop_expiry_task();
        assert!(!f.engine.has_expiry_task());
    }
    f.big_hash("h", 10_000);
    assert_eq!(f.run("SET keep v").to_cli_string(), "OK");
    assert_eq!(f.run("PEXPIRE h 1000").to_cli_string(), "(integer) 1");
    assert_eq!(records(&f), 10_002);
    f.clock.advance_ms(2_000);
    f
}

#[test]
fn compaction_reports_and_one_expiry_pass_deletes_an_untouched_expired_hash() {
    let f = expired_big_hash(false);
    // Nothing is reported before a compaction.
    assert_eq!(f.engine.expire_reported_keys().unwrap(), 0);
    assert_eq!(records(&f), 10_002);
    // The filter keeps the expired META record (and every field) …
    f.engine.compact().unwrap();
    assert_eq!(records(&f), 10_002);
    // … and reports `h`, which one pass deletes: META to END at once.
    assert_eq!(f.engine.expire_reported_keys().unwrap(), 1);
    assert_eq!(records(&f), 1);
    assert_eq!(f.dump(), "rocksdb\t0\t046b6565700100\t02000001040176\n");
    f.engine.compact().unwrap();
    assert_eq!(records(&f), 1);
    assert_eq!(f.engine.expire_reported_keys().unwrap(), 0);
    assert_eq!(f.run("GET keep").to_cli_string(), "\"v\"");
}

#[test]
fn the_pass_rechecks_each_key_with_the_clock() {
    let f = expired_big_hash(false);
    f.engine.compact().unwrap();
    // Back before the expiry: the reported key is live again, and kept.
    f.clock.set_ms(T0_MS + 500);
    assert_eq!(f.engine.expire_reported_keys().unwrap(), 0);
    assert_eq!(f.run("HLEN h").to_cli_string(), "(integer) 10000");
    // Replaced by a string that does not expire: kept too.
    f.clock.set_ms(T0_MS + 2_000);
    f.engine.compact().unwrap();
    assert_eq!(f.run("SET h now-a-string").to_cli_string(), "OK");
    assert_eq!(f.engine.expire_reported_keys().unwrap(), 0);
    assert_eq!(f.run("GET h").to_cli_string(), "\"now-a-string\"");
    assert_eq!(records(&f), 2);
}

#[test]
fn the_background_task_deletes_it_on_its_next_pass() {
    let f = expired_big_hash(true);
    f.engine.compact().unwrap();
    // The task's next pass (woken now instead of after its period of real
    // time) deletes the reported key.
    assert!(f.engine.tick_expiry_task());
    assert_eq!(records(&f), 1);
    assert_eq!(f.run("GET keep").to_cli_string(), "\"v\"");
}

#[test]
fn dropping_the_engine_stops_the_task_and_releases_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let codec = Format::Ardb.codec(&Default::default()).expect("codec");
        redcodec::engine::Engine::open(codec, dir.path(), Default::default())
    };
    let first = open().expect("first open");
    assert!(first.has_expiry_task());
    assert_eq!(first.execute(&["SET", "k", "v"]).to_cli_string(), "OK");
    drop(first);
    // The task held the store: had it outlived the engine, RocksDB's lock
    // on the directory would refuse this second open.
    let second = open().expect("second open");
    assert_eq!(second.execute(&["GET", "k"]).to_cli_string(), "\"v\"");
}

#[test]
fn an_expired_collection_recreated_with_its_own_type_starts_empty() {
    let f = Fixture::new(Format::Ardb);
    f.run_ok(&[
        "ZADD z -1 m",
        "SADD s a b",
        "HSET h f v",
        "RPUSH l a b",
        "PEXPIRE z 10",
        "PEXPIRE s 10",
        "PEXPIRE h 10",
        "PEXPIRE l 10",
    ]);
    f.clock.advance_ms(20);
    // Nothing of the old values shows through.
    assert_eq!(f.run("ZINCRBY z 0.5 m").to_cli_string(), "\"0.5\"");
    assert_eq!(f.run("SADD s a").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("SCARD s").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HSET h f w").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HLEN h").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("RPUSH l c").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("LRANGE l 0 -1").to_cli_string(), "1) \"c\"");
    // Only the new records are stored.
    assert_eq!(records(&f), 2 + 2 + 3 + 2);
}
