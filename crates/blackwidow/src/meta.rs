//! Metadata values. Integers are little-endian. Metadata keys are the raw
//! user key in the `default` family of the type's instance.
//!
//! ```text
//! strings value (src/strings_value_format.h):     user value ‖ timestamp i32
//! hash/set/zset meta (src/base_meta_value_format.h): count i32 ‖ version i32 ‖ timestamp i32
//! list meta (src/lists_meta_value_format.h):       count u64 ‖ version i32 ‖ timestamp i32 ‖ left u64 ‖ right u64
//! ```
//!
//! The timestamp is an absolute expiry in unix **seconds**, 0 for none. A
//! list's `left` and `right` are **exclusive**: its items sit at
//! `left+1 ..= right-1`; a new list has `left = 2^63 − 1`, `right = 2^63`.
//! In [`Meta`] they are `ListBounds::Array { head: left + 1, tail: right }`.

use redcodec_codec::{DataType, DecodeError, EncodeError, ListBounds, Meta, Reader};

use crate::version;

/// Bytes after a string's user value: the timestamp.
pub const STRINGS_SUFFIX_LEN: usize = 4;
/// Length of a hash, set or zset metadata value.
pub const BASE_META_LEN: usize = 12;
/// Length of a list metadata value.
pub const LISTS_META_LEN: usize = 32;
/// `InitalLeftIndex`: a new list's exclusive left bound, 2^63 − 1.
pub const INITIAL_LEFT_INDEX: u64 = (1 << 63) - 1;
/// `InitalRightIndex`: a new list's exclusive right bound, 2^63.
pub const INITIAL_RIGHT_INDEX: u64 = 1 << 63;
/// [`Meta::expire_ms`] of a stored negative timestamp: blackwidow treats
/// one as expired (`timestamp != 0 && timestamp < now`), and
/// [`Meta::expire_ms`] cannot be negative, so it decodes as one second
/// after the epoch, which is just as expired. Blackwidow writes one only
/// when `now + ttl` overflows int32 (`SetRelativeTimestamp`).
pub const NEGATIVE_TIMESTAMP_EXPIRE_MS: u64 = 1000;

/// The error-message name of the metadata record of `data_type`.
pub fn record_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::String => "blackwidow strings value",
        DataType::Hash => "blackwidow hashes meta value",
        DataType::Set => "blackwidow sets meta value",
        DataType::List => "blackwidow lists meta value",
        DataType::ZSet => "blackwidow zsets meta value",
    }
}

/// `ParsedInternalValue::IsStale`: a timestamp is set and already past.
pub fn is_stale(timestamp: i32, now_s: i32) -> bool {
    timestamp != 0 && timestamp < now_s
}

/// A string value split into its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringsValue<'a> {
    /// The user's value.
    pub value: &'a [u8],
    /// Expiry in unix seconds (0: none).
    pub timestamp: i32,
}

impl<'a> StringsValue<'a> {
    /// Splits a stored string value; it must hold the 4-byte timestamp.
    pub fn parse(raw: &'a [u8]) -> Result<StringsValue<'a>, DecodeError> {
        let mut r = Reader::new(record_name(DataType::String), raw);
        let value = r.all_but(STRINGS_SUFFIX_LEN)?;
        let timestamp = r.i32_le()?;
        Ok(StringsValue { value, timestamp })
    }

    /// The stored bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.value.len() + STRINGS_SUFFIX_LEN);
        out.extend_from_slice(self.value);
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out
    }
}

/// A hash, set or zset metadata value (`ParsedBaseMetaValue`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BaseMetaValue {
    /// Element count.
    pub count: i32,
    /// Version stamped on the data keys.
    pub version: i32,
    /// Expiry in unix seconds (0: none).
    pub timestamp: i32,
}

impl BaseMetaValue {
    /// Reads the three fields; the value must be exactly 12 bytes.
    pub fn parse(record: &'static str, raw: &[u8]) -> Result<BaseMetaValue, DecodeError> {
        let mut r = Reader::new(record, raw);
        let out = BaseMetaValue {
            count: r.i32_le()?,
            version: r.i32_le()?,
            timestamp: r.i32_le()?,
        };
        r.finish()?;
        Ok(out)
    }

    /// The stored bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(BASE_META_LEN);
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out
    }
}

/// A list metadata value (`ParsedListsMetaValue`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ListsMetaValue {
    /// Element count (`right − left − 1` for a consistent list).
    pub count: u64,
    /// Version stamped on the data keys.
    pub version: i32,
    /// Expiry in unix seconds (0: none).
    pub timestamp: i32,
    /// Exclusive left bound.
    pub left: u64,
    /// Exclusive right bound.
    pub right: u64,
}

