//! Metadata values: the one record per user key in `default`. Integers are
//! little-endian; times are unix milliseconds with bit 63 set (seconds
//! without it, as Pika 4.0.0 wrote them).
//!
//! ```text
//! string (src/strings_value_format.h):        00 ‖ value ‖ reserve(16) ‖ ctime ‖ etime
//! hash/set/zset (src/base_meta_value_format.h): type ‖ count i32 ‖ version u64 ‖ reserve(16) ‖ ctime ‖ etime
//! list (src/lists_meta_value_format.h):        03 ‖ count u64 ‖ version u64 ‖ left u64 ‖ gap(8) ‖ right u64 ‖ gap(8) ‖ reserve(16) ‖ ctime ‖ etime
//! ```

use redcodec_codec::{DataType, DecodeError, EncodeError, ListBounds, Meta, Reader};

/// Type byte of a string (`DataType::kStrings`).
pub const TYPE_STRING: u8 = 0;
/// Type byte of a hash.
pub const TYPE_HASH: u8 = 1;
/// Type byte of a set.
pub const TYPE_SET: u8 = 2;
/// Type byte of a list.
pub const TYPE_LIST: u8 = 3;
/// Type byte of a sorted set.
pub const TYPE_ZSET: u8 = 4;
/// Type byte of a stream.
pub const TYPE_STREAM: u8 = 5;

/// `kSuffixReserveLength`: the reserved block of every value.
pub const RESERVE_LEN: usize = 16;
/// Bit 63 of a stored time: set for milliseconds (Pika ≥ 4.0.1).
pub const MILLIS_FLAG: u64 = 1 << 63;
/// Bit 7 of a string's first reserved byte: the value is a HyperLogLog
/// (`hyperloglog_reserve_flag`).
pub const HYPERLOGLOG_FLAG: u8 = 0x80;
/// Shortest string value: type, reserve, ctime, etime.
pub const STRING_MIN_LEN: usize = 1 + RESERVE_LEN + 16;
/// Length of a hash, set or zset metadata value.
pub const BASE_META_LEN: usize = 1 + 4 + 8 + RESERVE_LEN + 16;
/// Length of a list metadata value (16-byte index slots,
/// `kListValueIndexLength`).
pub const LIST_META_LEN: usize = 1 + 8 + 8 + 16 + 16 + RESERVE_LEN + 16;
/// [`Meta::variant`] bit of a collection whose stored creation time is 0:
/// Pika's `InitialMetaValue` clears it when `DEL` resets the metadata and
/// when a write re-uses a stale or emptied record of the type, and every
/// later rewrite of the record keeps it (see [`reset_meta`]).
pub const VARIANT_NO_CTIME: u8 = 1;
/// `InitalLeftIndex`: a new list's exclusive left bound, 2^63 − 1.
pub const INITIAL_LEFT_INDEX: u64 = (1 << 63) - 1;
/// `InitalRightIndex`: a new list's exclusive right bound, 2^63.
pub const INITIAL_RIGHT_INDEX: u64 = 1 << 63;

/// A stored time in ms: bit 63 set means milliseconds, otherwise seconds
/// (multiplied as Pika's `uint64_t` does, wrapping).
pub fn decode_time(raw: u64) -> u64 {
    if raw & MILLIS_FLAG != 0 {
        raw & !MILLIS_FLAG
    } else {
        raw.wrapping_mul(1000)
    }
}

/// The stored form of a time in ms: 0 stays 0, any other gets bit 63.
pub fn encode_time(ms: u64) -> u64 {
    if ms == 0 {
        0
    } else {
        ms | MILLIS_FLAG
    }
}

/// The type byte of `data_type`.
pub fn type_byte(data_type: DataType) -> u8 {
    match data_type {
        DataType::String => TYPE_STRING,
        DataType::Hash => TYPE_HASH,
        DataType::Set => TYPE_SET,
        DataType::List => TYPE_LIST,
        DataType::ZSet => TYPE_ZSET,
    }
}

