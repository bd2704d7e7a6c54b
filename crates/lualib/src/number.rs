//! Numbers as text, the way the C library does it: `printf("%.14g")`
//! for output and `strtod` for input (glibc's, which also reads
//! hexadecimal, `inf` and `nan`).

/// `printf("%.{precision}g", d)` as glibc prints it (round half to even
/// on the exact binary value, `inf`, `-inf`, `nan`, `-nan`).
pub(crate) fn format_g(d: f64, precision: usize) -> String {
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d.is_nan() {
        return format!("{sign}nan");
    }
    if d.is_infinite() {
        return format!("{sign}inf");
    }
    let p = precision.max(1);
    // The exponent %e would print, after rounding to p digits.
    let sci = format!("{:.*e}", p - 1, d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let p = i32::try_from(p).unwrap_or(i32::MAX);
    if exp < -4 || exp >= p {
        let mantissa = trim_fraction(mantissa);
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = usize::try_from(p - 1 - exp).unwrap_or(0);
        let fixed = format!("{:.*}", decimals, d.abs());
        format!("{sign}{}", trim_fraction(&fixed))
    }
}

/// `%g` drops trailing zeros of the fraction, and a bare decimal point.
fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// The byte at `i`, or 0 past the end (C strings end with NUL).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// glibc's `strtod` of the start of `s`: the value and how many bytes it
/// used, or `None` when no number starts there. `s` starts at the
/// number (no leading white space).
pub(crate) fn strtod(s: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    let negative = match at(s, 0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let (value, used) = unsigned(&s[i.min(s.len())..])?;
    Some((if negative { -value } else { value }, i + used))
}

/// `strtod` after the sign.
fn unsigned(s: &[u8]) -> Option<(f64, usize)> {
    if starts_with_ignore_case(s, b"inf") {
        let used = if starts_with_ignore_case(s, b"infinity") {
            8
        } else {
            3
        };
        return Some((f64::INFINITY, used));
    }
    if starts_with_ignore_case(s, b"nan") {
        let mut used = 3;
        if at(s, 3) == b'(' {
            let close = s[4..]
                .iter()
                .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'));
            if let Some(n) = close {
                if s[4 + n] == b')' {
                    used = 4 + n + 1;
                }
            }
        }
        return Some((f64::NAN, used));
    }
    if at(s, 0) == b'0' && (at(s, 1) | 0x20) == b'x' {
        if let Some(hex) = hexadecimal(&s[2..]) {
            return Some((hex.0, 2 + hex.1));
        }
        return Some((0.0, 1));
    }
    decimal(s)
}

fn starts_with_ignore_case(s: &[u8], word: &[u8]) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word)
}

