//! [`KvrocksCodec`]: the [`Codec`] implementation tying the modules together.
//!
//! Where records live and what their sub bytes and values are:
//!
//! | kind | family | sub bytes | value |
//! |---|---|---|---|
//! | hash field | `default` | field | raw value |
//! | set member | `default` | member | empty |
//! | zset member | `default` | member | 8-byte encoded score |
//! | zset score index | `zset_score` | 8-byte encoded score ‖ member | empty |
//! | list item | `default` | index u64 BE | raw value |

use redcodec_codec::{
    Capabilities, Codec, DataType, Declaration, DecodeError, DeleteModel, Elements, EncodeError,
    GcDecision, KeyRange, KeyShape, ListModel, ListShift, Meta, MetaLookup, Namespaces, Place,
    Reader, Record, RelativeExpiry, ScoreIndex, SizeUnknown, SubId, SubIdRef, SubKind, SubOwner,
    SubValue, SubValueRef, TtlResolution, VersionWidth,
};

use crate::keys::KeyScheme;
use crate::{gc, layout, meta, score, version, KvrocksOptions, OptionsError};
use redcodec_codec::{elements, prefix_successor};

/// Kvrocks' lists: LINSERT and LREM move the shorter side.
const LIST_MODEL: ListModel = ListModel::Array {
    shift: ListShift::ShorterSideHeadOnTie,
};

/// Types whose metadata Kvrocks rewrites with size 0 when the last element
/// is removed: `HDEL` (`Hash::Delete`) and `ZREM` (`ZSet::Remove`) do;
/// `SREM` and list pops delete the metadata record.
const KEEPS_EMPTY_META: &[DataType] = &[DataType::Hash, DataType::ZSet];

/// The largest expiry redcodec writes: Kvrocks computes expiry times in
/// signed 64-bit milliseconds. Legacy (32-bit) records hold less; encoding
/// a later expiry into one is an [`EncodeError`].
const MAX_EXPIRE_MS: u64 = i64::MAX as u64;

/// The Kvrocks format for one namespace, standalone or cluster mode.
#[derive(Clone, Debug)]
pub struct KvrocksCodec {
    keys: KeyScheme,
    declared: Declaration,
}

impl KvrocksCodec {
    /// The format's name as the command line spells it
    /// ([`Codec::name`]).
    pub const NAME: &'static str = "kvrocks";

    /// A codec for `opts`; fails for a namespace Kvrocks could not store.
    pub fn new(opts: KvrocksOptions) -> Result<KvrocksCodec, OptionsError> {
        let keys = KeyScheme::new(&opts.namespace, opts.cluster)?;
        let capabilities = Capabilities {
            meta_lookup: MetaLookup::Shared,
            ttl: TtlResolution::Millis,
            max_expire_ms: MAX_EXPIRE_MS,
            version_width: VersionWidth::Bits64,
            collection_key_limit: None,
            delete: DeleteModel::DropMeta,
            keeps_empty_meta: KEEPS_EMPTY_META,
            list_model: LIST_MODEL,
            score_index: ScoreIndex::Exact,
            score_limit: None,
            namespaces: Namespaces::Prefix {
                slots: opts.cluster,
            },
            relative_expiry: RelativeExpiry::Exact,
            active_expiry: None,
            string_version: false,
            version_may_repeat: false,
            size_unknown: SizeUnknown::Never,
            key_in_one_instance: true,
        };
        Ok(KvrocksCodec {
            keys,
            declared: Declaration {
                name: Self::NAME,
                layout: layout::layout(),
                capabilities,
            },
        })
    }

    /// The key encoding in use (namespace and cluster mode).
    pub fn keys(&self) -> &KeyScheme {
        &self.keys
    }
}

impl Default for KvrocksCodec {
    /// The default namespace `__namespace`, standalone mode.
    fn default() -> Self {
        KvrocksCodec::new(KvrocksOptions::default()).expect("the default namespace is valid")
    }
}

