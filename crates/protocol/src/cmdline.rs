//! Splitting a command line into arguments exactly as `redis-cli` does.
//!
//! This is a faithful port of `sdssplitargs` from Redis/hiredis `sds.c`,
//! the function `redis-cli` uses to turn a typed line into the argument
//! vector it sends to the server. The conformance scenarios are written in
//! this syntax, so the engine side must split them byte for byte the way the
//! real `redis-cli` does.
//!
//! The rules, in the order `sdssplitargs` applies them:
//!
//! * Arguments are separated by runs of whitespace (C `isspace`: space,
//!   `\t`, `\n`, `\v`, `\f`, `\r`). Leading and trailing whitespace is
//!   ignored; an empty or all-blank line yields no arguments.
//! * Outside quotes, an argument ends at a space, `\t`, `\n` or `\r` (but
//!   *not* at `\v` or `\f`, which are kept as ordinary bytes inside a
//!   word). Backslashes are ordinary bytes there.
//! * A `"` or `'` anywhere in an unquoted word opens a quoted section that
//!   continues the same argument: `ab"c d"` is the single argument `abc d`.
//! * Inside double quotes: `\xHH` (two hex digits, either case) is the byte
//!   `0xHH`; `\n`, `\r`, `\t`, `\b`, `\a` are newline, carriage return, tab,
//!   backspace and bell; a backslash before any other byte yields that byte
//!   (`\"` is `"`, `\\` is `\`, `\x4` is `x4`, `\v` is `v`).
//! * Inside single quotes everything is literal except `\'`, which is `'`.
//! * A closing quote must be followed by whitespace or the end of the line,
//!   otherwise the line is rejected ([`CmdlineError::CharAfterClosingQuote`]).
//! * A quote that is never closed rejects the line
//!   ([`CmdlineError::UnterminatedQuote`]).
//!
//! Like the C original, which sees a NUL-terminated string, the splitter
//! stops at the first NUL byte of `line`: anything after it is ignored.
//! Bytes of non-ASCII characters are copied through unchanged.
//!
//! [`quote_bytes`] is the way back: redis-cli's quoting of one argument.

use std::fmt::Write;

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CmdlineError {
    /// A quoted section was still open at the end of the line.
    #[error("unbalanced quotes: {quote} opened at byte {offset} is never closed")]
    UnterminatedQuote {
        /// The quote character that was left open (`"` or `'`).
        quote: char,
        /// Byte offset of the opening quote in the line.
        offset: usize,
    },
    /// A closing quote was directly followed by something other than
    /// whitespace or the end of the line, as in `"foo"bar`.
    #[error("closing quote at byte {offset} must be followed by a space or the end of the line")]
    CharAfterClosingQuote {
        /// Byte offset of the closing quote in the line.
        offset: usize,
    },
}

