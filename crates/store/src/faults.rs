//! [`FaultyStore`]: a [`KvStore`] that fails on demand, for tests of what
//! a client sees when storage fails (the reply, and that nothing of the
//! command was written).
//!
//! It wraps any store and counts every write batch and every read (point
//! reads, multi-reads, scans). Armed with [`FaultyStore::fail_write`], the
//! `n`th write from then on fails with a [`StoreError`] and writes nothing;
//! with [`FaultyStore::fail_reads`], every read fails until disarmed (a
//! scan's iterator fails on its first step).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use redcodec_codec::{KeyRange, Place, Record};

use crate::kv::{KvIter, KvStore, Order};
use crate::{Batch, Pair, StoreError};

/// The text of an injected write failure (after `storage error: `).
pub const INJECTED_WRITE: &str = "injected write failure";
/// The text of an injected read failure (after `storage error: `).
pub const INJECTED_READ: &str = "injected read failure";

fn injected(text: &str) -> StoreError {
    StoreError::Io(std::io::Error::other(text))
}

/// A store that fails the writes and reads it is told to.
pub struct FaultyStore<S: KvStore> {
    inner: S,
    writes: AtomicU64,
    /// The write count at which a write fails (0: none).
    fail_at: AtomicU64,
    fail_reads: AtomicBool,
}

impl<S: KvStore> FaultyStore<S> {
    /// Wraps `inner`, failing nothing yet.
    pub fn new(inner: S) -> FaultyStore<S> {
        FaultyStore {
            inner,
            writes: AtomicU64::new(0),
            fail_at: AtomicU64::new(0),
            fail_reads: AtomicBool::new(false),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// How many writes were asked of the store (failed ones included).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Makes the `n`th write from now fail (`n` ≥ 1), once; `0` disarms.
    pub fn fail_write(&self, n: u64) {
        let at = if n == 0 { 0 } else { self.writes() + n };
        self.fail_at.store(at, Ordering::SeqCst);
    }

    /// Makes every read fail (`true`) or succeed again (`false`).
    pub fn fail_reads(&self, fail: bool) {
        self.fail_reads.store(fail, Ordering::SeqCst);
    }

    fn read_fault(&self) -> Result<(), StoreError> {
        if self.fail_reads.load(Ordering::SeqCst) {
            Err(injected(INJECTED_READ))
        } else {
            Ok(())
        }
    }
}

/// An iterator of a [`FaultyStore`]: the inner one, or a failure.
pub struct FaultyIter<I> {
    inner: I,
    failed: bool,
}

impl<I: KvIter> KvIter for FaultyIter<I> {
    fn seek(&mut self, key: &[u8]) {
        self.inner.seek(key);
    }

    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        if self.failed {
            return Err(injected(INJECTED_READ));
        }
        self.inner.next()
    }
}

impl<S: KvStore> KvStore for FaultyStore<S> {
    type Iter<'a> = FaultyIter<S::Iter<'a>>;

    fn order(&self, place: Place) -> Order {
        self.inner.order(place)
    }

    fn get_with<T>(
        &self,
        place: Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError> {
        self.read_fault()?;
        self.inner.get_with(place, key, read)
    }

    fn get_many(&self, records: &[Record]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.read_fault()?;
        self.inner.get_many(records)
    }

    fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> Self::Iter<'_> {
        FaultyIter {
            inner: self.inner.scan(range, from, reverse),
            failed: self.fail_reads.load(Ordering::SeqCst),
        }
    }

    fn scan_all(&self, place: Place) -> Self::Iter<'_> {
        FaultyIter {
            inner: self.inner.scan_all(place),
            failed: self.fail_reads.load(Ordering::SeqCst),
        }
    }

    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if self
            .fail_at
            .compare_exchange(n, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Err(injected(INJECTED_WRITE));
        }
        self.inner.write(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemStore;
    use redcodec_codec::{CfSpec, GcRule, InstanceSpec, Layout};

    fn store() -> FaultyStore<MemStore> {
        let layout = Layout {
            instances: vec![InstanceSpec {
                dir: "db",
                column_families: vec![CfSpec {
                    name: "default",
                    comparator: None,
                    gc: GcRule::KeepAll,
                    merge: None,
                    created_on_first_write: false,
                }],
                refused: &[],
                other_families: None,
            }],
        };
        FaultyStore::new(MemStore::new(&layout))
    }

    fn put(s: &FaultyStore<MemStore>, key: &[u8]) -> Result<(), StoreError> {
        let mut b = Batch::default();
        b.put(Place::new(0, 0), key.to_vec(), b"v".to_vec());
        s.write(b)
    }

    #[test]
    fn the_nth_write_fails_once_and_writes_nothing() {
        let s = store();
        s.fail_write(2);
        put(&s, b"a").unwrap();
        let err = put(&s, b"b").unwrap_err();
        assert_eq!(err.to_string(), "storage error: injected write failure");
        put(&s, b"c").unwrap();
        let keys: Vec<Vec<u8>> = s.inner().pairs().into_iter().map(|(_, (k, _))| k).collect();
        assert_eq!(keys, [b"a".to_vec(), b"c".to_vec()]);
        assert_eq!(s.writes(), 3);
    }

    #[test]
    fn reads_fail_while_armed() {
        let s = store();
        put(&s, b"a").unwrap();
        s.fail_reads(true);
        assert!(s.get(Place::new(0, 0), b"a").is_err());
        let range = KeyRange {
            place: Place::new(0, 0),
            lower: Vec::new(),
            upper: vec![0xff],
        };
        assert!(s.scan(&range, None, false).next().is_err());
        s.fail_reads(false);
        assert_eq!(s.get(Place::new(0, 0), b"a").unwrap(), Some(b"v".to_vec()));
        assert!(s.scan(&range, None, false).next().unwrap().is_some());
    }
}
