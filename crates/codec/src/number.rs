//! Numbers as Redis parses and prints them (`string2ll`, `strtod`,
//! `%.17g`), shared by the engine and the byte formats that store numbers
//! as text.

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

/// A NaN as C's `printf` prints it with glibc: `-nan` where its sign bit
/// is set (the NaN x86 makes of `0/0`), `nan` otherwise.
pub fn nan_text(v: f64) -> &'static str {
    if v.is_sign_negative() {
        "-nan"
    } else {
        "nan"
    }
}

/// C's `printf("%.17g", v)`: 17 significant digits, correctly rounded,
/// trailing zeros dropped; scientific notation when the decimal exponent is
/// below −4 or above 16, with a sign and at least two exponent digits;
/// `inf`, `-inf`, `nan`; `-0` for negative zero.
pub fn format_g17(v: f64) -> String {
    if v.is_nan() {
        return nan_text(v).into();
    }
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
