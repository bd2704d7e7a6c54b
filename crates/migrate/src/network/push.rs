//! A store into a server (`migrate --from FMT --src DIR --to redis://…`,
//! or `redis-cluster://…`): every live key replayed, in the store's key
//! order. A planning pass
//! counts the work and finds every key that cannot be migrated before
//! anything is written; then each key goes out as `DEL`, chunks and
//! `PEXPIREAT` (see [`super::outbox`]), pipelined (into a cluster, each
//! key to its slot's master). After each pipeline the checkpoint records
//! the last key the server surely holds whole.

use std::time::Instant;

use redcodec_codec::Codec;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

use super::endpoint::Endpoint;
use super::job::{Job, Planned, ServerReport};
use super::judge::{Rules, Verdict};
use super::outbox::Outbox;
use super::pages::{for_each_page, CHUNK, PAGE};
use super::server::Server;
use crate::checkpoint::{Position, ServerCheckpoint};
use crate::error::{fail, MigrateError};
use crate::options::MigrateOptions;
use crate::report::{Observer, Tally};

/// Walks the source's summaries after `after`: totals, and every key
/// that stops the migration.
fn plan<C: Codec>(
    src: &Engine<C>,
    after: Option<&[u8]>,
    rules: &Rules,
) -> Result<Planned, MigrateError> {
    let mut planned = Planned::default();
    let pages = |after: Option<&[u8]>| src.summaries_after(after, PAGE);
    for_each_page(after.map(<[u8]>::to_vec), pages, |page| {
        for (key, entry) in &page {
            let elements = entry.as_ref().map_or(0, |s| s.elements);
            planned.count(rules.source_key(key, entry)?, elements);
        }
        Ok(())
    })?;
    Ok(planned)
}

/// What the checkpoint records of a copy into a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The last source key sent whole (a store's walk).
    AfterKey,
    /// The `SCAN` cursor of the source server's page being copied, and
    /// what was copied before it (a page is copied again on resume).
    Page(u64, Tally),
}

/// The copy into a server: outbox, progress and checkpoint.
pub struct Pusher<'a> {
    server: Server,
    outbox: Outbox,
    observer: &'a mut dyn Observer,
    job: &'a Job,
    /// Everything queued so far (an interrupted run's part included).
    queued: Tally,
    /// The last key queued whole, and the tally at that point.
    complete: (Option<Vec<u8>>, Tally),
    /// What the checkpoint records.
    mark: Mark,
    commits: u64,
}

impl<'a> Pusher<'a> {
    /// A copy into `server` for `job`, after `after` (`done` already
    /// written), its checkpoint recording `mark`.
    pub fn new(
        server: Server,
        observer: &'a mut dyn Observer,
        job: &'a Job,
        after: Option<Vec<u8>>,
        done: Tally,
        mark: Mark,
    ) -> Pusher<'a> {
        Pusher {
            server,
            outbox: Outbox::default(),
            observer,
            job,
            queued: done,
            complete: (after, done),
            mark,
            commits: 0,
        }
    }

    /// Everything queued so far.
    pub fn queued(&self) -> Tally {
        self.queued
    }

    /// The progress observer.
    pub fn observer(&mut self) -> &mut dyn Observer {
        &mut *self.observer
    }

    /// Records in the checkpoint that a page begins at `cursor`: what is
    /// queued so far is sent first.
    pub fn page(&mut self, cursor: u64) -> Result<(), MigrateError> {
        self.send()?;
        self.mark = Mark::Page(cursor, self.queued);
        self.checkpoint().save(&self.job.checkpoint, self.job.sync)
    }

    fn checkpoint(&self) -> ServerCheckpoint {
        match &self.mark {
            Mark::AfterKey => self
                .job
                .checkpoint_at(Position::AfterKey(self.complete.0.clone()), self.complete.1),
            Mark::Page(cursor, done) => self.job.checkpoint_at(Position::Cursor(*cursor), *done),
        }
    }

    /// Sends the pipeline, then records how far the server surely is.
    pub fn send(&mut self) -> Result<(), MigrateError> {
        if self.outbox.size() == (0, 0) {
            return Ok(());
        }
        self.outbox.send(&mut self.server)?;
        self.checkpoint()
            .save(&self.job.checkpoint, self.job.sync)?;
        self.commits += 1;
        self.observer.committed(self.commits);
        Ok(())
    }

    fn send_if_full(&mut self) -> Result<(), MigrateError> {
        let (elements, bytes) = self.outbox.size();
        let (most_elements, most_bytes) = self.job.batch;
        if elements >= most_elements || bytes >= most_bytes {
            self.send()?;
        }
        Ok(())
    }

    /// Queues one chunk of `key` (its first: after `DEL`).
    pub fn chunk(&mut self, key: &[u8], first: bool, value: &Value) -> Result<(), MigrateError> {
        if first {
            self.outbox.begin_key(key);
        }
        self.outbox.chunk(key, value);
        self.queued.elements += value.element_count();
        self.queued.bytes += value.byte_count();
        self.observer.progressed(&self.queued);
        self.send_if_full()
    }

    /// Queues the end of `key`: its expiry; the key is then complete.
    pub fn end_key(&mut self, key: &[u8], expire_ms: u64) -> Result<(), MigrateError> {
        if expire_ms != 0 {
            self.outbox.expire_at(key, expire_ms);
        }
        self.queued.keys += 1;
        self.queued.bytes += key.len() as u64;
        self.complete = (Some(key.to_vec()), self.queued);
        self.send_if_full()
    }
}