impl ListsMetaValue {
    /// Reads the five fields; the value must be exactly 32 bytes.
    pub fn parse(raw: &[u8]) -> Result<ListsMetaValue, DecodeError> {
        let mut r = Reader::new(record_name(DataType::List), raw);
        let out = ListsMetaValue {
            count: r.u64_le()?,
            version: r.i32_le()?,
            timestamp: r.i32_le()?,
            left: r.u64_le()?,
            right: r.u64_le()?,
        };
        r.finish()?;
        Ok(out)
    }

    /// The stored bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(LISTS_META_LEN);
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out.extend_from_slice(&self.left.to_le_bytes());
        out.extend_from_slice(&self.right.to_le_bytes());
        out
    }
}

/// [`Meta::expire_ms`] of a stored timestamp (see
/// [`NEGATIVE_TIMESTAMP_EXPIRE_MS`] for negative ones).
pub fn expire_ms_of(timestamp: i32) -> u64 {
    match u64::try_from(timestamp) {
        Ok(secs) => secs * 1000,
        Err(_) => NEGATIVE_TIMESTAMP_EXPIRE_MS,
    }
}

/// The stored timestamp of [`Meta::expire_ms`]: whole seconds, rounded up
/// (the engine has already rounded, so this is `expire_ms / 1000`; rounding
/// up keeps a sub-second expiry from becoming "no expiry"). Beyond
/// `i32::MAX` seconds it is an [`EncodeError::OutOfRange`].
pub fn timestamp_of(expire_ms: u64) -> Result<i32, EncodeError> {
    let secs = expire_ms.div_ceil(1000);
    i32::try_from(secs).map_err(|_| {
        out_of_range(
            "expire time (seconds)",
            secs,
            "0..=2147483647 (int32 unix seconds)",
        )
    })
}

fn version_of(meta: &Meta) -> Result<i32, EncodeError> {
    u32::try_from(meta.version)
        .map(|v| v as i32)
        .map_err(|_| out_of_range("version", meta.version, "0..=4294967295 (int32 bits)"))
}

/// Fresh metadata of a new key: count 0, no expiry; a list starts with
/// `left = 2^63 − 1`, `right = 2^63`, i.e. `head = tail = 2^63`. Strings
/// have no version.
pub fn new_meta(data_type: DataType, version: u64) -> Meta {
    if data_type == DataType::String {
        return Meta::string(Vec::new(), 0);
    }
    let empty_list = ListBounds::Array {
        head: INITIAL_LEFT_INDEX + 1,
        tail: INITIAL_RIGHT_INDEX,
    };
    Meta::fresh(data_type, version, empty_list)
}

/// Decodes the metadata value read from the place of `data_type`.
///
/// A hash/set/zset value must be exactly 12 bytes with a count ≥ 0; a list
/// value exactly 32 bytes (blackwidow reads these fields from both ends and
/// ignores anything in between; it never writes other lengths). A list's
/// `head` is `left + 1`, wrapping (a `left` of `u64::MAX` is never
/// written). The count is not checked against the bounds.
pub fn decode(data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
    let record = record_name(data_type);
    match data_type {
        DataType::String => {
            let s = StringsValue::parse(raw)?;
            Ok(Meta::string(s.value.to_vec(), expire_ms_of(s.timestamp)))
        }
        DataType::Hash | DataType::Set | DataType::ZSet => {
            let m = BaseMetaValue::parse(record, raw)?;
            let size = u64::try_from(m.count).map_err(|_| DecodeError::Invalid {
                record,
                reason: format!("negative count {}", m.count),
            })?;
            Ok(Meta {
                data_type,
                expire_ms: expire_ms_of(m.timestamp),
                version: version::widen(m.version),
                size,
                list: ListBounds::None,
                value: Vec::new(),
                variant: 0,
                bounds: None,
            })
        }
        DataType::List => {
            let m = ListsMetaValue::parse(raw)?;
            Ok(Meta {
                data_type,
                expire_ms: expire_ms_of(m.timestamp),
                version: version::widen(m.version),
                size: m.count,
                list: ListBounds::Array {
                    head: m.left.wrapping_add(1),
                    tail: m.right,
                },
                value: Vec::new(),
                variant: 0,
                bounds: None,
            })
        }
    }
}

/// Encodes metadata, `string` as a string's payload (in place of
/// [`Meta::value`]). [`Meta::variant`] is ignored (blackwidow has one
/// layout). Errors: an expiry past `i32::MAX` seconds, a version above
/// `u32::MAX`, a hash/set/zset size above `i32::MAX`, list bounds that are
/// not [`ListBounds::Array`].
pub fn encode_with(meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let timestamp = timestamp_of(meta.expire_ms)?;
    match meta.data_type {
        DataType::String => Ok(StringsValue {
            value: string,
            timestamp,
        }
        .to_bytes()),
        DataType::Hash | DataType::Set | DataType::ZSet => {
            let count = i32::try_from(meta.size)
                .map_err(|_| out_of_range("element count", meta.size, "0..=2147483647"))?;
            Ok(BaseMetaValue {
                count,
                version: version_of(meta)?,
                timestamp,
            }
            .to_bytes())
        }
        DataType::List => {
            let ListBounds::Array { head, tail } = meta.list else {
                return Err(out_of_range(
                    "list bounds",
                    format!("{:?}", meta.list),
                    "ListBounds::Array",
                ));
            };
            Ok(ListsMetaValue {
                count: meta.size,
                version: version_of(meta)?,
                timestamp,
                left: head.wrapping_sub(1),
                right: tail,
            }
            .to_bytes())
        }
    }
}

