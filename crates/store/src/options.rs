//! How a store is opened: [`OpenMode`] and [`StoreOptions`].

use crate::compat::Compat;

/// How `Store::open` treats the directory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Read and write; create the store if the directory holds none.
    CreateIfMissing,
    /// Read and write; fail unless the store exists.
    MustExist,
    /// Read only; fail unless the store exists. Every instance is a RocksDB
    /// secondary instance whose own files go to a temporary directory: no
    /// file of the store is written, its lock is not taken (a running
    /// server may hold it), and no flush, compaction or compaction filter
    /// runs. Writes fail with [`crate::StoreError::ReadOnly`].
    ReadOnly,
}

impl OpenMode {
    /// Whether the store may be written.
    pub fn writes(self) -> bool {
        self != OpenMode::ReadOnly
    }
}

/// Everything `Store::open` needs besides the codec, clock and directory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// Read-write (creating or not) or read-only.
    pub mode: OpenMode,
    /// Write what this release of the real system opens (`None`: RocksDB's
    /// own defaults).
    pub compat: Option<Compat>,
    /// Bytes of the block cache every column family of every instance
    /// shares: data blocks, and the index and filter blocks of every table
    /// ([`DEFAULT_BLOCK_CACHE_BYTES`] unless set).
    pub block_cache_bytes: usize,
    /// Bytes of the read cache in front of RocksDB: the records point reads
    /// found, or found absent ([`crate::read_cache`]; 0, the default:
    /// none). A read-only store has none.
    pub read_cache_bytes: usize,
    /// Read the tables past the operating system's page cache (RocksDB's
    /// `use_direct_reads`): every block the block cache misses comes from
    /// the device, as in a store far larger than memory. For measurements
    /// (`compare --scale … --direct-reads`); off by default.
    pub direct_reads: bool,
}

/// The block cache a store gets unless told otherwise: 128 MiB, enough for
/// the partitioned index and filters of 10M records and more (their top
/// levels are pinned). A store whose tables were written without
/// partitions (by Pika, Ardb, or an older redcodec) keeps each table's
/// whole index and filter block in the cache while it is read: point reads
/// spread over a large such store may need more (docs/src/scale.md).
pub const DEFAULT_BLOCK_CACHE_BYTES: usize = 128 << 20;

impl StoreOptions {
    /// Options with `mode`, no compat target, the default block cache, no
    /// read cache and reads through the page cache.
    pub fn new(mode: OpenMode) -> StoreOptions {
        StoreOptions {
            mode,
            compat: None,
            block_cache_bytes: DEFAULT_BLOCK_CACHE_BYTES,
            read_cache_bytes: 0,
            direct_reads: false,
        }
    }
}
