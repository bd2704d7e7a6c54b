//! `--verify` with a server: every key read back through the protocol
//! (`TYPE`, the expiry, the whole value — `HGETALL`, `LRANGE`, `SMEMBERS`,
//! `ZRANGE … WITHSCORES`, or `HSCAN`/`SSCAN`/`ZSCAN`/`LRANGE` windows for a
//! big value) and compared with the store by a digest of its content
//! ([`ContentDigest`]); then the destination is walked for keys the source
//! lacks. Expiries read with `TIME` + `PTTL` (servers without
//! `PEXPIRETIME`) are equal within [`INEXACT_EXPIRY_MS`].

use std::collections::{HashMap, HashSet};

use redcodec_codec::Codec;
use redcodec_codec::DataType;
use redcodec_engine::internals::keyspace::migrated_expiry;
use redcodec_engine::Engine;

use super::endpoint::Endpoint;
use super::judge::{cannot_hold, Rules, Verdict};
use super::pages::{for_each_page, CHUNK, PAGE};
use super::remote::{self, Fetched, RemoteKey, RemoteType};
use super::reply::int;
use super::server::Server;
use crate::digest::{ContentDigest, Difference, DifferenceKind, KeyDigest, VerifyReport};
use crate::error::MigrateError;

/// How far apart two expiries may be when the server's was read as
/// `TIME` + `PTTL` (its own rounding to seconds included, for servers
/// that keep seconds).
pub const INEXACT_EXPIRY_MS: u64 = 2000;

/// Differences listed (all are counted).
const LISTED: usize = 100;

fn differ(report: &mut VerifyReport, key: Vec<u8>, kind: DifferenceKind) {
    report.differences += 1;
    if report.listed.len() < LISTED {
        report.listed.push(Difference { key, kind });
    }
}

/// Compares two digests of `key`; `inexact`: the server's expiry was read
/// as `TIME` + `PTTL`.
fn compare(
    report: &mut VerifyReport,
    key: Vec<u8>,
    source: KeyDigest,
    mut destination: KeyDigest,
    inexact: bool,
) {
    let (a, b) = (source.expire_ms, destination.expire_ms);
    if inexact && a != 0 && b != 0 && a.abs_diff(b) <= INEXACT_EXPIRY_MS {
        destination.expire_ms = a;
    }
    if source == destination {
        report.matching += 1;
    } else {
        differ(
            report,
            key,
            DifferenceKind::Differs {
                source,
                destination,
            },
        );
    }
}

/// The digest of a store's key, its expiry as stored; `None` if not live.
fn store_digest<C: Codec>(
    engine: &Engine<C>,
    key: &[u8],
) -> Result<Option<KeyDigest>, MigrateError> {
    let mut digest: Option<ContentDigest> = None;
    let summary = engine.read_chunks(key, CHUNK, |summary, chunk| -> Result<(), MigrateError> {
        digest
            .get_or_insert_with(|| ContentDigest::new(summary.data_type))
            .add(&chunk);
        Ok(())
    })?;
    Ok(summary.zip(digest).map(|(s, d)| d.finish(s.expire_ms)))
}

/// The digest of a server's key with expiry `expire_ms`, its value as
/// [`remote::for_each_value`] fetched it; `None` if it is gone. A
/// collection read by `SCAN` whose count disagrees is read again without
/// repeats.
fn server_digest(
    server: &mut Server,
    k: &RemoteKey,
    fetched: Fetched,
    expire_ms: u64,
) -> Result<Option<KeyDigest>, MigrateError> {
    let t = k.data_type().unwrap_or(DataType::String);
    match fetched {
        Fetched::Whole(value) => {
            let mut d = ContentDigest::new(t);
            d.add(&value);
            return Ok(Some(d.finish(expire_ms)));
        }
        Fetched::Gone => return Ok(None),
        Fetched::Big => {}
    }
    for distinct in [false, true] {
        let mut d = ContentDigest::new(t);
        let n = remote::read_chunked(server, k, CHUNK, distinct, &mut |chunk| {
            d.add(&chunk);
            Ok(())
        })?;
        if n == 0 {
            return Ok(None);
        }
        let scanned = matches!(t, DataType::Hash | DataType::Set | DataType::ZSet);
        if !scanned || distinct || d.elements() == k.len {
            return Ok(Some(d.finish(expire_ms)));
        }
    }
    Ok(None)
}

