//! The RocksDB side: opens every instance and column family a layout names,
//! with its comparator and compaction filter, and offers reads, range scans
//! and per-instance write batches addressed by [`Place`].
//!
//! Two layout behaviours the codec declares are handled here:
//! - a family [`redcodec_codec::CfSpec::created_on_first_write`] is created by the first
//!   batch that puts a record into it; until then it reads as empty;
//! - families of an instance that the layout does not name are opened as
//!   [`redcodec_codec::InstanceSpec::other_families`] says (or the store is refused), never
//!   written, and listed by [`Store::dump`] after the layout's families.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use redcodec_codec::{Codec, KeyRange, Layout, MergeOperatorSpec, Place, Record};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor,
    DBRawIteratorWithThreadMode, MergeOperands, Options, ReadOptions, WriteBatch, WriteOptions,
};

use crate::batch::{Batch, Op, Pair, PairRef};
use crate::clock::Clock;
use crate::compat::Compat;
use crate::db::Db;
use crate::error::StoreError;
use crate::expired::ExpiredKeys;
use crate::expiry_hold::ExpiryHold;
use crate::family::{Families, Family};
use crate::gc::FilterFactory;
use crate::intent;
use crate::options::{OpenMode, StoreOptions};
use crate::read_cache::{Lookup, ReadCache};
use crate::write_behind::WriteBehind;

/// One open RocksDB instance.
struct Instance {
    db: Arc<Db>,
    dir: &'static str,
    cfs: Vec<&'static str>,
    /// The handles of `cfs`, by the same index.
    families: Families,
    /// The options of each layout family that did not exist at open and is
    /// created on its first write (by index in the layout). Declared after
    /// `db`: a family created from them uses the comparator and filter they
    /// own, so they must outlive the database.
    lazy: Mutex<Vec<Option<Options>>>,
    /// Families the layout does not name, in name order.
    others: Vec<String>,
}

/// Every instance of a layout, opened.
pub struct Store {
    /// The thread of unlogged writes ([`Store::write_unlogged`]); declared
    /// first, so it is done before the databases close.
    behind: WriteBehind,
    layout: Layout,
    instances: Vec<Instance>,
    root: PathBuf,
    /// Held by a write that spans several instances ([`intent`]).
    multi_instance: Mutex<()>,
    /// An intent record is left that a failed write could not complete:
    /// every read and write completes it first ([`Store::write`]).
    pending_intent: AtomicBool,
    /// How many writes have left an intent to complete ([`Store::completions_owed`]).
    intents_left: AtomicU64,
    /// Test hook: how many coming multi-instance writes fail after their
    /// first instance's batch ([`Store::fail_between_instances`]).
    fail_between: AtomicU64,
    expired: Arc<ExpiredKeys>,
    /// Background expiry held (a replica's store, [`Store::expiry_hold`]).
    expiry_hold: Arc<ExpiryHold>,
    /// The block cache every column family of every instance shares:
    /// bounded, whatever the store's size or its number of families.
    _block_cache: Cache,
    /// The records point reads found, in front of RocksDB (a writable
    /// store's, unless its options set none).
    read_cache: Option<ReadCache>,
    /// The options of every point read and write, made once: RocksDB's C API
    /// allocates a fresh set per call otherwise (about a tenth of a GET).
    calls: CallOptions,
    options: StoreOptions,
    /// A read-only store's own RocksDB files (secondary instances' LOGs);
    /// declared after `instances`, so it is removed after they close.
    _scratch: Option<tempfile::TempDir>,
    /// Every instance's latest sequence number when it was opened,
    /// before anything was written ([`Store::sequences_at_open`]).
    sequences_at_open: Vec<u64>,
}

/// The latest sequence number of each instance, in order.
fn latest_sequences(instances: &[Instance]) -> Vec<u64> {
    instances
        .iter()
        .map(|i| i.db.latest_sequence_number())
        .collect()
}

/// Read and write options made once per store and shared by every call.
struct CallOptions {
    /// RocksDB's default read options.
    read: ReadOptions,
    /// RocksDB's default write options.
    write: WriteOptions,
}

impl CallOptions {
    fn new() -> CallOptions {
        CallOptions {
            read: ReadOptions::default(),
            write: WriteOptions::default(),
        }
    }
}

