//! The exact bytes the nemo format writes, under a fixed clock
//! (T = 1700000000 s = 0x6553F100, LE `00 f1 53 65`): the worked examples of
//! `shared/reference/pika.md` part C (also formats-spec/nemo.md §11) line by
//! line, the linked-list and version rules, compaction, and a reviewed
//! snapshot of a longer script.

mod common;

use common::{Fixture, T0_MS};
use redcodec::formats::Format;

/// The separators nemo writes on every open: empty value, zero suffix.
const SEPARATORS: [&str; 5] = [
    "hash\tdefault\t68\t0000000000000000",
    "list\tdefault\t6c\t0000000000000000",
    "zset\tdefault\t79\t0000000000000000",
    "zset\tdefault\t7a\t0000000000000000",
    "set\tdefault\t73\t0000000000000000",
];

/// The dump's lines without the separators.
fn records(f: &Fixture) -> Vec<String> {
    f.dump()
        .lines()
        .filter(|l| !SEPARATORS.contains(l))
        .map(String::from)
        .collect()
}

#[test]
fn a_fresh_store_holds_the_separators() {
    let f = Fixture::new(Format::Nemo);
    f.assert_dump(&SEPARATORS);
    assert_eq!(f.run("DBSIZE").to_cli_string(), "(integer) 0");
    assert_eq!(f.run("KEYS *").to_cli_string(), "(empty array)");
    // FLUSHALL keeps them, as a restarted nemo would rewrite them.
    f.run("HSET h f v");
    assert_eq!(f.run("FLUSHALL").to_cli_string(), "OK");
    f.assert_dump(&SEPARATORS);
}

#[test]
fn a_string_key_of_leading_ff_bytes_is_listed_and_flushed() {
    // 300 `0xFF` bytes, then `x`: beyond the old 256-byte bound of the
    // `kv` instance's whole-family range, inside the 1024-byte one
    // (formats-spec/nemo.md §2).
    let f = Fixture::new(Format::Nemo);
    let mut key = vec![0xFF_u8; 300];
    key.push(b'x');
    let set = f
        .engine
        .execute(&[b"SET".as_slice(), &key, b"v".as_slice()]);
    assert_eq!(set.to_cli_string(), "OK");
    assert_eq!(f.run("DBSIZE").to_cli_string(), "(integer) 1");
    let keys = f.engine.execute(&[b"KEYS".as_slice(), b"*".as_slice()]);
    assert_eq!(
        keys,
        redcodec::engine::Reply::Array(vec![redcodec::engine::Reply::Bulk(key)])
    );
    assert_eq!(f.run("FLUSHALL").to_cli_string(), "OK");
    f.assert_dump(&SEPARATORS);
}

#[test]
fn set_hset_zadd_lpush_write_the_bytes_of_part_c() {
    let f = Fixture::new(Format::Nemo);
    f.expect(&[
        ("SET foo bar", "OK"),
        ("HSET h f v", "(integer) 1"),
        ("ZADD z 1.5 m", "(integer) 1"),
        ("LPUSH l a", "(integer) 1"),
    ]);
    // `<instance>\t<cf>\t<key hex>\t<value hex>`, instances in layout order
    // (kv, hash, list, zset, set), keys in bytewise order.
    let expected = [
        // "bar" | version 0 | timestamp 0
        "kv\tdefault\t666f6f\t6261720000000000000000",
        // 'H' "h" → count 1 | version T | timestamp 0
        "hash\tdefault\t4868\t010000000000000000f1536500000000",
        SEPARATORS[0],
        // 'h' len 1 "h" '=' "f" → "v" | version T | timestamp 0
        "hash\tdefault\t6801683d66\t7600f1536500000000",
        // 'L' "l" → len 1 | left 1 | right 1 | next seq 2 | version T | ts 0
        "list\tdefault\t4c6c\t\
         0100000000000000\
         0100000000000000\
         0100000000000000\
         0200000000000000\
         00f1536500000000",
        SEPARATORS[1],
        // 'l' len 1 "l" seq 1 → prev 0 | next 0 | "a" | version T | ts 0
        "list\tdefault\t6c016c0100000000000000\t\
         0000000000000000\
         0000000000000000\
         61\
         00f1536500000000",
        // 'Z' "z" → count 1 | version T | timestamp 0
        "zset\tdefault\t5a7a\t010000000000000000f1536500000000",
        SEPARATORS[2],
        // 'y' len 1 "z" BE(1.5 * 10^5 + 10^18) "m" → empty | version T | ts 0
        "zset\tdefault\t79017a0de0b6b3a76649f06d\t00f1536500000000",
        SEPARATORS[3],
        // 'z' len 1 "z" "m" → 1.5 (f64 LE) | version T | timestamp 0
        "zset\tdefault\t7a017a6d\t000000000000f83f00f1536500000000",
        SEPARATORS[4],
    ];
    f.assert_dump(&expected);
}