/// Appends the bytes `id` takes in a subkey of `kind` to `out`, the
/// key's prefix: a field's or member's name; a score-index entry's
/// encoded score and member; a list item's big-endian index.
fn put_sub(kind: SubKind, id: SubIdRef<'_>, out: &mut Vec<u8>) {
    debug_assert!(
        id.is_of(kind, LIST_MODEL),
        "kvrocks: {id:?} is not an id of {kind:?}"
    );
    match id {
        SubIdRef::Name(name) => out.extend_from_slice(name),
        SubIdRef::Scored { score: s, member } => {
            out.extend_from_slice(&score::to_bytes(s));
            out.extend_from_slice(member);
        }
        SubIdRef::Index(i) => out.extend_from_slice(&i.to_be_bytes()),
        // Not Kvrocks ids; encoded as their integer so that nothing panics.
        SubIdRef::Seq(i) => out.extend_from_slice(&i.to_be_bytes()),
        SubIdRef::Sparse(redcodec_codec::SparseIndex::Int(i)) => {
            out.extend_from_slice(&i.to_be_bytes());
        }
        SubIdRef::Sparse(redcodec_codec::SparseIndex::Float(f)) => {
            out.extend_from_slice(&score::to_bytes(f));
        }
    }
}

/// Reads an 8-byte encoded score; NaN is never stored by Kvrocks.
fn read_score(r: &mut Reader<'_>) -> Result<f64, DecodeError> {
    let mut bytes = [0; 8];
    bytes.copy_from_slice(r.take(8)?);
    let s = score::from_bytes(bytes);
    if s.is_nan() {
        return Err(r.invalid("score is NaN"));
    }
    Ok(s)
}

impl Codec for KvrocksCodec {
    fn declaration(&self) -> &Declaration {
        &self.declared
    }

    fn next_version(&self, now_us: u64, counter: u64, _previous: Option<u64>) -> u64 {
        version::next_version(now_us, counter)
    }

    fn new_meta(&self, data_type: DataType, version: u64) -> Meta {
        meta::new_meta(data_type, version)
    }

    fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError> {
        // Subkeys hold the user key's length in a u32.
        if data_type.is_collection() {
            EncodeError::check_key_len(Self::NAME, data_type, key, u32::MAX as usize)?;
        }
        Ok(Record {
            place: layout::METADATA,
            key: self.keys.ns_key(key),
        })
    }

    fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
        meta::encode_with(meta, string)
    }

    fn decode_meta(&self, _data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
        meta::decode(raw)
    }

    fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)> {
        let lower = self.keys.namespace_prefix().to_vec();
        // KeyScheme::new guarantees the prefix has a successor.
        let upper = prefix_successor(&lower).unwrap_or_default();
        vec![(
            KeyRange {
                place: layout::METADATA,
                lower,
                upper,
            },
            None,
        )]
    }

    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        if place != layout::METADATA {
            return Ok(None);
        }
        Ok(self.keys.user_key_of(raw)?.map(<[u8]>::to_vec))
    }

    fn key_shape(&self, place: Place, raw: &[u8]) -> Option<KeyShape> {
        if place != layout::METADATA {
            return None;
        }
        // Every key of a namespace starts with its prefix, and no key of
        // another does: they end at the prefix's successor.
        KeyScheme::shape_of(raw).map(|(prefix, slotted)| KeyShape {
            namespace: prefix[1..].to_vec(),
            slotted,
            namespace_end: prefix_successor(prefix),
        })
    }

    fn flush_ranges(&self) -> Vec<KeyRange> {
        // Kvrocks' FLUSHDB range-deletes only the metadata family and leaves
        // subkeys to compaction; covering the subkey families too reaches the
        // state Kvrocks reaches after compaction.
        let lower = self.keys.namespace_prefix().to_vec();
        let upper = prefix_successor(&lower).unwrap_or_default();
        data_families(&lower, &upper)
    }

    fn flush_all_ranges(&self) -> Vec<KeyRange> {
        // Kvrocks' FLUSHALL: every namespace, from the first key on (every
        // key starts with its namespace's length byte).
        data_families(&[], &[0xFF; 1024])
    }

    fn sub_place(&self, kind: SubKind, _key: &[u8]) -> Place {
        match kind {
            SubKind::ZSetScore => layout::ZSET_SCORE,
            SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember | SubKind::ListItem => {
                layout::DEFAULT
            }
        }
    }

    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8> {
        let room = elements::sub_id_len(id);
        self.keys
            .sub_key_with(of.key, of.meta.version, room, |out| {
                put_sub(of.kind, id, out);
            })
    }

    fn sub_range(&self, of: Elements<'_>) -> KeyRange {
        let (lower, upper) = self.keys.sub_bounds(of.key, of.meta.version);
        KeyRange {
            place: self.sub_place(of.kind, of.key),
            lower,
            upper,
        }
    }

    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError> {
        let sub = self.keys.strip_sub_prefix(of.key, of.meta.version, raw)?;
        let r = Reader::new("kvrocks subkey", sub);
        elements::read_sub_id(of.kind, r, read_score, Reader::u64_be)
    }

    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8> {
        match of.kind {
            SubKind::SetMember | SubKind::ZSetScore => Vec::new(),
            SubKind::HashField | SubKind::ZSetMember | SubKind::ListItem => match value {
                SubValueRef::Score(s) => score::to_bytes(s).to_vec(),
                SubValueRef::Bytes(b) | SubValueRef::Node { value: b, .. } => b.to_vec(),
                SubValueRef::Empty => Vec::new(),
            },
        }
    }

    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError> {
        // Kvrocks never reads set-member and score-index values.
        elements::read_sub_value(of.kind, raw, "kvrocks zset member value", read_score)
    }

    fn gc_meta(&self, _place: Place, _key: &[u8], value: &[u8], now_ms: u64) -> GcDecision {
        gc::metadata_filter(value, now_ms)
    }

    fn gc_sub_owner(&self, place: Place, key: &[u8], _value: &[u8]) -> Option<SubOwner> {
        gc::subkey_owner(place, key, self.keys.cluster())
    }

    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision {
        gc::subkey_filter(owner.version, meta, now_ms)
    }
}

/// `lower..upper` in every family that holds a key's records.
fn data_families(lower: &[u8], upper: &[u8]) -> Vec<KeyRange> {
    [
        layout::METADATA,
        layout::DEFAULT,
        layout::ZSET_SCORE,
        layout::STREAM,
    ]
    .into_iter()
    .map(|place| KeyRange {
        place,
        lower: lower.to_vec(),
        upper: upper.to_vec(),
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_long_namespaces() {
        let opts = KvrocksOptions {
            namespace: vec![b'n'; 256],
            cluster: false,
        };
        assert_eq!(
            KvrocksCodec::new(opts).unwrap_err(),
            OptionsError::NamespaceTooLong { len: 256 }
        );
    }

    #[test]
    fn capabilities_follow_cluster_mode() {
        let c = KvrocksCodec::new(KvrocksOptions {
            cluster: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            c.capabilities().namespaces,
            Namespaces::Prefix { slots: true }
        );
        let d = KvrocksCodec::default();
        assert_eq!(
            d.capabilities().namespaces,
            Namespaces::Prefix { slots: false }
        );
        assert_eq!(
            d.capabilities().keeps_empty_meta,
            &[DataType::Hash, DataType::ZSet]
        );
        assert_eq!(d.name(), "kvrocks");
    }

    #[test]
    fn meta_range_is_the_namespace() {
        let c = KvrocksCodec::default();
        let ranges = c.meta_ranges();
        assert_eq!(ranges.len(), 1);
        let (range, ty) = &ranges[0];
        assert_eq!(*ty, None);
        assert_eq!(range.place, layout::METADATA);
        assert_eq!(range.lower, b"\x0b__namespace");
        assert_eq!(range.upper, b"\x0b__namespacf");
        let flush = c.flush_ranges();
        assert_eq!(flush.len(), 4);
        assert!(flush
            .iter()
            .all(|r| r.lower == range.lower && r.upper == range.upper));
    }
}