impl Store {
    /// Opens (or creates) the store of `codec`'s layout under `dir`.
    pub fn open<C: Codec>(
        codec: Arc<C>,
        clock: Arc<dyn Clock>,
        dir: &Path,
        options: StoreOptions,
    ) -> Result<Store, StoreError> {
        let layout = codec.layout().clone();
        check_directory(codec.name(), &layout, dir, options.mode)?;
        if let Some(compat) = options.compat {
            if compat.format() != codec.name() {
                return Err(StoreError::Open(format!(
                    "--compat {compat} writes the {} format, not {}",
                    compat.format(),
                    codec.name()
                )));
            }
        }
        let read_only = options.mode == OpenMode::ReadOnly;
        let scratch = if read_only {
            Some(tempfile::Builder::new().prefix("redcodec-ro-").tempdir()?)
        } else {
            None
        };
        let expired = Arc::new(ExpiredKeys::default());
        let expiry_hold = Arc::new(ExpiryHold::default());
        let block_cache = Cache::new_lru_cache(options.block_cache_bytes);
        let mut instances = Vec::with_capacity(layout.instances.len());
        for (index, spec) in layout.instances.iter().enumerate() {
            let path = dir.join(spec.dir);
            let existing = if path.join("CURRENT").exists() {
                Db::list_cf(&Options::default(), &path)
                    .map_err(|e| StoreError::Open(format!("cannot read {}: {e}", path.display())))?
            } else if read_only {
                return Err(StoreError::Open(format!(
                    "{} holds no RocksDB store: the {} format keeps an instance there",
                    path.display(),
                    codec.name()
                )));
            } else {
                Vec::new()
            };
            if let Some((name, why)) = spec
                .refused
                .iter()
                .find(|(name, _)| existing.iter().any(|e| e == name))
            {
                return Err(StoreError::Open(format!(
                    "{} holds column family '{name}': {why}",
                    path.display()
                )));
            }
            let handle: Arc<OnceLock<Weak<Db>>> = Arc::new(OnceLock::new());
            let known: Vec<&str> = spec.column_families.iter().map(|c| c.name).collect();
            let mut descriptors = Vec::new();
            let mut lazy = Vec::new();
            for (cf, cf_spec) in spec.column_families.iter().enumerate() {
                let exists = existing.iter().any(|n| n == cf_spec.name);
                let place = Place::new(index, cf);
                let wanted = options.compat.is_none_or(|c| c.has_family(cf_spec.name));
                if (read_only || !wanted) && !exists {
                    lazy.push(None);
                    continue;
                }
                let mut opts = family_options(options.compat, cf_spec.merge, Some(&block_cache));
                if let Some(cmp) = cf_spec.comparator {
                    opts.set_comparator(cmp.name, Box::new(cmp.compare));
                }
                if !read_only {
                    if let Some(factory) = FilterFactory::for_place(
                        codec.clone(),
                        clock.clone(),
                        place,
                        handle.clone(),
                        expired.clone(),
                        expiry_hold.clone(),
                    ) {
                        opts.set_compaction_filter_factory(factory);
                    }
                }
                if cf_spec.created_on_first_write && !exists {
                    lazy.push(Some(opts));
                } else {
                    lazy.push(None);
                    descriptors.push(ColumnFamilyDescriptor::new(cf_spec.name, opts));
                }
            }
            let mut others: Vec<String> = existing
                .iter()
                .filter(|n| !known.contains(&n.as_str()))
                .cloned()
                .collect();
            others.sort();
            if let Some(extra) = others.first() {
                let Some(cmp) = spec.other_families else {
                    return Err(StoreError::Open(format!(
                        "{} holds column family '{extra}', which the {} format does not use: not a {} store",
                        path.display(),
                        codec.name(),
                        codec.name()
                    )));
                };
                let merge = spec.column_families.iter().find_map(|c| c.merge);
                for name in &others {
                    let mut opts = family_options(options.compat, merge, Some(&block_cache));
                    opts.set_comparator(cmp.name, Box::new(cmp.compare));
                    descriptors.push(ColumnFamilyDescriptor::new(name, opts));
                }
            }
            let opened = match &scratch {
                Some(scratch) => {
                    let mut db_opts = Options::default();
                    db_opts.set_max_open_files(-1);
                    db_opts.set_use_direct_reads(options.direct_reads);
                    let own = scratch.path().join(spec.dir);
                    Db::open_cf_descriptors_as_secondary(&db_opts, &path, &own, descriptors)
                }
                None => {
                    let mut db_opts = Options::default();
                    db_opts.create_if_missing(true);
                    db_opts.create_missing_column_families(true);
                    db_opts.set_use_direct_reads(options.direct_reads);
                    // Two flushes at once (a quarter of the jobs; RocksDB's
                    // default of two jobs has one): a store's families fill
                    // their memtables together in a load, and its final
                    // flush waits for them all.
                    db_opts.set_max_background_jobs(8);
                    crate::wal_retention::apply(&mut db_opts);
                    Db::open_cf_descriptors(&db_opts, &path, descriptors)
                }
            };
            let db = opened.map_err(|e| {
                StoreError::Open(format!(
                    "cannot open {} as a store of format {}: {e}",
                    path.display(),
                    codec.name()
                ))
            })?;
            let db = Arc::new(db);
            let _ = handle.set(Arc::downgrade(&db));
            instances.push(Instance {
                db,
                dir: spec.dir,
                families: Families::new(known.len()),
                cfs: known,
                lazy: Mutex::new(lazy),
                others,
            });
        }
        if !read_only {
            complete_intent(dir, &instances)?;
        }
        let sequences_at_open = latest_sequences(&instances);
        Ok(Store {
            behind: WriteBehind::default(),
            layout,
            instances,
            multi_instance: Mutex::new(()),
            pending_intent: AtomicBool::new(false),
            intents_left: AtomicU64::new(0),
            fail_between: AtomicU64::new(intent::failures_between_instances()),
            root: dir.to_path_buf(),
            expired,
            expiry_hold,
            _block_cache: block_cache,
            read_cache: if read_only {
                None
            } else {
                ReadCache::new(options.read_cache_bytes)
            },
            calls: CallOptions::new(),
            options,
            _scratch: scratch,
            sequences_at_open,
        })
    }

    /// Every instance's latest sequence number, in the layout's order:
    /// together they change whenever anything is written, and a store
    /// reopened holds the numbers it was closed with.
    pub fn latest_sequences(&self) -> Vec<u64> {
        latest_sequences(&self.instances)
    }

    /// [`Store::latest_sequences`] as they were when the store was opened,
    /// before anything was written (the format's bootstrap records
    /// included): equal to the numbers at the last close when nothing
    /// wrote to it in between.
    pub fn sequences_at_open(&self) -> &[u64] {
        &self.sequences_at_open
    }

    /// The options the store was opened with.
    pub fn options(&self) -> StoreOptions {
        self.options
    }

