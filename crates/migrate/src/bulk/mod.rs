//! The bulk path: a migration into an empty destination that writes no
//! batch to it. The destination's own engine code makes every record
//! (an engine of the destination's format over a [`capture::Capture`]
//! store, fed by the same reader and [`Sink`] as the write path), so the
//! records are the bytes the write path writes. They are sorted outside
//! memory ([`runs`]: sorted runs spilled past a bounded buffer, then a
//! k-way merge per column family, in the family's comparator order),
//! written as SST files with the destination's table options and
//! ingested ([`load`]).
//!
//! Checkpoints (the write path's file, with a `bulk` line, [`state`]):
//! after every run spilled (once its file is written: runs are written on
//! a thread of their own while the next buffer fills), every SST file
//! written and every family ingested. A resumed run reads the source
//! again after the last key whose records are all in runs, voids the
//! records a key cut by the last spill left, and continues the phase it
//! was in.

mod capture;
mod load;
mod runs;
mod scratch;
mod state;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use redcodec_codec::{Codec, DataType};
use redcodec_engine::error::{CmdError, EngineError};
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

use crate::checkpoint::{checkpoint_error, dir_bytes, remove_checkpoint, Checkpoint};
use crate::error::MigrateError;
use crate::options::{Bulk, MigrateOptions, OnUnrepresentable, TypeConflict};
use crate::reader::{self, Item};
use crate::report::{Flow, MigrateReport, Observer, Outcome, Skipped, Tally};
use crate::represent::Unrepresentable;
use crate::sink::Sink;
use crate::source::Limits;
use capture::Capture;
use state::{BulkState, Phase};

/// The most a chunk read from a big key holds (as the write path's).
const CHUNK: Limits = Limits {
    elements: 1024,
    bytes: 1 << 20,
};

/// Whether the migration of `src` into `dst` takes the bulk path: the
/// checkpoint of an interrupted one says which path it took; else
/// [`MigrateOptions::bulk`] and whether the destination holds records.
pub(crate) fn chosen<B: Codec>(
    dst: &Engine<B>,
    options: &MigrateOptions,
) -> Result<bool, MigrateError> {
    if let Some(path) = options.checkpoint.as_ref().filter(|p| p.exists()) {
        if !options.resume {
            return Err(MigrateError::CheckpointPresent {
                path: path.display().to_string(),
            });
        }
        // A checkpoint that does not load: the write path says why.
        let bulk = Checkpoint::load(path).is_ok_and(|cp| cp.bulk.is_some());
        return match (bulk, options.bulk) {
            (true, Bulk::Never) => Err(checkpoint_error(
                path,
                "it records a bulk migration: resume it without --no-bulk".into(),
            )),
            (false, Bulk::Always) => Err(checkpoint_error(
                path,
                "it records a migration on the write path: resume it without --bulk".into(),
            )),
            (bulk, _) => Ok(bulk),
        };
    }
    if options.bulk == Bulk::Never {
        return Ok(false);
    }
    match (first_record(dst)?, options.bulk) {
        (None, _) => Ok(true),
        (Some(key), Bulk::Always) => Err(MigrateError::BulkNotEmpty {
            key: quote_bytes(&key),
        }),
        (Some(_), _) => Ok(false),
    }
}

/// The key of a record of `dst` other than the format's bootstrap
/// records (`None`: the destination is empty).
pub(crate) fn first_record<B: Codec>(dst: &Engine<B>) -> Result<Option<Vec<u8>>, MigrateError> {
    let bootstrap = dst.codec().bootstrap_records();
    let store = dst.store();
    for place in store.layout().places().collect::<Vec<_>>() {
        let mut it = store.scan_family(place);
        while let Some((key, _)) = it.next().map_err(EngineError::from)? {
            if !bootstrap
                .iter()
                .any(|(r, _)| r.place == place && r.key == key)
            {
                return Ok(Some(key));
            }
        }
    }
    Ok(None)
}

