//! Replies on the wire: RESP2 as the engine gives them, RESP3 after
//! `HELLO 3` with the shapes Redis 7 uses per command ([`shape`]).

pub mod encode;
pub mod shape;
pub mod stream;

pub use encode::{encode, Protocol};
pub use shape::{Shape, ShapeRule};
pub use stream::{Next, Streamer};

/// Replies waiting in the output buffer are sent once they reach this
/// many bytes (and when the requests read so far are answered).
pub const OUT_CHUNK: usize = 64 * 1024;
