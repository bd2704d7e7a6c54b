//! [`KvStore`]: the few operations the engine asks of storage — point
//! reads, several at once, a bounded scan of one column family in that
//! family's comparator order, and an atomic write batch — implemented by
//! the RocksDB [`Store`] and by [`MemStore`], an in-memory store for tests
//! (and the one place a later distributed backend plugs in).
//!
//! The engine is generic over `S: KvStore`, with `Store` as the default
//! type parameter everywhere (`Engine<C>` is `Engine<C, Store>`): every
//! call is monomorphic, no `dyn` on the hot path.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use parking_lot::RwLock;
use redcodec_codec::{KeyRange, Layout, Place, Record};

use crate::batch::Op;
use crate::{Batch, Pair, StoreError};
#[cfg(feature = "rocksdb")]
use crate::{Store, StoreIter};

/// The store the engine's type parameters default to: the RocksDB
/// [`Store`](crate::Store) with the `rocksdb` feature, else [`MemStore`].
#[cfg(feature = "rocksdb")]
pub type DefaultStore = Store;
/// The store the engine's type parameters default to: the RocksDB
/// `Store` with the `rocksdb` feature, else [`MemStore`].
#[cfg(not(feature = "rocksdb"))]
pub type DefaultStore = MemStore;

/// A key order: a column family's comparator.
pub type Order = fn(&[u8], &[u8]) -> Ordering;

/// Storage as the engine uses it.
pub trait KvStore: Send + Sync + 'static {
    /// A bounded iterator over one column family.
    type Iter<'a>: KvIter
    where
        Self: 'a;

    /// The order of the column family at `place` (its comparator, or
    /// bytewise order).
    fn order(&self, place: Place) -> Order;

    /// Reads one record and hands its bytes to `read`.
    fn get_with<T>(
        &self,
        place: Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError>;

    /// Reads one record.
    fn get(&self, place: Place, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_with(place, key, <[u8]>::to_vec)
    }

    /// Reads several records at once.
    fn get_many(&self, records: &[Record]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        records.iter().map(|r| self.get(r.place, &r.key)).collect()
    }

    /// Iterates `range` in the family's order, forward from its lower
    /// bound (or from `from`), or backward from its upper end (or from
    /// `from`, inclusive).
    fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> Self::Iter<'_>;

    /// Whether `range` may hold a record: `false` only when it holds
    /// none. A store may answer `true` for a range it would take long to
    /// tell empty (RocksDB: one that holds many deleted records first).
    fn may_hold(&self, range: &KeyRange) -> Result<bool, StoreError> {
        Ok(self.scan(range, None, false).next()?.is_some())
    }

    /// Iterates every record of the family at `place` forward, in its
    /// order, unbounded: for a walk that reads many keys' ranges in order
    /// and moves one iterator from range to range by [`KvIter::seek`]
    /// (making a RocksDB iterator costs more than seeking one).
    fn scan_all(&self, place: Place) -> Self::Iter<'_>;

    /// Applies `batch` atomically.
    fn write(&self, batch: Batch) -> Result<(), StoreError>;

    /// Applies `batch` atomically within each instance it touches, not
    /// necessarily across them (a store of one instance: [`KvStore::write`]):
    /// for writes whose parts in different instances need not survive a
    /// crash together — a load that is undone whole after a crash, a
    /// pipeline's group of commands that each wrote one instance.
    fn write_per_instance(&self, batch: Batch) -> Result<(), StoreError> {
        self.write(batch)
    }

    /// Applies `batch` as [`KvStore::write_per_instance`] does, and may
    /// keep it out of any write-ahead log (the RocksDB store does): for a
    /// load into an emptied store whose marker undoes it whole after a
    /// crash, and which flushes the store before it removes the marker.
    /// It may return before the batch is applied (the RocksDB store
    /// applies it on a thread of its own): every later call of the store
    /// sees it applied, and a failure is reported by a later call.
    fn write_unlogged(&self, batch: Batch) -> Result<(), StoreError> {
        self.write_per_instance(batch)
    }
}

/// A bounded iterator of a [`KvStore`].
pub trait KvIter {
    /// Moves to `key`: the next pair is the first at or after it (at or
    /// before it, for a reverse iterator), within the range.
    fn seek(&mut self, key: &[u8]);

    /// The next pair, or `None` at the end of the range.
    fn next(&mut self) -> Result<Option<Pair>, StoreError>;
}

#[cfg(feature = "rocksdb")]
impl KvStore for Store {
    type Iter<'a> = StoreIter<'a>;

    #[inline]
    fn order(&self, place: Place) -> Order {
        Store::order(self, place)
    }

    #[inline]
    fn get_with<T>(
        &self,
        place: Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError> {
        Store::get_with(self, place, key, read)
    }

    #[inline]
    fn get_many(&self, records: &[Record]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        Store::get_many(self, records)
    }

    #[inline]
    fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> StoreIter<'_> {
        Store::scan(self, range, from, reverse)
    }

