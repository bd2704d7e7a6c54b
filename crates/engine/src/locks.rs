//! Per-key locks: commands on the same key serialize; commands on different
//! keys run in parallel. Keys hash onto a fixed set of stripes, and a
//! command locks its stripes in ascending order, so two multi-key commands
//! cannot deadlock. Keyspace-wide commands (FLUSHALL) take the whole table.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

const STRIPES: usize = 1024;

/// The engine's lock table.
pub struct LockTable {
    keyspace: RwLock<()>,
    stripes: Vec<Mutex<()>>,
}

/// Held locks; released on drop.
pub enum Held<'a> {
    /// Shared keyspace lock plus the stripes of the command's keys.
    Keys(
        #[allow(dead_code)] RwLockReadGuard<'a, ()>,
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
    ),
    /// The whole keyspace, exclusively.
    All(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable {
            keyspace: RwLock::new(()),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl LockTable {
    /// Locks the stripes of `keys`.
    pub fn lock_keys<'a>(&'a self, keys: &[&[u8]]) -> Held<'a> {
        let shared = self.keyspace.read();
        let mut idx: Vec<usize> = keys.iter().map(|k| stripe(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        let guards = idx.into_iter().map(|i| self.stripes[i].lock()).collect();
        Held::Keys(shared, guards)
    }

    /// Locks the whole keyspace.
    pub fn lock_all(&self) -> Held<'_> {
        Held::All(self.keyspace.write())
    }
}

fn stripe(key: &[u8]) -> usize {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() as usize) % STRIPES
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn same_key_serializes_and_multi_key_locks_do_not_deadlock() {
        let table = Arc::new(LockTable::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let table = table.clone();
                let inside = inside.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let keys: Vec<&[u8]> = if (i + t) % 2 == 0 {
                            vec![b"a", b"b"]
                        } else {
                            vec![b"b", b"a"]
                        };
                        let _held = table.lock_keys(&keys);
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