/// Migrates `src` into the empty `dst` on the bulk path (both locked).
pub(crate) fn migrate<A: Codec, B: Codec + Clone>(
    src: &Engine<A>,
    dst: &Engine<B>,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<MigrateReport, MigrateError> {
    let mut job = Job::start(src, dst, options, observer)?;
    let mut outcome = job.run();
    // A run still being written (the reading failed) is waited for, and
    // kept.
    if let Err(Halt::Failed(e)) = job.land(Landed::Save) {
        outcome = outcome.and(Err(Halt::Failed(e)));
    }
    if options.checkpoint.is_none() {
        // Nothing can resume it: the work directory goes either way.
        let _ = std::fs::remove_dir_all(&job.work);
    }
    match outcome {
        Ok(()) => {}
        Err(Halt::Stopped) => return Ok(job.report(Outcome::Stopped)),
        Err(Halt::Failed(e)) => {
            if job.resumed_after.is_none() && job.state.runs == 0 {
                // Nothing was kept: as the write path's refusal before
                // its first commit, the run leaves no trace.
                let _ = std::fs::remove_dir_all(&job.work);
                if let Some(path) = &options.checkpoint {
                    remove_checkpoint(path)?;
                }
            }
            return Err(e);
        }
    }
    dst.set_version_counter(job.done.counter);
    std::fs::remove_dir_all(&job.work).map_err(|e| work_error(&job.work, e))?;
    if let Some(path) = &options.checkpoint {
        remove_checkpoint(path)?;
    }
    Ok(job.report(Outcome::Completed))
}

/// Why a phase ended early.
enum Halt {
    Stopped,
    Failed(MigrateError),
}

impl From<MigrateError> for Halt {
    fn from(e: MigrateError) -> Halt {
        Halt::Failed(e)
    }
}

impl From<CmdError> for Halt {
    fn from(e: CmdError) -> Halt {
        Halt::Failed(e.into())
    }
}

impl From<redcodec_engine::store::StoreError> for Halt {
    fn from(e: redcodec_engine::store::StoreError) -> Halt {
        Halt::Failed(e.into())
    }
}

/// The last source key whose records are all in runs, and what had been
/// done by then.
#[derive(Clone, Debug, Default)]
struct Done {
    key: Option<Vec<u8>>,
    counter: u64,
    tally: Tally,
    expired: u64,
}

/// One bulk migration.
struct Job<'a, A: Codec, B: Codec> {
    src: &'a Engine<A>,
    dst: &'a Engine<B>,
    options: &'a MigrateOptions,
    observer: &'a mut dyn Observer,
    /// Run and SST files (beside the checkpoint, on the destination's
    /// file system: ingestion moves the files).
    work: PathBuf,
    state: BulkState,
    done: Done,
    skipped: Vec<Skipped>,
    skipped_keys: HashSet<Vec<u8>>,
    first_of_several: Vec<Skipped>,
    resumed_after: Option<Option<Vec<u8>>>,
    /// Checkpoints written by this run.
    commits: u64,
    /// The run being written, if any.
    spilling: Option<Spilling>,
    /// The source's size on disk, once summed (for the runs' encoding).
    source_bytes: Option<u64>,
}

/// What follows a run's landing ([`Job::land`]).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Landed {
    /// Nothing: the caller saves a later checkpoint.
    Wait,
    /// The checkpoint that counts the run is saved.
    Save,
    /// The checkpoint is saved, counted, and the observer asked whether
    /// to go on.
    Count,
}

/// A run being written on a thread of its own, and the checkpoint that
/// counts it once it is.
struct Spilling {
    thread: std::thread::JoinHandle<std::io::Result<()>>,
    state: BulkState,
    done: Done,
    skipped: Vec<Skipped>,
}

