//! The RocksDB side: opens every instance and column family a layout names,
//! with its comparator and compaction filter, and offers reads, range scans
//! and per-instance write batches addressed by [`Place`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use redcodec_codec::{Codec, KeyRange, Layout, Place, Record};
use rocksdb::{ColumnFamilyDescriptor, DBRawIterator, Options, ReadOptions, WriteBatch, DB};

use crate::clock::Clock;
use crate::error::EngineError;
use crate::gc::FilterFactory;

/// One open RocksDB instance.
struct Instance {
    db: Arc<DB>,
    dir: &'static str,
    cfs: Vec<&'static str>,
}

/// Every instance of a layout, opened.
pub struct Store {
    layout: Layout,
    instances: Vec<Instance>,
    root: PathBuf,
    /// Whether reads keep the blocks they load in the block cache.
    fill_cache: AtomicBool,
}

/// Whether [`Store::open`] may create a missing store.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the store if the directory holds none.
    CreateIfMissing,
    /// Fail unless the store exists.
    MustExist,
}

impl Store {
    /// Opens (or creates) the store of `codec`'s layout under `dir`.
    pub fn open<C: Codec>(
        codec: Arc<C>,
        clock: Arc<dyn Clock>,
        dir: &Path,
        mode: OpenMode,
    ) -> Result<Store, EngineError> {
        let layout = codec.layout().clone();
        check_directory(codec.name(), &layout, dir, mode)?;
        let mut instances = Vec::with_capacity(layout.instances.len());
        for (index, spec) in layout.instances.iter().enumerate() {
            let path = dir.join(spec.dir);
            let mut db_opts = Options::default();
            db_opts.create_if_missing(true);
            db_opts.create_missing_column_families(true);
            let handle: Arc<OnceLock<Weak<DB>>> = Arc::new(OnceLock::new());
            let descriptors = spec
                .column_families
                .iter()
                .enumerate()
                .map(|(cf, cf_spec)| {
                    let mut opts = Options::default();
                    if let Some(cmp) = cf_spec.comparator {
                        opts.set_comparator(cmp.name, Box::new(cmp.compare));
                    }
                    let place = Place::new(index, cf);
                    if let Some(factory) = FilterFactory::for_place(
                        codec.clone(),
                        clock.clone(),
                        place,
                        handle.clone(),
                    ) {
                        opts.set_compaction_filter_factory(factory);
                    }
                    ColumnFamilyDescriptor::new(cf_spec.name, opts)
                })
                .collect::<Vec<_>>();
            let existing = if path.exists() {
                DB::list_cf(&Options::default(), &path).unwrap_or_default()
            } else {
                Vec::new()
            };
            let known: Vec<&str> = spec.column_families.iter().map(|c| c.name).collect();
            if let Some(extra) = existing.iter().find(|n| !known.contains(&n.as_str())) {
                return Err(EngineError::Open(format!(
                    "{} holds column family '{extra}', which the {} format does not use: not a {} store",
                    path.display(),
                    codec.name(),
                    codec.name()
                )));
            }
            let db = DB::open_cf_descriptors(&db_opts, &path, descriptors).map_err(|e| {
                EngineError::Open(format!(
                    "cannot open {} as a {} store: {e}",
                    path.display(),
                    codec.name()
                ))
            })?;
            let db = Arc::new(db);
            let _ = handle.set(Arc::downgrade(&db));
            instances.push(Instance {
                db,
                dir: spec.dir,
                cfs: known,
            });
        }
        Ok(Store {
            layout,
            instances,
            root: dir.to_path_buf(),
            fill_cache: AtomicBool::new(true),
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

    fn cf(&self, place: Place) -> (&DB, &rocksdb::ColumnFamily) {
        let inst = &self.instances[place.instance];
        (&inst.db, cf_handle(&inst.db, inst.cfs[place.cf]))
    }

    /// The directory of instance `index`, relative to the root.
    pub fn instance_dir(&self, index: usize) -> &'static str {
        self.instances[index].dir
    }

    /// Reads one record.
    pub fn get(&self, place: Place, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
        let (db, cf) = self.cf(place);
        if self.fill_cache.load(Ordering::Relaxed) {
            return Ok(db.get_cf(cf, key)?);
        }
        let mut opts = ReadOptions::default();
        opts.fill_cache(false);
        Ok(db.get_cf_opt(cf, key, &opts)?)
    }

    /// Reads several records at once.
    pub fn get_many(&self, records: &[Record]) -> Result<Vec<Option<Vec<u8>>>, EngineError> {
        records.iter().map(|r| self.get(r.place, &r.key)).collect()
    }

    /// Iterates `range` forward from its lower bound (or from `from`), or
    /// backward from its upper end (or from `from`, inclusive).
    pub fn scan(&self, range: &KeyRange, from: Option<&[u8]>, reverse: bool) -> StoreIter<'_> {
        let (db, cf) = self.cf(range.place);
        let mut opts = ReadOptions::default();
        opts.fill_cache(self.fill_cache.load(Ordering::Relaxed));
        opts.set_iterate_lower_bound(range.lower.clone());
        opts.set_iterate_upper_bound(range.upper.clone());
        let mut it = db.raw_iterator_cf_opt(cf, opts);
        match (from, reverse) {
            (Some(k), false) => it.seek(k),
            (None, false) => it.seek(&range.lower),
            (Some(k), true) => it.seek_for_prev(k),
            (None, true) => it.seek_to_last(),
        }
        StoreIter {
            it,
            reverse,
            started: false,
        }
    }

    /// Applies a batch: one atomic RocksDB write per instance it touches.
    pub fn write(&self, batch: Batch) -> Result<(), EngineError> {
        let mut per_instance: Vec<Option<WriteBatch>> =
            (0..self.instances.len()).map(|_| None).collect();
        for (place, op) in batch.pending {
            let (_, cf) = self.cf(place);
            let wb = per_instance[place.instance].get_or_insert_with(WriteBatch::default);
            match op {
                Op::Put(k, v) => wb.put_cf(cf, k, v),
                Op::Delete(k) => wb.delete_cf(cf, k),
                Op::DeleteRange(a, b) => wb.delete_range_cf(cf, a, b),
            }
        }
        for (inst, wb) in self.instances.iter().zip(per_instance) {
            if let Some(wb) = wb {
                inst.db.write(wb)?;
            }
        }
        Ok(())
    }

    /// Flushes memtables and compacts every column family fully, so that
    /// compaction filters see every record.
    pub fn compact_all(&self) -> Result<(), EngineError> {
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, cf) = self.cf(place);
            db.flush_cf(cf)?;
            let mut opts = rocksdb::CompactOptions::default();
            opts.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
            db.compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &opts);
        }
        Ok(())
    }

    /// Writes and syncs every instance's write-ahead log, so every write
    /// applied so far survives a crash of the machine.
    pub fn sync_wal(&self) -> Result<(), EngineError> {
        for inst in &self.instances {
            inst.db.flush_wal(true)?;
        }
        Ok(())
    }

    /// Whether reads keep the blocks they load in the block cache (the
    /// default). A bulk read of the whole store (migration, verification)
    /// turns it off, so memory does not grow with the store's size.
    pub fn set_fill_cache(&self, fill: bool) {
        self.fill_cache.store(fill, Ordering::Relaxed);
    }

    /// Bytes held by every memtable of the store (active, and immutable
    /// ones not yet flushed).
    pub fn memtable_bytes(&self) -> Result<u64, EngineError> {
        self.property_sum("rocksdb.cur-size-all-mem-tables")
    }

    /// Asks RocksDB to flush every non-empty memtable in the background
    /// and returns at once (writes wait only if flushes fall behind).
    pub fn request_flush(&self) -> Result<(), EngineError> {
        let mut opts = rocksdb::FlushOptions::default();
        opts.set_wait(false);
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, cf) = self.cf(place);
            if db.property_int_value_cf(cf, "rocksdb.cur-size-active-mem-table")? > Some(0) {
                db.flush_cf_opt(cf, &opts)?;
            }
        }
        Ok(())
    }

    /// Flushes every memtable to disk.
    pub fn flush(&self) -> Result<(), EngineError> {
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, cf) = self.cf(place);
            db.flush_cf(cf)?;
        }
        Ok(())
    }

    /// Calls `visit(place, key, value)` for every stored pair: instances and
    /// column families in layout order, pairs in each family's own order.
    pub fn for_each_pair(
        &self,
        mut visit: impl FnMut(Place, &[u8], &[u8]) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, cf) = self.cf(place);
            let mut it = db.raw_iterator_cf(cf);
            it.seek_to_first();
            while let (Some(k), Some(v)) = (it.key(), it.value()) {
                visit(place, k, v)?;
                it.next();
            }
            it.status()?;
        }
        Ok(())
    }

    /// Writes every stored pair as `<instance>\t<column family>\t<key hex>\t<value hex>`,
    /// one per line, in [`Store::for_each_pair`] order.
    pub fn dump(&self, out: &mut dyn std::io::Write) -> Result<(), EngineError> {
        let layout = self.layout.clone();
        self.for_each_pair(|place, key, value| {
            let inst = &layout.instances[place.instance];
            writeln!(
                out,
                "{}\t{}\t{}\t{}",
                inst.dir,
                inst.column_families[place.cf].name,
                hex(key),
                hex(value)
            )?;
            Ok(())
        })
    }

    /// An integer RocksDB property summed over every column family.
    pub fn property_sum(&self, name: &str) -> Result<u64, EngineError> {
        let mut total = 0u64;
        for place in self.layout.places().collect::<Vec<_>>() {
            let (db, cf) = self.cf(place);
            total += db.property_int_value_cf(cf, name)?.unwrap_or(0);
        }
        Ok(total)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Compaction filters hold weak handles to their instance; stop
        // background work first so none of them outlives the database.
        for inst in &self.instances {
            inst.db.cancel_all_background_work(true);
        }
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn cf_handle<'a>(db: &'a DB, name: &str) -> &'a rocksdb::ColumnFamily {
    db.cf_handle(name)
        .expect("every column family of the layout is opened")
}

