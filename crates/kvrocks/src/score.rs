//! The order-preserving double encoding (`EncodeDoubleToUInt64`,
//! `src/common/encoding.h`), written as a big-endian u64. Kvrocks uses it for
//! the zset member → score value and the first 8 bytes of a score-index key.
//!
//! A negative double (sign bit set) has all its bits flipped; any other
//! double has its sign bit set. Bytewise order of the result is numeric
//! order, with `-0.0` just below `+0.0`.

use byteorder::{BigEndian, ByteOrder};

/// The order-preserving u64 of `score`.
pub fn encode(score: f64) -> u64 {
    let bits = score.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The double an order-preserving u64 stands for.
pub fn decode(encoded: u64) -> f64 {
    let bits = if encoded >> 63 == 0 {
        !encoded
    } else {
        encoded & !(1 << 63)
    };
    f64::from_bits(bits)
}

/// The 8 bytes Kvrocks stores for `score`.
pub fn to_bytes(score: f64) -> [u8; 8] {
    let mut out = [0; 8];
    BigEndian::write_u64(&mut out, encode(score));
    out
}

/// The score of 8 stored bytes.
pub fn from_bytes(bytes: [u8; 8]) -> f64 {
    decode(BigEndian::read_u64(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: [u8; 8]) -> String {
        redcodec_testkit::hex_compact(&b)
    }

    #[test]
    fn reference_table() {
        assert_eq!(hex(to_bytes(1.5)), "bff8000000000000");
        assert_eq!(hex(to_bytes(-1.5)), "4007ffffffffffff");
        assert_eq!(hex(to_bytes(0.0)), "8000000000000000");
        assert_eq!(hex(to_bytes(-0.0)), "7fffffffffffffff");
        assert_eq!(hex(to_bytes(f64::INFINITY)), "fff0000000000000");
        assert_eq!(hex(to_bytes(f64::NEG_INFINITY)), "000fffffffffffff");
    }

    #[test]
    fn round_trip_keeps_bits() {
        for x in [
            0.0,
            -0.0,
            1.5,
            -1.5,
            f64::MIN,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
        ] {
            assert_eq!(from_bytes(to_bytes(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn bytewise_order_is_numeric_order() {
        let mut values = vec![
            f64::NEG_INFINITY,
            f64::MIN,
            -1e300,
            -1.5,
            -1.0,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            f64::MIN_POSITIVE,
            1.0,
            1.5,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        // Plus a deterministic spread of doubles across magnitudes and signs.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if !x.is_nan() {
                values.push(x);
            }
        }
        for a in &values {
            for b in values.iter().take(200) {
                if a < b {
                    assert!(to_bytes(*a) < to_bytes(*b), "{a} < {b}");
                } else if a > b {
                    assert!(to_bytes(*a) > to_bytes(*b), "{a} > {b}");
                }
            }
        }
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let mut by_bytes = values;
        by_bytes.sort_by_key(|x| to_bytes(*x));
        assert_eq!(
            sorted.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            by_bytes.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
}
