//! Metadata values (`src/storage/redis_metadata.{h,cc}`). Integers are
//! big-endian.
//!
//! ```text
//! flags = [bit 7: 64-bit common fields][bits 4-6: 0][bits 0-3: type]
//! new:     flags | expire u64 (ms)  | version u64 | size u64 | type-specific
//! legacy:  flags | expire u32 (sec) | version u64 | size u32 | type-specific
//! string:  flags | expire                                    | payload
//! list type-specific: head u64 | tail u64
//! ```
//!
//! [`Meta::variant`] records the layout: [`VARIANT_NEW`] or [`VARIANT_LEGACY`].

use redcodec_codec::{DataType, DecodeError, EncodeError, ListBounds, Meta, Reader};

use crate::keys::put_u64;

/// Flag bit: expire and size are 64-bit and expire is in milliseconds.
pub const FLAG_64BIT: u8 = 0x80;
/// Mask of the type code in the flags byte.
pub const TYPE_MASK: u8 = 0x0F;
/// Flag bits Kvrocks never sets.
pub const UNUSED_FLAGS: u8 = 0x70;

/// [`Meta::variant`] of the new (64-bit) layout.
pub const VARIANT_NEW: u8 = 0;
/// [`Meta::variant`] of the legacy (32-bit) layout.
pub const VARIANT_LEGACY: u8 = 1;

/// Where a new list's head and tail start (`UINT64_MAX / 2`).
pub const LIST_INITIAL_INDEX: u64 = u64::MAX / 2;

/// Kvrocks type codes (`RedisType`).
pub mod type_code {
    /// String.
    pub const STRING: u8 = 1;
    /// Hash.
    pub const HASH: u8 = 2;
    /// List.
    pub const LIST: u8 = 3;
    /// Set.
    pub const SET: u8 = 4;
    /// Sorted set.
    pub const ZSET: u8 = 5;
    /// Bitmap (unsupported).
    pub const BITMAP: u8 = 6;
    /// Sorted integers (unsupported).
    pub const SORTEDINT: u8 = 7;
    /// Stream (unsupported).
    pub const STREAM: u8 = 8;
    /// Bloom filter chain (unsupported).
    pub const BLOOM_FILTER: u8 = 9;
    /// JSON (unsupported).
    pub const JSON: u8 = 10;
    /// HyperLogLog (unsupported).
    pub const HYPERLOGLOG: u8 = 11;
}

const RECORD: &str = "kvrocks metadata";

/// The Kvrocks type code of `data_type`.
pub fn code_of(data_type: DataType) -> u8 {
    match data_type {
        DataType::String => type_code::STRING,
        DataType::Hash => type_code::HASH,
        DataType::List => type_code::LIST,
        DataType::Set => type_code::SET,
        DataType::ZSet => type_code::ZSET,
    }
}

/// The name of a Kvrocks type redcodec does not model (`RedisType`,
/// `src/storage/redis_metadata.h`).
pub fn unmodelled_name(code: u8) -> Option<&'static str> {
    match code {
        type_code::BITMAP => Some("bitmap"),
        type_code::SORTEDINT => Some("sortedint"),
        type_code::STREAM => Some("stream"),
        type_code::BLOOM_FILTER => Some("bloom filter"),
        type_code::JSON => Some("JSON value"),
        type_code::HYPERLOGLOG => Some("hyperloglog"),
        _ => None,
    }
}

/// The supported type of a Kvrocks type code.
pub fn type_of(code: u8) -> Option<DataType> {
    match code {
        type_code::STRING => Some(DataType::String),
        type_code::HASH => Some(DataType::Hash),
        type_code::LIST => Some(DataType::List),
        type_code::SET => Some(DataType::Set),
        type_code::ZSET => Some(DataType::ZSet),
        _ => None,
    }
}

/// Kvrocks' `ExpireMsToS`: 0 stays 0, below one second becomes 1, otherwise
/// `(ms + 499) / 1000`.
pub fn expire_ms_to_s(ms: u64) -> u64 {
    match ms {
        0 => 0,
        1..=999 => 1,
        _ => ms / 1000 + u64::from(ms % 1000 >= 501),
    }
}

