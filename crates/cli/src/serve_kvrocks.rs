//! `serve`'s options for Kvrocks replicas (see the "Kvrocks replicas"
//! section of the book's replication-master page): the name `_db_name`
//! answers, and how long the WAL is kept for replicas that resume by
//! `PSYNC <seq>`, named and defaulted as Kvrocks 2.10 names them.

use clap::Args;
use redcodec_engine::store::wal::{self, WalRetention};

/// The options.
#[derive(Args, Debug, Clone)]
pub struct KvrocksMasterArgs {
    /// Kvrocks' `db-name`: the name a Kvrocks replica must have (its own
    /// `db-name`) to follow this server.
    #[arg(long, value_name = "NAME", default_value = redcodec_server::master::kvrocks::DEFAULT_DB_NAME)]
    db_name: String,
    /// Kvrocks' `rocksdb.wal_ttl_seconds`: how long WAL files RocksDB no
    /// longer needs are kept (0: no limit by age).
    #[arg(long, value_name = "SECONDS", default_value_t = WalRetention::KVROCKS.ttl_seconds)]
    wal_ttl_seconds: u64,
    /// Kvrocks' `rocksdb.wal_size_limit_mb`: the most MiB of such WAL
    /// files kept (0: no limit by size).
    #[arg(long, value_name = "MIB", default_value_t = WalRetention::KVROCKS.size_limit_mb)]
    wal_size_limit_mb: u64,
}

impl KvrocksMasterArgs {
    /// Sets the WAL retention of the store `serve` opens (before it opens).
    pub fn apply_retention(&self) {
        wal::set_retention(WalRetention {
            ttl_seconds: self.wal_ttl_seconds,
            size_limit_mb: self.wal_size_limit_mb,
        });
    }

    /// The server's options.
    pub fn options(&self) -> redcodec_server::master::kvrocks::Options {
        redcodec_server::master::kvrocks::Options {
            db_name: self.db_name.clone(),
        }
    }
}