    /// The order of the column family at `place`: its comparator, or
    /// RocksDB's bytewise order.
    pub fn order(&self, place: Place) -> fn(&[u8], &[u8]) -> std::cmp::Ordering {
        self.layout.instances[place.instance].column_families[place.cf]
            .comparator
            .map_or(<[u8]>::cmp as fn(&[u8], &[u8]) -> std::cmp::Ordering, |c| {
                c.compare
            })
    }

    /// The layout this store was opened with.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The keys that compaction filters reported as expired, for the
    /// engine's active-expiry task.
    pub fn expired_keys(&self) -> &Arc<ExpiredKeys> {
        &self.expired
    }

    /// Whether background expiry is held: while it is, the compaction
    /// filters drop no record by its TTL and the engine's active-expiry
    /// pass deletes nothing (a replica's store, whose master decides when
    /// its keys expire).
    pub fn expiry_hold(&self) -> &Arc<ExpiryHold> {
        &self.expiry_hold
    }

    /// The database of `place` and its family (`None`: a family created on
    /// first write that does not exist yet).
    fn cf(&self, place: Place) -> (&Db, Option<&Family>) {
        let inst = &self.instances[place.instance];
        let family = inst.families.get(&inst.db, place.cf, inst.cfs[place.cf]);
        (&inst.db, family)
    }

    /// The family of `place`, created now if it is created on first write.
    pub(crate) fn cf_for_write(&self, place: Place) -> Result<&Family, StoreError> {
        if let (_, Some(family)) = self.cf(place) {
            return Ok(family);
        }
        let inst = &self.instances[place.instance];
        let name = inst.cfs[place.cf];
        let lazy = inst.lazy.lock();
        if inst.db.cf_handle(name).is_none() {
            let opts = lazy[place.cf]
                .as_ref()
                .ok_or_else(|| StoreError::Open(format!("column family '{name}' is not open")))?;
            inst.db.create_cf(name, opts)?;
        }
        drop(lazy);
        self.cf(place)
            .1
            .ok_or_else(|| StoreError::Open(format!("column family '{name}' is not open")))
    }

    /// The RocksDB database of instance `index`.
    pub(crate) fn instance_db(&self, index: usize) -> &Db {
        &self.instances[index].db
    }

    /// Whether the family of `place` exists (a family created on first
    /// write may not yet).
    pub fn has_cf(&self, place: Place) -> bool {
        self.cf(place).1.is_some()
    }

