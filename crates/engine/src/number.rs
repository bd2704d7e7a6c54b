//! Numbers as Redis parses and prints them.

use crate::error::{CmdError, CmdResult};

/// Parses a signed 64-bit integer the way Redis' `string2ll` does: optional
/// `-`, no `+`, no leading zeros, no spaces, no `-0`.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (neg, digits) = match bytes[0] {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: i128 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i128::from(d - b'0');
        if v > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// [`parse_i64`] with Redis' error.
pub fn int_arg(bytes: &[u8]) -> CmdResult<i64> {
    parse_i64(bytes).ok_or(CmdError::NotInteger)
}

/// Parses a double the way Redis' `strtod`-based parsers do: no surrounding
/// spaces, `inf`/`-inf`/`+inf` accepted, NaN rejected.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(bytes).ok()?;
    if s.is_empty()
        || s.starts_with(|c: char| c.is_whitespace())
        || s.ends_with(char::is_whitespace)
    {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let v = match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        "nan" => return None,
        _ => {
            if !lower
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e'))
            {
                return None;
            }
            let v: f64 = lower.parse().ok()?;
            if v.is_infinite() {
                // Overflowing literals (1e400) are range errors in strtod.
                return None;
            }
            v
        }
    };
    Some(v)
}

/// [`parse_f64`] with Redis' error.
pub fn float_arg(bytes: &[u8]) -> CmdResult<f64> {
    parse_f64(bytes).ok_or(CmdError::NotFloat)
}

/// Formats a double as Redis replies with scores: C's `%.17g`.
pub fn format_score(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{v:.16e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..17).contains(&exp) {
        let m = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (16 - exp).max(0) as usize;
        trim_fraction(&format!("{v:.decimals$}")).to_string()
    }
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"1.0",
            b"9223372036854775808",
            b"abc",
            b"-",
        ] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_parse_like_strtod() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        for bad in [&b"nan"[..], b"1e400", b" 1", b"abc", b"", b"1x"] {
            assert_eq!(parse_f64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn scores_print_like_percent_17g() {
        assert_eq!(format_score(0.1), "0.10000000000000001");
        assert_eq!(format_score(1.5), "1.5");
        assert_eq!(format_score(3.0), "3");
        assert_eq!(format_score(1e20), "1e+20");
        assert_eq!(format_score(1e308), "1e+308");
        assert_eq!(format_score(0.30000000000000004), "0.30000000000000004");
        assert_eq!(format_score(-2.5), "-2.5");
        assert_eq!(format_score(0.0001), "0.0001");
        assert_eq!(format_score(0.00001), "1.0000000000000001e-05");
        assert_eq!(format_score(f64::INFINITY), "inf");
        assert_eq!(format_score(123456789012345680.0), "1.2345678901234568e+17");
    }
}
