//! One migration's run: checks or resumes ([`resume`]), plans, copies key
//! by key, and checkpoints before every commit.

mod resume;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

use redcodec_codec::{Codec, DataType, Meta};

use crate::checkpoint::remove_checkpoint;
use crate::error::MigrateError;
use crate::options::{MigrateOptions, OnUnrepresentable, TypeConflict};
use crate::plan;
use crate::reader::{self, Item, Packets};
use crate::report::{Flow, MigrateReport, Observer, Outcome, Plan, Skipped, Tally};
use crate::represent::Unrepresentable;
use crate::sink::Sink;
use crate::source::Limits;
use redcodec_engine::error::{CmdError, EngineError};
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

/// The first batch of a planned run holds this many times the element
/// limit (and twice the byte limit): the planning pass runs meanwhile.
const PLAN_SLACK: usize = 8;

/// The most a chunk read from a big key (and a packet from the reader)
/// holds, below the batch limits.
const CHUNK: Limits = Limits {
    elements: 1024,
    bytes: 1 << 20,
};

/// A position in the migration: the last key written, and what had been
/// done by then.
#[derive(Debug, Default)]
struct Mark {
    key: Option<Vec<u8>>,
    counter: u64,
    tally: Tally,
    expired: u64,
    /// Source keys walked (this run) when the mark was set.
    walked: u64,
}

impl Clone for Mark {
    fn clone(&self) -> Mark {
        let mut mark = Mark::default();
        mark.clone_from(self);
        mark
    }

    /// Reuses the key's buffer: marks are copied for every key.
    fn clone_from(&mut self, other: &Mark) {
        self.key.clone_from(&other.key);
        self.counter = other.counter;
        self.tally = other.tally;
        self.expired = other.expired;
        self.walked = other.walked;
    }
}

/// Why the copy loop ended early.
enum Halt {
    Stopped,
    Failed(MigrateError),
}

impl From<CmdError> for Halt {
    fn from(e: CmdError) -> Self {
        Halt::Failed(e.into())
    }
}

impl From<EngineError> for Halt {
    fn from(e: EngineError) -> Self {
        Halt::Failed(e.into())
    }
}

impl From<redcodec_engine::store::StoreError> for Halt {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        Halt::Failed(EngineError::from(e).into())
    }
}

impl From<MigrateError> for Halt {
    fn from(e: MigrateError) -> Self {
        Halt::Failed(e)
    }
}

/// One migration's state.
pub(super) struct Run<'a, A: Codec, B: Codec> {
    src: &'a Engine<A>,
    dst: &'a Engine<B>,
    options: &'a MigrateOptions,
    observer: &'a mut dyn Observer,
    sink: Sink<'a, B>,
    limits: Limits,
    merge: bool,
    /// Whether destination keys are looked up before they are written.
    probe: bool,
    /// Whether this run started the migration (no checkpoint before it).
    fresh: bool,
    /// The planning pass's result, while it runs.
    plan_rx: Option<Receiver<Result<plan::Found, CmdError>>>,
    /// The last key whose records are all committed.
    committed: Mark,
    /// The last key whose records are all queued.
    last_complete: Mark,
    /// Running totals (the key in progress included).
    current: Mark,
    /// The last key whose records are queued, whole or in part.
    last_queued: Option<Vec<u8>>,
    commits: u64,
    skipped: Vec<Skipped>,
    skipped_keys: HashSet<Vec<u8>>,
    first_of_several: Vec<Skipped>,
    resumed_after: Option<Option<Vec<u8>>>,
}