/// Compares every live key of the store `src` with the server or
/// cluster at `target` (after a migration to it), then lists keys only
/// the server holds (counted apart with `merge`). Keys `rules` leave out
/// are counted as unrepresentable.
pub fn verify_store_to_server<C: Codec>(
    src: &Engine<C>,
    target: &Endpoint,
    rules: &Rules,
    merge: bool,
) -> Result<VerifyReport, MigrateError> {
    let server = &mut Server::connect(target)?;
    let mut report = VerifyReport::default();
    let pages = |after: Option<&[u8]>| src.summaries_after(after, PAGE);
    for_each_page(None, pages, |page| {
        let mut keys = Vec::new();
        for (key, entry) in page {
            report.source_keys += 1;
            match rules.source_key(&key, &entry) {
                Ok(Verdict::Copy | Verdict::CopyFirst(_)) => keys.push(key),
                Ok(Verdict::Skip(_) | Verdict::Stop(_)) => report.unrepresentable += 1,
                Err(e) => differ(&mut report, key, DifferenceKind::Unreadable(e.to_string())),
            }
        }
        let probed = remote::probe(server, keys.clone(), false)?;
        let present: HashSet<&[u8]> = probed.iter().map(|k| k.key.as_slice()).collect();
        for key in keys.iter().filter(|k| !present.contains(k.as_slice())) {
            match store_digest(src, key)? {
                Some(_) => differ(&mut report, key.clone(), DifferenceKind::Missing),
                None => report.source_keys -= 1, // expired meanwhile
            }
        }
        remote::for_each_value(server, &probed, CHUNK, |server, k, fetched| {
            let key = k.key.clone();
            let Some(source) = store_digest(src, &key)? else {
                report.source_keys -= 1; // expired meanwhile
                return Ok(());
            };
            if let RemoteType::Other(name) = &k.kind {
                let why = format!("the server holds a {name}");
                differ(&mut report, key, DifferenceKind::Unreadable(why));
                return Ok(());
            }
            let inexact = k.expire.is_some_and(|e| !e.exact);
            let expire_ms = k.expire.map_or(0, |e| e.at_ms);
            match server_digest(server, k, fetched, expire_ms)? {
                Some(destination) => compare(&mut report, key, source, destination, inexact),
                None => differ(&mut report, key, DifferenceKind::Missing),
            }
            Ok(())
        })?;
        Ok(())
    })?;
    for_each_scan_page(server, |_, keys| {
        for key in keys {
            if let Ok(None) = src.summary(&key) {
                only_in_destination(&mut report, key, merge);
            }
        }
        Ok(())
    })?;
    Ok(report)
}

/// Compares every key of the server at `source` with the store `dst`
/// (after a migration into it), expiries as the store keeps them, then
/// lists keys only the store holds (counted apart with `merge`). Keys the
/// store cannot hold are counted as unrepresentable.
pub fn verify_server_to_store<C: Codec>(
    source: &Endpoint,
    dst: &Engine<C>,
    merge: bool,
) -> Result<VerifyReport, MigrateError> {
    let server = &mut Server::connect(source)?;
    let caps = dst.capabilities();
    let mut report = VerifyReport::default();
    for_each_scan_page(server, |server, keys| {
        let mut probed = remote::probe(server, keys, caps.score_limit.is_some())?;
        report.source_keys += probed.len() as u64;
        probed.retain(|k| {
            let holds = cannot_hold(k, caps, dst.codec()).is_none();
            report.unrepresentable += u64::from(!holds);
            holds
        });
        remote::for_each_value(server, &probed, CHUNK, |server, k, fetched| {
            let expire_ms = k.expire.map_or(0, |e| migrated_expiry(caps, e.at_ms));
            if expire_ms != 0 && expire_ms <= dst.now_ms() {
                report.source_keys -= 1; // expired
                return Ok(());
            }
            let inexact = k.expire.is_some_and(|e| !e.exact);
            let Some(source) = server_digest(server, k, fetched, expire_ms)? else {
                report.source_keys -= 1; // gone meanwhile
                return Ok(());
            };
            match store_digest(dst, &k.key)? {
                Some(destination) => {
                    compare(&mut report, k.key.clone(), source, destination, inexact);
                }
                None => differ(&mut report, k.key.clone(), DifferenceKind::Missing),
            }
            Ok(())
        })
    })?;
    let pages = |after: Option<&[u8]>| dst.keys_after(after, PAGE);
    for_each_page(None, pages, |page| {
        let keys = page.into_iter().map(|(k, _)| k).collect();
        count_destination_only(&mut report, server, keys, merge)
    })?;
    Ok(report)
}