    fn may_hold(&self, range: &KeyRange) -> Result<bool, StoreError> {
        Store::may_hold(self, range)
    }

    fn scan_all(&self, place: Place) -> StoreIter<'_> {
        Store::scan_family(self, place)
    }

    #[inline]
    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        Store::write(self, batch)
    }

    fn write_per_instance(&self, batch: Batch) -> Result<(), StoreError> {
        Store::write_per_instance(self, batch)
    }

    fn write_unlogged(&self, batch: Batch) -> Result<(), StoreError> {
        Store::write_unlogged(self, batch)
    }
}

#[cfg(feature = "rocksdb")]
impl KvIter for StoreIter<'_> {
    #[inline]
    fn seek(&mut self, key: &[u8]) {
        StoreIter::seek(self, key);
    }

    #[inline]
    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        StoreIter::next(self)
    }
}

/// A key kept in a family's order.
#[derive(Clone)]
pub(crate) struct OrdKey {
    pub(crate) key: Vec<u8>,
    pub(crate) order: Order,
}

impl PartialEq for OrdKey {
    fn eq(&self, other: &Self) -> bool {
        (self.order)(&self.key, &other.key) == Ordering::Equal
    }
}

impl Eq for OrdKey {}

impl PartialOrd for OrdKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdKey {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.order)(&self.key, &other.key)
    }
}

/// An in-memory [`KvStore`]: one `BTreeMap` per column family of a layout,
/// ordered by the family's comparator. No compaction filters, no
/// persistence; a write batch is applied under one lock, so it is atomic.
pub struct MemStore {
    orders: HashMap<Place, Order>,
    families: RwLock<HashMap<Place, BTreeMap<OrdKey, Vec<u8>>>>,
}

impl MemStore {
    /// An empty store with every column family of `layout`.
    pub fn new(layout: &Layout) -> MemStore {
        let orders: HashMap<Place, Order> = layout
            .places()
            .map(|place| {
                let order = layout
                    .cf(place)
                    .comparator
                    .map_or(<[u8]>::cmp as Order, |c| c.compare);
                (place, order)
            })
            .collect();
        let families = orders.keys().map(|&p| (p, BTreeMap::new())).collect();
        MemStore {
            orders,
            families: RwLock::new(families),
        }
    }

    /// Every record, family by family in layout order, each in the
    /// family's order: a snapshot to compare whole stores with.
    pub fn pairs(&self) -> Vec<(Place, Pair)> {
        let families = self.families.read();
        let mut places: Vec<&Place> = families.keys().collect();
        places.sort_by_key(|p| (p.instance, p.cf));
        places
            .into_iter()
            .flat_map(|p| {
                families[p]
                    .iter()
                    .map(|(k, v)| (*p, (k.key.clone(), v.clone())))
            })
            .collect()
    }

    fn key(&self, place: Place, key: &[u8]) -> OrdKey {
        OrdKey {
            key: key.to_vec(),
            order: self.order(place),
        }
    }
}

impl KvStore for MemStore {
    type Iter<'a> = MemIter;

    fn order(&self, place: Place) -> Order {
        self.orders
            .get(&place)
            .copied()
            .unwrap_or(<[u8]>::cmp as Order)
    }

