//! The score index transform (`EncodeScore` / `DecodeScore`,
//! `src/nemo_zset.h`; constants in `include/nemo_const.h`):
//!
//! ```text
//! iscore = (int64)(score * 100000 - 0.5) + 10^18    if score < 0
//! iscore = (int64)(score * 100000 + 0.5) + 10^18    otherwise
//! key bytes = htobe64(iscore)
//! score' = (iscore - 10^18) / 100000.0
//! ```
//!
//! The cast truncates toward zero, so the index keeps the score rounded
//! half away from zero at 5 decimal places (computed in doubles). `ZADD`
//! refuses scores outside `[-10^13, 10^13]`, so stored values lie in
//! `[0, 2·10^18]` and big-endian bytes sort numerically. The exact double
//! lives only in the member record.

/// `ZSET_SCORE_SHIFT`.
pub const SHIFT: i64 = 1_000_000_000_000_000_000;
/// Decimal places kept (`ZSET_SCORE_DECIMAL_DIGITS`).
pub const DECIMALS: u32 = 5;
/// `10^DECIMALS`.
pub const SCALE: f64 = 100_000.0;
/// `ZSET_SCORE_MAX`: the largest storable score.
pub const MAX_SCORE: f64 = 10_000_000_000_000.0;
/// `ZSET_SCORE_MIN`: the smallest storable score.
pub const MIN_SCORE: f64 = -MAX_SCORE;

/// `EncodeScore`. Within `[MIN_SCORE, MAX_SCORE]` this is nemo's
/// arithmetic exactly. Outside it (nemo refuses such scores; redcodec only
/// builds seek keys from them) the result saturates, keeping the order:
/// `-inf` gives 0, `+inf` a value above every storable score. NaN gives
/// the encoding of 0.
pub fn encode(score: f64) -> u64 {
    let scaled = if score < 0.0 {
        score * SCALE - 0.5
    } else {
        score * SCALE + 0.5
    };
    // `as` truncates toward zero like the C cast, saturating outside i64.
    let shifted = i128::from(scaled as i64) + i128::from(SHIFT);
    u64::try_from(shifted.max(0)).unwrap_or(u64::MAX)
}

/// `DecodeScore`: the indexed (rounded) score. The stored u64 is read as
/// an int64, as nemo does.
pub fn decode(iscore: u64) -> f64 {
    (iscore as i64).wrapping_sub(SHIFT) as f64 / SCALE
}

/// The 8 index bytes of `score` (big-endian).
pub fn to_bytes(score: f64) -> [u8; 8] {
    encode(score).to_be_bytes()
}

/// The indexed score of 8 index bytes.
pub fn from_bytes(bytes: [u8; 8]) -> f64 {
    decode(u64::from_be_bytes(bytes))
}

/// The score as the index keeps it: rounded to 5 decimals.
pub fn rounded(score: f64) -> f64 {
    decode(encode(score))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: [u8; 8]) -> String {
        redcodec_testkit::hex_compact(&b)
    }

    #[test]
    fn reference_bytes() {
        assert_eq!(hex(to_bytes(1.5)), "0de0b6b3a76649f0");
        assert_eq!(hex(to_bytes(-1.5)), "0de0b6b3a761b610");
        assert_eq!(hex(to_bytes(0.0)), "0de0b6b3a7640000");
        assert_eq!(hex(to_bytes(-0.0)), "0de0b6b3a7640000");
        assert_eq!(hex(to_bytes(MAX_SCORE)), "1bc16d674ec80000");
        assert_eq!(hex(to_bytes(MIN_SCORE)), "0000000000000000");
        assert_eq!(from_bytes(to_bytes(1.5)), 1.5);
        assert_eq!(from_bytes(to_bytes(-1.5)), -1.5);
        assert_eq!(from_bytes(to_bytes(0.0)), 0.0);
    }

    #[test]
    fn rounding_is_half_away_from_zero_at_five_decimals() {
        // 1/64 = 0.015625 is exact, and 0.015625 * 100000 = 1562.5 exactly.
        assert_eq!(encode(0.015625), SHIFT as u64 + 1563);
        assert_eq!(encode(-0.015625), SHIFT as u64 - 1563);
        assert_eq!(rounded(0.015625), 0.01563);
        assert_eq!(rounded(-0.015625), -0.01563);
        // Below half a unit rounds toward zero, above rounds away.
        assert_eq!(encode(0.000004), SHIFT as u64);
        assert_eq!(encode(-0.000004), SHIFT as u64);
        assert_eq!(encode(0.000007), SHIFT as u64 + 1);
        assert_eq!(encode(-0.000007), SHIFT as u64 - 1);
        assert_eq!(rounded(12.345674999), 12.34567);
        assert_eq!(rounded(-98.765432101), -98.76543);
    }

    #[test]
    fn limits_and_order() {
        assert_eq!(encode(MIN_SCORE), 0);
        assert_eq!(encode(MAX_SCORE), 2 * SHIFT as u64);
        assert_eq!(decode(0), MIN_SCORE);
        assert_eq!(decode(2 * SHIFT as u64), MAX_SCORE);
        assert_eq!(encode(f64::NEG_INFINITY), 0);
        assert!(encode(f64::INFINITY) > encode(MAX_SCORE));
        assert_eq!(encode(f64::NAN), SHIFT as u64);
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            MIN_SCORE,
            -12345.678905,
            -1.5,
            -0.000005,
            0.0,
            0.000005,
            1.0,
            1.5,
            99999.999995,
            MAX_SCORE,
            1e300,
            f64::INFINITY,
        ];
        for w in values.windows(2) {
            assert!(to_bytes(w[0]) <= to_bytes(w[1]), "{} {}", w[0], w[1]);
        }
    }
}
