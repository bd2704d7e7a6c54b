//! The RocksDB layer under the engine. Nothing above this crate touches
//! RocksDB or its options.
//!
//! RocksDB is the default feature `rocksdb`; without it the crate is the
//! storage interface ([`KvStore`], [`Batch`]) and [`MemStore`] alone, for
//! builds that must not compile RocksDB (the fuzz targets).
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
//! - [`FaultyStore`] fails the writes and reads a test asks it to.
//! - [`Group`] holds back the writes of several commands, readable by
//!   them ([`GroupIter`] merges a scan with them), to commit as one batch.
//! - [`clock`] is the injectable time every timestamp comes from.
//! - [`foreign`] lists the keys of RocksDB stores beside the layout's
//!   instances that it does not name (Pika 3.5's `streams/`).
//! - [`bulk_load`] writes sorted SST files with a store's own table
//!   options and ingests them (the migration's bulk path).
//! - [`sst`] reads what an SST file says about itself (table format,
//!   checksum, compression).
//! - [`read_cache`] keeps what point reads found, in front of RocksDB's
//!   memtables and tables.
//! - [`ReadAhead`] reads a whole column family on a thread of its own,
//!   for walks over every record.

mod batch;
#[cfg(feature = "rocksdb")]
pub mod bulk_load;
pub mod clock;
mod compat;
#[cfg(feature = "rocksdb")]
mod db;
mod error;
mod expired;
mod expiry_hold;
#[cfg(feature = "rocksdb")]
mod family;
pub mod faults;
#[cfg(feature = "rocksdb")]
pub mod foreign;
#[cfg(feature = "rocksdb")]
mod gc;
mod group;
mod group_iter;
pub mod intent;
mod kv;
mod options;
#[cfg(feature = "rocksdb")]
mod read_ahead;
#[cfg(feature = "rocksdb")]
pub mod read_cache;
pub mod sst;
#[cfg(feature = "rocksdb")]
mod store;
#[cfg(feature = "rocksdb")]
pub mod wal;
#[cfg(feature = "rocksdb")]
mod wal_retention;
#[cfg(feature = "rocksdb")]
mod write_behind;

pub use batch::{hex, unhex, Batch, Pair, PairRef};
pub use clock::{Clock, ManualClock, SystemClock};
pub use compat::{Compat, COMPAT_NAMES};
pub use error::StoreError;
pub use expired::ExpiredKeys;
pub use expiry_hold::ExpiryHold;
pub use faults::FaultyStore;
pub use group::Group;
pub use group_iter::GroupIter;
pub use kv::{DefaultStore, KvIter, KvStore, MemIter, MemStore, Order};
pub use options::{OpenMode, StoreOptions, DEFAULT_BLOCK_CACHE_BYTES};
#[cfg(feature = "rocksdb")]
pub use read_ahead::ReadAhead;
#[cfg(feature = "rocksdb")]
pub use store::{Store, StoreIter};
