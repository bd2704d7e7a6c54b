//! Migration between formats: every live key of one engine — type, expiry,
//! every element — copied into an engine of another format, through the
//! logical model only (never bytes of one format handed to another).
//!
//! # How a migration runs
//!
//! - **Source.** Live keys are walked in the source's key order; expired
//!   keys are skipped. A key's elements are read in chunks
//!   ([`MigrateOptions::batch_elements`] / [`MigrateOptions::batch_bytes`]):
//!   memory does not grow with a collection's size nor with the store's.
//!   Lists are read head first, so order is kept; sorted-set scores are
//!   copied as exact `f64`s.
//! - **Destination.** Records go into write batches of about the same
//!   limits: many small keys per batch, or a big key over several. Each
//!   key is written the way the destination's own commands write it
//!   (fresh version, the format's list model, score index…), in the
//!   batch its elements end in, metadata after elements. A big key is
//!   therefore **not** one atomic write: each batch that cuts it carries
//!   the metadata of the elements written so far, so until its last batch
//!   the key exists in a temporary, partial state — a smaller but
//!   consistent collection. (Elements without their metadata would be
//!   orphans that the formats' compaction filters collect, so the
//!   metadata cannot wait for the last batch.) While a migration is
//!   unfinished its checkpoint sits in the destination directory; a
//!   resumed migration removes the partial key and writes it again (see
//!   below), so the temporary state never outlives the job.
//! - **Expiry** is copied as an absolute time. A destination of
//!   [`TtlResolution::Seconds`](redcodec_codec::TtlResolution) stores it
//!   rounded **up** to the whole second (`ceil(ms / 1000) * 1000`), as every
//!   command of the engine does: the key never expires earlier than in the
//!   source, at most 999 ms later. [`verify`] compares expiries after the
//!   same rounding. A key whose rounded expiry has already passed is
//!   skipped as expired.
//! - **Unrepresentable keys.** A key the destination's declared
//!   [`Capabilities`](redcodec_codec::Capabilities) cannot hold (a
//!   collection key over `collection_key_limit`, an expiry past
//!   `max_expire_ms`, a score outside `score_limit`) is reported by name
//!   with the reason. By default ([`OnUnrepresentable::Stop`]) the
//!   migration stops before writing anything for it — and, when the
//!   planning pass runs ([`MigrateOptions::plan`]), before writing anything
//!   at all, listing every such key. With [`OnUnrepresentable::Skip`] it
//!   goes on and the report lists the skipped keys.
//! - **Instances the layout does not name** (Pika 3.5's `streams/` beside
//!   blackwidow's five): their keys are unrepresentable — named, and the
//!   migration stops before writing unless they are skipped.
//! - **Checkpoint and resume.** With [`MigrateOptions::checkpoint`] set, a
//!   small file records, before every commit, the last key surely written,
//!   the last key the commit in flight touches, the metadata of a key cut
//!   between commits, and the destination's version counter. The file is
//!   replaced atomically (written aside, then renamed), after the
//!   destination's previous commits were handed to the operating system, so
//!   it never claims more than a killed process left behind; with
//!   [`MigrateOptions::sync`] the write-ahead logs and the file are synced
//!   to disk first, which extends this to a crash of the machine. After an
//!   interruption (Ctrl-C, kill) a run with [`MigrateOptions::resume`] removes every trace of the keys
//!   the interrupted commit may have touched, restores the version counter
//!   and continues after the last key surely written: the result is the
//!   same as an uninterrupted run's — with a fixed clock and a destination
//!   that started empty, byte for byte. The file is deleted when the
//!   migration completes.
//! - **Destination check.** A destination holding live keys is refused
//!   unless [`MigrateOptions::merge`] is set (then source keys replace
//!   destination keys of the same name; others stay). Into a destination
//!   without any metadata record, keys are written without looking up what
//!   the destination holds under them (there is nothing); otherwise each
//!   key is looked up first, as a command would.
//!
//! Both engines are locked for the whole run: commands on them wait.

mod checkpoint;
mod digest;
mod error;
mod plan;
mod purge;
pub mod rdb_file;
mod reader;
mod represent;
mod run;
mod sink;
mod source;
#[cfg(test)]
mod testkit;

use std::path::{Path, PathBuf};

use redcodec_codec::{Codec, DataType};

use redcodec_engine::reply::quote_bytes;
use redcodec_engine::Engine;

pub use digest::{
    key_digest, store_digest, verify, ContentDigest, Difference, DifferenceKind, KeyDigest,
    StoreDigest, VerifyOptions, VerifyReport,
};
pub use error::MigrateError;
pub use represent::Unrepresentable;

