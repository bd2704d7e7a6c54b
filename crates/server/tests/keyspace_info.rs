//! INFO keyspace counts the live keys, those with an expiry and the
//! average time they have left, on every format.

mod support;

use redcodec_formats::Format;
use support::Served;

/// The `db…:` line of INFO keyspace, if any.
fn keyspace_line(c: &mut support::Client) -> Option<String> {
    c.send(&[b"INFO", b"keyspace"]);
    let info = String::from_utf8(c.bulk()).unwrap();
    assert!(info.starts_with("# Keyspace\r\n"), "{info}");
    info.lines()
        .find(|l| l.starts_with("db"))
        .map(str::to_string)
}

#[test]
fn info_keyspace_counts_keys_and_expiries() {
    for &format in Format::ALL {
        let served = Served::start(format);
        let mut c = served.client();
        assert_eq!(keyspace_line(&mut c), None, "{format}: an empty keyspace");
        assert_eq!(c.call(&[b"SET", b"plain", b"v"]), "+OK\r\n");
        assert_eq!(c.call(&[b"SET", b"s", b"v", b"EX", b"100000"]), "+OK\r\n");
        assert_eq!(c.call(&[b"HSET", b"h", b"f", b"v"]), ":1\r\n");
        assert_eq!(c.call(&[b"PEXPIRE", b"h", b"50000000"]), ":1\r\n");
        // Gone already: neither a key nor an expiry.
        assert_eq!(c.call(&[b"SET", b"gone", b"v", b"PX", b"1"]), "+OK\r\n");
        assert_eq!(c.call(&[b"PEXPIREAT", b"gone", b"1"]), ":1\r\n");

        let line = keyspace_line(&mut c).unwrap();
        let rest = line
            .strip_prefix("db0:keys=3,expires=2,avg_ttl=")
            .unwrap_or_else(|| panic!("{format}: {line}"));
        let avg: u64 = rest.parse().unwrap();
        // (100,000,000 + 50,000,000) / 2 ms less the time passed, plus
        // up to a second where the format keeps expiries in seconds.
        assert!(avg > 0 && avg <= 75_001_000, "{format}: {line}");

        assert_eq!(c.call(&[b"PERSIST", b"s"]), ":1\r\n");
        assert_eq!(c.call(&[b"PERSIST", b"h"]), ":1\r\n");
        assert_eq!(
            keyspace_line(&mut c).unwrap(),
            "db0:keys=3,expires=0,avg_ttl=0",
            "{format}"
        );
    }
}
