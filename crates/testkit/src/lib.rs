//! Test helpers shared by the format crates, so that each crate's tests
//! say only what is particular to its format.
//!
//! - [`hex()`], [`hex_compact`] / [`unhex`]: bytes as hex, as the specs
//!   write them;
//! - [`XorShift`]: deterministic pseudo-random bytes;
//! - [`prefixes_and_flips`]: every prefix and single-byte corruption of a
//!   valid record;
//! - [`feed_decoders`]: arbitrary bytes through every decoding entry point
//!   of a [`Codec`] (errors are fine, panics are not);
//! - [`sub_records`]: the element keys and key ranges a codec builds;
//! - [`valid_records`]: records of every kind a codec writes;
//! - [`assert_sub_round_trip`]: an element's key and value read back
//!   exactly as written;
//! - [`place_names`], [`in_range`], [`assert_meta_bytes`]: where a record
//!   lives, whether a key lies in a range by its family's order, a
//!   metadata value's bytes;
//! - [`filled_metas`], [`edge_elements`], [`assert_element`]: the round
//!   trips of every record kind each format runs;
//! - [`command_lines`]: random command lines for the engine's property
//!   tests;
//! - [`table_files`]: how many RocksDB table files a store directory holds.

pub mod command_lines;

use std::cmp::Ordering;
use std::path::Path;

use redcodec_codec::{
    Codec, DataType, GcDecision, KeyRange, ListBounds, Meta, Place, Record, SubId, SubIdRef,
    SubKind, SubOwner, SubValue,
};

