//! [`BlackwidowCodec`]: the [`Codec`] implementation tying the modules
//! together.

use redcodec_codec::{
    Capabilities, Codec, DataType, Declaration, DecodeError, DeleteModel, Elements, EncodeError,
    GcDecision, KeyRange, ListModel, ListShift, Meta, MetaLookup, Namespaces, Place, Record,
    RelativeExpiry, ScoreIndex, SizeUnknown, SubId, SubIdRef, SubKind, SubOwner, SubValue,
    SubValueRef, TtlResolution, VersionWidth,
};

use crate::{elements, gc, keys, layout, meta, version, TOP_KEY};

/// The latest storable expiry: `i32::MAX` seconds (2038-01-19T03:14:07Z).
pub const MAX_EXPIRE_MS: u64 = i32::MAX as u64 * 1000;

/// The Pika 3.x blackwidow format. It has no options: no namespaces, no
/// cluster slots.
#[derive(Clone, Debug)]
pub struct BlackwidowCodec {
    declared: Declaration,
}

impl BlackwidowCodec {
    /// The format's name as the command line spells it
    /// ([`Codec::name`]).
    pub const NAME: &'static str = "blackwidow";

    /// The codec.
    pub fn new() -> BlackwidowCodec {
        let declared = Declaration {
            name: Self::NAME,
            layout: layout::layout(),
            capabilities: Capabilities {
                meta_lookup: MetaLookup::PerType,
                ttl: TtlResolution::Seconds,
                max_expire_ms: MAX_EXPIRE_MS,
                version_width: VersionWidth::Bits32,
                collection_key_limit: None,
                delete: DeleteModel::ResetMeta,
                // Every collection type keeps its metadata with count 0 when its last element
                // goes (`HDel`, `SRem`, `ZRem`, `LPop`/`RPop`, `LRem` all rewrite the meta with
                // the new count).
                keeps_empty_meta: &DataType::COLLECTIONS,
                // LINSERT moves the half the pivot lies in; LREM moves the
                // shorter side (formats-spec/blackwidow.md §4.3).
                list_model: ListModel::Array {
                    shift: ListShift::PivotHalfHeadOnTie,
                },
                score_index: ScoreIndex::Exact,
                score_limit: None,
                namespaces: Namespaces::None,
                relative_expiry: RelativeExpiry::Exact,
                active_expiry: None,
                string_version: false,
                version_may_repeat: false,
                size_unknown: SizeUnknown::Never,
                key_in_one_instance: false,
            },
        };
        BlackwidowCodec { declared }
    }
}

impl Default for BlackwidowCodec {
    fn default() -> Self {
        BlackwidowCodec::new()
    }
}

/// The smallest key of the family at `place` in its own order: the empty
/// key for bytewise families; for the custom comparators, which sort
/// malformed keys (the empty one too) last, the smallest well-formed key.
fn smallest_key(place: Place) -> Vec<u8> {
    match place {
        // key size 0, empty key, nothing after it.
        layout::LISTS_DATA => vec![0; 4],
        // key size 0, empty key, version 0 (the bytewise-smallest prefix),
        // score -inf, no member.
        layout::ZSETS_SCORE => keys::score_key(b"", 0, f64::NEG_INFINITY, b""),
        _ => Vec::new(),
    }
}

