//! The bulk path's last two phases: each column family's runs merged into
//! SST files of about [`crate::MigrateOptions::bulk_file_bytes`], written
//! with the destination's table options; then every family's files
//! ingested (moved into the store). A checkpoint follows every file and
//! every family.

use std::cmp::Ordering;
use std::io;
use std::path::{Path, PathBuf};

use redcodec_codec::{Codec, Place};
use redcodec_engine::store::Order;

use crate::batches::{self, BatchLimits, BatchSender};

use super::runs::{run_path, Merge};
use super::state::Phase;
use super::{work_error, Halt, Job};

/// Bytes of keys and values per batch handed from the merge to the
/// table builder.
const BATCH_BYTES: usize = 1 << 20;

/// A merged record.
type Record = (Vec<u8>, Vec<u8>);

/// Merges on its own thread: sends the records after `after` (those a
/// resumed run wrote already), until the merge ends, fails (sent last),
/// or the receiver hangs up.
fn feed(
    mut merge: Merge,
    order: Order,
    mut after: Option<Vec<u8>>,
    mut tx: BatchSender<Record, io::Error>,
) {
    loop {
        let (key, value) = match merge.next() {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => return tx.fail(e),
        };
        if let Some(last) = &after {
            if order(&key, last) != Ordering::Greater {
                continue;
            }
            // The merge is in order: no later record is behind it.
            after = None;
        }
        let bytes = key.len() + value.len();
        if tx.push((key, value), [0, bytes]).is_err() {
            return;
        }
    }
    let _ = tx.flush();
}

/// SST file `n` of `place`.
fn sst_path(work: &Path, place: Place, n: u64) -> PathBuf {
    work.join(format!("sst-{}-{}-{n:06}.sst", place.instance, place.cf))
}

/// The SST files of `place` still in the work directory, in order.
fn sst_files(work: &Path, place: Place) -> Vec<PathBuf> {
    (0..)
        .map(|n| sst_path(work, place, n))
        .take_while(|p| p.exists())
        .collect()
}

impl<A: Codec, B: Codec + Clone> Job<'_, A, B> {
    /// Merges every family's runs into SST files.
    pub(super) fn merge(&mut self) -> Result<(), Halt> {
        let store = self.dst.store();
        let places: Vec<Place> = store.layout().places().collect();
        for (index, &place) in places.iter().enumerate().skip(self.state.place) {
            let runs: Vec<PathBuf> = (0..self.state.runs)
                .map(|run| run_path(&self.work, run, place))
                .filter(|p| p.exists())
                .collect();
            if !runs.is_empty() {
                self.merge_family(place, &runs)?;
            }
            self.state.place = index + 1;
            self.state.files = 0;
            self.state.last = None;
            self.save()?;
            for run in runs {
                std::fs::remove_file(&run).map_err(|e| work_error(&self.work, e))?;
            }
        }
        self.state.phase = Phase::Ingest;
        self.save()?;
        Ok(())
    }

    /// Writes the SST files of `place` from its runs, after those a
    /// resumed run finds written. The runs are merged on a thread of
    /// their own, which hands the records over in batches ([`feed`]):
    /// merging and building tables (blocks, filters, compression) each
    /// take about half the time.
    fn merge_family(&mut self, place: Place, runs: &[PathBuf]) -> Result<(), Halt> {
        let store = self.dst.store();
        let order = store.order(place);
        let work_err = |e| work_error(&self.work, e);
        let merge = Merge::open(runs, order, self.state.voids.clone()).map_err(work_err)?;
        // Files past the last one checkpointed are written again.
        let mut n = self.state.files;
        while sst_path(&self.work, place, n).exists() {
            std::fs::remove_file(sst_path(&self.work, place, n)).map_err(work_err)?;
            n += 1;
        }
        let after = self.state.last.clone();
        let target = self.options.bulk_file_bytes.max(1);
        std::thread::scope(|scope| {
            let (tx, mut records) = batches::channel(BatchLimits {
                items: usize::MAX,
                loads: [usize::MAX, BATCH_BYTES],
            });
            scope.spawn(move || feed(merge, order, after, tx));
            // Owned here: returning drops the receiver, so the feeder
            // stops (the scope waits for it).
            let mut next = records.next().map_err(|e| work_error(&self.work, e))?;
            while next.is_some() {
                let path = sst_path(&self.work, place, self.state.files);
                let (last, written) = store.write_sst(place, &path, |sst| {
                    let mut last = None;
                    while let Some((key, value)) = next.take() {
                        sst.put(&key, &value)?;
                        last = Some(key);
                        next = records.next()?;
                        if sst.file_size() >= target {
                            break;
                        }
                    }
                    Ok(last)
                })?;
                if written {
                    self.state.files += 1;
                    self.state.last = last;
                    self.checkpointed()?;
                }
            }
            Ok(())
        })
    }

    /// Ingests every family's SST files.
    pub(super) fn ingest(&mut self) -> Result<(), Halt> {
        let store = self.dst.store();
        let places: Vec<Place> = store.layout().places().collect();
        for (index, &place) in places.iter().enumerate().skip(self.state.ingested) {
            // Files an interrupted ingestion moved already are gone.
            let files = sst_files(&self.work, place);
            store.ingest(place, &files)?;
            self.state.ingested = index + 1;
            if !files.is_empty() {
                self.checkpointed()?;
            }
        }
        Ok(())
    }
}
