//! How to migrate: the options of a store-to-store migration (the
//! network migration takes the same), and the rules for keys that cannot
//! be copied as they are.

use std::path::PathBuf;

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
/// [`redcodec_engine::internals::keyspace::TYPE_ORDER`]). Nothing is merged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeConflict {
    /// Stop, naming the key (with the planning pass: before anything is
    /// written, naming every such key).
    Fail,
    /// Leave the key out and list it in the report.
    Skip,
    /// Migrate the value commands see (the first type in
    /// [`redcodec_engine::internals::keyspace::TYPE_ORDER`]) and list the key in the report.
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

/// Whether a migration into a store takes the bulk path (sorted SST
/// files ingested; see [`crate::migrate`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bulk {
    /// The bulk path when the destination is empty (and not merging),
    /// else the write path.
    Auto,
    /// The bulk path; a destination holding records is refused.
    Always,
    /// The write path: every key through the engine's write batches.
    Never,
}

/// Whether the bulk path compresses its sorted runs, the scratch files it
/// writes beside the destination before the tables. Compressed (LZ4),
/// runs and tables together peak at about 1.7 times the destination's
/// size; raw, at about 2.9 times, for about a tenth less CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunCompression {
    /// Raw while the destination's file system has room to spare (free
    /// space at least [`RAW_RUNS_HEADROOM`] times the source's size on
    /// disk, looked at before each run), else LZ4.
    Auto,
    /// Every run LZ4-compressed.
    Lz4,
    /// No run compressed.
    None,
}

impl std::str::FromStr for RunCompression {
    type Err = String;

    fn from_str(s: &str) -> Result<RunCompression, String> {
        match s {
            "auto" => Ok(RunCompression::Auto),
            "lz4" => Ok(RunCompression::Lz4),
            "none" => Ok(RunCompression::None),
            _ => Err(format!(
                "unknown run compression '{s}': expected auto, lz4 or none"
            )),
        }
    }
}

/// How many times the source's size on disk the free space must be for
/// [`RunCompression::Auto`] to write a run raw. Raw runs took 2.5 times
/// the source's size at their peak (with the tables being written beside
/// them) in a kvrocks-to-blackwidow migration of 30M keys; twice that
/// leaves room for a source that compresses better than that one.
pub const RAW_RUNS_HEADROOM: u64 = 4;

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
    /// The bulk path or the write path.
    pub bulk: Bulk,
    /// The bulk path's sort buffer, in bytes: past it, the records sorted
    /// so far are written to a run file (and the checkpoint follows).
    pub bulk_buffer_bytes: usize,
    /// The size of the bulk path's SST files, in bytes (about).
    pub bulk_file_bytes: u64,
    /// Whether the bulk path compresses its sorted runs.
    pub bulk_runs: RunCompression,
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
            bulk: Bulk::Never,
            bulk_buffer_bytes: 128 << 20,
            bulk_file_bytes: 64 << 20,
            bulk_runs: RunCompression::Auto,
        }
    }
}
