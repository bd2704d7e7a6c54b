//! `migrate-type raw-key-value` on the source side (Kvrocks'
//! `sendSnapshotByRawKV`, `BatchSender`): the slot's records go to the
//! destination as they are stored, in RocksDB write batches sent with
//! `APPLYBATCH <batch>`.
//!
//! **Snapshot.** The store is checkpointed (commands wait only while the
//! checkpoint is cut, after a flush made outside the wait) and the copy
//! opened read-only: one point in time, read while commands run. In
//! Kvrocks' slotted layout every key starts with `[ns][slot]`, so a slot
//! range is one contiguous range of each column family, read as one
//! sequential scan each — no seek per key, no decoding beyond the
//! metadata header:
//!
//! 1. the metadata family: a string's (or JSON's) record goes out at once;
//!    a collection's is held back with its subkey prefix
//!    (`[ns][slot][len][key][version]`); expired keys and metadata that
//!    does not decode are left out, as Kvrocks' `DBIterator` leaves them;
//! 2. the subkey family (`default`; `stream` for streams), merged with the
//!    held collections sorted by that prefix: each collection's metadata,
//!    then its subkeys, and for a sorted set each member's score-index
//!    record (`zset_score`, built from the member and its score as Kvrocks
//!    builds it). Subkeys of no live metadata version (left for the
//!    compaction filter) are skipped.
//!
//! **Batches** are Kvrocks' `BatchSender`'s: a key's first record in an
//! empty batch is preceded by its `LogData` (the type code; `3 7`, RPUSH,
//! for a list); a batch is sent once it holds `migrate-batch-size-kb`,
//! after a subkey or a whole string — never between a collection's
//! metadata and its first subkey (Kvrocks checks only after subkeys, so a
//! slot of strings goes as one batch there; here it is cut like any
//! other). Sending is paced to `migrate-batch-rate-limit-mb` (0: no
//! limit), and pipelined: up to [`WINDOW_BYTES`] of batches wait for
//! their replies (Kvrocks waits for each).
//!
//! **Catch-up.** Where Kvrocks replays its WAL, the keys recorded as
//! written meanwhile are sent again in raw form, read from the live store
//! under the key's lock: a key gone or expired as the deletion of its
//! metadata; a key present as the deletion of its metadata, then its
//! metadata and subkeys under a fresh version (the destination may hold
//! subkeys of the old version that the key no longer has; a new version
//! leaves them to the destination's compaction filter, as a Kvrocks
//! DEL-and-rewrite would).

use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

use redcodec_codec::{KeyRange, Place};
use redcodec_engine::{Engine, EngineCore};
use redcodec_formats::AnyCodec;
use redcodec_kvrocks::keys::KeyScheme;
use redcodec_kvrocks::layout;
use redcodec_kvrocks::meta::{type_code, Header};

use super::destination::Link;
use super::write_batch::{fits, WriteBatch};
use crate::cluster::parse::SlotRange;
use crate::master::snapshot::Checkpoint;
use crate::state::Shared;

/// Batches sent and not yet answered, at most (in bytes; at least one
/// batch).
pub const WINDOW_BYTES: usize = 8 << 20;

/// Kvrocks' list command code for RPUSH (`kRedisCmdRPush`).
const RPUSH: u32 = 7;

fn cf_id(place: Place) -> u32 {
    place.cf as u32
}

/// The `LogData` Kvrocks puts before a key of `type_code` in a migration
/// batch (`WriteBatchLogData(type[, RPUSH])`).
fn log_data(code: u8) -> Vec<u8> {
    if code == type_code::LIST {
        format!("{code} {RPUSH}").into_bytes()
    } else {
        code.to_string().into_bytes()
    }
}

/// The batch being filled and the batches on their way (Kvrocks'
/// `BatchSender`).
pub struct Sender {
    batch: WriteBatch,
    /// `LogData` put first when a key's record opens a batch.
    prefix_log: Vec<u8>,
    /// Records in the batch (Kvrocks' `pending_entries_`).
    pending: usize,
    /// `migrate-batch-size-kb`, in bytes.
    max_bytes: usize,
    /// `migrate-batch-rate-limit-mb`, in bytes a second (0: no limit).
    rate: u64,
    /// When the pace lets the next byte go.
    free_at: Option<Instant>,
    /// Sizes of the batches sent and not yet answered.
    in_flight: VecDeque<usize>,
    in_flight_bytes: usize,
    /// Batches and records sent so far.
    pub batches: u64,
    /// Records (puts, deletes, log data) sent so far.
    pub entries: u64,
}

