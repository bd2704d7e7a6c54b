//! Requests as clients send them: RESP multibulk arrays or inline lines,
//! parsed by a pure function over bytes ([`parse_request`]) with Redis'
//! limits and Redis' `Protocol error: …` texts. No I/O here: the parser
//! lives in [`redcodec_protocol`] (no RocksDB, no tokio, so it can be
//! fuzzed on its own) and is re-exported here. A connection takes each
//! request out of its read buffer ([`take_request`]): the arguments are
//! slices of the bytes read, never copies.

use bytes::Bytes;

pub use redcodec_protocol::{
    frame, inline, parse, parse_request, take_request, Limits, ProtocolError, Request,
    DEFAULT_MAX_BULK_LEN, INLINE_MAX_SIZE,
};

/// The arguments of a command the server makes itself (a replication
/// link's, a script's, a migration's), copied as a client's would arrive.
pub fn args_of(words: &[impl AsRef<[u8]>]) -> Vec<Bytes> {
    words
        .iter()
        .map(|w| Bytes::copy_from_slice(w.as_ref()))
        .collect()
}