impl<'a, A: Codec, B: Codec> Run<'a, A, B> {
    /// A migration of `src` into `dst` (both locked by the caller).
    pub(super) fn new(
        src: &'a Engine<A>,
        dst: &'a Engine<B>,
        options: &'a MigrateOptions,
        observer: &'a mut dyn Observer,
    ) -> Run<'a, A, B> {
        let limits = Limits {
            elements: options.batch_elements.max(1),
            bytes: options.batch_bytes.max(1),
        };
        Run {
            src,
            dst,
            options,
            observer,
            sink: Sink::new(dst, limits),
            limits,
            merge: options.merge,
            probe: true,
            fresh: false,
            plan_rx: None,
            committed: Mark::default(),
            last_complete: Mark::default(),
            current: Mark::default(),
            last_queued: None,
            commits: 0,
            skipped: Vec::new(),
            skipped_keys: HashSet::new(),
            first_of_several: Vec::new(),
            resumed_after: None,
        }
    }

    /// Runs the migration to its end (or to a stop an observer asks for).
    pub(super) fn execute(mut self) -> Result<MigrateReport, MigrateError> {
        self.start()?;
        match self.copy_all() {
            Ok(()) => {}
            Err(Halt::Stopped) => return Ok(self.report(Outcome::Stopped)),
            Err(Halt::Failed(e)) => return Err(e),
        }
        if let Some(path) = &self.options.checkpoint {
            remove_checkpoint(path)?;
        }
        Ok(self.report(Outcome::Completed))
    }

    fn report(&self, outcome: Outcome) -> MigrateReport {
        let at = match outcome {
            Outcome::Completed => &self.current,
            Outcome::Stopped => &self.committed,
        };
        MigrateReport {
            outcome,
            migrated: at.tally,
            expired: at.expired,
            skipped: self.skipped.clone(),
            first_of_several: self.first_of_several.clone(),
            resumed_after: self.resumed_after.clone(),
            commits: self.commits,
            merged: self.merge,
        }
    }

    fn set_probe(&mut self, probe: bool) {
        self.probe = probe;
        self.sink.set_probe(probe);
    }

    /// The main loop: a reader thread walks the source after the resume
    /// point; this thread writes what it hands over, in order.
    fn copy_all(&mut self) -> Result<(), Halt> {
        let src = self.src;
        let codec = self.dst.codec();
        let after = self.committed.key.clone();
        let chunks = Limits {
            elements: self.limits.elements.min(CHUNK.elements),
            bytes: self.limits.bytes.min(CHUNK.bytes),
        };
        let (tx, rx) = reader::channel(chunks);
        let check = self.options.on_unrepresentable == OnUnrepresentable::Stop;
        let conflicts = self.options.type_conflict;
        let cancel = AtomicBool::new(false);
        std::thread::scope(|scope| {
            if self.options.plan {
                let (plan_tx, plan_rx) = std::sync::mpsc::channel();
                let (after, cancel) = (after.clone(), &cancel);
                scope.spawn(move || {
                    let _ = plan_tx.send(plan::walk(
                        src,
                        codec,
                        after.as_deref(),
                        check,
                        conflicts,
                        cancel,
                    ));
                });
                self.plan_rx = Some(plan_rx);
            }
            scope.spawn(move || reader::read(src, codec, after.as_deref(), chunks, conflicts, tx));
            // Returning drops the receiver: a reader still sending stops.
            let result = self.write_all(rx);
            cancel.store(true, Ordering::Relaxed);
            self.plan_rx = None;
            result
        })
    }

    /// Waits for the planning pass's result, if one is running. Keys the
    /// destination cannot represent (stop mode) end the migration here,
    /// before its first commit: the queued batch is dropped and a fresh
    /// run's checkpoint removed, so nothing at all is written.
    fn plan_settled(&mut self) -> Result<(), Halt> {
        let Some(rx) = self.plan_rx.take() else {
            return Ok(());
        };
        let Ok(found) = rx.recv() else {
            return Ok(());
        };
        let found = found?;
        if !found.unrepresentable.is_empty() {
            self.sink.discard();
            if self.fresh {
                if let Some(path) = &self.options.checkpoint {
                    remove_checkpoint(path)?;
                }
            }
            return Err(Halt::Failed(MigrateError::Unrepresentable {
                format: self.dst.codec().name().to_string(),
                keys: found.unrepresentable,
                more: found.more,
            }));
        }
        self.observer.planned(&Plan {
            done: self.committed.tally,
            keys: found.keys,
            elements: found.elements,
        });
        Ok(())
    }

    /// Whether the queued batch should be committed now. With a planning
    /// pass, the first batch of the run is [`PLAN_SLACK`] times larger:
    /// the plan runs meanwhile, and the first commit waits for it. (A
    /// fixed size, not the plan's progress, decides: commits fall at the
    /// same places in every run.)
    fn should_commit(&self) -> bool {
        if self.options.plan && self.commits == 0 {
            self.sink.is_full_by(PLAN_SLACK)
        } else {
            self.sink.is_full()
        }
    }

    /// Writes the reader's items until it is done.
    fn write_all(&mut self, mut rx: Packets) -> Result<(), Halt> {
        // The key being written, and its destination metadata (`None`:
        // not written, as expired or unrepresentable).
        let mut open: Option<(Vec<u8>, Option<Meta>)> = None;
        while let Some(item) = rx.next()? {
            match item {
                Item::Key {
                    key,
                    meta,
                    shadowed,
                } => {
                    self.current.walked += 1;
                    if let Some(skipped) = Skipped::several_types(&key, meta.data_type, shadowed) {
                        self.first_of_several.push(skipped);
                    }
                    let dmeta = self.begin_key(&key, meta)?;
                    open = Some((key, dmeta));
                }
                Item::Chunk(chunk) => {
                    if let Some((key, Some(dmeta))) = &mut open {
                        self.append(key, dmeta, chunk)?;
                        if self.should_commit() {
                            // The key is cut here: its metadata so far
                            // goes with its elements, or compaction
                            // would collect them as orphans.
                            self.sink.finish(key, dmeta)?;
                            self.commit(Some(dmeta))?;
                        }
                    }
                }
                Item::EndKey => {
                    if let Some((key, Some(dmeta))) = open.take() {
                        self.finish_key(key, &dmeta)?;
                    }
                    if self.should_commit() {
                        self.commit(None)?;
                    }
                }
                Item::Unrepresentable {
                    key,
                    data_type,
                    reason,
                } => {
                    self.current.walked += 1;
                    self.unrepresentable(key, data_type, reason)?;
                }
                Item::Unreadable(key) => {
                    self.current.walked += 1;
                    self.commit(None)?;
                    return Err(Halt::Failed(MigrateError::SourceUnreadable {
                        key: quote_bytes(&key),
                    }));
                }
            }
        }
        self.commit(None)
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
            // What is queued is written, so a resumed run starts here.
            self.commit(None)?;
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

    /// Starts writing `key` (source metadata `meta`); a string is queued
    /// whole. `None` if the key is not written (expired by now at the
    /// destination's resolution, or refused by the destination's encoder).
    fn begin_key(&mut self, key: &[u8], meta: Meta) -> Result<Option<Meta>, Halt> {
        let mut dmeta = match self.sink.begin(key, &meta) {
            Ok(Some(dmeta)) => dmeta,
            Ok(None) => {
                self.current.expired += 1;
                return Ok(None);
            }
            Err(CmdError::Engine(EngineError::Unrepresentable(e))) => {
                let reason = Unrepresentable::Refused(e.to_string());
                self.unrepresentable(key.to_vec(), Some(meta.data_type), reason)?;
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        // Reuses the buffers: this runs for every key.
        let last = self.last_queued.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(key);
        self.current.tally.keys += 1;
        self.current.tally.bytes += key.len() as u64;
        if meta.data_type == DataType::String {
            self.append(key, &mut dmeta, Value::String(meta.value))?;
        }
        Ok(Some(dmeta))
    }

    /// Queues a chunk of the key being written.
    fn append(&mut self, key: &[u8], dmeta: &mut Meta, chunk: Value) -> Result<(), Halt> {
        self.current.tally.elements += chunk.element_count();
        self.current.tally.bytes += chunk.byte_count();
        self.sink.append(key, dmeta, chunk)?;
        self.observer.progressed(&self.current.tally);
        Ok(())
    }

    /// Queues the metadata of the key being written: it is complete.
    fn finish_key(&mut self, key: Vec<u8>, dmeta: &Meta) -> Result<(), Halt> {
        self.sink.finish(&key, dmeta)?;
        self.current.key = Some(key);
        self.current.counter = self.dst.version_counter();
        self.last_complete.clone_from(&self.current);
        Ok(())
    }

    /// Checkpoints, then commits the queued batch. `pending` is the
    /// metadata of a key whose elements this commit only partly holds.
    fn commit(&mut self, pending: Option<&Meta>) -> Result<(), Halt> {
        self.plan_settled()?;
        if self.sink.is_empty() {
            return Ok(());
        }
        self.save_checkpoint(pending)?;
        if self.observer.before_commit(self.commits + 1) == Flow::Stop {
            self.sink.discard();
            return Err(Halt::Stopped);
        }
        self.sink.commit()?;
        self.commits += 1;
        if let Some(budget) = self.options.memtable_budget {
            let store = self.dst.store();
            if store.memtable_bytes()? > budget as u64 {
                store.request_flush()?;
            }
        }
        self.committed.clone_from(&self.last_complete);
        if self.observer.committed(self.commits) == Flow::Stop {
            return Err(Halt::Stopped);
        }
        Ok(())
    }
}