impl Sender {
    /// A sender with the settings as they are now.
    pub fn new(shared: &Shared) -> Sender {
        let mut s = Sender {
            batch: WriteBatch::default(),
            prefix_log: Vec::new(),
            pending: 0,
            max_bytes: 0,
            rate: 0,
            free_at: None,
            in_flight: VecDeque::new(),
            in_flight_bytes: 0,
            batches: 0,
            entries: 0,
        };
        s.settings(shared);
        s
    }

    /// Reads `migrate-batch-size-kb` and `migrate-batch-rate-limit-mb`
    /// again: a CONFIG SET applies from the next batch, as in Kvrocks.
    fn settings(&mut self, shared: &Shared) {
        let settings = shared.settings.lock();
        let kb = settings.integer("migrate-batch-size-kb", 16).max(1) as usize;
        let mb = settings.integer("migrate-batch-rate-limit-mb", 16).max(0) as u64;
        self.max_bytes = kb.saturating_mul(1024);
        self.rate = mb.saturating_mul(1024 * 1024);
    }

    /// No pacing from now on (the last phase, writes refused meanwhile).
    pub fn unpaced(&mut self) {
        self.rate = 0;
        self.free_at = None;
    }

    fn opening(&mut self) {
        if self.pending == 0 && !self.prefix_log.is_empty() {
            self.batch.log_data(&self.prefix_log);
            self.pending += 1;
        }
    }

    /// `Put(cf, key, value)`, after the key's `LogData` if it opens a batch.
    fn put(&mut self, cf: u32, key: &[u8], value: &[u8]) -> Result<(), String> {
        if !fits(key) || !fits(value) {
            return Err("failed to put key value to migration batch, a record too large".into());
        }
        self.opening();
        self.batch.put(cf, key, value);
        self.pending += 1;
        Ok(())
    }

    fn delete(&mut self, cf: u32, key: &[u8]) {
        self.batch.delete(cf, key);
        self.pending += 1;
    }

    fn full(&self) -> bool {
        self.batch.size() >= self.max_bytes
    }

    /// Sends the batch if it is full.
    fn send_if_full(&mut self, shared: &Shared, link: &mut Link) -> Result<(), String> {
        if self.full() {
            self.send(shared, link)?;
        }
        Ok(())
    }

    /// Sends the batch (if it holds anything): paced, pipelined.
    pub fn send(&mut self, shared: &Shared, link: &mut Link) -> Result<(), String> {
        if self.pending == 0 {
            return Ok(());
        }
        let size = self.batch.size();
        if self.rate > 0 {
            let now = Instant::now();
            let at = self.free_at.map_or(now, |t| t.max(now));
            if at > now {
                std::thread::sleep(at - now);
            }
            let cost = Duration::from_secs_f64(size as f64 / self.rate as f64);
            self.free_at = Some(at + cost);
        }
        link.queue(&[b"APPLYBATCH".as_slice(), self.batch.data()]);
        link.send_queued()
            .map_err(|e| format!("failed to send APPLYBATCH command: {e}"))?;
        self.batches += 1;
        self.entries += self.pending as u64;
        self.in_flight.push_back(size);
        self.in_flight_bytes += size;
        while self.in_flight.len() > 1 && self.in_flight_bytes > WINDOW_BYTES {
            self.answered(link, self.in_flight.len() - 1)?;
        }
        self.pending = 0;
        self.batch.clear();
        self.settings(shared);
        Ok(())
    }

    /// Reads replies until at most `keep` batches wait for theirs.
    fn answered(&mut self, link: &mut Link, keep: usize) -> Result<(), String> {
        while self.in_flight.len() > keep {
            link.await_replies(self.in_flight.len() - 1)
                .map_err(|e| format!("failed to send APPLYBATCH command: {e}"))?;
            if let Some(size) = self.in_flight.pop_front() {
                self.in_flight_bytes -= size;
            }
        }
        Ok(())
    }

