//! A store of any format as an RDB file that redis-server loads
//! ([`export`]), and an RDB file redis-server wrote as a store of any
//! format ([`import`]), on [`crate::rdb_file`].
//!
//! Databases map as `SELECT` maps them on `redcodec serve`: on a format
//! whose namespaces are column families (ardb), database `n` is namespace
//! `n`; on any other format, database 0 is the store (kvrocks: the
//! namespace the spec names, `__namespace` by default) and keys of other
//! databases are left out, counted and reported.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use redcodec_codec::{Codec, Namespaces};
use redcodec_engine::{Engine, OpenMode};
use redcodec_formats::AnyCodec;
use redcodec_rdb::file_reader::{validate, Entry};
use redcodec_rdb::file_writer::FileInfo;

use crate::bulk::first_record;
use crate::rdb_file::{self, Exported, Exporter, Loaded};
use crate::store_spec::{SpecError, StoreSpec};

/// Databases an RDB file holds (and `SELECT` takes).
const DATABASES: u64 = 16;

/// Why an export or an import failed.
#[derive(Debug, thiserror::Error)]
pub enum RdbStoreError {
    /// The store could not be named or opened.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// Reading or writing a file.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file, or the destination, is not what it must be.
    #[error("{0}")]
    Failed(String),
}

impl From<redcodec_engine::store::StoreError> for RdbStoreError {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        RdbStoreError::Spec(e.into())
    }
}

fn fail(message: String) -> RdbStoreError {
    RdbStoreError::Failed(message)
}

/// Whether database indexes are namespaces on this store's format.
pub fn databases_are_namespaces(store: &StoreSpec) -> Result<bool, SpecError> {
    Ok(matches!(
        store.codec()?.capabilities().namespaces,
        Namespaces::ColumnFamily
    ))
}

/// The databases of an export: each with the store it is read from.
#[derive(Debug)]
pub struct Databases {
    /// Database index and store, in index order.
    pub parts: Vec<(u32, StoreSpec)>,
    /// Namespaces that are not a database index (0-15): left out.
    pub left_out: Vec<String>,
}

/// The databases `store` exports: one per namespace where namespaces are
/// databases, database 0 otherwise.
pub fn databases(store: &StoreSpec) -> Result<Databases, SpecError> {
    if !databases_are_namespaces(store)? {
        return Ok(Databases {
            parts: vec![(0, store.clone())],
            left_out: Vec::new(),
        });
    }
    let mut parts = Vec::new();
    let mut left_out = Vec::new();
    for spec in store.each_namespace()? {
        let name = spec.namespace.clone().unwrap_or_else(|| "0".into());
        match name.parse::<u32>() {
            Ok(db) if u64::from(db) < DATABASES => parts.push((db, spec)),
            _ => left_out.push(name),
        }
    }
    parts.sort_by_key(|(db, _)| *db);
    Ok(Databases { parts, left_out })
}

/// Writes `parts` (see [`databases`]) as the RDB file `rdb`: aside first
/// (`.rdb.part`), synced, renamed once complete.
pub fn export(parts: &[(u32, StoreSpec)], rdb: &Path) -> Result<Exported, RdbStoreError> {
    let aside = rdb.with_extension("rdb.part");
    let ctime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut export = Exporter::new(BufWriter::new(File::create(&aside)?), &FileInfo::new(ctime))
        .map_err(|e| fail(e.to_string()))?;
    for (db, store) in parts {
        let engine = store.open(OpenMode::ReadOnly, None)?;
        export
            .database(*db, &engine)
            .map_err(|e| fail(e.to_string()))?;
    }
    let (out, counts) = export.finish().map_err(|e| fail(e.to_string()))?;
    let file = out
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    file.sync_all()?;
    std::fs::rename(&aside, rdb)?;
    Ok(counts)
}

/// What an import read and wrote.
#[derive(Debug)]
pub struct Imported {
    /// Keys the file holds.
    pub keys: u64,
    /// What was loaded, left out and refused.
    pub loaded: Loaded,
    /// Whether database indexes were namespaces (the databases left out
    /// are then 16 and above; otherwise all but 0).
    pub by_namespace: bool,
}

/// The engine of the database being loaded, reopened when the file moves
/// to another database (one store is open at a time).
struct Loader<'a> {
    store: &'a StoreSpec,
    by_namespace: bool,
    open: Option<(u64, Engine<AnyCodec>)>,
    failed: Option<SpecError>,
    /// The keys written so far, when the one store (not by namespace) held
    /// no record at all before the import: keys are then written as a
    /// replica's full copy writes them ([`rdb_file::load_fresh_batch`]).
    fresh: Option<rdb_file::FreshKeys>,
}

impl Loader<'_> {
    fn write(&mut self, db: u64, entries: &mut [Entry], loaded: &mut Loaded) {
        if entries.is_empty() || self.failed.is_some() {
            return;
        }
        if !self.by_namespace && db != 0 || db >= DATABASES {
            loaded.skipped += entries.len() as u64;
            return;
        }
        if self.open.as_ref().is_none_or(|(at, _)| *at != db) {
            self.open = None;
            let store = if self.by_namespace {
                self.store.in_namespace(db.to_string())
            } else {
                self.store.clone()
            };
            match store.open(OpenMode::CreateIfMissing, None) {
                Ok(engine) => self.open = Some((db, engine)),
                Err(e) => {
                    self.failed = Some(e);
                    return;
                }
            }
        }
        if let Some((_, engine)) = &self.open {
            match &mut self.fresh {
                Some(keys) => rdb_file::load_fresh_batch(engine, entries, loaded, keys, b""),
                None => rdb_file::load_batch(engine, entries, loaded),
            }
        }
    }
}

