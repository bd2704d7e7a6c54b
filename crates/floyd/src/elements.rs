//! Element records: their families, the bytes after the version in their
//! keys, and their values (`BaseDataValue`, `src/base_data_value_format.h`):
//!
//! ```text
//! value   payload ‖ reserve(16) ‖ ctime u64 (ms | 1<<63)
//! ```
//!
//! | record | family | after the version | payload |
//! |---|---|---|---|
//! | hash field | `hash_data_cf` | field | value |
//! | set member | `set_data_cf` | member | empty |
//! | zset member | `zset_data_cf` | member | score, 8 bytes IEEE-754 |
//! | zset score | `zset_score_cf` | score ‖ member | empty |
//! | list item | `list_data_cf` | index u64 | element |

use redcodec_codec::{
    elements, DecodeError, Reader, SubId, SubIdRef, SubKind, SubValue, SubValueRef,
};

use crate::layout;
use crate::meta::{encode_time, RESERVE_LEN};

/// Bytes after an element value's payload: reserve and ctime.
pub const VALUE_SUFFIX_LEN: usize = RESERVE_LEN + 8;

/// The column family (within the key's instance) of `kind`.
pub fn cf(kind: SubKind) -> usize {
    match kind {
        SubKind::HashField => layout::HASH_DATA_CF,
        SubKind::SetMember => layout::SET_DATA_CF,
        SubKind::ListItem => layout::LIST_DATA_CF,
        SubKind::ZSetMember => layout::ZSET_DATA_CF,
        SubKind::ZSetScore => layout::ZSET_SCORE_CF,
    }
}

/// The error-message name of the key of `kind`.
pub fn key_record_name(kind: SubKind) -> &'static str {
    match kind {
        SubKind::HashField => "floyd hash field key",
        SubKind::SetMember => "floyd set member key",
        SubKind::ZSetMember => "floyd zset member key",
        SubKind::ZSetScore => "floyd zset score key",
        SubKind::ListItem => "floyd list item key",
    }
}

fn value_record_name(kind: SubKind) -> &'static str {
    match kind {
        SubKind::HashField => "floyd hash field value",
        SubKind::SetMember => "floyd set member value",
        SubKind::ZSetMember => "floyd zset member value",
        SubKind::ZSetScore => "floyd zset score value",
        SubKind::ListItem => "floyd list item value",
    }
}

/// Appends the bytes of `id` between a data key's version and its
/// reserved suffix to `out` ([`elements::put_le_sub`]). Floyd has array
/// lists only; a sparse index gets no bytes.
pub fn put_sub(id: SubIdRef<'_>, out: &mut Vec<u8>) {
    let _ = elements::put_le_sub(id, out);
}

/// The bytes of `id` between a data key's version and its reserved
/// suffix ([`put_sub`]).
pub fn sub_bytes(id: SubIdRef<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(elements::sub_id_len(id));
    put_sub(id, &mut out);
    out
}

/// The id of an element of `kind` from the bytes between the version and
/// the reserved suffix.
pub fn decode_sub(kind: SubKind, rest: &[u8]) -> Result<SubId, DecodeError> {
    let record = key_record_name(kind);
    match kind {
        SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember => {
            Ok(SubId::Name(rest.to_vec()))
        }
        SubKind::ZSetScore => {
            let mut r = Reader::new(record, rest);
            let score = r.f64_le()?;
            if score.is_nan() {
                return Err(r.invalid("NaN score"));
            }
            Ok(SubId::Scored {
                score,
                member: r.rest().to_vec(),
            })
        }
        SubKind::ListItem => {
            let mut r = Reader::new(record, rest);
            let index = r.u64_le()?;
            r.finish()?;
            Ok(SubId::Index(index))
        }
    }
}

/// The value of an element: payload, zero reserve, `ctime_ms` (stored
/// with bit 63, 0 as 0).
pub fn encode_value(kind: SubKind, value: SubValueRef<'_>, ctime_ms: u64) -> Vec<u8> {
    let score;
    let payload: &[u8] = match (kind, value) {
        (SubKind::ZSetMember, SubValueRef::Score(s)) => {
            score = s.to_bits().to_le_bytes();
            &score
        }
        (SubKind::HashField | SubKind::ListItem, SubValueRef::Bytes(b)) => b,
        (_, SubValueRef::Node { value, .. }) => value,
        _ => &[],
    };
    let mut out = Vec::with_capacity(payload.len() + VALUE_SUFFIX_LEN);
    out.extend_from_slice(payload);
    out.extend_from_slice(&[0; RESERVE_LEN]);
    out.extend_from_slice(&encode_time(ctime_ms).to_le_bytes());
    out
}

/// Decodes an element value: at least the 24-byte suffix; a zset member's
/// payload is exactly 8 bytes and not NaN.
pub fn decode_value(kind: SubKind, raw: &[u8]) -> Result<SubValue, DecodeError> {
    let record = value_record_name(kind);
    let mut r = Reader::new(record, raw);
    let payload = r.all_but(VALUE_SUFFIX_LEN)?;
    match kind {
        SubKind::HashField | SubKind::ListItem => Ok(SubValue::Bytes(payload.to_vec())),
        SubKind::SetMember | SubKind::ZSetScore => Ok(SubValue::Empty),
        SubKind::ZSetMember => {
            let mut p = Reader::new(record, payload);
            let score = p.f64_le()?;
            p.finish()?;
            if score.is_nan() {
                return Err(p.invalid("NaN score"));
            }
            Ok(SubValue::Score(score))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        for (kind, v) in [
            (SubKind::HashField, SubValue::Bytes(b"v".to_vec())),
            (SubKind::ListItem, SubValue::Bytes(Vec::new())),
            (SubKind::SetMember, SubValue::Empty),
            (SubKind::ZSetScore, SubValue::Empty),
            (SubKind::ZSetMember, SubValue::Score(-2.5)),
        ] {
            let raw = encode_value(kind, v.view(), 7);
            assert_eq!(&raw[raw.len() - 8..], &(7u64 | 1 << 63).to_le_bytes());
            assert_eq!(decode_value(kind, &raw).unwrap(), v);
        }
        assert!(decode_value(SubKind::HashField, &[0; 23]).is_err());
        assert!(decode_value(SubKind::ZSetMember, &[0; 25]).is_err());
        let nan = encode_value(SubKind::ZSetMember, SubValue::Score(f64::NAN).view(), 1);
        assert!(decode_value(SubKind::ZSetMember, &nan).is_err());
    }

    #[test]
    fn ids_round_trip() {
        let scored = SubId::Scored {
            score: 1.5,
            member: b"m".to_vec(),
        };
        assert_eq!(
            decode_sub(SubKind::ZSetScore, &sub_bytes(scored.view())).unwrap(),
            scored
        );
        assert_eq!(
            decode_sub(SubKind::ListItem, &sub_bytes(SubIdRef::Index(9))).unwrap(),
            SubId::Index(9)
        );
        assert!(decode_sub(SubKind::ListItem, &[0; 9]).is_err());
        assert!(decode_sub(SubKind::ZSetScore, &[0; 7]).is_err());
    }
}
