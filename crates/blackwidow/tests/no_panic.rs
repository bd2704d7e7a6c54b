//! No decoder or comparator panics: every prefix of valid records, every
//! single-byte corruption of them, and deterministic random bytes go
//! through every decoding entry point and both comparators; errors are
//! fine, panics are not.

use redcodec_blackwidow::comparator::{lists_data_key_compare, zsets_score_key_compare};
use redcodec_blackwidow::BlackwidowCodec;
use redcodec_codec::{Codec, DataType, ListBounds, Meta, Place, SubId, SubKind};
use redcodec_testkit::{feed_decoders, feed_random, prefixes_and_flips_beside_another, XorShift};

const NOW_MS: u64 = 1_700_000_000_000;

fn metas(c: &BlackwidowCodec) -> Vec<Meta> {
    let mut out = Vec::new();
    for data_type in DataType::ALL {
        for version in [0x6553_F100u64, 0xFFFF_FFFF] {
            let mut m = c.new_meta(data_type, version);
            m.expire_ms = NOW_MS;
            m.size = 2;
            if data_type == DataType::String {
                m.value = b"bar".to_vec();
                m.size = 0;
            }
            if data_type == DataType::List {
                m.list = ListBounds::Array { head: 5, tail: 7 };
            }
            out.push(m);
        }
    }
    out
}

/// Feeds `bytes` to every decoder of `c`, and compares it with `other`.
fn feed(c: &BlackwidowCodec, meta: &Meta, bytes: &[u8], other: &[u8]) {
    let outside = [Place::new(5, 0), Place::new(0, 3)];
    feed_decoders(c, meta, bytes, &outside, &[0, NOW_MS, u64::MAX]);
    for (a, b) in [(bytes, other), (other, bytes), (bytes, bytes)] {
        let _ = lists_data_key_compare(a, b);
        let _ = zsets_score_key_compare(a, b);
    }
}

fn valid_records(c: &BlackwidowCodec) -> Vec<Vec<u8>> {
    redcodec_testkit::valid_records(c, &metas(c), &[(SubKind::ListItem, SubId::Index(6))])
}

#[test]
fn prefixes_and_corruptions_of_valid_records() {
    let c = BlackwidowCodec::default();
    let records = valid_records(&c);
    for m in metas(&c) {
        prefixes_and_flips_beside_another(&records, |bytes, other| feed(&c, &m, bytes, other));
    }
}

#[test]
fn random_bytes() {
    let c = BlackwidowCodec::default();
    // Often start with a plausible small key size.
    let shape = |round: usize, rng: &mut XorShift, bytes: &mut Vec<u8>| {
        if round.is_multiple_of(2) && bytes.len() >= 4 {
            bytes[..4].copy_from_slice(&((rng.next() % 8) as u32).to_le_bytes());
        }
    };
    feed_random(
        &c,
        0x2545_F491_4F6C_DD1D,
        48,
        shape,
        |meta, bytes, previous| feed(&c, meta, bytes, previous),
    );
}
