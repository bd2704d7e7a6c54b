//! No decoder panics: every prefix of valid records, every single-byte
//! corruption of them, and deterministic random bytes go through every
//! decoding and garbage-collection entry point; errors are fine, panics are
//! not.

use redcodec_codec::{
    Codec, DataType, ListBounds, Meta, Place, SubId, SubIdRef, SubKind, SubOwner, SubValue,
    SubValueRef,
};
use redcodec_nemo::NemoCodec;
use redcodec_testkit::{feed_decoders, prefixes_and_flips, XorShift};

const T: u64 = 1_700_000_000;

fn metas(c: &NemoCodec) -> Vec<Meta> {
    DataType::ALL
        .into_iter()
        .map(|data_type| {
            let mut m = c.new_meta(data_type, T);
            m.expire_ms = (T + 100) * 1000;
            if data_type == DataType::String {
                m.value = b"bar".to_vec();
            } else {
                m.size = 2;
            }
            if data_type == DataType::List {
                m.list = ListBounds::Linked {
                    left: 1,
                    right: 2,
                    next_seq: 3,
                };
            }
            m
        })
        .collect()
}

/// Feeds `bytes` to every decoder of `c`, as keys and as values.
fn feed(c: &NemoCodec, meta: &Meta, bytes: &[u8]) {
    let outside = [Place::new(5, 0), Place::new(1, 1)];
    let nows = [0, T * 1000, u64::MAX];
    feed_decoders(c, meta, bytes, &outside, &nows);
    // nemo's own rules: a metadata family that holds elements too.
    for place in c.layout().places().chain(outside) {
        for now in nows {
            let _ = c.gc_meta(place, bytes, &[0; 16], now);
            let _ = c.gc_record(place, bytes, bytes, now);
        }
    }
    for version in [T, u64::from(u32::MAX)] {
        let owner = SubOwner {
            meta: c.meta_record(b"k", DataType::Hash).unwrap(),
            version,
        };
        let _ = c.gc_sub(&owner, Some(bytes), T * 1000);
    }
}

fn valid_records(c: &NemoCodec) -> Vec<Vec<u8>> {
    let metas = metas(c);
    let mut out = redcodec_testkit::valid_records(c, &metas, &[(SubKind::ListItem, SubId::Seq(6))]);
    for m in &metas {
        out.push(c.encode_sub_value(
            SubKind::ListItem.of(b"k", m),
            SubValueRef::Node {
                prev: 1,
                next: 0,
                value: b"v",
            },
        ));
    }
    for (record, value) in c.bootstrap_records() {
        out.push(record.key);
        out.push(value);
    }
    out
}

#[test]
fn prefixes_and_corruptions_of_valid_records() {
    let c = NemoCodec::default();
    for meta in metas(&c) {
        for record in valid_records(&c) {
            prefixes_and_flips(&record, |bytes| feed(&c, &meta, bytes));
        }
    }
}

#[test]
fn random_bytes() {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let mut next = move || rng.next();
    let c = NemoCodec::default();
    let tags = b"HhLlSsZzyk\0";
    for round in 0..20_000 {
        let len = (next() % 64) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Often start like a real key: a tag, then a plausible length byte.
        if round % 2 == 0 && bytes.len() >= 2 {
            bytes[0] = tags[(next() % tags.len() as u64) as usize];
            bytes[1] %= 8;
        }
        let mut meta = c.new_meta(DataType::ALL[round % 5], next());
        meta.expire_ms = next();
        meta.size = next();
        feed(&c, &meta, &bytes);
        // Encoders of out-of-range metadata return errors, not panics.
        let _ = c.encode_meta(&meta);
        for kind in SubKind::ALL {
            let _ = c.encode_sub_value(
                kind.of(b"k", &meta),
                SubValue::Score(f64::from_bits(next())).view(),
            );
        }
        let _ = c.sub_key(
            SubKind::ZSetScore.of(&bytes, &meta),
            SubIdRef::Scored {
                score: f64::from_bits(next()),
                member: &[],
            },
        );
    }
}
