//! The request parser and redis-cli's quoting splitter
//! ([`redcodec_protocol`]).
//!
//! - [`resp_request`]: input `[limit selector, split seed, bytes…]`. The
//!   bytes are parsed as a connection parses them — requests taken from
//!   the front of a buffer until one is incomplete or an error — once
//!   whole (copied out of a slice, `parse_request`) and once fed in
//!   pieces whose sizes come from the split seed (taken out of a read
//!   buffer, `take_request`, as a connection takes them).
//!   Both give the same requests, the same error and the same unparsed
//!   tail. A request takes at least one byte and no more than the buffer
//!   holds; its arguments fit in the bytes it took; a multibulk argument
//!   is never longer than the limit. Allocation from a declared count or
//!   length is bounded by the bytes present (the fuzzer's malloc limit
//!   catches the rest).
//! - [`cmdline`]: arbitrary bytes through `split_arg_bytes`. No panic; an
//!   accepted line's arguments are no longer than the line, and quoting
//!   each with `quote_bytes` (redis-cli's quoting) and splitting the
//!   quoted line again gives the same arguments.
//! - [`glob`]: input `[flags, pattern length, bytes…]`: a pattern and a
//!   string through Redis' glob matcher, with and without case. No panic
//!   and no slow match (libFuzzer's timeout): every `*` search is bounded
//!   by Redis' nesting limit and give-up rule. A pattern without
//!   wildcards matches only itself; the string with every byte escaped
//!   matches itself; where neither side has letters, case makes no
//!   difference.

use bytes::{Buf, BytesMut};
use redcodec_protocol::cmdline::{quote_bytes, split_arg_bytes, split_args};
use redcodec_protocol::glob::matches;
use redcodec_protocol::{parse_request, take_request, Limits, ProtocolError, Request};

/// The bulk limits the selector byte picks from: small ones, so that
/// "invalid bulk length" from the limit is reached, and Redis' default.
const LIMITS: [i64; 6] = [0, 1, 3, 16, 1024, redcodec_protocol::DEFAULT_MAX_BULK_LEN];

/// What a connection makes of its bytes: the requests, the error that
/// stopped it (if any), and the bytes left unparsed.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    requests: Vec<Vec<Vec<u8>>>,
    error: Option<ProtocolError>,
    rest: Vec<u8>,
}

/// Takes every complete request from the front of `buf`, checking each.
/// Returns false once an error stopped the connection.
fn drain(buf: &mut Vec<u8>, limits: &Limits, out: &mut Outcome) -> bool {
    loop {
        match parse_request(buf, limits) {
            Ok(None) => return true,
            Ok(Some((request, used))) => {
                check(&request, used, buf, limits);
                out.requests.push(words(request));
                buf.drain(..used);
            }
            Err(e) => {
                let _ = e.reply_text();
                out.error = Some(e);
                return false;
            }
        }
    }
}

/// [`drain`] for a connection's read buffer: each request taken out of
/// it, its arguments slices of the bytes taken.
fn drain_taken(buf: &mut BytesMut, limits: &Limits, out: &mut Outcome) -> bool {
    loop {
        let before = buf.clone();
        match take_request(buf, limits) {
            Ok(None) => {
                assert_eq!(*buf, before, "an incomplete request takes nothing");
                return true;
            }
            Ok(Some(request)) => {
                let used = before.len() - buf.len();
                check(&request, used, &before, limits);
                out.requests.push(words(request));
            }
            Err(e) => {
                let _ = e.reply_text();
                out.error = Some(e);
                return false;
            }
        }
    }
}

/// A request of `used` bytes from the front of `buf`: at least one byte
/// and no more than the buffer holds; its arguments fit in those bytes;
/// a multibulk argument is no longer than the limit.
fn check(request: &Request, used: usize, buf: &[u8], limits: &Limits) {
    assert!(
        used >= 1 && used <= buf.len(),
        "took {used} of {} bytes",
        buf.len()
    );
    let arg_bytes: usize = request.args.iter().map(|a| a.len()).sum();
    assert!(arg_bytes <= used, "{arg_bytes} argument bytes from {used}");
    if buf[0] == b'*' {
        for arg in &request.args {
            assert!(arg.len() as i64 <= limits.max_bulk_len);
        }
    }
}

fn words(request: Request) -> Vec<Vec<u8>> {
    request.args.iter().map(|a| a.to_vec()).collect()
}

/// See the [module documentation](self).
pub fn resp_request(data: &[u8]) {
    let [sel, seed, bytes @ ..] = data else {
        return;
    };
    let limits = Limits {
        max_bulk_len: LIMITS[usize::from(*sel) % LIMITS.len()],
    };

    let mut whole = Outcome {
        requests: Vec::new(),
        error: None,
        rest: Vec::new(),
    };
    let mut buf = bytes.to_vec();
    drain(&mut buf, &limits, &mut whole);
    whole.rest = buf;

    let mut pieces = Outcome {
        requests: Vec::new(),
        error: None,
        rest: Vec::new(),
    };
    let mut buf = BytesMut::new();
    let mut state = u32::from(*seed) | 0x100;
    let mut at = 0;
    while at < bytes.len() {
        // xorshift: piece sizes 1 to 16.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = (state % 16 + 1) as usize;
        let end = (at + size).min(bytes.len());
        buf.extend_from_slice(&bytes[at..end]);
        at = end;
        if !drain_taken(&mut buf, &limits, &mut pieces) {
            break;
        }
    }
    if pieces.error.is_some() {
        // The connection closed: what was not yet read is left with the rest.
        buf.extend_from_slice(&bytes[at..]);
    }
    pieces.rest = buf.chunk().to_vec();
    assert_eq!(whole, pieces);
}

/// See the [module documentation](self).
pub fn cmdline(data: &[u8]) {
    let Ok(args) = split_arg_bytes(data) else {
        return;
    };
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(split_args(text).as_ref(), Ok(&args));
    }
    let arg_bytes: usize = args.iter().map(Vec::len).sum();
    assert!(arg_bytes <= data.len());
    let quoted: Vec<String> = args.iter().map(|a| quote_bytes(a)).collect();
    let line = quoted.join(" ");
    assert_eq!(
        split_arg_bytes(line.as_bytes()).as_ref(),
        Ok(&args),
        "{line}"
    );
}

/// See the [module documentation](self).
pub fn glob(data: &[u8]) {
    let [flags, len, bytes @ ..] = data else {
        return;
    };
    let (pattern, text) = bytes.split_at(usize::from(*len).min(bytes.len()));
    let nocase = flags & 1 == 1;
    let matched = matches(pattern, text, nocase);
    if !pattern
        .iter()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
        && !nocase
    {
        assert_eq!(matched, pattern == text, "{pattern:?} {text:?}");
    }
    if !pattern.iter().chain(text).any(u8::is_ascii_alphabetic) {
        assert_eq!(
            matched,
            matches(pattern, text, !nocase),
            "{pattern:?} {text:?}"
        );
    }
    let escaped: Vec<u8> = text.iter().flat_map(|&b| [b'\\', b]).collect();
    assert!(matches(&escaped, text, nocase), "{text:?}");
}
