//! The user keys that compaction filters found expired (active expiry):
//! filled by the filters of a format that declares
//! [`redcodec_codec::Capabilities::active_expiry`], drained by the
//! engine's expiry task.

use std::collections::BTreeSet;

use parking_lot::Mutex;

/// The user keys that compaction filters found expired, not yet handled.
#[derive(Debug, Default)]
pub struct ExpiredKeys {
    keys: Mutex<BTreeSet<Vec<u8>>>,
}

impl ExpiredKeys {
    /// Adds a key (a compaction filter found its metadata expired).
    pub fn report(&self, key: Vec<u8>) {
        self.keys.lock().insert(key);
    }

    /// Takes every reported key, in key order.
    pub fn drain(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.keys.lock()).into_iter().collect()
    }

    /// How many keys wait.
    pub fn len(&self) -> usize {
        self.keys.lock().len()
    }

    /// Whether no key waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_keys_drain_once_in_key_order() {
        let keys = ExpiredKeys::default();
        assert!(keys.is_empty());
        keys.report(b"b".to_vec());
        keys.report(b"a".to_vec());
        keys.report(b"b".to_vec());
        assert_eq!(keys.len(), 2);
        assert_eq!(keys.drain(), vec![b"a".to_vec(), b"b".to_vec()]);
        assert!(keys.drain().is_empty());
    }
}
