//! A server into another server or a cluster (`migrate --from
//! redis://… --to redis-cluster://…`): the source walked with `SCAN` a
//! page at a time and probed as [`super::pull`] reads it, every key
//! written as [`super::push`] writes it (`DEL`, chunks, `PEXPIREAT` with
//! the absolute expiry read from the source). The checkpoint records the
//! cursor of the page being copied: a resumed run copies that page again
//! (each key is replaced whole, so the result is the same).

use std::time::Instant;

use super::endpoint::Endpoint;
use super::job::{not_from_a_cluster, Job, Planned, ServerReport};
use super::judge::{Rules, Verdict};
use super::pages::{CHUNK, PAGE};
use super::push::{Mark, Pusher};
use super::remote::{self, Fetched, RemoteKey};
use super::server::Server;
use crate::checkpoint::Position;
use crate::error::{fail, MigrateError};
use crate::options::MigrateOptions;
use crate::report::{Observer, Tally};

/// Walks the source from `cursor`: totals, and every key that stops.
fn plan(server: &mut Server, mut cursor: u64, rules: &Rules) -> Result<Planned, MigrateError> {
    let mut planned = Planned::default();
    loop {
        let (next, keys) = server.scan(cursor, PAGE)?;
        for k in remote::probe(server, keys, false)? {
            planned.count(rules.server_key(&k), k.len);
        }
        cursor = next;
        if cursor == 0 {
            return Ok(planned);
        }
    }
}

/// Migrates every key of the server at `source` into the server or
/// cluster at `target`, with `options`' batch limits, rules, merge,
/// checkpoint (default: `target`'s [`Endpoint::default_checkpoint`]),
/// resume and sync. A target holding keys is refused unless merging.
pub fn migrate_between_servers(
    source: &Endpoint,
    target: &Endpoint,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<ServerReport, MigrateError> {
    not_from_a_cluster(source)?;
    if source.name() == target.name() {
        return Err(fail(format!(
            "--from and --to are the same server ({})",
            source.name()
        )));
    }
    let mut from = Server::connect(source)?;
    let mut to = Server::connect(target)?;
    let job = Job::new(
        options,
        from.name().to_string(),
        to.name().to_string(),
        target,
    )?;
    job.refuse_unless_empty(&mut to)?;
    let (cursor, done) = match &job.resumed {
        Some(c) => match c.position {
            Position::Cursor(cursor) => (cursor, c.done),
            Position::AfterKey(_) => return Err(job.wrong_direction()),
        },
        None => (0, Tally::default()),
    };
    let planned = plan(&mut from, cursor, &job.rules)?;
    planned.start(observer, &job, done)?;
    let started = Instant::now();
    let mut pusher = Pusher::new(to, observer, &job, None, done, Mark::Page(cursor, done));
    let mut report = job.report();
    copy(&mut from, &mut pusher, cursor, &job.rules, &mut report)?;
    let resumed = format!("resumed at SCAN cursor {cursor}");
    job.finish(report, pusher.queued(), started, resumed)
}

fn copy(
    from: &mut Server,
    pusher: &mut Pusher<'_>,
    mut cursor: u64,
    rules: &Rules,
    report: &mut ServerReport,
) -> Result<(), MigrateError> {
    loop {
        pusher.page(cursor)?;
        let (next, keys) = from.scan(cursor, PAGE)?;
        let mut copy = Vec::new();
        for k in remote::probe(from, keys, false)? {
            match rules.server_key(&k) {
                Verdict::Copy | Verdict::CopyFirst(_) => copy.push(k),
                Verdict::Skip(s) => {
                    pusher.observer().skipped(&s);
                    report.skipped.push(s);
                }
                Verdict::Stop(s) => {
                    return Err(fail(format!(
                        "{s} (the key appeared during the migration; rerun with --resume --skip-unrepresentable)"
                    )))
                }
            }
        }
        remote::for_each_value(from, &copy, CHUNK, |from, k, fetched| {
            let expire_ms = k.expire.map_or(0, |e| e.at_ms);
            match fetched {
                Fetched::Whole(value) => pusher.chunk(&k.key, true, &value)?,
                Fetched::Big => {
                    if !copy_big(from, pusher, k)? {
                        return Ok(());
                    }
                }
                // Gone between the probe and the read: nothing to copy.
                Fetched::Gone => return Ok(()),
            }
            pusher.end_key(&k.key, expire_ms)
        })?;
        cursor = next;
        if cursor == 0 {
            return pusher.send();
        }
    }
}

/// Copies a value too big to read whole, chunk by chunk; whether it was
/// still there.
fn copy_big(
    from: &mut Server,
    pusher: &mut Pusher<'_>,
    k: &RemoteKey,
) -> Result<bool, MigrateError> {
    let mut first = true;
    let n = remote::read_chunked(from, k, CHUNK, false, &mut |chunk| {
        pusher.chunk(&k.key, first, &chunk)?;
        first = false;
        Ok(())
    })?;
    Ok(n > 0)
}
