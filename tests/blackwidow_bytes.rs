//! The exact bytes the blackwidow format writes, under a fixed clock
//! (T = 1700000000 s = 0x6553F100, LE `00 f1 53 65`): the worked examples of
//! `shared/reference/pika.md` part C (also formats-spec/blackwidow.md §11)
//! line by line, and a reviewed snapshot of a longer script.

mod common;

use common::{Fixture, PIKA_WORKED_EXAMPLE};
use redcodec::formats::Format;

#[test]
fn set_hset_zadd_rpush_write_the_bytes_of_part_c() {
    let f = Fixture::new(Format::Blackwidow);
    f.expect(PIKA_WORKED_EXAMPLE);
    // `<instance>\t<cf>\t<key hex>\t<value hex>`, instances in layout order
    // (strings, hashes, sets, lists, zsets), families in layout order.
    let expected = [
        // "bar" | timestamp 0
        "strings\tdefault\t666f6f\t62617200000000",
        // count 1 | version T | timestamp 0
        "hashes\tdefault\t68\t0100000000f1536500000000",
        // size 1 | "h" | version T | "f"  →  "v"
        "hashes\tdata_cf\t010000006800f1536566\t76",
        // count 1 | version T | ts 0 | left 2^63-1 | right 2^63+1
        "lists\tdefault\t6c\t\
         0100000000000000\
         00f15365\
         00000000\
         ffffffffffffff7f\
         0100000000000080",
        // size 1 | "l" | version T | index 2^63  →  "a"
        "lists\tdata_cf\t010000006c00f153650000000000000080\t61",
        // count 1 | version T | timestamp 0
        "zsets\tdefault\t7a\t0100000000f1536500000000",
        // size 1 | "z" | version T | "m"  →  1.5
        "zsets\tdata_cf\t010000007a00f153656d\t000000000000f83f",
        // size 1 | "z" | version T | 1.5 | "m"  →  empty
        "zsets\tscore_cf\t010000007a00f15365000000000000f83f6d\t",
    ];
    f.assert_dump(&expected);
}

#[test]
fn setex_stores_the_absolute_second() {
    let f = Fixture::new(Format::Blackwidow);
    assert_eq!(f.run("SETEX foo 100 bar").to_cli_string(), "OK");
    // "bar" | timestamp T+100 (part C).
    assert_eq!(f.dump(), "strings\tdefault\t666f6f\t62617264f15365\n");
}

#[test]
fn del_in_the_same_second_bumps_the_version() {
    let f = Fixture::hash_deleted(Format::Blackwidow);
    // The meta is reset (count 0, version T+1, ts 0); the old field stays
    // for compaction (formats-spec/blackwidow.md §11).
    let expected = [
        "hashes\tdefault\t68\t0000000001f1536500000000",
        "hashes\tdata_cf\t010000006800f1536566\t76",
    ];
    f.assert_dump(&expected);
    assert_eq!(f.run("HGET h f").to_cli_string(), "(nil)");
    assert_eq!(f.run("EXISTS h").to_cli_string(), "(integer) 0");
    // Re-creating the key takes the next version, T+2, and does not see
    // the old field.
    assert_eq!(f.run("HSET h g w").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HGETALL h").to_cli_string(), "1) \"g\"\n2) \"w\"");
    assert!(f
        .dump()
        .contains("hashes\tdefault\t68\t0100000002f1536500000000"));
    // Compaction drops the field of the old version.
    f.engine.compact().expect("compact");
    assert!(!f.dump().contains("010000006800f1536566"), "{}", f.dump());
}

#[test]
fn fixed_script_dump_snapshot() {
    let f = Fixture::pika_snapshot(Format::Blackwidow);
    insta::assert_snapshot!(f.dump());
}
