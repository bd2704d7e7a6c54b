//! A server into a store (`migrate --from redis://… --to FMT --dst
//! DIR`): every key of the server written into the store through the
//! engine. The server is walked with
//! `SCAN` a page at a time; each page's keys are probed (type, expiry,
//! size) in two round trips, small values read in one more, big ones in
//! chunks. A planning pass does the same without reading values, to count
//! the work and find every key the store cannot hold before anything is
//! written. After each page the checkpoint records the `SCAN` cursor.
//!
//! A key is written as the engine's own commands write it: whole, in one
//! atomic write ([`Engine::write`]) when it fits one chunk; otherwise its
//! first chunk replaces what the store held, the others are appended
//! (`RPUSH`, `HSET`, `SADD`, `ZADD`), and `PEXPIREAT` comes last. Expiries
//! are stored as the store-to-store migration stores them
//! ([`migrated_expiry`]).

use std::time::Instant;

use redcodec_codec::Codec;
use redcodec_engine::internals::keyspace::migrated_expiry;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::{Engine, Reply};

use super::endpoint::Endpoint;
use super::job::{not_from_a_cluster, Job, Planned, ServerReport};
use super::judge::{Rules, Verdict};
use super::pages::{CHUNK, PAGE};
use super::remote::{self, Fetched, RemoteKey};
use super::server::Server;
use crate::checkpoint::Position;
use crate::error::{fail, MigrateError};
use crate::options::MigrateOptions;
use crate::report::{Observer, Tally};

/// Whether probes must read sorted sets' lowest and highest scores.
fn needs_scores<C: Codec>(dst: &Engine<C>) -> bool {
    dst.capabilities().score_limit.is_some()
}

/// Walks the server from `cursor`: totals, and every key that stops.
fn plan<C: Codec>(
    server: &mut Server,
    dst: &Engine<C>,
    mut cursor: u64,
    rules: &Rules,
) -> Result<Planned, MigrateError> {
    let mut planned = Planned::default();
    loop {
        let (next, keys) = server.scan(cursor, PAGE)?;
        for k in remote::probe(server, keys, needs_scores(dst))? {
            planned.count(rules.remote_key(&k, dst.capabilities(), dst.codec()), k.len);
        }
        cursor = next;
        if cursor == 0 {
            return Ok(planned);
        }
    }
}

/// The error for a write the store refused.
fn store_error(key: &[u8], e: impl std::fmt::Display) -> MigrateError {
    fail(format!(
        "writing key {} into the store: {e}",
        quote_bytes(key)
    ))
}

/// The copy into the store, with its progress.
struct Puller<'a, C: Codec> {
    dst: &'a Engine<C>,
    observer: &'a mut dyn Observer,
    done: Tally,
}

impl<C: Codec> Puller<'_, C> {
    /// Writes `key` (probed as `k`) with its expiry `expire_ms` as the
    /// store keeps it; `whole`: its value, if read whole. Returns whether
    /// the key was still there to copy.
    fn copy_key(
        &mut self,
        server: &mut Server,
        k: &RemoteKey,
        whole: Option<Value>,
        expire_ms: u64,
    ) -> Result<bool, MigrateError> {
        let key = k.key.as_slice();
        if let Some(value) = whole {
            self.dst
                .write(key, &value, expire_ms)
                .map_err(|e| store_error(key, e))?;
            self.count(&value);
        } else {
            let dst = self.dst;
            let mut first = true;
            let n = remote::read_chunked(server, k, CHUNK, false, &mut |chunk| {
                if first {
                    dst.write(key, &chunk, 0).map_err(|e| store_error(key, e))?;
                    first = false;
                } else {
                    append(dst, key, &chunk).map_err(|e| store_error(key, e))?;
                }
                self.count(&chunk);
                Ok(())
            })?;
            if n == 0 {
                return Ok(false);
            }
            if expire_ms != 0 {
                let at = expire_ms.to_string();
                match dst.execute(&[b"PEXPIREAT".as_slice(), key, at.as_bytes()]) {
                    Reply::Integer(_) => {}
                    other => return Err(store_error(key, format!("PEXPIREAT: {other}"))),
                }
            }
        }
        self.done.keys += 1;
        self.done.bytes += key.len() as u64;
        self.observer.progressed(&self.done);
        Ok(true)
    }

    fn count(&mut self, value: &Value) {
        self.done.elements += value.element_count();
        self.done.bytes += value.byte_count();
        self.observer.progressed(&self.done);
    }
}