/// Fresh metadata of a new key: lists start at head = tail = 2^63 − 1;
/// strings carry no version.
pub fn new_meta(data_type: DataType, version: u64) -> Meta {
    if data_type == DataType::String {
        return Meta::string(Vec::new(), 0);
    }
    let empty_list = ListBounds::Array {
        head: LIST_INITIAL_INDEX,
        tail: LIST_INITIAL_INDEX,
    };
    Meta {
        variant: VARIANT_NEW,
        ..Meta::fresh(data_type, version, empty_list)
    }
}

/// The common fields every Kvrocks type starts with, as Kvrocks' base
/// `Metadata::Decode` reads them: flags and expire, then version and size
/// unless the type is a single-value type (string, JSON). Bytes after these
/// are ignored. Used by the compaction rules, which see every type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The flags byte.
    pub flags: u8,
    /// Expiry in unix milliseconds (0: none).
    pub expire_ms: u64,
    /// Version (0 for single-value types).
    pub version: u64,
    /// Element count (0 for single-value types).
    pub size: u64,
}

impl Header {
    /// Reads the common fields of any type.
    pub fn decode(raw: &[u8]) -> Result<Header, DecodeError> {
        Header::read(&mut Reader::new(RECORD, raw))
    }

    fn read(r: &mut Reader<'_>) -> Result<Header, DecodeError> {
        let flags = r.u8()?;
        let wide = flags & FLAG_64BIT != 0;
        let expire_ms = if wide {
            r.u64_be()?
        } else {
            u64::from(r.u32_be()?) * 1000
        };
        let mut header = Header {
            flags,
            expire_ms,
            version: 0,
            size: 0,
        };
        if !header.is_single_value() {
            header.version = r.u64_be()?;
            header.size = if wide {
                r.u64_be()?
            } else {
                u64::from(r.u32_be()?)
            };
        }
        Ok(header)
    }

    /// The type code.
    pub fn type_code(&self) -> u8 {
        self.flags & TYPE_MASK
    }

    /// Whether the value is the whole key (string, JSON): no version, no size,
    /// no subkeys (`IsSingleKVType`).
    pub fn is_single_value(&self) -> bool {
        matches!(self.type_code(), type_code::STRING | type_code::JSON)
    }

    /// Whether a size of 0 is a live key (`IsEmptyableType`).
    pub fn is_emptyable(&self) -> bool {
        self.is_single_value()
            || matches!(
                self.type_code(),
                type_code::STREAM | type_code::BLOOM_FILTER | type_code::HYPERLOGLOG
            )
    }

    /// Kvrocks' `ExpireAt(ts)`: a non-emptyable type with size 0, or an
    /// expiry strictly before `ts`.
    pub fn expired_at(&self, ts_ms: u64) -> bool {
        (!self.is_emptyable() && self.size == 0) || (self.expire_ms != 0 && self.expire_ms < ts_ms)
    }
}

/// Decodes a metadata value of a supported type.
///
/// The type comes from the flags byte. Kvrocks' other types give
/// [`DecodeError::Unmodelled`], codes Kvrocks does not define
/// [`DecodeError::UnknownType`]; bytes after the fields of a collection's
/// layout are an error (a newer Kvrocks hash with per-field expiry has them).
pub fn decode(raw: &[u8]) -> Result<Meta, DecodeError> {
    let mut r = Reader::new(RECORD, raw);
    let header = Header::read(&mut r)?;
    if header.flags & UNUSED_FLAGS != 0 {
        return Err(r.invalid(format!("unknown flag bits in {:#04x}", header.flags)));
    }
    let code = header.type_code();
    let data_type = match (type_of(code), unmodelled_name(code)) {
        (Some(t), _) => t,
        (None, Some(type_name)) => {
            return Err(DecodeError::Unmodelled {
                record: RECORD,
                type_name,
            })
        }
        (None, None) => {
            return Err(DecodeError::UnknownType {
                record: RECORD,
                tag: code,
            })
        }
    };
    let variant = if header.flags & FLAG_64BIT != 0 {
        VARIANT_NEW
    } else {
        VARIANT_LEGACY
    };
    let mut meta = Meta {
        data_type,
        expire_ms: header.expire_ms,
        version: header.version,
        size: header.size,
        list: ListBounds::None,
        value: Vec::new(),
        variant,
        bounds: None,
    };
    match data_type {
        DataType::String => meta.value = r.rest().to_vec(),
        DataType::List => {
            let head = r.u64_be()?;
            let tail = r.u64_be()?;
            meta.list = ListBounds::Array { head, tail };
        }
        DataType::Hash | DataType::Set | DataType::ZSet => {}
    }
    if r.remaining() != 0 {
        let reason = if data_type == DataType::Hash {
            format!(
                "{} bytes after the hash metadata: per-field hash expiry is not supported",
                r.remaining()
            )
        } else {
            format!("{} trailing bytes", r.remaining())
        };
        return Err(r.invalid(reason));
    }
    Ok(meta)
}

