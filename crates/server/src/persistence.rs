//! What SAVE, BGSAVE, LASTSAVE and INFO persistence know: writes since
//! the last save, when the last one succeeded, whether a background
//! save runs.
//!
//! Saving means making every write applied so far durable in the store:
//! the write-ahead log is synced and every memtable flushed to table
//! files ([`save_store`]). There is no RDB file; the store is the
//! snapshot.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use redcodec_engine::{Engine, EngineError};
use redcodec_formats::AnyCodec;

/// The time now in unix seconds.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Syncs the write-ahead log and flushes every memtable of the engine's
/// store: what was written so far is in table files on disk.
pub fn save_store(engine: &Engine<AnyCodec>) -> Result<(), EngineError> {
    engine.store().sync_wal()?;
    engine.store().flush()?;
    Ok(())
}

/// The save state the server shares.
pub struct Saves {
    /// Writes since the last successful save (`rdb_changes_since_last_save`).
    changes: AtomicU64,
    /// Unix time of the last successful save; the server's start before any.
    last_save: AtomicI64,
    /// A BGSAVE runs.
    in_progress: AtomicBool,
    /// When the running BGSAVE started (unix seconds).
    bgsave_started: AtomicI64,
    /// How long the last BGSAVE took, in seconds; -1 before any.
    last_bgsave_secs: AtomicI64,
    /// Whether the last BGSAVE (or successful SAVE) succeeded.
    last_ok: AtomicBool,
    /// SAVEs and BGSAVEs started (`rdb_saves`).
    saves: AtomicU64,
    /// How many COMPACTs run (INFO rocksdb's `is_compacting`).
    compacting: AtomicU64,
}

impl Default for Saves {
    fn default() -> Saves {
        Saves {
            changes: AtomicU64::new(0),
            last_save: AtomicI64::new(unix_now()),
            in_progress: AtomicBool::new(false),
            bgsave_started: AtomicI64::new(0),
            last_bgsave_secs: AtomicI64::new(-1),
            last_ok: AtomicBool::new(true),
            saves: AtomicU64::new(0),
            compacting: AtomicU64::new(0),
        }
    }
}

/// Why a save cannot start.
pub const IN_PROGRESS: &str = "ERR Background save already in progress";

impl Saves {
    /// Counts one write.
    pub fn note_change(&self) {
        self.changes.fetch_add(1, Ordering::Relaxed);
    }

