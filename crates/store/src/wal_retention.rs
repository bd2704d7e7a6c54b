//! How long RocksDB keeps the WAL files it no longer needs
//! ([`WalRetention`], Kvrocks' `rocksdb.wal_ttl_seconds` and
//! `rocksdb.wal_size_limit_mb`), set once per process before its stores
//! open (read by [`crate::wal`] users, applied when a store opens).

use std::sync::atomic::{AtomicU64, Ordering};

use rocksdb::Options;

/// How long WAL files are kept once RocksDB no longer needs them
/// (archived), for replicas that resume from a sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalRetention {
    /// `rocksdb.wal_ttl_seconds`: archived WAL files older than this are
    /// deleted (0: no limit by age).
    pub ttl_seconds: u64,
    /// `rocksdb.wal_size_limit_mb`: the archive is trimmed to this size
    /// (0: no limit by size).
    pub size_limit_mb: u64,
}

impl WalRetention {
    /// Kvrocks 2.10's defaults (`src/config/config.cc`): 3 hours, 16 GiB.
    pub const KVROCKS: WalRetention = WalRetention {
        ttl_seconds: 3 * 3600,
        size_limit_mb: 16384,
    };

    /// RocksDB's default: obsolete WAL files are deleted at once.
    pub const NONE: WalRetention = WalRetention {
        ttl_seconds: 0,
        size_limit_mb: 0,
    };
}

static TTL_SECONDS: AtomicU64 = AtomicU64::new(0);
static SIZE_LIMIT_MB: AtomicU64 = AtomicU64::new(0);

/// Sets the retention of the stores this process opens read-write from
/// now on (RocksDB takes it when a store opens). `redcodec serve` sets
/// it before opening its store; every other command keeps
/// [`WalRetention::NONE`].
pub fn set_retention(retention: WalRetention) {
    TTL_SECONDS.store(retention.ttl_seconds, Ordering::SeqCst);
    SIZE_LIMIT_MB.store(retention.size_limit_mb, Ordering::SeqCst);
}

/// The retention stores opened from now on get.
pub fn retention() -> WalRetention {
    WalRetention {
        ttl_seconds: TTL_SECONDS.load(Ordering::SeqCst),
        size_limit_mb: SIZE_LIMIT_MB.load(Ordering::SeqCst),
    }
}

/// Puts the current retention into the options of a store opened
/// read-write.
pub(crate) fn apply(opts: &mut Options) {
    let r = retention();
    opts.set_wal_ttl_seconds(r.ttl_seconds);
    opts.set_wal_size_limit_mb(r.size_limit_mb);
}
