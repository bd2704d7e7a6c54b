//! Structured records through a codec's encoders and back.
//!
//! Input: an [`arbitrary`] [`Case`] — a user key, metadata of one type, and
//! elements (id and value of each kind). For each:
//!
//! - metadata the encoder accepts decodes to metadata of the same type
//!   (the same string value), which re-encodes to the same bytes;
//! - the metadata key decodes to the user key, and lies in the range
//!   [`Codec::meta_ranges`] gives for its place (under the place's
//!   comparator);
//! - an element key decodes to its id (one that re-encodes to the same key:
//!   a lossy score index rounds) and lies in [`Codec::sub_range`]; an
//!   element's value decodes to the value it was made from, and belongs to
//!   the key's current version;
//! - every key lies in a range of [`Codec::flush_ranges`], and in
//!   [`Codec::key_range`] where the format has one;
//! - the garbage collector keeps the element of a live key that holds
//!   elements, and finds its owner's metadata record.
//!
//! A key whose metadata key starts with 1024 `0xFF` bytes is left out: it
//! lies beyond the whole-family ranges of blackwidow and nemo by design
//! (formats-spec/blackwidow.md §2.4).

use std::cmp::Ordering;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use redcodec_codec::{
    Codec, DataType, GcDecision, KeyRange, ListBounds, ListModel, Meta, Place, SparseIndex, SubId,
    SubKind, SubValue,
};

/// One fuzzed key.
#[derive(Arbitrary, Debug)]
pub struct Case {
    key: Vec<u8>,
    data_type: u8,
    version: u64,
    expire_ms: u64,
    size: u64,
    list: (u64, u64, bool),
    value: Vec<u8>,
    variant: u8,
    bounds: Option<(Vec<u8>, Vec<u8>)>,
    elements: Vec<Element>,
}

/// One fuzzed element: its kind picks which of the fields are used.
#[derive(Arbitrary, Debug)]
pub struct Element {
    kind: u8,
    name: Vec<u8>,
    score: f64,
    position: u64,
    fraction: bool,
    links: (i64, i64),
    value: Vec<u8>,
}

fn kind_of(sel: u8) -> SubKind {
    SubKind::ALL[usize::from(sel) % SubKind::ALL.len()]
}

/// Whether `key` lies in `range` under the comparator of its place.
fn in_range<C: Codec>(c: &C, range: &KeyRange, place: Place, key: &[u8]) -> bool {
    let cmp = c
        .layout()
        .cf(place)
        .comparator
        .map_or(<[u8]>::cmp as fn(&[u8], &[u8]) -> Ordering, |s| s.compare);
    range.place == place
        && cmp(&range.lower, key) != Ordering::Greater
        && cmp(key, &range.upper) == Ordering::Less
}

/// The metadata of `case` in the list model of `c`.
fn meta_of<C: Codec>(c: &C, case: &Case) -> Meta {
    let data_type = DataType::ALL[usize::from(case.data_type) % 5];
    let mut m = c.new_meta(data_type, case.version);
    m.expire_ms = case.expire_ms;
    m.variant = case.variant;
    m.bounds = case.bounds.clone();
    if data_type == DataType::String {
        m.value = case.value.clone();
    } else {
        m.size = case.size;
    }
    if data_type == DataType::List {
        let (a, b, flag) = case.list;
        m.list = match c.capabilities().list_model {
            ListModel::Array { .. } => ListBounds::Array { head: a, tail: b },
            ListModel::Linked => ListBounds::Linked {
                left: a as i64,
                right: b as i64,
                next_seq: (a as i64).wrapping_add(b as i64),
            },
            ListModel::Sparse => ListBounds::Sparse {
                min: SparseIndex::Int(a as i64),
                max: if flag {
                    SparseIndex::Int(b as i64)
                } else {
                    SparseIndex::Float(f64::from_bits(b))
                },
                sequential: flag,
            },
        };
    }
    m
}

