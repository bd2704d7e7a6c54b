//! The RocksDB layer under the engine. Nothing above this crate touches
//! RocksDB or its options.
//!
//! - [`Store`] opens every instance and column family a codec's layout
//!   names, in one of three [`OpenMode`]s: read-write (creating a new
//!   store or not), or read-only. A read-only store is a RocksDB secondary
//!   instance whose own files live in a temporary directory: it takes no
//!   lock, writes no file of the source, starts no compaction, and reads a
//!   directory whose server is still running.
//! - [`Compat`] names a real system's release; a store written with it is
//!   one that release's RocksDB opens (table format, checksum, compression
//!   per level, column families).
//! - `gc` holds the compaction filters: RocksDB asks, the codec decides.
//! - [`clock`] is the injectable time every timestamp comes from.
//! - [`foreign`] lists the keys of RocksDB stores beside the layout's
//!   instances that it does not name (Pika 3.5's `streams/`).
//! - [`sst`] reads what an SST file says about itself (table format,
//!   checksum, compression).

pub mod clock;
mod compat;
mod error;
mod expired;
pub mod foreign;
mod gc;
pub mod intent;
mod kv;
pub mod sst;
mod store;

pub use clock::{Clock, ManualClock, SystemClock};
pub use compat::{Compat, COMPAT_NAMES};
pub use error::StoreError;
pub use expired::ExpiredKeys;
pub use kv::{KvIter, KvStore, MemIter, MemStore, Order};
pub use store::{hex, Batch, OpenMode, Pair, Store, StoreIter, StoreOptions};
