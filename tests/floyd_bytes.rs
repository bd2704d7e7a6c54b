//! The exact bytes the floyd format writes under a fixed clock
//! (T = 1700000000000 ms, version LE `0068e5cf8b010000`, stored time
//! `0068e5cf8b010080`): the worked examples of formats-spec/floyd.md §9
//! line by line, and a reviewed snapshot of a longer script.

mod common;

use common::{Fixture, PIKA_WORKED_EXAMPLE};
use redcodec::formats::Format;

const Z8: &str = "0000000000000000";
const Z16: &str = "00000000000000000000000000000000";
const V: &str = "0068e5cf8b010000";
const C: &str = "0068e5cf8b010080";

#[test]
fn set_hset_zadd_rpush_write_the_bytes_of_the_spec() {
    let f = Fixture::new(Format::Floyd);
    f.expect(PIKA_WORKED_EXAMPLE);
    // Instance 1 holds foo, l and z; instance 2 holds h (§1.1). Families
    // in layout order, pairs in each family's order.
    let expected = [
        // type string | "bar" | reserve | ctime T | no expiry
        format!("1\tdefault\t{Z8}666f6f0000{Z16}\t00626172{Z16}{C}{Z8}"),
        // list | count 1 | version | left 2^63-1 | gap | right 2^63+1 | gap | reserve | ctime | etime
        format!(
            "1\tdefault\t{Z8}6c0000{Z16}\t030100000000000000{V}ffffffffffffff7f{Z8}0100000000000080{Z8}{Z16}{C}{Z8}"
        ),
        // zset | count 1 | version | reserve | ctime | etime
        format!("1\tdefault\t{Z8}7a0000{Z16}\t0401000000{V}{Z16}{C}{Z8}"),
        // index 2^63 → "a" | reserve | ctime
        format!("1\tlist_data_cf\t{Z8}6c0000{V}0000000000000080{Z16}\t61{Z16}{C}"),
        // member "m" → 1.5 | reserve | ctime
        format!("1\tzset_data_cf\t{Z8}7a0000{V}6d{Z16}\t000000000000f83f{Z16}{C}"),
        // 1.5 | "m" → reserve | ctime
        format!("1\tzset_score_cf\t{Z8}7a0000{V}000000000000f83f6d{Z16}\t{Z16}{C}"),
        // hash | count 1 | version | reserve | ctime | etime
        format!("2\tdefault\t{Z8}680000{Z16}\t0101000000{V}{Z16}{C}{Z8}"),
        // field "f" → "v" | reserve | ctime
        format!("2\thash_data_cf\t{Z8}680000{V}66{Z16}\t76{Z16}{C}"),
    ];
    f.assert_dump(&expected);
}

#[test]
fn expiry_is_stored_in_ms_with_the_flag() {
    let f = Fixture::new(Format::Floyd);
    assert_eq!(f.run("SET foo bar PX 1500").to_cli_string(), "OK");
    // etime T+1500 ms = 0x18bcfe56ddc | 1<<63.
    let dump = f.dump();
    assert!(
        dump.ends_with(&format!("\t00626172{Z16}{C}dc6de5cf8b010080\n")),
        "{dump}"
    );
    assert_eq!(f.run("PTTL foo").to_cli_string(), "(integer) 1500");
}

#[test]
fn del_in_the_same_ms_bumps_the_version_and_gc_collects() {
    let f = Fixture::hash_deleted(Format::Floyd);
    // DEL writes the metadata as Pika's InitialMetaValue does: count 0,
    // version T+1, ctime 0.
    let expected = [
        format!(
            "2\tdefault\t{Z8}680000{Z16}\t0100000000{}{Z16}{Z8}{Z8}",
            "0168e5cf8b010000"
        ),
        format!("2\thash_data_cf\t{Z8}680000{V}66{Z16}\t76{Z16}{C}"),
    ];
    f.assert_dump(&expected);
    assert_eq!(f.run("HGET h f").to_cli_string(), "(nil)");
    assert_eq!(f.run("HSET h g w").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HGETALL h").to_cli_string(), "1) \"g\"\n2) \"w\"");
    // The hash written over the emptied record re-uses it: version T+2,
    // ctime still 0.
    let meta = format!(
        "2\tdefault\t{Z8}680000{Z16}\t0101000000{}{Z16}{Z8}{Z8}",
        "0268e5cf8b010000"
    );
    assert!(f.dump().contains(&meta), "{}", f.dump());
    f.engine.compact().expect("compact");
    assert!(!f.dump().contains(&format!("{V}66")), "{}", f.dump());
}

/// A string replacing a hash, then deleted, leaves no trace of the hash's
/// version; the hash created again in the same millisecond takes the next
/// version, since the old one still has a field (version_may_repeat).
#[test]
fn a_repeated_version_is_skipped() {
    let f = Fixture::new(Format::Floyd);
    f.run("HSET foo a 1");
    f.run("SET foo bar");
    f.run("DEL foo");
    assert_eq!(f.run("HSET foo c 3").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HGETALL foo").to_cli_string(), "1) \"c\"\n2) \"3\"");
    let dump = f.dump();
    // foo is in instance 1: metadata at version T+1, the old field at T.
    assert!(
        dump.contains(&format!(
            "1\tdefault\t{Z8}666f6f0000{Z16}\t0101000000{}",
            "0168e5cf8b010000"
        )),
        "{dump}"
    );
    assert!(
        dump.contains(&format!("1\thash_data_cf\t{Z8}666f6f0000{V}61{Z16}")),
        "{dump}"
    );
}

#[test]
fn one_type_per_key() {
    let f = Fixture::new(Format::Floyd);
    f.run("HSET k f v");
    assert_eq!(
        f.run("SADD k m").to_cli_string(),
        "(error) WRONGTYPE Operation against a key holding the wrong kind of value"
    );
    assert_eq!(f.run("SET k s").to_cli_string(), "OK");
    assert_eq!(f.run("TYPE k").to_cli_string(), "string");
    // One record under the key: the string replaced the hash's metadata.
    assert_eq!(
        f.dump()
            .lines()
            .filter(|l| l.contains("\tdefault\t"))
            .count(),
        1
    );
}

#[test]
fn fixed_script_dump_snapshot() {
    let f = Fixture::pika_snapshot(Format::Floyd);
    insta::assert_snapshot!(f.dump());
}
