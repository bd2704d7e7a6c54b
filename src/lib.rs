//! redcodec: Redis data types on RocksDB through interchangeable,
//! byte-faithful on-disk encodings.
//!
//! This crate re-exports the pieces a library user needs: the codec
//! vocabulary ([`codec`]), the formats (chosen by name through [`formats`],
//! or one codec directly: [`kvrocks`], [`blackwidow`], [`nemo`], [`ardb`], [`floyd`])
//! and the engine ([`engine`]).

pub use redcodec_ardb as ardb;
pub use redcodec_blackwidow as blackwidow;
pub use redcodec_codec as codec;
pub use redcodec_engine as engine;
pub use redcodec_floyd as floyd;
pub use redcodec_formats as formats;
pub use redcodec_kvrocks as kvrocks;
pub use redcodec_migrate as migrate;
pub use redcodec_nemo as nemo;

pub use redcodec_engine::{Engine, Reply};
pub use redcodec_formats::{AnyCodec, Format};
