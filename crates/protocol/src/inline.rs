//! Inline commands: one line of text split with redis-cli's quoting
//! rules (Redis' `processInlineBuffer`).

use crate::cmdline::split_arg_bytes;

use crate::request_frame::Frame;
use crate::{ProtocolError, INLINE_MAX_SIZE};

/// Parses one inline line from the start of `buf`: `Ok(None)` until a
/// newline arrives, then the request's words and the bytes it took (the
/// line and its newline; a `\r` before the newline is dropped).
pub fn parse_inline(buf: &[u8]) -> Result<Option<Frame>, ProtocolError> {
    let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > INLINE_MAX_SIZE {
            return Err(ProtocolError::TooBigInline);
        }
        return Ok(None);
    };
    let mut line = &buf[..newline];
    if let [rest @ .., b'\r'] = line {
        line = rest;
    }
    let args = split_arg_bytes(line).map_err(|_| ProtocolError::UnbalancedQuotes)?;
    Ok(Some(Frame::words(args, newline + 1)))
}
