//! Unlogged writes applied on a thread of their own
//! ([`crate::Store::write_unlogged`]): a load makes its next batch while
//! RocksDB inserts the last one into its memtables. One batch at most
//! waits while one is written. Every other call of the store first waits
//! until what was handed over is applied ([`WriteBehind::settle`]), so its
//! reads see it, and learns of a write that failed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use rocksdb::{WriteBatch, WriteOptions};

use crate::db::Db;
use crate::error::StoreError;

/// The RocksDB write batches of one store write, each with its instance.
pub(crate) type Job = Vec<(Arc<Db>, WriteBatch)>;

/// The writer thread (started by the first write handed over) and what
/// became of the writes handed to it.
#[derive(Default)]
pub(crate) struct WriteBehind {
    writer: Mutex<Option<Writer>>,
    state: Arc<State>,
}

/// The thread and its queue.
struct Writer {
    queue: SyncSender<Job>,
    thread: JoinHandle<()>,
}

/// Writes handed over and not yet applied, and the first that failed.
#[derive(Default)]
struct State {
    in_flight: AtomicUsize,
    failed: Mutex<Option<StoreError>>,
    applied: Condvar,
}

impl WriteBehind {
    /// Hands `job` to the writer thread (waiting while another job waits
    /// there already). A write that failed before is reported here
    /// instead, and this one is not made.
    pub(crate) fn submit(&self, job: Job) -> Result<(), StoreError> {
        self.settle_failed()?;
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer.is_none() {
            *writer = Some(Writer::start(self.state.clone())?);
        }
        let Some(writer) = writer.as_ref() else {
            unreachable!("started above")
        };
        self.state.in_flight.fetch_add(1, Ordering::AcqRel);
        if writer.queue.send(job).is_err() {
            // The thread is gone (it cannot panic short of an abort): the
            // job is dropped unwritten, which the next call reports.
            self.state.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Waits until every write handed over is applied; the first of them
    /// that failed, if any, is the error (reported once).
    pub(crate) fn settle(&self) -> Result<(), StoreError> {
        if self.state.in_flight.load(Ordering::Acquire) == 0 {
            return self.settle_failed();
        }
        let mut failed = self
            .state
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while self.state.in_flight.load(Ordering::Acquire) != 0 {
            failed = self
                .state
                .applied
                .wait(failed)
                .unwrap_or_else(PoisonError::into_inner);
        }
        failed.take().map_or(Ok(()), Err)
    }

    /// The failed write, if one is noted (reported once).
    fn settle_failed(&self) -> Result<(), StoreError> {
        let mut failed = self
            .state
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        failed.take().map_or(Ok(()), Err)
    }
}

impl Writer {
    /// The thread, applying each job in turn without the write-ahead log;
    /// after a failed write it applies nothing more until the failure is
    /// reported.
    fn start(state: Arc<State>) -> std::io::Result<Writer> {
        let (queue, jobs) = sync_channel::<Job>(1);
        let thread = std::thread::Builder::new()
            .name("redcodec-load-writer".into())
            .spawn(move || {
                let mut unlogged = WriteOptions::default();
                unlogged.disable_wal(true);
                for job in jobs {
                    let mut failed = state.failed.lock().unwrap_or_else(PoisonError::into_inner);
                    if failed.is_none() {
                        drop(failed);
                        let outcome = job
                            .into_iter()
                            .try_for_each(|(db, wb)| db.write_opt(wb, &unlogged));
                        failed = state.failed.lock().unwrap_or_else(PoisonError::into_inner);
                        if let Err(e) = outcome {
                            *failed = Some(e.into());
                        }
                    }
                    state.in_flight.fetch_sub(1, Ordering::AcqRel);
                    drop(failed);
                    state.applied.notify_all();
                }
            })?;
        Ok(Writer { queue, thread })
    }
}

impl Drop for WriteBehind {
    /// Applies what is queued, then ends the thread (before the store's
    /// databases close: declared before them in the store).
    fn drop(&mut self) {
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Writer { queue, thread }) = writer {
            drop(queue);
            let _ = thread.join();
        }
    }
}
