//! §1–§2 of `formats-spec/ardb.md`: key types and key encoding
//! (`KeyObject::Encode`, `src/db/codec.cpp`), as the RocksDB engine writes
//! it (`with_ns = false`: the namespace is the column family, not key bytes).
//!
//! ```text
//! key = varuint32(len(user_key)) ‖ user_key ‖ type u8 ‖ elem_count u8 ‖ Data × elem_count
//! ```
//!
//! - The count byte is written even for `META` (`00`). On decode a missing
//!   count byte means 0 and a count above 127 is an error
//!   (`DecodeElementLength`).
//! - For `META` everything after the type byte is ignored, by the decoder
//!   and by the comparator.

use redcodec_codec::{DecodeError, Reader, SubKind};

use crate::primitives::{put_varuint32, read_varuint32, Data};

/// `enum KeyType` (`src/db/codec.hpp`).
pub mod key_type {
    /// `KEY_UNKNOWN`.
    pub const UNKNOWN: u8 = 0;
    /// `KEY_META`: the one key every Redis key has.
    pub const META: u8 = 1;
    /// `KEY_STRING` (value type only).
    pub const STRING: u8 = 2;
    /// `KEY_HASH` (value type only).
    pub const HASH: u8 = 3;
    /// `KEY_HASH_FIELD`: `[field]`.
    pub const HASH_FIELD: u8 = 4;
    /// `KEY_LIST` (value type only).
    pub const LIST: u8 = 5;
    /// `KEY_LIST_ELEMENT`: `[index]`.
    pub const LIST_ELEMENT: u8 = 6;
    /// `KEY_SET` (value type only).
    pub const SET: u8 = 7;
    /// `KEY_SET_MEMBER`: `[member]`.
    pub const SET_MEMBER: u8 = 8;
    /// `KEY_ZSET` (value type only).
    pub const ZSET: u8 = 9;
    /// `KEY_ZSET_SORT`: `[score, member]`.
    pub const ZSET_SORT: u8 = 10;
    /// `KEY_ZSET_SCORE`: `[member]`.
    pub const ZSET_SCORE: u8 = 11;
    /// `KEY_STREAM` (value type only; unsupported).
    pub const STREAM: u8 = 12;
    /// `KEY_STREAM_ELEMENT`: `[stream id]` (unsupported).
    pub const STREAM_ELEMENT: u8 = 13;
    /// `KEY_STREAM_PEL`: `[group, stream id]` (unsupported).
    pub const STREAM_PEL: u8 = 14;
    /// `KEY_TTL_SORT`: `[ttl, namespace, key]` (never written on RocksDB).
    pub const TTL_SORT: u8 = 29;
    /// `KEY_MERGE` (value type of merge operands).
    pub const MERGE: u8 = 30;
    /// `KEY_END`: only a bound for ranges and iterators.
    pub const END: u8 = 31;

    /// Whether a value of type `ty` is a key's metadata, a `MetaObject`
    /// (`encode_value_object`): the value types, streams included.
    pub fn is_meta(ty: u8) -> bool {
        matches!(ty, STRING | HASH | LIST | SET | ZSET | STREAM)
    }
}

/// Largest element count a key may declare.
pub const MAX_ELEMENTS: u8 = 127;

/// The elements `KeyObject::SetType` pre-sizes for a key type: seek keys
/// built without setting elements carry this many nil elements.
pub fn presized_elements(ty: u8) -> u8 {
    match ty {
        key_type::HASH_FIELD
        | key_type::LIST_ELEMENT
        | key_type::SET_MEMBER
        | key_type::ZSET_SCORE
        | key_type::STREAM_ELEMENT => 1,
        key_type::ZSET_SORT | key_type::STREAM_PEL => 2,
        key_type::TTL_SORT => 3,
        _ => 0,
    }
}

/// The key type of the element records of `kind`.
pub fn type_of_kind(kind: SubKind) -> u8 {
    match kind {
        SubKind::HashField => key_type::HASH_FIELD,
        SubKind::SetMember => key_type::SET_MEMBER,
        SubKind::ZSetMember => key_type::ZSET_SCORE,
        SubKind::ZSetScore => key_type::ZSET_SORT,
        SubKind::ListItem => key_type::LIST_ELEMENT,
    }
}

