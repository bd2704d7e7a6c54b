//! The exact bytes the Kvrocks format writes, under a fixed clock: the
//! worked example of the spec (formats-spec/kvrocks.md) line by line, and a
//! reviewed snapshot of a longer script.

mod common;

use common::{Fixture, EVERY_TYPE_SCRIPT};
use redcodec::formats::Format;

#[test]
fn set_and_hset_write_the_bytes_of_the_worked_example() {
    let f = Fixture::new(Format::Kvrocks);
    assert_eq!(f.run("SET foo bar").to_cli_string(), "OK");
    assert_eq!(f.run("HSET h f v").to_cli_string(), "(integer) 1");
    let expected = [
        // default: the hash field `f` of `h`, version (1700000000000000 µs << 11).
        "db\tdefault\t0b5f5f6e616d65737061636500000001683051\
         20c0f200000066\t76",
        // metadata, in bytewise key order: `foo` (string, no expiry, "bar")…
        "db\tmetadata\t0b5f5f6e616d657370616365666f6f\t810000000000000000626172",
        // …then `h` (hash, no expiry, version, size 1).
        "db\tmetadata\t0b5f5f6e616d65737061636568\t\
         820000000000000000305120c0f20000000000000000000001",
    ];
    f.assert_dump(&expected);
}

/// Kvrocks' HSET leaves a field that already holds the value as it is:
/// nothing is written.
#[test]
fn hset_of_the_value_a_field_holds_writes_nothing() {
    let f = Fixture::new(Format::Kvrocks);
    f.run("HSET h f v");
    let written = f.engine.store().latest_sequences();
    assert_eq!(f.run("HSET h f v").to_cli_string(), "(integer) 0");
    assert_eq!(f.engine.store().latest_sequences(), written);
    assert_eq!(f.run("HSET h f w").to_cli_string(), "(integer) 0");
    assert_ne!(f.engine.store().latest_sequences(), written);
    assert_eq!(f.run("HGET h f").to_cli_string(), "\"w\"");
}

#[test]
fn fixed_script_dump_snapshot() {
    let f = Fixture::new(Format::Kvrocks);
    f.run_ok(EVERY_TYPE_SCRIPT);
    f.run_ok(&["SADD s x", "PEXPIRE foo 5000", "SET \"\\x00\\xff\" bin"]);
    insta::assert_snapshot!(f.dump());
}
