//! [`Group`]: the writes of several commands held back so that they
//! commit as one [`Batch`] (one atomic [`KvStore::write`]), readable
//! meanwhile by the group's own later commands.
//!
//! The group keeps, per column family, the last write of each key (a
//! value, or deleted) in the family's order, and the ranges deleted. A
//! range delete drops the group's earlier writes of the keys it holds; a
//! later put or delete of a key inside it is a write of that key. So a
//! key's state in the group is: its own entry if any, else deleted if a
//! range holds it, else whatever the store holds ([`Group::get`]); a scan
//! merges the store's pairs with the group's ([`GroupIter`]).
//!
//! [`Group::into_batch`] writes the ranges first, then each key's last
//! write: the store ends as it would after every batch in turn, with
//! one write per key (100 `INCR`s of one counter commit one put).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use redcodec_codec::{KeyRange, Place};

use crate::batch::Op;
use crate::group_iter::{GroupIter, Overlay};
use crate::kv::{KvIter, KvStore, OrdKey, Order};
use crate::Batch;

/// Writes held back, readable before they are committed.
#[derive(Default)]
pub struct Group {
    families: FxHashMap<Place, Family>,
    /// The places in the order first written (the batch keeps it).
    places: Vec<Place>,
    /// Whether some batch added (one command's) touched two or more
    /// instances.
    spanned_instances: bool,
    /// Per place, the last record the store was read for and did not
    /// hold, of a key the group holds the lock of ([`Group::note_absent`]).
    absent: Vec<(Place, Vec<u8>)>,
}

/// The held-back writes of one column family.
struct Family {
    order: Order,
    /// Each key's last write: `Some(value)` put, `None` deleted.
    keys: BTreeMap<OrdKey, Option<Vec<u8>>>,
    /// Ranges deleted, `[lower, upper)`, in the order deleted.
    ranges: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Family {
    fn new(order: Order) -> Family {
        Family {
            order,
            keys: BTreeMap::new(),
            ranges: Vec::new(),
        }
    }

    fn ord(&self, key: Vec<u8>) -> OrdKey {
        OrdKey {
            key,
            order: self.order,
        }
    }

    /// Records the last write of `key`. A key its family's comparator
    /// takes for one already written but spelt otherwise (Ardb's list
    /// index -1 and -1.0) replaces it, spelling included: the store keeps
    /// the newest write's bytes for what it holds as one key.
    fn write(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        use std::ops::Bound::Included;
        let key = self.ord(key);
        let spelt_otherwise = match self.keys.range_mut((Included(&key), Included(&key))).next() {
            Some((held, slot)) if held.key == key.key => {
                *slot = value;
                return;
            }
            Some(_) => true,
            None => false,
        };
        if spelt_otherwise {
            self.keys.remove(&key);
        }
        self.keys.insert(key, value);
    }

    /// Whether a deleted range holds `key`.
    fn range_holds(&self, key: &[u8]) -> bool {
        use std::cmp::Ordering::{Greater, Less};
        let order = self.order;
        self.ranges
            .iter()
            .any(|(a, b)| order(a, key) != Greater && order(key, b) == Less)
    }
}

impl Group {
    /// An empty group.
    pub fn new() -> Group {
        Group::default()
    }

    /// Whether the group puts a record in `range` (its deletions of the
    /// store's records there are not looked at).
    pub fn puts_in(&self, range: &KeyRange) -> bool {
        self.families.get(&range.place).is_some_and(|family| {
            let (lo, hi) = (
                family.ord(range.lower.clone()),
                family.ord(range.upper.clone()),
            );
            lo < hi && family.keys.range(lo..hi).any(|(_, value)| value.is_some())
        })
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.families.is_empty()
    }

