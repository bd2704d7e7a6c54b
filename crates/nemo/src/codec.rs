//! [`NemoCodec`]: the [`Codec`] implementation tying the modules together
//! (`formats-spec/nemo.md` §9 lists what nemo needs of the trait):
//!
//! - [`Codec::bootstrap_records`]: the separator records nemo writes on
//!   every open;
//! - [`Codec::sub_is_current`]: whether an element record belongs to the
//!   current version of its key (the version is in the value, so
//!   [`Codec::sub_range`] also holds records of older versions);
//! - [`Codec::gc_sub_owner`] reads the element's version from its value,
//!   and the collection instances use [`GcRule::MetaAndSubKeys`]: the whole
//!   compaction filter, for families that hold metadata and elements
//!   ([`NemoCodec::gc_record`] is the same filter as one call);
//! - [`RelativeExpiry::SecondsMinusOne`]: relative TTLs are stored as
//!   `now_s + ttl_s - 1`, and a stored second is lived through.
//!
//! [`GcRule::MetaAndSubKeys`]: redcodec_codec::GcRule::MetaAndSubKeys

use redcodec_codec::{
    Capabilities, Codec, DataType, Declaration, DecodeError, DeleteModel, Elements, EncodeError,
    GcDecision, KeyRange, ListModel, Meta, MetaLookup, Namespaces, Place, Record, RelativeExpiry,
    ScoreIndex, SizeUnknown, SubId, SubIdRef, SubKind, SubOwner, SubValue, SubValueRef,
    TtlResolution, VersionWidth,
};

use crate::keys::{self, unbounded_upper};
use crate::suffix::MAX_EXPIRE_MS;
use crate::{elements, gc, layout, meta, score, version, FORMAT};

/// The nemo format of Pika 2.x. It has no options: nemo has no namespaces
/// and no cluster mode.
#[derive(Clone, Debug)]
pub struct NemoCodec {
    declared: Declaration,
}

impl NemoCodec {
    /// The format's name as the command line spells it
    /// ([`Codec::name`]).
    pub const NAME: &'static str = FORMAT;

    /// The codec.
    pub fn new() -> NemoCodec {
        let declared = Declaration {
            name: Self::NAME,
            layout: layout::layout(),
            capabilities: Capabilities {
                meta_lookup: MetaLookup::PerType,
                ttl: TtlResolution::Seconds,
                max_expire_ms: MAX_EXPIRE_MS,
                version_width: VersionWidth::Bits32,
                collection_key_limit: Some(keys::MAX_COLLECTION_KEY),
                delete: DeleteModel::ResetMeta,
                // Types whose metadata nemo rewrites with length 0 when the last element goes:
                // `HDEL`, `SREM`, `ZREM` (through `IncrHLen`/`IncrSSize`/`IncrZLen`), and list
                // pops and `LTRIM`. `LREM` alone deletes an emptied list's metadata.
                keeps_empty_meta: &DataType::COLLECTIONS,
                list_model: ListModel::Linked,
                score_index: ScoreIndex::Rounded {
                    decimals: score::DECIMALS,
                },
                score_limit: Some((score::MIN_SCORE, score::MAX_SCORE)),
                namespaces: Namespaces::None,
                relative_expiry: RelativeExpiry::SecondsMinusOne,
                active_expiry: None,
                string_version: false,
                version_may_repeat: false,
                size_unknown: SizeUnknown::Never,
                key_in_one_instance: false,
            },
        };
        NemoCodec { declared }
    }

    /// nemo's compaction filter for one record of the family at `place`:
    /// a decision, or the owner whose metadata decides it (then call
    /// [`Codec::gc_sub`] with it). [`Codec::gc_sub_owner`] and
    /// [`Codec::gc_meta`] are the two halves of this one call.
    pub fn gc_record(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> gc::Verdict {
        gc::judge(place, key, value, now_ms)
    }
}

impl Default for NemoCodec {
    fn default() -> Self {
        NemoCodec::new()
    }
}

/// The range of metadata keys with `tag`: `[tag, tag + 1)`.
fn tag_range(place: Place, tag: u8) -> KeyRange {
    KeyRange {
        place,
        lower: vec![tag],
        upper: vec![tag + 1],
    }
}

impl Codec for NemoCodec {
    fn declaration(&self) -> &Declaration {
        &self.declared
    }

