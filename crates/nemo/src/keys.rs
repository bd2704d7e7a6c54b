//! Keys (`DataType` tags in `include/nemo_const.h`; `Encode*Key` in
//! `src/nemo_{hash,list,set,zset}.h`).
//!
//! ```text
//! string        key                                        (kv instance, no prefix)
//! hash meta     'H' ‖ key
//! hash field    'h' ‖ len:u8 ‖ key ‖ '=' ‖ field
//! list meta     'L' ‖ key
//! list node     'l' ‖ len:u8 ‖ key ‖ seq:i64 LE
//! set meta      'S' ‖ key
//! set member    's' ‖ len:u8 ‖ key ‖ member
//! zset meta     'Z' ‖ key
//! zset member   'z' ‖ len:u8 ‖ key ‖ member
//! zset score    'y' ‖ len:u8 ‖ key ‖ BE64(iscore) ‖ member
//! ```
//!
//! A metadata key's user key runs to its end. An element key holds the
//! user key's length in one byte, which is why every collection command
//! refuses keys of 255 bytes or more, and empty keys
//! (`key.size() >= KEY_MAX_LENGTH || key.size() <= 0`).

use redcodec_codec::{DataType, DecodeError, EncodeError, Place, Reader};

use crate::layout;
use crate::FORMAT;

/// Hash metadata tag (`kHSize`).
pub const HASH_META: u8 = b'H';
/// Hash field tag (`kHash`).
pub const HASH_FIELD: u8 = b'h';
/// List metadata tag (`kLMeta`).
pub const LIST_META: u8 = b'L';
/// List node tag (`kList`).
pub const LIST_NODE: u8 = b'l';
/// Set metadata tag (`kSSize`).
pub const SET_META: u8 = b'S';
/// Set member tag (`kSet`).
pub const SET_MEMBER: u8 = b's';
/// Sorted-set metadata tag (`kZSize`).
pub const ZSET_META: u8 = b'Z';
/// Sorted-set member tag (`kZSet`).
pub const ZSET_MEMBER: u8 = b'z';
/// Sorted-set score index tag (`kZScore`).
pub const ZSET_SCORE: u8 = b'y';
/// The byte between a hash key and its field (`EncodeHashKey`).
pub const HASH_FIELD_SEPARATOR: u8 = b'=';

/// `KEY_MAX_LENGTH`: collection keys must be shorter than this.
pub const KEY_MAX_LENGTH: usize = 255;
/// The longest collection key: 254 bytes.
pub const MAX_COLLECTION_KEY: usize = KEY_MAX_LENGTH - 1;

/// The metadata tag of a collection type (the instance's meta prefix);
/// `None` for strings.
pub fn meta_tag(data_type: DataType) -> Option<u8> {
    match data_type {
        DataType::String => None,
        DataType::Hash => Some(HASH_META),
        DataType::List => Some(LIST_META),
        DataType::Set => Some(SET_META),
        DataType::ZSet => Some(ZSET_META),
    }
}

/// The meta prefix of the instance at `place`; `None` for `kv` and for
/// places outside the layout.
pub fn meta_tag_of_place(place: Place) -> Option<u8> {
    layout::type_of(place).and_then(meta_tag)
}

/// Refuses a collection key nemo cannot store: 255 bytes or more
/// ([`EncodeError::KeyTooLong`]), or empty ([`EncodeError::OutOfRange`],
/// "hash key length 0 … (1 to 254 bytes)").
pub fn check_collection_key(key: &[u8], data_type: DataType) -> Result<(), EncodeError> {
    if data_type.is_collection() && key.is_empty() {
        return Err(EncodeError::out_of_range(
            FORMAT,
            key_length_name(data_type),
            0,
            &format!("1 to {MAX_COLLECTION_KEY} bytes"),
        ));
    }
    if data_type.is_collection() {
        EncodeError::check_key_len(FORMAT, data_type, key, MAX_COLLECTION_KEY)?;
    }
    Ok(())
}

/// "hash key length" and so on, for errors.
fn key_length_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::String => "string key length",
        DataType::Hash => "hash key length",
        DataType::List => "list key length",
        DataType::Set => "set key length",
        DataType::ZSet => "zset key length",
    }
}

/// The metadata key of `key`: the raw key for strings, `tag ‖ key` otherwise.
pub fn meta_key(data_type: DataType, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + key.len());
    if let Some(tag) = meta_tag(data_type) {
        out.push(tag);
    }
    out.extend_from_slice(key);
    out
}

/// `tag ‖ len ‖ key`: the prefix of every element key of `key` with `tag`.
/// The length byte of a key over 255 bytes (refused before any element key
/// is built) saturates at 255.
pub fn element_prefix(tag: u8, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + key.len() + 9);
    out.push(tag);
    out.push(u8::try_from(key.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(key);
    if tag == HASH_FIELD {
        out.push(HASH_FIELD_SEPARATOR);
    }
    out
}

/// The element bytes after [`element_prefix`] of `raw`, which must be an
/// element key of `key` with `tag`.
pub fn strip_element_prefix<'a>(
    tag: u8,
    key: &[u8],
    raw: &'a [u8],
) -> Result<&'a [u8], DecodeError> {
    raw.strip_prefix(element_prefix(tag, key).as_slice())
        .ok_or_else(|| DecodeError::Invalid {
            record: "nemo element key",
            reason: "key does not belong to this key and kind".into(),
        })
}