/// Encodes metadata in the layout its [`Meta::variant`] names, `string`
/// as a string's payload (in place of [`Meta::value`]).
pub fn encode_with(meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let wide = match meta.variant {
        VARIANT_NEW => true,
        VARIANT_LEGACY => false,
        other => {
            return Err(out_of_range(
                "metadata variant",
                other,
                "0 (new) or 1 (legacy)",
            ))
        }
    };
    let code = code_of(meta.data_type);
    let mut out = Vec::with_capacity(1 + 8 + 8 + 8 + 16 + string.len());
    out.push(if wide { FLAG_64BIT | code } else { code });
    if wide {
        put_u64(&mut out, meta.expire_ms);
    } else {
        let secs = expire_ms_to_s(meta.expire_ms);
        out.extend_from_slice(&narrow(secs, "legacy expire (seconds)")?.to_be_bytes());
    }
    if meta.data_type == DataType::String {
        out.extend_from_slice(string);
        return Ok(out);
    }
    put_u64(&mut out, meta.version);
    if wide {
        put_u64(&mut out, meta.size);
    } else {
        out.extend_from_slice(&narrow(meta.size, "legacy size")?.to_be_bytes());
    }
    if meta.data_type == DataType::List {
        let ListBounds::Array { head, tail } = meta.list else {
            return Err(out_of_range(
                "list bounds",
                format!("{:?}", meta.list),
                "ListBounds::Array",
            ));
        };
        put_u64(&mut out, head);
        put_u64(&mut out, tail);
    }
    Ok(out)
}

/// [`encode_with`] a string's payload taken from [`Meta::value`].
pub fn encode(meta: &Meta) -> Result<Vec<u8>, EncodeError> {
    encode_with(meta, &meta.value)
}

fn narrow(v: u64, what: &'static str) -> Result<u32, EncodeError> {
    u32::try_from(v).map_err(|_| out_of_range(what, v, "0..=4294967295"))
}