    fn next_version(&self, now_us: u64, _counter: u64, previous: Option<u64>) -> u64 {
        version::next_version(now_us, previous)
    }

    fn new_meta(&self, data_type: DataType, version: u64) -> Meta {
        meta::new_meta(data_type, version)
    }

    fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError> {
        keys::check_collection_key(key, data_type)?;
        Ok(Record {
            place: layout::place_of(data_type),
            key: keys::meta_key(data_type, key),
        })
    }

    fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
        meta::encode_with(meta, string)
    }

    fn decode_meta(&self, data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
        meta::decode(data_type, raw)
    }

    fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)> {
        DataType::ALL
            .into_iter()
            .map(|t| {
                let place = layout::place_of(t);
                let range = match keys::meta_tag(t) {
                    Some(tag) => tag_range(place, tag),
                    None => KeyRange {
                        place,
                        lower: Vec::new(),
                        upper: unbounded_upper(),
                    },
                };
                (range, Some(t))
            })
            .collect()
    }

    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        Ok(keys::user_key_of_meta(place, raw)?.map(<[u8]>::to_vec))
    }

    fn flush_ranges(&self) -> Vec<KeyRange> {
        // Everything but the separators, which nemo rewrites on every open
        // anyway: the state after Pika's FLUSHALL and a restart.
        let mut out = vec![KeyRange {
            place: layout::KV,
            lower: Vec::new(),
            upper: unbounded_upper(),
        }];
        for place in [layout::HASH, layout::LIST, layout::ZSET, layout::SET] {
            // Separators of one instance are listed in key order.
            let mut lower = Vec::new();
            for &(_, sep) in layout::SEPARATORS.iter().filter(|(p, _)| *p == place) {
                out.push(KeyRange {
                    place,
                    lower,
                    upper: vec![sep],
                });
                lower = vec![sep, 0];
            }
            out.push(KeyRange {
                place,
                lower,
                upper: unbounded_upper(),
            });
        }
        out
    }

    fn sub_place(&self, kind: SubKind, _key: &[u8]) -> Place {
        elements::place_of(kind)
    }

    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
        elements::key(of.kind, of.key, id)
    }

    fn sub_range(&self, of: Elements<'_>) -> KeyRange {
        elements::range(of.kind, of.key)
    }

    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
        elements::decode_id(of.kind, of.key, raw)
    }

    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
        elements::encode_value(of.kind, of.meta, value)
    }

    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
        elements::decode_value(of.kind, raw)
    }

    /// The `kv` rule for strings, the metadata rule for metadata keys;
    /// separators are kept, values shorter than the suffix dropped. An
    /// element record is kept here: its rule needs its owner.
    fn gc_meta(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> GcDecision {
        match gc::judge(place, key, value, now_ms) {
            gc::Verdict::Decided(d) => d,
            gc::Verdict::Element(_) => GcDecision::Keep,
        }
    }

    /// The owner of an element record, with the element's version read
    /// from its value; `None` for metadata records, separators, values
    /// shorter than the suffix and keys too short to hold their user key
    /// (which [`Codec::gc_meta`] then judges).
    fn gc_sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner> {
        // The verdict does not depend on the time when it names an owner.
        match gc::judge(place, key, value, 0) {
            gc::Verdict::Element(owner) => Some(owner),
            gc::Verdict::Decided(_) => None,
        }
    }

    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
        gc::element(owner.version, meta, now_ms)
    }

    /// The separators `h`, `l`, `y`, `z`, `s`, each an empty value with a
    /// zero suffix, which nemo writes on every open.
    fn bootstrap_records(&self) -> Vec<(Record, Vec<u8>)> {
        layout::bootstrap_records()
            .into_iter()
            .map(|(place, key, value)| (Record { place, key }, value))
            .collect()
    }

    /// [`elements::is_current`]: the element's version (in its value) is
    /// at least the metadata's.
    fn sub_is_current(&self, of: Elements<'_>, raw_value: &[u8]) -> bool {
        elements::is_current(of.meta, raw_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_codec::prefix_successor;

    #[test]
    fn capabilities() {
        let c = NemoCodec::default();
        let caps = c.capabilities();
        assert_eq!(c.name(), "nemo");
        assert_eq!(caps.meta_lookup, MetaLookup::PerType);
        assert_eq!(caps.ttl, TtlResolution::Seconds);
        assert_eq!(caps.max_expire_ms, 2_147_483_647_000);
        assert_eq!(caps.version_width, VersionWidth::Bits32);
        assert_eq!(caps.collection_key_limit, Some(254));
        assert_eq!(caps.delete, DeleteModel::ResetMeta);
        assert_eq!(caps.list_model, ListModel::Linked);
        assert_eq!(caps.score_index, ScoreIndex::Rounded { decimals: 5 });
        assert_eq!(caps.score_limit, Some((-1e13, 1e13)));
        assert_eq!(caps.namespaces, Namespaces::None);
        assert_eq!(caps.relative_expiry, RelativeExpiry::SecondsMinusOne);
        assert_eq!(caps.keeps_empty_meta.len(), 4);
        assert!(!caps.keeps_empty_meta.contains(&DataType::String));
    }

    #[test]
    fn meta_ranges_per_type() {
        let c = NemoCodec::new();
        let ranges = c.meta_ranges();
        assert_eq!(ranges.len(), 5);
        for (range, ty) in &ranges {
            let ty = ty.expect("per-type places");
            assert_eq!(range.place, layout::place_of(ty));
            let rec = c.meta_record(b"key", ty).unwrap();
            assert!(range.lower <= rec.key && rec.key < range.upper, "{ty:?}");
            // No element key or separator lies in a metadata range.
            if ty.is_collection() {
                for &(place, sep) in &layout::SEPARATORS {
                    if place == range.place {
                        assert!(vec![sep] >= range.upper);
                    }
                }
            }
        }
        let hash = &ranges
            .iter()
            .find(|r| r.1 == Some(DataType::Hash))
            .unwrap()
            .0;
        assert_eq!(
            (hash.lower.as_slice(), hash.upper.as_slice()),
            (&b"H"[..], &b"I"[..])
        );
    }

    #[test]
    fn flush_ranges_spare_only_the_separators() {
        let c = NemoCodec::new();
        let ranges = c.flush_ranges();
        let covered = |place: Place, key: &[u8]| {
            ranges
                .iter()
                .any(|r| r.place == place && r.lower.as_slice() <= key && key < r.upper.as_slice())
        };
        for (record, _) in c.bootstrap_records() {
            assert!(!covered(record.place, &record.key), "{record:?}");
        }
        assert!(covered(layout::KV, b""));
        assert!(covered(layout::KV, &[0xFF; 200]));
        for (place, probe) in [
            (layout::HASH, &b"Hk"[..]),
            (layout::HASH, b"h\x01k=f"),
            (layout::HASH, b"g"),
            (layout::HASH, b"i"),
            (layout::LIST, b"l\x00"),
            (layout::ZSET, b"y\x01z"),
            (layout::ZSET, b"yz"),
            (layout::ZSET, b"z\x01zm"),
            (layout::ZSET, b"Zz"),
            (layout::SET, b"s\x01sm"),
            (layout::SET, b"\x00"),
        ] {
            assert!(covered(place, probe), "{place:?} {probe:?}");
        }
        assert!(ranges.iter().all(|r| r.lower < r.upper));
        assert_eq!(ranges.len(), 1 + 2 + 2 + 3 + 2);
    }

    #[test]
    fn successor_exists_for_every_tag_range() {
        for t in DataType::ALL {
            if let Some(tag) = keys::meta_tag(t) {
                assert_eq!(prefix_successor(&[tag]), Some(vec![tag + 1]));
            }
        }
    }
}
