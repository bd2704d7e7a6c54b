//! §3 of `formats-spec/ardb.md`: the value of a `META` key
//! (`encode_value_object`, `MetaObject::Encode`, `src/db/codec.cpp`).
//!
//! ```text
//! value = type u8 | format u8 (= 0) | ttl varint64 (absolute ms; 0 = none)
//!       | size varint64                (collections only; -1 = unknown)
//!       | list_sequential u8           (lists only)
//!       | count u8 | Data × count
//!
//! string  02 00 ttl 01 <value Data>
//! hash    03 00 ttl size 00
//! list    05 00 ttl size seq 02 <min index> <max index>
//! set     07 00 ttl size 02 <min member> <max member>   (redis-compatible mode)
//!         07 00 ttl size 00                            (no bounds: non-compat SADD)
//! zset    09 00 ttl size 02 <min member> <max member>
//! (empty) a missing key                                 (left by ardb.merger, §14)
//! ```
//!
//! Set and zset min/max members live in [`Meta::bounds`].
//!
//! [`Meta::variant`] bits: [`VARIANT_SIZE_UNKNOWN`] (collections: the stored
//! size is −1), [`VARIANT_FLOAT_VALUE`] (strings: the value is a float64)
//! and [`VARIANT_EMPTY_VALUE`] (the empty value).

use redcodec_codec::{DataType, DecodeError, EncodeError, ListBounds, Meta, Reader, SparseIndex};

use crate::keys::key_type;
use crate::primitives::{float_text, put_varint64, read_varint64, Data};

/// `kCurrentMetaFormat`: the only format byte Ardb writes.
pub const META_FORMAT: u8 = 0;

/// [`Meta::variant`] bit: the collection's stored size is −1 ("unknown").
/// It decodes as `size = 0` with this bit set, and a record carrying the bit
/// is written back with size −1 whatever [`Meta::size`] says.
pub const VARIANT_SIZE_UNKNOWN: u8 = 1;

/// [`Meta::variant`] bit: the string's value is a float64 `Data` (written by
/// `INCRBYFLOAT`). Encoding writes a float64 again when [`Meta::value`] is
/// the exact text decoding produced (see [`float_text`]), else the usual
/// int-or-string `Data`.
pub const VARIANT_FLOAT_VALUE: u8 = 2;

/// [`Meta::variant`] bit: the stored value is empty. Ardb reads an empty
/// value as a missing key (a value object of type 0); `ardb.merger` leaves
/// one when no operand applied to a key that had no value, e.g. `EXPIRE`
/// or `SET … XX` on a missing key (§14). It decodes as an empty hash, which
/// is never live, so every command sees no key; metadata carrying the bit
/// is not encoded (an [`EncodeError`]): it is only ever deleted or
/// replaced.
pub const VARIANT_EMPTY_VALUE: u8 = 4;

const RECORD: &str = "ardb metadata value";
const FORMAT: &str = "ardb";

/// The value type byte of a Redis type.
pub fn value_type_of(data_type: DataType) -> u8 {
    match data_type {
        DataType::String => key_type::STRING,
        DataType::Hash => key_type::HASH,
        DataType::List => key_type::LIST,
        DataType::Set => key_type::SET,
        DataType::ZSet => key_type::ZSET,
    }
}

/// The Redis type of a value type byte (streams and every other type: `None`).
pub fn type_of_value(ty: u8) -> Option<DataType> {
    match ty {
        key_type::STRING => Some(DataType::String),
        key_type::HASH => Some(DataType::Hash),
        key_type::LIST => Some(DataType::List),
        key_type::SET => Some(DataType::Set),
        key_type::ZSET => Some(DataType::ZSet),
        _ => None,
    }
}

/// Fresh metadata of a new key (`ListPush`: a new list has size 0,
/// min = max = int 0, sequential). Ardb has no versions: the version is 0.
pub fn new_meta(data_type: DataType) -> Meta {
    let empty_list = ListBounds::Sparse {
        min: SparseIndex::Int(0),
        max: SparseIndex::Int(0),
        sequential: true,
    };
    Meta::fresh(data_type, 0, empty_list)
}

/// The `Data` of a sparse list index.
pub fn index_data(i: SparseIndex) -> Data<'static> {
    match i {
        SparseIndex::Int(i) => Data::Int(i),
        SparseIndex::Float(f) => Data::Float(f),
    }
}