/// Migrates every live key of the store `src` (named `from` in messages
/// and the checkpoint: `FORMAT (DIR)`) into the server or cluster at
/// `target`, with `options`' batch limits, rules, merge, checkpoint
/// (default: [`Endpoint::default_checkpoint`]), resume and sync. A server
/// holding keys is refused unless merging. The checkpoint is deleted when
/// the migration completes.
pub fn migrate_to_server<C: Codec>(
    src: &Engine<C>,
    from: &str,
    target: &Endpoint,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<ServerReport, MigrateError> {
    let mut server = Server::connect(target)?;
    let job = Job::new(options, from.to_string(), server.name().to_string(), target)?;
    job.refuse_unless_empty(&mut server)?;
    let (after, done) = match &job.resumed {
        Some(c) => match &c.position {
            Position::AfterKey(after) => (after.clone(), c.done),
            Position::Cursor(_) => return Err(job.wrong_direction()),
        },
        None => (None, Tally::default()),
    };
    let planned = plan(src, after.as_deref(), &job.rules)?;
    planned.start(observer, &job, done)?;
    let started = Instant::now();
    let mut pusher = Pusher::new(server, observer, &job, after.clone(), done, Mark::AfterKey);
    let mut report = job.report();
    pusher.checkpoint().save(&job.checkpoint, job.sync)?;
    let resumed = match &after {
        Some(k) => format!("resumed after key {}", quote_bytes(k)),
        None => "resumed from the first key".to_string(),
    };
    copy(src, &mut pusher, after, &job.rules, &mut report)?;
    job.finish(report, pusher.queued, started, resumed)
}

fn copy<C: Codec>(
    src: &Engine<C>,
    pusher: &mut Pusher<'_>,
    after: Option<Vec<u8>>,
    rules: &Rules,
    report: &mut ServerReport,
) -> Result<(), MigrateError> {
    let pages = |after: Option<&[u8]>| src.summaries_after(after, PAGE);
    for_each_page(after, pages, |page| {
        for (key, entry) in page {
            match rules.source_key(&key, &entry)? {
                Verdict::Copy => {}
                Verdict::CopyFirst(s) => report.first_of_several.push(s),
                Verdict::Skip(s) => {
                    pusher.observer.skipped(&s);
                    report.skipped.push(s);
                    continue;
                }
                Verdict::Stop(s) => {
                    return Err(fail(format!("{s} (it appeared after the planning pass)")))
                }
            }
            let mut first = true;
            let chunk = CHUNK.min(pusher.job.batch.0);
            let read = src.read_chunks(&key, chunk, |_, value| -> Result<(), MigrateError> {
                pusher.chunk(&key, first, &value)?;
                first = false;
                Ok(())
            })?;
            match read {
                Some(summary) => pusher.end_key(&key, summary.expire_ms)?,
                None => report.expired += 1,
            }
        }
        Ok(())
    })?;
    pusher.send()
}
