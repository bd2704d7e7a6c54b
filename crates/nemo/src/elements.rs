//! Element records: keys (built on [`crate::keys`]) and values, each value
//! followed by the [`Suffix`] of its key's metadata.
//!
//! | kind | instance | element bytes after `tag ‖ len ‖ key` | value before the suffix |
//! |---|---|---|---|
//! | hash field | `hash` | `'=' ‖ field` | raw value |
//! | set member | `set` | member | empty |
//! | zset member | `zset` | member | score, f64 LE (exact) |
//! | zset score | `zset` | BE64(iscore) ‖ member | empty |
//! | list node | `list` | seq, i64 LE | `prev: i64 LE ‖ next: i64 LE ‖ value` |
//!
//! The version is not part of an element key: records of an older version
//! of the key (before `DEL`, or before it expired) share the key range
//! with the current ones until compaction drops them. nemo's read path
//! hides them (`data.version < meta.version` is "old version"); see
//! [`is_current`]. List node keys are not in numeric order (LE sequence
//! numbers): lists are walked through their links.

use redcodec_codec::{
    DecodeError, KeyRange, ListModel, Meta, Reader, SparseIndex, SubId, SubIdRef, SubKind,
    SubValue, SubValueRef,
};

use crate::keys;
use crate::layout;
use crate::score;
use crate::suffix::{Suffix, SUFFIX_LEN};
use redcodec_codec::prefix_successor;

/// The key tag of an element kind.
pub fn tag_of(kind: SubKind) -> u8 {
    match kind {
        SubKind::HashField => keys::HASH_FIELD,
        SubKind::SetMember => keys::SET_MEMBER,
        SubKind::ZSetMember => keys::ZSET_MEMBER,
        SubKind::ZSetScore => keys::ZSET_SCORE,
        SubKind::ListItem => keys::LIST_NODE,
    }
}

/// The instance holding elements of `kind`.
pub fn place_of(kind: SubKind) -> redcodec_codec::Place {
    match kind {
        SubKind::HashField => layout::HASH,
        SubKind::SetMember => layout::SET,
        SubKind::ZSetMember | SubKind::ZSetScore => layout::ZSET,
        SubKind::ListItem => layout::LIST,
    }
}

/// The element key of `id` under `key`.
///
/// Ids of another kind (which the engine never passes) are encoded as
/// their nearest nemo equivalent so that nothing panics.
pub fn key(kind: SubKind, key: &[u8], id: SubIdRef<'_>) -> Vec<u8> {
    debug_assert!(
        id.is_of(kind, ListModel::Linked),
        "nemo: {id:?} is not an id of {kind:?}"
    );
    let mut out = keys::element_prefix(tag_of(kind), key);
    match id {
        SubIdRef::Name(name) => out.extend_from_slice(name),
        SubIdRef::Scored { score: s, member } => {
            out.extend_from_slice(&score::to_bytes(s));
            out.extend_from_slice(member);
        }
        SubIdRef::Seq(seq) => out.extend_from_slice(&seq.to_le_bytes()),
        SubIdRef::Index(i) => out.extend_from_slice(&i.to_le_bytes()),
        SubIdRef::Sparse(SparseIndex::Int(i)) => out.extend_from_slice(&i.to_le_bytes()),
        SubIdRef::Sparse(SparseIndex::Float(f)) => out.extend_from_slice(&f.to_le_bytes()),
    }
    out
}

/// Every element record of `kind` of `key`, of any version:
/// `[prefix, prefix_successor(prefix))`.
pub fn range(kind: SubKind, key: &[u8]) -> KeyRange {
    let lower = keys::element_prefix(tag_of(kind), key);
    // The prefix starts with an ASCII tag, so it always has a successor.
    let upper = prefix_successor(&lower).unwrap_or_else(keys::unbounded_upper);
    KeyRange {
        place: place_of(kind),
        lower,
        upper,
    }
}

/// The id of an element key of `kind` under `key`.
pub fn decode_id(kind: SubKind, key: &[u8], raw: &[u8]) -> Result<SubId, DecodeError> {
    let rest = keys::strip_element_prefix(tag_of(kind), key, raw)?;
    let mut r = Reader::new("nemo element key", rest);
    let id = match kind {
        SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember => {
            SubId::Name(r.rest().to_vec())
        }
        SubKind::ZSetScore => {
            let iscore = r.u64_be()?;
            SubId::Scored {
                score: score::decode(iscore),
                member: r.rest().to_vec(),
            }
        }
        SubKind::ListItem => SubId::Seq(r.i64_le()?),
    };
    r.finish()?;
    Ok(id)
}

/// The value of an element record written under `meta`, suffix included.
pub fn encode_value(kind: SubKind, meta: &Meta, value: SubValueRef<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    match (kind, value) {
        (SubKind::SetMember | SubKind::ZSetScore, _) => {}
        (SubKind::ZSetMember, SubValueRef::Score(s)) => out.extend_from_slice(&s.to_le_bytes()),
        (SubKind::ListItem, SubValueRef::Node { prev, next, value }) => {
            out.extend_from_slice(&prev.to_le_bytes());
            out.extend_from_slice(&next.to_le_bytes());
            out.extend_from_slice(value);
        }
        // A list value given without links is an unlinked node.
        (SubKind::ListItem, SubValueRef::Bytes(b)) => {
            out.extend_from_slice(&[0; 16]);
            out.extend_from_slice(b);
        }
        (_, SubValueRef::Bytes(b) | SubValueRef::Node { value: b, .. }) => out.extend_from_slice(b),
        (_, SubValueRef::Score(s)) => out.extend_from_slice(&s.to_le_bytes()),
        (_, SubValueRef::Empty) => {}
    }
    Suffix::of_elements(meta).append_to(&mut out);
    out
}