    fn get_with<T>(
        &self,
        place: Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError> {
        let families = self.families.read();
        Ok(families
            .get(&place)
            .and_then(|f| f.get(&self.key(place, key)))
            .map(|v| read(v)))
    }

    fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> MemIter {
        // A snapshot of the range, as a RocksDB iterator reads one.
        let order = self.order(range.place);
        let lower = self.key(range.place, &range.lower);
        let upper = self.key(range.place, &range.upper);
        let pairs: Vec<Pair> = match self.families.read().get(&range.place) {
            Some(f) if lower < upper => f
                .range(lower..upper)
                .map(|(k, v)| (k.key.clone(), v.clone()))
                .collect(),
            _ => Vec::new(),
        };
        let mut it = MemIter {
            pairs,
            order,
            reverse,
            next: 0,
        };
        match from {
            Some(key) => it.seek(key),
            None => it.next = if reverse { it.pairs.len() } else { 0 },
        }
        it
    }

    fn scan_all(&self, place: Place) -> MemIter {
        // A snapshot of the family, as a RocksDB iterator reads one.
        let pairs: Vec<Pair> = self.families.read().get(&place).map_or_else(Vec::new, |f| {
            f.iter().map(|(k, v)| (k.key.clone(), v.clone())).collect()
        });
        MemIter {
            pairs,
            order: self.order(place),
            reverse: false,
            next: 0,
        }
    }

    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let mut families = self.families.write();
        for (place, op) in batch.pending {
            let order = self.order(place);
            let family = families.entry(place).or_default();
            match op {
                Op::Put(key, value) => {
                    family.insert(OrdKey { key, order }, value);
                }
                Op::Delete(key) => {
                    family.remove(&OrdKey { key, order });
                }
                Op::DeleteRange(lower, upper) => {
                    let (lower, upper) =
                        (OrdKey { key: lower, order }, OrdKey { key: upper, order });
                    if lower < upper {
                        let doomed: Vec<OrdKey> =
                            family.range(lower..upper).map(|(k, _)| k.clone()).collect();
                        for key in doomed {
                            family.remove(&key);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// An iterator over a snapshot of one range of a [`MemStore`].
pub struct MemIter {
    pairs: Vec<Pair>,
    order: Order,
    reverse: bool,
    /// Forward: the index of the next pair. Reverse: one past it.
    next: usize,
}

impl KvIter for MemIter {
    fn seek(&mut self, key: &[u8]) {
        let order = self.order;
        self.next = if self.reverse {
            // Pairs at or before `key`.
            self.pairs
                .partition_point(|(k, _)| order(k, key) != Ordering::Greater)
        } else {
            self.pairs
                .partition_point(|(k, _)| order(k, key) == Ordering::Less)
        };
    }

    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        if self.reverse {
            if self.next == 0 {
                return Ok(None);
            }
            self.next -= 1;
            Ok(Some(self.pairs[self.next].clone()))
        } else {
            let pair = self.pairs.get(self.next).cloned();
            self.next += usize::from(pair.is_some());
            Ok(pair)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_codec::{CfSpec, ComparatorSpec, GcRule, InstanceSpec};

    /// Reversed bytewise order: a comparator that is not RocksDB's.
    fn reversed(a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }

    fn layout() -> Layout {
        let cf = |name, comparator| CfSpec {
            name,
            comparator,
            gc: GcRule::KeepAll,
            merge: None,
            created_on_first_write: false,
        };
        Layout {
            instances: vec![InstanceSpec {
                dir: "db",
                column_families: vec![
                    cf("default", None),
                    cf(
                        "reversed",
                        Some(ComparatorSpec {
                            name: "test.reversed",
                            compare: reversed,
                        }),
                    ),
                ],
                refused: &[],
                other_families: None,
            }],
        }
    }

    const BYTEWISE: Place = Place::new(0, 0);
    const REVERSED: Place = Place::new(0, 1);

    fn keys(it: &mut impl KvIter) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some((k, _)) = it.next().unwrap() {
            out.push(k);
        }
        out
    }

    fn range(place: Place, lower: &[u8], upper: &[u8]) -> KeyRange {
        KeyRange {
            place,
            lower: lower.to_vec(),
            upper: upper.to_vec(),
        }
    }

    fn filled() -> MemStore {
        let s = MemStore::new(&layout());
        let mut b = Batch::default();
        for k in [b"a", b"b", b"c", b"d"] {
            b.put(BYTEWISE, k.to_vec(), k.to_vec());
            b.put(REVERSED, k.to_vec(), k.to_vec());
        }
        s.write(b).unwrap();
        s
    }

    #[test]
    fn scans_follow_the_family_order() {
        let s = filled();
        let all = range(BYTEWISE, b"a", b"e");
        assert_eq!(
            keys(&mut s.scan(&all, None, false)),
            [b"a", b"b", b"c", b"d"]
        );
        assert_eq!(
            keys(&mut s.scan(&all, None, true)),
            [b"d", b"c", b"b", b"a"]
        );
        assert_eq!(keys(&mut s.scan(&all, Some(b"bb"), false)), [b"c", b"d"]);
        assert_eq!(
            keys(&mut s.scan(&all, Some(b"c"), true)),
            [b"c", b"b", b"a"]
        );
        let rev = range(REVERSED, b"d", b"a");
        assert_eq!(keys(&mut s.scan(&rev, None, false)), [b"d", b"c", b"b"]);
        let mut it = s.scan(&rev, None, false);
        it.seek(b"c");
        assert_eq!(keys(&mut it), [b"c", b"b"]);
    }

    #[test]
    fn batches_put_delete_and_delete_ranges() {
        let s = filled();
        assert_eq!(s.get(BYTEWISE, b"b").unwrap(), Some(b"b".to_vec()));
        let mut b = Batch::default();
        b.delete(BYTEWISE, b"a".to_vec());
        b.delete_range(&range(BYTEWISE, b"b", b"d"));
        b.delete_range(&range(REVERSED, b"d", b"b"));
        s.write(b).unwrap();
        let all = range(BYTEWISE, b"a", b"e");
        assert_eq!(keys(&mut s.scan(&all, None, false)), [b"d"]);
        let rev = range(REVERSED, b"z", b"");
        assert_eq!(keys(&mut s.scan(&rev, None, false)), [b"b", b"a"]);
        let records = [
            Record {
                place: BYTEWISE,
                key: b"d".to_vec(),
            },
            Record {
                place: BYTEWISE,
                key: b"a".to_vec(),
            },
        ];
        assert_eq!(s.get_many(&records).unwrap(), [Some(b"d".to_vec()), None]);
    }
}
