//! `migrate-bench --raw-copy-of DIR`: the floor of a migration into a
//! store of any size, measured on the store the migration wrote.
//!
//! Every pair of the store, each column family in its own order, is
//! written again into a new plain RocksDB: default options, one family
//! for each family of the layout (one database per instance), no
//! write-ahead log, write batches of the migration's size, and the
//! memtables flushed at the end (a write without a log is not on disk
//! before). That is what RocksDB itself spends to write those bytes,
//! with nothing decoded, encoded or sorted. The pairs are read ahead on
//! a thread of their own ([`Store::read_ahead`]), as a migration reads
//! its source on one; the reading is inside the time, as it is in a
//! migration's.
//!
//! The copy is written in a directory beside the store (on its file
//! system) and removed afterwards; the store is opened read-only.
//!
//! [`Store::read_ahead`]: redcodec_engine::store::Store::read_ahead

use std::path::Path;
use std::time::Instant;

use redcodec_engine::{Engine, EngineOptions, OpenMode};
use redcodec_formats::{Format, FormatOptions};
use redcodec_migrate::MigrateOptions;
use rocksdb::{Options, WriteBatch, WriteOptions, DB};

use crate::error::{fail, CompareError};

/// What a raw copy wrote and how long it took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RawCopy {
    /// Pairs written.
    pub records: u64,
    /// Their bytes (keys and values).
    pub bytes: u64,
    /// Seconds from the first read to the last flush.
    pub seconds: f64,
}

/// Copies every pair of the `format` store in `dir` into a plain RocksDB
/// beside it, timed (see the module's documentation).
pub fn raw_copy(format: Format, dir: &Path) -> Result<RawCopy, CompareError> {
    let engine = open_read_only(format, dir)?;
    let store = engine.store();
    let layout = store.layout().clone();
    let beside = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let scratch = tempfile::Builder::new()
        .prefix(".redcodec-raw-copy")
        .tempdir_in(beside)?;
    let mut options = Options::default();
    options.create_if_missing(true);
    options.create_missing_column_families(true);
    let dbs = layout
        .instances
        .iter()
        .enumerate()
        .map(|(i, instance)| {
            let names = instance.column_families.iter().map(|cf| cf.name);
            DB::open_cf(&options, scratch.path().join(i.to_string()), names)
                .map_err(|e| fail(format!("opening the raw copy: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let batch_size = MigrateOptions::default().batch_elements;
    let mut unlogged = WriteOptions::default();
    unlogged.disable_wal(true);
    let write = |db: &DB, batch: WriteBatch| {
        db.write_opt(batch, &unlogged)
            .map_err(|e| fail(format!("writing the raw copy: {e}")))
    };
    let mut copy = RawCopy::default();
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<(), CompareError> {
        for place in layout.places() {
            let db = &dbs[place.instance];
            let cf = family(db, layout.cf(place).name)?;
            let mut pairs = store.read_ahead(scope, place);
            let mut batch = WriteBatch::default();
            while let Some((key, value)) = pairs.next_ref()? {
                batch.put_cf(&cf, key, value);
                copy.records += 1;
                copy.bytes += (key.len() + value.len()) as u64;
                if batch.len() >= batch_size {
                    write(db, std::mem::take(&mut batch))?;
                }
            }
            if !batch.is_empty() {
                write(db, batch)?;
            }
        }
        Ok(())
    })?;
    for (db, instance) in dbs.iter().zip(&layout.instances) {
        for cf in &instance.column_families {
            db.flush_cf(&family(db, cf.name)?)
                .map_err(|e| fail(format!("flushing the raw copy: {e}")))?;
        }
    }
    copy.seconds = started.elapsed().as_secs_f64();
    drop(dbs);
    scratch.close()?;
    Ok(copy)
}

/// The column family `name` of one of the copy's databases.
fn family<'a>(db: &'a DB, name: &str) -> Result<&'a rocksdb::ColumnFamily, CompareError> {
    db.cf_handle(name)
        .ok_or_else(|| fail(format!("the raw copy has no column family {name}")))
}

/// The `format` store in `dir`, opened read-only with default options.
pub(super) fn open_read_only(
    format: Format,
    dir: &Path,
) -> Result<Engine<redcodec_formats::AnyCodec>, CompareError> {
    Ok(Engine::open(
        format.codec(&FormatOptions::default())?,
        dir,
        EngineOptions {
            mode: OpenMode::ReadOnly,
            ..EngineOptions::default()
        },
    )?)
}