impl Codec for BlackwidowCodec {
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
        // Data keys hold the key size in a u32.
        if data_type.is_collection() {
            EncodeError::check_key_len(Self::NAME, data_type, key, u32::MAX as usize)?;
        }
        Ok(Record {
            place: layout::meta_place(data_type),
            key: key.to_vec(),
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
                (
                    KeyRange {
                        place: layout::meta_place(t),
                        lower: Vec::new(),
                        upper: TOP_KEY.to_vec(),
                    },
                    Some(t),
                )
            })
            .collect()
    }

    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        // Every record of a metadata family is a key's metadata.
        Ok(layout::type_of_meta_place(place).map(|_| raw.to_vec()))
    }

    fn flush_ranges(&self) -> Vec<KeyRange> {
        self.declared
            .layout
            .places()
            .map(|place| KeyRange {
                place,
                lower: smallest_key(place),
                upper: TOP_KEY.to_vec(),
            })
            .collect()
    }

    fn sub_place(&self, kind: SubKind, _key: &[u8]) -> Place {
        elements::place(kind)
    }

    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
        let v = version::to_i32(of.meta.version);
        let room = redcodec_codec::elements::sub_id_len(id);
        keys::data_key_with(of.key, v, room, |out| {
            elements::put_sub(id, out);
        })
    }

    fn sub_range(&self, of: Elements<'_>) -> KeyRange {
        let (lower, upper) = keys::sub_bounds(of.kind, of.key, version::to_i32(of.meta.version));
        KeyRange {
            place: elements::place(of.kind),
            lower,
            upper,
        }
    }

    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
        let prefix = keys::prefix(of.key, version::to_i32(of.meta.version));
        let rest = raw
            .strip_prefix(prefix.as_slice())
            .ok_or_else(|| DecodeError::Invalid {
                record: elements::key_record_name(of.kind),
                reason: "key does not belong to this key and version".into(),
            })?;
        elements::decode_sub(of.kind, rest)
    }

    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
        elements::encode_value(of.kind, value)
    }

    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
        elements::decode_value(of.kind, raw)
    }

    fn gc_meta(&self, place: Place, _key: &[u8], value: &[u8], now_ms: u64) -> GcDecision {
        gc::filter_meta_place(place, value, version::now_secs_from_ms(now_ms))
    }

    fn gc_sub_owner(&self, place: Place, key: &[u8], _value: &[u8]) -> Option<SubOwner> {
        gc::data_owner(place, key)
    }

    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
        gc::data_filter(owner, meta, version::now_secs_from_ms(now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::{lists_data_key_compare, zsets_score_key_compare};
    use std::cmp::Ordering::{Greater, Less};

    #[test]
    fn capabilities() {
        let c = BlackwidowCodec::default();
        let caps = c.capabilities();
        assert_eq!(caps.meta_lookup, MetaLookup::PerType);
        assert_eq!(caps.ttl, TtlResolution::Seconds);
        assert_eq!(caps.max_expire_ms, 2_147_483_647_000);
        assert_eq!(caps.version_width, VersionWidth::Bits32);
        assert_eq!(caps.collection_key_limit, None);
        assert_eq!(caps.delete, DeleteModel::ResetMeta);
        assert_eq!(caps.keeps_empty_meta.len(), 4);
        assert!(!caps.keeps_empty_meta.contains(&DataType::String));
        assert_eq!(caps.score_index, ScoreIndex::Exact);
        assert_eq!(caps.score_limit, None);
        assert_eq!(caps.namespaces, Namespaces::None);
        assert_eq!(c.name(), "blackwidow");
        // The largest expiry encodes; one second more does not.
        let mut m = Meta::string(b"v".to_vec(), MAX_EXPIRE_MS);
        assert!(c.encode_meta(&m).is_ok());
        m.expire_ms += 1000;
        assert!(c.encode_meta(&m).is_err());
    }

    #[test]
    fn meta_ranges_one_per_type() {
        let c = BlackwidowCodec::default();
        let ranges = c.meta_ranges();
        let places: Vec<_> = ranges.iter().map(|(r, t)| (r.place, t.unwrap())).collect();
        assert_eq!(
            places,
            [
                (layout::STRINGS, DataType::String),
                (layout::HASHES_META, DataType::Hash),
                (layout::SETS_META, DataType::Set),
                (layout::LISTS_META, DataType::List),
                (layout::ZSETS_META, DataType::ZSet),
            ]
        );
        for (r, t) in &ranges {
            let key = c.meta_record(b"\xff\xfekey", t.unwrap()).unwrap();
            assert_eq!(key.place, r.place);
            assert!(r.lower <= key.key && key.key < r.upper);
            assert_eq!(
                c.decode_meta_key(r.place, &key.key),
                Ok(Some(key.key.clone()))
            );
        }
        assert_eq!(c.decode_meta_key(layout::HASHES_DATA, b"k"), Ok(None));
    }

    #[test]
    fn flush_covers_every_family() {
        let c = BlackwidowCodec::default();
        let ranges = c.flush_ranges();
        assert_eq!(ranges.len(), 10);
        let meta = c.new_meta(DataType::ZSet, 0x6553_F1FF);
        for r in &ranges {
            let cmp: fn(&[u8], &[u8]) -> std::cmp::Ordering = match r.place {
                layout::LISTS_DATA => lists_data_key_compare,
                layout::ZSETS_SCORE => zsets_score_key_compare,
                _ => |a, b| a.cmp(b),
            };
            assert_eq!(cmp(&r.lower, &r.upper), Less);
            let samples: Vec<Vec<u8>> = match r.place {
                layout::LISTS_DATA => vec![
                    keys::list_key(b"", i32::MIN, 0),
                    keys::list_key(&[0xFF; 2000], i32::MAX, u64::MAX),
                    b"".to_vec(),
                    b"\x01".to_vec(),
                ],
                layout::ZSETS_SCORE => vec![
                    keys::score_key(b"", 0, f64::NEG_INFINITY, b""),
                    keys::score_key(&[0xFF; 2000], -1, f64::INFINITY, &[0xFF; 9]),
                    b"".to_vec(),
                ],
                _ => vec![
                    b"".to_vec(),
                    b"k".to_vec(),
                    c.sub_key(
                        SubKind::HashField.of(&[0xFF; 3], &meta),
                        SubIdRef::Name(&vec![0xFF; 2000]),
                    ),
                ],
            };
            for k in samples {
                assert_ne!(cmp(&r.lower, &k), Greater, "{:?}", r.place);
                assert_eq!(cmp(&k, &r.upper), Less, "{:?}", r.place);
            }
        }
    }
}
