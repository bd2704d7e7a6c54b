//! Corrupt bytes under one key give a clear error for that key, never a
//! panic, and every other key keeps working.

mod common;

use common::Fixture;
use redcodec::codec::{Codec, DataType, SubId, SubKind};
use redcodec::engine::store::Batch;
use redcodec::formats::Format;

#[test]
fn corrupt_metadata_is_an_error_for_that_key_only() {
    let f = Fixture::new(Format::Kvrocks);
    f.run_ok(&["SET good 1", "HSET h a 1"]);
    let codec = f.engine.codec();
    let record = codec.meta_record(b"bad", DataType::String).unwrap();
    for garbage in [&[][..], &[0x82][..], &[0x8f, 1, 2, 3][..], &[0xff; 40][..]] {
        let mut batch = Batch::default();
        batch.put(record.place, record.key.clone(), garbage.to_vec());
        f.engine.store().write(batch).unwrap();
        for cmd in [
            "GET bad",
            "HGET bad f",
            "LRANGE bad 0 -1",
            "TYPE bad",
            "SADD bad m",
        ] {
            let reply = f.run(cmd).to_cli_string();
            assert!(
                reply.starts_with("(error) ERR data under key \"bad\" is unreadable"),
                "{cmd} on {garbage:02x?}: {reply}"
            );
        }
        assert_eq!(f.run("GET good").to_cli_string(), "\"1\"");
        assert_eq!(f.run("HGET h a").to_cli_string(), "\"1\"");
        assert_eq!(f.run("KEYS *").to_cli_string().lines().count(), 3);
    }
}

#[test]
fn corrupt_element_values_are_errors_for_that_key_only() {
    let f = Fixture::new(Format::Kvrocks);
    f.run_ok(&["ZADD z 1 a 2 b", "ZADD y 1 a"]);
    let codec = f.engine.codec();
    let raw = codec.meta_record(b"z", DataType::ZSet).unwrap();
    let meta_bytes = f.engine.store().get(raw.place, &raw.key).unwrap().unwrap();
    let meta = codec.decode_meta(DataType::ZSet, &meta_bytes).unwrap();
    let key = codec.sub_key(
        SubKind::ZSetMember,
        b"z",
        &meta,
        &SubId::Name(b"a".to_vec()),
    );
    let mut batch = Batch::default();
    batch.put(
        codec.sub_place(SubKind::ZSetMember, b"z"),
        key,
        vec![1, 2, 3],
    );
    f.engine.store().write(batch).unwrap();
    let reply = f.run("ZSCORE z a").to_cli_string();
    assert!(
        reply.starts_with("(error) ERR data under key \"z\" is unreadable"),
        "{reply}"
    );
    assert_eq!(f.run("ZSCORE z b").to_cli_string(), "\"2\"");
    assert_eq!(f.run("ZSCORE y a").to_cli_string(), "\"1\"");
}
