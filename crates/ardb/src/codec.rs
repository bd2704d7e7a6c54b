//! [`ArdbCodec`]: the [`Codec`] implementation tying the modules together.
//!
//! Every record of a namespace lives in the namespace's column family, in
//! `ardb.comparator` order: a key's `META` record, then its element records
//! by type (hash fields 4, list items 6, set members 8, score index 10,
//! zset members 11), then the next user key.

use redcodec_codec::{
    ActiveExpiry, Capabilities, Codec, DataType, Declaration, DecodeError, DeleteModel, Elements,
    EncodeError, GcDecision, KeyRange, ListModel, Meta, MetaLookup, Namespaces, Place, Record,
    RelativeExpiry, ScoreIndex, SizeUnknown, SubId, SubIdRef, SubKind, SubOwner, SubValue,
    SubValueRef, TtlResolution, VersionWidth,
};

use crate::keys::{self, key_type, ParsedKey};
use crate::{elements, gc, layout, meta, ArdbOptions, OptionsError};

/// Ardb's default `range-delete-min-size` (`config.hpp`, `ardb.conf`).
pub const RANGE_DELETE_MIN_SIZE: u64 = 100;

/// How often Ardb's cron task deletes the expired keys its compaction
/// filter collected (`SlowCronTask`, `src/cron.cpp`).
pub const EXPIRY_PERIOD_MS: u64 = 1000;

/// The largest expiry: Ardb stores it as a signed 64-bit varint.
const MAX_EXPIRE_MS: u64 = i64::MAX as u64;

/// The lower bound of every range over a whole family: the key `00`
/// (empty user key, no type), which sorts before every other key.
pub const FAMILY_LOWER: &[u8] = &[0x00];

/// The upper bound of every range over a whole family: the empty key, which
/// `ardb.comparator` places after every other key.
pub const FAMILY_UPPER: &[u8] = &[];

/// The Ardb format (RocksDB engine) for one namespace.
#[derive(Clone, Debug)]
pub struct ArdbCodec {
    namespace: Vec<u8>,
    declared: Declaration,
}

impl ArdbCodec {
    /// The format's name as the command line spells it
    /// ([`Codec::name`]).
    pub const NAME: &'static str = "ardb";

    /// A codec for `opts`; fails for a namespace redcodec cannot open as a
    /// column family (see [`OptionsError`]).
    pub fn new(opts: ArdbOptions) -> Result<ArdbCodec, OptionsError> {
        let name = layout::intern(crate::check_namespace(&opts.namespace)?);
        let capabilities = Capabilities {
            meta_lookup: MetaLookup::Shared,
            ttl: TtlResolution::Millis,
            max_expire_ms: MAX_EXPIRE_MS,
            version_width: VersionWidth::None,
            collection_key_limit: None,
            delete: DeleteModel::RemoveElements {
                min_size: RANGE_DELETE_MIN_SIZE,
            },
            keeps_empty_meta: &[],
            list_model: ListModel::Sparse,
            score_index: ScoreIndex::Exact,
            score_limit: None,
            namespaces: Namespaces::ColumnFamily,
            relative_expiry: RelativeExpiry::Exact,
            active_expiry: Some(ActiveExpiry {
                period_ms: EXPIRY_PERIOD_MS,
            }),
            string_version: false,
            version_may_repeat: false,
            // A stored size of −1 decodes with this bit set.
            size_unknown: SizeUnknown::VariantBit(meta::VARIANT_SIZE_UNKNOWN),
            key_in_one_instance: true,
        };
        Ok(ArdbCodec {
            namespace: opts.namespace,
            declared: Declaration {
                name: Self::NAME,
                layout: layout::layout(name),
                capabilities,
            },
        })
    }

    /// The namespace (the name of its column family).
    pub fn namespace(&self) -> &[u8] {
        &self.namespace
    }

    /// Every record of the namespace family: `[00, "")`.
    pub fn family_range(&self) -> KeyRange {
        KeyRange {
            place: layout::NAMESPACE,
            lower: FAMILY_LOWER.to_vec(),
            upper: FAMILY_UPPER.to_vec(),
        }
    }
}

impl Default for ArdbCodec {
    /// The default namespace `"0"`.
    fn default() -> Self {
        ArdbCodec::new(ArdbOptions::default()).expect("the default namespace is valid")
    }
}

impl Codec for ArdbCodec {
    fn declaration(&self) -> &Declaration {
        &self.declared
    }

    /// Ardb has no versions.
    fn next_version(&self, _now_us: u64, _counter: u64, _previous: Option<u64>) -> u64 {
        0
    }

    /// `version` is ignored: Ardb stores none, and decoded metadata has 0.
    fn new_meta(&self, data_type: DataType, _version: u64) -> Meta {
        meta::new_meta(data_type)
    }

    fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError> {
        // The key's length is a varuint32.
        EncodeError::check_key_len(Self::NAME, data_type, key, u32::MAX as usize)?;
        Ok(Record {
            place: layout::NAMESPACE,
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
        vec![(self.family_range(), None)]
    }

    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        if place != layout::NAMESPACE {
            return Ok(None);
        }
        let key = ParsedKey::parse(raw)?;
        Ok((key.ty == Some(key_type::META)).then(|| key.user_key.to_vec()))
    }

    fn flush_ranges(&self) -> Vec<KeyRange> {
        vec![self.family_range()]
    }

    fn sub_place(&self, _kind: SubKind, _key: &[u8]) -> Place {
        layout::NAMESPACE
    }

    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
        elements::sub_key(of.kind, of.key, id)
    }

