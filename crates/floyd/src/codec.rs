//! [`FloydCodec`]: the [`Codec`] implementation tying the modules
//! together.

use redcodec_codec::{
    Capabilities, Codec, DataType, Declaration, DecodeError, DeleteModel, Elements, EncodeError,
    GcDecision, KeyRange, ListModel, ListShift, Meta, MetaLookup, Namespaces, Place, Record,
    RelativeExpiry, ScoreIndex, SizeUnknown, SubId, SubIdRef, SubKind, SubOwner, SubValue,
    SubValueRef, TtlResolution, VersionWidth,
};
use thiserror::Error;

use crate::{elements, gc, keys, layout, meta, route, version};

/// The latest storable expiry, 2^63 − 1 ms: bit 63 of a stored time is
/// the millisecond flag.
pub const MAX_EXPIRE_MS: u64 = meta::MILLIS_FLAG - 1;

/// How a Pika 4 database spreads its keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloydOptions {
    /// `db-instance-num`: RocksDB instances (default 3).
    pub instances: usize,
    /// `default-slot-num`: slots a key's CRC-32 is reduced to before the
    /// instance is chosen (1024 in Pika's shipped configuration).
    pub slot_num: u32,
}

impl Default for FloydOptions {
    fn default() -> Self {
        FloydOptions {
            instances: 3,
            slot_num: 1024,
        }
    }
}

/// Options a Pika 4 store cannot have.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptionsError {
    /// `instances` outside 1 to [`layout::MAX_INSTANCES`].
    #[error("floyd: {0} instances; redcodec opens 1 to 16 (Pika's db-instance-num)")]
    Instances(usize),
    /// `slot_num` of 0.
    #[error("floyd: default-slot-num must be at least 1")]
    SlotNum,
}

/// The Pika 4.x floyd format.
#[derive(Clone, Debug)]
pub struct FloydCodec {
    options: FloydOptions,
    declared: Declaration,
}

impl FloydCodec {
    /// The format's name as the command line spells it
    /// ([`Codec::name`]).
    pub const NAME: &'static str = "floyd";

    /// The codec for a store of `options`.
    pub fn new(options: FloydOptions) -> Result<FloydCodec, OptionsError> {
        if !(1..=layout::MAX_INSTANCES).contains(&options.instances) {
            return Err(OptionsError::Instances(options.instances));
        }
        if options.slot_num == 0 {
            return Err(OptionsError::SlotNum);
        }
        let declared = Declaration {
            name: Self::NAME,
            layout: layout::layout(options.instances),
            capabilities: Capabilities {
                meta_lookup: MetaLookup::Shared,
                ttl: TtlResolution::Millis,
                max_expire_ms: MAX_EXPIRE_MS,
                version_width: VersionWidth::Bits64,
                collection_key_limit: None,
                delete: DeleteModel::ResetMeta,
                // Every collection type keeps its metadata with count 0 when its last element
                // goes (`HDel`, `SRem`, `ZRem`, pops and `LRem` rewrite the metadata with the
                // new count).
                keeps_empty_meta: &DataType::COLLECTIONS,
                // LINSERT moves the half the pivot lies in, LREM the
                // shorter side (src/redis_lists.cc), as blackwidow.
                list_model: ListModel::Array {
                    shift: ListShift::PivotHalfHeadOnTie,
                },
                score_index: ScoreIndex::Exact,
                score_limit: None,
                namespaces: Namespaces::None,
                relative_expiry: RelativeExpiry::Exact,
                active_expiry: None,
                string_version: true,
                version_may_repeat: true,
                size_unknown: SizeUnknown::Never,
                key_in_one_instance: true,
            },
        };
        Ok(FloydCodec { declared, options })
    }

    /// The options the codec was made with.
    pub fn options(&self) -> &FloydOptions {
        &self.options
    }

    /// The instance holding `key`.
    pub fn instance_of(&self, key: &[u8]) -> usize {
        route::instance(key, self.options.slot_num, self.options.instances)
    }

    fn place(&self, key: &[u8], cf: usize) -> Place {
        Place::new(self.instance_of(key), cf)
    }
}

impl Default for FloydCodec {
    fn default() -> Self {
        FloydCodec::new(FloydOptions::default()).expect("the default options are valid")
    }
}

/// Every key Pika writes starts with the zero reserve: `[Z(8), Z(7) 01)`
/// holds them all in a bytewise family.
fn reserve_range() -> (Vec<u8>, Vec<u8>) {
    let lower = vec![0; keys::PREFIX_RESERVE_LEN];
    let upper = keys::successor(&lower);
    (lower, upper)
}

