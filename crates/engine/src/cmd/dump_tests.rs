//! DUMP and RESTORE on the engine: every type round-trips on one store,
//! expiries follow the format's resolution as every expiry command does,
//! and a format's limits refuse a payload as they refuse the same write.

use std::sync::Arc;

use redcodec_codec::Codec;
use redcodec_nemo::NemoCodec;

use crate::clock::ManualClock;
use crate::cmd::testkit::TestEngine;
use crate::engine::{Engine, EngineOptions};
use crate::reply::Reply;
use crate::store::KvStore;

fn exec<C: Codec, S: KvStore>(engine: &Engine<C, S>, args: &[&[u8]]) -> Reply {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    engine.execute(&args)
}

fn dump<C: Codec, S: KvStore>(engine: &Engine<C, S>, key: &str) -> Vec<u8> {
    match exec(engine, &[b"DUMP", key.as_bytes()]) {
        Reply::Bulk(b) => b,
        other => panic!("DUMP {key}: {other:?}"),
    }
}

#[test]
fn every_type_round_trips_with_its_expiry() {
    let t = TestEngine::in_memory();
    for line in [
        "SET s hello",
        "SET n 42",
        "RPUSH l a b 3",
        "SADD set 1 2 x",
        "ZADD z 1 a 2.5 b -inf c",
        "HSET h f v g 7",
        "PEXPIRE h 5000",
    ] {
        assert!(!matches!(t.run(line), Reply::Error(_)), "{line}");
    }
    for (key, read) in [
        ("s", "GET"),
        ("n", "GET"),
        ("l", "LRANGE * 0 -1"),
        ("set", "SMEMBERS"),
        ("z", "ZRANGE * 0 -1 WITHSCORES"),
        ("h", "HGETALL"),
    ] {
        let payload = dump(&t.engine, key);
        let copy = format!("{key}-copy");
        let ttl = if key == "h" { &b"5000"[..] } else { b"0" };
        let reply = exec(&t.engine, &[b"RESTORE", copy.as_bytes(), ttl, &payload]);
        assert_eq!(reply, Reply::ok(), "{key}");
        let read_of = |k: &str| {
            if read.contains('*') {
                t.cli(&read.replace('*', k))
            } else {
                t.cli(&format!("{read} {k}"))
            }
        };
        assert_eq!(read_of(&copy), read_of(key), "{key}");
        assert_eq!(
            t.cli(&format!("TYPE {copy}")),
            t.cli(&format!("TYPE {key}"))
        );
        assert_eq!(dump(&t.engine, &copy), payload, "{key}: DUMP of the copy");
    }
    assert_eq!(t.cli("PTTL h-copy"), "(integer) 5000");
    assert_eq!(t.cli("PTTL s-copy"), "(integer) -1");
    assert_eq!(t.cli("DUMP missing"), "(nil)");
}

#[test]
fn restore_checks_in_redis_order() {
    let t = TestEngine::in_memory();
    t.run("SET s hello");
    let payload = dump(&t.engine, "s");
    let err = |args: &[&[u8]]| exec(&t.engine, args).to_cli_string();
    assert_eq!(
        err(&[b"RESTORE", b"s", b"-1", b"junk"]),
        "(error) BUSYKEY Target key name already exists."
    );
    assert_eq!(
        err(&[b"RESTORE", b"s", b"-1", b"junk", b"REPLACE"]),
        "(error) ERR Invalid TTL value, must be >= 0"
    );
    assert_eq!(
        err(&[b"RESTORE", b"s", b"0", b"junk", b"REPLACE"]),
        "(error) ERR DUMP payload version or checksum are wrong"
    );
    assert_eq!(
        err(&[
            b"RESTORE",
            b"s",
            b"0",
            b"junk",
            b"FREQ",
            b"1",
            b"IDLETIME",
            b"1"
        ]),
        "(error) ERR syntax error"
    );
    let empty_list = redcodec_rdb::seal(vec![18, 0]);
    assert_eq!(
        err(&[b"RESTORE", b"t", b"0", &empty_list]),
        "(error) ERR Bad data format"
    );
    // A TTL already past: nothing is created, and REPLACE removes the old key.
    assert_eq!(
        err(&[b"RESTORE", b"s", b"1", &payload, b"ABSTTL", b"REPLACE"]),
        "OK"
    );
    assert_eq!(t.cli("EXISTS s"), "(integer) 0");
    // REPLACE over another type.
    t.run("RPUSH s x");
    assert_eq!(err(&[b"RESTORE", b"s", b"0", &payload, b"REPLACE"]), "OK");
    assert_eq!(t.cli("GET s"), "\"hello\"");
}

fn nemo() -> (tempfile::TempDir, Engine<NemoCodec>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::at_ms(1_700_000_000_250));
    let engine = Engine::open(
        NemoCodec::new(),
        dir.path(),
        EngineOptions::with_clock(clock),
    )
    .expect("open");
    (dir, engine)
}

#[test]
fn whole_second_formats_keep_restored_ttls_as_pexpire_keeps_them() {
    let (_dir, engine) = nemo();
    exec(&engine, &[b"SET", b"s", b"v"]);
    let payload = dump(&engine, "s");
    exec(&engine, &[b"RESTORE", b"r", b"1500", &payload]);
    exec(&engine, &[b"SET", b"p", b"v"]);
    exec(&engine, &[b"PEXPIRE", b"p", b"1500"]);
    assert_eq!(
        exec(&engine, &[b"PTTL", b"r"]),
        exec(&engine, &[b"PTTL", b"p"])
    );
    assert_eq!(
        exec(&engine, &[b"PEXPIRETIME", b"r"]),
        exec(&engine, &[b"PEXPIRETIME", b"p"])
    );
}

#[test]
fn a_format_limit_refuses_the_payload_as_it_refuses_the_write() {
    let (_dir, engine) = nemo();
    let payload = redcodec_rdb::encode_payload(
        &redcodec_rdb::Value::ZSet(vec![(b"m".to_vec(), 1e14)]),
        redcodec_rdb::EncodeOptions::default(),
    );
    let restored = exec(&engine, &[b"RESTORE", b"z", b"0", &payload]);
    let added = exec(&engine, &[b"ZADD", b"z", b"1e14", b"m"]);
    assert!(matches!(restored, Reply::Error(_)), "{restored:?}");
    assert_eq!(restored, added);
    assert_eq!(exec(&engine, &[b"EXISTS", b"z"]), Reply::Integer(0));
}