/// The sparse list index of a `Data`, if it is a number.
pub fn data_index(d: Data<'_>) -> Option<SparseIndex> {
    match d {
        Data::Int(i) => Some(SparseIndex::Int(i)),
        Data::Float(f) => Some(SparseIndex::Float(f)),
        _ => None,
    }
}

/// The `Data` a string value is stored as.
pub fn string_value_data(meta: &Meta) -> Data<'_> {
    string_data(meta.variant, &meta.value)
}

/// The `Data` the string `value` of a key whose metadata has `variant`
/// is stored as.
fn string_data(variant: u8, value: &[u8]) -> Data<'_> {
    if variant & VARIANT_FLOAT_VALUE != 0 {
        if let Some(f) = float_text(value) {
            return Data::Float(f);
        }
    }
    Data::try_int(value)
}

fn out_of_range(what: &'static str, value: impl ToString, range: &str) -> EncodeError {
    EncodeError::out_of_range(FORMAT, what, value, range)
}

/// Encodes metadata, `string` as a string's payload (in place of
/// [`Meta::value`]). Unknown [`Meta::variant`] bits, an expiry or size
/// beyond `i64::MAX`, and list metadata without sparse bounds are errors.
pub fn encode_with(meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError> {
    if meta.variant & !(VARIANT_SIZE_UNKNOWN | VARIANT_FLOAT_VALUE) != 0 {
        return Err(out_of_range(
            "metadata variant",
            meta.variant,
            "bits 0 (size unknown) and 1 (float value)",
        ));
    }
    let ttl = i64::try_from(meta.expire_ms)
        .map_err(|_| out_of_range("expire (ms)", meta.expire_ms, "0..=i64::MAX"))?;
    let mut out = Vec::with_capacity(16 + string.len());
    out.push(value_type_of(meta.data_type));
    out.push(META_FORMAT);
    put_varint64(&mut out, ttl);
    if meta.data_type == DataType::String {
        out.push(1);
        string_data(meta.variant, string).encode(&mut out);
        return Ok(out);
    }
    let size = if meta.variant & VARIANT_SIZE_UNKNOWN != 0 {
        -1
    } else {
        i64::try_from(meta.size).map_err(|_| out_of_range("size", meta.size, "0..=i64::MAX"))?
    };
    put_varint64(&mut out, size);
    if meta.data_type == DataType::List {
        let Some((min, max, sequential)) = meta.list.sparse() else {
            return Err(out_of_range(
                "list bounds",
                format!("{:?}", meta.list),
                "ListBounds::Sparse",
            ));
        };
        out.push(u8::from(sequential));
        out.push(2);
        index_data(min).encode(&mut out);
        index_data(max).encode(&mut out);
    } else if let Some((min, max)) = bounds_of(meta) {
        // Set and zset: the lowest and highest member.
        out.push(2);
        member_data(meta.data_type, min).encode(&mut out);
        member_data(meta.data_type, max).encode(&mut out);
    } else {
        // Hash: Ardb writes no elements; a set or zset without bounds.
        out.push(0);
    }
    Ok(out)
}

/// [`encode_with`] a string's payload taken from [`Meta::value`].
pub fn encode(meta: &Meta) -> Result<Vec<u8>, EncodeError> {
    encode_with(meta, &meta.value)
}

/// The stored min/max members of a set or zset, if it has them.
fn bounds_of(meta: &Meta) -> Option<(&[u8], &[u8])> {
    match (&meta.bounds, meta.data_type) {
        (Some((min, max)), DataType::Set | DataType::ZSet) => Some((min, max)),
        _ => None,
    }
}

/// A member as its `Data`: set members are int-encoded when canonical
/// (`SetSetMember`), zset members always strings (`SetZSetMember`).
pub fn member_data(data_type: DataType, member: &[u8]) -> Data<'_> {
    if data_type == DataType::Set {
        Data::try_int(member)
    } else {
        Data::Str(member)
    }
}

/// Widens the min/max members of the set or zset `meta` to hold `member`
/// (`ValueObject::SetMinMaxData`), in `Data` order (sets: integers first,
/// numerically) or bytewise (zsets). A collection that has elements but no
/// stored bounds keeps none: one member alone would not bound the others.
pub fn widen_bounds(meta: &mut Meta, member: &[u8]) {
    let data_type = meta.data_type;
    if !matches!(data_type, DataType::Set | DataType::ZSet) {
        return;
    }
    let before = |a: &[u8], b: &[u8]| member_data(data_type, a).compare(&member_data(data_type, b));
    match &mut meta.bounds {
        None if meta.size == 0 => meta.bounds = Some((member.to_vec(), member.to_vec())),
        None => {}
        Some((min, max)) => {
            if before(member, min).is_lt() {
                *min = member.to_vec();
            }
            if before(member, max).is_gt() {
                *max = member.to_vec();
            }
        }
    }
}

