//! WATCH: a modification counter per watched key, bumped by every write
//! to it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

/// A key in a namespace.
pub type NsKey = (String, Vec<u8>);

#[derive(Default)]
struct Watched {
    watchers: usize,
    version: u64,
}

/// The counters of every key some client watches.
#[derive(Default)]
pub struct WatchTable {
    keys: Mutex<HashMap<NsKey, Watched>>,
    /// Number of watched keys: writes skip the table while it is 0.
    count: AtomicUsize,
}

impl WatchTable {
    /// Starts watching `key`; its counter now.
    pub fn watch(&self, key: &NsKey) -> u64 {
        let mut keys = self.keys.lock();
        let entry = keys.entry(key.clone()).or_default();
        entry.watchers += 1;
        let version = entry.version;
        self.count.store(keys.len(), Ordering::SeqCst);
        version
    }

    /// Stops one watch of `key`.
    pub fn unwatch(&self, key: &NsKey) {
        let mut keys = self.keys.lock();
        if let Some(entry) = keys.get_mut(key) {
            entry.watchers -= 1;
            if entry.watchers == 0 {
                keys.remove(key);
            }
        }
        self.count.store(keys.len(), Ordering::SeqCst);
    }

    /// The counter of a watched key.
    pub fn version(&self, key: &NsKey) -> u64 {
        self.keys.lock().get(key).map_or(0, |w| w.version)
    }

    /// The watched keys of `namespace`.
    pub fn watched_in(&self, namespace: &str) -> Vec<Vec<u8>> {
        if self.count.load(Ordering::SeqCst) == 0 {
            return Vec::new();
        }
        let table = self.keys.lock();
        table
            .keys()
            .filter(|(ns, _)| ns == namespace)
            .map(|(_, key)| key.clone())
            .collect()
    }

    /// Records a write to every watched key outside `namespace` (a
    /// FLUSHALL that emptied every namespace; Kvrocks marks every watched
    /// key of every connection modified).
    pub fn touch_all_but(&self, namespace: &str) {
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut table = self.keys.lock();
        for ((ns, _), w) in table.iter_mut() {
            if ns != namespace {
                w.version += 1;
            }
        }
    }

    /// Records a write to `keys` of `namespace`.
    pub fn touch(&self, namespace: &str, keys: &[&[u8]]) {
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut table = self.keys.lock();
        for key in keys {
            if let Some(w) = table.get_mut(&(namespace.to_string(), key.to_vec())) {
                w.version += 1;
            }
        }
    }
}