impl<'a, A: Codec, B: Codec + Clone> Job<'a, A, B> {
    /// A fresh bulk migration, or the one the checkpoint records.
    fn start(
        src: &'a Engine<A>,
        dst: &'a Engine<B>,
        options: &'a MigrateOptions,
        observer: &'a mut dyn Observer,
    ) -> Result<Job<'a, A, B>, MigrateError> {
        let work = match &options.checkpoint {
            Some(path) => {
                let mut name = path.as_os_str().to_owned();
                name.push(".bulk");
                PathBuf::from(name)
            }
            None => dst.store().root().join("redcodec-migrate.bulk"),
        };
        let mut job = Job {
            src,
            dst,
            options,
            observer,
            work,
            state: BulkState::fresh(),
            done: Done {
                counter: dst.version_counter(),
                ..Done::default()
            },
            skipped: Vec::new(),
            skipped_keys: HashSet::new(),
            first_of_several: Vec::new(),
            resumed_after: None,
            commits: 0,
            spilling: None,
            source_bytes: None,
        };
        match options.checkpoint.as_ref().filter(|p| p.exists()) {
            Some(path) => job.resume(&path.clone())?,
            None => {
                if job.work.exists() {
                    std::fs::remove_dir_all(&job.work).map_err(|e| work_error(&job.work, e))?;
                }
                std::fs::create_dir_all(&job.work).map_err(|e| work_error(&job.work, e))?;
                job.save()?;
            }
        }
        Ok(job)
    }

    /// Picks up the interrupted migration the checkpoint at `path` records.
    fn resume(&mut self, path: &Path) -> Result<(), MigrateError> {
        let cp = Checkpoint::load(path).map_err(|reason| checkpoint_error(path, reason))?;
        let (src_name, dst_name) = (self.src.codec().name(), self.dst.codec().name());
        let here = dir_bytes(self.src.store().root());
        if cp.source_format != src_name
            || cp.destination_format != dst_name
            || cp.source_dir != here
        {
            return Err(checkpoint_error(
                path,
                format!(
                    "it records a migration from {} ({}) to {}, not from {src_name} ({}) to {dst_name}",
                    cp.source_format,
                    String::from_utf8_lossy(&cp.source_dir),
                    cp.destination_format,
                    String::from_utf8_lossy(&here),
                ),
            ));
        }
        let text = cp.bulk.as_deref().unwrap_or_default();
        let mut state = BulkState::decode(text).map_err(|reason| checkpoint_error(path, reason))?;
        if !self.work.is_dir() {
            return Err(checkpoint_error(
                path,
                format!("its work directory {} is missing", self.work.display()),
            ));
        }
        if state.phase == Phase::Sort {
            // Records a spill wrote after the last whole key belong to
            // a key that is read again: void.
            if state.complete < state.seq {
                state.voids.0.push((state.complete, state.seq));
            }
            state.complete = state.seq;
            runs::remove_runs_from(&self.work, state.runs)
                .map_err(|e| work_error(&self.work, e))?;
        }
        self.state = state;
        self.done = Done {
            key: cp.done.clone(),
            counter: cp.counter,
            tally: cp.tally,
            expired: cp.expired,
        };
        self.skipped_keys = cp.skipped.iter().map(|s| s.key.clone()).collect();
        self.skipped = cp.skipped;
        self.resumed_after = Some(cp.done);
        Ok(())
    }

    /// Runs the phases left.
    fn run(&mut self) -> Result<(), Halt> {
        if self.state.phase == Phase::Sort {
            self.sort()?;
        }
        if self.state.phase == Phase::Merge {
            self.merge()?;
        }
        self.ingest()
    }

    fn report(&self, outcome: Outcome) -> MigrateReport {
        MigrateReport {
            outcome,
            migrated: self.done.tally,
            expired: self.done.expired,
            skipped: self.skipped.clone(),
            first_of_several: self.first_of_several.clone(),
            resumed_after: self.resumed_after.clone(),
            commits: self.commits,
            merged: false,
        }
    }

    /// Writes the checkpoint (if the migration keeps one).
    fn save(&self) -> Result<(), MigrateError> {
        self.save_as(&self.state, &self.done, &self.skipped)
    }

    /// Writes the checkpoint of the point `state`, `done` and `skipped`
    /// describe (if the migration keeps one).
    fn save_as(
        &self,
        state: &BulkState,
        done: &Done,
        skipped: &[Skipped],
    ) -> Result<(), MigrateError> {
        let Some(path) = &self.options.checkpoint else {
            return Ok(());
        };
        Checkpoint {
            source_format: self.src.codec().name().to_string(),
            source_dir: dir_bytes(self.src.store().root()),
            destination_format: self.dst.codec().name().to_string(),
            merge: false,
            probe: false,
            done: done.key.clone(),
            counter: done.counter,
            through: None,
            through_count: 0,
            pending: None,
            tally: done.tally,
            expired: done.expired,
            skipped: skipped.to_vec(),
            bulk: Some(state.encode()),
        }
        .save(path, self.options.sync)
        .map_err(|e| checkpoint_error(path, e.to_string()))
    }

    /// Saves the checkpoint after a file is done, and asks the observer
    /// whether to go on.
    fn checkpointed(&mut self) -> Result<(), Halt> {
        self.save()?;
        self.counted()
    }

    /// Counts a checkpoint saved, and asks the observer whether to go on.
    fn counted(&mut self) -> Result<(), Halt> {
        self.commits += 1;
        match self.observer.committed(self.commits) {
            Flow::Continue => Ok(()),
            Flow::Stop => Err(Halt::Stopped),
        }
    }

    /// Reads the source after the last key done, makes its records with
    /// the destination's engine code, and spills them in sorted runs.
    fn sort(&mut self) -> Result<(), Halt> {
        let store = Capture::new(self.dst.store().layout());
        let capture = Engine::over(self.dst.codec().clone(), store, self.dst.clock().clone())
            .map_err(MigrateError::from)?;
        capture.store().arm(self.state.seq);
        capture.set_version_counter(self.done.counter);
        let limits = Limits {
            elements: self.options.batch_elements.max(1),
            bytes: self.options.batch_bytes.max(1),
        };
        let chunks = Limits {
            elements: limits.elements.min(CHUNK.elements),
            bytes: limits.bytes.min(CHUNK.bytes),
        };
        let mut sink = Sink::new(&capture, limits);
        sink.set_probe(false);
        let (tx, rx) = reader::channel(chunks);
        let src = self.src;
        let codec = self.dst.codec();
        let after = self.done.key.clone();
        let conflicts = self.options.type_conflict;
        std::thread::scope(|scope| {
            scope.spawn(move || reader::read(src, codec, after.as_deref(), chunks, conflicts, tx));
            // Owned here: returning drops the receiver, so a reader still
            // sending stops (the scope waits for it).
            let mut rx = rx;
            let mut tally = self.done.tally;
            let mut expired = self.done.expired;
            let mut open: Option<(Vec<u8>, Option<redcodec_codec::Meta>)> = None;
            while let Some(item) = rx.next().map_err(MigrateError::from)? {
                match item {
                    Item::Key {
                        key,
                        meta,
                        shadowed,
                    } => {
                        if let Some(skipped) =
                            Skipped::several_types(&key, meta.data_type, shadowed)
                        {
                            self.first_of_several.push(skipped);
                        }
                        let dmeta = match sink.begin(&key, &meta) {
                            Ok(Some(mut dmeta)) => {
                                tally.keys += 1;
                                tally.bytes += key.len() as u64;
                                if meta.data_type == DataType::String {
                                    let value = Value::String(meta.value);
                                    tally.elements += value.element_count();
                                    tally.bytes += value.byte_count();
                                    sink.append(&key, &mut dmeta, value)?;
                                }
                                Some(dmeta)
                            }
                            Ok(None) => {
                                expired += 1;
                                None
                            }
                            Err(CmdError::Engine(EngineError::Unrepresentable(e))) => {
                                let reason = Unrepresentable::Refused(e.to_string());
                                self.unrepresentable(key.clone(), Some(meta.data_type), reason)?;
                                None
                            }
                            Err(e) => return Err(MigrateError::from(e).into()),
                        };
                        open = Some((key, dmeta));
                    }
                    Item::Chunk(chunk) => {
                        if let Some((key, Some(dmeta))) = &mut open {
                            tally.elements += chunk.element_count();
                            tally.bytes += chunk.byte_count();
                            sink.append(key, dmeta, chunk)?;
                            self.observer.progressed(&tally);
                            if sink.is_full() {
                                // The key's records so far go to the
                                // buffer (with its metadata so far).
                                sink.finish(key, dmeta)?;
                                sink.commit()?;
                                self.spill_if_full(&capture, false)?;
                            }
                        }
                    }
                    Item::EndKey => {
                        if let Some((key, dmeta)) = open.take() {
                            if let Some(dmeta) = dmeta {
                                sink.finish(&key, &dmeta)?;
                            }
                            sink.commit()?;
                            capture.store().close_key();
                            self.done = Done {
                                key: Some(key),
                                counter: capture.version_counter(),
                                tally,
                                expired,
                            };
                            self.state.complete = capture.store().next_seq();
                            self.spill_if_full(&capture, true)?;
                        }
                    }
                    Item::Unrepresentable {
                        key,
                        data_type,
                        reason,
                    } => self.unrepresentable(key, data_type, reason)?,
                    Item::Unreadable(key) => {
                        return Err(Halt::Failed(MigrateError::SourceUnreadable {
                            key: quote_bytes(&key),
                        }))
                    }
                }
            }
            Ok(())
        })?;
        // The run before the last gets its checkpoint too: the source
        // is not read again for it if the last run's write is cut.
        self.land(Landed::Save)?;
        self.spill(&capture)?;
        self.land(Landed::Wait)?;
        self.state.phase = Phase::Merge;
        self.save()?;
        Ok(())
    }

    /// Spills the buffer if it is full (`whole`: at a key's end).
    fn spill_if_full(&mut self, capture: &Engine<B, Capture>, whole: bool) -> Result<(), Halt> {
        if capture.store().bytes() < self.options.bulk_buffer_bytes {
            return Ok(());
        }
        if whole {
            self.state.complete = capture.store().next_seq();
        }
        // The run before is written first, and counted.
        self.land(Landed::Count)?;
        self.spill(capture)?;
        Ok(())
    }

    /// Starts writing the buffer as the next run, on a thread of its own:
    /// the source is read on while it is sorted and written. The
    /// checkpoint that counts it is saved once it is written
    /// ([`Job::land`]); one run is written at a time.
    fn spill(&mut self, capture: &Engine<B, Capture>) -> Result<(), Halt> {
        self.land(Landed::Wait)?;
        let entries = capture.store().take();
        let orders = capture.store().orders();
        let source = *self
            .source_bytes
            .get_or_insert_with(|| scratch::tree_bytes(self.src.store().root()));
        let encoding = scratch::run_encoding(self.options.bulk_runs, source, &self.work);
        let (work, run, sync) = (self.work.clone(), self.state.runs, self.options.sync);
        let thread = std::thread::Builder::new()
            .name("bulk-spill".into())
            .spawn(move || runs::spill(&work, run, entries, |place| orders[&place], encoding, sync))
            .map_err(|e| work_error(&self.work, e))?;
        self.state.runs += 1;
        self.state.seq = capture.store().next_seq();
        self.spilling = Some(Spilling {
            thread,
            state: self.state.clone(),
            done: self.done.clone(),
            skipped: self.skipped.clone(),
        });
        Ok(())
    }

    /// Waits for the run being written, if any, then does what `then`
    /// says. A run that failed is not counted.
    fn land(&mut self, then: Landed) -> Result<(), Halt> {
        let Some(spilling) = self.spilling.take() else {
            return Ok(());
        };
        let written = spilling
            .thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the thread writing a run panicked")));
        if let Err(e) = written {
            self.state.runs = spilling.state.runs - 1;
            return Err(work_error(&self.work, e).into());
        }
        if then != Landed::Wait {
            self.save_as(&spilling.state, &spilling.done, &spilling.skipped)?;
        }
        if then == Landed::Count {
            self.counted()?;
        }
        Ok(())
    }

    /// Skips or stops on a key the destination cannot hold.
    fn unrepresentable(
        &mut self,
        key: Vec<u8>,
        data_type: Option<DataType>,
        reason: Unrepresentable,
    ) -> Result<(), Halt> {
        let skipped = Skipped {
            key,
            data_type,
            reason,
        };
        let stop = match skipped.reason {
            Unrepresentable::SeveralTypes { .. } => {
                self.options.type_conflict == TypeConflict::Fail
            }
            _ => self.options.on_unrepresentable == OnUnrepresentable::Stop,
        };
        if stop {
            return Err(Halt::Failed(MigrateError::Unrepresentable {
                format: self.dst.codec().name().to_string(),
                keys: vec![skipped],
                more: 0,
            }));
        }
        self.observer.skipped(&skipped);
        if self.skipped_keys.insert(skipped.key.clone()) {
            self.skipped.push(skipped);
        }
        Ok(())
    }
}

/// A failure of the work directory's files.
fn work_error(work: &Path, e: std::io::Error) -> MigrateError {
    MigrateError::Store(CmdError::from(EngineError::from(
        redcodec_engine::store::StoreError::Io(std::io::Error::other(format!(
            "bulk migration files in {}: {e}",
            work.display()
        ))),
    )))
}

#[cfg(test)]
mod tests;