#[test]
fn setex_stores_now_plus_ttl_minus_one() {
    let f = Fixture::new(Format::Nemo);
    assert_eq!(f.run("SETEX foo 100 bar").to_cli_string(), "OK");
    // "bar" | version 0 | timestamp T+99 (part C); nemo keeps the key live
    // through second T+99, so TTL reports 100 as Redis does.
    assert_eq!(records(&f), ["kv\tdefault\t666f6f\t6261720000000063f15365"]);
    assert_eq!(f.run("TTL foo").to_cli_string(), "(integer) 100");
    assert_eq!(f.run("PTTL foo").to_cli_string(), "(integer) 99999");
    // EXPIREAT stores the second as given.
    assert_eq!(
        f.run("EXPIREAT foo 1700000100").to_cli_string(),
        "(integer) 1"
    );
    assert_eq!(records(&f), ["kv\tdefault\t666f6f\t6261720000000064f15365"]);
    f.clock.set_ms(T0_MS + 100_999);
    assert_eq!(f.run("GET foo").to_cli_string(), "\"bar\"");
    f.clock.set_ms(T0_MS + 101_000);
    assert_eq!(f.run("GET foo").to_cli_string(), "(nil)");
}

#[test]
fn del_gives_now_then_old_plus_one_and_hides_old_members() {
    // A set written at T-50, deleted at T: PutWithKeyVersion gives T
    // (formats-spec/nemo.md §11).
    let f = Fixture::new(Format::Nemo);
    f.clock.set_ms(T0_MS - 50_000);
    assert_eq!(f.run("SADD s m").to_cli_string(), "(integer) 1");
    f.clock.set_ms(T0_MS);
    assert_eq!(f.run("DEL s").to_cli_string(), "(integer) 1");
    let old_member = "set\tdefault\t7301736d\tcef0536500000000";
    assert_eq!(
        records(&f),
        [
            // 'S' "s" → count 0 | version T | timestamp 0
            "set\tdefault\t5373\t000000000000000000f1536500000000",
            // The old member keeps version T-50 (0x6553F0CE) until compaction.
            old_member,
        ]
    );
    assert_eq!(f.run("SISMEMBER s m").to_cli_string(), "(integer) 0");
    assert_eq!(f.run("SCARD s").to_cli_string(), "(integer) 0");
    // Re-created in the same second: version T+1. Adding the old member
    // again counts it as new.
    assert_eq!(f.run("SADD s m n").to_cli_string(), "(integer) 2");
    assert_eq!(f.run("SCARD s").to_cli_string(), "(integer) 2");
    assert_eq!(
        records(&f),
        [
            "set\tdefault\t5373\t020000000000000001f1536500000000",
            "set\tdefault\t7301736d\t01f1536500000000",
            "set\tdefault\t7301736e\t01f1536500000000",
        ]
    );
    // A second DEL in the same second: T+2.
    assert_eq!(f.run("DEL s").to_cli_string(), "(integer) 1");
    assert_eq!(
        records(&f)[0],
        "set\tdefault\t5373\t000000000000000002f1536500000000"
    );
}

#[test]
fn stale_elements_are_invisible_to_every_read_and_count_as_new() {
    let f = Fixture::new(Format::Nemo);
    f.expect(&[
        ("HSET h f 1 g 2", "(integer) 2"),
        ("DEL h", "(integer) 1"),
        ("HSET h g 3", "(integer) 1"),
        ("HGETALL h", "1) \"g\"\n2) \"3\""),
        ("HLEN h", "(integer) 1"),
        ("HGET h f", "(nil)"),
        ("HEXISTS h f", "(integer) 0"),
        ("HSETNX h f x", "(integer) 1"),
        ("HLEN h", "(integer) 2"),
        ("HDEL h zz", "(integer) 0"),
        ("ZADD z 1 a 2 b", "(integer) 2"),
        ("DEL z", "(integer) 1"),
        ("ZADD z 3 c", "(integer) 1"),
        ("ZRANGE z 0 -1 WITHSCORES", "1) \"c\"\n2) \"3\""),
        ("ZRANGEBYSCORE z -inf +inf", "1) \"c\""),
        ("ZSCORE z a", "(nil)"),
        ("ZADD z 5 a", "(integer) 1"),
        ("ZCARD z", "(integer) 2"),
        ("ZRANK z a", "(integer) 1"),
        ("RPUSH l x y", "(integer) 2"),
        ("DEL l", "(integer) 1"),
        ("RPUSH l z", "(integer) 1"),
        ("LRANGE l 0 -1", "1) \"z\""),
        ("SADD s a", "(integer) 1"),
        ("PEXPIRE s 10", "(integer) 1"),
    ]);
    // The set expires; written again, it takes a new version.
    f.clock.advance_ms(1000);
    f.expect(&[
        ("SADD s b", "(integer) 1"),
        ("SMEMBERS s", "1) \"b\""),
        ("SCARD s", "(integer) 1"),
        ("SADD s a", "(integer) 1"),
        ("SCARD s", "(integer) 2"),
    ]);
}

