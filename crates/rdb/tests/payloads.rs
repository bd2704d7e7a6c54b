//! Exact bytes redis-server 7.0.15 DUMPed (captured with redis-cli), and
//! the errors malformed payloads give.

use redcodec_rdb::{
    decode_object, decode_payload, encode_payload, seal, DumpError, EncodeOptions, Value,
};

fn s(b: &str) -> Vec<u8> {
    b.as_bytes().to_vec()
}

fn check(value: Value, redis: &[u8]) {
    assert_eq!(
        encode_payload(&value, EncodeOptions::default()),
        redis,
        "{value:?}"
    );
    assert_eq!(decode_payload(redis).unwrap(), value);
}

/// Strings and the payloads redis-server DUMPs for them: raw, each
/// integer width, a non-canonical integer kept raw, and LZF.
const STRINGS: &[(&str, &[u8])] = &[
    ("hello", b"\x00\x05hello\n\x00cr\xdfve4 \n"),
    ("12", b"\x00\xc0\x0c\n\x00<*\xf8Q\\\x04\xbc\xd5"),
    ("-300", b"\x00\xc1\xd4\xfe\n\x00\xc6\xc4\x86#\xfe\xbe\xde."),
    ("100000", b"\x00\xc2\xa0\x86\x01\x00\n\x00\xf1$\x03Po/\xa6t"),
    ("12345678901", b"\x00\x0b12345678901\n\x000NR\xd7'\x17e\x10"),
    ("012", b"\x00\x03012\n\x00\x8fTc\xe9T~\xeb\x0c"),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        b"\x00\xc3\t(\x01aa\xe0\x1b\x00\x01aa\n\x00\xcf\t/\xaa\xae%\x83\x1d",
    ),
];

/// A string the `lzf` crate's compressor panicked on (it indexed past its
/// output buffer); redis-server 7.0.15 DUMPs it plain.
const LZF_PANIC: &str = "ivnlrleficabqvfsqqnvkksvkghcjcfdhkgqnlnjugefcvqerrudnmdomarfkkuhiqrammmubpftuvtifcodtknsatdmcojcjkgdlauqhectpgibdojajllnllpvrfpnuuftovnbvkmjorobfhndbtjsgpafrqvpammau";

#[test]
fn a_string_the_compressor_cannot_take_is_written_plain_as_redis_writes_it() {
    let mut redis = b"\x00\x40\xa5".to_vec();
    redis.extend_from_slice(LZF_PANIC.as_bytes());
    redis.extend_from_slice(b"\n\x00\x96\xda\x91\xfe\x30\xab\x6b\xe4");
    check(Value::String(s(LZF_PANIC)), &redis);
}

#[test]
fn strings_match_redis() {
    for (text, redis) in STRINGS {
        check(Value::String(s(text)), redis);
    }
}

#[test]
fn collections_match_redis() {
    check(
        Value::List(vec![s("a"), s("1"), s("-2"), s("bb"), s("70000")]),
        b"\x12\x01\x02\x18\x18\x00\x00\x00\x05\x00\x81a\x02\x01\x01\xdf\xfe\x02\x82bb\x03\xf2p\x11\x01\x04\xff\n\x00r\x9a\xeb\xca \xb1\xbc\xbb",
    );
    check(
        Value::Set(vec![s("1"), s("2"), s("3")]),
        b"\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00\n\x00\xa5\x02\\\xe2mnM\x1b",
    );
    check(
        Value::Set(vec![s("1"), s("100000")]),
        b"\x0b\x10\x04\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\xa0\x86\x01\x00\n\x00\xd7\xb5H\xc0\x07ye\x15",
    );
    check(
        Value::ZSet(vec![(s("c"), -3.0), (s("a"), 1.0), (s("b"), 2.5)]),
        b"\x11\x1a\x1a\x00\x00\x00\x06\x00\x81c\x02\xdf\xfd\x02\x81a\x02\x01\x01\x81b\x02\x832.5\x04\xff\n\x00\xa6\x8a\x1a\xb1\xa9\xf2\xdc\xc2",
    );
    check(
        Value::Hash(vec![(s("a"), s("1")), (s("b"), s("x"))]),
        b"\x10\x12\x12\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x81x\x02\xff\n\x00x\x07Lk\xd9\xd7\x05\x1f",
    );
}