    /// Sends what is left and waits for every reply.
    pub fn finish(&mut self, shared: &Shared, link: &mut Link) -> Result<(), String> {
        self.send(shared, link)?;
        self.answered(link, 0)
    }
}

/// The key scheme of the node's keys (default namespace, slotted).
fn scheme(shared: &Shared) -> Result<KeyScheme, String> {
    KeyScheme::new(shared.config.default_namespace.as_bytes(), true)
        .map_err(|e| format!("the namespace: {e}"))
}

/// The range of `place` holding the slots of `range`: `[ns][start]` to
/// `[ns][end + 1]` (slots are below 16384: `end + 1` fits two bytes).
fn slot_range(scheme: &KeyScheme, place: Place, range: SlotRange) -> KeyRange {
    let bound = |slot: u16| {
        let mut b = scheme.namespace_prefix().to_vec();
        b.extend_from_slice(&slot.to_be_bytes());
        b
    };
    KeyRange {
        place,
        lower: bound(range.start),
        upper: bound(range.end + 1),
    }
}

/// A collection's metadata, held until the subkey scan reaches it.
struct Held {
    /// `[ns][slot][len][key][version]`: every subkey of it starts so.
    prefix: Vec<u8>,
    meta_key: Vec<u8>,
    meta_value: Vec<u8>,
    code: u8,
}

/// What the snapshot sent.
pub struct Snapshot {
    /// Keys sent.
    pub keys: usize,
}

/// The log line of a snapshot sent (Kvrocks' "Succeed to migrate snapshot
/// range" line, with the time the checkpoint took).
fn log_snapshot(range: SlotRange, started: Instant, cut: Duration, sender: &Sender, bytes: u64) {
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "redcodec serve: [migrate] Succeed to migrate snapshot range, slot(s): {range}, elapsed: {} ms (checkpoint {} ms), sent: {bytes} bytes, rate: {:.2} kb/s, batches: {}, entries: {}",
        (secs * 1000.0) as u64,
        cut.as_millis(),
        bytes as f64 / 1024.0 / secs.max(1e-9),
        sender.batches,
        sender.entries,
    );
}

/// Checkpoints the store (commands wait only while it is cut) and opens the
/// copy read-only.
fn point_in_time(shared: &Shared) -> Result<crate::master::snapshot::PointInTime, String> {
    let engine = super::paced_send::engine(shared)?;
    let failed = |e: &dyn std::fmt::Display| format!("failed to take the snapshot: {e}");
    // Most of the memtables go to disk before commands wait.
    engine.store().flush().map_err(|e| failed(&e))?;
    let held = engine.lock_all();
    let checkpoint =
        Checkpoint::take(&engine, Path::new(&shared.config.dir)).map_err(|e| failed(&e))?;
    drop(held);
    checkpoint.open(&engine).map_err(|e| failed(&e))
}

/// Sends every key of `range` as it is at this moment.
pub fn send_snapshot(
    shared: &Shared,
    link: &mut Link,
    sender: &mut Sender,
    range: SlotRange,
) -> Result<Snapshot, String> {
    let scheme = scheme(shared)?;
    let started = Instant::now();
    let copy = point_in_time(shared)?;
    let cut = started.elapsed();
    let core = copy.core();
    let now = core.now_ms();
    let read_failed = |e: &dyn std::fmt::Display| format!("failed to read the slot: {e}");
    let head = scheme.namespace_prefix().len() + 2;
    let mut keys = 0;
    let mut subkeyed: Vec<Held> = Vec::new();
    let mut streams: Vec<Held> = Vec::new();
    let mut it = core
        .store()
        .scan(&slot_range(&scheme, layout::METADATA, range), None, false);
    while let Some((key, value)) = it.next().map_err(|e| read_failed(&e))? {
        let Ok(header) = Header::decode(&value) else {
            continue;
        };
        if header.expired_at(now) || key.len() < head {
            continue;
        }
        keys += 1;
        let code = header.type_code();
        if header.is_single_value() {
            sender.prefix_log = log_data(code);
            sender.put(cf_id(layout::METADATA), &key, &value)?;
            sender.send_if_full(shared, link)?;
            continue;
        }
        let user_key = &key[head..];
        let mut prefix = Vec::with_capacity(head + 12 + user_key.len());
        prefix.extend_from_slice(&key[..head]);
        prefix.extend_from_slice(&(user_key.len() as u32).to_be_bytes());
        prefix.extend_from_slice(user_key);
        prefix.extend_from_slice(&header.version.to_be_bytes());
        let held = Held {
            prefix,
            meta_key: key,
            meta_value: value,
            code,
        };
        if code == type_code::STREAM {
            streams.push(held);
        } else {
            subkeyed.push(held);
        }
    }
    drop(it);
    for (place, mut held) in [(layout::DEFAULT, subkeyed), (layout::STREAM, streams)] {
        held.sort_unstable_by(|a, b| a.prefix.cmp(&b.prefix));
        merge(shared, link, sender, core, &scheme, place, range, &held)?;
    }
    sender.send(shared, link)?;
    log_snapshot(range, started, cut, sender, link.sent().0);
    Ok(Snapshot { keys })
}