    /// Adds the writes of `batch` (one command's), after every write held
    /// so far; `store` gives each family's order.
    pub fn add(&mut self, batch: Batch, store: &impl KvStore) {
        let mut instances = batch.pending.iter().map(|(place, _)| place.instance);
        if let Some(first) = instances.next() {
            self.spanned_instances |= instances.any(|i| i != first);
        }
        for (place, op) in batch.pending {
            let family = self.families.entry(place).or_insert_with(|| {
                self.places.push(place);
                Family::new(store.order(place))
            });
            match op {
                Op::Put(key, value) => family.write(key, Some(value)),
                Op::Delete(key) => family.write(key, None),
                Op::DeleteRange(lower, upper) => {
                    let (lo, hi) = (family.ord(lower), family.ord(upper));
                    if lo < hi {
                        let doomed: Vec<OrdKey> = family
                            .keys
                            .range(lo.clone()..hi.clone())
                            .map(|(k, _)| k.clone())
                            .collect();
                        for key in doomed {
                            family.keys.remove(&key);
                        }
                    }
                    // Kept even when empty: the store sees the same range.
                    family.ranges.push((lo.key, hi.key));
                }
            }
        }
    }

    /// What the group says about record `key` of `place`:
    /// `Some(Some(value))` put, `Some(None)` deleted (by key or by a
    /// range) or noted absent from the store ([`Group::note_absent`]), `None`
    /// not written (the store decides).
    pub fn get(&self, place: Place, key: &[u8]) -> Option<Option<&[u8]>> {
        if let Some(family) = self.families.get(&place) {
            match family.keys.get(&family.ord(key.to_vec())) {
                Some(write) => return Some(write.as_deref()),
                None if family.range_holds(key) => return Some(None),
                None => {}
            }
        }
        self.absent
            .iter()
            .any(|(p, k)| *p == place && k == key)
            .then_some(None)
    }

    /// Notes that the store holds no record `key` at `place`, read for a
    /// key whose lock the group holds: no other writer can store it
    /// before the group ends (and the group's own writes are read
    /// first), so [`Group::get`] answers for it without the store. One
    /// record per place is kept, the last: a group of commands on one key
    /// (a pipeline's `HSET`s of one hash on a store that reads the key's
    /// metadata in every type's place) reads the store for it once.
    pub fn note_absent(&mut self, place: Place, key: &[u8]) {
        match self.absent.iter_mut().find(|(p, _)| *p == place) {
            Some((_, k)) => {
                k.clear();
                k.extend_from_slice(key);
            }
            None => self.absent.push((place, key.to_vec())),
        }
    }

    /// Wraps `base`, an iterator of the store over `range` made with the
    /// same `from` and `reverse`, so that it reads the store as if the
    /// group were committed. The group's writes in the range are copied:
    /// the iterator borrows nothing of the group.
    pub fn scan<I: KvIter>(
        &self,
        base: I,
        range: &KeyRange,
        from: Option<&[u8]>,
        reverse: bool,
    ) -> GroupIter<I> {
        let overlay = self.families.get(&range.place).map(|family| {
            let (lo, hi) = (
                family.ord(range.lower.clone()),
                family.ord(range.upper.clone()),
            );
            let keys = if lo < hi {
                family
                    .keys
                    .range(lo..hi)
                    .map(|(k, v)| (k.key.clone(), v.clone()))
                    .collect()
            } else {
                Vec::new()
            };
            Overlay {
                keys,
                ranges: family.ranges.clone(),
                order: family.order,
            }
        });
        GroupIter::new(base, overlay, from, reverse)
    }

    /// Whether every batch added so far (each one command's writes) lay
    /// in one instance, whatever instances the group as a whole touches.
    pub fn each_batch_in_one_instance(&self) -> bool {
        !self.spanned_instances
    }

    /// The one batch that leaves the store as the group's writes in turn
    /// would: per family, the deleted ranges, then each key's last write.
    pub fn into_batch(mut self) -> Batch {
        let mut batch = Batch::default();
        for place in self.places {
            let Some(family) = self.families.remove(&place) else {
                continue;
            };
            for (lower, upper) in family.ranges {
                batch.pending.push((place, Op::DeleteRange(lower, upper)));
            }
            for (key, write) in family.keys {
                let op = match write {
                    Some(value) => Op::Put(key.key, value),
                    None => Op::Delete(key.key),
                };
                batch.pending.push((place, op));
            }
        }
        batch
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