/// Encodes a key. A user key longer than `u32::MAX` bytes has its length
/// saturated; [`crate::ArdbCodec`] refuses such keys before encoding.
pub fn encode(user_key: &[u8], ty: u8, elements: &[Data<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + 8 + elements.len() * 10);
    put_varuint32(&mut out, u32::try_from(user_key.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(user_key);
    out.push(ty);
    // Callers pass at most 2 elements.
    out.push(elements.len().min(usize::from(MAX_ELEMENTS)) as u8);
    for d in elements {
        d.encode(&mut out);
    }
    out
}

/// The `META` key of `user_key`: `len ‖ key ‖ 01 00`.
pub fn meta_key(user_key: &[u8]) -> Vec<u8> {
    encode(user_key, key_type::META, &[])
}

/// The `END` bound of `user_key`: `len ‖ key ‖ 1f 00`.
pub fn end_key(user_key: &[u8]) -> Vec<u8> {
    encode(user_key, key_type::END, &[])
}

/// The seek key Ardb builds for type `ty` without setting elements: the
/// pre-sized nil elements (`KeyObject(ns, ty, key)`), e.g. `… 0a 02 00 00`.
pub fn seek_key(user_key: &[u8], ty: u8) -> Vec<u8> {
    let nils = vec![Data::Nil; usize::from(presized_elements(ty))];
    encode(user_key, ty, &nils)
}

/// A key split into its fields. Parsing validates every declared element,
/// so [`ParsedKey::elements`] yields exactly `count` of them.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedKey<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// The type byte, if present.
    pub ty: Option<u8>,
    /// The element count (0 when absent, and for `META`).
    pub count: u8,
    /// The bytes of the `count` elements.
    elements: &'a [u8],
    /// Bytes after the elements (after the type for `META`); ignored by
    /// Ardb's comparator.
    pub trailing: &'a [u8],
}

impl<'a> ParsedKey<'a> {
    /// Parses a key as Ardb's comparator decodes it; an error where Ardb
    /// would `abort()`.
    pub fn parse(raw: &'a [u8]) -> Result<ParsedKey<'a>, DecodeError> {
        let mut r = Reader::new("ardb key", raw);
        let len = read_varuint32(&mut r)?;
        let len = usize::try_from(len).map_err(|_| r.invalid("user key too long"))?;
        let user_key = r.take(len)?;
        let mut key = ParsedKey {
            user_key,
            ty: None,
            count: 0,
            elements: &[],
            trailing: &[],
        };
        if r.remaining() == 0 {
            return Ok(key);
        }
        let ty = r.u8()?;
        key.ty = Some(ty);
        if ty == key_type::META {
            key.trailing = r.rest();
            return Ok(key);
        }
        if r.remaining() == 0 {
            return Ok(key);
        }
        let count = r.u8()?;
        if count > MAX_ELEMENTS {
            return Err(r.invalid(format!("element count {count} is above 127")));
        }
        key.count = count;
        let start = r.offset();
        for _ in 0..count {
            Data::decode(&mut r)?;
        }
        key.elements = &raw[start..r.offset()];
        key.trailing = r.rest();
        Ok(key)
    }

    /// The elements, in order.
    pub fn elements(&self) -> Elements<'a> {
        Elements {
            reader: Reader::new("ardb key element", self.elements),
        }
    }
}

/// The user key of an element record's key (a hash field, list element,
/// set member or sorted-set member or score entry), or `None` for any
/// other key (metadata, a string's value, a key that does not parse).
pub fn element_owner(raw: &[u8]) -> Option<&[u8]> {
    let parsed = ParsedKey::parse(raw).ok()?;
    let ty = parsed.ty?;
    SubKind::ALL
        .into_iter()
        .any(|kind| type_of_kind(kind) == ty)
        .then_some(parsed.user_key)
}

/// Iterator over the (already validated) elements of a [`ParsedKey`].
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    reader: Reader<'a>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Data<'a>;

    fn next(&mut self) -> Option<Data<'a>> {
        if self.reader.remaining() == 0 {
            return None;
        }
        Data::decode(&mut self.reader).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::hex;

    #[test]
    fn element_records_name_their_owner() {
        // Every kind of element record of "h", from the bytes Ardb writes.
        let field = encode(b"h", key_type::HASH_FIELD, &[Data::try_int(b"f")]);
        assert_eq!(hex(&field), "01 68 04 01 04 01 66");
        assert_eq!(element_owner(&field), Some(&b"h"[..]));
        for ty in [
            key_type::LIST_ELEMENT,
            key_type::SET_MEMBER,
            key_type::ZSET_SCORE,
            key_type::ZSET_SORT,
        ] {
            let raw = encode(b"key:1", ty, &[Data::try_int(b"m")]);
            assert_eq!(element_owner(&raw), Some(&b"key:1"[..]), "type {ty}");
        }
        // Metadata, a string's or a collection's value type, and bytes
        // that do not parse are not element records.
        assert_eq!(element_owner(&meta_key(b"h")), None);
        assert_eq!(element_owner(&encode(b"h", key_type::STRING, &[])), None);
        assert_eq!(element_owner(&encode(b"h", key_type::HASH, &[])), None);
        assert_eq!(element_owner(&[0x05, b'h']), None);
        assert_eq!(element_owner(b""), None);
    }

    #[test]
    fn reference_keys() {
        assert_eq!(hex(&meta_key(b"foo")), "03 66 6f 6f 01 00");
        assert_eq!(hex(&meta_key(b"h")), "01 68 01 00");
        assert_eq!(hex(&end_key(b"h")), "01 68 1f 00");
        assert_eq!(
            hex(&encode(b"h", key_type::HASH_FIELD, &[Data::try_int(b"f")])),
            "01 68 04 01 04 01 66"
        );
        assert_eq!(
            hex(&seek_key(b"z", key_type::ZSET_SORT)),
            "01 7a 0a 02 00 00"
        );
        assert_eq!(hex(&seek_key(b"h", key_type::HASH_FIELD)), "01 68 04 01 00");
        assert_eq!(hex(&seek_key(b"h", key_type::META)), "01 68 01 00");
        assert_eq!(hex(&seek_key(b"", key_type::TTL_SORT)), "00 1d 03 00 00 00");
    }

    #[test]
    fn parse_fields() {
        let raw = encode(
            b"z",
            key_type::ZSET_SORT,
            &[Data::Float(1.5), Data::Str(b"m")],
        );
        let k = ParsedKey::parse(&raw).unwrap();
        assert_eq!(k.user_key, b"z");
        assert_eq!(k.ty, Some(key_type::ZSET_SORT));
        assert_eq!(k.count, 2);
        assert_eq!(
            k.elements().collect::<Vec<_>>(),
            [Data::Float(1.5), Data::Str(b"m")]
        );
        assert!(k.trailing.is_empty());

        // META ignores what follows the type byte, even garbage.
        let k = ParsedKey::parse(&[1, b'a', 1, 0xFF, 0xFF]).unwrap();
        assert_eq!((k.ty, k.count), (Some(key_type::META), 0));
        assert_eq!(k.trailing, &[0xFF, 0xFF]);
        // No type, no count.
        let k = ParsedKey::parse(&[1, b'a']).unwrap();
        assert_eq!((k.ty, k.count), (None, 0));
        let k = ParsedKey::parse(&[1, b'a', 4]).unwrap();
        assert_eq!((k.ty, k.count), (Some(4), 0));
        // Trailing bytes after the elements are kept apart.
        let k = ParsedKey::parse(&[1, b'a', 4, 1, 0, 9]).unwrap();
        assert_eq!(k.elements().collect::<Vec<_>>(), [Data::Nil]);
        assert_eq!(k.trailing, &[9]);
    }

    #[test]
    fn parse_errors() {
        for bad in [
            &[][..],
            &[0x80],
            &[2, b'a'],
            &[1, b'a', 4, 128],
            &[1, b'a', 4, 1],
            &[1, b'a', 4, 1, 9],
            &[1, b'a', 4, 2, 0],
        ] {
            assert!(ParsedKey::parse(bad).is_err(), "{bad:?}");
        }
    }
}