    /// `rdb_changes_since_last_save`.
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::Relaxed)
    }

    /// `LASTSAVE`: unix time of the last successful save.
    pub fn last_save(&self) -> i64 {
        self.last_save.load(Ordering::Relaxed)
    }

    /// Whether a BGSAVE runs.
    pub fn in_progress(&self) -> bool {
        self.in_progress.load(Ordering::SeqCst)
    }

    /// `rdb_last_bgsave_status`: `ok` or `err`.
    pub fn last_status(&self) -> &'static str {
        if self.last_ok.load(Ordering::Relaxed) {
            "ok"
        } else {
            "err"
        }
    }

    /// `rdb_last_bgsave_time_sec`: -1 before any BGSAVE ended.
    pub fn last_bgsave_secs(&self) -> i64 {
        self.last_bgsave_secs.load(Ordering::Relaxed)
    }

    /// `rdb_current_bgsave_time_sec`: -1 when none runs.
    pub fn current_bgsave_secs(&self) -> i64 {
        if self.in_progress() {
            unix_now() - self.bgsave_started.load(Ordering::Relaxed)
        } else {
            -1
        }
    }

    /// Counts a COMPACT started.
    pub fn compaction_started(&self) {
        self.compacting.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts a COMPACT ended.
    pub fn compaction_ended(&self) {
        self.compacting.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether a COMPACT runs (INFO rocksdb's `is_compacting`).
    pub fn compacting(&self) -> bool {
        self.compacting.load(Ordering::SeqCst) > 0
    }

    /// `rdb_saves`.
    pub fn saves(&self) -> u64 {
        self.saves.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT: `rdb_saves` back to 0.
    pub fn reset_stats(&self) {
        self.saves.store(0, Ordering::Relaxed);
    }

    /// Starts a save: the number of writes it covers (those counted so
    /// far).
    fn begin(&self) -> u64 {
        self.saves.fetch_add(1, Ordering::Relaxed);
        self.changes()
    }

    /// A save that covered `covered` writes succeeded: they are no
    /// longer unsaved (writes made meanwhile still are), and now is the
    /// last save time.
    fn succeeded(&self, covered: u64) {
        let _ = self
            .changes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(covered))
            });
        self.last_save.store(unix_now(), Ordering::Relaxed);
        self.last_ok.store(true, Ordering::Relaxed);
    }

    /// SAVE: runs `save` now, unless a BGSAVE runs.
    pub fn save<E>(&self, save: impl FnOnce() -> Result<(), E>) -> Result<(), SaveError<E>> {
        if self.in_progress() {
            return Err(SaveError::InProgress);
        }
        let covered = self.begin();
        save().map_err(SaveError::Failed)?;
        self.succeeded(covered);
        Ok(())
    }

    /// BGSAVE: marks a background save as running; `None` when one runs
    /// already. [`Saves::finish_background`] ends it.
    pub fn start_background(&self) -> Option<Background> {
        self.in_progress
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .ok()?;
        let started = unix_now();
        self.bgsave_started.store(started, Ordering::Relaxed);
        Some(Background {
            covered: self.begin(),
            started,
        })
    }

    /// Ends the background save `bg` with its outcome.
    pub fn finish_background(&self, bg: Background, outcome: Result<(), EngineError>) {
        match outcome {
            Ok(()) => self.succeeded(bg.covered),
            Err(e) => {
                eprintln!("redcodec serve: background saving error: {e}");
                self.last_ok.store(false, Ordering::Relaxed);
            }
        }
        self.last_bgsave_secs
            .store(unix_now() - bg.started, Ordering::Relaxed);
        self.in_progress.store(false, Ordering::SeqCst);
    }
}

/// A running background save.
pub struct Background {
    covered: u64,
    started: i64,
}

/// Why SAVE failed.
#[derive(Debug, thiserror::Error)]
pub enum SaveError<E> {
    /// A BGSAVE runs already.
    #[error("background save already in progress")]
    InProgress,
    /// Saving failed.
    #[error("saving failed: {0}")]
    Failed(E),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_clears_the_writes_it_covered() {
        let saves = Saves::default();
        let started = saves.last_save();
        for _ in 0..3 {
            saves.note_change();
        }
        saves.save(|| Ok::<(), ()>(())).unwrap();
        assert_eq!(saves.changes(), 0);
        assert!(saves.last_save() >= started);
        assert_eq!(saves.saves(), 1);

        saves.note_change();
        let bg = saves.start_background().unwrap();
        assert!(saves.in_progress());
        assert!(saves.start_background().is_none());
        assert!(matches!(
            saves.save(|| Ok::<(), ()>(())),
            Err(SaveError::InProgress)
        ));
        // Written while the background save runs: still unsaved after.
        saves.note_change();
        saves.finish_background(bg, Ok(()));
        assert_eq!(saves.changes(), 1);
        assert!(!saves.in_progress());
        assert_eq!(saves.last_status(), "ok");
        assert!(saves.last_bgsave_secs() >= 0);

        let bg = saves.start_background().unwrap();
        saves.finish_background(bg, Err(EngineError::Open("disk gone".into())));
        assert_eq!((saves.last_status(), saves.changes()), ("err", 1));
        // A failed SAVE leaves the writes unsaved.
        assert!(matches!(
            saves.save(|| Err("no")),
            Err(SaveError::Failed("no"))
        ));
        assert_eq!(saves.changes(), 1);
        saves.reset_stats();
        assert_eq!(saves.saves(), 0);
    }
}
