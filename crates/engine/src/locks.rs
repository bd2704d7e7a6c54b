//! Per-key locks: commands on the same key serialize; commands on different
//! keys run in parallel. Keys hash onto a fixed set of stripes (64: a
//! server runs a command per core, and a group or keyspace-wide command
//! takes every stripe, so a few are enough and each costs), and a
//! command locks its stripes in ascending order, so two multi-key commands
//! cannot deadlock. Commands without keys (KEYS, SCAN, DBSIZE) share the
//! keyspace lock; keyspace-wide commands (FLUSHALL) take it exclusively and
//! then every stripe, in the same ascending order. A keyed command takes
//! only its stripes: one lock on the common path.
//!
//! The stripes are `std::sync::Mutex`es: a waiter spins briefly, then
//! sleeps until the holder wakes it. `parking_lot`'s mutex, used before,
//! yields the CPU up to ten times before it sleeps; with every client on
//! one key (a queue, a counter) those yields were more than one system
//! call and a context switch per command, and `LPUSH` on one list from 50
//! connections ran at 0.61× Kvrocks' rate, 0.93× with these
//! (docs/src/performance.md).
//!
//! A group of commands ([`crate::Engine::atomically`]) holds the whole
//! keyspace for its thread ([`LockTable::hold_for_group`]): every lock
//! that thread asks for meanwhile is already its own and is granted at
//! once; every other thread waits until the group has committed.
//!
//! A group on known keys ([`crate::Engine::atomically_on`]) holds only
//! the stripes of its keys ([`LockTable::hold_keys_for_group`]), taken in
//! the same ascending order, each marked with its thread: that thread's
//! requests for a marked stripe are granted at once, other threads wait
//! for those stripes only. The group's commands must lock only keys it
//! declared (a stripe it does not hold is taken as usual, which could
//! deadlock against another group: callers derive the declared keys from
//! the commands' key positions, as [`crate::Engine::execute`] does).

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::{Mutex, MutexGuard};

/// Locks a stripe (a stripe guards no data: a panic while it was held
/// leaves nothing half-changed in it).
fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many stripes the keys hash onto.
pub const STRIPES: usize = 64;

/// The engine's lock table.
pub struct LockTable {
    keyspace: RwLock<()>,
    stripes: Vec<Mutex<()>>,
    /// The thread ([`thread_id`]) holding everything for a group; 0: none.
    group_owner: AtomicU64,
    /// Per stripe, the thread holding it for a group on known keys; 0:
    /// none.
    stripe_owner: Vec<AtomicU64>,
}

/// Held locks; released on drop.
pub enum Held<'a> {
    /// The stripe of the command's one key.
    One(#[allow(dead_code)] MutexGuard<'a, ()>),
    /// The stripes of the command's keys.
    Keys(#[allow(dead_code)] Vec<MutexGuard<'a, ()>>),
    /// The keyspace, shared with other keyless commands.
    Keyspace(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    /// The whole keyspace and every stripe, exclusively.
    All(
        #[allow(dead_code)] RwLockWriteGuard<'a, ()>,
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
    ),
    /// Everything, for a group run by this thread: its mark is cleared
    /// (first) and then the locks are released.
    Group(
        #[allow(dead_code)] GroupMark<'a>,
        #[allow(dead_code)] RwLockWriteGuard<'a, ()>,
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
    ),
    /// The stripes of a group on known keys, run by this thread: their
    /// marks are cleared (first) and then the locks are released.
    KeyGroup(
        #[allow(dead_code)] StripeMarks<'a>,
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
    ),
    /// Nothing: the thread's group holds everything already.
    InGroup,
}

/// The marks of the stripes a group on known keys holds; cleared when
/// dropped.
pub struct StripeMarks<'a> {
    owners: &'a [AtomicU64],
    stripes: Vec<usize>,
}

impl Drop for StripeMarks<'_> {
    fn drop(&mut self) {
        for &i in &self.stripes {
            self.owners[i].store(0, Ordering::Release);
        }
    }
}

/// The mark of the thread that holds everything for a group; cleared
/// when dropped.
pub struct GroupMark<'a>(&'a AtomicU64);