/// The user key of a metadata key at `place`: `Ok(None)` when `raw` is not
/// a metadata key there (a separator or an element key), an error when its
/// user key could not have been written by nemo (empty, or over 254 bytes).
pub fn user_key_of_meta(place: Place, raw: &[u8]) -> Result<Option<&[u8]>, DecodeError> {
    if place == layout::KV {
        return Ok(Some(raw));
    }
    let Some(tag) = meta_tag_of_place(place) else {
        return Ok(None);
    };
    let Some(user_key) = raw.strip_prefix(&[tag]) else {
        return Ok(None);
    };
    if user_key.is_empty() || user_key.len() > MAX_COLLECTION_KEY {
        return Err(DecodeError::Invalid {
            record: "nemo metadata key",
            reason: format!(
                "user key of {} bytes; nemo stores 1..={MAX_COLLECTION_KEY}",
                user_key.len()
            ),
        });
    }
    Ok(Some(user_key))
}

/// The user key of an element key, as `ExtractUserKey` reads it:
/// `raw[2 .. 2 + raw[1]]`. `None` if `raw` is too short to hold it.
pub fn user_key_of_element(raw: &[u8]) -> Option<&[u8]> {
    let mut r = Reader::new("nemo element key", raw);
    r.u8().ok()?;
    let len = r.u8().ok()?;
    r.take(usize::from(len)).ok()
}

/// Length of [`unbounded_upper`].
pub const TOP_KEY_LEN: usize = 1024;

/// The upper bound of the whole-family ranges of a family without a
/// prefix of its own (the `kv` instance): 1024 bytes of `0xFF`, as
/// blackwidow's `TOP_KEY`. No finite key bounds every byte string and
/// [`redcodec_codec::KeyRange`] has no unbounded form, so a string key
/// starting with 1024 `0xFF` bytes lies beyond it (formats-spec/nemo.md §2).
pub fn unbounded_upper() -> Vec<u8> {
    vec![0xFF; TOP_KEY_LEN]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_keys() {
        assert_eq!(meta_key(DataType::String, b"foo"), b"foo");
        assert_eq!(meta_key(DataType::Hash, b"h"), b"Hh");
        assert_eq!(meta_key(DataType::List, b"l"), b"Ll");
        assert_eq!(meta_key(DataType::Set, b"s"), b"Ss");
        assert_eq!(meta_key(DataType::ZSet, b"z"), b"Zz");
        assert_eq!(
            user_key_of_meta(layout::HASH, b"Hkey"),
            Ok(Some(&b"key"[..]))
        );
        assert_eq!(user_key_of_meta(layout::HASH, b"h"), Ok(None));
        assert_eq!(user_key_of_meta(layout::HASH, b"h\x01k=f"), Ok(None));
        assert!(user_key_of_meta(layout::HASH, b"H").is_err());
        assert!(user_key_of_meta(layout::SET, &[b'S'; 256]).is_err());
        assert_eq!(user_key_of_meta(layout::KV, b""), Ok(Some(&b""[..])));
        assert_eq!(user_key_of_meta(Place::new(7, 0), b"Hk"), Ok(None));
    }

    #[test]
    fn key_limit() {
        for t in [
            DataType::Hash,
            DataType::List,
            DataType::Set,
            DataType::ZSet,
        ] {
            assert!(check_collection_key(&[b'k'; 254], t).is_ok());
            let err = check_collection_key(&[b'k'; 255], t).unwrap_err();
            assert_eq!(
                err,
                EncodeError::KeyTooLong {
                    format: "nemo",
                    type_name: t.redis_name(),
                    len: 255,
                    max: 254
                }
            );
            let empty = check_collection_key(b"", t).unwrap_err();
            assert_eq!(
                empty.to_string(),
                format!(
                    "{} key length 0 is out of range for the nemo format (1 to 254 bytes)",
                    t.redis_name()
                )
            );
        }
        assert!(check_collection_key(&[b'k'; 1000], DataType::String).is_ok());
        assert!(check_collection_key(b"", DataType::String).is_ok());
    }

    #[test]
    fn element_prefixes() {
        assert_eq!(element_prefix(HASH_FIELD, b"h"), b"h\x01h=");
        assert_eq!(element_prefix(ZSET_SCORE, b"zz"), b"y\x02zz");
        assert_eq!(
            strip_element_prefix(SET_MEMBER, b"k", b"s\x01km"),
            Ok(&b"m"[..])
        );
        assert!(strip_element_prefix(SET_MEMBER, b"k", b"s\x02kkm").is_err());
        assert_eq!(user_key_of_element(b"h\x01h=f"), Some(&b"h"[..]));
        assert_eq!(user_key_of_element(b"h\x03ab"), None);
        assert_eq!(user_key_of_element(b"h"), None);
        assert_eq!(user_key_of_element(b"s\x00"), Some(&b""[..]));
    }
}
