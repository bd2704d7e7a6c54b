//! RocksDB stores beside a layout's instances that the layout does not
//! name — Pika 3.5 keeps streams in a sixth instance, `streams/`, next to
//! blackwidow's five. redcodec does not model them; it lists their keys so
//! that `check` and `migrate` name them instead of passing over them.

use std::path::Path;

use rocksdb::{ColumnFamilyDescriptor, Options};

use crate::db::Db;
use crate::error::StoreError;
use crate::store::Store;

/// The directories beside the store's instances (in its root) that hold a
/// RocksDB store the layout does not name, in name order.
pub fn foreign_instances(store: &Store) -> Vec<String> {
    let layout = store.layout();
    let Ok(entries) = std::fs::read_dir(store.root()) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(std::result::Result::ok)
        .filter(|e| e.path().join("CURRENT").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| !layout.instances.iter().any(|i| i.dir == name.as_str()))
        .collect();
    found.sort();
    found
}

/// Every key of the `default` family of the foreign instance `dir` (where
/// blackwidow-style layouts keep one metadata record per user key), read
/// through a secondary instance of its own: nothing in `dir` is written.
pub fn foreign_keys(store: &Store, dir: &str) -> Result<Vec<Vec<u8>>, StoreError> {
    let path = store.root().join(dir);
    let scratch = tempfile::Builder::new()
        .prefix("redcodec-foreign-")
        .tempdir()?;
    let mut opts = Options::default();
    opts.set_max_open_files(-1);
    let db = open_default(&opts, &path, scratch.path())?;
    let mut keys = Vec::new();
    let mut it = db.raw_iterator();
    it.seek_to_first();
    while let Some(key) = it.key() {
        keys.push(key.to_vec());
        it.next();
    }
    it.status()?;
    Ok(keys)
}

fn open_default(opts: &Options, path: &Path, scratch: &Path) -> Result<Db, StoreError> {
    let descriptors = [ColumnFamilyDescriptor::new("default", Options::default())];
    Db::open_cf_descriptors_as_secondary(opts, path, scratch, descriptors)
        .map_err(|e| StoreError::Open(format!("cannot read {}: {e}", path.display())))
}
