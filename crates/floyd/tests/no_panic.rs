//! No decoder or comparator panics: every prefix of valid records, every
//! single-byte corruption of them, and deterministic random bytes go
//! through every decoding entry point and both comparators; errors are
//! fine, panics are not. The comparators are also checked to be a total
//! order on those bytes.

use std::cmp::Ordering;

use redcodec_codec::{Codec, DataType, ListBounds, Meta, Place, SubId, SubKind};
use redcodec_floyd::comparator::{lists_data_key_compare, zsets_score_key_compare};
use redcodec_floyd::FloydCodec;
use redcodec_testkit::{feed_decoders, feed_random, prefixes_and_flips_beside_another, XorShift};

const NOW_MS: u64 = 1_700_000_000_000;

fn metas(c: &FloydCodec) -> Vec<Meta> {
    let mut out = Vec::new();
    for data_type in DataType::ALL {
        for version in [NOW_MS, u64::MAX] {
            let mut m = c.new_meta(data_type, version);
            m.expire_ms = NOW_MS;
            m.size = 2;
            if data_type == DataType::String {
                m.value = b"b\x00r".to_vec();
                m.size = 0;
                m.version = NOW_MS;
            }
            if data_type == DataType::List {
                m.list = ListBounds::Array { head: 5, tail: 7 };
            }
            out.push(m);
        }
    }
    out
}

fn feed(c: &FloydCodec, meta: &Meta, bytes: &[u8], other: &[u8]) {
    let outside = [Place::new(5, 0), Place::new(0, 9)];
    feed_decoders(c, meta, bytes, &outside, &[0, NOW_MS, u64::MAX]);
    for cmp in [lists_data_key_compare, zsets_score_key_compare] {
        let ab = cmp(bytes, other);
        assert_eq!(cmp(other, bytes), ab.reverse());
        assert_eq!(cmp(bytes, bytes), Ordering::Equal);
    }
}

fn valid_records(c: &FloydCodec) -> Vec<Vec<u8>> {
    let metas = metas(c);
    let mut out =
        redcodec_testkit::valid_records(c, &metas, &[(SubKind::ListItem, SubId::Index(6))]);
    // A user key with the byte Pika escapes.
    for m in &metas {
        out.push(c.meta_record(b"k\x00", m.data_type).unwrap().key);
    }
    out
}

#[test]
fn prefixes_and_corruptions_of_valid_records() {
    let c = FloydCodec::default();
    let records = valid_records(&c);
    for m in metas(&c) {
        prefixes_and_flips_beside_another(&records, |bytes, other| feed(&c, &m, bytes, other));
    }
}

#[test]
fn random_bytes() {
    let c = FloydCodec::default();
    // Often look like a key: zero reserve, a short user key, 00 00.
    let shape = |round: usize, _: &mut XorShift, bytes: &mut Vec<u8>| {
        if round.is_multiple_of(2) && bytes.len() >= 12 {
            bytes[..8].fill(0);
            bytes[9] = 0;
            bytes[10] = 0;
        }
    };
    feed_random(
        &c,
        0x9E37_79B9_7F4A_7C15,
        64,
        shape,
        |meta, bytes, previous| feed(&c, meta, bytes, previous),
    );
}

/// Transitivity on a mixed sample of well-formed and malformed keys:
/// sorting with each comparator gives a sequence every pair agrees with.
#[test]
fn comparators_are_total_orders() {
    let c = FloydCodec::default();
    let mut sample = valid_records(&c);
    let mut rng = XorShift::new(7);
    for _ in 0..300 {
        sample.push(rng.bytes(40));
    }
    for cmp in [lists_data_key_compare, zsets_score_key_compare] {
        let mut sorted = sample.clone();
        sorted.sort_by(|a, b| cmp(a, b));
        for i in 0..sorted.len() {
            for j in i..sorted.len() {
                assert_ne!(cmp(&sorted[i], &sorted[j]), Ordering::Greater);
            }
        }
    }
}