/// The type a type byte names, if redcodec models it.
pub fn data_type_of(byte: u8) -> Option<DataType> {
    match byte {
        TYPE_STRING => Some(DataType::String),
        TYPE_HASH => Some(DataType::Hash),
        TYPE_SET => Some(DataType::Set),
        TYPE_LIST => Some(DataType::List),
        TYPE_ZSET => Some(DataType::ZSet),
        _ => None,
    }
}

const RECORD: &str = "floyd metadata value";

fn out_of_range(what: &'static str, value: u64, range: &str) -> EncodeError {
    EncodeError::out_of_range("floyd", what, value, range)
}

/// The fields every metadata value ends with, and the collections'
/// counters, read from raw bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    /// The type byte.
    pub type_byte: u8,
    /// Element count (0 for strings).
    pub count: u64,
    /// Version (0 for strings).
    pub version: u64,
    /// Creation time in ms.
    pub ctime_ms: u64,
    /// Expiry in ms, 0 for none.
    pub etime_ms: u64,
    /// Exclusive list bounds (lists only).
    pub left: u64,
    /// Exclusive right bound (lists only).
    pub right: u64,
}

/// Reads the fields of a string or collection metadata value; the value
/// must have the exact length Pika writes for its type. The string's
/// payload is returned too.
pub fn parse(raw: &[u8]) -> Result<(Fields, &[u8]), DecodeError> {
    let mut r = Reader::new(RECORD, raw);
    let type_byte = r.u8()?;
    let mut f = Fields {
        type_byte,
        count: 0,
        version: 0,
        ctime_ms: 0,
        etime_ms: 0,
        left: 0,
        right: 0,
    };
    let mut payload: &[u8] = &[];
    match type_byte {
        TYPE_STRING => {
            payload = r.all_but(RESERVE_LEN + 16)?;
            let reserve = r.take(RESERVE_LEN)?;
            if reserve[0] & HYPERLOGLOG_FLAG != 0 {
                return Err(DecodeError::Unmodelled {
                    record: RECORD,
                    type_name: "hyperloglog",
                });
            }
        }
        TYPE_HASH | TYPE_SET | TYPE_ZSET => {
            if raw.len() != BASE_META_LEN {
                return Err(r.invalid(format!(
                    "{} bytes, a hash/set/zset metadata value has {BASE_META_LEN}",
                    raw.len()
                )));
            }
            let count = r.i32_le()?;
            f.count =
                u64::try_from(count).map_err(|_| r.invalid(format!("negative count {count}")))?;
            f.version = r.u64_le()?;
            r.take(RESERVE_LEN)?;
        }
        TYPE_LIST => {
            if raw.len() != LIST_META_LEN {
                return Err(r.invalid(format!(
                    "{} bytes, a list metadata value has {LIST_META_LEN}",
                    raw.len()
                )));
            }
            f.count = r.u64_le()?;
            f.version = r.u64_le()?;
            f.left = r.u64_le()?;
            r.take(8)?;
            f.right = r.u64_le()?;
            r.take(8)?;
            r.take(RESERVE_LEN)?;
        }
        TYPE_STREAM => {
            return Err(DecodeError::Unmodelled {
                record: RECORD,
                type_name: "stream",
            })
        }
        tag => {
            return Err(DecodeError::UnknownType {
                record: RECORD,
                tag,
            })
        }
    }
    f.ctime_ms = decode_time(r.u64_le()?);
    f.etime_ms = decode_time(r.u64_le()?);
    r.finish()?;
    Ok((f, payload))
}

/// Fresh metadata of a new key: count 0, no expiry; a list starts with
/// `left = 2^63 − 1`, `right = 2^63`, i.e. `head = tail = 2^63`.
pub fn new_meta(data_type: DataType, version: u64) -> Meta {
    let empty_list = ListBounds::Array {
        head: INITIAL_LEFT_INDEX.wrapping_add(1),
        tail: INITIAL_RIGHT_INDEX,
    };
    Meta::fresh(data_type, version, empty_list)
}

/// The metadata Pika's `InitialMetaValue` makes of `old`, a collection's
/// stored metadata, at `version`: count 0, no expiry, a list's bounds
/// those of a new list, and creation time 0 ([`VARIANT_NO_CTIME`]).
pub fn reset_meta(old: &Meta, version: u64) -> Meta {
    let mut meta = new_meta(old.data_type, version);
    meta.variant = VARIANT_NO_CTIME;
    meta
}