/// The id and value of `e` for its kind, in the model of `c`; `None` for
/// what the engine never writes (a NaN score, a list position the model
/// cannot hold).
fn element_of<C: Codec>(c: &C, e: &Element) -> Option<(SubKind, SubId, SubValue)> {
    let kind = kind_of(e.kind);
    if e.score.is_nan() && matches!(kind, SubKind::ZSetMember | SubKind::ZSetScore) {
        return None;
    }
    let linked = c.capabilities().list_model == ListModel::Linked;
    let (id, value) = match kind {
        SubKind::HashField => (
            SubId::Name(e.name.clone()),
            SubValue::Bytes(e.value.clone()),
        ),
        SubKind::SetMember => (SubId::Name(e.name.clone()), SubValue::Empty),
        SubKind::ZSetMember => (SubId::Name(e.name.clone()), SubValue::Score(e.score)),
        SubKind::ZSetScore => (
            SubId::Scored {
                score: e.score,
                member: e.name.clone(),
            },
            SubValue::Empty,
        ),
        SubKind::ListItem => {
            let id = match c.capabilities().list_model {
                ListModel::Array { .. } => SubId::Index(e.position),
                ListModel::Linked => SubId::Seq(e.position as i64),
                ListModel::Sparse if e.fraction => {
                    let f = f64::from_bits(e.position);
                    if !f.is_finite() {
                        return None;
                    }
                    SubId::Sparse(SparseIndex::Float(f))
                }
                ListModel::Sparse => SubId::Sparse(SparseIndex::Int(e.position as i64)),
            };
            let value = if linked {
                SubValue::Node {
                    prev: e.links.0,
                    next: e.links.1,
                    value: e.value.clone(),
                }
            } else {
                SubValue::Bytes(e.value.clone())
            };
            (id, value)
        }
    };
    Some((kind, id, value))
}

/// The upper bound of the whole-family ranges of the families whose keys
/// have no prefix (blackwidow's `TOP_KEY`, nemo's `unbounded_upper`):
/// `KeyRange` has no unbounded form, so a key that starts with these bytes
/// lies outside `meta_ranges` and `flush_ranges` by design
/// (formats-spec/blackwidow.md §2.4, nemo.md §2). Such keys are not
/// checked against the ranges.
fn beyond_whole_family_ranges(key: &[u8]) -> bool {
    key.starts_with(&redcodec_blackwidow::TOP_KEY)
}

// nemo's bound is blackwidow's.
const _: () = assert!(redcodec_blackwidow::TOP_KEY_LEN == redcodec_nemo::keys::TOP_KEY_LEN);

/// Runs every check of the module docs on `case` with `c`.
pub fn check<C: Codec>(c: &C, case: &Case) {
    let name = c.name();
    let meta = meta_of(c, case);
    let t = meta.data_type;
    let Ok(record) = c.meta_record(&case.key, t) else {
        return; // a key the format cannot hold (nemo: over 254 bytes)
    };
    assert_eq!(
        c.decode_meta_key(record.place, &record.key),
        Ok(Some(case.key.clone())),
        "{name}: metadata key {:02x?}",
        record.key
    );
    if beyond_whole_family_ranges(&record.key) {
        return; // the documented exception, see below
    }
    let ranges = c.meta_ranges();
    assert!(
        ranges
            .iter()
            .any(|(r, _)| in_range(c, r, record.place, &record.key)),
        "{name}: metadata key {:02x?} is in no metadata range",
        record.key
    );
    let flush = c.flush_ranges();
    let key_range = c.key_range(&case.key);
    // Every record of the key: in a flush range of its place, and in the
    // key's own range where the format has one.
    let covered = |place: Place, raw: &[u8]| {
        assert!(
            flush.iter().any(|r| in_range(c, r, place, raw)),
            "{name}: {raw:02x?} at {place:?} is in no flush range"
        );
        if let Some(r) = &key_range {
            assert!(
                in_range(c, r, place, raw),
                "{name}: {raw:02x?} outside the key's range {r:02x?}"
            );
        }
    };
    covered(record.place, &record.key);
    let Ok(bytes) = c.encode_meta(&meta) else {
        return; // out of the format's range: an error, not a panic
    };
    let decoded = c
        .decode_meta(t, &bytes)
        .unwrap_or_else(|e| panic!("{name}: {meta:?} encoded as {bytes:02x?} fails: {e}"));
    assert_eq!(decoded.data_type, t, "{name}: {bytes:02x?}");
    if t == DataType::String {
        assert_eq!(decoded.value, meta.value, "{name}: {bytes:02x?}");
    }
    assert_eq!(
        c.encode_meta(&decoded).as_ref(),
        Ok(&bytes),
        "{name}: {meta:?} → {decoded:?}"
    );
    if !t.is_collection() {
        return;
    }
    for e in case.elements.iter().take(8) {
        let Some((kind, id, value)) = element_of(c, e) else {
            continue;
        };
        if kind.owner_type() != t {
            continue;
        }
        let place = c.sub_place(kind, &case.key);
        let key = c.sub_key(kind.of(&case.key, &decoded), id.view());
        let range = c.sub_range(kind.of(&case.key, &decoded));
        assert!(
            in_range(c, &range, place, &key),
            "{name}: {kind:?} {id:?} → {key:02x?} outside {range:02x?}"
        );
        covered(place, &key);
        let got = c
            .decode_sub_key(kind.of(&case.key, &decoded), &key)
            .unwrap_or_else(|e| panic!("{name}: {kind:?} {id:?} → {key:02x?} fails: {e}"));
        if !matches!(id, SubId::Scored { .. }) {
            assert_eq!(got, id, "{name}: {kind:?} {key:02x?}");
        }
        assert_eq!(
            c.sub_key(kind.of(&case.key, &decoded), got.view()),
            key,
            "{name}: {kind:?} {id:?} decoded as {got:?}"
        );
        let raw = c.encode_sub_value(kind.of(&case.key, &decoded), value.view());
        let back = c
            .decode_sub_value(kind.of(&case.key, &decoded), &raw)
            .unwrap_or_else(|e| panic!("{name}: {kind:?} {value:?} → {raw:02x?} fails: {e}"));
        assert_eq!(
            format!("{back:?}"),
            format!("{value:?}"),
            "{name}: {kind:?} {raw:02x?}"
        );
        assert!(
            c.sub_is_current(kind.of(&case.key, &decoded), &raw),
            "{name}: {kind:?} {raw:02x?} not current"
        );
        if let Some(owner) = c.gc_sub_owner(place, &key, &raw) {
            assert_eq!(owner.meta, record, "{name}: owner of {key:02x?}");
            if decoded.expire_ms == 0 && decoded.size > 0 {
                assert_eq!(
                    c.gc_sub(&owner, Some(&bytes), 1_700_000_000_000),
                    GcDecision::Keep,
                    "{name}: {kind:?} {key:02x?} of live {decoded:?}"
                );
            }
        }
    }
}