#[test]
fn linked_lists_relink_and_never_reuse_sequence_numbers() {
    let f = Fixture::new(Format::Nemo);
    f.expect(&[
        ("RPUSH l a b c", "(integer) 3"),
        ("LPUSH l z", "(integer) 4"),
        ("LINSERT l BEFORE b x", "(integer) 5"),
        ("LREM l 1 a", "(integer) 1"),
        ("LRANGE l 0 -1", "1) \"z\"\n2) \"x\"\n3) \"b\"\n4) \"c\""),
    ]);
    // The records of list `l` (all stamped at T0): its meta record (length,
    // left and right end seqs, next seq), then its nodes (seq, prev, next,
    // value) in seq order.
    let list = |(len, left, right, next_seq): (u8, u8, u8, u8), nodes: &[(u8, u8, u8, &str)]| {
        let le = |n: u8| format!("{n:02x}00000000000000");
        let meta = format!(
            "list\tdefault\t4c6c\t{}{}{}{}00f1536500000000",
            le(len),
            le(left),
            le(right),
            le(next_seq)
        );
        let node = |&(seq, prev, next, value): &(u8, u8, u8, &str)| {
            let value: String = value.bytes().map(|b| format!("{b:02x}")).collect();
            format!(
                "list\tdefault\t6c016c{}\t{}{}{value}00f1536500000000",
                le(seq),
                le(prev),
                le(next)
            )
        };
        std::iter::once(meta)
            .chain(nodes.iter().map(node))
            .collect::<Vec<_>>()
    };
    // Seqs: a 1, b 2, c 3, z 4, x 5; a unlinked (z ⇄ x), next seq 6.
    let nodes = [
        (2, 5, 3, "b"),
        (3, 2, 0, "c"),
        (4, 0, 5, "z"),
        (5, 4, 2, "x"),
    ];
    assert_eq!(records(&f), list((4, 4, 3, 6), &nodes));
    // Pops unlink the end nodes; the next push takes seq 6, never 1.
    f.expect(&[
        ("LPOP l", "\"z\""),
        ("RPOP l", "\"c\""),
        ("RPUSH l d", "(integer) 3"),
        ("LINDEX l -1", "\"d\""),
        ("LMOVE l l LEFT RIGHT", "\"x\""),
        ("LRANGE l 0 -1", "1) \"b\"\n2) \"d\"\n3) \"x\""),
    ]);
    let nodes = [(2, 0, 6, "b"), (6, 2, 7, "d"), (7, 6, 0, "x")];
    assert_eq!(records(&f), list((3, 2, 7, 8), &nodes));
    // Popping the last element leaves nemo's empty ListMeta() (0, 0, 0, 1).
    f.expect(&[("LPOP l 3", "1) \"b\"\n2) \"d\"\n3) \"x\"")]);
    assert_eq!(records(&f), list((0, 0, 0, 1), &[]));
    assert_eq!(f.run("EXISTS l").to_cli_string(), "(integer) 0");
}

#[test]
fn compaction_drops_old_versions_expired_keys_and_past_empty_metadata() {
    let f = Fixture::new(Format::Nemo);
    f.expect(&[
        ("HSET h f 1 g 2", "(integer) 2"),
        ("DEL h", "(integer) 1"),
        ("HSET h k 3", "(integer) 1"),
        ("RPUSH l a b", "(integer) 2"),
        ("PEXPIRE l 10", "(integer) 1"),
        ("SADD s a", "(integer) 1"),
        ("DEL s", "(integer) 1"),
        ("SET str v EX 1", "OK"),
    ]);
    f.engine.compact().expect("compact");
    let dump = f.dump();
    // Old fields of h go (version T; DEL gave T+1, the next HSET T+2); the
    // empty set metadata stays during its second (version T+1 >= now); l
    // and str still live.
    assert!(!dump.contains("6801683d66\t"), "{dump}");
    assert!(!dump.contains("6801683d67\t"), "{dump}");
    assert!(dump.contains("6801683d6b\t"), "{dump}");
    assert!(dump.contains("set\tdefault\t5373\t"), "{dump}");
    // Two seconds later: l and str expired, the empty set metadata's
    // version is past. Only h and the separators remain.
    f.clock.advance_ms(2000);
    f.engine.compact().expect("compact");
    assert_eq!(
        records(&f),
        [
            "hash\tdefault\t4868\t010000000000000002f1536500000000",
            "hash\tdefault\t6801683d6b\t3302f1536500000000",
        ]
    );
    assert_eq!(f.run("HGETALL h").to_cli_string(), "1) \"k\"\n2) \"3\"");
}

#[test]
fn fixed_script_dump_snapshot() {
    let f = Fixture::new(Format::Nemo);
    f.run_ok(&[
        "SET foo bar",
        "SETEX ex 100 bar",
        "HSET h f v",
        "ZADD z 1.5 m -1.5 n 1.000001 a 1.000002 b",
        "RPUSH l a b c",
        "LPUSH l z",
        "LINSERT l BEFORE b x",
        "LREM l 1 a",
        "SADD s x",
        "PEXPIRE h 1500",
        "EXPIREAT foo 1700000100",
        "SET \"\\x00\\xff\" bin",
        "LPUSH e only",
        "LPOP e",
    ]);
    insta::assert_snapshot!(f.dump());
}
