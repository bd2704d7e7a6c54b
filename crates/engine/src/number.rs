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

/// C's `isspace` in the "C" locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Where C's `strtoll` and `strtod` look for digits in `s`: past the
/// leading blanks ([`is_c_space`]) and one optional sign; and whether
/// that sign is `-`.
pub(crate) fn c_number_start(s: &[u8]) -> (usize, bool) {
    let blanks = s.iter().take_while(|&&b| is_c_space(b)).count();
    match s.get(blanks) {
        Some(b'-') => (blanks + 1, true),
        Some(b'+') => (blanks + 1, false),
        _ => (blanks, false),
    }
}

/// Formats a double as Redis replies with scores: C's `%.17g`.
pub fn format_score(v: f64) -> String {
    redcodec_codec::number::format_g17(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::testkit::check_parser;

    #[test]
    fn integers_parse_like_string2ll() {
        check_parser(
            parse_i64,
            &[
                ("0", 0),
                ("-12", -12),
                ("9223372036854775807", i64::MAX),
                ("-9223372036854775808", i64::MIN),
            ],
            &[
                "",
                "+1",
                "01",
                "-0",
                " 1",
                "1 ",
                "1.0",
                "9223372036854775808",
                "abc",
                "-",
            ],
        );
    }

    #[test]
    fn floats_parse_like_strtod() {
        check_parser(
            parse_f64,
            &[
                ("1.5", 1.5),
                ("1e3", 1000.0),
                ("-inf", f64::NEG_INFINITY),
                ("+inf", f64::INFINITY),
                (".5", 0.5),
            ],
            &["nan", "1e400", " 1", "abc", "", "1x"],
        );
    }

    #[test]
    fn scores_print_like_percent_17g() {
        for (score, text) in [
            (0.1, "0.10000000000000001"),
            (1.5, "1.5"),
            (3.0, "3"),
            (1e20, "1e+20"),
            (1e308, "1e+308"),
            (0.30000000000000004, "0.30000000000000004"),
            (-2.5, "-2.5"),
            (0.0001, "0.0001"),
            (0.00001, "1.0000000000000001e-05"),
            (f64::INFINITY, "inf"),
            (123456789012345680.0, "1.2345678901234568e+17"),
        ] {
            assert_eq!(format_score(score), text, "{score}");
        }
    }
}
