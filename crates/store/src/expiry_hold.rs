//! Expiry held: while a store is a replica's, no key expires by this
//! machine's clock in the background. A Redis replica never expires a key
//! itself (`expireIfNeeded` on a replica only hides it from reads): its
//! master sends the `DEL` when the key expires there. A compaction filter
//! that dropped a key by the replica's clock would lose the writes the
//! master makes to it while it still lives there (the clocks of two
//! machines differ). While held, the filters judge at time 0 — no TTL has
//! passed, so only records stale by version or deletion go — and the
//! engine's active-expiry pass deletes nothing.
//!
//! A server paused by CLIENT PAUSE holds it too, until the pause ends, as
//! Redis expires nothing then: a master's background expiry would send
//! its replicas a `DEL` while writes are paused for a cut-over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

/// Whether background expiry is held (see the module's documentation).
#[derive(Debug, Default)]
pub struct ExpiryHold {
    /// A replica's hold.
    held: AtomicBool,
    /// A pause's hold: until when.
    paused_until: Mutex<Option<Instant>>,
}

impl ExpiryHold {
    /// Holds (`true`) or releases (`false`) background expiry, for a
    /// replica. A compaction already running keeps the time it started
    /// with.
    pub fn set(&self, held: bool) {
        self.held.store(held, Ordering::SeqCst);
    }

    /// Holds background expiry until `until` (a CLIENT PAUSE), or no
    /// longer (`None`: the pause was lifted).
    pub fn pause_until(&self, until: Option<Instant>) {
        *self.paused_until.lock() = until;
    }

    /// Takes the state of `other` (the hold of the store a server had
    /// open before this one).
    pub fn take_state_of(&self, other: &ExpiryHold) {
        self.set(other.held.load(Ordering::SeqCst));
        self.pause_until(*other.paused_until.lock());
    }

    /// Whether background expiry is held.
    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::SeqCst)
            || self
                .paused_until
                .lock()
                .is_some_and(|until| Instant::now() < until)
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

    #[test]
    fn a_pause_holds_expiry_until_it_ends_or_is_lifted() {
        let hold = ExpiryHold::default();
        let later = Instant::now() + std::time::Duration::from_secs(600);
        hold.pause_until(Some(later));
        assert!(hold.is_held());
        let next = ExpiryHold::default();
        next.take_state_of(&hold);
        assert!(next.is_held());
        hold.pause_until(None);
        assert!(!hold.is_held());
        hold.pause_until(Some(Instant::now()));
        assert!(!hold.is_held(), "a pause that has ended holds nothing");
        // The replica's hold and the pause's are apart.
        hold.set(true);
        hold.pause_until(None);
        assert!(hold.is_held());
    }
}
