//! No decoder panics: every prefix of valid records, every single-byte
//! corruption of them, and deterministic random bytes go through every
//! decoding entry point; errors are fine, panics are not.

use redcodec_codec::{Codec, DataType, ListBounds, Meta, Place, SubId, SubKind};
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
use redcodec_testkit::{feed_decoders, prefixes_and_flips, XorShift};

fn codecs() -> Vec<KvrocksCodec> {
    [false, true]
        .into_iter()
        .flat_map(|cluster| {
            [b"__namespace".to_vec(), Vec::new(), vec![0xFF; 3]]
                .into_iter()
                .map(move |namespace| {
                    KvrocksCodec::new(KvrocksOptions { namespace, cluster }).unwrap()
                })
        })
        .collect()
}

fn metas(c: &KvrocksCodec) -> Vec<Meta> {
    let mut out = Vec::new();
    for data_type in DataType::ALL {
        for variant in [0, 1] {
            let mut m = c.new_meta(data_type, 0x3051_20C0_F200_0000);
            m.variant = variant;
            m.expire_ms = 1_700_000_000_000;
            m.size = 2;
            if data_type == DataType::String {
                m.value = b"bar".to_vec();
            }
            if data_type == DataType::List {
                m.list = ListBounds::Array { head: 5, tail: 7 };
            }
            out.push(m);
        }
    }
    out
}

/// Feeds `bytes` to every decoder of `c`.
fn feed(c: &KvrocksCodec, meta: &Meta, bytes: &[u8]) {
    feed_decoders(c, meta, bytes, &[], &[0, 1_700_000_000_000, u64::MAX]);
}

fn valid_records(c: &KvrocksCodec) -> Vec<Vec<u8>> {
    redcodec_testkit::valid_records(c, &metas(c), &[(SubKind::ListItem, SubId::Index(6))])
}

#[test]
fn prefixes_and_corruptions_of_valid_records() {
    for c in codecs() {
        let meta = c.new_meta(DataType::Hash, 0x3051_20C0_F200_0000);
        for record in valid_records(&c) {
            prefixes_and_flips(&record, |bytes| feed(&c, &meta, bytes));
        }
    }
}

#[test]
fn random_bytes() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let codecs = codecs();
    for round in 0..20_000 {
        let c = &codecs[round % codecs.len()];
        let mut bytes = rng.bytes(64);
        // Often start with a plausible flags byte or namespace prefix.
        match round % 4 {
            0 if !bytes.is_empty() => bytes[0] = 0x80 | (bytes[0] & 0x0F),
            1 => {
                let mut p = c.meta_ranges()[0].0.lower.clone();
                p.extend_from_slice(&bytes);
                bytes = p;
            }
            _ => {}
        }
        let meta = c.new_meta(DataType::ALL[round % 5], rng.next());
        feed(c, &meta, &bytes);
    }
}

#[test]
fn places_outside_the_layout_are_not_owners() {
    let c = KvrocksCodec::default();
    assert_eq!(
        c.gc_sub_owner(Place::new(3, 0), b"\x00\x00\x00\x00\x00", &[]),
        None
    );
    assert_eq!(
        c.decode_meta_key(Place::new(9, 9), b"\x0b__namespacek"),
        Ok(None)
    );
}