    /// The directory of instance `index`, relative to the root.
    pub fn instance_dir(&self, index: usize) -> &'static str {
        self.instances[index].dir
    }

    /// Reads one record.
    pub fn get(&self, place: Place, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_with(place, key, <[u8]>::to_vec)
    }

    /// Reads one record and hands its bytes, in place, to `read` (no copy),
    /// from the read cache when it holds the record.
    pub fn get_with<T>(
        &self,
        place: Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError> {
        self.settle()?;
        let (db, cf) = self.cf(place);
        let Some(cf) = cf else {
            return Ok(None);
        };
        let ticket = match self.read_cache.as_ref().map(|c| c.lookup(place, key)) {
            Some(Lookup::Hit(found)) => return Ok(found.map(|bytes| read(&bytes))),
            Some(Lookup::Miss(ticket)) => Some(ticket),
            None => None,
        };
        let pinned = db.get_pinned_cf_opt(&cf, key, &self.calls.read)?;
        if let (Some(cache), Some(ticket)) = (&self.read_cache, ticket) {
            cache.fill(ticket, place, key, pinned.as_deref());
        }
        Ok(pinned.map(|bytes| read(&bytes)))
    }

    /// The read cache's entries and bytes (`None`: the store has none).
    pub fn read_cache_size(&self) -> Option<(usize, usize)> {
        self.read_cache.as_ref().map(|c| (c.len(), c.bytes()))
    }

    /// Tells the read cache what a write RocksDB took did to the records of
    /// `batch` (every record, when it deleted a range).
    fn cache_wrote(&self, batch: &Batch) {
        let Some(cache) = &self.read_cache else {
            return;
        };
        for (place, op) in &batch.pending {
            match op {
                Op::Put(key, value) => cache.wrote(*place, key, Some(value)),
                Op::Delete(key) => cache.wrote(*place, key, None),
                Op::DeleteRange(..) => return cache.clear(),
            }
        }
    }

    /// Empties the read cache: the store changed in ways it cannot follow
    /// record by record.
    pub(crate) fn clear_read_cache(&self) {
        if let Some(cache) = &self.read_cache {
            cache.clear();
        }
    }

    /// Reads several records at once.
    pub fn get_many(&self, records: &[Record]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        records.iter().map(|r| self.get(r.place, &r.key)).collect()
    }

    /// Iterates `range` forward from its lower bound (or from `from`), or
    /// backward from its upper end (or from `from`, inclusive).
    pub fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> StoreIter<'_> {
        let opts = ReadOptions::default();
        self.scan_with(range.place, Some(range), opts, reverse, |it| {
            match (from, reverse) {
                (Some(k), false) => it.seek(k),
                (None, false) => it.seek(&range.lower),
                (Some(k), true) => it.seek_for_prev(k),
                (None, true) => it.seek_to_last(),
            }
        })
    }

    /// Whether `range` may hold a record: `false` only when it holds
    /// none. The look stops after [`Store::MAX_SKIPPED_FOR_EMPTY`] deleted
    /// records (RocksDB reports the iterator incomplete), and the range is
    /// then taken to hold some: a range of tombstones costs a bounded
    /// walk, not one over every tombstone.
    pub fn may_hold(&self, range: &KeyRange) -> Result<bool, StoreError> {
        self.settle()?;
        let (db, cf) = self.cf(range.place);
        let Some(cf) = cf else {
            return Ok(false);
        };
        let mut opts = ReadOptions::default();
        opts.set_iterate_lower_bound(range.lower.clone());
        opts.set_iterate_upper_bound(range.upper.clone());
        opts.set_max_skippable_internal_keys(Self::MAX_SKIPPED_FOR_EMPTY);
        let mut it = db.raw_iterator_cf_opt(&cf, opts);
        it.seek(&range.lower);
        if it.valid() {
            return Ok(true);
        }
        match it.status() {
            Ok(()) => Ok(false),
            Err(e) if e.kind() == rocksdb::ErrorKind::Incomplete => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// The deleted records [`Store::may_hold`] steps over before it takes
    /// a range to hold something.
    pub const MAX_SKIPPED_FOR_EMPTY: u64 = 1024;

    /// Iterates every record of the family at `place`, in its order.
    pub fn scan_family(&self, place: Place) -> StoreIter<'_> {
        let opts = ReadOptions::default();
        self.scan_with(
            place,
            None,
            opts,
            false,
            DBRawIteratorWithThreadMode::seek_to_first,
        )
    }

    /// Iterates the family at `place`, or only `range` of it, from its
    /// start, for a pass that reads every record once (`analyze`, `dump`,
    /// the raw scan they are measured against): its blocks are not put in
    /// the block cache, where they would only push out the blocks point
    /// reads use, at the cost of a cache insertion and an eviction each.
    pub fn scan_pass(&self, place: Place, range: Option<&KeyRange>) -> StoreIter<'_> {
        let mut opts = ReadOptions::default();
        opts.fill_cache(false);
        self.scan_with(
            place,
            range,
            opts,
            false,
            DBRawIteratorWithThreadMode::seek_to_first,
        )
    }

    /// Iterates the family at `place` (only `range` of it, if given) with
    /// `opts`, from where `position` puts the iterator (`reverse`: towards
    /// the start).
    fn scan_with<'s>(
        &'s self,
        place: Place,
        range: Option<&KeyRange>,
        mut opts: ReadOptions,
        reverse: bool,
        position: impl FnOnce(&mut DBRawIteratorWithThreadMode<'s, Db>),
    ) -> StoreIter<'s> {
        if let Err(e) = self.settle() {
            return StoreIter::failed(e);
        }
        let (db, cf) = self.cf(place);
        let it = cf.map(|cf| {
            if let Some(range) = range {
                opts.set_iterate_lower_bound(range.lower.clone());
                opts.set_iterate_upper_bound(range.upper.clone());
            }
            let mut it = db.raw_iterator_cf_opt(&cf, opts);
            position(&mut it);
            it
        });
        StoreIter {
            it,
            reverse,
            started: false,
            failed: None,
        }
    }

    /// Applies a batch, atomically: one RocksDB write per instance it
    /// touches, and when it touches several, an intent record that
    /// completes it after a crash ([`intent`]).
    ///
    /// A multi-instance write that fails (a full disk, an I/O error) ends
    /// in one of two ways. If nothing of it was written (the intent
    /// record or the first instance's batch failed), its intent is
    /// removed: the command did not happen. If one instance's batch was
    /// written and a later one failed (or syncing or removing the intent
    /// failed), the command is completed: the intent stays, and every
    /// later read or write of this store first writes its batches again
    /// and removes it — failing, with the storage error, for as long as
    /// that fails — and so does the next open. No read ever sees half of
    /// the command (a key in two types), and no later write is
    /// overwritten by a late completion.
    pub fn write(&self, batch: Batch) -> Result<(), StoreError> {
        self.write_batches(batch, true)
    }

    /// Applies a batch as one RocksDB write per instance it touches, those
    /// writes not atomic together (no intent record): for writes whose
    /// parts in different instances need not survive a crash together (see
    /// [`KvStore::write_per_instance`](crate::KvStore::write_per_instance)).
    pub fn write_per_instance(&self, batch: Batch) -> Result<(), StoreError> {
        self.write_batches(batch, false)
    }

    /// Applies a batch as [`Store::write_per_instance`] does, without
    /// the write-ahead log: the writes live in the memtables until a
    /// flush ([`Store::flush`]) and are lost by a crash before it. For a
    /// load into an emptied store under a marker of its own, which
    /// undoes the load whole after a crash and flushes before it removes
    /// the marker.
    ///
    /// The batch is applied on a thread of its own (`write_behind.rs`),
    /// so this may return before it is: every other call of the store
    /// waits until it is applied, and the first of them reports it if it
    /// failed (as does the next `write_unlogged`).
    pub fn write_unlogged(&self, batch: Batch) -> Result<(), StoreError> {
        if !self.options.mode.writes() {
            return Err(StoreError::ReadOnly);
        }
        self.settle_intent()?;
        // A load's records are many and read back rarely: the cache is
        // emptied rather than told of each (and reads wait for the load).
        self.clear_read_cache();
        // The write batches are made here: the records' memory is freed
        // by the thread that took it (freeing it on another costs more
        // than making the batches).
        let job = self
            .per_instance(&batch)?
            .into_iter()
            .map(|(i, wb)| (self.instances[i].db.clone(), wb))
            .collect();
        drop(batch);
        self.behind.submit(job)
    }

    /// Test hook: the next `n` writes that span several instances fail
    /// after their first instance's batch is written, as a full disk
    /// would fail the second (see [`Store::write`] for what follows).
    pub fn fail_between_instances(&self, n: u64) {
        self.fail_between.store(n, Ordering::SeqCst);
    }

    /// Whether a failed multi-instance write's intent waits to be
    /// completed ([`Store::write`]).
    pub fn intent_pending(&self) -> bool {
        self.pending_intent.load(Ordering::SeqCst)
    }

    /// How many writes since the store opened failed but will be
    /// completed ([`Store::write`]: failed after their first instance's
    /// batch, or left an intent they could not remove). A caller that
    /// reads it before and after its own write knows whether that write,
    /// though it failed, counts as done, whatever an earlier write left
    /// pending.
    pub fn completions_owed(&self) -> u64 {
        self.intents_left.load(Ordering::SeqCst)
    }

    /// Leaves the intent of the write under way to be completed by every
    /// later read and write ([`Store::write`]).
    fn leave_intent(&self) {
        self.intents_left.fetch_add(1, Ordering::SeqCst);
        self.pending_intent.store(true, Ordering::Release);
    }

    /// Before any read or write: waits for the unlogged writes handed
    /// over ([`Store::write_unlogged`]), and completes the intent a failed
    /// write left, if any ([`Store::write`]).
    fn settle(&self) -> Result<(), StoreError> {
        self.behind.settle()?;
        self.settle_intent()
    }

    /// Completes the intent a failed write left, if any.
    fn settle_intent(&self) -> Result<(), StoreError> {
        if !self.pending_intent.load(Ordering::Acquire) {
            return Ok(());
        }
        let _serial = self.multi_instance.lock();
        self.settle_locked()
    }

    /// [`Store::settle`] under the multi-instance lock.
    fn settle_locked(&self) -> Result<(), StoreError> {
        if self.pending_intent.load(Ordering::Acquire) {
            complete_intent(&self.root, &self.instances)?;
            self.clear_read_cache();
            self.pending_intent.store(false, Ordering::Release);
        }
        Ok(())
    }

    /// Applies a batch; `atomic`: across instances too.
    fn write_batches(&self, batch: Batch, atomic: bool) -> Result<(), StoreError> {
        if !self.options.mode.writes() {
            return Err(StoreError::ReadOnly);
        }
        self.settle()?;
        let batches = self.per_instance(&batch)?;
        let written = self.write_instances(batches, atomic);
        // Once RocksDB took the writes, the read cache follows them (the
        // callers serialize the writes of one record: `read_cache`); after a
        // failure, which may have written a part, it forgets everything.
        match &written {
            Ok(()) => self.cache_wrote(&batch),
            Err(_) => self.clear_read_cache(),
        }
        // The records' memory is freed in the order it was taken.
        drop(batch);
        written
    }

    /// Writes each instance's batch; `atomic`: under an intent record
    /// when there are several.
    fn write_instances(
        &self,
        batches: Vec<(usize, WriteBatch)>,
        atomic: bool,
    ) -> Result<(), StoreError> {
        if !atomic || batches.len() < 2 {
            for (i, wb) in batches {
                self.instances[i].db.write_opt(wb, &self.calls.write)?;
            }
            return Ok(());
        }
        // One multi-instance write at a time: the intent file is the
        // store's only one.
        let _serial = self.multi_instance.lock();
        // An intent left by a write that failed halfway is completed
        // before the next one replaces it.
        self.settle_locked()?;
        let data: Vec<(usize, &[u8])> = batches.iter().map(|(i, wb)| (*i, wb.data())).collect();
        if let Err(e) = intent::record(&self.root, &data) {
            // A torn temporary file is never read; a complete intent
            // under its final name is what matters.
            if intent::pending(&self.root).is_ok_and(|p| p.is_some()) {
                self.void_intent();
            }
            return Err(e);
        }
        let touched: Vec<usize> = batches.iter().map(|(i, _)| *i).collect();
        for (n, (i, wb)) in batches.into_iter().enumerate() {
            let written = if n > 0 && self.take_injected_failure() {
                Err(StoreError::Io(std::io::Error::other(
                    "injected failure between instances",
                )))
            } else {
                self.instances[i]
                    .db
                    .write_opt(wb, &self.calls.write)
                    .map_err(StoreError::from)
            };
            if let Err(e) = written {
                if n == 0 {
                    // Nothing written: the command did not happen.
                    self.void_intent();
                } else {
                    self.leave_intent();
                }
                return Err(e);
            }
            if n == 0 && intent::abort_between_instances() {
                std::process::abort();
            }
        }
        let synced = touched
            .into_iter()
            .try_for_each(|i| self.instances[i].db.flush_wal(true));
        let done = synced
            .map_err(StoreError::from)
            .and_then(|()| intent::clear(&self.root));
        if done.is_err() {
            // Written, but the intent stays: completed before anything else.
            self.leave_intent();
        }
        done
    }

    /// `batch` as one RocksDB write batch per instance it touches, each
    /// with its instance's index, in index order.
    fn per_instance(&self, batch: &Batch) -> Result<Vec<(usize, WriteBatch)>, StoreError> {
        let mut per_instance: Vec<Option<WriteBatch>> =
            (0..self.instances.len()).map(|_| None).collect();
        // Room for every record at once (RocksDB's batch grows by copying
        // itself otherwise): its bytes, a tag, a family id and two lengths.
        let mut room = vec![0usize; self.instances.len()];
        for (place, op) in &batch.pending {
            room[place.instance] += op.bytes() + 16;
        }
        // The family of the last write: a batch sorted by record (a
        // load's) looks each family up once, not once per record.
        let mut last: Option<(Place, &Family)> = None;
        for (place, op) in batch.ordered() {
            let place = *place;
            let cf = match &last {
                Some((at, cf)) if *at == place => *cf,
                _ => {
                    // Deleting from a family that does not exist yet
                    // deletes nothing; only a put creates it.
                    let cf = match op {
                        Op::Put(..) => self.cf_for_write(place)?,
                        _ => match self.cf(place).1 {
                            Some(cf) => cf,
                            None => continue,
                        },
                    };
                    last = Some((place, cf));
                    cf
                }
            };
            let wb = per_instance[place.instance]
                .get_or_insert_with(|| WriteBatch::with_capacity_bytes(room[place.instance]));
            add_op(wb, cf, op);
        }
        Ok(per_instance
            .into_iter()
            .enumerate()
            .filter_map(|(i, wb)| wb.map(|wb| (i, wb)))
            .collect())
    }

    /// Removes the intent of a write of which nothing was written; if that
    /// fails, the intent is completed later instead ([`Store::write`]).
    fn void_intent(&self) {
        if intent::clear(&self.root).is_err() {
            self.leave_intent();
        }
    }

    /// Whether the test hook fails this write between instances.
    fn take_injected_failure(&self) -> bool {
        self.fail_between
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Puts the records the format writes on every open
    /// ([`Codec::bootstrap_records`]), in one batch per instance.
    pub fn write_bootstrap(&self, records: Vec<(Record, Vec<u8>)>) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::default();
        for (record, value) in records {
            batch.put(record.place, record.key, value);
        }
        // The same records on every open: written again if a crash cut
        // them short, so they need no intent.
        self.write_batches(batch, false)
    }

    /// Flushes memtables and compacts every column family fully, so that
    /// compaction filters see every record.
    pub fn compact_all(&self) -> Result<(), StoreError> {
        self.behind.settle()?;
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, Some(cf)) = self.cf(place) else {
                continue;
            };
            db.flush_cf(&cf)?;
            let mut opts = rocksdb::CompactOptions::default();
            opts.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
            db.compact_range_cf_opt(&cf, None::<&[u8]>, None::<&[u8]>, &opts);
        }
        Ok(())
    }

    /// Writes and syncs every instance's write-ahead log, so every write
    /// applied so far survives a crash of the machine.
    pub fn sync_wal(&self) -> Result<(), StoreError> {
        self.behind.settle()?;
        for inst in &self.instances {
            inst.db.flush_wal(true)?;
        }
        Ok(())
    }

    /// Bytes held by every memtable of the store (active, and immutable
    /// ones not yet flushed).
    pub fn memtable_bytes(&self) -> Result<u64, StoreError> {
        self.property_sum("rocksdb.cur-size-all-mem-tables")
    }

    /// Asks RocksDB to flush every non-empty memtable in the background
    /// and returns at once (writes wait only if flushes fall behind).
    pub fn request_flush(&self) -> Result<(), StoreError> {
        self.behind.settle()?;
        let mut opts = rocksdb::FlushOptions::default();
        opts.set_wait(false);
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, Some(cf)) = self.cf(place) else {
                continue;
            };
            if db.property_int_value_cf(&cf, "rocksdb.cur-size-active-mem-table")? > Some(0) {
                db.flush_cf_opt(&cf, &opts)?;
            }
        }
        Ok(())
    }

    /// Writes a RocksDB checkpoint of every instance into `into` (which must
    /// not exist), laid out as the store is, so that [`Store::open`] opens
    /// it: a point-in-time copy, made of hard links to the live SST files
    /// where `into` is on the same file system, plus the memtables flushed.
    /// It takes as long as a flush, whatever the store's size. A caller
    /// that needs one point in time across several instances keeps writes
    /// out meanwhile.
    pub fn checkpoint(&self, into: &Path) -> Result<(), StoreError> {
        self.behind.settle()?;
        if into.exists() {
            return Err(StoreError::Open(format!(
                "checkpoint directory {} exists already",
                into.display()
            )));
        }
        for instance in &self.instances {
            if !instance.dir.is_empty() {
                std::fs::create_dir_all(into)?;
            }
            let checkpoint = rocksdb::checkpoint::Checkpoint::new(instance.db.as_ref())?;
            checkpoint.create_checkpoint(into.join(instance.dir))?;
        }
        Ok(())
    }

    /// Flushes every memtable to disk.
    ///
    /// Every instance is flushed at once, each on a thread of its own
    /// asking for all its families in one request: RocksDB then writes
    /// them side by side on as many threads as it has for flushes. One
    /// instance after the other left all but one of those threads idle
    /// at the end of a load into a store of several instances
    /// (docs/src/replication.md).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.behind.settle()?;
        let flush_instance = |i: usize| -> Result<(), StoreError> {
            let cfs: Vec<_> = self
                .layout
                .places()
                .filter(|place| place.instance == i)
                .filter_map(|place| self.cf(place).1)
                .collect();
            if cfs.is_empty() {
                return Ok(());
            }
            let mut opts = rocksdb::FlushOptions::default();
            opts.set_wait(true);
            let cfs: Vec<_> = cfs.iter().collect();
            self.instances[i].db.flush_cfs_opt(&cfs, &opts)?;
            Ok(())
        };
        if self.instances.len() == 1 {
            return flush_instance(0);
        }
        std::thread::scope(|scope| {
            let flushing: Vec<_> = (0..self.instances.len())
                .map(|i| scope.spawn(move || flush_instance(i)))
                .collect();
            flushing.into_iter().try_for_each(|flush| {
                flush
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
        })
    }

    /// Calls `visit(place, key, value)` for every stored pair: instances and
    /// column families in layout order, pairs in each family's own order.
    pub fn for_each_pair(
        &self,
        mut visit: impl FnMut(Place, &[u8], &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        for place in self.layout.places().collect::<Vec<_>>() {
            let mut it = self.scan_pass(place, None);
            while let Some((key, value)) = it.next_ref()? {
                visit(place, key, value)?;
            }
        }
        Ok(())
    }

    /// Writes every stored pair as `<instance>\t<column family>\t<key hex>\t<value hex>`,
    /// one per line, in [`Store::for_each_pair`] order; then, per instance,
    /// the families the layout does not name (in name order).
    pub fn dump(&self, out: &mut dyn std::io::Write) -> Result<(), StoreError> {
        let layout = self.layout.clone();
        let mut line = DumpLine::default();
        self.for_each_pair(|place, key, value| {
            let inst = &layout.instances[place.instance];
            line.write(
                out,
                inst.dir,
                inst.column_families[place.cf].name,
                key,
                value,
            )?;
            Ok(())
        })?;
        for inst in &self.instances {
            for name in &inst.others {
                let Some(cf) = inst.db.cf_handle(name) else {
                    continue;
                };
                let mut it = inst.db.raw_iterator_cf(&cf);
                it.seek_to_first();
                while let (Some(k), Some(v)) = (it.key(), it.value()) {
                    line.write(out, inst.dir, name, k, v)?;
                    it.next();
                }
                it.status()?;
            }
        }
        Ok(())
    }

    /// The names of the column families of instance `index` that the
    /// layout does not name (opened as [`redcodec_codec::InstanceSpec::other_families`] says).
    pub fn other_families(&self, index: usize) -> &[String] {
        &self.instances[index].others
    }

    /// A RocksDB property of the family at `place` as text (`None`: the
    /// property is unknown, or the family does not exist yet).
    pub fn property(&self, place: Place, name: &str) -> Result<Option<String>, StoreError> {
        match self.cf(place) {
            (db, Some(cf)) => Ok(db.property_value_cf(&cf, name)?),
            (_, None) => Ok(None),
        }
    }

    /// An integer RocksDB property summed over every column family.
    pub fn property_sum(&self, name: &str) -> Result<u64, StoreError> {
        let mut total = 0u64;
        for place in self.layout.places().collect::<Vec<_>>() {
            if let (db, Some(cf)) = self.cf(place) {
                total += db.property_int_value_cf(&cf, name)?.unwrap_or(0);
            }
        }
        Ok(total)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Unlogged writes still handed over are applied first: stopping
        // background work below flushes what is not in a write-ahead log,
        // and a write applied after it would be lost with the memtables.
        if let Err(e) = self.behind.settle() {
            eprintln!(
                "redcodec: a write of the store at {} failed as it closed: {e}",
                self.root.display()
            );
        }
        // A store for a real system's release leaves nothing in a WAL that
        // release might not replay, and its tables in the levels (and so the
        // compression) the release itself would use.
        if self.options.compat.is_some() && self.options.mode.writes() {
            let _ = self.compact_all();
        }
        // Compaction filters hold weak handles to their instance; stop
        // background work first so none of them outlives the database.
        for inst in &self.instances {
            inst.db.cancel_all_background_work(true);
        }
    }
}

/// Adds one queued operation to a RocksDB write batch.
/// Writes again the batches of the intent a crash left at `root`, syncs
/// them, and removes the intent ([`intent`]).
fn complete_intent(root: &Path, instances: &[Instance]) -> Result<(), StoreError> {
    let Some(batches) = intent::pending(root)? else {
        return Ok(());
    };
    for (index, data) in batches {
        let inst = instances.get(index).ok_or_else(|| {
            StoreError::Open(format!(
                "{} names instance {index}, which the layout does not have",
                intent::path(root).display()
            ))
        })?;
        inst.db.write(WriteBatch::from_data(&data))?;
        inst.db.flush_wal(true)?;
    }
    intent::clear(root)
}

fn add_op(wb: &mut WriteBatch, cf: &Family, op: &Op) {
    match op {
        Op::Put(k, v) => wb.put_cf(cf, k, v),
        Op::Delete(k) => wb.delete_cf(cf, k),
        Op::DeleteRange(a, b) => wb.delete_range_cf(cf, a, b),
    }
}

/// Bits per key of every table's bloom filter.
const BLOOM_BITS_PER_KEY: f64 = 10.0;

/// Options of one column family: RocksDB's defaults, or what `compat`'s
/// release reads, with a bloom filter of 10 bits per key (as Kvrocks and
/// Pika configure theirs) and the store's shared `block_cache`, and its
/// merge operator if it has one. Read-write and read-only opens alike
/// need the operator: RocksDB fails every read of a key that holds merge
/// operands without it. The partial merge always declines, so RocksDB
/// keeps operands until it meets their base.
///
/// The filter and the cache matter as soon as a store outgrows its
/// memtables: every write first reads its key's metadata, and without a
/// filter a key that is not there costs a data block read in every L0
/// file and level; a pass over every key reads each block many times.
/// A migration of a generated store of 1,000,000 keys, kvrocks →
/// blackwidow, took 839 s without them and 120 s with them
/// (docs/src/scale.md).
///
/// Index and filter blocks are partitioned (as Kvrocks configures its
/// tables), in the files a store writes and in the SST files of the bulk
/// path (`block_cache` `None`) alike: a whole index and filter block of a
/// 64 MB table is about 2 MB, which a point read must load whole, and a
/// 10M-record blackwidow store migrated by the bulk path with whole
/// blocks took `verify` over 20 minutes, rereading 7.9 TB of them through
/// the 128 MiB cache (docs/src/scale.md). With the cache, the partitions
/// live in it: the filters of a store of 100M records take over a
/// gigabyte, and outside the cache they would grow a process's memory with
/// the store. The partitions' top level stays pinned, so a lookup does not
/// reload it. L0's partitions are not pinned: RocksDB pins them in a table
/// opened at L0 for as long as its reader lives, which with every file
/// kept open is the store's life, also after a trivial move takes the file
/// down the levels, and keys written in order move nearly every flushed
/// file so. A 100M-record `generate` ended with 1.69 GB of its 128 MiB
/// cache pinned that way, 2.3 GiB of peak RSS (docs/src/scale.md, 100
/// million records).
pub(crate) fn family_options(
    compat: Option<Compat>,
    merge: Option<MergeOperatorSpec>,
    block_cache: Option<&Cache>,
) -> Options {
    let mut opts = Options::default();
    let mut table = BlockBasedOptions::default();
    table.set_bloom_filter(BLOOM_BITS_PER_KEY, false);
    if let Some(compat) = compat {
        compat.apply(&mut opts, &mut table);
    }
    table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    table.set_partition_filters(true);
    if let Some(cache) = block_cache {
        table.set_block_cache(cache);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_top_level_index_and_filter(true);
    }
    opts.set_block_based_table_factory(&table);
    if let Some(merge) = merge {
        let full_merge = merge.full_merge;
        opts.set_merge_operator(
            merge.name,
            move |key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands| {
                full_merge(key, existing, &mut operands.iter())
            },
            |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None,
        );
    }
    opts
}

/// Directories up to two levels below `dir` that hold a store of `layout`
/// (one of its instances), in name order.
fn nested_stores(layout: &Layout, dir: &Path) -> Vec<PathBuf> {
    let holds = |d: &Path| {
        layout
            .instances
            .iter()
            .any(|i| d.join(i.dir).join("CURRENT").is_file())
    };
    let children = |d: &Path| -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    };
    let mut found = Vec::new();
    for child in children(dir) {
        if holds(&child) {
            found.push(child);
            continue;
        }
        found.extend(children(&child).into_iter().filter(|g| holds(g)));
    }
    found
}

