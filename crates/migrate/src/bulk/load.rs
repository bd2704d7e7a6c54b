//! The bulk path's last two phases: each column family's runs merged into
//! SST files of about [`crate::MigrateOptions::bulk_file_bytes`], written
//! with the destination's table options, [`FAMILIES_AT_ONCE`] families at
//! a time; then every family's files ingested (moved into the store). A
//! checkpoint follows every file of the first family not yet done, every
//! family done, and every family ingested.

use std::cmp;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use redcodec_codec::{Codec, Place};
use redcodec_engine::store::{Order, Store};

use crate::batches::{self, BatchLimits, BatchSender};
use crate::error::MigrateError;

use super::runs::{run_path, Merge, Voids};
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
            if order(&key, last) != cmp::Ordering::Greater {
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

/// Families whose SST files are written at once.
const FAMILIES_AT_ONCE: usize = 2;

/// One family to write: its index in the layout's order, its place and
/// run files, and the files a resumed run finds written already (with
/// the last key in them).
struct FamilyJob {
    index: usize,
    place: Place,
    runs: Vec<PathBuf>,
    files: u64,
    last: Option<Vec<u8>>,
}

/// What a family's writer reports to the thread that keeps the
/// checkpoint.
enum Report {
    /// Job `job` has written `files` SST files, the last ending at `last`.
    File {
        job: usize,
        files: u64,
        last: Option<Vec<u8>>,
    },
    /// Job `job` has written all its files.
    Done { job: usize },
    /// Job `job` failed.
    Failed(MigrateError),
}

/// Writes the SST files of `job.place` from its runs, after those a
/// resumed run found written, reporting each file. The runs are merged
/// on a thread of their own, which hands the records over in batches
/// ([`feed`]): merging and building tables (blocks, filters,
/// compression) each take about half the time. Stops between files once
/// `stop` is set.
fn write_family(
    store: &Store,
    work: &Path,
    job: &FamilyJob,
    voids: &Voids,
    target: u64,
    stop: &AtomicBool,
    report: impl Fn(u64, Option<Vec<u8>>) -> bool,
) -> Result<(), MigrateError> {
    let place = job.place;
    let order = store.order(place);
    let work_err = |e| work_error(work, e);
    let merge = Merge::open(&job.runs, order, voids.clone()).map_err(work_err)?;
    // Files past the last one checkpointed are written again.
    let mut n = job.files;
    while sst_path(work, place, n).exists() {
        std::fs::remove_file(sst_path(work, place, n)).map_err(work_err)?;
        n += 1;
    }
    let after = job.last.clone();
    let mut files = job.files;
    std::thread::scope(|scope| {
        let (tx, mut records) = batches::channel(BatchLimits {
            items: usize::MAX,
            loads: [usize::MAX, BATCH_BYTES],
        });
        scope.spawn(move || feed(merge, order, after, tx));
        // Owned here: returning drops the receiver, so the feeder stops
        // (the scope waits for it).
        let mut next = records.next().map_err(work_err)?;
        while next.is_some() && !stop.load(Ordering::Relaxed) {
            let path = sst_path(work, place, files);
            let (last, written) = store
                .write_sst(place, &path, |sst| {
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
                })
                .map_err(MigrateError::from)?;
            if written {
                files += 1;
                if !report(files, last) {
                    break;
                }
            }
        }
        Ok(())
    })
}

impl<A: Codec, B: Codec + Clone> Job<'_, A, B> {
    /// Merges every family's runs into SST files, [`FAMILIES_AT_ONCE`]
    /// families at a time. The checkpoint follows the first family not
    /// yet done (the lead): a file of a later family counts once every
    /// family before it is done, and a run interrupted before that
    /// writes that family's files again.
    pub(super) fn merge(&mut self) -> Result<(), Halt> {
        let store = self.dst.store();
        let places: Vec<Place> = store.layout().places().collect();
        let mut jobs = Vec::new();
        for (index, &place) in places.iter().enumerate().skip(self.state.place) {
            let runs: Vec<PathBuf> = (0..self.state.runs)
                .map(|run| run_path(&self.work, run, place))
                .filter(|p| p.exists())
                .collect();
            let (files, last) = if index == self.state.place {
                (self.state.files, self.state.last.clone())
            } else {
                (0, None)
            };
            jobs.push(FamilyJob {
                index,
                place,
                runs,
                files,
                last,
            });
        }
        let target = self.options.bulk_file_bytes.max(1);
        let voids = self.state.voids.clone();
        let work = self.work.clone();
        let next_job = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let outcome = std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<Report>();
            for _ in 0..FAMILIES_AT_ONCE.min(jobs.len()) {
                let (tx, jobs, voids, work) = (tx.clone(), &jobs, &voids, &work);
                let (next_job, stop) = (&next_job, &stop);
                scope.spawn(move || loop {
                    let j = next_job.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(j) else { return };
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let report = |files, last| {
                        tx.send(Report::File {
                            job: j,
                            files,
                            last,
                        })
                        .is_ok()
                    };
                    let done = if job.runs.is_empty() {
                        Ok(())
                    } else {
                        write_family(store, work, job, voids, target, stop, report)
                    };
                    let sent = match done {
                        Ok(()) => tx.send(Report::Done { job: j }),
                        Err(e) => tx.send(Report::Failed(e)),
                    };
                    if sent.is_err() {
                        return;
                    }
                });
            }
            drop(tx);
            let outcome = self.follow(&jobs, &rx);
            // Whatever ended it, the writers stop at their next file.
            stop.store(true, Ordering::Relaxed);
            outcome
        });
        outcome?;
        self.state.phase = Phase::Ingest;
        self.save()?;
        Ok(())
    }

    /// Keeps the checkpoint as the families' writers report, until every
    /// family is done. Each SST file counts once (the observer is asked
    /// once per file, whichever writer made it): the lead's as it is
    /// written, a later family's once it becomes the lead.
    fn follow(&mut self, jobs: &[FamilyJob], rx: &mpsc::Receiver<Report>) -> Result<(), Halt> {
        let mut progress: Vec<(u64, Option<Vec<u8>>)> =
            jobs.iter().map(|j| (j.files, j.last.clone())).collect();
        // Files a resumed run finds were counted by the run before.
        let mut counted: Vec<u64> = jobs.iter().map(|j| j.files).collect();
        let mut done = vec![false; jobs.len()];
        let mut lead = 0;
        loop {
            if lead < jobs.len() && progress[lead].0 > counted[lead] {
                (self.state.files, self.state.last) = progress[lead].clone();
                self.save()?;
                while counted[lead] < progress[lead].0 {
                    counted[lead] += 1;
                    self.counted()?;
                }
            }
            if lead < jobs.len() && done[lead] {
                // The lead is done: counted, its runs removed; the next
                // family's files written so far count next.
                self.state.place = jobs[lead].index + 1;
                lead += 1;
                (self.state.files, self.state.last) = match progress.get(lead) {
                    Some(p) => p.clone(),
                    None => (0, None),
                };
                self.save()?;
                for run in &jobs[lead - 1].runs {
                    std::fs::remove_file(run).map_err(|e| work_error(&self.work, e))?;
                }
                continue;
            }
            if lead == jobs.len() {
                return Ok(());
            }
            let report = rx.recv().map_err(|_| {
                work_error(
                    &self.work,
                    io::Error::other("a bulk merge's writer ended without a word"),
                )
            })?;
            match report {
                Report::File { job, files, last } => progress[job] = (files, last),
                Report::Done { job } => done[job] = true,
                Report::Failed(e) => return Err(Halt::Failed(e)),
            }
        }
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
