//! Per-key locks: commands on the same key serialize; commands on different
//! keys run in parallel. Keys hash onto a fixed set of stripes, and a
//! command locks its stripes in ascending order, so two multi-key commands
//! cannot deadlock.
//!
//! Every command shares the keyspace lock: a keyed command beside its
//! stripes, a keyless one (KEYS, SCAN, DBSIZE) alone. A keyspace-wide
//! command (FLUSHALL) and a group holding everything
//! ([`LockTable::hold_for_group`]: a transaction, a script) take it
//! exclusively, and so exclude every other command without touching a
//! stripe. The stripes can therefore be many (4,096): a pipelined group of
//! 16 keys from each of two threads met on one of 64 stripes nearly every
//! time, and one thread's SETs waited for the other's commit; with 4,096
//! they meet on about one group in sixteen (docs/src/performance.md).
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
//! A group on known keys ([`crate::Engine::atomically_on`]) shares the
//! keyspace and holds only the stripes of its keys
//! ([`LockTable::hold_keys_for_group`]), taken in the same ascending
//! order, each marked with its thread: that thread's requests for a
//! marked stripe are granted at once, other threads wait for those
//! stripes only. The group's commands must lock only keys it declared (a
//! stripe it does not hold is taken as usual, which could deadlock
//! against another group: callers derive the declared keys from the
//! commands' key positions, as [`crate::Engine::execute`] does).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::{Mutex, MutexGuard};

/// Locks a stripe (a stripe guards no data: a panic while it was held
/// leaves nothing half-changed in it).
fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many stripes the keys hash onto.
pub const STRIPES: usize = 4096;

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

/// The keyspace shared by a command of the calling thread; released on
/// drop. The thread's first share of a table takes the lock; a share
/// inside it (a command of its group on known keys, a key locked by a
/// keyless command) takes nothing, as taking it again could wait behind
/// an exclusive taker that waits for the first.
pub struct Share<'a> {
    table: &'a LockTable,
    _guard: Option<RwLockReadGuard<'a, ()>>,
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        let me = self.table.address();
        SHARES.with(|shares| {
            let mut shares = shares.borrow_mut();
            if let Some(at) = shares.iter().rposition(|&(t, _)| t == me) {
                shares.remove(at);
            }
        });
    }
}

