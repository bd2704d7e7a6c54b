//! Metadata values, each followed by the [`Suffix`]
//! (`include/nemo_meta.h`, `src/nemo_list.cc`):
//!
//! ```text
//! string           value                          ‖ version (0) ‖ timestamp
//! hash, set, zset  len: i64 LE                    ‖ version ‖ timestamp    (16 bytes)
//! list             len ‖ left ‖ right ‖ cur_seq   ‖ version ‖ timestamp    (40 bytes, i64 LE each)
//! ```
//!
//! `DefaultMeta::DecodeFrom` and `ListMeta::DecodeFrom` require exactly 8
//! and 32 bytes before the suffix; so does redcodec. A length of 0 or less
//! is an empty (deleted) key; a negative length decodes to size 0.
//!
//! List links: `left` and `right` are the sequence numbers of the first and
//! last node (0 when empty) and `cur_seq` the next one to hand out. An empty
//! list is `ListMeta()` = `(0, 0, 0, 1)`; after the first push it is
//! `(1, 1, 1, 2)`.

use redcodec_codec::{DataType, DecodeError, EncodeError, ListBounds, Meta, Reader};

use crate::suffix::Suffix;
use crate::FORMAT;

/// The list bounds of an empty list (`ListMeta()`): no nodes, next sequence
/// number 1. Sequence number 0 is the null link.
pub const EMPTY_LIST: ListBounds = ListBounds::Linked {
    left: 0,
    right: 0,
    next_seq: 1,
};

/// Fresh metadata of a new key of `data_type` at `version`: size 0, the
/// empty list's links; strings carry version 0.
pub fn new_meta(data_type: DataType, version: u64) -> Meta {
    if data_type == DataType::String {
        return Meta::string(Vec::new(), 0);
    }
    Meta::fresh(data_type, version, EMPTY_LIST)
}

/// Encodes the metadata value of `meta`, suffix included, `string` as a
/// string's payload (in place of [`Meta::value`]).
pub fn encode_with(meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let suffix = Suffix::of_meta(meta)?;
    let mut out = Vec::with_capacity(string.len() + 40);
    match meta.data_type {
        DataType::String => out.extend_from_slice(string),
        DataType::Hash | DataType::Set | DataType::ZSet => put_i64(&mut out, size_of(meta)?),
        DataType::List => {
            let Some((left, right, next_seq)) = meta.list.linked() else {
                return Err(out_of_range(
                    "list bounds",
                    format!("{:?}", meta.list),
                    "ListBounds::Linked",
                ));
            };
            put_i64(&mut out, size_of(meta)?);
            put_i64(&mut out, left);
            put_i64(&mut out, right);
            put_i64(&mut out, next_seq);
        }
    }
    suffix.append_to(&mut out);
    Ok(out)
}

/// [`encode_with`] a string's payload taken from [`Meta::value`].
pub fn encode(meta: &Meta) -> Result<Vec<u8>, EncodeError> {
    encode_with(meta, &meta.value)
}

/// Decodes a metadata value read from the instance of `data_type`.
pub fn decode(data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError> {
    let record = record_name(data_type);
    let (payload, suffix) = Suffix::split(record, raw)?;
    let mut meta = new_meta(data_type, u64::from(suffix.version));
    meta.version = u64::from(suffix.version);
    meta.expire_ms = suffix.expire_ms();
    let mut r = Reader::new(record, payload);
    match data_type {
        DataType::String => meta.value = r.rest().to_vec(),
        DataType::Hash | DataType::Set | DataType::ZSet => meta.size = size_from(r.i64_le()?),
        DataType::List => {
            meta.size = size_from(r.i64_le()?);
            let left = r.i64_le()?;
            let right = r.i64_le()?;
            let next_seq = r.i64_le()?;
            meta.list = ListBounds::Linked {
                left,
                right,
                next_seq,
            };
        }
    }
    r.finish()?;
    Ok(meta)
}

/// The name of a metadata record of `data_type` in errors.
pub fn record_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::String => "nemo string value",
        DataType::Hash => "nemo hash metadata",
        DataType::List => "nemo list metadata",
        DataType::Set => "nemo set metadata",
        DataType::ZSet => "nemo zset metadata",
    }
}

fn size_from(len: i64) -> u64 {
    u64::try_from(len).unwrap_or(0)
}

fn size_of(meta: &Meta) -> Result<i64, EncodeError> {
    i64::try_from(meta.size).map_err(|_| out_of_range("size", meta.size, "0..=i64::MAX"))
}

fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn out_of_range(what: &'static str, value: impl ToString, range: &str) -> EncodeError {
    EncodeError::out_of_range(FORMAT, what, value, range)
}

#[cfg(test)]
mod tests {
    use super::*;

    use redcodec_testkit::hex_compact as hex;

    const T: u64 = 1_700_000_000;

    #[test]
    fn strings() {
        let m = Meta::string(b"bar".to_vec(), 0);
        assert_eq!(hex(&encode(&m).unwrap()), "6261720000000000000000");
        assert_eq!(decode(DataType::String, &encode(&m).unwrap()).unwrap(), m);
        let empty = Meta::string(Vec::new(), (T + 5) * 1000 + 999);
        let raw = encode(&empty).unwrap();
        assert_eq!(raw.len(), 8);
        assert_eq!(decode(DataType::String, &raw).unwrap(), empty);
        assert!(decode(DataType::String, &raw[..7]).is_err());
    }

    #[test]
    fn default_meta() {
        let mut m = new_meta(DataType::Set, T);
        m.size = 3;
        m.expire_ms = (T + 10) * 1000 + 999;
        let raw = encode(&m).unwrap();
        assert_eq!(hex(&raw), "030000000000000000f153650af15365");
        assert_eq!(decode(DataType::Set, &raw).unwrap(), m);
        // Exactly 8 bytes before the suffix.
        let mut long = raw.clone();
        long.insert(0, 0);
        assert!(decode(DataType::Set, &long).is_err());
        assert!(decode(DataType::Set, &raw[1..]).is_err());
        // A negative length is an empty key.
        let mut neg = raw;
        neg[..8].copy_from_slice(&(-2i64).to_le_bytes());
        assert_eq!(decode(DataType::Set, &neg).unwrap().size, 0);
    }

    #[test]
    fn list_meta() {
        let m = new_meta(DataType::List, T);
        assert_eq!(m.list, EMPTY_LIST);
        let raw = encode(&m).unwrap();
        assert_eq!(
            hex(&raw),
            "0000000000000000\
             0000000000000000\
             0000000000000000\
             0100000000000000\
             00f1536500000000"
        );
        assert_eq!(decode(DataType::List, &raw).unwrap(), m);
        assert!(decode(DataType::List, &raw[..39]).is_err());
        let mut broken = m;
        broken.list = ListBounds::Array { head: 0, tail: 0 };
        assert!(encode(&broken).is_err());
    }

    #[test]
    fn limits() {
        let mut m = new_meta(DataType::Hash, u64::from(u32::MAX) + 1);
        assert!(encode(&m).is_err());
        m.version = 1;
        m.size = u64::MAX;
        assert!(encode(&m).is_err());
        m.size = 1;
        m.expire_ms = (i32::MAX as u64 + 1) * 1000;
        assert!(encode(&m).is_err());
    }
}
