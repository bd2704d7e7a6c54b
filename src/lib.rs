//! Redis data types — strings, hashes, lists, sets, sorted sets, with
//! TTLs — stored on RocksDB through the on-disk formats of the systems that
//! invented them: Apache Kvrocks, Pika 2.x (nemo), 3.x (blackwidow) and
//! 4.x (floyd), and Ardb. One [`Engine`] gives Redis 7 semantics on any of
//! them, byte for byte the records the real system writes.
//!
//! # Quick start
//!
//! ```
#![doc = include_str!("../examples/quickstart.rs")]
//! ```
//!
//! It prints
//!
//! ```text
//! (integer) 2
//! (error) WRONGTYPE Operation against a key holding the wrong kind of value
//! Ada "3"
//! ```
//!
//! # What is where
//!
//! - [`Engine`]: a store opened in one format. [`Engine::execute`] runs a
//!   Redis command and returns the [`Reply`] Redis would give (its
//!   `Display` is redis-cli's printing); the typed API
//!   ([`Engine::hset`], [`Engine::zadd`], [`Engine::read`],
//!   [`Engine::write`], [`Engine::keys_after`], …, in
//!   [`engine::typed`]) does the same without command lines.
//! - [`Format`] names a format at run time (`"kvrocks".parse()`), and
//!   [`OpenFormat::open_format`] opens a store of it in one call;
//!   [`EngineOptions`] chooses read-write or [read-only](EngineOptions::read_only)
//!   (a RocksDB secondary instance: no file of the store changes), the
//!   clock, and [`Compat`] (write for a real system's release).
//! - One format's codec directly, for static dispatch: [`kvrocks`],
//!   [`blackwidow`], [`nemo`], [`ardb`], [`floyd`]; the vocabulary they
//!   share is [`codec`].
//! - [`migrate`]: copy every key of one store into another format, with
//!   progress ([`migrate::Observer`]), checkpoints and resume, then
//!   [`migrate::verify`].
//! - [`server`] (feature `server`, on by default): `redcodec serve` — a
//!   RESP2/RESP3 server over a store — from code.
//! - [`engine::check`]: the read-only consistency check of
//!   `redcodec check`.
//!
//! # Examples
//!
//! The repository's `examples/` are compiled and run by its tests:
//! `quickstart` (above), `typed` (hashes, sorted sets, whole values,
//! expiries), `format_by_name` (a format chosen from a string),
//! `migrate` (migration with progress, then verify), `pika_read_only` (a
//! data directory Pika's own code wrote, read without changing it) and
//! `serve` (a Redis server from code). Run one with
//! `cargo run --release --example typed`.
//!
//! The book in `docs/` (and the README) covers the command line, the
//! formats' byte-level specifications, testing, performance and the
//! architecture.

mod open;

pub use redcodec_ardb as ardb;
pub use redcodec_blackwidow as blackwidow;
pub use redcodec_codec as codec;
pub use redcodec_engine as engine;
pub use redcodec_floyd as floyd;
pub use redcodec_formats as formats;
pub use redcodec_kvrocks as kvrocks;
pub use redcodec_migrate as migrate;
pub use redcodec_nemo as nemo;
#[cfg(feature = "server")]
pub use redcodec_server as server;
pub use redcodec_store as store;

pub use open::{Error, OpenFormat};
pub use redcodec_codec::{Codec, DataType};
pub use redcodec_engine::typed::Stored;
pub use redcodec_engine::value::Value;
pub use redcodec_engine::{
    CmdError, Compat, Engine, EngineError, EngineOptions, ManualClock, OpenMode, Reply,
};
pub use redcodec_formats::{AnyCodec, Format, FormatError, FormatOptions};
