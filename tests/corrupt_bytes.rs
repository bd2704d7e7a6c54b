//! Corrupt bytes under one key give a clear error for that key, never a
//! panic, and every other key keeps working.

mod common;

use common::Fixture;
use redcodec::codec::{Codec, DataType, SubIdRef, SubKind};
use redcodec::formats::Format;

#[test]
fn corrupt_metadata_is_an_error_for_that_key_only() {
    let f = Fixture::new(Format::Kvrocks);
    f.run_ok(&["SET good 1", "HSET h a 1"]);
    let codec = f.engine.codec();
    let record = codec.meta_record(b"bad", DataType::String).unwrap();
    for garbage in [&[][..], &[0x82][..], &[0x8f, 1, 2, 3][..], &[0xff; 40][..]] {
        f.put(record.place, record.key.clone(), garbage.to_vec());
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
    let (_, meta) = f.meta(b"z", DataType::ZSet);
    let key = codec.sub_key(SubKind::ZSetMember.of(b"z", &meta), SubIdRef::Name(b"a"));
    f.put(
        codec.sub_place(SubKind::ZSetMember, b"z"),
        key,
        vec![1, 2, 3],
    );
    let reply = f.run("ZSCORE z a").to_cli_string();
    assert!(
        reply.starts_with("(error) ERR data under key \"z\" is unreadable"),
        "{reply}"
    );
    assert_eq!(f.run("ZSCORE z b").to_cli_string(), "\"2\"");
    assert_eq!(f.run("ZSCORE y a").to_cli_string(), "\"1\"");
}

/// Metadata that states 2^60 elements (and list bounds that far apart)
/// over a collection of three: every read, and the writes that walk or
/// pop elements, reply at once with what the records hold (or an error),
/// allocating nothing by the stated count.
#[test]
fn huge_counts_in_metadata_are_bounded_by_the_records() {
    use redcodec::codec::{ListBounds, SparseIndex};
    const HUGE: u64 = 1 << 60;
    for &format in Format::ALL {
        let f = Fixture::new(format);
        f.run_ok(&[
            "RPUSH l a b c",
            "HSET h a 1 b 2 c 3",
            "SADD s a b c",
            "ZADD z 1 a 2 b 3 c",
        ]);
        let codec = f.engine.codec();
        for (key, t) in [
            ("l", DataType::List),
            ("h", DataType::Hash),
            ("s", DataType::Set),
            ("z", DataType::ZSet),
        ] {
            let (record, mut meta) = f.meta(key.as_bytes(), t);
            meta.size = HUGE;
            meta.list = match meta.list {
                ListBounds::Array { head, .. } => ListBounds::Array {
                    head,
                    tail: head + HUGE,
                },
                ListBounds::Linked { left, right, .. } => ListBounds::Linked {
                    left,
                    right,
                    next_seq: HUGE as i64,
                },
                ListBounds::Sparse { min, .. } => ListBounds::Sparse {
                    min,
                    max: SparseIndex::Int(HUGE as i64),
                    sequential: true,
                },
                ListBounds::None => ListBounds::None,
            };
            let Ok(bytes) = codec.encode_meta(&meta) else {
                continue; // a count the format cannot state
            };
            f.put(record.place, record.key, bytes);
        }
        for cmd in [
            "LRANGE l 0 -1",
            "LRANGE l -2 -1",
            "LRANGE l 1000 1000000",
            "LINDEX l -1",
            "LINDEX l 100000",
            "LPOS l c",
            "LPOS l x RANK -1",
            "LPOS l x COUNT 0",
            "HGETALL h",
            "HRANDFIELD h -5",
            "HRANDFIELD h 5",
            "HSCAN h 0 COUNT 1000",
            "SMEMBERS s",
            "SRANDMEMBER s -5",
            "SRANDMEMBER s 5",
            "SINTER s s",
            "SSCAN s 0",
            "ZRANGE z 0 -1",
            "ZRANGE z -2 -1 WITHSCORES",
            "ZRANGE z 0 -1 REV",
            "ZRANK z c",
            "ZREVRANK z a",
            "ZRANDMEMBER z -5",
            "ZRANGEBYSCORE z -inf +inf",
            "ZCOUNT z -inf +inf",
            "ZUNION 1 z",
            "SCAN 0 COUNT 1000",
            "LPOP l 1000",
            "RPOP l 2",
            "LTRIM l 1 -2",
            "LREM l 0 a",
            "LSET l -1 x",
            "LINSERT l BEFORE c x",
            "RPUSH l d",
            "HDEL h a",
            "SPOP s 1000",
            "SREM s a",
            "ZPOPMIN z 1000",
            "ZREMRANGEBYRANK z 0 -1",
            "COPY l l2",
            "RENAME h h2",
            "DEL l h2 s z l2",
        ] {
            let reply = f.run(cmd);
            let text = reply.to_cli_string();
            assert!(
                text.starts_with("(error)") || text.lines().count() <= 10,
                "{}: {cmd}: {text}",
                format.name()
            );
        }
    }
}