/// A decimal number: digits, an optional fraction, an optional exponent.
fn decimal(s: &[u8]) -> Option<(f64, usize)> {
    let digits = |from: usize| {
        s[from.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut i = int;
    let mut frac = 0;
    if at(s, i) == b'.' {
        frac = digits(i + 1);
        i += 1 + frac;
    }
    if int + frac == 0 {
        return None;
    }
    let mantissa_end = i;
    if at(s, i) | 0x20 == b'e' {
        let sign = usize::from(matches!(at(s, i + 1), b'+' | b'-'));
        let exp = digits(i + 1 + sign);
        if exp > 0 {
            i += 1 + sign + exp;
        }
    }
    let mut text = String::with_capacity(i + 2);
    if int == 0 {
        text.push('0');
    }
    text.push_str(std::str::from_utf8(&s[..mantissa_end]).ok()?);
    if frac == 0 && at(s, mantissa_end.saturating_sub(1)) == b'.' {
        text.push('0');
    }
    text.push_str(std::str::from_utf8(&s[mantissa_end..i]).ok()?);
    text.parse::<f64>().ok().map(|v| (v, i))
}

/// A hexadecimal number after `0x`: hex digits with an optional point,
/// an optional binary exponent `p`. `None` without a digit.
fn hexadecimal(s: &[u8]) -> Option<(f64, usize)> {
    let mut mantissa: u64 = 0;
    let mut sticky = false;
    let mut exp: i64 = 0;
    let mut any = false;
    let mut seen_point = false;
    let mut i = 0;
    loop {
        let b = at(s, i);
        if b == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = char::from(b).to_digit(16) {
            any = true;
            if mantissa >> 60 == 0 {
                mantissa = mantissa << 4 | u64::from(d);
                if seen_point {
                    exp -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if at(s, i) | 0x20 == b'p' {
        let sign = usize::from(matches!(at(s, i + 1), b'+' | b'-'));
        let start = i + 1 + sign;
        let count = s[start.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if count > 0 {
            let mut e: i64 = 0;
            for &b in &s[start..start + count] {
                e = (e * 10 + i64::from(b - b'0')).min(1 << 40);
            }
            exp += if at(s, i + 1) == b'-' { -e } else { e };
            i = start + count;
        }
    }
    Some((scale_binary(mantissa, sticky, exp), i))
}

/// `mantissa * 2^exp` rounded to nearest even (`sticky`: non-zero bits
/// were dropped below the mantissa).
fn scale_binary(mantissa: u64, sticky: bool, exp: i64) -> f64 {
    if mantissa == 0 {
        return 0.0;
    }
    let shift = mantissa.leading_zeros();
    let m = mantissa << shift;
    // value = m * 2^(exp - shift), m in [2^63, 2^64): the leading bit
    // has weight 2^top.
    let top = exp - i64::from(shift) + 63;
    if top > 1023 {
        return f64::INFINITY;
    }
    // Bits kept: 53 for a normal number, fewer below 2^-1022.
    let keep = if top >= -1022 { 53 } else { 53 - (-1022 - top) };
    if keep <= 0 {
        // Below half the smallest subnormal, or exactly there.
        let half = keep == 0 && (m > 1 << 63 || sticky);
        return if half { f64::from_bits(1) } else { 0.0 };
    }
    let drop = 64 - keep as u32;
    let kept = m >> drop;
    let rest = m & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    let round_up = rest > half || (rest == half && (sticky || kept & 1 == 1));
    let rounded = kept + u64::from(round_up);
    // The last kept bit's weight.
    let lsb = top - (keep - 1);
    rounded as f64 * pow2(lsb)
}

/// 2^e for e in [-1074, 1023].
fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_printf() {
        let cases: &[(f64, usize, &str)] = &[
            (0.0, 14, "0"),
            (-0.0, 14, "-0"),
            (1.0, 14, "1"),
            (0.1, 14, "0.1"),
            (1.0 / 3.0, 14, "0.33333333333333"),
            (1e14, 14, "1e+14"),
            (12345678901234.0, 14, "12345678901234"),
            (123456789012345.0, 14, "1.2345678901234e+14"),
            (0.0001, 14, "0.0001"),
            (0.00001, 14, "1e-05"),
            (1e100, 14, "1e+100"),
            (2.5, 1, "2"),
            (3.5, 1, "4"),
            (f64::INFINITY, 14, "inf"),
            (f64::NEG_INFINITY, 14, "-inf"),
            (5e-324, 14, "4.9406564584125e-324"),
            (100.0, 2, "1e+02"),
            (99.5, 2, "1e+02"),
        ];
        for &(d, p, want) in cases {
            assert_eq!(format_g(d, p), want, "%.{p}g of {d:e}");
        }
    }

    #[test]
    fn strtod_reads_what_glibc_reads() {
        let cases: &[(&str, f64, usize)] = &[
            ("1", 1.0, 1),
            ("-1.5e3x", -1500.0, 6),
            ("1e", 1.0, 1),
            ("1e+", 1.0, 1),
            ("1.", 1.0, 2),
            (".5", 0.5, 2),
            ("0x10", 16.0, 4),
            ("0x", 0.0, 1),
            ("0x1p-2", 0.25, 6),
            ("0x.8", 0.5, 4),
            ("0X1P", 1.0, 3),
            ("infinity", f64::INFINITY, 8),
            ("-Infinit", f64::NEG_INFINITY, 4),
            ("1e400", f64::INFINITY, 5),
            ("0x1fffffffffffff", 9007199254740991.0, 16),
            ("0x20000000000001", 9007199254740992.0, 16),
            ("0x20000000000003", 9007199254740996.0, 16),
            ("0x1p-1074", 5e-324, 9),
            ("0x1p-1075", 0.0, 9),
            ("0x1.8p-1075", 5e-324, 11),
        ];
        for &(text, value, used) in cases {
            assert_eq!(strtod(text.as_bytes()), Some((value, used)), "{text}");
        }
        let (nan, used) = strtod(b"-nan(abc)").unwrap();
        assert!(nan.is_nan() && nan.is_sign_negative());
        assert_eq!(used, 9);
        assert_eq!(strtod(b"nan(").map(|r| r.1), Some(3));
        assert_eq!(strtod(b"-"), None);
        assert_eq!(strtod(b"x"), None);
        assert_eq!(strtod(b"."), None);
    }
}
