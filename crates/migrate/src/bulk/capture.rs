//! The bulk path's destination store: a [`KvStore`] that reads as empty
//! and keeps every write it is given, numbered, in memory until the sort
//! buffer is spilled ([`super::runs`]). The destination's own engine code
//! (an engine over this store) makes the records, so they are the bytes
//! the write path would write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use redcodec_codec::{KeyRange, Layout, Place};
use redcodec_engine::store::bulk_load::{batch_writes, Write};
use redcodec_engine::store::{Batch, KvIter, KvStore, Order, Pair, StoreError};

/// One captured write: a put (`Some`) or a delete (`None`), numbered in
/// the order it was made (the last write of a key wins).
pub(crate) struct Entry {
    pub key: Vec<u8>,
    pub seq: u64,
    pub value: Option<Vec<u8>>,
}

impl Entry {
    /// The memory an entry is counted for in the sort buffer.
    pub(crate) fn weight(&self) -> usize {
        self.key.len() + self.value.as_ref().map_or(0, Vec::len) + ENTRY_OVERHEAD
    }
}

/// Bytes counted per entry besides its key and value (the vectors' own
/// headers and the allocator's).
const ENTRY_OVERHEAD: usize = 64;

/// What the capture holds between spills.
#[derive(Default)]
struct Held {
    /// Writes are kept only once armed (the format's bootstrap records,
    /// written when the engine is made, are the destination's already).
    armed: bool,
    next_seq: u64,
    entries: HashMap<Place, Vec<Entry>>,
    bytes: usize,
    /// The number of the open key's first write: its records are the
    /// entries numbered from it (each family's entries are in number
    /// order).
    open_seq: u64,
    /// The records of the open key, by where their last write is. Made
    /// on the first read of the key (most formats' code never reads back
    /// what it writes; nemo's linked lists read their tail node when they
    /// append across batches), or when a spill takes the key's records
    /// away; kept up to date by later writes until the key closes.
    open: Option<FxHashMap<(Place, Vec<u8>), Latest>>,
}

impl Held {
    /// The index of the open key's records, made from the held entries
    /// if there is none yet.
    fn open_index(&mut self) -> &mut FxHashMap<(Place, Vec<u8>), Latest> {
        let (entries, open_seq) = (&self.entries, self.open_seq);
        self.open.get_or_insert_with(|| {
            let mut index = FxHashMap::default();
            for (&place, family) in entries {
                let from = family.partition_point(|e| e.seq < open_seq);
                for (i, e) in family.iter().enumerate().skip(from) {
                    index.insert((place, e.key.clone()), Latest::Held(i));
                }
            }
            index
        })
    }

    /// Whether the open key has records among the held entries.
    fn open_key_held(&self) -> bool {
        self.entries
            .values()
            .any(|family| family.last().is_some_and(|e| e.seq >= self.open_seq))
    }
}

/// Where the last write of a record of the open key is.
enum Latest {
    /// Held: the index of its entry in its family's list.
    Held(usize),
    /// Spilled while the key was open: a copy of it (`None`: deleted).
    Spilled(Option<Vec<u8>>),
}

/// A store that reads as empty and captures writes.
pub(crate) struct Capture {
    /// Each family's comparator order (the destination layout's).
    orders: Arc<HashMap<Place, Order>>,
    held: Mutex<Held>,
}

impl Capture {
    /// A capture for `layout`'s families.
    pub(crate) fn new(layout: &Layout) -> Capture {
        let orders = layout
            .places()
            .map(|place| {
                let order = layout
                    .cf(place)
                    .comparator
                    .map_or(<[u8]>::cmp as Order, |c| c.compare);
                (place, order)
            })
            .collect();
        Capture {
            orders: Arc::new(orders),
            held: Mutex::new(Held::default()),
        }
    }

    /// Each family's comparator order, for sorting what was captured.
    pub(crate) fn orders(&self) -> Arc<HashMap<Place, Order>> {
        Arc::clone(&self.orders)
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts keeping writes, numbered from `next_seq`.
    pub(crate) fn arm(&self, next_seq: u64) {
        let mut held = self.held();
        held.armed = true;
        held.next_seq = next_seq;
    }

    /// The key being written is complete: its records are no longer read
    /// back.
    pub(crate) fn close_key(&self) {
        let mut held = self.held();
        held.open_seq = held.next_seq;
        held.open = None;
    }

    /// The number the next write gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.held().next_seq
    }

    /// The memory the held writes are counted for.
    pub(crate) fn bytes(&self) -> usize {
        self.held().bytes
    }

    /// Hands over every held write, by family.
    pub(crate) fn take(&self) -> HashMap<Place, Vec<Entry>> {
        let mut held = self.held();
        let held = &mut *held;
        held.bytes = 0;
        if held.open_key_held() {
            held.open_index();
        }
        let entries = std::mem::take(&mut held.entries);
        // The open key's records leave with the entries: keep copies.
        for ((place, _), latest) in held.open.iter_mut().flatten() {
            if let Latest::Held(index) = *latest {
                let entry = entries.get(place).and_then(|family| family.get(index));
                *latest = Latest::Spilled(entry.and_then(|e| e.value.clone()));
            }
        }
        entries
    }
}

/// The iterator of a store that holds nothing.
pub(crate) struct Nothing;

impl KvIter for Nothing {
    fn seek(&mut self, _key: &[u8]) {}

    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        Ok(None)
    }
}

impl KvStore for Capture {
    type Iter<'a> = Nothing;

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
        let mut held = self.held();
        held.open_index();
        let latest = held
            .open
            .as_ref()
            .and_then(|o| o.get(&(place, key.to_vec())));
        let value = match latest {
            Some(Latest::Held(index)) => held
                .entries
                .get(&place)
                .and_then(|family| family.get(*index))
                .and_then(|entry| entry.value.as_deref()),
            Some(Latest::Spilled(value)) => value.as_deref(),
            None => None,
        };
        Ok(value.map(read))
    }

    fn scan(&self, _range: &KeyRange, _from: Option<&[u8]>, _reverse: bool) -> Nothing {
        Nothing
    }

    fn scan_all(&self, _place: Place) -> Nothing {
        Nothing
    }

    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let mut held = self.held();
        let held = &mut *held;
        if !held.armed {
            return Ok(());
        }
        for (place, write) in batch_writes(batch) {
            let (key, value) = match write {
                Write::Put(key, value) => (key, Some(value)),
                Write::Delete(key) => (key, None),
                Write::DeleteRange(..) => return Err(StoreError::Io(std::io::Error::other(
                    "the bulk path met a range deletion, which an empty destination never needs",
                ))),
            };
            let entry = Entry {
                key,
                seq: held.next_seq,
                value,
            };
            held.next_seq += 1;
            held.bytes += entry.weight();
            let family = held.entries.entry(place).or_default();
            if let Some(open) = &mut held.open {
                open.insert((place, entry.key.clone()), Latest::Held(family.len()));
            }
            family.push(entry);
        }
        Ok(())
    }
}
