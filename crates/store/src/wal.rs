//! The write-ahead log as a replication stream: how long RocksDB keeps
//! the WAL files it no longer needs ([`WalRetention`], Kvrocks'
//! `rocksdb.wal_ttl_seconds` and `rocksdb.wal_size_limit_mb`), and the
//! write batches it holds from a sequence number on ([`Store::wal_batches`],
//! RocksDB's `GetUpdatesSince`, as Kvrocks' master reads them to feed a
//! replica).
//!
//! Every write of the store goes through the WAL (no path writes with the
//! WAL disabled); a migration's bulk load ingests SST files, which the WAL
//! does not hold — a replica that follows the WAL copies such a store in
//! full first, as it does a new store.
//!
//! Only the first instance of a layout is read: Kvrocks' layout has one.

use crate::error::StoreError;
use crate::store::Store;

pub use crate::wal_retention::{retention, set_retention, WalRetention};

/// One write batch of the WAL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalBatch {
    /// The sequence number of its first update.
    pub sequence: u64,
    /// How many sequence numbers it takes (its update count).
    pub count: u64,
    /// Its bytes, as RocksDB's `WriteBatch::Data()`.
    pub data: Vec<u8>,
}

impl WalBatch {
    /// The sequence number of the batch after it.
    pub fn next_sequence(&self) -> u64 {
        self.sequence + self.count
    }
}

/// Why the WAL could not be read from a sequence number.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    /// The WAL no longer holds the batch that starts there (purged, or the
    /// number falls inside a batch).
    #[error(
        "the WAL holds no batch starting at sequence {wanted} (the next one starts at {found})"
    )]
    Gap {
        /// The sequence number asked for.
        wanted: u64,
        /// Where the first batch the WAL holds from there starts.
        found: u64,
    },
    /// The WAL holds nothing from a sequence number on, though the store
    /// was written past it (its files from there were purged).
    #[error("the WAL holds nothing from sequence {wanted} on (the store is at {latest})")]
    Missing {
        /// The sequence number asked for.
        wanted: u64,
        /// The store's latest sequence number.
        latest: u64,
    },
    /// RocksDB could not read the WAL.
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl Store {
    /// The sequence number of the last update written.
    pub fn latest_sequence(&self) -> u64 {
        self.instance_db(0).latest_sequence_number()
    }

    /// Whether the WAL holds the batch starting at `sequence`, or
    /// `sequence` is the next one to be written: Kvrocks'
    /// `checkWALBoundary` (a replica may continue from there).
    pub fn wal_starts_at(&self, sequence: u64) -> bool {
        let latest = self.latest_sequence();
        if sequence == latest + 1 {
            return true;
        }
        sequence <= latest && self.wal_batches(sequence, 1).is_ok_and(|b| !b.is_empty())
    }

    /// The write batches of the WAL from the one starting at `from`, in
    /// order, until their bytes reach `max_bytes` (at least one batch) or
    /// the end of the WAL; empty when nothing was written from `from` on.
    pub fn wal_batches(&self, from: u64, max_bytes: usize) -> Result<Vec<WalBatch>, WalError> {
        let latest = self.latest_sequence();
        if from > latest {
            return Ok(Vec::new());
        }
        // rust-rocksdb's iterator leaves out the batches starting at or
        // before the number it is opened at: opened one before `from`, it
        // starts with the batch starting at `from` (if the WAL holds it).
        let mut iter = self
            .instance_db(0)
            .get_updates_since(from.saturating_sub(1))
            .map_err(StoreError::from)?;
        let mut out: Vec<WalBatch> = Vec::new();
        let mut bytes = 0usize;
        let mut next = from;
        for item in iter.by_ref() {
            let (sequence, batch) = item.map_err(StoreError::from)?;
            if sequence != next {
                return Err(WalError::Gap {
                    wanted: next,
                    found: sequence,
                });
            }
            let data = batch.data().to_vec();
            let count = batch.len() as u64;
            bytes += data.len();
            out.push(WalBatch {
                sequence,
                count,
                data,
            });
            next = sequence + count;
            if bytes >= max_bytes || next > latest {
                return Ok(out);
            }
        }
        // The iterator also stops, without an error of its own, at a gap
        // between WAL files (it then says TryAgain, as at the WAL's end
        // while a write lands). Every write up to `latest`, read before
        // it was opened, is in the WAL by then: stopping short of it is a
        // gap (reported by the call that starts there: the batches before
        // it are returned first).
        match iter.status() {
            Err(e) if e.kind() != rocksdb::ErrorKind::TryAgain => Err(StoreError::from(e).into()),
            _ if next <= latest && out.is_empty() => Err(WalError::Missing {
                wanted: next,
                latest,
            }),
            _ => Ok(out),
        }
    }
}