/// Refuses a directory that holds something other than this format's store.
fn check_directory(
    format: &str,
    layout: &Layout,
    dir: &Path,
    mode: OpenMode,
) -> Result<(), EngineError> {
    let has_instance = layout
        .instances
        .iter()
        .any(|i| dir.join(i.dir).join("CURRENT").exists());
    if has_instance {
        return Ok(());
    }
    if mode == OpenMode::MustExist {
        return Err(EngineError::Open(format!(
            "{} holds no {format} store (expected {})",
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
        return Err(EngineError::Open(format!(
            "{} is a file, not a directory",
            dir.display()
        )));
    }
    let occupied = std::fs::read_dir(dir)
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if occupied {
        return Err(EngineError::Open(format!(
            "{} is not empty and holds no {format} store; refusing to write into it",
            dir.display()
        )));
    }
    Ok(())
}

/// Pending writes of one command; written as one RocksDB write batch per
/// instance it touches.
#[derive(Default)]
pub struct Batch {
    pending: Vec<(Place, Op)>,
}

enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

impl Batch {
    /// Queues a put.
    pub fn put(&mut self, place: Place, key: Vec<u8>, value: Vec<u8>) {
        self.pending.push((place, Op::Put(key, value)));
    }

    /// Queues a delete.
    pub fn delete(&mut self, place: Place, key: Vec<u8>) {
        self.pending.push((place, Op::Delete(key)));
    }

    /// Queues a range delete of `[range.lower, range.upper)`.
    pub fn delete_range(&mut self, range: &KeyRange) {
        self.pending.push((
            range.place,
            Op::DeleteRange(range.lower.clone(), range.upper.clone()),
        ));
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// A stored key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);

/// A bounded iterator over one column family.
pub struct StoreIter<'a> {
    it: DBRawIterator<'a>,
    reverse: bool,
    started: bool,
}

impl StoreIter<'_> {
    /// The next pair, or `None` at the end of the range.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Pair>, EngineError> {
        if self.started {
            if self.reverse {
                self.it.prev();
            } else {
                self.it.next();
            }
        }
        self.started = true;
        match (self.it.key(), self.it.value()) {
            (Some(k), Some(v)) => Ok(Some((k.to_vec(), v.to_vec()))),
            _ => {
                self.it.status()?;
                Ok(None)
            }
        }
    }
}
