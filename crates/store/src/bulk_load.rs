//! Loading a store in bulk: a batch's writes read back as plain
//! operations, sorted SST files written with the options the store writes
//! its own tables with (its `--compat` table format, checksum and
//! compression, the family's comparator), and those files ingested.
//!
//! The migration's bulk path ([`Batch`]es captured, sorted outside, then
//! [`Store::write_sst`] and [`Store::ingest`]) is the only user.

use std::path::{Path, PathBuf};

use redcodec_codec::Place;
use rocksdb::{IngestExternalFileOptions, SstFileWriter};

use crate::batch::{Batch, Op};
use crate::error::StoreError;
use crate::store::{family_options, Store};

/// One write of a [`Batch`], as [`batch_writes`] hands it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Put `key` to `value`.
    Put(Vec<u8>, Vec<u8>),
    /// Delete `key`.
    Delete(Vec<u8>),
    /// Delete the keys from the first (inclusive) to the second
    /// (exclusive), in the family's order.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// The writes `batch` queues, in the order they were queued.
pub fn batch_writes(batch: Batch) -> Vec<(Place, Write)> {
    batch
        .pending
        .into_iter()
        .map(|(place, op)| {
            let write = match op {
                Op::Put(k, v) => Write::Put(k, v),
                Op::Delete(k) => Write::Delete(k),
                Op::DeleteRange(a, b) => Write::DeleteRange(a, b),
            };
            (place, write)
        })
        .collect()
}

/// An SST file being written for one column family of a store
/// ([`Store::write_sst`]): keys must come in the family's order, each
/// once.
pub struct SstWriter<'a> {
    writer: SstFileWriter<'a>,
    records: u64,
}

impl SstWriter<'_> {
    /// Appends a record (its key after every earlier one).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.writer.put(key, value)?;
        self.records += 1;
        Ok(())
    }

    /// Records put so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The file's size so far, in bytes.
    pub fn file_size(&self) -> u64 {
        self.writer.file_size()
    }
}

impl Store {
    /// Writes the SST file `path` for the column family at `place`: `fill`
    /// puts its records, in the family's order; the file is finished when
    /// it returns. The table options are the ones the store writes its own
    /// files with (`--compat`'s format version, checksum and compression of
    /// the last level, the family's comparator). A file `fill` put nothing
    /// in is not written (`Ok(false)`).
    pub fn write_sst<T>(
        &self,
        place: Place,
        path: &Path,
        fill: impl FnOnce(&mut SstWriter<'_>) -> Result<T, StoreError>,
    ) -> Result<(T, bool), StoreError> {
        let spec = &self.layout().instances[place.instance].column_families[place.cf];
        let mut opts = family_options(self.options().compat, spec.merge, None);
        if let Some(cmp) = spec.comparator {
            opts.set_comparator(cmp.name, Box::new(cmp.compare));
        }
        let writer = SstFileWriter::create(&opts);
        writer.open(path)?;
        let mut writer = SstWriter { writer, records: 0 };
        let out = fill(&mut writer)?;
        if writer.records == 0 {
            drop(writer);
            let _ = std::fs::remove_file(path);
            return Ok((out, false));
        }
        writer.writer.finish()?;
        Ok((out, true))
    }

    /// Ingests the SST files `files` (written by [`Store::write_sst`] for
    /// `place`, on the store's file system) into the column family at
    /// `place`, creating the family if it is created on first write. The
    /// files are moved (linked), not copied.
    pub fn ingest(&self, place: Place, files: &[PathBuf]) -> Result<(), StoreError> {
        if files.is_empty() {
            return Ok(());
        }
        let cf = self.cf_for_write(place)?;
        let mut opts = IngestExternalFileOptions::default();
        opts.set_move_files(true);
        let ingested = self
            .instance_db(place.instance)
            .ingest_external_file_cf_opts(&cf, &opts, files.to_vec());
        // The files' records replace any the read cache holds.
        self.clear_read_cache();
        Ok(ingested?)
    }
}