/// Decodes a metadata value; the type byte names the type. A string's
/// [`Meta::version`] is its creation time in ms (see
/// [`redcodec_codec::Capabilities::string_version`]).
pub fn decode(raw: &[u8]) -> Result<Meta, DecodeError> {
    let (f, payload) = parse(raw)?;
    let data_type = data_type_of(f.type_byte).ok_or(DecodeError::UnknownType {
        record: RECORD,
        tag: f.type_byte,
    })?;
    let mut meta = new_meta(data_type, f.version);
    meta.expire_ms = f.etime_ms;
    match data_type {
        DataType::String => {
            meta.value = payload.to_vec();
            meta.version = f.ctime_ms;
        }
        DataType::List => {
            meta.size = f.count;
            meta.list = ListBounds::Array {
                head: f.left.wrapping_add(1),
                tail: f.right,
            };
        }
        _ => meta.size = f.count,
    }
    // A creation time of 0 where the version would give another is
    // Pika's InitialMetaValue's (a version of 0 writes 0 either way).
    if data_type.is_collection() && f.ctime_ms == 0 && f.version & !MILLIS_FLAG != 0 {
        meta.variant = VARIANT_NO_CTIME;
    }
    Ok(meta)
}

/// The stored bytes of `meta`, `string` as a string's payload (in place
/// of [`Meta::value`]). The creation time written is
/// [`Meta::version`] (the engine's clock when the key was created), or 0
/// for a collection marked [`VARIANT_NO_CTIME`]; the list index gaps and
/// every reserved byte are zero.
pub fn encode_with(meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
    if meta.expire_ms >= MILLIS_FLAG {
        return Err(out_of_range(
            "expire time (ms)",
            meta.expire_ms,
            "0..=9223372036854775807",
        ));
    }
    if meta.version >= MILLIS_FLAG && meta.data_type == DataType::String {
        return Err(out_of_range(
            "creation time (ms)",
            meta.version,
            "0..=9223372036854775807",
        ));
    }
    let ctime_ms = if meta.data_type.is_collection() && meta.variant & VARIANT_NO_CTIME != 0 {
        0
    } else {
        meta.version & !MILLIS_FLAG
    };
    let ctime = encode_time(ctime_ms).to_le_bytes();
    let etime = encode_time(meta.expire_ms).to_le_bytes();
    let mut out = Vec::with_capacity(LIST_META_LEN + string.len());
    out.push(type_byte(meta.data_type));
    match meta.data_type {
        DataType::String => out.extend_from_slice(string),
        DataType::List => {
            let ListBounds::Array { head, tail } = meta.list else {
                return Err(out_of_range("list bounds", 0, "array bounds"));
            };
            out.extend_from_slice(&meta.size.to_le_bytes());
            out.extend_from_slice(&meta.version.to_le_bytes());
            out.extend_from_slice(&head.wrapping_sub(1).to_le_bytes());
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&tail.to_le_bytes());
            out.extend_from_slice(&[0; 8]);
        }
        DataType::Hash | DataType::Set | DataType::ZSet => {
            let count = i32::try_from(meta.size)
                .map_err(|_| out_of_range("element count", meta.size, "0..=2147483647"))?;
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&meta.version.to_le_bytes());
        }
    }
    out.extend_from_slice(&[0; RESERVE_LEN]);
    out.extend_from_slice(&ctime);
    out.extend_from_slice(&etime);
    Ok(out)
}