/// Refuses a directory that holds something other than this format's store.
fn check_directory(
    format: &str,
    layout: &Layout,
    dir: &Path,
    mode: OpenMode,
) -> Result<(), StoreError> {
    let has_instance = layout
        .instances
        .iter()
        .any(|i| dir.join(i.dir).join("CURRENT").exists());
    if has_instance {
        return Ok(());
    }
    if mode != OpenMode::CreateIfMissing {
        let nested = nested_stores(layout, dir);
        let hint = if nested.is_empty() {
            String::new()
        } else {
            // Pika keeps one store per database (`db/db0`) or partition
            // (`db/db0/3`) below its db-path.
            format!(
                "; it holds {} below it: pass one as --dir",
                nested
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(StoreError::Open(format!(
            "{} holds no {format} store (expected {}){hint}",
            dir.display(),
            layout
                .instances
                .iter()
                .map(|i| format!("{}/", i.dir))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if dir.is_file() {
        return Err(StoreError::Open(format!(
            "{} is a file, not a directory",
            dir.display()
        )));
    }
    let occupied = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(StoreError::Open(format!(
            "{} is not empty and holds no {format} store; refusing to write into it",
            dir.display()
        )));
    }
    Ok(())
}

/// A bounded iterator over one column family (empty over a family that
/// does not exist yet).
pub struct StoreIter<'a> {
    it: Option<DBRawIteratorWithThreadMode<'a, Db>>,
    reverse: bool,
    started: bool,
    /// An error to return on the first step (the store could not be read).
    failed: Option<StoreError>,
}

impl StoreIter<'_> {
    /// An iterator whose first step fails with `e`.
    fn failed(e: StoreError) -> Self {
        StoreIter {
            it: None,
            reverse: false,
            started: false,
            failed: Some(e),
        }
    }

    /// Moves to `key`: the next pair is the first at or after it (before
    /// it or at it, for a reverse iterator), within the range.
    pub fn seek(&mut self, key: &[u8]) {
        if let Some(it) = self.it.as_mut() {
            if self.reverse {
                it.seek_for_prev(key);
            } else {
                it.seek(key);
            }
            self.started = false;
        }
    }

    /// The next pair, or `None` at the end of the range.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        Ok(self
            .next_ref()?
            .map(|(key, value)| (key.to_vec(), value.to_vec())))
    }

    /// The next pair, borrowed from the iterator until its next move (no
    /// copy), or `None` at the end of the range: for walks over every
    /// record, where copying each pair costs as much as reading it.
    pub fn next_ref(&mut self) -> Result<Option<PairRef<'_>>, StoreError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some(it) = self.it.as_mut() else {
            return Ok(None);
        };
        if self.started {
            if self.reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        self.started = true;
        match it.item() {
            Some(pair) => Ok(Some(pair)),
            None => {
                it.status()?;
                Ok(None)
            }
        }
    }
}

/// One line of [`Store::dump`], `<instance>\t<column family>\t<key
/// hex>\t<value hex>\n`, made in a buffer kept from line to line: a
/// store of 100M records dumps about 220 GB of text, and formatting it a
/// byte at a time through `write!` was most of the command's time.
#[derive(Default)]
struct DumpLine(Vec<u8>);

impl DumpLine {
    fn write(
        &mut self,
        out: &mut dyn std::io::Write,
        instance: &str,
        family: &str,
        key: &[u8],
        value: &[u8],
    ) -> std::io::Result<()> {
        let line = &mut self.0;
        line.clear();
        line.extend_from_slice(instance.as_bytes());
        line.push(b'\t');
        line.extend_from_slice(family.as_bytes());
        for bytes in [key, value] {
            line.push(b'\t');
            let start = line.len();
            line.resize(start + bytes.len() * 2, 0);
            hex::encode_to_slice(bytes, &mut line[start..])
                .expect("the room made is twice the bytes");
        }
        line.push(b'\n');
        out.write_all(line)
    }
}
