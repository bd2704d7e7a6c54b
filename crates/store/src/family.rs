//! Column family handles found once per family and kept with their
//! instance, instead of looked up by name at every read and write.
//!
//! RocksDB's own lookup (`cf_handle`) takes a lock shared by every thread
//! and counts a reference on the handle it returns: two atomic updates of
//! memory every core touches, twice, on every point read.

use std::sync::OnceLock;

use rocksdb::AsColumnFamilyRef;

use crate::db::Db;

/// A column family of an open database, as RocksDB's C API names it.
pub(crate) struct Family(*mut librocksdb_sys::rocksdb_column_family_handle_t);

// SAFETY: a column family handle is used by any number of threads at once
// in RocksDB's API (the `rocksdb` crate's own handles are Send and Sync);
// this one only carries the pointer.
unsafe impl Send for Family {}
// SAFETY: as for Send.
unsafe impl Sync for Family {}

impl AsColumnFamilyRef for Family {
    fn inner(&self) -> *mut librocksdb_sys::rocksdb_column_family_handle_t {
        self.0
    }
}

impl AsColumnFamilyRef for &Family {
    fn inner(&self) -> *mut librocksdb_sys::rocksdb_column_family_handle_t {
        self.0
    }
}

/// The families of one instance, by their index in the layout, each
/// found on first use.
///
/// A handle stays valid while its database is open and keeps the family:
/// the store never drops a family, and `Families` lives in the instance
/// beside its database, borrowed only with it.
pub(crate) struct Families(Vec<OnceLock<Family>>);

impl Families {
    /// Room for `count` families, none found yet.
    pub(crate) fn new(count: usize) -> Families {
        Families((0..count).map(|_| OnceLock::new()).collect())
    }

    /// The family `name` at `index` of `db`, the instance's database
    /// (`None` while it does not exist: one created on first write).
    pub(crate) fn get(&self, db: &Db, index: usize, name: &str) -> Option<&Family> {
        let slot = &self.0[index];
        if let Some(family) = slot.get() {
            return Some(family);
        }
        let cf = db.cf_handle(name)?;
        Some(slot.get_or_init(|| Family(cf.inner())))
    }
}
