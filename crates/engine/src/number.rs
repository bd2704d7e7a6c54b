//! Numbers as Redis parses and prints them.

use crate::error::{CmdError, CmdResult};

pub use redcodec_codec::number::{parse_f64, parse_i64};

/// [`parse_i64`] with Redis' error.
pub fn int_arg(bytes: &[u8]) -> CmdResult<i64> {
    parse_i64(bytes).ok_or(CmdError::NotInteger)
}

/// [`parse_f64`] with Redis' error.
pub fn float_arg(bytes: &[u8]) -> CmdResult<f64> {
    parse_f64(bytes).ok_or(CmdError::NotFloat)
}

/// Formats a double as Redis replies with scores: C's `%.17g`.
pub fn format_score(v: f64) -> String {
    redcodec_codec::number::format_g17(v)
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