/// The name of the checkpoint file the command line keeps in the
/// destination directory.
pub const CHECKPOINT_FILE: &str = "redcodec-migrate.checkpoint";

/// What to do with a key the destination cannot represent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnUnrepresentable {
    /// Stop before writing anything for it.
    Stop,
    /// Skip it, list it in the report, and go on.
    Skip,
}

/// What to do with a key the source holds in several types at once
/// (Pika's blackwidow and nemo allow it; see
/// [`redcodec_engine::keyspace::TYPE_ORDER`]). Nothing is merged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeConflict {
    /// Stop, naming the key (with the planning pass: before anything is
    /// written, naming every such key).
    Fail,
    /// Leave the key out and list it in the report.
    Skip,
    /// Migrate the value commands see (the first type in
    /// [`redcodec_engine::keyspace::TYPE_ORDER`]) and list the key in the report.
    First,
}

impl std::str::FromStr for TypeConflict {
    type Err = String;

    fn from_str(s: &str) -> Result<TypeConflict, String> {
        match s {
            "fail" => Ok(TypeConflict::Fail),
            "skip" => Ok(TypeConflict::Skip),
            "first" => Ok(TypeConflict::First),
            _ => Err(format!(
                "unknown type-conflict rule '{s}': expected fail, skip or first"
            )),
        }
    }
}

/// How to migrate.
#[derive(Clone, Debug)]
pub struct MigrateOptions {
    /// Elements per write batch, and per chunk read from a big key.
    pub batch_elements: usize,
    /// Logical bytes per write batch and chunk.
    pub batch_bytes: usize,
    /// Migrate into a destination that already holds keys.
    pub merge: bool,
    /// Keys the destination cannot hold.
    pub on_unrepresentable: OnUnrepresentable,
    /// Keys the source holds in several types.
    pub type_conflict: TypeConflict,
    /// Where to keep the checkpoint; `None`: no checkpoint (an interrupted
    /// run cannot be resumed).
    pub checkpoint: Option<PathBuf>,
    /// Continue the migration the checkpoint records (if there is none,
    /// start from the beginning).
    pub resume: bool,
    /// Walk the source's metadata in a planning pass (on its own thread,
    /// while the first batch fills; nothing is committed before it ends):
    /// totals for progress, and every unrepresentable key found before
    /// anything is written.
    pub plan: bool,
    /// Most memtable memory of the destination, in bytes: past it, the
    /// destination's memtables are flushed (in the background) after a
    /// commit. `None`: RocksDB's own limits (64 MiB per column family).
    pub memtable_budget: Option<usize>,
    /// Sync the destination's write-ahead logs and the checkpoint to disk
    /// before every commit, so a resume is exact even after the machine
    /// crashes. Without it (the default) a resume is exact after the
    /// process is interrupted or killed, which leaves written data in the
    /// operating system's hands.
    pub sync: bool,
}

impl Default for MigrateOptions {
    fn default() -> Self {
        MigrateOptions {
            batch_elements: 8192,
            batch_bytes: 8 << 20,
            merge: false,
            on_unrepresentable: OnUnrepresentable::Stop,
            type_conflict: TypeConflict::Fail,
            checkpoint: None,
            resume: false,
            plan: true,
            memtable_budget: Some(96 << 20),
            sync: false,
        }
    }
}

/// Counts of migrated data.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Keys.
    pub keys: u64,
    /// Elements (a string counts as one).
    pub elements: u64,
    /// Logical bytes: keys, fields, values, members, 8 per score.
    pub bytes: u64,
}

/// What the planning pass found to migrate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Already migrated by an interrupted run being resumed.
    pub done: Tally,
    /// Live keys left to migrate.
    pub keys: u64,
    /// Their elements (a string counts as one).
    pub elements: u64,
}

/// A key left out because the destination cannot represent it.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The key.
    pub key: Vec<u8>,
    /// Its type (`None`: a type redcodec does not model).
    pub data_type: Option<DataType>,
    /// Why.
    pub reason: Unrepresentable,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", quote_bytes(&self.key), self.reason)
    }
}

/// Whether the migration goes on (hooks of [`Observer`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop here, as an interruption would: the checkpoint stays.
    Stop,
}

/// Follows a migration: progress, skipped keys, commits. Every method has
/// a default that does nothing.
pub trait Observer {
    /// The planning pass is done (not called without one).
    fn planned(&mut self, _plan: &Plan) {}

    /// More data was queued; `done` counts everything so far (an
    /// interrupted run's part included).
    fn progressed(&mut self, _done: &Tally) {}

    /// A key was skipped as unrepresentable.
    fn skipped(&mut self, _skipped: &Skipped) {}

