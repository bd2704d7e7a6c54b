//! Redis requests as clients send them, parsed without I/O, RocksDB or an
//! async runtime, so that the parsers can be fuzzed and reused on their own.
//!
//! * [`cmdline`]: a command line split into arguments exactly as
//!   `redis-cli` does (hiredis `sdssplitargs`); `exec`, the conformance
//!   scenarios and inline requests use it.
//! * [`parse_request`]: one request from the start of a buffer, a RESP
//!   multibulk array or an inline line, with Redis' limits and Redis'
//!   `Protocol error: …` texts (Redis 7.0's `processMultibulkBuffer` and
//!   `processInlineBuffer`); [`take_request`] takes it out of a
//!   connection's read buffer, its arguments slices of it
//!   ([`request_frame`]: where a request lies before it is taken).
//! * [`glob`]: Redis' glob patterns, as KEYS, SCAN MATCH and CONFIG GET
//!   match them.
//! * [`encode_request`]: the other way, a command as a client sends it
//!   (a replica's handshake, a master's stream, a slot migration's link).

pub mod cmdline;
pub mod glob;
pub mod inline;
pub mod parse;
pub mod request_frame;

pub use parse::{frame, parse_request, take_request};
pub use request_frame::Frame;

/// Appends `args` to `out` as a client sends a command: a RESP array of
/// bulk strings.
pub fn encode_request(args: &[impl AsRef<[u8]>], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// One command, its name first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The arguments, the command name first; empty for a blank line or
    /// an empty multibulk (`*0`), which Redis skips. Taken from a read
    /// buffer ([`take_request`]), they are slices of it.
    pub args: Vec<bytes::Bytes>,
}

/// The limits Redis puts on a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `proto-max-bulk-len`: the longest bulk argument.
    pub max_bulk_len: i64,
}

/// Redis' `PROTO_INLINE_MAX_SIZE`: the longest inline line, and the
/// longest count line of a multibulk.
pub const INLINE_MAX_SIZE: usize = 64 * 1024;

/// Redis' default `proto-max-bulk-len` (512 MB).
pub const DEFAULT_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: DEFAULT_MAX_BULK_LEN,
        }
    }
}

/// Why a request is refused; Redis replies `-ERR Protocol error: <text>`
/// and closes the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// An inline line longer than [`INLINE_MAX_SIZE`] without a newline.
    #[error("too big inline request")]
    TooBigInline,
    /// A multibulk count line longer than [`INLINE_MAX_SIZE`].
    #[error("too big mbulk count string")]
    TooBigMbulkCount,
    /// A bulk length line longer than [`INLINE_MAX_SIZE`].
    #[error("too big bulk count string")]
    TooBigBulkCount,
    /// The multibulk count is not an integer or exceeds `INT_MAX`.
    #[error("invalid multibulk length")]
    InvalidMultibulkLength,
    /// An argument of a multibulk does not start with `$`.
    #[error("expected '$', got '{}'", *.0 as char)]
    ExpectedDollar(u8),
    /// A bulk length that is not an integer, negative, or above the limit.
    #[error("invalid bulk length")]
    InvalidBulkLength,
    /// An inline line whose quotes do not balance.
    #[error("unbalanced quotes in request")]
    UnbalancedQuotes,
}

impl ProtocolError {
    /// The error reply's text, as Redis sends it.
    pub fn reply_text(&self) -> String {
        format!("ERR Protocol error: {self}")
    }
}