#[test]
fn footers_are_checked() {
    let good = b"\x00\x05hello\n\x00cr\xdfve4 \n";
    let mut bad_crc = good.to_vec();
    *bad_crc.last_mut().unwrap() ^= 1;
    let mut v11 = good[..good.len() - 10].to_vec();
    v11.extend_from_slice(&11u16.to_le_bytes());
    v11.extend_from_slice(&good[good.len() - 8..]);
    for p in [&bad_crc[..], &v11, b"short", b""] {
        let e = decode_payload(p).unwrap_err();
        assert_eq!(e, DumpError::VersionOrChecksum);
        assert_eq!(
            e.reply_text(),
            "ERR DUMP payload version or checksum are wrong"
        );
    }
    // Versions up to 10 are accepted (older payloads).
    let mut v9 = b"\x00\x02hi".to_vec();
    v9.extend_from_slice(&9u16.to_le_bytes());
    let crc = crc::Crc::<u64>::new(&crc::CRC_64_REDIS).checksum(&v9);
    v9.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(decode_payload(&v9).unwrap(), Value::String(s("hi")));
}

fn bad(object: &[u8]) {
    let e = decode_payload(&seal(object.to_vec())).unwrap_err();
    assert!(matches!(e, DumpError::BadData(_)), "{object:x?}: {e:?}");
    assert_eq!(e.reply_text(), "ERR Bad data format");
}

#[test]
fn malformed_objects_are_bad_data() {
    bad(b"\x06"); // module type
    bad(b"\x0f\x00"); // stream
    bad(b"\x12\x00"); // empty list
    bad(b"\x02\x02\xc0\x01\xc0\x01"); // duplicate set member
    bad(b"\x04\x02\x01a\x01b\x01a\x01c"); // duplicate hash field
    bad(b"\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf8\x7f"); // NaN score
    bad(b"\x00\xc4"); // unknown string encoding
    bad(b"\x00\xc3\x01\x7f\x00"); // LZF claiming 127 bytes from 1
    bad(b"\x00\x82\x00"); // unknown length prefix
    bad(b"\x01\x81\xff\xff\xff\xff\xff\xff\xff\xff"); // a count past the input
    bad(b"\x0b\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x01\x00"); // intset out of order
    bad(b"\x11\x0b\x0b\x00\x00\x00\x01\x00\x81a\x02\xff\x00"); // odd zset listpack
    bad(b"\x10\x0b\x0b\x00\x00\x00\x02\x00\x81a\x03\xff"); // wrong back-length
    bad(b"\x12\x01\x03\x07\x07\x00\x00\x00\x00\x00\xff"); // container 3
}

/// A set object (type 2, each member a plain string) of `members`.
fn set_object(members: &[String]) -> Vec<u8> {
    let mut obj = vec![0x02, members.len() as u8];
    for m in members {
        obj.push(m.len() as u8);
        obj.extend_from_slice(m.as_bytes());
    }
    obj
}

#[test]
fn a_member_repeated_is_found_in_short_and_long_collections() {
    // Up to 16 members are compared with each other, more are hashed:
    // both ways, a repeat anywhere is bad data and distinct members load.
    for n in [2, 16, 17, 40] {
        let distinct: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        let value = decode_payload(&seal(set_object(&distinct))).unwrap();
        assert!(matches!(value, Value::Set(ref m) if m.len() == n), "{n}");
        for (first, again) in [(0, n - 1), (n - 2, n - 1), (0, 1)] {
            let mut repeated = distinct.clone();
            repeated[again] = repeated[first].clone();
            bad(&set_object(&repeated));
        }
    }
}

/// An object of type `tag` holding `body` as one string (a ziplist or
/// zipmap blob), after the bytes `between` (a quicklist's node count).
fn blob_object(tag: u8, between: &[u8], body: &[u8]) -> Vec<u8> {
    let mut obj = vec![tag];
    obj.extend_from_slice(between);
    obj.push(body.len() as u8);
    obj.extend_from_slice(body);
    obj
}

#[test]
fn old_encodings_decode() {
    // A ziplist list of "a" and 7 (an immediate integer).
    let zl = b"\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01a\x03\xf8\xff";
    let a7 = Value::List(vec![s("a"), s("7")]);
    let cases = [
        (blob_object(10, b"", zl), a7.clone()),
        // The same ziplist as one node of an RDB 7–9 quicklist.
        (blob_object(14, b"\x01", zl), a7),
        // A zipmap hash {f: v}.
        (
            blob_object(9, b"", b"\x01\x01f\x01\x00v\xff"),
            Value::Hash(vec![(s("f"), s("v"))]),
        ),
        // A text-score sorted set (type 3) and a plain list (type 1).
        (
            b"\x03\x01\x01a\x031.5".to_vec(),
            Value::ZSet(vec![(s("a"), 1.5)]),
        ),
        (b"\x01\x01\x01x".to_vec(), Value::List(vec![s("x")])),
    ];
    for (obj, value) in cases {
        assert_eq!(decode_object(&obj).unwrap(), value, "{obj:x?}");
    }
}
