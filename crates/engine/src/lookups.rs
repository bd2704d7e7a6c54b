//! Redis' `keyspace_hits` and `keyspace_misses`: how many keys the
//! clients' read commands looked up and found, or did not (Redis counts
//! in `lookupKeyRead`, once per key looked up; writes do not count).

use std::sync::atomic::{AtomicU64, Ordering};

/// The counts of one engine's key lookups by read commands.
#[derive(Debug, Default)]
pub struct KeyspaceLookups {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl KeyspaceLookups {
    /// Counts one lookup: a hit when the key was `found` live.
    pub(crate) fn count(&self, found: bool) {
        let counter = if found { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The hits and misses so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Starts both counts again from 0 (`CONFIG RESETSTAT`).
    pub fn reset(&self) {
        self.hits.store(0, Ordering::Relaxed);
        self.misses.store(0, Ordering::Relaxed);
    }
}
