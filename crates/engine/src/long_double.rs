//! INCRBYFLOAT and HINCRBYFLOAT arithmetic as Redis does it on x86-64: in
//! C `long double` (x87 80-bit extended precision: a 64-bit significand),
//! parsed by `strtold` and printed with `%.17Lf` minus trailing zeros.
//! Doing the same sums in `f64` prints `0.1 + 0.2` as `0.30000000000000004`
//! where Redis prints `0.3`, so the arithmetic is emulated exactly here:
//! values are kept as `significand × 2^exponent`, and parsing, addition and
//! printing round to nearest, ties to even, with big integers.

use num_bigint::{BigInt, BigUint, Sign};

/// Largest binary exponent of the x87 format (values below 2^16384).
const MAX_EXP2: i64 = 16384;
/// Values below 2^-16445 (the smallest subnormal) are zero.
const MIN_EXP2: i64 = -16445;
/// Longest text Redis parses as a long double (`MAX_LONG_DOUBLE_CHARS`).
const MAX_TEXT: usize = 5 * 1024;

/// An x87 extended value: `(-1)^negative × significand × 2^exponent`,
/// with the significand normalized to 64 bits (or zero), or ±infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongDouble {
    negative: bool,
    significand: u64,
    exponent: i64,
    infinite: bool,
}

/// Why a sum has no finite result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotFinite;

impl LongDouble {
    /// Zero.
    pub const ZERO: LongDouble = LongDouble {
        negative: false,
        significand: 0,
        exponent: 0,
        infinite: false,
    };

    /// A double's exact value as a long double (C's promotion: every
    /// double is one); ±infinity for an infinite double, zero for NaN.
    pub fn from_f64(value: f64) -> LongDouble {
        let negative = value.is_sign_negative();
        if value.is_infinite() {
            return LongDouble {
                negative,
                significand: 0,
                exponent: 0,
                infinite: true,
            };
        }
        if value == 0.0 || value.is_nan() {
            return LongDouble::ZERO;
        }
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mantissa, exponent) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        let shift = mantissa.leading_zeros();
        LongDouble {
            negative,
            significand: mantissa << shift,
            exponent: exponent - i64::from(shift),
            infinite: false,
        }
    }

    /// Whether this is ±infinity (which `strtold` accepts as `inf`).
    pub fn is_infinite(self) -> bool {
        self.infinite
    }

    /// Parses `text` as Redis' `string2ld` does: `strtold` syntax (decimal
    /// or hexadecimal, optional exponent, `inf`/`infinity`), no leading
    /// space, nothing after the number; NaN and values that overflow or
    /// underflow to zero are rejected (`None`).
    pub fn parse(text: &[u8]) -> Option<LongDouble> {
        if text.is_empty() || text.len() >= MAX_TEXT {
            return None;
        }
        let (negative, body) = match text[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let lower = body.to_ascii_lowercase();
        if lower == b"inf" || lower == b"infinity" {
            return Some(LongDouble {
                negative,
                infinite: true,
                ..LongDouble::ZERO
            });
        }
        let (mantissa, exp2) = if body.len() > 2 && body[..2].eq_ignore_ascii_case(b"0x") {
            parse_hex(&body[2..])?
        } else {
            parse_decimal(body)?
        };
        let nonzero = mantissa.sign() != Sign::NoSign;
        let value = round(
            negative,
            BigInt::from_biguint(Sign::Plus, mantissa.magnitude().clone()),
            exp2,
        );
        match value {
            Ok(v) if nonzero && v.significand == 0 => None, // underflow (ERANGE)
            Ok(v) => Some(v),
            Err(NotFinite) => None,
        }
    }

    /// `self + other`, rounded to the format; an infinite or NaN result is
    /// an error.
    pub fn plus(self, other: LongDouble) -> Result<LongDouble, NotFinite> {
        if self.infinite || other.infinite {
            return Err(NotFinite);
        }
        let (a, b) = if self.exponent >= other.exponent {
            (self, other)
        } else {
            (other, self)
        };
        if b.significand == 0 {
            return Ok(a);
        }
        if a.significand == 0 {
            return Ok(b);
        }
        // An addend below a quarter of the larger value's last place cannot
        // change the rounded sum.
        if a.exponent - b.exponent > 67 {
            return Ok(a);
        }
        let shift = (a.exponent - b.exponent) as usize;
        let sa = signed(a.negative, BigInt::from(a.significand) << shift);
        let sb = signed(b.negative, BigInt::from(b.significand));
        let sum = sa + sb;
        let negative = sum.sign() == Sign::Minus;
        round(
            negative,
            BigInt::from_biguint(Sign::Plus, sum.magnitude().clone()),
            b.exponent,
        )
    }

    /// The text Redis stores for the result of an increment:
    /// `%.17Lf` with trailing zeros (and a trailing `.`) removed, `-0` as `0`.
    pub fn to_redis_string(self) -> String {
        let scale = BigUint::from(10u32).pow(17);
        let mut n = BigUint::from(self.significand) * scale;
        if self.exponent >= 0 {
            n <<= self.exponent as usize;
        } else {
            n = shift_right_even(n, (-self.exponent) as usize);
        }
        let digits = n.to_str_radix(10);
        let digits = format!("{digits:0>18}");
        let (int_part, frac_part) = digits.split_at(digits.len() - 17);
        let frac = frac_part.trim_end_matches('0');
        let mut out = String::new();
        if self.negative && n.bits() > 0 {
            out.push('-');
        }
        out.push_str(int_part);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out
    }
}

