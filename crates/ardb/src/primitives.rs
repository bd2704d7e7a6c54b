//! §0 of `formats-spec/ardb.md`: the building blocks of every Ardb key and
//! value.
//!
//! - **varuint32 / varuint64**: LEB128, low 7 bits first, `0x80` = another
//!   byte follows (`WriteVarUInt32/64`, `src/common/buffer/buffer_helper.cpp`).
//! - **varint64**: zigzag `(n << 1) ^ (n >> 63)`, then LEB128.
//! - **`Data`** (`src/types.{hpp,cpp}`): a tagged scalar.
//!
//! ```text
//! nil     00
//! int64   01 varint64(n)
//! float64 02 varint64(bits of the double read as an int64)
//! string  04 varuint32(len) bytes        (decode also accepts tag 03)
//! ```
//!
//! - **Try int encoding** (`Data::SetString(str, true)`): a string that Redis'
//!   `string2ll` accepts, at most 21 bytes long, is stored as an int64.

use std::cmp::Ordering;

use redcodec_codec::{DecodeError, Reader};

/// `Data` tags (`enum DataEncoding`; 0 is nil).
pub mod tag {
    /// No value.
    pub const NIL: u8 = 0;
    /// `E_INT64`.
    pub const INT64: u8 = 1;
    /// `E_FLOAT64`.
    pub const FLOAT64: u8 = 2;
    /// `E_CSTR`: accepted on decode, never written.
    pub const CSTR: u8 = 3;
    /// `E_SDS`: every string is written with this tag.
    pub const SDS: u8 = 4;
}

/// Zigzag: small magnitudes of either sign become small unsigned numbers.
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Appends the LEB128 bytes of `v`.
pub fn put_varuint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the LEB128 bytes of `v`.
pub fn put_varuint32(out: &mut Vec<u8>, v: u32) {
    put_varuint64(out, u64::from(v));
}

/// Appends the zigzag LEB128 bytes of `v`.
pub fn put_varint64(out: &mut Vec<u8>, v: i64) {
    put_varuint64(out, zigzag(v));
}

/// Reads LEB128 of at most `max_bytes` bytes whose value fits `bits` bits
/// (`bits` ≥ 7). A one-byte number, the common case in keys, is read inline.
#[inline]
fn read_leb(r: &mut Reader<'_>, max_bytes: u32, bits: u32) -> Result<u64, DecodeError> {
    let first = r.u8()?;
    if first & 0x80 == 0 {
        return Ok(u64::from(first));
    }
    read_leb_tail(r, first, max_bytes, bits)
}

/// [`read_leb`] after a first byte with its continuation bit set.
fn read_leb_tail(
    r: &mut Reader<'_>,
    first: u8,
    max_bytes: u32,
    bits: u32,
) -> Result<u64, DecodeError> {
    let mut value = 0u64;
    for i in 0..max_bytes {
        let byte = if i == 0 { first } else { r.u8()? };
        let payload = u64::from(byte & 0x7F);
        let shift = 7 * i;
        // Bits that would land at or beyond `bits` make the number too large.
        if shift + 7 > bits && payload >> (bits - shift) != 0 {
            return Err(r.invalid(format!("varint overflows {bits} bits")));
        }
        value |= payload << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(r.invalid(format!("varint longer than {max_bytes} bytes")))
}

/// Reads a varuint32 (at most 5 bytes, value below 2^32).
#[inline]
pub fn read_varuint32(r: &mut Reader<'_>) -> Result<u32, DecodeError> {
    // read_leb guarantees the value fits 32 bits.
    read_leb(r, 5, 32).map(|v| v as u32)
}

/// Reads a varuint64 (at most 10 bytes, value below 2^64).
#[inline]
pub fn read_varuint64(r: &mut Reader<'_>) -> Result<u64, DecodeError> {
    read_leb(r, 10, 64)
}

/// Reads a zigzag varint64.
#[inline]
pub fn read_varint64(r: &mut Reader<'_>) -> Result<i64, DecodeError> {
    read_varuint64(r).map(unzigzag)
}

/// Redis `string2ll`, which Ardb carries: the integer a canonical decimal
/// spells. Rejects the empty string, `+`, leading zeros, `-0`, anything
/// else but digits and values outside `i64` (so every string longer than
/// Ardb's `LONG_STR_SIZE`, 21 bytes).
pub use redcodec_codec::number::parse_i64 as string2ll;

/// The decimal text of a double stored in a value, as Ardb prints it
/// (`Data::ToString` → `lf2string`, `src/common/util/string_helper.cpp`):
/// a whole number strictly between −(2^52 − 1) and 2^52 as an integer
/// (`-0.0` as `0`), anything else as C's `%.17g` (`0.10000000000000001`,
/// `1e+17`, `inf`, `-nan`).
pub fn format_float(f: f64) -> String {
    const MIN: f64 = -4_503_599_627_370_495.0;
    const MAX: f64 = 4_503_599_627_370_496.0;
    if f > MIN && f < MAX && f == f.trunc() {
        // In range and whole: the conversion is exact.
        return (f as i64).to_string();
    }
    format_g17(f)
}

/// glibc's `printf("%.17g", f)`: 17 significant digits, correctly rounded
/// (Rust's exact formatting rounds ties to even, as glibc does), trailing
/// zeros dropped; scientific notation when the decimal exponent is below
/// −4 or above 16, with a sign and at least two exponent digits.
fn format_g17(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let scientific = format!("{f:.16e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..17).contains(&exponent) {
        // 0 ≤ 16 − exponent ≤ 20.
        let decimals = (16 - exponent) as usize;
        trim_fraction(format!("{f:.decimals$}"))
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa.to_string()),
            exponent.unsigned_abs()
        )
    }
}

