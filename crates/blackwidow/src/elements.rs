//! Element records: where each kind lives, what follows the data-key
//! prefix, and the value.
//!
//! | kind | family | after the prefix | value |
//! |---|---|---|---|
//! | hash field | `hashes/data_cf` | field | raw value (`HSet`) |
//! | set member | `sets/member_cf` | member | empty (`SAdd`) |
//! | zset member | `zsets/data_cf` | member | score: f64 bits, u64 LE (`ZAdd`) |
//! | zset score | `zsets/score_cf` | score: f64 bits, u64 LE ‖ member | empty |
//! | list item | `lists/data_cf` | index u64 LE | raw item |

use byteorder::{ByteOrder, LittleEndian};
use redcodec_codec::elements;
use redcodec_codec::{
    DecodeError, Place, Reader, SparseIndex, SubId, SubIdRef, SubKind, SubValue, SubValueRef,
};

use crate::layout;

/// The family holding element records of `kind`.
pub fn place(kind: SubKind) -> Place {
    match kind {
        SubKind::HashField => layout::HASHES_DATA,
        SubKind::SetMember => layout::SETS_MEMBER,
        SubKind::ZSetMember => layout::ZSETS_DATA,
        SubKind::ZSetScore => layout::ZSETS_SCORE,
        SubKind::ListItem => layout::LISTS_DATA,
    }
}

/// The error-message name of a data key of `kind`.
pub fn key_record_name(kind: SubKind) -> &'static str {
    match kind {
        SubKind::HashField => "blackwidow hashes data key",
        SubKind::SetMember => "blackwidow sets member key",
        SubKind::ZSetMember => "blackwidow zsets data key",
        SubKind::ZSetScore => "blackwidow zsets score key",
        SubKind::ListItem => "blackwidow lists data key",
    }
}

/// Appends the bytes of `id` after a data key's prefix to `out`
/// ([`elements::put_le_sub`]; a sparse index, which blackwidow has not,
/// as its little-endian number).
pub fn put_sub(id: SubIdRef<'_>, out: &mut Vec<u8>) {
    if let Err(sparse) = elements::put_le_sub(id, out) {
        match sparse {
            SparseIndex::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
            SparseIndex::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
        }
    }
}

/// The bytes of `id` after a data key's prefix ([`put_sub`]).
pub fn sub_bytes(id: SubIdRef<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(elements::sub_id_len(id));
    put_sub(id, &mut out);
    out
}

/// Reads an 8-byte LE double; NaN is refused (blackwidow's `ZAdd` never
/// stores one, and its comparator cannot order one).
fn read_score(r: &mut Reader<'_>) -> Result<f64, DecodeError> {
    let score = f64::from_bits(r.u64_le()?);
    if score.is_nan() {
        return Err(r.invalid("score is NaN"));
    }
    Ok(score)
}

/// Decodes what follows the prefix of a data key of `kind`. A list index
/// must be exactly 8 bytes.
pub fn decode_sub(kind: SubKind, rest: &[u8]) -> Result<SubId, DecodeError> {
    let r = Reader::new(key_record_name(kind), rest);
    elements::read_sub_id(kind, r, read_score, Reader::u64_le)
}

/// The value bytes of an element record.
pub fn encode_value(kind: SubKind, value: SubValueRef<'_>) -> Vec<u8> {
    match kind {
        SubKind::SetMember | SubKind::ZSetScore => Vec::new(),
        SubKind::HashField | SubKind::ZSetMember | SubKind::ListItem => match value {
            SubValueRef::Score(s) => s.to_bits().to_le_bytes().to_vec(),
            SubValueRef::Bytes(b) | SubValueRef::Node { value: b, .. } => b.to_vec(),
            SubValueRef::Empty => Vec::new(),
        },
    }
}

/// Decodes an element record's value. Set-member and score-index values
/// are ignored, as blackwidow ignores them; a zset member's value must be
/// exactly 8 bytes and not NaN (blackwidow reads the first 8 bytes).
pub fn decode_value(kind: SubKind, raw: &[u8]) -> Result<SubValue, DecodeError> {
    elements::read_sub_value(kind, raw, "blackwidow zsets data value", read_score)
}

/// The score stored in 8 LE bytes (no NaN check).
pub fn score_of(bytes: &[u8; 8]) -> f64 {
    LittleEndian::read_f64(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zset_member_value() {
        let raw = encode_value(SubKind::ZSetMember, SubValue::Score(1.5).view());
        assert_eq!(raw, [0, 0, 0, 0, 0, 0, 0xF8, 0x3F]);
        assert_eq!(score_of(&[0, 0, 0, 0, 0, 0, 0xF8, 0xBF]), -1.5);
        assert_eq!(
            decode_value(SubKind::ZSetMember, &raw),
            Ok(SubValue::Score(1.5))
        );
        assert!(decode_value(SubKind::ZSetMember, &raw[..7]).is_err());
        assert!(decode_value(SubKind::ZSetMember, &[raw.clone(), vec![0]].concat()).is_err());
        let nan = f64::NAN.to_bits().to_le_bytes();
        assert!(decode_value(SubKind::ZSetMember, &nan).is_err());
    }

    #[test]
    fn ids() {
        let scored = SubId::Scored {
            score: -0.0,
            member: b"m".to_vec(),
        };
        let bytes = sub_bytes(scored.view());
        assert_eq!(bytes, [0, 0, 0, 0, 0, 0, 0, 0x80, b'm']);
        match decode_sub(SubKind::ZSetScore, &bytes).unwrap() {
            SubId::Scored { score, member } => {
                assert_eq!(score.to_bits(), (-0.0f64).to_bits());
                assert_eq!(member, b"m");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            decode_sub(SubKind::ListItem, &sub_bytes(SubIdRef::Index(1 << 63))),
            Ok(SubId::Index(1 << 63))
        );
        assert!(decode_sub(SubKind::ListItem, &[0; 9]).is_err());
        assert!(decode_sub(SubKind::ListItem, &[0; 7]).is_err());
        assert!(decode_sub(SubKind::ZSetScore, &[0; 7]).is_err());
        assert_eq!(
            decode_sub(SubKind::SetMember, b""),
            Ok(SubId::Name(Vec::new()))
        );
    }

    #[test]
    fn ignored_values() {
        assert!(encode_value(SubKind::SetMember, SubValue::Bytes(b"x".to_vec()).view()).is_empty());
        assert_eq!(
            decode_value(SubKind::SetMember, b"junk"),
            Ok(SubValue::Empty)
        );
        assert_eq!(
            decode_value(SubKind::ZSetScore, b"junk"),
            Ok(SubValue::Empty)
        );
    }
}
