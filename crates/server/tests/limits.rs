//! Redis' limits on every format: arguments up to `proto-max-bulk-len`
//! work and one byte more is a protocol error that closes the connection
//! and changes nothing; strings commands make (SETRANGE, APPEND, SETBIT)
//! and LCS's transient table stay within the same limit, with Redis'
//! error texts; a format's own key limit is a clear error.
//!
//! The limit is lowered to its smallest value, 1 MB, with CONFIG SET, so
//! the tests move megabytes rather than half a gigabyte; the same checks
//! hold at the default 512 MB.

mod support;

use std::io::Write;

use redcodec_codec::Codec;
use redcodec_formats::{Format, FormatOptions};
use support::{bulk_len, Served};

const LIMIT: usize = 1024 * 1024;

#[test]
fn arguments_and_strings_stop_at_proto_max_bulk_len() {
    for &format in Format::ALL {
        let served = Served::start(format);
        let mut c = served.client();
        assert_eq!(
            c.call(&[b"CONFIG", b"SET", b"proto-max-bulk-len", b"1mb"]),
            "+OK\r\n"
        );

        // A value and a key of exactly the limit.
        let at_limit = vec![b'v'; LIMIT];
        let long_key = vec![b'k'; LIMIT];
        assert_eq!(c.call(&[b"SET", b"s", &at_limit]), "+OK\r\n", "{format}");
        assert_eq!(c.call(&[b"SET", &long_key, b"x"]), "+OK\r\n", "{format}");
        c.send(&[b"GET", b"s"]);
        c.expect(bulk_len(LIMIT), format!("${LIMIT}\r\n").as_bytes());
        assert_eq!(c.call(&[b"STRLEN", &long_key]), ":1\r\n", "{format}");
        // A hash with a key and a field of the limit, where the format
        // holds such keys.
        let reply = c.call(&[b"HSET", &long_key[..LIMIT - 1], &at_limit, b"x"]);
        let codec = format.codec(&FormatOptions::default()).unwrap();
        match codec.capabilities().collection_key_limit {
            None => assert_eq!(reply, ":1\r\n", "{format}"),
            Some(max) => assert_eq!(
                reply,
                format!("-ERR key is {} bytes; the {format} format stores at most {max} bytes in a hash key\r\n", LIMIT - 1)
            ),
        }

        // Strings a command would grow past the limit.
        let too_big = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
        assert_eq!(c.call(&[b"APPEND", b"s", b"x"]), too_big, "{format}");
        assert_eq!(
            c.call(&[b"SETRANGE", b"s", LIMIT.to_string().as_bytes(), b"x"]),
            too_big
        );
        assert_eq!(
            c.call(&[b"SETRANGE", b"s", (LIMIT - 1).to_string().as_bytes(), b"w"]),
            format!(":{LIMIT}\r\n")
        );
        let last_bit = (LIMIT * 8 - 1).to_string();
        assert_eq!(
            c.call(&[b"SETBIT", b"b", last_bit.as_bytes(), b"1"]),
            ":0\r\n",
            "{format}"
        );
        let past = (LIMIT * 8).to_string();
        let bad_offset = "-ERR bit offset is not an integer or out of range\r\n";
        assert_eq!(
            c.call(&[b"SETBIT", b"b", past.as_bytes(), b"1"]),
            bad_offset
        );
        assert_eq!(c.call(&[b"GETBIT", b"b", past.as_bytes()]), bad_offset);

        // LCS's table of (len + 1)² 4-byte cells: 513 × 513 × 4 > 1 MB.
        let a = vec![b'a'; 512];
        assert_eq!(c.call(&[b"SET", b"x", &a]), "+OK\r\n");
        assert_eq!(c.call(&[b"SET", b"y", &a]), "+OK\r\n");
        assert_eq!(
            c.call(&[b"LCS", b"x", b"y", b"LEN"]),
            "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"
        );
        assert_eq!(
            c.call(&[b"LCS", b"x", b"s", b"LEN"]),
            "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"
        );
        assert_eq!(c.call(&[b"SET", b"y", &a[..500]]), "+OK\r\n");
        assert_eq!(
            c.call(&[b"LCS", b"x", b"y", b"LEN"]),
            ":500\r\n",
            "{format}"
        );

        // One byte over: a protocol error, the connection closes, the
        // old value stays.
        let over = vec![b'o'; LIMIT + 1];
        // The server answers and closes once it reads the length, so the
        // rest of the request may meet a closed socket.
        let _ = c.0.write_all(&support::request(&[b"SET", b"s", &over]));
        assert_eq!(c.line(), "-ERR Protocol error: invalid bulk length\r\n");
        assert!(c.closed(), "{format}: the connection stays open");
        let mut c = served.client();
        assert_eq!(
            c.call(&[b"STRLEN", b"s"]),
            format!(":{LIMIT}\r\n"),
            "{format}"
        );

        // Back at the default, the same string grows.
        assert_eq!(
            c.call(&[b"CONFIG", b"SET", b"proto-max-bulk-len", b"512mb"]),
            "+OK\r\n"
        );
        assert_eq!(
            c.call(&[b"APPEND", b"s", b"x"]),
            format!(":{}\r\n", LIMIT + 1)
        );
    }
}

#[test]
fn lcs_refuses_a_table_over_the_default_limit() {
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    // (12,000 + 1)² × 4 bytes = 576 MB > 512 MB: refused, nothing allocated.
    let a = vec![b'a'; 12_000];
    assert_eq!(c.call(&[b"SET", b"x", &a]), "+OK\r\n");
    assert_eq!(
        c.call(&[b"LCS", b"x", b"x"]),
        "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"
    );
    assert_eq!(c.call(&[b"PING"]), "+PONG\r\n");
}

#[test]
fn a_key_longer_than_the_format_allows_is_a_clear_error() {
    let served = Served::start(Format::Nemo);
    let mut c = served.client();
    let key = vec![b'k'; 255];
    assert_eq!(
        c.call(&[b"HSET", &key, b"f", b"v"]),
        "-ERR key is 255 bytes; the nemo format stores at most 254 bytes in a hash key\r\n"
    );
    assert_eq!(c.call(&[b"HSET", &key[..254], b"f", b"v"]), ":1\r\n");
    assert_eq!(c.call(&[b"EXISTS", &key]), ":0\r\n");
    // Strings have no such limit in nemo.
    assert_eq!(c.call(&[b"SET", &key, b"v"]), "+OK\r\n");
}