/// [`encode_with`] a string's payload taken from [`Meta::value`].
pub fn encode(meta: &Meta) -> Result<Vec<u8>, EncodeError> {
    encode_with(meta, &meta.value)
}

fn out_of_range(what: &'static str, value: impl ToString, range: &str) -> EncodeError {
    EncodeError::out_of_range("blackwidow", what, value, range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::hex_compact as hex;

    #[test]
    fn strings() {
        let m = Meta::string(b"bar".to_vec(), 0);
        assert_eq!(hex(&encode(&m).unwrap()), "62617200000000");
        assert_eq!(decode(DataType::String, b"bar\0\0\0\0").unwrap(), m);
        let m = Meta::string(Vec::new(), 1_700_000_100_000);
        assert_eq!(hex(&encode(&m).unwrap()), "64f15365");
        assert_eq!(decode(DataType::String, &encode(&m).unwrap()).unwrap(), m);
        assert!(decode(DataType::String, b"bar").is_err());
    }

    #[test]
    fn expiry_conversions() {
        assert_eq!(timestamp_of(0), Ok(0));
        assert_eq!(timestamp_of(1), Ok(1));
        assert_eq!(timestamp_of(1000), Ok(1));
        assert_eq!(timestamp_of(1001), Ok(2));
        assert_eq!(timestamp_of(i32::MAX as u64 * 1000), Ok(i32::MAX));
        assert!(timestamp_of(i32::MAX as u64 * 1000 + 1).is_err());
        assert_eq!(expire_ms_of(0), 0);
        assert_eq!(expire_ms_of(i32::MAX), i32::MAX as u64 * 1000);
        assert_eq!(expire_ms_of(-5), NEGATIVE_TIMESTAMP_EXPIRE_MS);
        let raw = [b'v', 0xFB, 0xFF, 0xFF, 0xFF];
        let m = decode(DataType::String, &raw).unwrap();
        assert!(m.expired_at(1_700_000_000_000));
    }

    #[test]
    fn base_meta() {
        for t in [DataType::Hash, DataType::Set, DataType::ZSet] {
            let mut m = new_meta(t, 0x6553_F100);
            m.size = 3;
            m.expire_ms = 1_700_000_100_000;
            let raw = encode(&m).unwrap();
            assert_eq!(hex(&raw), "0300000000f1536564f15365");
            assert_eq!(decode(t, &raw).unwrap(), m);
            assert!(decode(t, &raw[..11]).is_err());
            assert!(decode(t, &[raw.clone(), vec![0]].concat()).is_err());
            m.size = 1 << 31;
            assert!(encode(&m).is_err());
            m.size = 0;
            m.version = 1 << 32;
            assert!(encode(&m).is_err());
        }
        let negative = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0];
        let err = decode(DataType::Hash, &negative).unwrap_err().to_string();
        assert!(err.contains("negative count -1"), "{err}");
        // Negative versions keep their bits.
        let raw = [1, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0];
        let m = decode(DataType::Set, &raw).unwrap();
        assert_eq!(m.version, 0x8000_0000);
        assert_eq!(encode(&m).unwrap(), raw);
    }

    #[test]
    fn lists() {
        let m = new_meta(DataType::List, 0x6553_F100);
        assert_eq!(
            m.list,
            ListBounds::Array {
                head: 1 << 63,
                tail: 1 << 63
            }
        );
        let raw = encode(&m).unwrap();
        assert_eq!(
            hex(&raw),
            "0000000000000000 00f15365 00000000 ffffffffffffff7f 0000000000000080".replace(' ', "")
        );
        assert_eq!(decode(DataType::List, &raw).unwrap(), m);
        assert!(decode(DataType::List, &raw[..31]).is_err());
        let mut bad = m.clone();
        bad.list = ListBounds::None;
        assert!(encode(&bad).is_err());
        // Wrapping bounds round-trip.
        let mut edge = m;
        edge.list = ListBounds::Array { head: 0, tail: 0 };
        let raw = encode(&edge).unwrap();
        assert_eq!(raw[16..24], [0xFF; 8]);
        assert_eq!(decode(DataType::List, &raw).unwrap(), edge);
    }

    #[test]
    fn variant_is_ignored() {
        let mut m = new_meta(DataType::Hash, 1);
        m.variant = 1;
        let raw = encode(&m).unwrap();
        m.variant = 0;
        assert_eq!(decode(DataType::Hash, &raw).unwrap(), m);
    }
}