/// [`check`] with the Kvrocks codec of the input's first byte (namespace
/// and cluster mode), then the case.
pub fn kvrocks(data: &[u8]) {
    use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(sel), Ok(case)) = (u.arbitrary::<u8>(), Case::arbitrary_take_rest(u)) else {
        return;
    };
    let namespace = match sel % 3 {
        0 => b"__namespace".to_vec(),
        1 => Vec::new(),
        _ => vec![0xFF; 3],
    };
    let c = KvrocksCodec::new(KvrocksOptions {
        namespace,
        cluster: sel & 4 != 0,
    })
    .unwrap();
    check(&c, &case);
}

/// [`check`] with `c`, then the case.
fn with<C: Codec>(c: &C, data: &[u8]) {
    if let Ok(case) = Case::arbitrary_take_rest(arbitrary::Unstructured::new(data)) {
        check(c, &case);
    }
}

/// Fuzz entry points that run [`with`] on one format's default codec,
/// made once: `name: codec type;`, each after its doc comment.
macro_rules! with_default_codec {
    ($($(#[$doc:meta])* $name:ident: $codec:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(data: &[u8]) {
            static C: OnceLock<$codec> = OnceLock::new();
            with(C.get_or_init(Default::default), data);
        }
    )*};
}

with_default_codec! {
    /// [`check`] with the blackwidow codec.
    blackwidow: redcodec_blackwidow::BlackwidowCodec;
    /// [`check`] with the nemo codec.
    nemo: redcodec_nemo::NemoCodec;
    /// [`check`] with the Ardb codec of the default namespace.
    ardb: redcodec_ardb::ArdbCodec;
    /// [`check`] with the floyd codec (three instances, 1,024 slots).
    floyd: redcodec_floyd::FloydCodec;
}

/// The records of `case` under user key `key` (the case's own key is not
/// used), as the engine would write them: the metadata record first (if
/// the format encodes it), then up to eight elements of any kind, each
/// keyed under that metadata. For the store fuzz target
/// ([`crate::store_reads`]).
pub fn records<C: Codec>(c: &C, key: &[u8], case: &Case) -> Vec<(Place, Vec<u8>, Vec<u8>)> {
    let meta = meta_of(c, case);
    let mut out = Vec::new();
    if let (Ok(record), Ok(bytes)) = (c.meta_record(key, meta.data_type), c.encode_meta(&meta)) {
        out.push((record.place, record.key, bytes));
    }
    for e in case.elements.iter().take(8) {
        if let Some((kind, id, value)) = element_of(c, e) {
            out.push((
                c.sub_place(kind, key),
                c.sub_key(kind.of(key, &meta), id.view()),
                c.encode_sub_value(kind.of(key, &meta), value.view()),
            ));
        }
    }
    out
}
