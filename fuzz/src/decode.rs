//! Arbitrary bytes through every decoder of a format.
//!
//! Input: one selector byte, then the record bytes. The selector picks the
//! codec's options (Kvrocks: namespace and cluster mode) and the metadata
//! that element keys and values are decoded under (type, version, list
//! bounds); the bytes go to every decoding entry point at once, as a key
//! and as a value, at three clocks.

use std::sync::OnceLock;

use redcodec_codec::{Codec, DataType, ListBounds, Meta, Place, SparseIndex, SubKind};
use redcodec_testkit::feed_decoders;

use redcodec_ardb::ArdbCodec;
use redcodec_blackwidow::BlackwidowCodec;
use redcodec_floyd::FloydCodec;
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
use redcodec_nemo::NemoCodec;

/// The clocks (unix ms) every garbage-collection rule is asked at.
pub const NOWS: [u64; 3] = [0, 1_700_000_000_000, u64::MAX];

/// Decodes `bytes` as metadata of every type; wherever it decodes, the
/// metadata re-encoded must decode to the same metadata and re-encode to
/// the same bytes (a record read and written back is stable). An encoder
/// may refuse decoded metadata (a value the format's writer never makes):
/// that is an error, not a panic.
pub fn meta_fixpoint<C: Codec>(c: &C, bytes: &[u8]) {
    for t in DataType::ALL {
        let Ok(meta) = c.decode_meta(t, bytes) else {
            continue;
        };
        let Ok(again) = c.encode_meta(&meta) else {
            continue;
        };
        let decoded = c.decode_meta(t, &again).unwrap_or_else(|e| {
            panic!(
                "{}: re-encoded {meta:?} as {again:02x?}, which fails: {e}",
                c.name()
            )
        });
        // Debug text: compares floats by what they print (NaN == NaN).
        assert_eq!(
            format!("{decoded:?}"),
            format!("{meta:?}"),
            "{}: {bytes:02x?} re-encoded as {again:02x?}",
            c.name()
        );
        assert_eq!(c.encode_meta(&decoded).ok(), Some(again), "{}", c.name());
    }
}

fn kvrocks_codecs() -> &'static [KvrocksCodec] {
    static CODECS: OnceLock<Vec<KvrocksCodec>> = OnceLock::new();
    CODECS.get_or_init(|| {
        let mut out = Vec::new();
        for cluster in [false, true] {
            for namespace in [b"__namespace".to_vec(), Vec::new(), vec![0xFF; 3]] {
                out.push(KvrocksCodec::new(KvrocksOptions { namespace, cluster }).unwrap());
            }
        }
        out
    })
}

/// Metadata for element decoders: each type, with `variant` and the list
/// bounds of `list`.
fn meta_of<C: Codec>(c: &C, sel: usize, version: u64, variants: u8, list: ListBounds) -> Meta {
    let t = DataType::ALL[sel % 5];
    let mut m = c.new_meta(t, version);
    m.variant = ((sel / 5) % usize::from(variants)) as u8;
    m.expire_ms = 1_700_000_000_000;
    m.size = 2;
    match t {
        DataType::String => {
            m.value = b"bar".to_vec();
            m.size = 0;
        }
        DataType::List => m.list = list,
        _ => {}
    }
    m
}

/// The Kvrocks decoders (selector: `sel % 6` codec, `sel / 6` metadata).
pub fn kvrocks(data: &[u8]) {
    use redcodec_kvrocks::{gc, keys, meta};
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let sel = usize::from(sel);
    let codecs = kvrocks_codecs();
    let c = &codecs[sel % codecs.len()];
    let list = ListBounds::Array { head: 5, tail: 7 };
    let m = meta_of(c, sel / codecs.len(), 0x3051_20C0_F200_0000, 2, list);
    feed_decoders(c, &m, bytes, &[Place::new(3, 0), Place::new(9, 9)], &NOWS);
    meta_fixpoint(c, bytes);
    let _ = meta::Header::decode(bytes);
    let _ = meta::decode(bytes);
    let _ = keys::KeyScheme::shape_of(bytes);
    let _ = c.keys().user_key_of(bytes);
    for cluster in [false, true] {
        if let Ok(k) = keys::InternalKey::parse(bytes, cluster) {
            let _ = k.owner_ns_key(cluster);
        }
        for place in c.layout().places() {
            let _ = gc::subkey_owner(place, bytes, cluster);
        }
    }
    for now in NOWS {
        let _ = gc::metadata_filter(bytes, now);
        let _ = gc::subkey_filter(m.version, Some(bytes), now);
    }
}