    fn sub_range(&self, of: Elements<'_>) -> KeyRange {
        let (lower, upper) = elements::sub_bounds(of.kind, of.key);
        KeyRange {
            place: layout::NAMESPACE,
            lower,
            upper,
        }
    }

    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
        elements::decode_sub_key(of.kind, of.key, raw)
    }

    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
        elements::encode_value(of.kind, value)
    }

    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
        elements::decode_value(of.kind, raw)
    }

    fn gc_meta(&self, _place: Place, _key: &[u8], value: &[u8], _now_ms: u64) -> GcDecision {
        gc::compaction_filter(value)
    }

    /// No family has the `SubKeys` rule: elements are not judged by owner.
    fn gc_sub_owner(&self, _place: Place, _key: &[u8], _value: &[u8]) -> Option<SubOwner> {
        None
    }

    fn gc_sub(&self, _owner: &SubOwner, _meta: Option<&[u8]>, _now_ms: u64) -> GcDecision {
        GcDecision::Keep
    }

    /// An element record's key names its user key (§1–§2 of
    /// `formats-spec/ardb.md`): its owner is that key's `META` record.
    fn sub_owner(&self, place: Place, key: &[u8], _value: &[u8]) -> Option<SubOwner> {
        let user_key = keys::element_owner(key)?;
        Some(SubOwner {
            meta: Record {
                place,
                key: keys::meta_key(user_key),
            },
            version: 0,
        })
    }

    /// Widens the min/max members ([`meta::widen_bounds`]).
    fn note_member(&self, meta: &mut Meta, member: &[u8]) {
        meta::widen_bounds(meta, member);
    }

    /// Every record of `key`, as Ardb's `DEL` range-deletes it:
    /// `[enc(META, key), enc(END, key))`, covering types 1–30.
    fn key_range(&self, key: &[u8]) -> Option<KeyRange> {
        Some(KeyRange {
            place: layout::NAMESPACE,
            lower: keys::meta_key(key),
            upper: keys::end_key(key),
        })
    }

    /// The key Ardb's compaction filter hands to `AddExpiredKey`
    /// ([`gc::expired_meta_key`]).
    fn gc_expired_key(
        &self,
        place: Place,
        key: &[u8],
        value: &[u8],
        now_ms: u64,
    ) -> Option<Vec<u8>> {
        if place != layout::NAMESPACE {
            return None;
        }
        gc::expired_meta_key(key, value, now_ms).map(<[u8]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::compare_keys;
    use std::cmp::Ordering;

    #[test]
    fn capabilities() {
        let c = ArdbCodec::default();
        let caps = c.capabilities();
        assert_eq!(caps.meta_lookup, MetaLookup::Shared);
        assert_eq!(caps.ttl, TtlResolution::Millis);
        assert_eq!(caps.version_width, VersionWidth::None);
        assert_eq!(caps.delete, DeleteModel::RemoveElements { min_size: 100 });
        assert!(caps.keeps_empty_meta.is_empty());
        assert_eq!(caps.list_model, ListModel::Sparse);
        assert_eq!(caps.score_index, ScoreIndex::Exact);
        assert_eq!(caps.namespaces, Namespaces::ColumnFamily);
        assert_eq!(caps.collection_key_limit, None);
        assert_eq!(caps.score_limit, None);
        assert_eq!(caps.active_expiry, Some(ActiveExpiry { period_ms: 1000 }));
        assert_eq!(c.name(), "ardb");
        assert_eq!(c.next_version(1, 2, Some(3)), 0);
        assert_eq!(c.namespace(), b"0");
    }

    #[test]
    fn family_range_covers_every_key() {
        let c = ArdbCodec::default();
        let r = c.family_range();
        for k in [
            vec![0u8],
            keys::meta_key(b""),
            keys::end_key(&[0xFF; 100]),
            vec![0x80],
            vec![0xFF, 0xFF],
        ] {
            assert_ne!(compare_keys(&r.lower, &k), Ordering::Greater);
            assert_eq!(compare_keys(&k, &r.upper), Ordering::Less);
        }
        assert_eq!(c.flush_ranges(), vec![r.clone()]);
        assert_eq!(c.meta_ranges(), vec![(r, None)]);
    }

    #[test]
    fn engine_hooks() {
        let c = ArdbCodec::default();
        let mut hash = c.new_meta(DataType::Hash, 0);
        assert!(!c.capabilities().size_unknown(&hash));
        hash.variant = meta::VARIANT_SIZE_UNKNOWN;
        assert!(c.capabilities().size_unknown(&hash));
        let range = c.key_range(b"h").unwrap();
        assert_eq!(range.lower, [0x01, b'h', 0x01, 0x00]);
        assert_eq!(range.upper, [0x01, b'h', 0x1f, 0x00]);
        // ttl 1 ms: expired now, reported for the namespace family only.
        let expired = [0x03, 0x00, 0x02, 0x02, 0x00];
        let key = keys::meta_key(b"h");
        assert_eq!(
            c.gc_expired_key(layout::NAMESPACE, &key, &expired, 2),
            Some(b"h".to_vec())
        );
        assert_eq!(c.gc_expired_key(layout::DEFAULT, &key, &expired, 2), None);
        assert_eq!(c.gc_expired_key(layout::NAMESPACE, &key, &expired, 1), None);
    }
}