/// C `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The value of an ASCII hex digit.
fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Splits `line` into arguments exactly as `redis-cli` (hiredis
/// `sdssplitargs`) does. See the [module documentation](self) for the rules.
///
/// ```
/// use redcodec_protocol::cmdline::split_args;
/// assert_eq!(
///     split_args(r#"SET "a\x00b" 'it\'s'"#).unwrap(),
///     vec![b"SET".to_vec(), b"a\x00b".to_vec(), b"it's".to_vec()]
/// );
/// ```
pub fn split_args(line: &str) -> Result<Vec<Vec<u8>>, CmdlineError> {
    split_arg_bytes(line.as_bytes())
}

/// [`split_args`] over bytes that need not be UTF-8 (a server's inline
/// requests).
pub fn split_arg_bytes(bytes: &[u8]) -> Result<Vec<Vec<u8>>, CmdlineError> {
    // The C code sees a NUL-terminated string.
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let s = &bytes[..end];
    let at = |i: usize| -> u8 { s.get(i).copied().unwrap_or(0) };

    let mut args = Vec::new();
    let mut p = 0usize;
    loop {
        while p < s.len() && is_c_space(s[p]) {
            p += 1;
        }
        if p >= s.len() {
            return Ok(args);
        }

        let mut current = Vec::new();
        // The open quote and where it was opened, if inside one.
        let mut quote: Option<(u8, usize)> = None;
        loop {
            let c = at(p);
            match quote {
                Some((q, open)) => {
                    // Escapes: `\xHH` and `\n`… inside double quotes, `\'`
                    // inside single ones.
                    if q == b'"' && c == b'\\' && at(p + 1) == b'x' {
                        if let (Some(hi), Some(lo)) = (hex_value(at(p + 2)), hex_value(at(p + 3))) {
                            current.push(hi * 16 + lo);
                            p += 4;
                            continue;
                        }
                    }
                    if q == b'"' && c == b'\\' && at(p + 1) != 0 {
                        p += 1;
                        current.push(match at(p) {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                    } else if q == b'\'' && c == b'\\' && at(p + 1) == b'\'' {
                        p += 1;
                        current.push(b'\'');
                    } else if c == q {
                        if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                            return Err(CmdlineError::CharAfterClosingQuote { offset: p });
                        }
                        p += 1;
                        break;
                    } else if c == 0 {
                        return Err(CmdlineError::UnterminatedQuote {
                            quote: char::from(q),
                            offset: open,
                        });
                    } else {
                        current.push(c);
                    }
                }
                None => match c {
                    b' ' | b'\n' | b'\r' | b'\t' => {
                        p += 1;
                        break;
                    }
                    0 => break,
                    b'"' | b'\'' => quote = Some((c, p)),
                    _ => current.push(c),
                },
            }
            p += 1;
        }
        args.push(current);
    }
}

/// Quotes bytes as redis-cli does: printable ASCII as is, `"` and `\`
/// escaped, `\n \r \t \a \b` by name, anything else as `\xHH`.
/// [`split_arg_bytes`] reads the quoted text back as `bytes`.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<Vec<u8>> {
        split_args(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    fn words(ws: &[&[u8]]) -> Vec<Vec<u8>> {
        ws.iter().map(|w| w.to_vec()).collect()
    }

    #[test]
    fn plain_words_split_on_whitespace() {
        assert_eq!(split("SET foo bar"), words(&[b"SET", b"foo", b"bar"]));
        assert_eq!(split("  GET   foo  "), words(&[b"GET", b"foo"]));
        assert_eq!(split("a\tb\r\nc"), words(&[b"a", b"b", b"c"]));
    }

    #[test]
    fn empty_and_blank_lines_have_no_arguments() {
        assert!(split("").is_empty());
        assert!(split("   \t ").is_empty());
        assert!(split("\x0b\x0c").is_empty());
    }

    #[test]
    fn vertical_tab_and_form_feed_separate_only_between_words() {
        // Skipped as blanks before a word, but kept inside an unquoted word.
        assert_eq!(split("\x0ba\x0bb"), words(&[b"a\x0bb"]));
        assert_eq!(split("a\x0cb c"), words(&[b"a\x0cb", b"c"]));
    }

    #[test]
    fn backslash_is_literal_outside_quotes() {
        assert_eq!(split(r"a\*b \x41"), words(&[br"a\*b", br"\x41"]));
    }

    #[test]
    fn double_quotes_group_words() {
        assert_eq!(split(r#"SET "a b" c"#), words(&[b"SET", b"a b", b"c"]));
        assert_eq!(split(r#""""#), words(&[b""]));
        assert_eq!(split(r#"a "" b"#), words(&[b"a", b"", b"b"]));
    }

    #[test]
    fn double_quote_hex_escapes() {
        assert_eq!(split(r#""\x00\xff\x41\x4a\x4B""#), words(&[b"\x00\xffAJK"]));
    }

    #[test]
    fn double_quote_incomplete_hex_is_literal_x() {
        assert_eq!(split(r#""\x4""#), words(&[b"x4"]));
        assert_eq!(split(r#""\xZZ""#), words(&[b"xZZ"]));
        assert_eq!(split(r#""\x4g""#), words(&[b"x4g"]));
        assert_eq!(split(r#""\x""#), words(&[b"x"]));
    }

    #[test]
    fn double_quote_named_escapes() {
        assert_eq!(split(r#""\n\r\t\b\a""#), words(&[b"\n\r\t\x08\x07"]));
    }

    #[test]
    fn double_quote_other_escapes_are_the_char_itself() {
        assert_eq!(split(r#""\"\\\v\f\q\0\'""#), words(&[b"\"\\vfq0'"]));
    }

    #[test]
    fn single_quotes_are_literal_except_escaped_quote() {
        assert_eq!(split(r"'\x41\n'"), words(&[br"\x41\n"]));
        assert_eq!(split(r"'it\'s'"), words(&[b"it's"]));
        assert_eq!(split(r#"'a "b" c'"#), words(&[b"a \"b\" c"]));
        assert_eq!(split(r"'a\\b'"), words(&[br"a\\b"]));
        assert_eq!(split("''"), words(&[b""]));
    }

    #[test]
    fn quotes_inside_a_word_continue_it() {
        assert_eq!(split(r#"ab"cd ef""#), words(&[b"abcd ef"]));
        assert_eq!(split("x'y z' w"), words(&[b"xy z", b"w"]));
        assert_eq!(split(r#"a"\x41" c'b'"#), words(&[b"aA", b"cb"]));
    }

    #[test]
    fn closing_quote_followed_by_whitespace_or_end() {
        assert_eq!(split(r#""a" b"#), words(&[b"a", b"b"]));
        assert_eq!(split("\"a\"\tb"), words(&[b"a", b"b"]));
        assert_eq!(split("'a'\x0bb"), words(&[b"a", b"b"]));
        assert_eq!(split(r#""a""#), words(&[b"a"]));
    }

    #[test]
    fn closing_quote_followed_by_other_char_is_an_error() {
        assert_eq!(
            split_args(r#"SET "foo"bar x"#),
            Err(CmdlineError::CharAfterClosingQuote { offset: 8 })
        );
        assert_eq!(
            split_args("'a''b'"),
            Err(CmdlineError::CharAfterClosingQuote { offset: 2 })
        );
        assert_eq!(
            split_args(r#""a""b""#),
            Err(CmdlineError::CharAfterClosingQuote { offset: 2 })
        );
    }

    #[test]
    fn unterminated_quotes_are_errors() {
        assert_eq!(
            split_args(r#"SET "foo bar"#),
            Err(CmdlineError::UnterminatedQuote {
                quote: '"',
                offset: 4
            })
        );
        assert_eq!(
            split_args("GET 'foo"),
            Err(CmdlineError::UnterminatedQuote {
                quote: '\'',
                offset: 4
            })
        );
        // A backslash cannot escape the end of the line.
        assert_eq!(
            split_args(r#""abc\"#),
            Err(CmdlineError::UnterminatedQuote {
                quote: '"',
                offset: 0
            })
        );
        assert_eq!(
            split_args(r#""abc\""#),
            Err(CmdlineError::UnterminatedQuote {
                quote: '"',
                offset: 0
            })
        );
        assert_eq!(
            split_args(r"'abc\'"),
            Err(CmdlineError::UnterminatedQuote {
                quote: '\'',
                offset: 0
            })
        );
        // A lone trailing `\x` with one hex digit is still unterminated.
        assert_eq!(
            split_args(r#"a "\x4"#),
            Err(CmdlineError::UnterminatedQuote {
                quote: '"',
                offset: 2
            })
        );
    }

    #[test]
    fn nul_byte_ends_the_line() {
        assert_eq!(split("a b\0c d"), words(&[b"a", b"b"]));
        assert_eq!(split("ab\0"), words(&[b"ab"]));
        assert_eq!(
            split_args("\"ab\0\""),
            Err(CmdlineError::UnterminatedQuote {
                quote: '"',
                offset: 0
            })
        );
    }

    #[test]
    fn non_ascii_bytes_pass_through() {
        assert_eq!(split("SET k été"), words(&[b"SET", b"k", "été".as_bytes()]));
        assert_eq!(split("\"é\\xc3\\xa9\""), words(&["éé".as_bytes()]));
    }

    #[test]
    fn quoted_arguments_split_back_to_themselves() {
        let all: Vec<u8> = (0..=255).collect();
        let args = words(&[b"", b"a b", b"\"'\\", b"\x00\x0b\x0c\xff", &all]);
        let line: Vec<String> = args.iter().map(|a| quote_bytes(a)).collect();
        assert_eq!(split(&line.join(" ")), args);
        assert_eq!(quote_bytes(b"a\"\x00\n"), r#""a\"\x00\n""#);
    }

    #[test]
    fn errors_display() {
        let e = CmdlineError::UnterminatedQuote {
            quote: '"',
            offset: 3,
        };
        assert_eq!(
            e.to_string(),
            "unbalanced quotes: \" opened at byte 3 is never closed"
        );
        let e = CmdlineError::CharAfterClosingQuote { offset: 7 };
        assert_eq!(
            e.to_string(),
            "closing quote at byte 7 must be followed by a space or the end of the line"
        );
    }
}