impl Drop for GroupMark<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// A number for the calling thread, never 0 and never reused.
pub(crate) fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable {
            keyspace: RwLock::new(()),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            group_owner: AtomicU64::new(0),
            stripe_owner: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl LockTable {
    /// Locks the stripe of one key (the common case, without allocating).
    pub fn lock_key(&self, key: &[u8]) -> Held<'_> {
        let i = stripe(key);
        if self.owned_here(i) || self.held_by_group_here() {
            return Held::InGroup;
        }
        Held::One(lock(&self.stripes[i]))
    }

    /// Locks the stripes of `keys`; with no keys, shares the keyspace lock.
    pub fn lock_keys<'a>(&'a self, keys: &[&[u8]]) -> Held<'a> {
        if self.held_by_group_here() {
            return Held::InGroup;
        }
        match keys {
            [] => Held::Keyspace(self.keyspace.read()),
            [key] => self.lock_key(key),
            _ => {
                let mut idx: Vec<usize> = keys.iter().map(|k| stripe(k)).collect();
                idx.sort_unstable();
                idx.dedup();
                idx.retain(|&i| !self.owned_here(i));
                if idx.is_empty() {
                    return Held::InGroup;
                }
                Held::Keys(idx.into_iter().map(|i| lock(&self.stripes[i])).collect())
            }
        }
    }

    /// Locks the whole keyspace.
    pub fn lock_all(&self) -> Held<'_> {
        if self.held_by_group_here() {
            return Held::InGroup;
        }
        let keyspace = self.keyspace.write();
        Held::All(keyspace, self.stripes.iter().map(lock).collect())
    }

    /// Locks the whole keyspace for a group run by the calling thread:
    /// until the result is dropped, that thread's own lock requests are
    /// granted at once ([`Held::InGroup`]) and every other thread's wait.
    /// `None` when the calling thread holds everything for a group
    /// already.
    pub fn hold_for_group(&self) -> Option<Held<'_>> {
        if self.held_by_group_here() {
            return None;
        }
        let keyspace = self.keyspace.write();
        let stripes = self.stripes.iter().map(lock).collect();
        self.group_owner.store(thread_id(), Ordering::Release);
        Some(Held::Group(GroupMark(&self.group_owner), keyspace, stripes))
    }

    /// Locks the stripes of `keys` for a group on known keys run by the
    /// calling thread, in ascending order: until the result is dropped,
    /// that thread's requests for those stripes are granted at once
    /// ([`Held::InGroup`]), other threads' wait. `None` when the calling
    /// thread runs a group already (of either kind).
    pub fn hold_keys_for_group(&self, keys: &[&[u8]]) -> Option<Held<'_>> {
        if self.held_by_group_here() || self.any_owned_here() {
            return None;
        }
        let mut idx: Vec<usize> = keys.iter().map(|k| stripe(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        let guards = idx.iter().map(|&i| lock(&self.stripes[i])).collect();
        let me = thread_id();
        for &i in &idx {
            self.stripe_owner[i].store(me, Ordering::Release);
        }
        let marks = StripeMarks {
            owners: &self.stripe_owner,
            stripes: idx,
        };
        Some(Held::KeyGroup(marks, guards))
    }

    /// Whether the calling thread holds stripe `i` for a group on known
    /// keys.
    #[inline]
    fn owned_here(&self, i: usize) -> bool {
        let owner = self.stripe_owner[i].load(Ordering::Acquire);
        owner != 0 && owner == thread_id()
    }

    /// Whether the calling thread holds any stripe for a group on known
    /// keys.
    fn any_owned_here(&self) -> bool {
        (0..STRIPES).any(|i| self.owned_here(i))
    }

    /// Whether the calling thread holds the lock of `key` for a group
    /// (of either kind).
    pub fn held_by_group_here_for(&self, key: &[u8]) -> bool {
        self.held_by_group_here() || self.owned_here(stripe(key))
    }

    /// Whether the calling thread holds everything for a group.
    #[inline]
    pub fn held_by_group_here(&self) -> bool {
        let owner = self.group_owner.load(Ordering::Acquire);
        owner != 0 && owner == thread_id()
    }
}

/// The stripe (below [`STRIPES`]) whose lock guards `key`.
pub fn stripe(key: &[u8]) -> usize {
    (crate::fnv::hash(key) % STRIPES as u64) as usize
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

    #[test]
    fn lock_all_excludes_keyed_and_keyless_holders() {
        let table = Arc::new(LockTable::default());
        let all_inside = Arc::new(AtomicUsize::new(0));
        let others_inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (table, all_inside, others_inside) =
                    (table.clone(), all_inside.clone(), others_inside.clone());
                std::thread::spawn(move || {
                    for i in 0..300usize {
                        if (i + t) % 10 == 0 {
                            let _held = table.lock_all();
                            all_inside.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(others_inside.load(Ordering::SeqCst), 0);
                            all_inside.fetch_sub(1, Ordering::SeqCst);
                            continue;
                        }
                        let key = format!("k{t}:{i}").into_bytes();
                        let _held = match i % 3 {
                            0 => table.lock_key(&key),
                            1 => table.lock_keys(&[]),
                            _ => table.lock_keys(&[&key, b"shared"]),
                        };
                        others_inside.fetch_add(1, Ordering::SeqCst);
                        assert_eq!(all_inside.load(Ordering::SeqCst), 0);
                        others_inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}