/// Held locks; released on drop.
pub enum Held<'a> {
    /// The stripe of the command's one key (released first), and the
    /// keyspace shared.
    One(
        #[allow(dead_code)] MutexGuard<'a, ()>,
        #[allow(dead_code)] Share<'a>,
    ),
    /// The stripes of the command's keys, and the keyspace shared.
    Keys(
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
        #[allow(dead_code)] Share<'a>,
    ),
    /// The keyspace, shared with other commands.
    Keyspace(#[allow(dead_code)] Share<'a>),
    /// The whole keyspace, exclusively.
    All(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
    /// Everything, for a group run by this thread: its mark is cleared
    /// (first) and then the keyspace released.
    Group(
        #[allow(dead_code)] GroupMark<'a>,
        #[allow(dead_code)] RwLockWriteGuard<'a, ()>,
    ),
    /// The stripes of a group on known keys, run by this thread: their
    /// marks are cleared (first), then the stripes and the shared
    /// keyspace are released.
    KeyGroup(
        #[allow(dead_code)] StripeMarks<'a>,
        #[allow(dead_code)] Vec<MutexGuard<'a, ()>>,
        #[allow(dead_code)] Share<'a>,
    ),
    /// Nothing: the thread's group holds everything already.
    InGroup,
}

thread_local! {
    /// The calling thread's shares of the keyspace: a lock table (by
    /// address) for each, and whether it is a group's on known keys.
    /// Nearly always empty or one entry.
    static SHARES: RefCell<Vec<(usize, bool)>> = const { RefCell::new(Vec::new()) };
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
        let share = self.share(false);
        Held::One(lock(&self.stripes[i]), share)
    }

    /// Locks the stripes of `keys`; with no keys, shares the keyspace lock.
    pub fn lock_keys<'a>(&'a self, keys: &[&[u8]]) -> Held<'a> {
        if self.held_by_group_here() {
            return Held::InGroup;
        }
        match keys {
            [] => Held::Keyspace(self.share(false)),
            [key] => self.lock_key(key),
            _ => {
                let mut idx: Vec<usize> = keys.iter().map(|k| stripe(k)).collect();
                idx.sort_unstable();
                idx.dedup();
                idx.retain(|&i| !self.owned_here(i));
                if idx.is_empty() {
                    return Held::InGroup;
                }
                let share = self.share(false);
                Held::Keys(
                    idx.into_iter().map(|i| lock(&self.stripes[i])).collect(),
                    share,
                )
            }
        }
    }

    /// Locks the whole keyspace.
    pub fn lock_all(&self) -> Held<'_> {
        if self.held_by_group_here() {
            return Held::InGroup;
        }
        Held::All(self.keyspace.write())
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
        self.group_owner.store(thread_id(), Ordering::Release);
        Some(Held::Group(GroupMark(&self.group_owner), keyspace))
    }

    /// Locks the stripes of `keys` for a group on known keys run by the
    /// calling thread, in ascending order, sharing the keyspace: until the
    /// result is dropped, that thread's requests for those stripes are
    /// granted at once ([`Held::InGroup`]), other threads' wait. `None`
    /// when the calling thread runs a group already (of either kind).
    pub fn hold_keys_for_group(&self, keys: &[&[u8]]) -> Option<Held<'_>> {
        if self.held_by_group_here() || self.key_group_here() {
            return None;
        }
        let share = self.share(true);
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
        Some(Held::KeyGroup(marks, guards, share))
    }

    /// Shares the keyspace for the calling thread (for a group on known
    /// keys when `key_group`): takes the lock unless the thread shares it
    /// already.
    fn share(&self, key_group: bool) -> Share<'_> {
        let me = self.address();
        let first = SHARES.with(|shares| {
            let mut shares = shares.borrow_mut();
            let first = !shares.iter().any(|&(t, _)| t == me);
            shares.push((me, key_group));
            first
        });
        Share {
            table: self,
            _guard: first.then(|| self.keyspace.read()),
        }
    }

    /// This table's identity in [`SHARES`].
    fn address(&self) -> usize {
        self as *const LockTable as usize
    }

    /// Whether the calling thread runs a group on known keys here.
    fn key_group_here(&self) -> bool {
        let me = self.address();
        SHARES.with(|shares| shares.borrow().iter().any(|&(t, group)| t == me && group))
    }

    /// Whether the calling thread holds stripe `i` for a group on known
    /// keys.
    #[inline]
    fn owned_here(&self, i: usize) -> bool {
        let owner = self.stripe_owner[i].load(Ordering::Acquire);
        owner != 0 && owner == thread_id()
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

    #[test]
    fn a_group_holding_everything_excludes_commands_without_taking_stripes() {
        let table = LockTable::default();
        let group = table.hold_for_group().unwrap();
        // Its own thread's requests are granted at once.
        assert!(matches!(table.lock_key(b"k"), Held::InGroup));
        assert!(matches!(table.lock_all(), Held::InGroup));
        // Every stripe stays free; another thread's command waits on the
        // keyspace instead.
        assert!(table.stripes.iter().all(|s| s.try_lock().is_ok()));
        let released = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let (asking, asked) = std::sync::mpsc::channel();
            let (table, released) = (&table, &released);
            let other = scope.spawn(move || {
                asking.send(()).unwrap();
                let _held = table.lock_key(b"k");
                // Granted only once the group has let go.
                (released.load(Ordering::SeqCst), table.held_by_group_here())
            });
            // The other thread cannot share the keyspace while the group
            // holds it.
            assert!(table.keyspace.try_read().is_none());
            asked.recv().unwrap();
            released.store(1, Ordering::SeqCst);
            drop(group);
            assert_eq!(other.join().unwrap(), (1, false));
        });
    }

    #[test]
    fn a_share_inside_a_share_of_the_same_thread_takes_no_lock() {
        let table = LockTable::default();
        let keyless = table.lock_keys(&[]);
        match table.lock_key(b"k") {
            Held::One(_, share) => assert!(share._guard.is_none()),
            _ => panic!("a keyed lock outside a group"),
        }
        let Held::Keyspace(share) = &keyless else {
            panic!("a keyless lock shares the keyspace");
        };
        assert!(share._guard.is_some());
        drop(keyless);
        // Once the first share is gone, the next one takes the lock again.
        match table.lock_keys(&[b"a", b"b"]) {
            Held::Keys(_, share) => assert!(share._guard.is_some()),
            _ => panic!("keyed locks outside a group"),
        }
        assert!(table.keyspace.try_write().is_some());
    }

    #[test]
    fn a_key_locked_inside_a_keyless_command_does_not_wait_for_an_exclusive_taker() {
        let table = LockTable::default();
        let keyless = table.lock_keys(&[]);
        std::thread::scope(|scope| {
            let flush = scope.spawn(|| drop(table.lock_all()));
            // Until the other thread waits for the keyspace exclusively, a
            // new share can still be taken; once it waits, none can.
            while table.keyspace.try_read().is_some() {
                std::thread::yield_now();
            }
            // Taking the keyspace again here would wait for the taker,
            // which waits for this thread's first share: a deadlock.
            drop(table.lock_key(b"k"));
            drop(table.lock_keys(&[b"a", b"b"]));
            drop(keyless);
            flush.join().unwrap();
        });
    }

    #[test]
    fn a_group_on_known_keys_shares_the_keyspace_once_and_leaves_other_stripes_free() {
        let table = LockTable::default();
        let group = table.hold_keys_for_group(&[b"a", b"b"]).unwrap();
        assert!(
            table.hold_keys_for_group(&[b"c"]).is_none(),
            "a group inside a group"
        );
        assert!(matches!(table.lock_key(b"a"), Held::InGroup));
        let other = (0..)
            .map(|i| format!("other{i}"))
            .find(|k| ![stripe(b"a"), stripe(b"b")].contains(&stripe(k.as_bytes())))
            .unwrap();
        match table.lock_key(other.as_bytes()) {
            Held::One(_, share) => assert!(share._guard.is_none()),
            _ => panic!("a stripe outside the group is taken as usual"),
        }
        std::thread::scope(|scope| {
            // Another thread locks a key outside the group at once.
            scope
                .spawn(|| drop(table.lock_key(other.as_bytes())))
                .join()
                .unwrap();
        });
        assert!(table.keyspace.try_write().is_none());
        drop(group);
        assert!(table.keyspace.try_write().is_some());
        assert!(table.hold_keys_for_group(&[b"c"]).is_some());
    }
}