    /// The checkpoint for commit number `commit` (1-based, this run) is
    /// written and the commit is about to be applied.
    fn before_commit(&mut self, _commit: u64) -> Flow {
        Flow::Continue
    }

    /// Commit number `commit` is applied.
    fn committed(&mut self, _commit: u64) -> Flow {
        Flow::Continue
    }
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {}

/// How a migration ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every key was migrated (or skipped as reported).
    Completed,
    /// An observer stopped it; resume to finish.
    Stopped,
}

/// What a migration did.
#[derive(Clone, Debug, PartialEq)]
pub struct MigrateReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Keys, elements and bytes written, an interrupted run's included.
    pub migrated: Tally,
    /// Keys skipped because they had expired.
    pub expired: u64,
    /// Keys skipped as unrepresentable (or held in several types, with
    /// [`TypeConflict::Skip`]).
    pub skipped: Vec<Skipped>,
    /// Keys held in several types whose first type was migrated
    /// ([`TypeConflict::First`]); the reason lists every type.
    pub first_of_several: Vec<Skipped>,
    /// The last key an interrupted run had surely written, when resuming
    /// (`Some(None)`: resumed before the first key).
    pub resumed_after: Option<Option<Vec<u8>>>,
    /// Commits applied by this run.
    pub commits: u64,
    /// Whether the destination was merged into (asked for by this run, or
    /// by the interrupted run it resumed).
    pub merged: bool,
}

/// Refuses to compare or copy a store with itself.
fn check_distinct<A: Codec, B: Codec>(
    src: &Engine<A>,
    dst: &Engine<B>,
) -> Result<(), MigrateError> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if canonical(src.store().root()) == canonical(dst.store().root()) {
        return Err(MigrateError::SameStore);
    }
    Ok(())
}

/// Migrates every live key of `src` into `dst` (see the module docs).
pub fn migrate<A: Codec, B: Codec>(
    src: &Engine<A>,
    dst: &Engine<B>,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<MigrateReport, MigrateError> {
    check_distinct(src, dst)?;
    let foreign = foreign_keys(src)?;
    if !foreign.is_empty() && options.on_unrepresentable == OnUnrepresentable::Stop {
        let more = foreign.len().saturating_sub(FOREIGN_LISTED) as u64;
        return Err(MigrateError::Unrepresentable {
            format: dst.codec().name().to_string(),
            keys: foreign.into_iter().take(FOREIGN_LISTED).collect(),
            more,
        });
    }
    let _src_held = src.lock_all();
    let _dst_held = dst.lock_all();
    let _bulk = BulkMode::enter(src, dst);
    let mut report = run::Run::new(src, dst, options, observer).execute()?;
    for skipped in foreign {
        observer.skipped(&skipped);
        report.skipped.push(skipped);
    }
    Ok(report)
}

/// Foreign-instance keys named in a refusal (all are counted).
const FOREIGN_LISTED: usize = 20;

/// The keys of the RocksDB instances beside the source's layout that it
/// does not name (Pika 3.5's `streams/`): never migrated, always named.
fn foreign_keys<A: Codec>(src: &Engine<A>) -> Result<Vec<Skipped>, MigrateError> {
    let store = src.store();
    let mut out = Vec::new();
    for instance in redcodec_engine::store::foreign::foreign_instances(store) {
        for key in redcodec_engine::store::foreign::foreign_keys(store, &instance)? {
            out.push(Skipped {
                key,
                data_type: None,
                reason: Unrepresentable::Unmodelled {
                    type_name: format!("record of {instance}/, an instance"),
                },
            });
        }
    }
    Ok(out)
}

/// Both stores set for one pass over everything: reads do not fill the
/// block cache (memory would grow with the store). Dropping it restores
/// them.
struct BulkMode<'a, A: Codec, B: Codec> {
    src: &'a Engine<A>,
    dst: &'a Engine<B>,
}

impl<'a, A: Codec, B: Codec> BulkMode<'a, A, B> {
    fn enter(src: &'a Engine<A>, dst: &'a Engine<B>) -> BulkMode<'a, A, B> {
        src.store().set_fill_cache(false);
        dst.store().set_fill_cache(false);
        BulkMode { src, dst }
    }
}

impl<A: Codec, B: Codec> Drop for BulkMode<'_, A, B> {
    fn drop(&mut self) {
        self.src.store().set_fill_cache(true);
        self.dst.store().set_fill_cache(true);
    }
}

pub(crate) fn remove_checkpoint(path: &Path) -> Result<(), MigrateError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(checkpoint_error(path, e.to_string())),
    }
}

pub(crate) fn checkpoint_error(path: &Path, reason: String) -> MigrateError {
    MigrateError::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}
