//! The keyspace as an RDB file: every live key of the engine, with its
//! type, value and absolute expiry, written as redis-server 7.0 writes
//! `dump.rdb` (each namespace replicated as its database: see
//! [`crate::master::database_of`]) — read from a point-in-time copy of
//! the store ([`PointInTime`]), so that commands wait only while the copy
//! is made, not while the file is written.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use redcodec_codec::Namespaces;
use redcodec_engine::internals::namespaces::namespaces;
use redcodec_engine::store::{OpenMode, StoreError};
use redcodec_engine::{Engine, EngineCore, EngineError, EngineOptions};
use redcodec_formats::{AnyCodec, Codec, Format, FormatOptions};
use redcodec_migrate::rdb_file::{Exporter, RdbError};
use redcodec_rdb::file_writer::FileInfo;

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading the store or writing the file failed.
    #[error("{0}")]
    Rdb(#[from] RdbError),
    /// Making the checkpoint's directory failed.
    #[error("checkpoint directory: {0}")]
    Io(#[from] std::io::Error),
    /// The point-in-time copy could not be made.
    #[error("checkpoint of the store: {0}")]
    Checkpoint(#[from] StoreError),
    /// The point-in-time copy could not be opened.
    #[error("opening the checkpoint of the store: {0}")]
    Open(#[from] EngineError),
    /// The namespaces of the copy could not be listed or named.
    #[error("namespaces of the checkpoint: {0}")]
    Namespaces(String),
}

/// The name every checkpoint directory starts with, followed by the
/// process id of the server that made it.
pub const CHECKPOINT_PREFIX: &str = "redcodec-master-snapshot-";

/// A RocksDB checkpoint of the store in a directory of its own inside the
/// data directory (hard links to the SST files: as fast as a flush,
/// whatever the store's size), removed when dropped.
pub struct Checkpoint {
    dir: tempfile::TempDir,
}

impl Checkpoint {
    /// Checkpoints `core`'s store into a new directory in `data_dir`. The
    /// caller keeps writes out meanwhile (the copy is one point in time of
    /// every instance). Also removes the checkpoints a server that is no
    /// longer running left behind (killed while writing a snapshot).
    pub fn take(core: &EngineCore<AnyCodec>, data_dir: &Path) -> Result<Checkpoint, SnapshotError> {
        remove_leftovers(data_dir);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{CHECKPOINT_PREFIX}{}-", std::process::id()))
            .tempdir_in(data_dir)?;
        core.store().checkpoint(&dir.path().join("store"))?;
        Ok(Checkpoint { dir })
    }

    /// Opens the copy read-only in `core`'s format and on its clock.
    pub fn open(self, core: &EngineCore<AnyCodec>) -> Result<PointInTime, SnapshotError> {
        let engine = Engine::open(core.codec().clone(), self.store_dir(), read_only_like(core))?;
        Ok(PointInTime {
            engine,
            checkpoint: self,
        })
    }

    fn store_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("store")
    }
}

/// A [`Checkpoint`], open: an engine over the store as it was.
pub struct PointInTime {
    /// Declared first: closed before the checkpoint is removed.
    engine: Engine<AnyCodec>,
    checkpoint: Checkpoint,
}

/// Read-only opening options with `core`'s clock and block cache size.
fn read_only_like(core: &EngineCore<AnyCodec>) -> EngineOptions {
    EngineOptions {
        clock: core.clock().clone(),
        mode: OpenMode::ReadOnly,
        compat: None,
        block_cache_bytes: core.store().options().block_cache_bytes,
        read_cache_bytes: 0,
        direct_reads: false,
    }
}

impl PointInTime {
    /// The engine over the copy.
    pub fn core(&self) -> &EngineCore<AnyCodec> {
        &self.engine
    }

    /// The copy in `namespace`, another column family of the store (the
    /// namespaces of Ardb, which has no cluster mode), opened read-only.
    fn in_family(&self, namespace: &str) -> Result<Engine<AnyCodec>, SnapshotError> {
        let format: Format = self
            .engine
            .codec()
            .name()
            .parse()
            .map_err(|e: redcodec_formats::FormatError| SnapshotError::Namespaces(e.to_string()))?;
        let codec = format
            .codec(&FormatOptions {
                namespace: Some(namespace.as_bytes().to_vec()),
                cluster: false,
            })
            .map_err(|e| SnapshotError::Namespaces(e.to_string()))?;
        let options = read_only_like(&self.engine);
        Ok(Engine::open(codec, self.checkpoint.store_dir(), options)?)
    }

    /// The namespaces of the copy that are replicated, by the database
    /// `database_of` names for each (`own`, the namespace the copy was
    /// opened in, first: the first namespace named for a database wins);
    /// `own` alone when the format has no column-family namespaces.
    fn databases(
        &self,
        own: &str,
        database_of: &dyn Fn(&str) -> Option<u32>,
    ) -> Result<BTreeMap<u32, String>, SnapshotError> {
        let codec = self.engine.codec();
        let mut found: Vec<String> = Vec::new();
        if codec.capabilities().namespaces == Namespaces::ColumnFamily {
            found = namespaces(codec, self.engine.store())
                .map_err(|e| SnapshotError::Namespaces(e.to_string()))?
                .into_iter()
                .map(|ns| String::from_utf8_lossy(&ns.name).into_owned())
                .collect();
        }
        let mut databases = BTreeMap::new();
        for ns in std::iter::once(own.to_string()).chain(found) {
            if let Some(db) = database_of(&ns) {
                databases.entry(db).or_insert(ns);
            }
        }
        Ok(databases)
    }
}

/// Removes checkpoint directories of `data_dir` whose process is gone
/// (a checkpoint is only ever read by the process that made it).
fn remove_leftovers(data_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CHECKPOINT_PREFIX))
        else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Writes every live key of `copy` (opened in the namespace `own`) as an
/// RDB file with the header `info` to `out`, each namespace as the
/// database `database_of` names for it (namespaces it names none for are
/// left out); returns the writer, the file's length and how many keys it
/// holds. Keys whose metadata cannot be decoded are left out (they are
/// reported by `redcodec check`).
pub fn write_rdb<W: Write>(
    copy: &PointInTime,
    own: &str,
    database_of: &dyn Fn(&str) -> Option<u32>,
    out: W,
    info: &FileInfo,
) -> Result<(W, u64, u64), SnapshotError> {
    let mut export = Exporter::new(out, info)?;
    for (db, ns) in copy.databases(own, database_of)? {
        if ns == own {
            export.database(db, copy.core())?;
        } else {
            let engine = copy.in_family(&ns)?;
            export.database(db, &*engine)?;
        }
    }
    let (out, counts) = export.finish()?;
    Ok((out, counts.bytes, counts.keys))
}
