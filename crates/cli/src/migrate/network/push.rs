//! `migrate --from FMT --src DIR --to redis://…`: every live key of a
//! store replayed into a server, in the store's key order. A planning pass
//! counts the work and finds every key that cannot be migrated before
//! anything is written; then each key goes out as `DEL`, chunks and
//! `PEXPIREAT` (see [`super::outbox`]), pipelined. After each pipeline the
//! checkpoint records the last key the server surely holds whole.

use std::time::Instant;

use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;
use redcodec_formats::AnyCodec;
use redcodec_migrate::{Observer, Tally};

use super::checkpoint::{Checkpoint, Position};
use super::endpoint::Endpoint;
use super::judge::{Rules, Verdict};
use super::outbox::Outbox;
use super::server::Server;
use super::{fail, for_each_page, verify, Job, Planned, Report, SinkError, CHUNK, PAGE};
use crate::error::CliError;
use crate::migrate::progress::Bar;
use crate::migrate::{print_verify, MigrateArgs};

/// Walks the source's summaries after `after`: totals, and every key
/// that stops the migration.
fn plan(src: &Engine<AnyCodec>, after: Option<&[u8]>, rules: &Rules) -> Result<Planned, CliError> {
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

/// The copy: outbox, progress and checkpoint.
struct Pusher<'a> {
    server: Server,
    outbox: Outbox,
    bar: Bar,
    job: &'a Job,
    /// Limits of one pipeline.
    batch_elements: usize,
    batch_bytes: usize,
    /// Everything queued so far (an interrupted run's part included).
    queued: Tally,
    /// The last key queued whole, and the tally at that point.
    complete: (Option<Vec<u8>>, Tally),
    commits: u64,
}

impl Pusher<'_> {
    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            from: self.job.from.clone(),
            to: self.job.to.clone(),
            merge: self.job.merge,
            done: self.complete.1,
            position: Position::AfterKey(self.complete.0.clone()),
        }
    }

    /// Sends the pipeline, then records how far the server surely is.
    fn send(&mut self) -> Result<(), CliError> {
        if self.outbox.size() == (0, 0) {
            return Ok(());
        }
        self.outbox.send(&mut self.server)?;
        self.checkpoint()
            .save(&self.job.checkpoint, self.job.sync)?;
        self.commits += 1;
        self.bar.committed(self.commits);
        Ok(())
    }

    fn send_if_full(&mut self) -> Result<(), CliError> {
        let (elements, bytes) = self.outbox.size();
        if elements >= self.batch_elements || bytes >= self.batch_bytes {
            self.send()?;
        }
        Ok(())
    }

    /// Queues one chunk of `key` (its first: after `DEL`).
    fn chunk(&mut self, key: &[u8], first: bool, value: &Value) -> Result<(), CliError> {
        if first {
            self.outbox.begin_key(key);
        }
        self.outbox.chunk(key, value);
        self.queued.elements += value.element_count();
        self.queued.bytes += value.byte_count();
        self.bar.progressed(&self.queued);
        self.send_if_full()
    }

    /// Queues the end of `key`: its expiry; the key is then complete.
    fn end_key(&mut self, key: &[u8], expire_ms: u64) -> Result<(), CliError> {
        if expire_ms != 0 {
            self.outbox.expire_at(key, expire_ms);
        }
        self.queued.keys += 1;
        self.queued.bytes += key.len() as u64;
        self.complete = (Some(key.to_vec()), self.queued);
        self.send_if_full()
    }
}

/// Runs the migration of the store `src` into the server at `target`.
pub fn run(args: &MigrateArgs, target: &Endpoint) -> Result<(), CliError> {
    let src = args.pair.open_source()?;
    let mut server = Server::connect(target)?;
    let from = super::store_description(&args.pair.from, args.pair.src_dir()?);
    let job = Job::new(args, from, server.name().to_string(), target)?;
    if job.resumed.is_none() && !args.merge {
        if let Some((n, key)) = server.any_key()? {
            return Err(fail(format!(
                "{} already holds {n} keys (for example {}); refusing to migrate into it \
                 without --merge (with it, source keys replace server keys of the same name)",
                job.to,
                quote_bytes(&key)
            )));
        }
    }
    let (after, done) = match &job.resumed {
        Some(c) => match &c.position {
            Position::AfterKey(after) => (after.clone(), c.done),
            Position::Cursor(_) => return Err(job.wrong_direction()),
        },
        None => (None, Tally::default()),
    };
    let planned = plan(&src, after.as_deref(), &job.rules)?;
    let bar = planned.start(args, &job, done)?;
    let started = Instant::now();
    let mut pusher = Pusher {
        server,
        outbox: Outbox::default(),
        bar,
        job: &job,
        batch_elements: args.batch_elements.max(1),
        batch_bytes: args.batch_bytes.max(1),
        queued: done,
        complete: (after.clone(), done),
        commits: 0,
    };
    let mut report = Report::default();
    let result = pusher
        .checkpoint()
        .save(&job.checkpoint, job.sync)
        .and_then(|()| copy(&src, &mut pusher, after, &job.rules, &mut report));
    pusher.bar.finish();
    result?;
    let mut server = pusher.server;
    report.migrated = pusher.queued;
    report.seconds = started.elapsed().as_secs_f64();
    Checkpoint::remove(&job.checkpoint)?;
    report.resumed = job.resumed.as_ref().map(|c| match &c.position {
        Position::AfterKey(Some(k)) => format!("resumed after key {}", quote_bytes(k)),
        _ => "resumed from the first key".to_string(),
    });
    report.print(&job, "that cannot be migrated");
    if args.verify {
        let verified = verify::store_to_server(&src, &mut server, &job.rules, job.merge)?;
        return print_verify(&verified);
    }
    Ok(())
}

fn copy(
    src: &Engine<AnyCodec>,
    pusher: &mut Pusher<'_>,
    after: Option<Vec<u8>>,
    rules: &Rules,
    report: &mut Report,
) -> Result<(), CliError> {
    let pages = |after: Option<&[u8]>| src.summaries_after(after, PAGE);
    for_each_page(after, pages, |page| {
        for (key, entry) in page {
            match rules.source_key(&key, &entry)? {
                Verdict::Copy => {}
                Verdict::CopyFirst(s) => report.first_of_several.push(s),
                Verdict::Skip(s) => {
                    pusher.bar.skipped(&s);
                    report.skipped.push(s);
                    continue;
                }
                Verdict::Stop(s) => {
                    return Err(fail(format!("{s} (it appeared after the planning pass)")))
                }
            }
            let mut first = true;
            let chunk = CHUNK.min(pusher.batch_elements);
            let read = src
                .read_chunks(&key, chunk, |_, value| -> Result<(), SinkError> {
                    pusher.chunk(&key, first, &value)?;
                    first = false;
                    Ok(())
                })
                .map_err(|SinkError(e)| e)?;
            match read {
                Some(summary) => pusher.end_key(&key, summary.expire_ms)?,
                None => report.expired += 1,
            }
        }
        Ok(())
    })?;
    pusher.send()
}