/// The whole-family range of the family `cf` (§2.4).
fn family_range(cf: usize) -> (Vec<u8>, Vec<u8>) {
    match cf {
        // Empty user key with nothing after it, to the same with the
        // reserve's last byte 01.
        layout::LIST_DATA_CF => {
            let lower = vec![0; keys::PREFIX_RESERVE_LEN + 2];
            let mut upper = lower.clone();
            upper[keys::PREFIX_RESERVE_LEN - 1] = 1;
            (lower, upper)
        }
        // The smallest well-formed key (empty user key, version 0, −inf),
        // to a malformed key, which sorts after every well-formed one.
        layout::ZSET_SCORE_CF => (
            keys::score_bounds(b"", 0).0,
            vec![0xFF; keys::SUFFIX_RESERVE_LEN],
        ),
        _ => reserve_range(),
    }
}

impl Codec for FloydCodec {
    fn declaration(&self) -> &Declaration {
        &self.declared
    }

    fn next_version(&self, now_us: u64, _counter: u64, previous: Option<u64>) -> u64 {
        version::next_version(now_us, previous)
    }

    fn new_meta(&self, data_type: DataType, version: u64) -> Meta {
        meta::new_meta(data_type, version)
    }

    fn reset_meta(&self, old: &Meta, version: u64) -> Meta {
        meta::reset_meta(old, version)
    }

    fn meta_record(&self, key: &[u8], _data_type: DataType) -> Result<Record, EncodeError> {
        Ok(Record {
            place: self.place(key, layout::META_CF),
            key: keys::meta_key(key),
        })
    }

    fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
        meta::encode_with(meta, string)
    }

    fn decode_meta(&self, _data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
        meta::decode(raw)
    }

    fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)> {
        (0..self.declared.layout.instances.len())
            .map(|i| {
                let (lower, upper) = reserve_range();
                (
                    KeyRange {
                        place: layout::meta_place(i),
                        lower,
                        upper,
                    },
                    None,
                )
            })
            .collect()
    }

    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        if place.cf != layout::META_CF {
            return Ok(None);
        }
        let key = keys::decode_meta_key(raw)?;
        let home = self.instance_of(&key);
        if home != place.instance {
            return Err(DecodeError::Invalid {
                record: "floyd metadata key",
                reason: format!(
                    "found in instance {}, the key belongs in instance {home} \
                     ({} instances, {} slots)",
                    place.instance, self.options.instances, self.options.slot_num
                ),
            });
        }
        Ok(Some(key))
    }

    fn flush_ranges(&self) -> Vec<KeyRange> {
        self.declared
            .layout
            .places()
            .map(|place| {
                let (lower, upper) = family_range(place.cf);
                KeyRange {
                    place,
                    lower,
                    upper,
                }
            })
            .collect()
    }

    fn sub_place(&self, kind: SubKind, key: &[u8]) -> Place {
        self.place(key, elements::cf(kind))
    }

    fn sub_places(&self, kind: SubKind) -> Vec<Place> {
        (0..self.declared.layout.instances.len())
            .map(|i| Place::new(i, elements::cf(kind)))
            .collect()
    }

    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
        let room = redcodec_codec::elements::sub_id_len(id);
        keys::data_key_with(of.key, of.meta.version, room, |out| {
            elements::put_sub(id, out);
        })
    }

    fn sub_range(&self, of: Elements<'_>) -> KeyRange {
        let (lower, upper) = keys::sub_bounds(of.kind, of.key, of.meta.version);
        KeyRange {
            place: self.sub_place(of.kind, of.key),
            lower,
            upper,
        }
    }

    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
        let prefix = keys::prefix(of.key, of.meta.version);
        let rest = keys::sub_bytes(elements::key_record_name(of.kind), &prefix, raw)?;
        elements::decode_sub(of.kind, rest)
    }

    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
        elements::encode_value(of.kind, value, of.meta.version & !meta::MILLIS_FLAG)
    }

    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
        elements::decode_value(of.kind, raw)
    }

    fn gc_meta(&self, place: Place, _key: &[u8], value: &[u8], now_ms: u64) -> GcDecision {
        if place.cf != layout::META_CF {
            return GcDecision::Keep;
        }
        gc::filter_meta(value, now_ms)
    }

    fn gc_sub_owner(&self, place: Place, key: &[u8], _value: &[u8]) -> Option<SubOwner> {
        gc::data_owner(place, key)
    }

    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
        gc::data_filter(owner, meta, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::{lists_data_key_compare, zsets_score_key_compare};
    use std::cmp::Ordering::{self, Less};

    #[test]
    fn capabilities_and_options() {
        let c = FloydCodec::default();
        let caps = c.capabilities();
        assert_eq!(caps.meta_lookup, MetaLookup::Shared);
        assert_eq!(caps.ttl, TtlResolution::Millis);
        assert_eq!(caps.max_expire_ms, (1 << 63) - 1);
        assert_eq!(caps.version_width, VersionWidth::Bits64);
        assert_eq!(caps.delete, DeleteModel::ResetMeta);
        assert_eq!(caps.keeps_empty_meta.len(), 4);
        assert!(caps.string_version);
        assert_eq!(c.name(), "floyd");
        assert_eq!(c.layout().instances.len(), 3);
        assert_eq!(
            FloydCodec::new(FloydOptions {
                instances: 0,
                slot_num: 1
            })
            .unwrap_err(),
            OptionsError::Instances(0)
        );
        assert_eq!(
            FloydCodec::new(FloydOptions {
                instances: 3,
                slot_num: 0
            })
            .unwrap_err(),
            OptionsError::SlotNum
        );
        let one = FloydCodec::new(FloydOptions {
            instances: 1,
            slot_num: 1024,
        })
        .unwrap();
        assert_eq!(
            one.meta_record(b"h", DataType::Hash).unwrap().place,
            Place::new(0, 0)
        );
    }

    #[test]
    fn keys_live_in_their_instance() {
        let c = FloydCodec::default();
        let meta = c.new_meta(DataType::Hash, 9);
        for key in [&b"foo"[..], b"h", b"z", b"{user}a", b""] {
            let i = c.instance_of(key);
            let rec = c.meta_record(key, DataType::String).unwrap();
            assert_eq!(rec.place, Place::new(i, 0));
            assert_eq!(
                c.decode_meta_key(rec.place, &rec.key),
                Ok(Some(key.to_vec()))
            );
            let other = Place::new((i + 1) % 3, 0);
            assert!(c.decode_meta_key(other, &rec.key).is_err());
            for kind in [SubKind::HashField, SubKind::ListItem, SubKind::ZSetScore] {
                assert_eq!(c.sub_place(kind, key).instance, i);
                assert_eq!(c.sub_range(kind.of(key, &meta)).place.instance, i);
                assert!(c.sub_places(kind).contains(&c.sub_place(kind, key)));
            }
        }
        assert_eq!(c.decode_meta_key(Place::new(0, 1), b"x"), Ok(None));
    }

    #[test]
    fn ranges_hold_what_they_must() {
        let c = FloydCodec::default();
        let keyset: [&[u8]; 4] = [b"", b"\x00", b"k", &[0xFF; 300]];
        for r in c.flush_ranges() {
            let cmp: fn(&[u8], &[u8]) -> Ordering = match r.place.cf {
                layout::LIST_DATA_CF => lists_data_key_compare,
                layout::ZSET_SCORE_CF => zsets_score_key_compare,
                _ => |a, b| a.cmp(b),
            };
            assert_eq!(cmp(&r.lower, &r.upper), Less);
            for key in keyset {
                for version in [0, 7, u64::MAX] {
                    let m = c.new_meta(DataType::ZSet, version);
                    let samples = [
                        keys::meta_key(key),
                        keys::list_key(key, version, u64::MAX),
                        keys::score_key(key, version, f64::INFINITY, &[0xFF; 9]),
                        c.sub_key(SubKind::HashField.of(key, &m), SubIdRef::Name(&[0xFF; 40])),
                    ];
                    for s in samples {
                        assert!(cmp(&r.lower, &s) != Ordering::Greater, "{:?}", r.place);
                        assert_eq!(cmp(&s, &r.upper), Less, "{:?}", r.place);
                    }
                }
            }
        }
        // One key version's range holds its elements, not its neighbours'.
        for kind in [SubKind::HashField, SubKind::ListItem, SubKind::ZSetScore] {
            let cmp: fn(&[u8], &[u8]) -> Ordering = match kind {
                SubKind::ListItem => lists_data_key_compare,
                SubKind::ZSetScore => zsets_score_key_compare,
                _ => |a, b| a.cmp(b),
            };
            for version in [0u64, 255, u64::MAX] {
                let m = c.new_meta(DataType::ZSet, version);
                let r = c.sub_range(kind.of(b"k", &m));
                let id = |i: u64| match kind {
                    SubKind::ListItem => SubId::Index(i),
                    SubKind::ZSetScore => SubId::Scored {
                        score: f64::NEG_INFINITY,
                        member: vec![],
                    },
                    _ => SubId::Name(vec![0xFF; i as usize]),
                };
                for i in [0, 1, u64::from(u8::MAX)] {
                    let inside = c.sub_key(kind.of(b"k", &m), id(i).view());
                    assert!(cmp(&r.lower, &inside) != Ordering::Greater);
                    assert_eq!(cmp(&inside, &r.upper), Less);
                }
                let neighbours = [
                    c.sub_key(
                        kind.of(b"k\x00", &c.new_meta(DataType::ZSet, 0)),
                        id(0).view(),
                    ),
                    c.sub_key(kind.of(b"j", &m), id(0).view()),
                ];
                for n in neighbours {
                    let inside =
                        cmp(&r.lower, &n) != Ordering::Greater && cmp(&n, &r.upper) == Less;
                    assert!(!inside, "{kind:?} {version}");
                }
                if version > 0 {
                    let older = c.sub_key(
                        kind.of(b"k", &c.new_meta(DataType::ZSet, version - 1)),
                        (id(0)).view(),
                    );
                    assert_eq!(cmp(&older, &r.lower), Less);
                }
            }
        }
    }
}
