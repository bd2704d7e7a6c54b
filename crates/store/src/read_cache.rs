//! [`ReadCache`]: the records a store's point reads found (or found
//! absent), kept in memory in front of RocksDB.
//!
//! A point read that RocksDB answers from its memtable walks a skip list
//! of every record written since the last flush: a cache miss per level,
//! about 2 µs once it holds a few hundred thousand records. That walk was
//! 43 % of `serve`'s CPU under pipelined GETs of 100,000 keys, and a
//! quarter of a script doing a GET and a SET. A hit here is one hash
//! lookup.
//!
//! Off unless asked for (`StoreOptions::read_cache_bytes`, `serve
//! --read-cache-mb`), as Kvrocks' `rocksdb.row_cache_size` is. RocksDB
//! walks the skip list once per record a command touches, whoever goes
//! first: a write of a record the cache just served walks it cold instead
//! (a script's GET then SET of one key ran no faster), and where the
//! records read outnumber what the cache holds, every read pays a miss's
//! bookkeeping (blackwidow's SET reads four absent records: a quarter
//! slower over 100,000 keys in 64 MiB). It pays where reads repeat over
//! a set of records that fits it: pipelined GETs of 100,000 keys, 17–43 %
//! more requests/s (docs/src/performance.md).
//!
//! # Always what the store holds
//! - A read that misses fills the entry with what RocksDB returned, unless
//!   a write reached the entry's shard in between ([`Ticket`]: the shard's
//!   generation, taken at the miss, checked at the fill under the same
//!   lock). A read that raced a write therefore never leaves the older
//!   value behind.
//! - A write updates the entries it finds, after RocksDB took it
//!   ([`ReadCache::wrote`]); it adds none (a write-heavy load fills no
//!   memory with records nobody reads). The store's callers serialize the
//!   writes of one record — the engine writes a key's records only under
//!   that key's lock — so the updates of one entry come in the order of
//!   the writes.
//! - Whatever changes records without naming them one by one — a range
//!   deletion, an ingested file, an unlogged load, the completion of an
//!   interrupted multi-instance write, a write that failed part way —
//!   empties the cache ([`ReadCache::clear`]).
//!
//! Compaction filters drop only records no read can see (older versions,
//! expired keys' records, whose metadata says so): an entry of such a
//! record answers as the store did.

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::Arc;

use lru::LruCache;
use parking_lot::Mutex;
use redcodec_codec::Place;
use rustc_hash::FxBuildHasher;

/// Shards: independent locks, so that the threads of a server rarely meet.
const SHARDS: usize = 64;

/// What an entry costs beyond its key and value bytes: the map's slot and
/// list links, the two allocations' headers, the value's reference count.
const ENTRY_OVERHEAD: usize = 96;

/// A record as the cache knows it: present with its value, or absent.
type Found = Option<Arc<[u8]>>;

/// The point reads of a store, cached; bounded in bytes.
pub struct ReadCache {
    shards: Box<[Mutex<Shard>]>,
}

struct Shard {
    /// Bumped by every write and clear that reaches the shard.
    generation: u64,
    entries: LruCache<Box<[u8]>, Found, FxBuildHasher>,
    bytes: usize,
    budget: usize,
}

/// What a lookup found.
pub enum Lookup {
    /// The record as the store holds it.
    Hit(Found),
    /// Not cached: read the store, then hand what it returned to
    /// [`ReadCache::fill`] with this ticket.
    Miss(Ticket),
}

/// A miss's shard and that shard's generation at the miss.
pub struct Ticket {
    shard: usize,
    generation: u64,
}