fn signed(negative: bool, v: BigInt) -> BigInt {
    if negative {
        -v
    } else {
        v
    }
}

/// Rounds `mantissa × 2^exp2` (mantissa ≥ 0) to a 64-bit significand.
fn round(negative: bool, mantissa: BigInt, exp2: i64) -> Result<LongDouble, NotFinite> {
    let m = mantissa.magnitude().clone();
    let bits = m.bits() as i64;
    if bits == 0 {
        return Ok(LongDouble {
            negative,
            ..LongDouble::ZERO
        });
    }
    let mut exponent = exp2 + bits - 64;
    let significand = if bits > 64 {
        let s = shift_right_even(m, (bits - 64) as usize);
        if s.bits() > 64 {
            exponent += 1;
            s >> 1usize
        } else {
            s
        }
    } else {
        m << ((64 - bits) as usize)
    };
    if exponent + 64 > MAX_EXP2 {
        return Err(NotFinite);
    }
    if exponent + 64 <= MIN_EXP2 {
        return Ok(LongDouble {
            negative,
            ..LongDouble::ZERO
        });
    }
    Ok(LongDouble {
        negative,
        significand: u64::try_from(&significand).unwrap_or(u64::MAX),
        exponent,
        infinite: false,
    })
}

/// `n / 2^shift`, rounded to nearest, ties to even.
fn shift_right_even(n: BigUint, shift: usize) -> BigUint {
    if shift == 0 {
        return n;
    }
    let q: BigUint = &n >> shift;
    let rem = &n - (&q << shift);
    let half = BigUint::from(1u32) << (shift - 1);
    if rem > half || (rem == half && q.bit(0)) {
        q + 1u32
    } else {
        q
    }
}

