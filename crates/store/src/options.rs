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
}

impl StoreOptions {
    /// Options with `mode` and no compat target.
    pub fn new(mode: OpenMode) -> StoreOptions {
        StoreOptions { mode, compat: None }
    }
}