/// [`encode_with`] a string's payload taken from [`Meta::value`].
pub fn encode(meta: &Meta) -> Result<Vec<u8>, EncodeError> {
    encode_with(meta, &meta.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_and_without_the_flag() {
        assert_eq!(encode_time(0), 0);
        assert_eq!(
            encode_time(1_700_000_000_000),
            1_700_000_000_000 | MILLIS_FLAG
        );
        assert_eq!(
            decode_time(1_700_000_000_000 | MILLIS_FLAG),
            1_700_000_000_000
        );
        // Pika 4.0.0 wrote seconds.
        assert_eq!(decode_time(1_700_000_000), 1_700_000_000_000);
        assert_eq!(decode_time(0), 0);
    }

    #[test]
    fn round_trips_of_every_type() {
        let mut s = Meta::string(b"bar".to_vec(), 1_700_000_100_000);
        s.version = 1_700_000_000_000;
        assert_eq!(decode(&encode(&s).unwrap()).unwrap(), s);
        for t in [
            DataType::Hash,
            DataType::Set,
            DataType::ZSet,
            DataType::List,
        ] {
            let mut m = new_meta(t, 1_700_000_000_000);
            m.size = 3;
            m.expire_ms = 5;
            let raw = encode(&m).unwrap();
            let len = if t == DataType::List {
                LIST_META_LEN
            } else {
                BASE_META_LEN
            };
            assert_eq!(raw.len(), len);
            assert_eq!(decode(&raw).unwrap(), m);
        }
    }

    #[test]
    fn a_reset_collection_keeps_creation_time_0() {
        let ctime_at =
            |raw: &[u8]| u64::from_le_bytes(raw[raw.len() - 16..][..8].try_into().unwrap());
        for t in [DataType::Hash, DataType::List] {
            let mut old = new_meta(t, 1_700_000_000_000);
            old.size = 4;
            old.expire_ms = 1_700_000_000_500;
            assert_eq!(
                ctime_at(&encode(&old).unwrap()),
                1_700_000_000_000 | MILLIS_FLAG
            );
            let reset = reset_meta(&old, 1_700_000_000_001);
            assert_eq!(
                (reset.size, reset.expire_ms, &reset.list),
                (0, 0, &new_meta(t, 0).list)
            );
            let raw = encode(&reset).unwrap();
            assert_eq!(ctime_at(&raw), 0);
            // Decoded and rewritten with a new count, it stays 0.
            let mut again = decode(&raw).unwrap();
            assert_eq!(again, reset);
            again.size = 1;
            assert_eq!(ctime_at(&encode(&again).unwrap()), 0);
        }
        // A string's creation time is its version, never cleared.
        let mut s = Meta::string(b"v".to_vec(), 0);
        s.variant = VARIANT_NO_CTIME;
        s.version = 7;
        assert_eq!(ctime_at(&encode(&s).unwrap()), 7 | MILLIS_FLAG);
    }

    #[test]
    fn a_version_0_with_a_creation_time_reads_back_stable() {
        // Found by fuzz/floyd_decode: version 0, a stored ctime.
        let mut raw = encode(&new_meta(DataType::List, 0)).unwrap();
        let at = raw.len() - 16;
        raw[at..at + 8].copy_from_slice(&(5 | MILLIS_FLAG).to_le_bytes());
        let meta = decode(&raw).unwrap();
        let again = encode(&meta).unwrap();
        assert_eq!(decode(&again).unwrap(), meta);
    }

    #[test]
    fn unmodelled_and_unknown_types() {
        let mut hll = encode(&Meta::string(b"x".to_vec(), 0)).unwrap();
        hll[2] = HYPERLOGLOG_FLAG;
        assert!(matches!(
            decode(&hll),
            Err(DecodeError::Unmodelled {
                type_name: "hyperloglog",
                ..
            })
        ));
        let mut stream = vec![TYPE_STREAM];
        stream.extend_from_slice(&[0; 60]);
        assert!(matches!(
            decode(&stream),
            Err(DecodeError::Unmodelled {
                type_name: "stream",
                ..
            })
        ));
        assert!(matches!(
            decode(&[6; 45]),
            Err(DecodeError::UnknownType { tag: 6, .. })
        ));
        assert!(decode(&[]).is_err());
        assert!(decode(&[1; 44]).is_err());
        assert!(decode(&[3; 80]).is_err());
    }

    #[test]
    fn limits() {
        let mut m = new_meta(DataType::Hash, 1);
        m.size = i32::MAX as u64 + 1;
        assert!(encode(&m).is_err());
        let mut m = new_meta(DataType::Set, 1);
        m.expire_ms = MILLIS_FLAG;
        assert!(encode(&m).is_err());
        m.expire_ms = MILLIS_FLAG - 1;
        assert!(encode(&m).is_ok());
    }
}
