//! §2–§3 of `formats-spec/ardb.md` for element records: their keys'
//! elements and their values.
//!
//! | kind | key type | key elements | value |
//! |---|---|---|---|
//! | hash field | `04` | `[field]` (int or string) | `04 01 <value Data>` |
//! | set member | `08` | `[member]` (int or string) | `08 00` |
//! | list item | `06` | `[index]` (int64, float64 after LINSERT) | `06 01 <value Data>` |
//! | zset member → score | `0b` (`KEY_ZSET_SCORE`) | `[member string]` | `0b 01 <score float64>` |
//! | zset score index | `0a` (`KEY_ZSET_SORT`) | `[score float64, member string]` | `0a 00` |
//!
//! Fields, set members and values are int-encoded when they are canonical
//! integers ([`Data::try_int`]); zset members never are.

use redcodec_codec::{DecodeError, SubId, SubIdRef, SubKind, SubValue, SubValueRef};

use crate::keys::{self, ParsedKey};
use crate::meta::{data_index, index_data};
use crate::primitives::Data;

const KEY_RECORD: &str = "ardb element key";
const VALUE_RECORD: &str = "ardb element value";

/// The key elements of `id` for `kind`. Ids that are not of the kind are
/// encoded as their nearest `Data` so that nothing panics.
pub fn id_elements<'a>(kind: SubKind, id: SubIdRef<'a>) -> Vec<Data<'a>> {
    match id {
        SubIdRef::Name(name) => match kind {
            SubKind::ZSetMember | SubKind::ZSetScore => vec![Data::Str(name)],
            SubKind::HashField | SubKind::SetMember | SubKind::ListItem => {
                vec![Data::try_int(name)]
            }
        },
        SubIdRef::Scored { score, member } => vec![Data::Float(score), Data::Str(member)],
        SubIdRef::Sparse(i) => vec![index_data(i)],
        // Not Ardb ids (array and linked list models).
        SubIdRef::Index(i) => vec![Data::Int(i as i64)],
        SubIdRef::Seq(i) => vec![Data::Int(i)],
    }
}

/// The key of the element record `id` of `user_key`.
pub fn sub_key(kind: SubKind, user_key: &[u8], id: SubIdRef<'_>) -> Vec<u8> {
    keys::encode(user_key, keys::type_of_kind(kind), &id_elements(kind, id))
}

/// `[lower, upper)` holding every element record of `kind` of `user_key`:
/// from the type's seek key with pre-sized nil elements to the next type
/// with no elements (`len ‖ key ‖ type+1 ‖ 00`).
pub fn sub_bounds(kind: SubKind, user_key: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let ty = keys::type_of_kind(kind);
    (
        keys::seek_key(user_key, ty),
        keys::encode(user_key, ty + 1, &[]),
    )
}

fn invalid(reason: impl Into<String>) -> DecodeError {
    DecodeError::Invalid {
        record: KEY_RECORD,
        reason: reason.into(),
    }
}

/// Decodes the id of an element key of `kind` belonging to `user_key`.
pub fn decode_sub_key(kind: SubKind, user_key: &[u8], raw: &[u8]) -> Result<SubId, DecodeError> {
    let key = ParsedKey::parse(raw)?;
    if key.user_key != user_key {
        return Err(invalid("key belongs to another user key"));
    }
    let want = keys::type_of_kind(kind);
    if key.ty != Some(want) {
        return Err(invalid(format!(
            "key type {:?} is not {want} ({kind:?})",
            key.ty
        )));
    }
    if !key.trailing.is_empty() {
        return Err(invalid(format!(
            "{} trailing bytes after the elements",
            key.trailing.len()
        )));
    }
    let elements: Vec<Data<'_>> = key.elements().collect();
    let name = |d: &Data<'_>| d.to_value_bytes().ok_or_else(|| invalid("element is nil"));
    match (kind, elements.as_slice()) {
        (SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember, [d]) => {
            Ok(SubId::Name(name(d)?))
        }
        (SubKind::ListItem, [d]) => data_index(*d)
            .map(SubId::Sparse)
            .ok_or_else(|| invalid("list index is not a number")),
        (SubKind::ZSetScore, [score, member]) => {
            let score = score
                .as_f64()
                .ok_or_else(|| invalid("score is not a number"))?;
            Ok(SubId::Scored {
                score,
                member: name(member)?,
            })
        }
        _ => Err(invalid(format!("{} elements for {kind:?}", elements.len()))),
    }
}

/// The value of an element record.
pub fn encode_value(kind: SubKind, value: SubValueRef<'_>) -> Vec<u8> {
    let ty = keys::type_of_kind(kind);
    let data = match (kind, value) {
        // Ardb writes these with no elements whatever they stand for.
        (SubKind::SetMember | SubKind::ZSetScore, _) => None,
        (_, SubValueRef::Empty) => None,
        (_, SubValueRef::Score(s)) => Some(Data::Float(s)),
        (_, SubValueRef::Bytes(b) | SubValueRef::Node { value: b, .. }) => Some(Data::try_int(b)),
    };
    let mut out = vec![ty];
    match data {
        None => out.push(0),
        Some(d) => {
            out.push(1);
            d.encode(&mut out);
        }
    }
    out
}