/// Puts a collection's metadata (opening it in the batch).
fn open_collection(sender: &mut Sender, h: &Held) -> Result<(), String> {
    sender.prefix_log = log_data(h.code);
    sender.put(cf_id(layout::METADATA), &h.meta_key, &h.meta_value)
}

/// Puts one subkey of a collection (and its score-index record for a
/// sorted set) whose prefix is `prefix`.
fn put_subkey(
    sender: &mut Sender,
    code: u8,
    place: Place,
    prefix: &[u8],
    sub: &[u8],
    value: &[u8],
) -> Result<(), String> {
    let mut key = Vec::with_capacity(prefix.len() + sub.len());
    key.extend_from_slice(prefix);
    key.extend_from_slice(sub);
    sender.put(cf_id(place), &key, value)?;
    if code == type_code::ZSET {
        key.truncate(prefix.len());
        key.extend_from_slice(value);
        key.extend_from_slice(sub);
        sender.put(cf_id(layout::ZSET_SCORE), &key, &[])?;
    }
    Ok(())
}

/// One scan of `place`'s slot range, merged with the collections `held`
/// (sorted by prefix): each collection's metadata, then its subkeys.
#[allow(clippy::too_many_arguments)]
fn merge(
    shared: &Shared,
    link: &mut Link,
    sender: &mut Sender,
    core: &EngineCore<AnyCodec>,
    scheme: &KeyScheme,
    place: Place,
    range: SlotRange,
    held: &[Held],
) -> Result<(), String> {
    if held.is_empty() {
        return Ok(());
    }
    let mut at = 0;
    let mut opened = false;
    let mut it = core
        .store()
        .scan(&slot_range(scheme, place, range), None, false);
    while let Some((key, value)) = it
        .next()
        .map_err(|e| format!("failed to read the slot: {e}"))?
    {
        // Collections before this subkey are done.
        while at < held.len() && !key.starts_with(&held[at].prefix) && held[at].prefix < key {
            if !opened {
                open_collection(sender, &held[at])?;
                sender.send_if_full(shared, link)?;
            }
            at += 1;
            opened = false;
        }
        let Some(h) = held.get(at) else {
            break;
        };
        if !key.starts_with(&h.prefix) {
            // A subkey of no live version.
            continue;
        }
        if !opened {
            open_collection(sender, h)?;
            opened = true;
        }
        put_subkey(
            sender,
            h.code,
            place,
            &h.prefix,
            &key[h.prefix.len()..],
            &value,
        )?;
        sender.send_if_full(shared, link)?;
    }
    for h in &held[at..] {
        if !opened {
            open_collection(sender, h)?;
            sender.send_if_full(shared, link)?;
        }
        opened = false;
    }
    Ok(())
}

/// A key's records as they are now, read under its lock: `None` if it is
/// gone (or expired).
struct Current {
    meta_key: Vec<u8>,
    meta_value: Vec<u8>,
    header: Header,
    /// Its subkeys: sub bytes and value.
    subs: Vec<(Vec<u8>, Vec<u8>)>,
}