fn out_of_range(what: &'static str, value: impl ToString, range: &str) -> EncodeError {
    EncodeError::out_of_range("kvrocks", what, value, range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::{hex_compact as hex, unhex};

    #[test]
    fn expire_ms_to_s_rule() {
        assert_eq!(expire_ms_to_s(0), 0);
        assert_eq!(expire_ms_to_s(1), 1);
        assert_eq!(expire_ms_to_s(999), 1);
        assert_eq!(expire_ms_to_s(1000), 1);
        assert_eq!(expire_ms_to_s(1500), 1);
        assert_eq!(expire_ms_to_s(1501), 2);
        assert_eq!(expire_ms_to_s(u64::MAX), u64::MAX / 1000 + 1);
        for ms in [1000u64, 1499, 1500, 1501, 2000, 123_456_789] {
            assert_eq!(expire_ms_to_s(ms), (ms + 499) / 1000);
        }
    }

    #[test]
    fn new_string() {
        let m = Meta::string(b"bar".to_vec(), 0);
        assert_eq!(hex(&encode(&m).unwrap()), "810000000000000000626172");
        assert_eq!(decode(&unhex("810000000000000000626172")).unwrap(), m);
    }

    #[test]
    fn legacy_string() {
        let m = decode(&unhex("01 00000000 626172")).unwrap();
        assert_eq!(m.value, b"bar");
        assert_eq!(m.variant, VARIANT_LEGACY);
        assert_eq!(m.expire_ms, 0);
        assert_eq!(hex(&encode(&m).unwrap()), "0100000000626172");
        let m = decode(&unhex("01 00000010 626172")).unwrap();
        assert_eq!(m.expire_ms, 16_000);
    }

    #[test]
    fn legacy_hash() {
        let raw = unhex("02 65536000 305120c0f2000000 00000003");
        let m = decode(&raw).unwrap();
        assert_eq!(m.data_type, DataType::Hash);
        assert_eq!(m.expire_ms, 0x6553_6000 * 1000);
        assert_eq!(m.version, 0x3051_20C0_F200_0000);
        assert_eq!(m.size, 3);
        assert_eq!(m.variant, VARIANT_LEGACY);
        assert_eq!(encode(&m).unwrap(), raw);
    }

    #[test]
    fn legacy_list_and_limits() {
        let raw = unhex("03 00000000 0000000000000009 00000002 7ffffffffffffffe 8000000000000000");
        let m = decode(&raw).unwrap();
        assert_eq!(
            m.list,
            ListBounds::Array {
                head: 0x7FFF_FFFF_FFFF_FFFE,
                tail: 0x8000_0000_0000_0000
            }
        );
        assert_eq!(encode(&m).unwrap(), raw);
        let mut big = m.clone();
        big.size = 1 << 32;
        assert!(encode(&big).is_err());
        let mut far = m;
        far.expire_ms = (u64::from(u32::MAX) + 1) * 1000;
        assert!(encode(&far).is_err());
    }

    #[test]
    fn new_list() {
        let m = new_meta(DataType::List, 42);
        assert_eq!(
            hex(&encode(&m).unwrap()),
            "83\
             0000000000000000\
             000000000000002a\
             0000000000000000\
             7fffffffffffffff\
             7fffffffffffffff"
        );
        assert_eq!(decode(&encode(&m).unwrap()).unwrap(), m);
        let mut broken = m;
        broken.list = ListBounds::None;
        assert!(encode(&broken).is_err());
    }

    #[test]
    fn unsupported_types_and_bad_flags() {
        for code in [6u8, 7, 8, 9, 10, 11] {
            let mut raw = vec![0x80 | code];
            raw.extend_from_slice(&[0; 40]);
            assert!(
                matches!(decode(&raw), Err(DecodeError::Unmodelled { .. })),
                "{code}"
            );
        }
        for code in [0u8, 12, 13, 14, 15] {
            let mut raw = vec![0x80 | code];
            raw.extend_from_slice(&[0; 40]);
            assert_eq!(
                decode(&raw),
                Err(DecodeError::UnknownType {
                    record: RECORD,
                    tag: code
                })
            );
        }
        let mut raw = unhex("c2 0000000000000000 0000000000000001 0000000000000001");
        assert!(matches!(decode(&raw), Err(DecodeError::Invalid { .. })));
        raw[0] = 0x82;
        assert!(decode(&raw).is_ok());
        raw.extend_from_slice(&[0, 0]);
        let err = decode(&raw).unwrap_err().to_string();
        assert!(err.contains("per-field hash expiry"), "{err}");
    }

    #[test]
    fn header_rules() {
        let h = Header::decode(&unhex(
            "82 0000000000000000 0000000000000001 0000000000000000",
        ))
        .unwrap();
        assert!(h.expired_at(0));
        let h = Header::decode(&unhex(
            "82 0000000000000064 0000000000000001 0000000000000001",
        ))
        .unwrap();
        assert!(!h.expired_at(100));
        assert!(h.expired_at(101));
        // Other types' common fields decode too (bitmap, stream with trailing fields).
        let h = Header::decode(&unhex(
            "88 0000000000000000 0000000000000001 0000000000000000 ffff",
        ))
        .unwrap();
        assert!(h.is_emptyable() && !h.expired_at(u64::MAX));
        let h = Header::decode(&unhex("8a 0000000000000000 00 7b7d")).unwrap();
        assert!(h.is_single_value());
        assert!(Header::decode(&unhex("82 00")).is_err());
    }
}
