//! Space really comes back: deleted, overwritten and expired collections
//! leave element records that a full compaction removes.

mod common;

use common::Fixture;
use redcodec::formats::Format;

#[test]
fn deleted_hash_fields_are_gone_after_full_compaction() {
    let f = Fixture::new(Format::Kvrocks);
    f.big_hash("big", 10_000);
    f.big_hash("kept", 10);
    assert_eq!(f.count_in("default"), 10_010);
    assert_eq!(f.run("DEL big").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("HLEN big").to_cli_string(), "(integer) 0");
    f.engine.compact().unwrap();
    assert_eq!(
        f.count_in("default"),
        10,
        "only the kept hash's fields remain"
    );
    f.expect(&[
        ("HLEN kept", "(integer) 10"),
        ("HGET kept field3", "\"value3\""),
    ]);
}

#[test]
fn hash_overwritten_by_a_string_loses_its_fields() {
    let f = Fixture::new(Format::Kvrocks);
    f.big_hash("h", 100);
    assert_eq!(f.run("SET h now-a-string").to_cli_string(), "OK");
    f.engine.compact().unwrap();
    assert_eq!(f.count_in("default"), 0);
    assert_eq!(f.run("GET h").to_cli_string(), "\"now-a-string\"");
}

#[test]
fn expired_collections_are_collected_after_the_grace_period() {
    let f = Fixture::new(Format::Kvrocks);
    f.big_hash("h", 100);
    assert!(!f.run("ZADD z 1 a 2 b").is_error());
    assert_eq!(f.run("PEXPIRE h 1000").to_cli_string(), "(integer) 1");
    assert_eq!(f.run("PEXPIRE z 1000").to_cli_string(), "(integer) 1");
    f.clock.advance_ms(2_000);
    assert_eq!(f.run("EXISTS h z").to_cli_string(), "(integer) 0");
    f.engine.compact().unwrap();
    assert_eq!(f.count_in("metadata"), 0, "expired metadata is dropped");
    // Element records whose metadata is gone go at the next compaction at
    // the latest (while their metadata exists, Kvrocks keeps them for a
    // 5-minute grace).
    f.engine.compact().unwrap();
    assert_eq!(f.count_in("default"), 0);
    assert_eq!(f.count_in("zset_score"), 0);
}
