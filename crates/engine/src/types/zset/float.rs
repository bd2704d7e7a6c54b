//! Doubles as Redis' sorted-set commands read them: through C's `strtod`.
//!
//! Two readers share one `strtod` model. Scores, increments and weights go
//! through `getDoubleFromObject` (the whole argument must be the number; no
//! leading space; no NaN; no overflow to infinity nor underflow to zero from
//! a finite literal). Range bounds go through `zslParseRange`, which is
//! laxer: leading spaces, overflowing literals and even the empty string
//! (read as 0) are accepted.

use crate::number::{c_number_start, is_c_space};

/// What `strtod` reads at the start of a string.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prefix {
    /// The value read (NaN for a `nan` literal).
    value: f64,
    /// Bytes consumed, leading white space included.
    len: usize,
    /// Whether `strtod` would set `ERANGE` with a zero or infinite result:
    /// a finite literal too large, or a non-zero literal too small.
    out_of_range: bool,
}

/// Whether `s` starts with the lower-case ASCII `word`, ignoring case.
fn starts_with_word(s: &[u8], word: &[u8]) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word)
}

/// The number `strtod` reads at the start of `s`, or `None` when it
/// performs no conversion.
fn strtod_prefix(s: &[u8]) -> Option<Prefix> {
    let (i, negative) = c_number_start(s);
    let body = &s[i..];
    let (magnitude, len, out_of_range) = if starts_with_word(body, b"inf") {
        let len = if starts_with_word(body, b"infinity") {
            8
        } else {
            3
        };
        (f64::INFINITY, len, false)
    } else if starts_with_word(body, b"nan") {
        (f64::NAN, nan_len(body), false)
    } else if let Some(hex) = hex_number(body) {
        hex
    } else {
        decimal_number(body)?
    };
    let value = if negative { -magnitude } else { magnitude };
    Some(Prefix {
        value,
        len: i + len,
        out_of_range,
    })
}

