//! Expiry held: while a store is a replica's, no key expires by this
//! machine's clock in the background. A Redis replica never expires a key
//! itself (`expireIfNeeded` on a replica only hides it from reads): its
//! master sends the `DEL` when the key expires there. A compaction filter
//! that dropped a key by the replica's clock would lose the writes the
//! master makes to it while it still lives there (the clocks of two
//! machines differ). While held, the filters judge at time 0 — no TTL has
//! passed, so only records stale by version or deletion go — and the
//! engine's active-expiry pass deletes nothing.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether background expiry is held (see the module's documentation).
#[derive(Debug, Default)]
pub struct ExpiryHold {
    held: AtomicBool,
}

impl ExpiryHold {
    /// Holds (`true`) or releases (`false`) background expiry. A
    /// compaction already running keeps the time it started with.
    pub fn set(&self, held: bool) {
        self.held.store(held, Ordering::SeqCst);
    }

    /// Whether background expiry is held.
    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::SeqCst)
    }

    /// The time at which a compaction starting now judges expiry: 0 while
    /// held (no TTL has passed), else `now_ms`.
    pub fn judging_time(&self, now_ms: u64) -> u64 {
        if self.is_held() {
            0
        } else {
            now_ms
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_store_judges_at_time_zero() {
        let hold = ExpiryHold::default();
        assert_eq!(hold.judging_time(1_700_000_000_000), 1_700_000_000_000);
        hold.set(true);
        assert!(hold.is_held());
        assert_eq!(hold.judging_time(1_700_000_000_000), 0);
        hold.set(false);
        assert_eq!(hold.judging_time(5), 5);
    }
}