fn current(
    engine: &Engine<AnyCodec>,
    scheme: &KeyScheme,
    key: &[u8],
) -> Result<(Vec<u8>, Option<Current>), String> {
    let meta_key = scheme.ns_key(key);
    let _held = engine.lock_keys(&[key]);
    let read_failed = |e: &dyn std::fmt::Display| format!("failed to read key: {e}");
    let Some(value) = engine
        .store()
        .get(layout::METADATA, &meta_key)
        .map_err(|e| read_failed(&e))?
    else {
        return Ok((meta_key, None));
    };
    let Ok(header) = Header::decode(&value) else {
        return Ok((meta_key, None));
    };
    if header.expired_at(engine.now_ms()) {
        return Ok((meta_key, None));
    }
    let mut subs = Vec::new();
    if !header.is_single_value() {
        let place = if header.type_code() == type_code::STREAM {
            layout::STREAM
        } else {
            layout::DEFAULT
        };
        let (lower, upper) = scheme.sub_bounds(key, header.version);
        let skip = lower.len();
        let mut it = engine.store().scan(
            &KeyRange {
                place,
                lower,
                upper,
            },
            None,
            false,
        );
        while let Some((k, v)) = it.next().map_err(|e| read_failed(&e))? {
            subs.push((k[skip..].to_vec(), v));
        }
    }
    Ok((
        meta_key.clone(),
        Some(Current {
            meta_key,
            meta_value: value,
            header,
            subs,
        }),
    ))
}

/// Where the version sits in a collection's metadata: after the flags and
/// the expiry (8 bytes, or 4 in the legacy layout).
fn version_offset(header: &Header) -> usize {
    1 + if header.flags & redcodec_kvrocks::meta::FLAG_64BIT != 0 {
        8
    } else {
        4
    }
}

/// A fresh version, distinct from `old` (Kvrocks' clock-and-counter
/// version, `Metadata::generateVersion`).
fn fresh_version(engine: &Engine<AnyCodec>, counter: &mut u64, old: u64) -> u64 {
    *counter += 1;
    let v = redcodec_kvrocks::version::next_version(engine.clock().now_us(), *counter);
    if v == old {
        v.wrapping_add(1)
    } else {
        v
    }
}

/// Sends `keys` again as they are now (see the module docs: the deletion
/// of the metadata, then the key under a fresh version).
pub fn resend(
    shared: &Shared,
    link: &mut Link,
    sender: &mut Sender,
    range: SlotRange,
    keys: &[Vec<u8>],
    counter: &mut u64,
) -> Result<(), String> {
    let scheme = scheme(shared)?;
    for key in keys {
        if !range.contains(redcodec_kvrocks::slot::slot(key)) {
            continue;
        }
        let (meta_key, found, version) = {
            let engine = super::paced_send::engine(shared)?;
            let (meta_key, found) = current(&engine, &scheme, key)?;
            let version = found
                .as_ref()
                .filter(|c| !c.header.is_single_value())
                .map(|c| fresh_version(&engine, counter, c.header.version));
            (meta_key, found, version)
        };
        sender.delete(cf_id(layout::METADATA), &meta_key);
        let Some(c) = found else {
            sender.send_if_full(shared, link)?;
            continue;
        };
        let code = c.header.type_code();
        sender.prefix_log = log_data(code);
        let Some(version) = version else {
            sender.put(cf_id(layout::METADATA), &c.meta_key, &c.meta_value)?;
            sender.send_if_full(shared, link)?;
            continue;
        };
        let mut meta_value = c.meta_value;
        let at = version_offset(&c.header);
        if let Some(field) = meta_value.get_mut(at..at + 8) {
            field.copy_from_slice(&version.to_be_bytes());
        }
        sender.put(cf_id(layout::METADATA), &c.meta_key, &meta_value)?;
        let prefix = scheme.sub_prefix(key, version);
        let place = if code == type_code::STREAM {
            layout::STREAM
        } else {
            layout::DEFAULT
        };
        for (sub, value) in &c.subs {
            put_subkey(sender, code, place, &prefix, sub, value)?;
            sender.send_if_full(shared, link)?;
        }
        sender.send_if_full(shared, link)?;
    }
    Ok(())
}