/// The fields every metadata value starts with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The value type byte.
    pub ty: u8,
    /// Absolute expiry in unix ms (0: none; never negative).
    pub ttl_ms: u64,
}

impl Header {
    /// Reads the type, format and ttl of any metadata type (streams
    /// included). Fails for element values, merge operands and empty values.
    pub fn decode(raw: &[u8]) -> Result<Header, DecodeError> {
        Header::read(&mut Reader::new(RECORD, raw))
    }

    fn read(r: &mut Reader<'_>) -> Result<Header, DecodeError> {
        let ty = r.u8()?;
        if !key_type::is_meta(ty) {
            return Err(DecodeError::UnknownType {
                record: RECORD,
                tag: ty,
            });
        }
        let format = r.u8()?;
        if format != META_FORMAT {
            return Err(r.invalid(format!("unknown meta format {format}")));
        }
        let ttl = read_varint64(r)?;
        let ttl_ms = u64::try_from(ttl).map_err(|_| r.invalid(format!("negative ttl {ttl}")))?;
        Ok(Header { ty, ttl_ms })
    }

    /// Whether the key has expired at `now_ms` (`ttl > 0 && ttl < now`).
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.ttl_ms != 0 && self.ttl_ms < now_ms
    }
}

/// Decodes metadata of a supported type. Streams, element values and merge
/// operands give [`DecodeError::UnknownType`]; trailing bytes are an error.
/// The empty value is a missing key ([`VARIANT_EMPTY_VALUE`]).
pub fn decode(raw: &[u8]) -> Result<Meta, DecodeError> {
    if raw.is_empty() {
        return Ok(Meta {
            variant: VARIANT_EMPTY_VALUE,
            ..new_meta(DataType::Hash)
        });
    }
    let mut r = Reader::new(RECORD, raw);
    let header = Header::read(&mut r)?;
    let data_type = type_of_value(header.ty).ok_or(DecodeError::UnknownType {
        record: RECORD,
        tag: header.ty,
    })?;
    let mut meta = new_meta(data_type);
    meta.expire_ms = header.ttl_ms;
    if data_type.is_collection() {
        match read_varint64(&mut r)? {
            -1 => meta.variant |= VARIANT_SIZE_UNKNOWN,
            size => {
                meta.size =
                    u64::try_from(size).map_err(|_| r.invalid(format!("negative size {size}")))?;
            }
        }
    }
    let sequential = if data_type == DataType::List {
        match r.u8()? {
            0 => false,
            1 => true,
            other => return Err(r.invalid(format!("list_sequential is {other}, not 0 or 1"))),
        }
    } else {
        false
    };
    let count = r.u8()?;
    let mut elements = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        elements.push(Data::decode(&mut r)?);
    }
    r.finish()?;
    match data_type {
        DataType::String => {
            let [value] = elements.as_slice() else {
                return Err(r.invalid(format!("string holds {count} values, not 1")));
            };
            if matches!(value, Data::Float(_)) {
                meta.variant |= VARIANT_FLOAT_VALUE;
            }
            meta.value = value
                .to_value_bytes()
                .ok_or_else(|| r.invalid("string value is nil"))?;
        }
        DataType::List => {
            let [min, max] = elements.as_slice() else {
                return Err(r.invalid(format!("list holds {count} bounds, not 2")));
            };
            let (Some(min), Some(max)) = (data_index(*min), data_index(*max)) else {
                return Err(r.invalid("list bounds are not numbers"));
            };
            meta.list = ListBounds::Sparse {
                min,
                max,
                sequential,
            };
        }
        // Set and zset: the min/max members, when both are there.
        DataType::Set | DataType::ZSet => {
            if let [min, max] = elements.as_slice() {
                meta.bounds = min.to_value_bytes().zip(max.to_value_bytes());
            }
        }
        // Hash elements (none in practice) are validated above, not kept.
        DataType::Hash => {}
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::{hex, unhex};

    #[test]
    fn strings() {
        let m = Meta::string(b"bar".to_vec(), 0);
        assert_eq!(hex(&encode(&m).unwrap()), "02 00 00 01 04 03 62 61 72");
        assert_eq!(decode(&encode(&m).unwrap()).unwrap(), m);
        let m = Meta::string(b"123".to_vec(), 0);
        assert_eq!(hex(&encode(&m).unwrap()), "02 00 00 01 01 f6 01");
        assert_eq!(decode(&unhex("02 00 00 01 01 f6 01")).unwrap(), m);
        let m = Meta::string(b"bar".to_vec(), 1_700_000_000_000);
        assert_eq!(
            hex(&encode(&m).unwrap()),
            "02 00 80 a0 ab fe f9 62 01 04 03 62 61 72"
        );
        assert_eq!(decode(&encode(&m).unwrap()).unwrap(), m);
        // A string-tagged canonical integer reads as its text (and would be
        // rewritten int-encoded); the CSTR tag is accepted.
        assert_eq!(decode(&unhex("02 00 00 01 04 01 37")).unwrap().value, b"7");
        assert_eq!(decode(&unhex("02 00 00 01 03 01 37")).unwrap().value, b"7");
    }

    #[test]
    fn float_strings_keep_their_encoding() {
        let raw = {
            let mut v = unhex("02 00 00 01");
            Data::Float(3.5).encode(&mut v);
            v
        };
        let m = decode(&raw).unwrap();
        assert_eq!(m.value, b"3.5");
        assert_eq!(m.variant, VARIANT_FLOAT_VALUE);
        assert_eq!(encode(&m).unwrap(), raw);
        // Changed to text that is not the float's own: written as a string.
        let mut appended = m.clone();
        appended.value = b"3.50".to_vec();
        assert_eq!(
            hex(&encode(&appended).unwrap()),
            "02 00 00 01 04 04 33 2e 35 30"
        );
        let mut integral = m;
        integral.value = b"3".to_vec();
        assert_eq!(
            hex(&encode(&integral).unwrap()),
            hex(&[unhex("02 00 00 01"), Data::Float(3.0).to_bytes()].concat())
        );
    }

    #[test]
    fn collections() {
        let mut h = new_meta(DataType::Hash);
        h.size = 1;
        assert_eq!(hex(&encode(&h).unwrap()), "03 00 00 02 00");
        assert_eq!(decode(&unhex("03 00 00 02 00")).unwrap(), h);
        let unknown = decode(&unhex("03 00 00 01 00")).unwrap();
        assert_eq!(unknown.size, 0);
        assert_eq!(unknown.variant, VARIANT_SIZE_UNKNOWN);
        assert_eq!(hex(&encode(&unknown).unwrap()), "03 00 00 01 00");

        let mut l = new_meta(DataType::List);
        l.size = 1;
        assert_eq!(hex(&encode(&l).unwrap()), "05 00 00 02 01 02 01 00 01 00");
        assert_eq!(decode(&unhex("05 00 00 02 01 02 01 00 01 00")).unwrap(), l);
        l.list = ListBounds::Sparse {
            min: SparseIndex::Int(-3),
            max: SparseIndex::Float(0.5),
            sequential: false,
        };
        assert_eq!(decode(&encode(&l).unwrap()).unwrap(), l);

        // Set and zset metas keep their min/max members; set members are
        // int-encoded when canonical, zset members never.
        let s = decode(&unhex("07 00 00 04 02 01 0a 04 01 78")).unwrap();
        assert_eq!((s.data_type, s.size), (DataType::Set, 2));
        assert_eq!(s.bounds, Some((b"5".to_vec(), b"x".to_vec())));
        assert_eq!(hex(&encode(&s).unwrap()), "07 00 00 04 02 01 0a 04 01 78");
        let z = decode(&unhex("09 00 00 02 02 04 01 6d 04 01 6d")).unwrap();
        assert_eq!((z.data_type, z.size), (DataType::ZSet, 1));
        assert_eq!(z.bounds, Some((b"m".to_vec(), b"m".to_vec())));
        assert_eq!(
            hex(&encode(&z).unwrap()),
            "09 00 00 02 02 04 01 6d 04 01 6d"
        );
        let mut z5 = new_meta(DataType::ZSet);
        z5.size = 1;
        z5.bounds = Some((b"5".to_vec(), b"5".to_vec()));
        assert_eq!(
            hex(&encode(&z5).unwrap()),
            "09 00 00 02 02 04 01 35 04 01 35"
        );
        // Without min/max (non-compat SADD): none kept, none written.
        let bare = decode(&unhex("07 00 00 01 00")).unwrap();
        assert_eq!(bare.bounds, None);
        assert_eq!(hex(&encode(&bare).unwrap()), "07 00 00 01 00");
        // A hash never writes bounds.
        let mut h = new_meta(DataType::Hash);
        h.bounds = Some((b"a".to_vec(), b"b".to_vec()));
        assert_eq!(hex(&encode(&h).unwrap()), "03 00 00 00 00");
    }

    #[test]
    fn bounds_widen_in_member_order() {
        let mut s = new_meta(DataType::Set);
        for (m, size) in [(&b"b"[..], 0), (b"10", 1), (b"9", 2), (b"a", 3), (b"c", 4)] {
            s.size = size;
            widen_bounds(&mut s, m);
        }
        // Integers before strings, numerically: 9 < 10 < "a".
        assert_eq!(s.bounds, Some((b"9".to_vec(), b"c".to_vec())));
        let mut z = new_meta(DataType::ZSet);
        for (m, size) in [(&b"b"[..], 0), (b"10", 1), (b"9", 2), (b"bb", 3)] {
            z.size = size;
            widen_bounds(&mut z, m);
        }
        // Bytewise: "10" < "9" < "b" < "bb".
        assert_eq!(z.bounds, Some((b"10".to_vec(), b"bb".to_vec())));
        // Unknown bounds of a set that has members stay unknown.
        let mut old = new_meta(DataType::Set);
        old.size = 3;
        widen_bounds(&mut old, b"x");
        assert_eq!(old.bounds, None);
        let mut h = new_meta(DataType::Hash);
        widen_bounds(&mut h, b"x");
        assert_eq!(h.bounds, None);
    }

    #[test]
    fn decode_errors() {
        for (raw, what) in [
            ("0c 00 00 00 00", "stream"),
            ("1e 64 00 01 04 01 78", "merge operand"),
            ("04 01 04 01 76", "hash field value"),
            ("03 01 00 02 00", "format 1"),
            ("03 00 01 02 00", "negative ttl"),
            ("03 00 00 03 00", "size -2"),
            ("03 00 00 02 00 00", "trailing byte"),
            ("03 00 00 02 01", "missing element"),
            ("02 00 00 00", "string without value"),
            ("02 00 00 01 00", "nil string"),
            ("05 00 00 02 02 02 01 00 01 00", "sequential 2"),
            ("05 00 00 02 01 01 01 00", "one list bound"),
            ("05 00 00 02 01 02 04 00 01 00", "string bound"),
        ] {
            assert!(decode(&unhex(raw)).is_err(), "{what}");
        }
        assert_eq!(
            decode(&unhex("0c 00 00 00 00")),
            Err(DecodeError::UnknownType {
                record: RECORD,
                tag: 12
            })
        );
    }

    #[test]
    fn the_empty_value_is_a_missing_key() {
        let m = decode(b"").unwrap();
        assert_eq!((m.data_type, m.size, m.expire_ms), (DataType::Hash, 0, 0));
        assert_eq!(m.variant, VARIANT_EMPTY_VALUE);
        // Never written back: encoding refuses the bit.
        assert!(encode(&m).is_err());
    }

    #[test]
    fn encode_errors() {
        let mut m = new_meta(DataType::Set);
        m.variant = 4;
        assert!(encode(&m).is_err());
        m.variant = 0;
        m.expire_ms = 1 << 63;
        assert!(encode(&m).is_err());
        m.expire_ms = 0;
        m.size = 1 << 63;
        assert!(encode(&m).is_err());
        let mut l = new_meta(DataType::List);
        l.list = ListBounds::None;
        assert!(encode(&l).is_err());
    }

    #[test]
    fn header() {
        let h = Header::decode(&unhex("03 00 80 a0 ab fe f9 62 02 00")).unwrap();
        assert_eq!(h.ttl_ms, 1_700_000_000_000);
        assert!(!h.expired_at(1_700_000_000_000));
        assert!(h.expired_at(1_700_000_000_001));
        let stream = Header::decode(&unhex("0c 00 00 00 00 04 10")).unwrap();
        assert!(!stream.expired_at(u64::MAX));
        assert!(Header::decode(b"").is_err());
        assert!(Header::decode(&unhex("08 00")).is_err());
    }
}
