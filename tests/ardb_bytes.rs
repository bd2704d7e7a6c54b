//! The exact bytes the Ardb format writes, under a fixed clock: the worked
//! examples of `shared/reference/ardb.md` §9 (formats-spec/ardb.md §13)
//! line by line, and a reviewed snapshot of a longer script.

mod common;

use common::{Fixture, EVERY_TYPE_SCRIPT};
use redcodec::formats::Format;

#[test]
fn set_hset_rpush_zadd_write_the_bytes_of_the_worked_example() {
    let f = Fixture::new(Format::Ardb);
    f.expect(&[
        ("SET foo bar", "OK"),
        ("HSET h f v", "(integer) 1"),
        ("RPUSH l a", "(integer) 1"),
        ("ZADD z 1.5 m", "(integer) 1"),
    ]);
    // `<instance>\t<column family>\t<key hex>\t<value hex>`: every record
    // in the family of namespace "0", in `ardb.comparator` order (user key,
    // then type); `default` holds nothing.
    let expected = [
        // len 3 "foo" META 00 → string, fmt 0, ttl 0, 1 elem, "bar"
        "rocksdb\t0\t03666f6f0100\t020000010403626172",
        // len 1 "h" META → hash, fmt 0, ttl 0, size 1 (zigzag 02), 0 elems
        "rocksdb\t0\t01680100\t0300000200",
        // "h" HASH_FIELD [ "f" ] → 04 01 [ "v" ]
        "rocksdb\t0\t01680401040166\t0401040176",
        // "l" META → list, ttl 0, size 1, sequential, 2 elems: min 0, max 0
        "rocksdb\t0\t016c0100\t05000002010201000100",
        // "l" LIST_ELEMENT [ int 0 ] → 06 01 [ "a" ]
        "rocksdb\t0\t016c06010100\t0601040161",
        // "z" META → zset, ttl 0, size 1, 2 elems: min "m", max "m"
        "rocksdb\t0\t017a0100\t090000020204016d04016d",
        // "z" ZSET_SORT [ 1.5, "m" ] → 0a 00
        "rocksdb\t0\t017a0a020280808080808080f87f04016d\t0a00",
        // "z" ZSET_SCORE [ "m" ] → 0b 01 [ 1.5 ]
        "rocksdb\t0\t017a0b0104016d\t0b010280808080808080f87f",
    ];
    f.assert_dump(&expected);
}

#[test]
fn values_and_members_are_int_encoded_when_canonical() {
    let f = Fixture::new(Format::Ardb);
    f.run_ok(&["SET n 123", "SADD s 5", "HSET h 7 -8", "RPUSH l 09"]);
    let dump = f.dump();
    for line in [
        // SET n 123: value 01 f6 01.
        "rocksdb\t0\t016e0100\t0200000101f601",
        // SADD s 5: member key 01 73 08 01 01 0a, value 08 00; meta with
        // min = max = int 5.
        "rocksdb\t0\t01730100\t0700000202010a010a",
        "rocksdb\t0\t01730801010a\t0800",
        // HSET h 7 -8: field int 7 (0e), value int -8 (0f).
        "rocksdb\t0\t01680401010e\t0401010f",
        // RPUSH l 09: not canonical, a string.
        "rocksdb\t0\t016c06010100\t060104023039",
    ] {
        assert!(
            dump.lines().any(|l| l.starts_with(line)),
            "no line starting {line:?} in:\n{dump}"
        );
    }
    f.expect(&[("GET n", "\"123\""), ("HGET h 7", "\"-8\"")]);
}

#[test]
fn ttl_is_absolute_milliseconds() {
    let f = Fixture::new(Format::Ardb);
    // PX 1000 at T0 = 1700000000000 ms: ttl T0 + 1000 as a zigzag varint.
    assert_eq!(f.run("SET foo bar PX 1000").to_cli_string(), "OK");
    assert_eq!(
        f.dump(),
        "rocksdb\t0\t03666f6f0100\t0200d0afabfef962010403626172\n"
    );
    // The reference's example, ttl 1700000000000 (80 a0 ab fe f9 62), set
    // one second before that instant.
    f.clock.set_ms(1_699_999_999_000);
    assert_eq!(
        f.run("PEXPIREAT foo 1700000000000").to_cli_string(),
        "(integer) 1"
    );
    assert_eq!(
        f.dump(),
        "rocksdb\t0\t03666f6f0100\t020080a0abfef962010403626172\n"
    );
}

#[test]
fn fixed_script_dump_snapshot() {
    let f = Fixture::new(Format::Ardb);
    f.run_ok(EVERY_TYPE_SCRIPT);
    f.run_ok(&[
        "LINSERT l BEFORE a y",
        "SADD s x 5 -3",
        "PEXPIRE foo 5000",
        "PEXPIRE h 1500",
        "SET \"\\x00\\xff\" bin",
        "LPUSH e only",
        "LPOP e",
        "SET aa 1",
    ]);
    insta::assert_snapshot!(f.dump());
}