/// Bytes as lower-case hex pairs separated by spaces (`"0b 5f 5f"`).
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| hex::encode([*b]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes as lower-case hex with no separator (`"0b5f5f"`).
pub fn hex_compact(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// The bytes of a hex string; white space anywhere is ignored.
///
/// # Panics
/// On an odd number of digits or a character that is not a hex digit: the
/// strings are the tests' own.
pub fn unhex(text: &str) -> Vec<u8> {
    let digits: String = text.split_whitespace().collect();
    hex::decode(&digits).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Marsaglia's xorshift64: the same bytes on every run.
pub struct XorShift(u64);

impl XorShift {
    /// A generator from a non-zero `seed`.
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.max(1))
    }

    /// The next number.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Up to `max_len - 1` random bytes.
    pub fn bytes(&mut self, max_len: u64) -> Vec<u8> {
        let len = self.next() % max_len.max(1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Calls `feed` with every prefix of `record` (the empty one and the whole
/// record included) and with every copy of it where one byte is XORed with
/// 0x01, 0x80 or 0xFF.
pub fn prefixes_and_flips(record: &[u8], mut feed: impl FnMut(&[u8])) {
    for end in 0..=record.len() {
        feed(&record[..end]);
    }
    for i in 0..record.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut bad = record.to_vec();
            bad[i] ^= flip;
            feed(&bad);
        }
    }
}

/// Calls `feed` with every prefix and corruption of each of `records`
/// ([`prefixes_and_flips`]), beside another of the records (the one seven
/// places on, cyclically) as a second input: for comparators.
pub fn prefixes_and_flips_beside_another(records: &[Vec<u8>], mut feed: impl FnMut(&[u8], &[u8])) {
    for (n, record) in records.iter().enumerate() {
        let other = &records[(n * 7 + 3) % records.len()];
        prefixes_and_flips(record, |bytes| feed(bytes, other));
    }
}

/// Calls `feed` 20,000 times with deterministic random bytes (up to
/// `max_len - 1` of them, from `seed`) that `shape` may make look more like
/// a record (given the round and the generator), with fresh metadata of
/// each type in turn at a random version, and with the bytes of the round
/// before.
pub fn feed_random<C: Codec>(
    c: &C,
    seed: u64,
    max_len: u64,
    mut shape: impl FnMut(usize, &mut XorShift, &mut Vec<u8>),
    mut feed: impl FnMut(&Meta, &[u8], &[u8]),
) {
    let mut rng = XorShift::new(seed);
    let mut previous = Vec::new();
    for round in 0..20_000 {
        let mut bytes = rng.bytes(max_len);
        shape(round, &mut rng, &mut bytes);
        let meta = c.new_meta(DataType::ALL[round % DataType::ALL.len()], rng.next());
        feed(&meta, &bytes, &previous);
        previous = bytes;
    }
}

/// Feeds `bytes` to every decoding entry point of `c`: metadata of every
/// type, metadata keys and garbage-collection rules at every place of the
/// layout and at `extra_places` (places outside it), element keys and
/// values of every kind under `meta`, at each time of `nows`. Results are
/// dropped: only a panic fails.
pub fn feed_decoders<C: Codec>(
    c: &C,
    meta: &Meta,
    bytes: &[u8],
    extra_places: &[Place],
    nows: &[u64],
) {
    for t in DataType::ALL {
        let _ = c.decode_meta(t, bytes);
    }
    let places: Vec<Place> = c
        .layout()
        .places()
        .chain(extra_places.iter().copied())
        .collect();
    for place in places {
        let _ = c.decode_meta_key(place, bytes);
        let _ = c.key_shape(place, bytes);
        for &now in nows {
            let _ = c.gc_meta(place, bytes, bytes, now);
            if let Some(owner) = c.gc_sub_owner(place, bytes, bytes) {
                let _ = c.gc_sub(&owner, Some(bytes), now);
                let _ = c.gc_sub(&owner, None, now);
            }
        }
    }
    for t in DataType::ALL {
        let Ok(record) = c.meta_record(b"k", t) else {
            continue;
        };
        for version in [meta.version, 0, u64::MAX] {
            let owner = SubOwner {
                meta: record.clone(),
                version,
            };
            for &now in nows {
                let _ = c.gc_sub(&owner, Some(bytes), now);
            }
        }
    }
    for kind in SubKind::ALL {
        let _ = c.decode_sub_key(kind.of(b"k", meta), bytes);
        let _ = c.decode_sub_value(kind.of(b"k", meta), bytes);
        let _ = c.sub_is_current(kind.of(b"k", meta), bytes);
    }
}

/// The element keys `c` builds for `ids` of the key `k` under `meta`, each
/// followed by the bounds of its kind's range.
pub fn sub_records<C: Codec>(c: &C, meta: &Meta, ids: &[(SubKind, SubId)]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (kind, id) in ids {
        out.push(c.sub_key(kind.of(b"k", meta), id.view()));
        let range = c.sub_range(kind.of(b"k", meta));
        out.push(range.lower);
        out.push(range.upper);
    }
    out
}

/// Records of every kind `c` writes, for each of `metas`: the metadata
/// value and key of `k`, the element keys (with their kind's range) of a
/// hash field `field`, a set member `m`, a sorted-set member `m` scored
/// -2.25, the format's own `extra` elements (list items, particular
/// names), and a member's score value.
pub fn valid_records<C: Codec>(c: &C, metas: &[Meta], extra: &[(SubKind, SubId)]) -> Vec<Vec<u8>> {
    let mut ids = vec![
        (SubKind::HashField, SubId::Name(b"field".to_vec())),
        (SubKind::SetMember, SubId::Name(b"m".to_vec())),
        (SubKind::ZSetMember, SubId::Name(b"m".to_vec())),
        (
            SubKind::ZSetScore,
            SubId::Scored {
                score: -2.25,
                member: b"m".to_vec(),
            },
        ),
    ];
    ids.extend(extra.iter().cloned());
    let mut out = Vec::new();
    for m in metas {
        out.push(c.encode_meta(m).expect("valid metadata encodes"));
        out.push(c.meta_record(b"k", m.data_type).expect("meta record").key);
        out.extend(sub_records(c, m, &ids));
        out.push(c.encode_sub_value(SubKind::ZSetMember.of(b"k", m), SubValue::Score(3.0).view()));
    }
    out
}

/// Encodes the element `id` = `value` of `key` under `meta`, asserts that
/// both read back bit for bit (scores included: `-0.0` stays `-0.0`) and
/// that the key does not decode as an element of another user key, and
/// returns the raw element key and value.
pub fn assert_sub_round_trip<C: Codec>(
    c: &C,
    kind: SubKind,
    key: &[u8],
    meta: &Meta,
    id: &SubId,
    value: &SubValue,
) -> (Vec<u8>, Vec<u8>) {
    let of = kind.of(key, meta);
    let raw_key = c.sub_key(of, id.view());
    let decoded = c.decode_sub_key(of, &raw_key).unwrap();
    match (&decoded, id) {
        (
            SubId::Scored {
                score: a,
                member: m,
            },
            SubId::Scored {
                score: b,
                member: n,
            },
        ) => assert!(a.to_bits() == b.to_bits() && m == n, "{kind:?}"),
        _ => assert_eq!(&decoded, id, "{kind:?}"),
    }
    let raw_value = c.encode_sub_value(of, value.view());
    match (c.decode_sub_value(of, &raw_value).unwrap(), value) {
        (SubValue::Score(a), SubValue::Score(b)) => assert_eq!(a.to_bits(), b.to_bits()),
        (got, want) => assert_eq!(&got, want, "{kind:?}"),
    }
    let other_key: &[u8] = if key == b"key" { b"kez" } else { b"key" };
    assert!(c
        .decode_sub_key(kind.of(other_key, meta), &raw_key)
        .is_err());
    (raw_key, raw_value)
}

/// The instance directory and column family name of `place`.
pub fn place_names<C: Codec>(c: &C, place: Place) -> (&'static str, &'static str) {
    (
        c.layout().instances[place.instance].dir,
        c.layout().cf(place).name,
    )
}

/// Whether `key` lies in `range` by the order of the range's family (its
/// comparator, or bytewise).
pub fn in_range<C: Codec>(c: &C, range: &KeyRange, key: &[u8]) -> bool {
    let cmp = c
        .layout()
        .cf(range.place)
        .comparator
        .map_or(<[u8]>::cmp as fn(&[u8], &[u8]) -> Ordering, |spec| {
            spec.compare
        });
    cmp(&range.lower, key) != Ordering::Greater && cmp(key, &range.upper) == Ordering::Less
}

/// Asserts that `meta` encodes to `want` and that those bytes, read from
/// the place of `read_as`, decode to `meta` again; returns the bytes.
pub fn assert_meta_bytes<C: Codec>(c: &C, read_as: DataType, meta: &Meta, want: &[u8]) -> Vec<u8> {
    let value = c.encode_meta(meta).expect("valid metadata encodes");
    assert_eq!(value, want, "{:?}", meta.data_type);
    assert_eq!(c.decode_meta(read_as, &value).as_ref(), Ok(meta));
    value
}

/// Metadata of every type at `version` expiring at `expire_ms`, filled as
/// a written key's: a string holding `payload\0\xff`, a collection of 3
/// elements, a list with the bounds `list`.
pub fn filled_metas<C: Codec>(c: &C, version: u64, expire_ms: u64, list: &ListBounds) -> Vec<Meta> {
    DataType::ALL
        .into_iter()
        .map(|data_type| {
            let mut meta = c.new_meta(data_type, version);
            meta.expire_ms = expire_ms;
            if data_type == DataType::String {
                meta.value = b"payload\0\xff".to_vec();
            } else {
                meta.size = 3;
            }
            if data_type == DataType::List {
                meta.list = list.clone();
            }
            meta
        })
        .collect()
}

/// One element record: its kind, identity and value.
pub type Element = (SubKind, SubId, SubValue);

/// Elements of every kind at the edges every format must carry: a field
/// with a NUL byte and a value with a 0xFF byte, the empty set member, a
/// member scored `-0.0`, the empty member at `score` (the lowest score the
/// format stores exactly), and the format's own `list_item`.
pub fn edge_elements(score: f64, list_item: (SubId, SubValue)) -> Vec<Element> {
    let (item, item_value) = list_item;
    vec![
        (
            SubKind::HashField,
            SubId::Name(b"f\0".to_vec()),
            SubValue::Bytes(b"v\xff".to_vec()),
        ),
        (SubKind::SetMember, SubId::Name(Vec::new()), SubValue::Empty),
        (
            SubKind::ZSetMember,
            SubId::Name(b"m".to_vec()),
            SubValue::Score(-0.0),
        ),
        (
            SubKind::ZSetScore,
            SubId::Scored {
                score,
                member: Vec::new(),
            },
            SubValue::Empty,
        ),
        (SubKind::ListItem, item, item_value),
    ]
}

/// The metadata of a set `s` of two members at `version`, live, empty and
/// expired at `expired_ms`, as stored; asserts the compaction rule for
/// metadata every versioned format shares at `now_ms`: live metadata is
/// kept, metadata of no elements and expired metadata are dropped.
pub fn assert_gc_of_set_meta<C: Codec>(
    c: &C,
    version: u64,
    expired_ms: u64,
    now_ms: u64,
) -> SetMetas {
    let rec = c.meta_record(b"s", DataType::Set).expect("meta record");
    let gc = |meta: &Meta| {
        let bytes = c.encode_meta(meta).expect("valid metadata encodes");
        let decision = c.gc_meta(rec.place, &rec.key, &bytes, now_ms);
        (bytes, decision)
    };
    let mut meta = c.new_meta(DataType::Set, version);
    meta.size = 2;
    let (live, decision) = gc(&meta);
    assert_eq!(decision, GcDecision::Keep, "live");
    meta.size = 0;
    let (_, decision) = gc(&meta);
    assert_eq!(decision, GcDecision::Drop, "empty");
    meta.size = 2;
    meta.expire_ms = expired_ms;
    let (expired, decision) = gc(&meta);
    assert_eq!(decision, GcDecision::Drop, "expired");
    SetMetas {
        rec,
        meta,
        live,
        expired,
    }
}

/// What [`assert_gc_of_set_meta`] wrote.
pub struct SetMetas {
    /// The metadata record of `s`.
    pub rec: Record,
    /// The expired metadata, of two members.
    pub meta: Meta,
    /// The bytes of the live metadata.
    pub live: Vec<u8>,
    /// The bytes of the expired metadata.
    pub expired: Vec<u8>,
}

/// The field of the specs' worked example `HSET h f v`: `f` = `v`.
pub fn field_f_v() -> Element {
    (
        SubKind::HashField,
        SubId::Name(b"f".to_vec()),
        SubValue::Bytes(b"v".to_vec()),
    )
}

/// The two records of the specs' worked example `ZADD z 1.5 m`: the member
/// `m` with its score 1.5, and its entry in the score index.
pub fn member_m_1_5() -> [Element; 2] {
    [
        (
            SubKind::ZSetMember,
            SubId::Name(b"m".to_vec()),
            SubValue::Score(1.5),
        ),
        (
            SubKind::ZSetScore,
            SubId::Scored {
                score: 1.5,
                member: b"m".to_vec(),
            },
            SubValue::Empty,
        ),
    ]
}

/// An element record as a codec wrote it.
pub struct Written {
    /// The range of the element's kind for its key.
    pub range: KeyRange,
    /// The element's key.
    pub key: Vec<u8>,
    /// The element's value.
    pub value: Vec<u8>,
}

/// Writes `element` of `key` under `meta`, asserts that its key lies in
/// its kind's range (by the family's order) at its kind's place and that
/// key and value read back as written ([`assert_sub_round_trip`]).
pub fn assert_element<C: Codec>(c: &C, key: &[u8], meta: &Meta, element: &Element) -> Written {
    let (kind, id, value) = element;
    let range = c.sub_range(kind.of(key, meta));
    assert_eq!(range.place, c.sub_place(*kind, key), "{kind:?}");
    let (raw_key, raw_value) = assert_sub_round_trip(c, *kind, key, meta, id, value);
    assert!(in_range(c, &range, &raw_key), "{kind:?}");
    Written {
        range,
        key: raw_key,
        value: raw_value,
    }
}

/// Asserts that the metadata record of `key` of `data_type` has the key
/// bytes `want` and that they decode to `key` again; returns the record.
pub fn assert_meta_record<C: Codec>(c: &C, key: &[u8], data_type: DataType, want: &[u8]) -> Record {
    let rec = c.meta_record(key, data_type).expect("meta record");
    assert_eq!(rec.key, want, "{data_type:?}");
    assert_eq!(
        c.decode_meta_key(rec.place, &rec.key),
        Ok(Some(key.to_vec()))
    );
    rec
}

/// Asserts that `element` of `key` under `meta` is written as the key
/// `want_key` and the value `want_value`, and that both read back
/// ([`assert_element`]); returns the written record.
pub fn assert_element_bytes<C: Codec>(
    c: &C,
    key: &[u8],
    meta: &Meta,
    element: &Element,
    want_key: &[u8],
    want_value: &[u8],
) -> Written {
    let written = assert_element(c, key, meta, element);
    assert_eq!(written.key, want_key, "{:?} key", element.0);
    assert_eq!(written.value, want_value, "{:?} value", element.0);
    written
}

/// Asserts that compaction keeps the metadata record `rec` holding `value`
/// at `kept_ms` and drops it from `dropped_ms` on: the instant its expiry,
/// or the staleness of a reset, takes effect.
pub fn assert_gc_meta_until<C: Codec>(
    c: &C,
    rec: &Record,
    value: &[u8],
    kept_ms: u64,
    dropped_ms: u64,
) {
    let at = |now_ms| c.gc_meta(rec.place, &rec.key, value, now_ms);
    assert_eq!(at(kept_ms), GcDecision::Keep, "at {kept_ms} ms");
    assert_eq!(at(dropped_ms), GcDecision::Drop, "at {dropped_ms} ms");
}

/// The key of the member `m` of the set `s` written under `meta` (the set
/// of [`assert_gc_of_set_meta`]), and the owner compaction finds for it.
pub fn set_member_owner<C: Codec>(c: &C, meta: &Meta) -> (Vec<u8>, SubOwner) {
    let member = c.sub_key(SubKind::SetMember.of(b"s", meta), SubIdRef::Name(b"m"));
    let place = c.sub_place(SubKind::SetMember, b"s");
    let owner = c
        .gc_sub_owner(place, &member, &[])
        .expect("a set member has an owner");
    (member, owner)
}

/// The RocksDB table files (`.sst`) under `dir`, at any depth.
pub fn table_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|entry| entry.expect("entry").path())
        .map(|path| {
            if path.is_dir() {
                table_files(&path)
            } else {
                usize::from(path.extension().is_some_and(|e| e == "sst"))
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        assert_eq!(hex(&unhex("0b 5f\n 5F")), "0b 5f 5f");
        assert_eq!(unhex(""), Vec::<u8>::new());
    }

    #[test]
    fn xorshift_repeats() {
        let (mut a, mut b) = (XorShift::new(7), XorShift::new(7));
        assert_eq!(a.bytes(64), b.bytes(64));
        assert_ne!(a.next(), XorShift::new(8).next());
    }

    #[test]
    fn prefixes_and_flips_counts() {
        let mut n = 0;
        prefixes_and_flips(b"ab", |_| n += 1);
        assert_eq!(n, 3 + 2 * 3);
    }
}
