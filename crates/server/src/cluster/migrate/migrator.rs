//! The migration this node runs or ran last: its range, phase and
//! result, the writes to the range that are running and the keys they
//! wrote (the data [`crate::cluster::migrate`]'s thread works on; a leaf
//! the server's state holds).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use redcodec_engine::Reply;

use crate::cluster::parse::SlotRange;

/// Where the last migration stands (`MigrationState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationState {
    /// None ran.
    None,
    /// Running.
    Started,
    /// Finished: the range is served by the destination.
    Success,
    /// Failed: the range stays here.
    Failed,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// The range being moved.
    pub(crate) running: Option<SlotRange>,
    /// Writes to it get `TRYAGAIN` (last phase; kept after success).
    pub(crate) forbidden: Option<SlotRange>,
    /// The range of the last failed migration.
    pub(crate) failed: Option<SlotRange>,
    /// The destination's node id.
    pub(crate) dst: String,
    pub(crate) state: MigrationState,
    /// The result of the last migration, for a synchronous MIGRATE.
    pub(crate) result: Option<Result<(), String>>,
    /// Migrations started so far.
    pub(crate) started: u64,
    /// Bumped by each migration's start: the writes that began before it
    /// (counted in `untracked` by this number's parity) are waited for
    /// before the snapshot is read.
    pub(crate) epoch: u64,
}

/// The migration this node runs or ran last.
pub struct Migrator {
    pub(crate) inner: Mutex<Inner>,
    pub(crate) finished: Condvar,
    /// Writes to the running range that have begun and not ended.
    pub(crate) in_flight: AtomicUsize,
    /// Keys of the running range written since they were last sent.
    pub(crate) dirty: Mutex<BTreeSet<Vec<u8>>>,
    /// Writes to slots not moving when they began, not ended yet, by the
    /// parity of the epoch they began in: a migration's snapshot waits for
    /// those that began before it started, whose keys it could otherwise
    /// miss (written after its iterator was made, never marked dirty).
    untracked: [AtomicUsize; 2],
}

impl Default for Migrator {
    fn default() -> Self {
        Migrator {
            inner: Mutex::new(Inner {
                running: None,
                forbidden: None,
                failed: None,
                dst: String::new(),
                state: MigrationState::None,
                result: None,
                started: 0,
                epoch: 0,
            }),
            finished: Condvar::new(),
            in_flight: AtomicUsize::new(0),
            dirty: Mutex::new(BTreeSet::new()),
            untracked: [AtomicUsize::new(0), AtomicUsize::new(0)],
        }
    }
}

/// A write to a slot being migrated, while it runs: its keys are marked
/// to be sent again when it ends.
pub struct WriteGuard<'a> {
    migrator: &'a Migrator,
    keys: Vec<Vec<u8>>,
    /// Counted in `in_flight` (a blocking pop is not: it may wait long).
    counted: bool,
    /// Counted in `untracked[parity]` instead (its slot was not moving).
    untracked: Option<usize>,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.migrator
            .dirty
            .lock()
            .extend(std::mem::take(&mut self.keys));
        if self.counted {
            self.migrator.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        if let Some(parity) = self.untracked {
            self.migrator.untracked[parity].fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Migrator {
    /// CLUSTER INFO's `migrating_slot(s)` lines (`GetMigrationInfo`).
    pub fn info_text(&self) -> String {
        let inner = self.inner.lock();
        if inner.running.is_none() && inner.forbidden.is_none() && inner.failed.is_none() {
            return String::new();
        }
        let (range, state) = match inner.state {
            MigrationState::None => (None, "none"),
            MigrationState::Started => (inner.running, "start"),
            MigrationState::Success => (inner.forbidden, "success"),
            MigrationState::Failed => (inner.failed, "fail"),
        };
        format!(
            "migrating_slot(s): {}\r\ndestination_node: {}\r\nmigrating_state: {state}\r\n",
            range.map_or("-1".to_string(), |r| r.to_string()),
            inner.dst
        )
    }

    /// The range being moved and its destination's id.
    pub fn migrating(&self) -> Option<(SlotRange, String)> {
        let inner = self.inner.lock();
        inner.running.map(|r| (r, inner.dst.clone()))
    }

    /// Lifts the write ban on `range` (an import of the range it left).
    pub fn release_forbidden(&self, range: SlotRange) {
        let mut inner = self.inner.lock();
        if inner.forbidden == Some(range) {
            inner.forbidden = None;
        }
    }

    /// A write to `slot` (of this node) is about to run: refused with
    /// `TRYAGAIN` in a migration's last phase; tracked while the slot
    /// moves. A `blocking` pop is not waited for before the last phase
    /// (its keys are marked now and again when it ends). Any other write
    /// is counted until it ends, so that a migration starting meanwhile
    /// reads its snapshot after it.
    pub fn enter_write<'a>(
        &'a self,
        slot: u16,
        keys: &[&[u8]],
        blocking: bool,
    ) -> Result<Option<WriteGuard<'a>>, Reply> {
        let inner = self.inner.lock();
        if inner.forbidden.is_some_and(|r| r.contains(slot)) {
            return Err(Reply::error(
                "TRYAGAIN Can't write to slot being migrated which is in write forbidden phase",
            ));
        }
        if inner.running.is_some_and(|r| r.contains(slot)) {
            let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
            if blocking {
                self.dirty.lock().extend(keys.iter().cloned());
            } else {
                self.in_flight.fetch_add(1, Ordering::SeqCst);
            }
            return Ok(Some(WriteGuard {
                migrator: self,
                keys,
                counted: !blocking,
                untracked: None,
            }));
        }
        if blocking {
            return Ok(None);
        }
        let parity = (inner.epoch & 1) as usize;
        self.untracked[parity].fetch_add(1, Ordering::SeqCst);
        Ok(Some(WriteGuard {
            migrator: self,
            keys: Vec::new(),
            counted: false,
            untracked: Some(parity),
        }))
    }

    /// A migration starts: later writes count in the next epoch.
    pub(crate) fn next_epoch(inner: &mut Inner) {
        inner.epoch += 1;
    }

    /// Waits until the writes that began before the running migration
    /// started have ended (at most `within`): their keys are then in the
    /// store its snapshot reads, or marked dirty.
    pub(crate) fn drain_earlier_writes(&self, within: Duration) -> Result<(), String> {
        let parity = (self.inner.lock().epoch.wrapping_sub(1) & 1) as usize;
        let deadline = Instant::now() + within;
        while self.untracked[parity].load(Ordering::SeqCst) > 0 {
            if Instant::now() > deadline {
                return Err("writes to the slot did not end".into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Waits for the migration started last to end, at most `timeout`
    /// seconds (0: no limit): its result, or `None` on timeout.
    pub fn wait(&self, timeout: u64) -> Option<Result<(), String>> {
        let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_secs(timeout));
        let mut inner = self.inner.lock();
        while inner.running.is_some() {
            match deadline {
                Some(d) => {
                    if self.finished.wait_until(&mut inner, d).timed_out() {
                        return None;
                    }
                }
                None => self.finished.wait(&mut inner),
            }
        }
        inner.result.clone()
    }
}