/// Decimal `digits[.digits][e±digits]` into an exact `(mantissa, binary exponent)`: the value is
/// approximated by dividing with enough extra bits to round correctly.
fn parse_decimal(body: &[u8]) -> Option<(BigInt, i64)> {
    let mut digits = BigUint::from(0u32);
    let mut exp10: i64 = 0;
    let mut seen_digit = false;
    let mut i = 0;
    let mut in_fraction = false;
    while i < body.len() {
        match body[i] {
            d @ b'0'..=b'9' => {
                digits = digits * 10u32 + u32::from(d - b'0');
                seen_digit = true;
                if in_fraction {
                    exp10 -= 1;
                }
            }
            b'.' if !in_fraction => in_fraction = true,
            b'e' | b'E' if seen_digit => break,
            _ => return None,
        }
        i += 1;
    }
    if !seen_digit {
        return None;
    }
    if i < body.len() {
        let e = std::str::from_utf8(&body[i + 1..]).ok()?;
        if e.is_empty()
            || e.starts_with(['+', '-']) && e.len() == 1
            || !e
                .trim_start_matches(['+', '-'])
                .bytes()
                .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let e: i64 = e.parse().unwrap_or(if e.starts_with('-') {
            -100_000
        } else {
            100_000
        });
        exp10 = exp10.checked_add(e)?;
    }
    if digits.bits() == 0 {
        return Some((BigInt::from(0u32), 0));
    }
    // Far outside the format's range: overflow or underflow.
    if exp10 > 5000 {
        return None;
    }
    if exp10 < -5100 {
        return Some((BigInt::from(1u32), MIN_EXP2 - 200));
    }
    if exp10 >= 0 {
        let n = digits * BigUint::from(10u32).pow(exp10 as u32);
        return Some((BigInt::from_biguint(Sign::Plus, n), 0));
    }
    // value = digits / 10^k: scale up by 2^extra so the quotient has 66+
    // bits, keep a sticky bit for the remainder, and let `round` finish.
    let den = BigUint::from(10u32).pow((-exp10) as u32);
    let extra = (den.bits() as i64 - digits.bits() as i64 + 70).max(0);
    let num = digits << (extra as usize);
    let q: BigUint = &num / &den;
    let sticky = &q * &den != num;
    let q = (q << 1usize) + u32::from(sticky);
    Some((BigInt::from_biguint(Sign::Plus, q), -extra - 1))
}

/// Hexadecimal `h[.h][p±d]` (after `0x`) into `(mantissa, binary exponent)`.
fn parse_hex(body: &[u8]) -> Option<(BigInt, i64)> {
    let mut m = BigUint::from(0u32);
    let mut exp2: i64 = 0;
    let mut seen = false;
    let mut in_fraction = false;
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if let Some(d) = (c as char).to_digit(16) {
            m = (m << 4usize) + d;
            seen = true;
            if in_fraction {
                exp2 -= 4;
            }
        } else if c == b'.' && !in_fraction {
            in_fraction = true;
        } else if (c == b'p' || c == b'P') && seen {
            let e: i64 = std::str::from_utf8(&body[i + 1..]).ok()?.parse().ok()?;
            exp2 = exp2.checked_add(e)?;
            break;
        } else {
            return None;
        }
        i += 1;
    }
    seen.then(|| (BigInt::from_biguint(Sign::Plus, m), exp2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(current: &str, by: &str) -> String {
        let a = LongDouble::parse(current.as_bytes()).unwrap();
        let b = LongDouble::parse(by.as_bytes()).unwrap();
        a.plus(b).unwrap().to_redis_string()
    }

    #[test]
    fn sums_print_as_redis_prints_them() {
        // Each expectation is what Redis 7.0.15 on x86-64 replies.
        assert_eq!(incr("0.1", "0.2"), "0.3");
        assert_eq!(incr("10.5", "0.1"), "10.6");
        assert_eq!(incr("3", "1e-17"), "3.00000000000000001");
        assert_eq!(incr("1e20", "1"), "100000000000000000000");
        assert_eq!(incr("0", "1e-18"), "0");
        assert_eq!(incr("5", "-5"), "0");
        assert_eq!(incr("-1.5", "0.25"), "-1.25");
        assert_eq!(
            incr("0", "123456789.123456789"),
            "123456789.12345678899873747"
        );
        assert_eq!(incr("0x10", "1"), "17");
        assert_eq!(incr("1000", "1.0e3"), "2000");
    }

    #[test]
    fn parsing_rejects_what_strtold_rejects() {
        for bad in [
            "", " 1", "1 ", "abc", "nan", "1e99999", "1e-99999", ".", "1e", "--1",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad}");
        }
        let inf = LongDouble::parse(b"-Infinity").unwrap();
        assert!(inf.is_infinite());
        assert_eq!(inf.plus(LongDouble::ZERO), Err(NotFinite));
        assert!(
            LongDouble::parse(b"1e400").is_some(),
            "long double holds 1e400"
        );
        assert!(LongDouble::parse(b".5").is_some());
        assert!(LongDouble::parse(b"5.").is_some());
    }

    #[test]
    fn overflow_is_not_finite() {
        let big = LongDouble::parse(b"1e4932").unwrap();
        assert_eq!(big.plus(big), Err(NotFinite));
    }
}
