//! The nemo on-disk format of Pika 2.x (`Qihoo360/nemo` @ `f47cb5c` over
//! `Qihoo360/nemo-rocksdb` @ `c682504`).
//!
//! Every module reads top to bottom beside `formats-spec/nemo.md`:
//!
//! - [`layout`]: the five RocksDB instances and the separator records
//!   nemo writes on every open;
//! - [`keys`]: metadata keys (`'H' ‖ key`) and element keys
//!   (`'h' ‖ len ‖ key ‖ …`), the 254-byte key limit;
//! - [`suffix`]: the `version ‖ timestamp` suffix nemo-rocksdb appends to
//!   every value;
//! - [`meta`]: string values and collection metadata values;
//! - [`score`]: the lossy (5-decimal) score index transform;
//! - [`elements`]: element values, and whether an element belongs to the
//!   current version of its key;
//! - [`version`]: the version rule of `PutWithKeyVersion` /
//!   `WriteWithOldKeyTTL`;
//! - [`gc`]: the rules of `NemoCompactionFilter`;
//! - `codec`: [`NemoCodec`], the [`redcodec_codec::Codec`] implementation.
//!
//! Integers nemo copies with `memcpy` (counts, list links and sequence
//! numbers, the member score) are written little-endian, as on the x86 hosts
//! nemo ran on; the suffix is little-endian by definition (`EncodeFixed32`);
//! the score index key is big-endian.

#![deny(missing_docs)]

mod codec;
pub mod elements;
pub mod gc;
pub mod keys;
pub mod layout;
pub mod meta;
pub mod score;
pub mod suffix;
pub mod version;

pub use codec::NemoCodec;

/// The format's name, as the command line spells it and errors name it.
pub const FORMAT: &str = "nemo";
