//! The request parser: a pure function from bytes to one request,
//! following Redis 7.0's `processMultibulkBuffer` and
//! `processInlineBuffer`.
//!
//! [`frame`](fn@frame) finds where the first request's arguments lie without
//! copying any; [`take_request`] then takes the request out of a
//! connection's read buffer with its arguments as slices of it (a
//! multibulk's payloads are never copied), and [`parse_request`] copies
//! them out of any byte slice.

use bytes::BytesMut;

use crate::inline::parse_inline;
use crate::request_frame::{Frame, FrameArgs};
use crate::{Limits, ProtocolError, Request, INLINE_MAX_SIZE};

/// Finds the first request of `buf`.
///
/// `Ok(None)`: the request is not complete yet (read more bytes).
/// `Ok(Some(frame))`: one request, which takes the first
/// [`Frame::used`] bytes; an empty one (a blank inline line, `*0`) is
/// skipped by the caller, as Redis does. `Err`: the bytes break the
/// protocol; the caller replies [`ProtocolError::reply_text`] and closes.
pub fn frame(buf: &[u8], limits: &Limits) -> Result<Option<Frame>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, limits),
        Some(_) => parse_inline(buf),
    }
}

/// Takes the first request of `buf` out of it ([`frame`], then
/// [`Frame::take`]): its arguments are slices of the read buffer, not
/// copies. `Ok(None)` leaves `buf` as it was.
pub fn take_request(buf: &mut BytesMut, limits: &Limits) -> Result<Option<Request>, ProtocolError> {
    Ok(frame(buf, limits)?.map(|f| f.take(buf)))
}

/// Parses the first request of `buf`, its arguments copied ([`frame`],
/// then [`Frame::copy`]), with the bytes it took.
pub fn parse_request(
    buf: &[u8],
    limits: &Limits,
) -> Result<Option<(Request, usize)>, ProtocolError> {
    Ok(frame(buf, limits)?.map(|f| {
        let used = f.used;
        (f.copy(buf), used)
    }))
}

/// A `\r`-terminated line starting at `from`: its end (the `\r`), once
/// the byte after the `\r` has arrived too.
fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let cr = from + buf[from..].iter().position(|&b| b == b'\r')?;
    (cr + 1 < buf.len()).then_some(cr)
}

/// Redis' `string2ll`: an optional `-`, digits, no leading zeros, no
/// other characters, within `i64`.
fn parse_ll(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // Accumulated on the value's own side, so that i64::MIN fits.
    digits.iter().try_fold(0i64, |n, &b| {
        let digit = i64::from(b.wrapping_sub(b'0'));
        if !(0..=9).contains(&digit) {
            return None;
        }
        let n = n.checked_mul(10)?;
        if negative {
            n.checked_sub(digit)
        } else {
            n.checked_add(digit)
        }
    })
}