/// Appends a chunk of a collection to `key`, as its type's command does.
fn append<C: Codec>(
    dst: &Engine<C>,
    key: &[u8],
    chunk: &Value,
) -> Result<(), redcodec_engine::CmdError> {
    match chunk {
        Value::String(v) => dst.set(key, v),
        Value::Hash(pairs) => dst.hset(key, pairs).map(drop),
        Value::List(items) => dst.rpush(key, items).map(drop),
        Value::Set(members) => dst.sadd(key, members).map(drop),
        Value::ZSet(members) => {
            let members: Vec<(f64, &[u8])> =
                members.iter().map(|(m, s)| (*s, m.as_slice())).collect();
            dst.zadd(key, &members).map(drop)
        }
    }
}

/// Migrates every key of the server at `source` into the store `dst`
/// (named `to` in messages and the checkpoint: `FORMAT (DIR)`), with
/// `options`' rules, merge, checkpoint (default:
/// [`Endpoint::default_checkpoint`]), resume and sync. A destination
/// holding keys is refused unless merging. A cluster is not a source:
/// migrate from each of its masters.
pub fn migrate_from_server<C: Codec>(
    source: &Endpoint,
    dst: &Engine<C>,
    to: &str,
    options: &MigrateOptions,
    observer: &mut dyn Observer,
) -> Result<ServerReport, MigrateError> {
    not_from_a_cluster(source)?;
    let mut server = Server::connect(source)?;
    let job = Job::new(options, server.name().to_string(), to.to_string(), source)?;
    if job.resumed.is_none() && !job.merge {
        if let Some((key, _)) = dst.keys_after(None, 1)?.first() {
            return Err(fail(format!(
                "the destination already holds data (for example key {}); refusing to migrate into it without --merge",
                quote_bytes(key)
            )));
        }
    }
    let (cursor, done) = match &job.resumed {
        Some(c) => match c.position {
            Position::Cursor(cursor) => (cursor, c.done),
            Position::AfterKey(_) => return Err(job.wrong_direction()),
        },
        None => (0, Tally::default()),
    };
    let planned = plan(&mut server, dst, cursor, &job.rules)?;
    planned.start(observer, &job, done)?;
    let started = Instant::now();
    let mut puller = Puller {
        dst,
        observer,
        done,
    };
    let mut report = job.report();
    copy(&mut server, &mut puller, cursor, &job, &mut report)?;
    let resumed = format!("resumed at SCAN cursor {cursor}");
    job.finish(report, puller.done, started, resumed)
}

fn copy<C: Codec>(
    server: &mut Server,
    puller: &mut Puller<'_, C>,
    mut cursor: u64,
    job: &Job,
    report: &mut ServerReport,
) -> Result<(), MigrateError> {
    let dst = puller.dst;
    let caps = dst.capabilities();
    let save = |cursor: u64, done: Tally| {
        if job.sync {
            dst.store().sync_wal()?;
        }
        job.checkpoint_at(Position::Cursor(cursor), done)
            .save(&job.checkpoint, job.sync)
    };
    save(cursor, puller.done)?;
    let expiry = |k: &RemoteKey| k.expire.map_or(0, |e| migrated_expiry(caps, e.at_ms));
    let mut commits = 0;
    loop {
        let (next, keys) = server.scan(cursor, PAGE)?;
        let mut copy = Vec::new();
        for k in remote::probe(server, keys, needs_scores(dst))? {
            match job.rules.remote_key(&k, caps, dst.codec()) {
                Verdict::Copy | Verdict::CopyFirst(_) => {}
                Verdict::Skip(s) => {
                    puller.observer.skipped(&s);
                    report.skipped.push(s);
                    continue;
                }
                Verdict::Stop(s) => {
                    return Err(fail(format!(
                        "{s} (the key appeared during the migration; rerun with --resume --skip-unrepresentable)"
                    )))
                }
            }
            let expire_ms = expiry(&k);
            if expire_ms != 0 && expire_ms <= dst.now_ms() {
                report.expired += 1;
                continue;
            }
            copy.push(k);
        }
        remote::for_each_value(server, &copy, CHUNK, |server, k, fetched| {
            match fetched {
                Fetched::Whole(value) => puller.copy_key(server, k, Some(value), expiry(k)),
                Fetched::Big => puller.copy_key(server, k, None, expiry(k)),
                // Gone between the probe and the read: nothing to copy.
                Fetched::Gone => Ok(false),
            }
            .map(drop)
        })?;
        cursor = next;
        save(cursor, puller.done)?;
        commits += 1;
        puller.observer.committed(commits);
        if cursor == 0 {
            return Ok(());
        }
    }
}