/// Length of a `nan` literal with its optional `(n-char-sequence)`.
fn nan_len(body: &[u8]) -> usize {
    if body.get(3) != Some(&b'(') {
        return 3;
    }
    let inner = body[4..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    if body.get(4 + inner) == Some(&b')') {
        5 + inner
    } else {
        3
    }
}

/// Counts the ASCII digits (in `radix`) at the start of `s`.
fn digits(s: &[u8], radix: u32) -> usize {
    s.iter()
        .take_while(|b| char::from(**b).is_digit(radix))
        .count()
}

/// Length of an exponent (`e12`, `p-3`) at the start of `s` whose marker is
/// `marker`, or 0 when there is none (a marker without digits is not part
/// of the number).
fn exponent_len(s: &[u8], marker: u8) -> usize {
    if !s.first().is_some_and(|b| b.eq_ignore_ascii_case(&marker)) {
        return 0;
    }
    let sign = usize::from(matches!(s.get(1), Some(b'+' | b'-')));
    match digits(&s[1 + sign..], 10) {
        0 => 0,
        n => 1 + sign + n,
    }
}

/// A decimal number at the start of `body` (after the sign): its
/// magnitude, length and range error.
fn decimal_number(body: &[u8]) -> Option<(f64, usize, bool)> {
    let int_digits = digits(body, 10);
    let mut len = int_digits;
    let mut frac_digits = 0;
    if body.get(len) == Some(&b'.') {
        frac_digits = digits(&body[len + 1..], 10);
        if int_digits + frac_digits > 0 {
            len += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mantissa_len = len;
    len += exponent_len(&body[len..], b'e');
    let text = std::str::from_utf8(&body[..len]).ok()?;
    let value: f64 = text.parse().ok()?;
    let nonzero_literal = body[..mantissa_len]
        .iter()
        .any(|b| (b'1'..=b'9').contains(b));
    let out_of_range = value.is_infinite() || (value == 0.0 && nonzero_literal);
    Some((value, len, out_of_range))
}

/// A hexadecimal number (`0x1.8p3`) at the start of `body` (after the
/// sign), or `None` when `body` does not start with one.
fn hex_number(body: &[u8]) -> Option<(f64, usize, bool)> {
    if !(starts_with_word(body, b"0x")) {
        return None;
    }
    let rest = &body[2..];
    let int_digits = digits(rest, 16);
    let frac_digits = if rest.get(int_digits) == Some(&b'.') {
        digits(&rest[int_digits + 1..], 16)
    } else {
        0
    };
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mut len = 2 + int_digits;
    if frac_digits > 0 || rest.get(int_digits) == Some(&b'.') {
        len += 1 + frac_digits;
    }
    let exp_len = exponent_len(&body[len..], b'p');
    let exp: i64 = if exp_len > 0 {
        let text = std::str::from_utf8(&body[len + 1..len + exp_len]).ok()?;
        // Exponents beyond i64 are saturated: the value is 0 or inf anyway.
        text.parse::<i64>().unwrap_or(if text.starts_with('-') {
            i64::MIN / 2
        } else {
            i64::MAX / 2
        })
    } else {
        0
    };
    len += exp_len;
    let fraction_start = 2 + int_digits + 1;
    let int_part = &rest[..int_digits];
    let frac_part = body
        .get(fraction_start..fraction_start + frac_digits)
        .unwrap_or_default();
    let value = hex_value(int_part, frac_part, exp);
    let nonzero_literal = int_part.iter().chain(frac_part).any(|b| *b != b'0');
    let out_of_range = value.is_infinite() || (value == 0.0 && nonzero_literal);
    Some((value, len, out_of_range))
}

/// The value of hex digits `int_part.frac_part` times 2^`exp`, keeping the
/// first 15 significant digits exactly and the rest as a sticky bit.
fn hex_value(int_part: &[u8], frac_part: &[u8], exp: i64) -> f64 {
    let mut mantissa: u64 = 0;
    let mut exp2 = exp;
    let mut sticky = false;
    for (i, b) in int_part.iter().chain(frac_part).enumerate() {
        let d = u64::from(char::from(*b).to_digit(16).unwrap_or(0));
        let fractional = i >= int_part.len();
        if mantissa < 1 << 56 {
            mantissa = mantissa * 16 + d;
            if fractional {
                exp2 = exp2.saturating_sub(4);
            }
        } else {
            sticky |= d != 0;
            if !fractional {
                exp2 = exp2.saturating_add(4);
            }
        }
    }
    let mut value = (mantissa | u64::from(sticky)) as f64;
    // Scale in steps so that intermediate powers of two stay finite.
    let mut e = exp2.clamp(-4000, 4000);
    while e != 0 {
        let step = e.clamp(-1000, 1000);
        value *= 2f64.powi(step as i32);
        e -= step;
    }
    value
}

/// A score, increment or weight argument, as `getDoubleFromObject` reads
/// it; `None` is Redis' "not a valid float".
pub(crate) fn score_arg(bytes: &[u8]) -> Option<f64> {
    if bytes.first().is_none_or(|&b| is_c_space(b)) {
        return None;
    }
    let p = strtod_prefix(bytes)?;
    (p.len == bytes.len() && !p.out_of_range && !p.value.is_nan()).then_some(p.value)
}

/// A score range bound after its optional `(`, as `zslParseRange` reads
/// it: `strtod` must stop at the end of the argument (or at a NUL byte, as
/// in C), and the value must not be NaN. The empty string reads as 0.
pub(crate) fn bound_value(bytes: &[u8]) -> Option<f64> {
    let (value, len) = match strtod_prefix(bytes) {
        Some(p) => (p.value, p.len),
        None => (0.0, 0),
    };
    let stops_at_end = bytes.get(len).is_none_or(|&b| b == 0);
    (stops_at_end && !value.is_nan()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_arguments_read_like_get_double_from_object() {
        let ok: &[(&[u8], f64)] = &[
            (b"1", 1.0),
            (b"-2.5", -2.5),
            (b"+.5", 0.5),
            (b"1.", 1.0),
            (b"1e3", 1000.0),
            (b"1E+3", 1000.0),
            (b"inf", f64::INFINITY),
            (b"-Infinity", f64::NEG_INFINITY),
            (b"0x10", 16.0),
            (b"0x1.8p1", 3.0),
            (b"-0", -0.0),
            (b"1e-310", 1e-310),
        ];
        for (text, value) in ok {
            assert_eq!(score_arg(text), Some(*value), "{text:?}");
        }
        let bad: &[&[u8]] = &[
            b"", b" 1", b"1 ", b"nan", b"-nan", b"1e400", b"-1e400", b"1e-400", b"abc", b"1x",
            b"0x", b"e5", b".", b"1e", b"inf1", b"1\x002",
        ];
        for text in bad {
            assert_eq!(score_arg(text), None, "{text:?}");
        }
    }

    #[test]
    fn range_bounds_read_like_zsl_parse_range() {
        let ok: &[(&[u8], f64)] = &[
            (b"", 0.0),
            (b" 1", 1.0),
            (b"1e400", f64::INFINITY),
            (b"-1e400", f64::NEG_INFINITY),
            (b"0x2", 2.0),
            (b"+inf", f64::INFINITY),
            (b"3\x00junk", 3.0),
        ];
        for (text, value) in ok {
            assert_eq!(bound_value(text), Some(*value), "{text:?}");
        }
        for text in [&b"nan"[..], b"1 ", b"  ", b"x", b"1e"] {
            assert_eq!(bound_value(text), None, "{text:?}");
        }
    }
}