/// Decodes the value of an element record of `kind`. Set-member and
/// score-index values are never read by Ardb and are not checked.
pub fn decode_value(kind: SubKind, raw: &[u8]) -> Result<SubValue, DecodeError> {
    if matches!(kind, SubKind::SetMember | SubKind::ZSetScore) {
        return Ok(SubValue::Empty);
    }
    let mut r = redcodec_codec::Reader::new(VALUE_RECORD, raw);
    let ty = r.u8()?;
    let want = keys::type_of_kind(kind);
    if ty != want {
        return Err(r.invalid(format!("value type {ty} is not {want} ({kind:?})")));
    }
    let count = r.u8()?;
    if count != 1 {
        return Err(r.invalid(format!("{count} elements, not 1")));
    }
    let d = Data::decode(&mut r)?;
    r.finish()?;
    match kind {
        SubKind::ZSetMember => d
            .as_f64()
            .map(SubValue::Score)
            .ok_or_else(|| r.invalid("score is not a number")),
        _ => d
            .to_value_bytes()
            .map(SubValue::Bytes)
            .ok_or_else(|| r.invalid("value is nil")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::key_type;
    use redcodec_codec::SparseIndex;
    use redcodec_testkit::hex;

    #[test]
    fn reference_element_records() {
        let f = SubId::Name(b"f".to_vec());
        assert_eq!(
            hex(&sub_key(SubKind::HashField, b"h", f.view())),
            "01 68 04 01 04 01 66"
        );
        assert_eq!(
            hex(&encode_value(
                SubKind::HashField,
                SubValue::Bytes(b"v".to_vec()).view()
            )),
            "04 01 04 01 76"
        );
        assert_eq!(
            hex(&sub_key(
                SubKind::ListItem,
                b"l",
                SubIdRef::Sparse(SparseIndex::Int(0))
            )),
            "01 6c 06 01 01 00"
        );
        assert_eq!(
            hex(&encode_value(
                SubKind::ListItem,
                SubValue::Bytes(b"a".to_vec()).view()
            )),
            "06 01 04 01 61"
        );
        assert_eq!(
            hex(&sub_key(SubKind::SetMember, b"s", SubIdRef::Name(b"5"))),
            "01 73 08 01 01 0a"
        );
        assert_eq!(
            hex(&encode_value(SubKind::SetMember, SubValue::Empty.view())),
            "08 00"
        );
        assert_eq!(
            hex(&sub_key(SubKind::ZSetMember, b"z", SubIdRef::Name(b"m"))),
            "01 7a 0b 01 04 01 6d"
        );
        assert_eq!(
            hex(&sub_key(
                SubKind::ZSetScore,
                b"z",
                SubIdRef::Scored {
                    score: 1.5,
                    member: b"m"
                }
            )),
            "01 7a 0a 02 02 80 80 80 80 80 80 80 f8 7f 04 01 6d"
        );
        assert_eq!(
            hex(&encode_value(
                SubKind::ZSetMember,
                SubValue::Score(1.5).view()
            )),
            "0b 01 02 80 80 80 80 80 80 80 f8 7f"
        );
        assert_eq!(
            hex(&encode_value(SubKind::ZSetScore, SubValue::Empty.view())),
            "0a 00"
        );
    }

    #[test]
    fn zset_members_are_never_int_encoded() {
        assert_eq!(
            hex(&sub_key(SubKind::ZSetMember, b"z", SubIdRef::Name(b"5"))),
            "01 7a 0b 01 04 01 35"
        );
        assert_eq!(
            hex(&sub_key(SubKind::HashField, b"z", SubIdRef::Name(b"5"))),
            "01 7a 04 01 01 0a"
        );
    }

    #[test]
    fn decode_rejects_foreign_keys() {
        let raw = sub_key(SubKind::HashField, b"h", SubIdRef::Name(b"10"));
        assert_eq!(
            decode_sub_key(SubKind::HashField, b"h", &raw),
            Ok(SubId::Name(b"10".to_vec()))
        );
        assert!(decode_sub_key(SubKind::HashField, b"g", &raw).is_err());
        assert!(decode_sub_key(SubKind::SetMember, b"h", &raw).is_err());
        assert!(
            decode_sub_key(SubKind::HashField, b"h", &[raw.clone(), vec![0]].concat()).is_err()
        );
        let nil = keys::seek_key(b"h", key_type::HASH_FIELD);
        assert!(decode_sub_key(SubKind::HashField, b"h", &nil).is_err());
        let list = keys::encode(b"l", key_type::LIST_ELEMENT, &[Data::Str(b"x")]);
        assert!(decode_sub_key(SubKind::ListItem, b"l", &list).is_err());
        let sort = keys::encode(b"z", key_type::ZSET_SORT, &[Data::Int(3), Data::Str(b"m")]);
        assert_eq!(
            decode_sub_key(SubKind::ZSetScore, b"z", &sort),
            Ok(SubId::Scored {
                score: 3.0,
                member: b"m".to_vec()
            })
        );
        let sort = keys::encode(b"z", key_type::ZSET_SORT, &[Data::Str(b"3")]);
        assert!(decode_sub_key(SubKind::ZSetScore, b"z", &sort).is_err());
    }

    #[test]
    fn values_round_trip_as_bytes() {
        for kind in [SubKind::HashField, SubKind::ListItem] {
            for v in [&b"123"[..], b"0123", b"", b"-0", b"x\0y"] {
                let raw = encode_value(kind, SubValue::Bytes(v.to_vec()).view());
                assert_eq!(decode_value(kind, &raw), Ok(SubValue::Bytes(v.to_vec())));
            }
            assert!(decode_value(kind, &[0x0b, 1, 1, 2]).is_err());
            assert!(decode_value(kind, &[keys::type_of_kind(kind), 0]).is_err());
            assert!(decode_value(kind, &[keys::type_of_kind(kind), 1, 0]).is_err());
        }
        assert_eq!(
            decode_value(SubKind::ZSetMember, &[0x0b, 1, 1, 4]),
            Ok(SubValue::Score(2.0))
        );
        assert!(decode_value(SubKind::ZSetMember, &[0x0b, 1, 4, 0]).is_err());
        assert_eq!(
            decode_value(SubKind::SetMember, b"junk"),
            Ok(SubValue::Empty)
        );
    }
}
