//! Requests as clients send them: RESP multibulk arrays or inline lines,
//! parsed by a pure function over bytes ([`parse_request`]) with Redis'
//! limits and Redis' `Protocol error: …` texts. No I/O here: the parser
//! lives in [`redcodec_protocol`] (no RocksDB, no tokio, so it can be
//! fuzzed on its own) and is re-exported here.

pub use redcodec_protocol::{
    inline, parse, parse_request, Limits, ProtocolError, Request, DEFAULT_MAX_BULK_LEN,
    INLINE_MAX_SIZE,
};