thread_local! {
    /// The entry key being looked up: place and record key in one buffer,
    /// reused from lookup to lookup.
    static PROBE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The entry key of `key` at `place`: the place's two indexes first.
fn entry_key(place: Place, key: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(key.len() + 4);
    out.extend_from_slice(&(place.instance as u16).to_le_bytes());
    out.extend_from_slice(&(place.cf as u16).to_le_bytes());
    out.extend_from_slice(key);
}

/// What an entry of a `key_len`-byte entry key holding `found` costs.
fn entry_cost(key_len: usize, found: &Found) -> usize {
    key_len + found.as_ref().map_or(0, |v| v.len()) + ENTRY_OVERHEAD
}

impl ReadCache {
    /// A cache of at most `budget` bytes (keys, values and their overhead);
    /// `None` for 0.
    pub fn new(budget: usize) -> Option<ReadCache> {
        if budget == 0 {
            return None;
        }
        let per_shard = (budget / SHARDS).max(1);
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    generation: 0,
                    entries: LruCache::unbounded_with_hasher(FxBuildHasher),
                    bytes: 0,
                    budget: per_shard,
                })
            })
            .collect();
        Some(ReadCache { shards })
    }

    fn shard_of(probe: &[u8]) -> usize {
        // The high bits: Fx mixes them best.
        (FxBuildHasher.hash_one(probe) >> 58) as usize % SHARDS
    }

    /// Looks the record `key` at `place` up.
    pub fn lookup(&self, place: Place, key: &[u8]) -> Lookup {
        PROBE.with_borrow_mut(|probe| {
            entry_key(place, key, probe);
            let shard = Self::shard_of(probe);
            let mut s = self.shards[shard].lock();
            match s.entries.get(probe.as_slice()) {
                Some(found) => Lookup::Hit(found.clone()),
                None => Lookup::Miss(Ticket {
                    shard,
                    generation: s.generation,
                }),
            }
        })
    }

    /// Keeps what the store returned for a miss (`value`, `None`: absent),
    /// unless a write reached the shard since the miss.
    pub fn fill(&self, ticket: Ticket, place: Place, key: &[u8], value: Option<&[u8]>) {
        let mut s = self.shards[ticket.shard].lock();
        if s.generation != ticket.generation {
            return;
        }
        let mut entry = Vec::new();
        entry_key(place, key, &mut entry);
        let found: Found = value.map(Arc::from);
        let entry_len = entry.len();
        s.bytes += entry_cost(entry_len, &found);
        if let Some(old) = s.entries.put(entry.into_boxed_slice(), found) {
            // Two reads missed the same record: the second fill replaced
            // the first's entry.
            s.bytes -= entry_cost(entry_len, &old);
        }
        s.evict();
    }

    /// RocksDB took a write of `key` at `place` (`value`, `None`: deleted):
    /// its entry, if cached, now says so.
    pub fn wrote(&self, place: Place, key: &[u8], value: Option<&[u8]>) {
        PROBE.with_borrow_mut(|probe| {
            entry_key(place, key, probe);
            let mut s = self.shards[Self::shard_of(probe)].lock();
            s.generation += 1;
            let Some(found) = s.entries.peek_mut(probe.as_slice()) else {
                return;
            };
            let before = found.as_ref().map_or(0, |v| v.len());
            match (found.as_mut().and_then(Arc::get_mut), value) {
                // A value of the same length (a counter, a fixed-size
                // field) overwrites the bytes held, if no reader holds them.
                (Some(held), Some(new)) if held.len() == new.len() => held.copy_from_slice(new),
                _ => *found = value.map(Arc::from),
            }
            let after = value.map_or(0, <[u8]>::len);
            s.bytes = s.bytes + after - before;
            s.evict();
        });
    }

    /// Forgets every entry: the store changed in ways no entry tracks.
    pub fn clear(&self) {
        for shard in &self.shards {
            let mut s = shard.lock();
            s.generation += 1;
            s.entries.clear();
            s.bytes = 0;
        }
    }

    /// Entries held, over every shard.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().entries.len()).sum()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held (keys, values and their overhead), over every shard.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().bytes).sum()
    }
}