/// The digests of a page of a server's keys, with whether each expiry
/// was read inexactly (`TIME` + `PTTL`); keys gone meanwhile are left
/// out, and keys of types redcodec does not model are counted in
/// `unmodelled`.
fn server_digests(
    server: &mut Server,
    keys: &[RemoteKey],
    unmodelled: &mut u64,
) -> Result<HashMap<Vec<u8>, (KeyDigest, bool)>, MigrateError> {
    let mut out = HashMap::with_capacity(keys.len());
    remote::for_each_value(server, keys, CHUNK, |server, k, fetched| {
        if let RemoteType::Other(_) = k.kind {
            *unmodelled += 1;
            return Ok(());
        }
        let inexact = k.expire.is_some_and(|e| !e.exact);
        let expire_ms = k.expire.map_or(0, |e| e.at_ms);
        if let Some(d) = server_digest(server, k, fetched, expire_ms)? {
            out.insert(k.key.clone(), (d, inexact));
        }
        Ok(())
    })?;
    Ok(out)
}

/// Compares every key of the server at `source` with the server or
/// cluster at `target` (after a migration between them), then lists keys
/// only the target holds (counted apart with `merge`). Keys of types
/// redcodec does not model are counted as unrepresentable.
pub fn verify_between_servers(
    source: &Endpoint,
    target: &Endpoint,
    merge: bool,
) -> Result<VerifyReport, MigrateError> {
    let from = &mut Server::connect(source)?;
    let to = &mut Server::connect(target)?;
    let mut report = VerifyReport::default();
    for_each_scan_page(from, |from, keys| {
        let probed = remote::probe(from, keys, false)?;
        let sources = server_digests(from, &probed, &mut report.unrepresentable)?;
        report.source_keys += sources.len() as u64;
        let mut keys: Vec<Vec<u8>> = sources.keys().cloned().collect();
        keys.sort();
        let there = remote::probe(to, keys.clone(), false)?;
        let mut foreign = 0;
        let destinations = server_digests(to, &there, &mut foreign)?;
        for key in keys {
            let (source, source_inexact) = sources[&key].clone();
            match destinations.get(&key) {
                Some((destination, inexact)) => compare(
                    &mut report,
                    key,
                    source,
                    destination.clone(),
                    source_inexact || *inexact,
                ),
                None => differ(&mut report, key, DifferenceKind::Missing),
            }
        }
        Ok(())
    })?;
    for_each_scan_page(to, |_, keys| {
        count_destination_only(&mut report, from, keys, merge)
    })?;
    Ok(report)
}

/// Calls `visit` with each page of the server's keys (`SCAN`).
fn for_each_scan_page(
    server: &mut Server,
    mut visit: impl FnMut(&mut Server, Vec<Vec<u8>>) -> Result<(), MigrateError>,
) -> Result<(), MigrateError> {
    let mut cursor = 0;
    loop {
        let (next, keys) = server.scan(cursor, PAGE)?;
        visit(server, keys)?;
        cursor = next;
        if cursor == 0 {
            return Ok(());
        }
    }
}

/// Counts (or lists) the `keys` of the destination that the source
/// `server` lacks.
fn count_destination_only(
    report: &mut VerifyReport,
    server: &mut Server,
    keys: Vec<Vec<u8>>,
    merge: bool,
) -> Result<(), MigrateError> {
    for key in lacking(server, keys)? {
        only_in_destination(report, key, merge);
    }
    Ok(())
}

/// Which of `keys` the server lacks (`EXISTS`, pipelined).
fn lacking(server: &mut Server, keys: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, MigrateError> {
    let exists: Vec<redis::Cmd> = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("EXISTS");
            c.arg(k.as_slice());
            c
        })
        .collect();
    let replies = server.pipeline(&exists)?;
    let mut out = Vec::new();
    for (key, reply) in keys.into_iter().zip(replies) {
        let reply = server.checked(reply, "EXISTS", Some(&key))?;
        if int(&reply) == Some(0) {
            out.push(key);
        }
    }
    Ok(out)
}

/// A key only the destination holds: counted apart when merging, else
/// a difference.
fn only_in_destination(report: &mut VerifyReport, key: Vec<u8>, merge: bool) {
    if merge {
        report.destination_only += 1;
    } else {
        differ(report, key, DifferenceKind::Extra);
    }
}
