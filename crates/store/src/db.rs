//! The RocksDB handle every module of the store shares.

use rocksdb::MultiThreaded;

/// The RocksDB handle type: column families can be created while the
/// database is shared.
pub(crate) type Db = rocksdb::DBWithThreadMode<MultiThreaded>;