/// The blackwidow decoders (selector: metadata).
pub fn blackwidow(data: &[u8]) {
    use redcodec_blackwidow::{elements, gc, keys, meta};
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let sel = usize::from(sel);
    let c = BlackwidowCodec::default();
    let version = [0x6553_F100, 0xFFFF_FFFF, 0][(sel / 5) % 3];
    let list = ListBounds::Array { head: 5, tail: 7 };
    let m = meta_of(&c, sel, version, 1, list);
    let outside = [Place::new(5, 0), Place::new(0, 3)];
    feed_decoders(&c, &m, bytes, &outside, &NOWS);
    meta_fixpoint(&c, bytes);
    let _ = meta::StringsValue::parse(bytes);
    let _ = meta::ListsMetaValue::parse(bytes);
    for t in DataType::ALL {
        let _ = meta::BaseMetaValue::parse(meta::record_name(t), bytes);
        let _ = meta::decode(t, bytes);
    }
    if let Ok(k) = keys::DataKey::parse(bytes) {
        for kind in SubKind::ALL {
            let _ = elements::decode_sub(kind, k.rest);
        }
    }
    for kind in SubKind::ALL {
        let _ = elements::decode_value(kind, bytes);
    }
    for now_s in [0, 1_700_000_000, i32::MAX, i32::MIN] {
        let _ = gc::strings_filter(bytes, now_s);
        for place in c.layout().places().chain(outside) {
            let _ = gc::meta_filter(place, bytes, now_s);
            let _ = gc::filter_meta_place(place, bytes, now_s);
            if let Some(owner) = gc::data_owner(place, bytes) {
                let _ = gc::data_filter(&owner, Some(bytes), now_s);
                let _ = gc::data_filter(&owner, None, now_s);
            }
        }
    }
}

/// The nemo decoders (selector: metadata).
pub fn nemo(data: &[u8]) {
    use redcodec_nemo::{elements, gc, keys, suffix};
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let sel = usize::from(sel);
    let c = NemoCodec::default();
    let version = [1_700_000_000, u64::from(u32::MAX), 0][(sel / 5) % 3];
    let list = ListBounds::Linked {
        left: 1,
        right: 2,
        next_seq: 3,
    };
    let m = meta_of(&c, sel, version, 1, list);
    let outside = [Place::new(5, 0), Place::new(1, 1)];
    feed_decoders(&c, &m, bytes, &outside, &NOWS);
    meta_fixpoint(&c, bytes);
    for place in c.layout().places().chain(outside) {
        let _ = keys::user_key_of_meta(place, bytes);
        for now in NOWS {
            let _ = c.gc_record(place, bytes, bytes, now);
            let _ = gc::judge(place, bytes, &[0; 16], now);
        }
    }
    let _ = keys::user_key_of_element(bytes);
    let _ = suffix::Suffix::peek(bytes);
    for kind in SubKind::ALL {
        let _ = keys::strip_element_prefix(elements::tag_of(kind), b"k", bytes);
        let _ = elements::decode_id(kind, b"k", bytes);
        let _ = elements::decode_value(kind, bytes);
    }
    let _ = elements::is_current(&m, bytes);
    for now in NOWS {
        let _ = gc::element(version, Some(bytes), now);
    }
}

/// The Ardb decoders (selector: metadata).
pub fn ardb(data: &[u8]) {
    use redcodec_ardb::{elements, gc, keys, meta, primitives};
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let sel = usize::from(sel);
    let c = ArdbCodec::default();
    let list = ListBounds::Sparse {
        min: SparseIndex::Int(-5),
        max: SparseIndex::Float(7.5),
        sequential: sel % 2 == 0,
    };
    let m = meta_of(&c, sel, 0, 3, list);
    feed_decoders(&c, &m, bytes, &[], &NOWS);
    meta_fixpoint(&c, bytes);
    let _ = meta::Header::decode(bytes);
    let _ = meta::decode(bytes);
    if let Ok(k) = keys::ParsedKey::parse(bytes) {
        for d in k.elements() {
            let _ = d.to_value_bytes();
            let _ = meta::data_index(d);
        }
    }
    for kind in SubKind::ALL {
        let _ = elements::decode_sub_key(kind, b"k", bytes);
        let _ = elements::decode_value(kind, bytes);
    }
    let _ = gc::compaction_filter(bytes);
    for now in NOWS {
        let _ = gc::expired_meta_key(bytes, bytes, now);
        let _ = c.gc_expired_key(redcodec_ardb::layout::NAMESPACE, bytes, bytes, now);
    }
    let _ = primitives::string2ll(bytes);
    let _ = primitives::float_text(bytes);
    let mut r = redcodec_codec::Reader::new("fuzz", bytes);
    while let Ok(d) = primitives::Data::decode(&mut r) {
        let _ = d.to_value_bytes();
    }
    let _ = c.key_range(bytes);
}

/// The floyd decoders (selector: `sel % 3` instance count, `sel / 3`
/// metadata), through the codec.
pub fn floyd(data: &[u8]) {
    use redcodec_floyd::FloydOptions;
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let sel = usize::from(sel);
    let c = FloydCodec::new(FloydOptions {
        instances: [1, 3, 16][sel % 3],
        ..FloydOptions::default()
    })
    .expect("valid floyd options");
    let version = [1_700_000_000_000, u64::MAX, 0][(sel / 15) % 3];
    let list = ListBounds::Array {
        head: (1 << 63) - 1,
        tail: 1 << 63,
    };
    let m = meta_of(&c, sel / 3, version, 1, list);
    let outside = [Place::new(16, 0), Place::new(0, 7)];
    feed_decoders(&c, &m, bytes, &outside, &NOWS);
    meta_fixpoint(&c, bytes);
}
