//! redcodec: Redis data types on RocksDB through interchangeable,
//! byte-faithful on-disk encodings.
//!
//! This crate re-exports the pieces a library user needs: the codec
//! vocabulary ([`codec`]), the formats ([`formats`], [`kvrocks`]) and the
//! engine ([`engine`]).

pub use redcodec_codec as codec;
pub use redcodec_engine as engine;
pub use redcodec_formats as formats;
pub use redcodec_kvrocks as kvrocks;

pub use redcodec_engine::{Engine, Reply};
pub use redcodec_formats::{AnyCodec, Format};