impl Shard {
    /// Drops the least recently used entries until the shard fits its
    /// budget.
    fn evict(&mut self) {
        while self.bytes > self.budget {
            let Some((key, found)) = self.entries.pop_lru() else {
                self.bytes = 0;
                return;
            };
            self.bytes -= entry_cost(key.len(), &found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Place = Place::new(0, 1);

    fn hit(cache: &ReadCache, place: Place, key: &[u8]) -> Option<Option<Vec<u8>>> {
        match cache.lookup(place, key) {
            Lookup::Hit(found) => Some(found.map(|v| v.to_vec())),
            Lookup::Miss(_) => None,
        }
    }

    fn miss(cache: &ReadCache, place: Place, key: &[u8]) -> Ticket {
        match cache.lookup(place, key) {
            Lookup::Miss(t) => t,
            Lookup::Hit(_) => panic!("{key:?} was cached"),
        }
    }

    #[test]
    fn a_miss_filled_is_a_hit_present_or_absent_and_places_differ() {
        let cache = ReadCache::new(1 << 20).unwrap();
        let t = miss(&cache, P, b"k");
        cache.fill(t, P, b"k", Some(b"v"));
        assert_eq!(hit(&cache, P, b"k"), Some(Some(b"v".to_vec())));
        let t = miss(&cache, P, b"gone");
        cache.fill(t, P, b"gone", None);
        assert_eq!(hit(&cache, P, b"gone"), Some(None));
        // The same bytes in another family or instance are another record.
        assert_eq!(hit(&cache, Place::new(0, 2), b"k"), None);
        assert_eq!(hit(&cache, Place::new(1, 1), b"k"), None);
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_fill_after_a_write_to_its_shard_is_dropped() {
        let cache = ReadCache::new(1 << 20).unwrap();
        // The read missed and went to the store (old value); a write then
        // reached the store and the cache before the read's fill.
        let t = miss(&cache, P, b"k");
        cache.wrote(P, b"k", Some(b"new"));
        cache.fill(t, P, b"k", Some(b"old"));
        assert_eq!(hit(&cache, P, b"k"), None, "the older value was kept");
        // A clear in between drops the fill the same way.
        let t = miss(&cache, P, b"k");
        cache.clear();
        cache.fill(t, P, b"k", Some(b"old"));
        assert_eq!(hit(&cache, P, b"k"), None);
    }

    #[test]
    fn a_write_updates_a_cached_record_and_adds_none() {
        let cache = ReadCache::new(1 << 20).unwrap();
        cache.wrote(P, b"new", Some(b"v"));
        assert_eq!(hit(&cache, P, b"new"), None, "a write added an entry");
        let t = miss(&cache, P, b"k");
        cache.fill(t, P, b"k", None);
        cache.wrote(P, b"k", Some(b"v1"));
        assert_eq!(hit(&cache, P, b"k"), Some(Some(b"v1".to_vec())));
        cache.wrote(P, b"k", None);
        assert_eq!(hit(&cache, P, b"k"), Some(None));
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn the_cache_stays_within_its_budget_dropping_the_least_recent() {
        let budget = SHARDS * 4 * (ENTRY_OVERHEAD + 4 + 8 + 100);
        let cache = ReadCache::new(budget).unwrap();
        for i in 0..10_000u64 {
            let key = i.to_be_bytes();
            let t = miss(&cache, P, &key);
            cache.fill(t, P, &key, Some(&[7u8; 100]));
            // Reads keep the first key recent.
            let _ = cache.lookup(P, &0u64.to_be_bytes());
        }
        assert!(cache.bytes() <= budget, "{} > {budget}", cache.bytes());
        assert!(cache.len() <= SHARDS * 4);
        assert!(cache.len() >= SHARDS, "{} entries", cache.len());
        assert!(hit(&cache, P, &0u64.to_be_bytes()).is_some());
        // Growing values through writes stays within the budget too.
        for i in 0..10_000u64 {
            cache.wrote(P, &i.to_be_bytes(), Some(&[1u8; 400]));
        }
        assert!(cache.bytes() <= budget);
        let sum: usize = cache
            .shards
            .iter()
            .map(|s| {
                let s = s.lock();
                s.entries
                    .iter()
                    .map(|(k, f)| entry_cost(k.len(), f))
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(sum, cache.bytes(), "the byte count drifted");
    }

    #[test]
    fn no_budget_no_cache() {
        assert!(ReadCache::new(0).is_none());
    }
}