fn parse_multibulk(buf: &[u8], limits: &Limits) -> Result<Option<Frame>, ProtocolError> {
    let Some(cr) = line_end(buf, 1) else {
        if buf.len() > INLINE_MAX_SIZE {
            return Err(ProtocolError::TooBigMbulkCount);
        }
        return Ok(None);
    };
    let count = match parse_ll(&buf[1..cr]) {
        Some(n) if n <= i64::from(i32::MAX) => n,
        _ => return Err(ProtocolError::InvalidMultibulkLength),
    };
    let mut pos = cr + 2;
    if count <= 0 {
        return Ok(Some(Frame {
            args: FrameArgs::Spans(Vec::new()),
            used: pos,
        }));
    }
    // Find every argument before copying any: an incomplete request is
    // parsed again when more bytes arrive.
    let mut spans = Vec::with_capacity((count as usize).min(1024));
    for _ in 0..count {
        if pos >= buf.len() {
            return Ok(None);
        }
        let Some(cr) = line_end(buf, pos) else {
            if buf.len() - pos > INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigBulkCount);
            }
            return Ok(None);
        };
        if buf[pos] != b'$' {
            return Err(ProtocolError::ExpectedDollar(buf[pos]));
        }
        let len = match parse_ll(&buf[pos + 1..cr]) {
            Some(n) if n >= 0 && n <= limits.max_bulk_len => n as usize,
            _ => return Err(ProtocolError::InvalidBulkLength),
        };
        let start = cr + 2;
        let end = start
            .checked_add(len)
            .ok_or(ProtocolError::InvalidBulkLength)?;
        // The payload and its CRLF (not checked, as Redis does not).
        if end.saturating_add(2) > buf.len() {
            return Ok(None);
        }
        spans.push(start..end);
        pos = end + 2;
    }
    Ok(Some(Frame {
        args: FrameArgs::Spans(spans),
        used: pos,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis' `string2ll`: the lengths and counts it accepts.
    #[test]
    fn parse_ll_takes_what_string2ll_takes() {
        let cases: [(&str, Option<i64>); 16] = [
            ("0", Some(0)),
            ("-0", Some(0)),
            ("7", Some(7)),
            ("-42", Some(-42)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("00", None),
            ("01", None),
            ("-01", None),
            ("-", None),
            ("", None),
            ("+1", None),
            ("12a", None),
            (" 1", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_ll(text.as_bytes()), expected, "{text:?}");
        }
    }

    type Parsed = Option<(Vec<Vec<u8>>, usize)>;

    fn parse(buf: &[u8]) -> Result<Parsed, ProtocolError> {
        parse_request(buf, &Limits::default())
            .map(|o| o.map(|(r, n)| (r.args.iter().map(|a| a.to_vec()).collect(), n)))
    }

    fn args(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn a_taken_request_keeps_its_arguments_where_they_arrived() {
        let wire = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*1\r\n$4\r\nPING";
        let mut buf = BytesMut::from(&wire[..]);
        let start = buf.as_ptr() as usize;
        let limits = Limits::default();
        let request = take_request(&mut buf, &limits).unwrap().unwrap();
        assert_eq!(request.args, [&b"SET"[..], b"k", b"value"]);
        // The value is the payload's own bytes (at offset 24), not a copy.
        assert_eq!(request.args[2].as_ptr() as usize, start + 24);
        assert_eq!(request.args[0].as_ptr() as usize, start + 8);
        // The next request is incomplete: nothing taken, nothing moved.
        assert_eq!(take_request(&mut buf, &limits).unwrap(), None);
        assert_eq!(&buf[..], b"*1\r\n$4\r\nPING");
        buf.extend_from_slice(b"\r\n");
        let ping = take_request(&mut buf, &limits).unwrap().unwrap();
        assert_eq!(ping.args, [&b"PING"[..]]);
        assert!(buf.is_empty());
        // Inline words are unquoted, so copied; a frame names its command
        // before it is taken.
        let mut buf = BytesMut::from(&b"set k \"a b\"\r\n"[..]);
        let found = frame(&buf, &limits).unwrap().unwrap();
        assert_eq!(
            (found.name(&buf), found.len(), found.used()),
            (Some(&b"set"[..]), 3, 13)
        );
        assert_eq!(found.take(&mut buf).args, [&b"set"[..], b"k", b"a b"]);
    }

    #[test]
    fn multibulk_parses_once_complete() {
        let full = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest";
        assert_eq!(parse(full).unwrap(), Some((args(&["GET", "k"]), 20)));
        for cut in 0..20 {
            assert_eq!(parse(&full[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn inline_lines_use_redis_cli_quoting() {
        assert_eq!(
            parse(b"set k \"a b\"\r\n").unwrap(),
            Some((args(&["set", "k", "a b"]), 13))
        );
        assert_eq!(parse(b"PING\n").unwrap(), Some((args(&["PING"]), 5)));
        assert_eq!(parse(b"\r\n").unwrap(), Some((Vec::new(), 2)));
        assert_eq!(parse(b"PING").unwrap(), None);
        assert_eq!(
            parse(b"set k \"a\r\n"),
            Err(ProtocolError::UnbalancedQuotes)
        );
    }

    #[test]
    fn bad_input_gets_redis_errors() {
        let e = |b: &[u8]| parse(b).unwrap_err().reply_text();
        assert_eq!(e(b"*x\r\n"), "ERR Protocol error: invalid multibulk length");
        assert_eq!(
            e(b"*3000000000\r\n"),
            "ERR Protocol error: invalid multibulk length"
        );
        assert_eq!(
            e(b"*1\r\nfoo\r\n"),
            "ERR Protocol error: expected '$', got 'f'"
        );
        assert_eq!(
            e(b"*1\r\n$-1\r\n"),
            "ERR Protocol error: invalid bulk length"
        );
        assert_eq!(
            e(b"*1\r\n$2000000000\r\n"),
            "ERR Protocol error: invalid bulk length"
        );
        let long = vec![b'a'; INLINE_MAX_SIZE + 1];
        assert_eq!(e(&long), "ERR Protocol error: too big inline request");
        let mut count = b"*".to_vec();
        count.extend(vec![b'1'; INLINE_MAX_SIZE + 1]);
        assert_eq!(e(&count), "ERR Protocol error: too big mbulk count string");
    }

    #[test]
    fn empty_multibulk_is_skipped() {
        assert_eq!(parse(b"*0\r\n").unwrap(), Some((Vec::new(), 4)));
        assert_eq!(parse(b"*-1\r\n").unwrap(), Some((Vec::new(), 5)));
    }

    #[test]
    fn raised_bulk_limit_is_honoured() {
        let limits = Limits {
            max_bulk_len: 10_000_000_000,
        };
        assert_eq!(parse_request(b"*1\r\n$2000000000\r\n", &limits), Ok(None));
    }
}