/// Reads the RDB file `rdb` into `store`: the whole file is checked first
/// (checksum included), so a bad file changes nothing; the destination
/// must hold no key. Into a store that holds no record at all (a new one),
/// keys are written as a replica's full copy writes them: no read of a
/// key's state, sorted batches, out of the write-ahead log, the store
/// flushed at the end (an import cut short leaves part of the file, as
/// on the logged path, and is started again into a new directory).
pub fn import(rdb: &Path, store: &StoreSpec) -> Result<Imported, RdbStoreError> {
    let open = || -> Result<BufReader<File>, RdbStoreError> {
        File::open(rdb)
            .map(|f| BufReader::with_capacity(1 << 20, f))
            .map_err(|e| fail(format!("{}: {e}", rdb.display())))
    };
    let keys = validate(open()?)
        .map_err(|e| fail(format!("{}: {e}; nothing was written", rdb.display())))?;
    let by_namespace = databases_are_namespaces(store)?;
    let targets = if by_namespace {
        (0..DATABASES)
            .map(|db| store.in_namespace(db.to_string()))
            .collect()
    } else {
        vec![store.clone()]
    };
    let mut no_record = true;
    for target in &targets {
        no_record &= refuse_keys(target)?;
    }
    let fresh = (!by_namespace && no_record).then(|| rdb_file::FreshKeys::for_keys(keys));
    let batch_keys = if fresh.is_some() {
        rdb_file::FRESH_BATCH_KEYS
    } else {
        rdb_file::BATCH_KEYS
    };
    let mut loader = Loader {
        store,
        by_namespace,
        open: None,
        failed: None,
        fresh,
    };
    let loaded = rdb_file::import_in_batches(open()?, batch_keys, |db, entries, loaded| {
        loader.write(db, entries, loaded);
    })
    .map_err(|e| fail(e.to_string()))?;
    if let Some(e) = loader.failed {
        return Err(e.into());
    }
    let mut loaded = loaded;
    if let Some((_, engine)) = loader.open.take() {
        if let Some(keys) = &mut loader.fresh {
            rdb_file::load_held(&engine, &mut loaded, keys, b"");
        }
        engine.store().flush()?;
    }
    Ok(Imported {
        keys,
        loaded,
        by_namespace,
    })
}

/// Refuses a destination that already holds keys; otherwise says whether
/// it holds no record at all (a directory not made yet, or empty, or a
/// store with nothing but the format's bootstrap records).
fn refuse_keys(target: &StoreSpec) -> Result<bool, RdbStoreError> {
    let Ok(mut files) = std::fs::read_dir(&target.dir) else {
        return Ok(!target.dir.exists());
    };
    let empty_dir = files.next().is_none();
    let Ok(engine) = target.open(OpenMode::ReadOnly, None) else {
        return Ok(empty_dir);
    };
    if engine.execute(&["DBSIZE"]).to_string() == "(integer) 0" {
        return Ok(matches!(first_record(&engine), Ok(None)));
    }
    Err(fail(format!(
        "the destination already holds keys{}: import into an empty store",
        target
            .namespace
            .as_ref()
            .map(|ns| format!(" (namespace {ns})"))
            .unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(format: &str, dir: &Path) -> StoreSpec {
        StoreSpec {
            format: format.into(),
            dir: dir.to_path_buf(),
            fixed_clock: None,
            namespace: None,
            cluster: false,
            block_cache_bytes: redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES,
            read_cache_bytes: 0,
        }
    }

    #[test]
    fn a_store_goes_through_an_rdb_file_into_another_format_once() {
        let tmp = tempfile::tempdir().unwrap();
        let src = spec("kvrocks", &tmp.path().join("src"));
        let engine = src.open(OpenMode::CreateIfMissing, None).unwrap();
        engine.execute(&["SET", "s", "v"]);
        engine.execute(&["HSET", "h", "f", "v", "g", "w"]);
        engine.execute(&["ZADD", "z", "1.5", "m"]);
        drop(engine);
        let databases = databases(&src).unwrap();
        assert_eq!(databases.parts.len(), 1);
        assert!(databases.left_out.is_empty());
        let rdb = tmp.path().join("dump.rdb");
        let exported = export(&databases.parts, &rdb).unwrap();
        assert_eq!(exported.keys, 3);
        assert!(!tmp.path().join("dump.rdb.part").exists());

        let dst = spec("blackwidow", &tmp.path().join("dst"));
        let imported = import(&rdb, &dst).unwrap();
        assert_eq!((imported.keys, imported.loaded.keys), (3, 3));
        assert!(!imported.by_namespace);
        let engine = dst.open(OpenMode::ReadOnly, None).unwrap();
        assert_eq!(engine.execute(&["HGET", "h", "g"]).to_string(), "\"w\"");
        assert_eq!(engine.execute(&["ZSCORE", "z", "m"]).to_string(), "\"1.5\"");
        drop(engine);
        let again = import(&rdb, &dst).unwrap_err();
        assert_eq!(
            again.to_string(),
            "the destination already holds keys: import into an empty store"
        );
        let missing = import(&tmp.path().join("none.rdb"), &dst).unwrap_err();
        assert!(missing.to_string().contains("none.rdb: "), "{missing}");
    }
}
