//! Errors of the storage layer.

use thiserror::Error;

/// Failures of the storage layer.
#[derive(Debug, Error)]
pub enum StoreError {
    /// RocksDB reported an error.
    #[cfg(feature = "rocksdb")]
    #[error("storage error: {0}")]
    Rocks(#[from] rocksdb::Error),
    /// The directory cannot be opened as a store of this format.
    #[error("{0}")]
    Open(String),
    /// A write to a store opened read-only.
    #[error("the store is open read-only")]
    ReadOnly,
    /// Reading or writing a file failed (the intent record, a full disk),
    /// or a write failed by fault injection in tests.
    #[error("storage error: {0}")]
    Io(#[from] std::io::Error),
}