/// Decodes an element value of `kind`. The suffix is required and not
/// interpreted (see [`is_current`]).
pub fn decode_value(kind: SubKind, raw: &[u8]) -> Result<SubValue, DecodeError> {
    let record = record_name(kind);
    let (payload, _) = Suffix::split(record, raw)?;
    let mut r = Reader::new(record, payload);
    let value = match kind {
        // nemo never reads these payloads; whatever is stored is ignored.
        SubKind::SetMember | SubKind::ZSetScore => {
            r.rest();
            SubValue::Empty
        }
        SubKind::HashField => SubValue::Bytes(r.rest().to_vec()),
        SubKind::ZSetMember => {
            let s = r.f64_le()?;
            if s.is_nan() {
                return Err(r.invalid("score is NaN"));
            }
            SubValue::Score(s)
        }
        SubKind::ListItem => SubValue::Node {
            prev: r.i64_le()?,
            next: r.i64_le()?,
            value: r.rest().to_vec(),
        },
    };
    r.finish()?;
    Ok(value)
}

/// Whether an element value read under `meta` belongs to the key's current
/// version, as nemo's read path decides (`SanityCheckVersionAndTS`,
/// `NemoIterator::IsAlive`): a value too short to hold the suffix, or whose
/// version is below the metadata's (`u32` comparison), is not.
pub fn is_current(meta: &Meta, raw: &[u8]) -> bool {
    if raw.len() < SUFFIX_LEN {
        return false;
    }
    let Some(suffix) = Suffix::peek(raw) else {
        return false;
    };
    let meta_version = u32::try_from(meta.version).unwrap_or(u32::MAX);
    suffix.version >= meta_version
}

fn record_name(kind: SubKind) -> &'static str {
    match kind {
        SubKind::HashField => "nemo hash field value",
        SubKind::SetMember => "nemo set member value",
        SubKind::ZSetMember => "nemo zset member value",
        SubKind::ZSetScore => "nemo zset score value",
        SubKind::ListItem => "nemo list node value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_codec::DataType;

    fn meta(version: u64) -> Meta {
        crate::meta::new_meta(DataType::ZSet, version)
    }

    #[test]
    fn keys_of_every_kind() {
        let name = SubId::Name(b"f".to_vec());
        assert_eq!(key(SubKind::HashField, b"h", name.view()), b"h\x01h=f");
        assert_eq!(key(SubKind::SetMember, b"s", name.view()), b"s\x01sf");
        assert_eq!(key(SubKind::ZSetMember, b"z", name.view()), b"z\x01zf");
        assert_eq!(
            key(SubKind::ListItem, b"l", SubIdRef::Seq(1)),
            b"l\x01l\x01\0\0\0\0\0\0\0"
        );
        let scored = SubId::Scored {
            score: 1.5,
            member: b"m".to_vec(),
        };
        assert_eq!(
            key(SubKind::ZSetScore, b"z", scored.view()),
            b"y\x01z\x0d\xe0\xb6\xb3\xa7\x66\x49\xf0m"
        );
    }

    #[test]
    fn ranges_hold_only_their_key() {
        let r = range(SubKind::HashField, b"k");
        assert_eq!(r.lower, b"h\x01k=");
        assert_eq!(r.upper, b"h\x01k>");
        let r = range(SubKind::SetMember, b"\xff");
        assert_eq!(r.lower, b"s\x01\xff");
        assert_eq!(r.upper, b"s\x02");
        let inside = key(SubKind::SetMember, b"\xff", SubIdRef::Name(&[0xFF; 9]));
        assert!(r.lower <= inside && inside < r.upper);
        let other = key(SubKind::SetMember, b"\xfe", SubIdRef::Name(&[0xFF; 9]));
        assert!(other < r.lower);
    }

    #[test]
    fn values_carry_the_meta_suffix() {
        let m = meta(0x6553_F100);
        let v = encode_value(SubKind::ZSetMember, &m, SubValue::Score(1.5).view());
        assert_eq!(v, b"\0\0\0\0\0\0\xf8\x3f\x00\xf1\x53\x65\0\0\0\0");
        assert_eq!(
            decode_value(SubKind::ZSetMember, &v),
            Ok(SubValue::Score(1.5))
        );
        assert!(decode_value(SubKind::ZSetMember, &v[1..]).is_err());
        let node = SubValue::Node {
            prev: 3,
            next: -1,
            value: b"x".to_vec(),
        };
        let v = encode_value(SubKind::ListItem, &m, node.view());
        assert_eq!(v.len(), 16 + 1 + 8);
        assert_eq!(decode_value(SubKind::ListItem, &v), Ok(node));
        assert!(decode_value(SubKind::ListItem, &v[..15 + 8]).is_err());
        let v = encode_value(SubKind::SetMember, &m, SubValue::Empty.view());
        assert_eq!(v.len(), 8);
        assert_eq!(decode_value(SubKind::SetMember, &v), Ok(SubValue::Empty));
        assert!(decode_value(SubKind::SetMember, &v[..7]).is_err());
    }

    #[test]
    fn currency_follows_the_version() {
        let v = encode_value(
            SubKind::HashField,
            &meta(10),
            SubValue::Bytes(b"v".to_vec()).view(),
        );
        assert!(is_current(&meta(10), &v));
        assert!(is_current(&meta(9), &v));
        assert!(!is_current(&meta(11), &v));
        assert!(!is_current(&meta(0), &v[..7]));
    }
}