/// `%g`'s rule: no trailing zeros after the decimal point, and no point
/// without digits after it.
fn trim_fraction(mut s: String) -> String {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

/// The double `s` spells if [`format_float`] of it gives back exactly `s`.
pub fn float_text(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    let f: f64 = text.parse().ok()?;
    (format_float(f) == text).then_some(f)
}

/// Ardb's tagged scalar, borrowing string bytes from the record.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Data<'a> {
    /// Tag 0.
    Nil,
    /// Tag 1.
    Int(i64),
    /// Tag 2.
    Float(f64),
    /// Tag 4 (or 3 on decode).
    Str(&'a [u8]),
}

impl<'a> Data<'a> {
    /// A value, hash field or set member: an int64 when `string2ll` accepts
    /// it, else a string (`SetString(str, true)`).
    pub fn try_int(s: &'a [u8]) -> Data<'a> {
        match string2ll(s) {
            Some(i) => Data::Int(i),
            None => Data::Str(s),
        }
    }

    /// Appends the encoding. A string longer than `u32::MAX` bytes (beyond
    /// Redis' 512 MB limit) has its length saturated, which no decoder accepts.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Data::Nil => out.push(tag::NIL),
            Data::Int(i) => {
                out.push(tag::INT64);
                put_varint64(out, i);
            }
            Data::Float(f) => {
                out.push(tag::FLOAT64);
                put_varint64(out, f.to_bits() as i64);
            }
            Data::Str(s) => {
                out.push(tag::SDS);
                put_varuint32(out, u32::try_from(s.len()).unwrap_or(u32::MAX));
                out.extend_from_slice(s);
            }
        }
    }

    /// The encoding as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Reads one `Data`.
    #[inline]
    pub fn decode(r: &mut Reader<'a>) -> Result<Data<'a>, DecodeError> {
        match r.u8()? {
            tag::NIL => Ok(Data::Nil),
            tag::INT64 => Ok(Data::Int(read_varint64(r)?)),
            tag::FLOAT64 => Ok(Data::Float(f64::from_bits(read_varint64(r)? as u64))),
            tag::CSTR | tag::SDS => {
                let len = read_varuint32(r)?;
                let len = usize::try_from(len).map_err(|_| r.invalid("string too long"))?;
                Ok(Data::Str(r.take(len)?))
            }
            other => Err(r.invalid(format!("unknown Data tag {other:#04x}"))),
        }
    }

    /// Whether the scalar is an int64 or a float64.
    pub fn is_number(&self) -> bool {
        matches!(self, Data::Int(_) | Data::Float(_))
    }

    /// The number as a double (ints converted, possibly losing precision).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Data::Int(i) => Some(i as f64),
            Data::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The bytes a value, field or member stands for: an int64 as its
    /// canonical decimal, a float64 as [`format_float`], a string as itself.
    /// `None` for nil.
    pub fn to_value_bytes(&self) -> Option<Vec<u8>> {
        match *self {
            Data::Nil => None,
            Data::Int(i) => Some(i.to_string().into_bytes()),
            Data::Float(f) => Some(format_float(f).into_bytes()),
            Data::Str(s) => Some(s.to_vec()),
        }
    }

    /// `Data::Compare(other, alpha_cmp = false)`:
    ///
    /// - nil before everything else;
    /// - int vs int: the sign of `a − b` computed in wrapping int64
    ///   arithmetic (so `i64::MIN` compares *greater* than 1). Where that
    ///   difference is `i64::MIN` itself (two ints exactly 2^63 apart,
    ///   such as 0 and `i64::MIN`) it is negative both ways round, which
    ///   no comparator may answer: those two compare as numbers
    ///   (redcodec's choice; Ardb answers "less" both ways);
    /// - a float involved: compared as doubles (`-0.0 == 0.0`; an int beyond
    ///   2^53 loses precision). NaN, which Ardb never stores, is placed after
    ///   every other number and equal to itself (redcodec's choice);
    /// - every number before every string;
    /// - strings: memcmp, then the shorter first.
    pub fn compare(&self, other: &Data<'_>) -> Ordering {
        match (self, other) {
            (Data::Nil, Data::Nil) => Ordering::Equal,
            (Data::Nil, _) => Ordering::Less,
            (_, Data::Nil) => Ordering::Greater,
            (Data::Int(a), Data::Int(b)) => match a.wrapping_sub(*b) {
                i64::MIN => a.cmp(b),
                diff => diff.cmp(&0),
            },
            (Data::Str(a), Data::Str(b)) => a.cmp(b),
            (Data::Str(_), _) => Ordering::Greater,
            (_, Data::Str(_)) => Ordering::Less,
            _ => {
                // Both are numbers and at least one is a float.
                let (a, b) = (self.as_f64().unwrap_or(0.0), other.as_f64().unwrap_or(0.0));
                match (a.is_nan(), b.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_testkit::hex;

    fn decode(bytes: &[u8]) -> Result<Data<'_>, DecodeError> {
        let mut r = Reader::new("test", bytes);
        let d = Data::decode(&mut r)?;
        r.finish()?;
        Ok(d)
    }

    #[test]
    fn reference_data_bytes() {
        assert_eq!(hex(&Data::Nil.to_bytes()), "00");
        assert_eq!(hex(&Data::Int(123).to_bytes()), "01 f6 01");
        assert_eq!(hex(&Data::Int(5).to_bytes()), "01 0a");
        assert_eq!(hex(&Data::Float(0.0).to_bytes()), "02 00");
        assert_eq!(
            hex(&Data::Float(1.5).to_bytes()),
            "02 80 80 80 80 80 80 80 f8 7f"
        );
        assert_eq!(
            hex(&Data::Float(-1.0).to_bytes()),
            "02 ff ff ff ff ff ff ff 8f 80 01"
        );
        assert_eq!(
            hex(&Data::Float(-0.0).to_bytes()),
            "02 ff ff ff ff ff ff ff ff ff 01"
        );
        assert_eq!(hex(&Data::Str(b"bar").to_bytes()), "04 03 62 61 72");
    }

    #[test]
    fn data_round_trips() {
        let cases = [
            Data::Nil,
            Data::Int(0),
            Data::Int(-1),
            Data::Int(i64::MIN),
            Data::Int(i64::MAX),
            Data::Float(1.5),
            Data::Float(f64::NEG_INFINITY),
            Data::Float(5e-324),
            Data::Str(b""),
            Data::Str(&[0xFF; 200]),
        ];
        for d in cases {
            let bytes = d.to_bytes();
            let back = decode(&bytes).unwrap();
            match (d, back) {
                (Data::Float(a), Data::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                _ => assert_eq!(back, d),
            }
        }
        let bytes = Data::Float(-0.0).to_bytes();
        let back = decode(&bytes).unwrap();
        assert!(matches!(back, Data::Float(f) if f.to_bits() == (-0.0f64).to_bits()));
    }

    #[test]
    fn cstr_tag_decodes_and_bad_tags_fail() {
        assert_eq!(decode(&[3, 2, b'h', b'i']), Ok(Data::Str(b"hi")));
        assert!(decode(&[5, 0]).is_err());
        assert!(decode(&[4, 3, b'h']).is_err());
        assert!(decode(&[1]).is_err());
    }

    /// `read` over `bytes`.
    fn read_from<T>(
        read: fn(&mut Reader<'_>) -> Result<T, DecodeError>,
        bytes: &[u8],
    ) -> Result<T, DecodeError> {
        read(&mut Reader::new("t", bytes))
    }

    #[test]
    fn varint_limits() {
        let mut out = Vec::new();
        put_varuint64(&mut out, u64::MAX);
        assert_eq!(hex(&out), "ff ff ff ff ff ff ff ff ff 01");
        assert_eq!(read_from(read_varuint64, &out), Ok(u64::MAX));
        // An 11th byte, or a 10th byte above 1, overflows.
        assert!(read_from(read_varuint64, &[0xFF; 10]).is_err());
        let mut bad = out.clone();
        bad[9] = 0x02;
        assert!(read_from(read_varuint64, &bad).is_err());
        let mut out = Vec::new();
        put_varuint32(&mut out, u32::MAX);
        assert_eq!(hex(&out), "ff ff ff ff 0f");
        assert_eq!(read_from(read_varuint32, &out), Ok(u32::MAX));
        assert!(read_from(read_varuint32, &[0xFF, 0xFF, 0xFF, 0xFF, 0x1F]).is_err());
        assert!(read_from(read_varuint32, &[0x80]).is_err());
        for v in [0i64, 1, -1, 63, -64, 64, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            put_varint64(&mut out, v);
            assert_eq!(read_from(read_varint64, &out), Ok(v));
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn string2ll_rules() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"123"), Some(123));
        assert_eq!(string2ll(b"-5"), Some(-5));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"+1",
            b"01",
            b"00",
            b" 1",
            b"1 ",
            b"1a",
            b"1.0",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"99999999999999999999999",
        ] {
            assert_eq!(string2ll(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(Data::try_int(b"123"), Data::Int(123));
        assert_eq!(Data::try_int(b"0123"), Data::Str(b"0123"));
    }

    #[test]
    fn value_bytes_round_trip_through_try_int() {
        for s in [&b"123"[..], b"-7", b"0", b"007", b"abc", b"", b"1e3"] {
            assert_eq!(Data::try_int(s).to_value_bytes().unwrap(), s);
        }
        assert_eq!(Data::Float(3.5).to_value_bytes().unwrap(), b"3.5");
        assert_eq!(Data::Float(3.0).to_value_bytes().unwrap(), b"3");
        assert_eq!(Data::Nil.to_value_bytes(), None);
        assert_eq!(float_text(b"3.5"), Some(3.5));
        assert_eq!(float_text(b"3.50"), None);
        assert_eq!(float_text(b"inf"), Some(f64::INFINITY));
        assert_eq!(float_text(b"x"), None);
        assert_eq!(float_text(b"0.1"), None);
        assert_eq!(float_text(b"0.10000000000000001"), Some(0.1));
    }

    #[test]
    fn floats_print_as_lf2string() {
        // Whole numbers inside ±2^52 as integers; the rest as %.17g (the
        // expected texts are glibc's).
        for (f, text) in [
            (3.0, "3"),
            (-0.0, "0"),
            (-4_503_599_627_370_494.0, "-4503599627370494"),
            (4_503_599_627_370_495.0, "4503599627370495"),
            (4_503_599_627_370_496.0, "4503599627370496"),
            (-4_503_599_627_370_495.0, "-4503599627370495"),
            (1e17, "1e+17"),
            (1.5, "1.5"),
            (-2.5, "-2.5"),
            (0.1, "0.10000000000000001"),
            (1.0 / 3.0, "0.33333333333333331"),
            (0.0001, "0.0001"),
            (1e-5, "1.0000000000000001e-05"),
            (1e300, "1.0000000000000001e+300"),
            (5e-324, "4.9406564584124654e-324"),
            // Exactly 1e14 + 1/8: a tie at the 17th digit, rounded to even.
            (1e14 + 0.125, "100000000000000.12"),
            (123_456_789.123_456_79, "123456789.12345679"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
        ] {
            assert_eq!(format_float(f), text, "{f:e}");
        }
    }

    #[test]
    fn compare_rules() {
        use Ordering::*;
        assert_eq!(Data::Nil.compare(&Data::Int(i64::MIN)), Less);
        assert_eq!(Data::Nil.compare(&Data::Nil), Equal);
        assert_eq!(Data::Int(9).compare(&Data::Int(10)), Less);
        // Wrapping subtraction: i64::MIN - 1 = i64::MAX > 0.
        assert_eq!(Data::Int(i64::MIN).compare(&Data::Int(1)), Greater);
        assert_eq!(Data::Int(i64::MIN).compare(&Data::Int(0)), Less);
        assert_eq!(Data::Float(-0.0).compare(&Data::Float(0.0)), Equal);
        assert_eq!(Data::Int(0).compare(&Data::Float(0.5)), Less);
        assert_eq!(Data::Float(1.0).compare(&Data::Int(1)), Equal);
        assert_eq!(Data::Int(i64::MAX).compare(&Data::Str(b"")), Less);
        assert_eq!(Data::Str(b"09").compare(&Data::Str(b"1a")), Less);
        assert_eq!(Data::Str(b"a").compare(&Data::Str(b"ab")), Less);
        assert_eq!(Data::Float(f64::NAN).compare(&Data::Float(f64::NAN)), Equal);
        assert_eq!(
            Data::Float(f64::NAN).compare(&Data::Float(f64::INFINITY)),
            Greater
        );
        assert_eq!(Data::Float(f64::NAN).compare(&Data::Str(b"")), Less);
    }
}
