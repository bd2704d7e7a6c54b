//! Whole RDB files: a store written out as the `dump.rdb` redis-server 7.0
//! writes ([`Exporter`]), and an RDB file redis-server wrote read into a
//! store of any format ([`import`], [`load_batch`]).
//!
//! Both go one key at a time: memory holds one key's value (and, on
//! import, a batch of at most [`BATCH_KEYS`] keys or [`BATCH_BYTES`]
//! bytes), whatever the file's size.
//!
//! Keys are written the way `RESTORE … ABSTTL` writes them: each format's
//! own rules, its expiry range, a fresh version. Into a destination that
//! held no record when the load began ([`load_fresh_batch`]), a key's
//! current state is read only when [`FreshKeys`] says this load may have
//! written it already (a point read per key was half of a load's time). A key whose expiry has
//! passed is not written (RESTORE creates nothing either); a key the
//! format cannot hold (an expiry past its range, a score it does not
//! store…) is named with the engine's reason and the rest goes on.

use std::io::{Read, Write};

use redcodec_codec::Codec;
use redcodec_engine::internals::cursors::SubCursors;
use redcodec_engine::internals::keyspace::{Ctx, ExpireAt, KeyView};
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::store::KvStore;
use redcodec_engine::value::{read_value_on, write_value, Value};
use redcodec_engine::{CmdError, EngineCore};
use redcodec_rdb::file_reader::{Entry, RdbFileError, RdbFileReader};
use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
use redcodec_rdb::{EncodeOptions, Value as RdbValue};

/// Keys written per store write while loading.
pub const BATCH_KEYS: usize = 256;
/// Keys written per store write by a load into an empty destination
/// ([`load_fresh_batch`], with [`import_in_batches`]): its writes are
/// sorted, and a bigger batch inserts closer keys one after the other.
pub const FRESH_BATCH_KEYS: usize = 32768;
/// Payload bytes that close a batch early.
pub const BATCH_BYTES: usize = 4 << 20;

/// Why an RDB file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RdbError {
    /// Reading or writing the store failed.
    #[error("the store: {}", .0.message())]
    Store(#[from] CmdError),
    /// Writing the file failed.
    #[error("writing the RDB file: {0}")]
    Write(#[from] std::io::Error),
    /// The file is not a valid RDB (the error names the byte offset).
    #[error("{0}")]
    File(#[from] RdbFileError),
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// Keys written.
    pub keys: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// Keys left out because their metadata does not decode (`redcodec
    /// check` names them).
    pub unreadable: u64,
}

/// An RDB file being written: the header, then every live key of one
/// engine per database index ([`Exporter::database`]), then the end.
pub struct Exporter<W: Write> {
    writer: RdbFileWriter<W>,
    counts: Exported,
}

impl<W: Write> Exporter<W> {
    /// Starts the file with the header `info`.
    pub fn new(out: W, info: &FileInfo) -> Result<Exporter<W>, RdbError> {
        Ok(Exporter {
            writer: RdbFileWriter::new(out, info, EncodeOptions::default())?,
            counts: Exported::default(),
        })
    }

    /// Writes every live key of `core` as database `db`. The caller makes
    /// the read consistent (a point-in-time copy, a store nobody writes,
    /// or no write running meanwhile).
    pub fn database<C: Codec, S: KvStore>(
        &mut self,
        db: u32,
        core: &EngineCore<C, S>,
    ) -> Result<(), RdbError> {
        let ctx = Ctx::new(core);
        let mut walk = KeyWalk::new(&ctx, None);
        let mut cursors = SubCursors::new();
        let mut selected = false;
        while let Some((key, meta)) = walk.next()? {
            let Some(meta) = meta else {
                self.counts.unreadable += 1;
                continue;
            };
            let value = read_value_on(&ctx, &mut cursors, &key, &meta)?;
            if !selected {
                self.writer.select_db(db, 0, 0)?;
                selected = true;
            }
            self.counts.keys += 1;
            let expire = (meta.expire_ms != 0).then_some(meta.expire_ms);
            self.writer.key(&key, &value.into(), expire)?;
        }
        Ok(())
    }

    /// Ends the file (EOF and checksum); returns the writer and the counts.
    pub fn finish(self) -> Result<(W, Exported), RdbError> {
        let (out, bytes) = self.writer.finish()?;
        Ok((
            out,
            Exported {
                bytes,
                ..self.counts
            },
        ))
    }
}

/// A key the engine did not write, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The key.
    pub key: Vec<u8>,
    /// The engine's reason (a Redis error text).
    pub reason: String,
}

/// What a load wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaded {
    /// Keys written.
    pub keys: u64,
    /// Keys not written because their expiry had passed.
    pub expired: u64,
    /// Keys of databases that have no engine here (`import`'s `dbs`).
    pub skipped: u64,
    /// The first refused keys (at most [`Loaded::REFUSED_KEPT`]).
    pub refused: Vec<Refused>,
    /// How many keys were refused in all.
    pub refused_count: u64,
    /// The file's auxiliary fields (`import`, once the file is read).
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Loaded {
    /// How many refused keys are kept by name.
    pub const REFUSED_KEPT: usize = 10;

    fn refuse(&mut self, key: &[u8], reason: String) {
        if self.refused.len() < Self::REFUSED_KEPT {
            self.refused.push(Refused {
                key: key.to_vec(),
                reason,
            });
        }
        self.refused_count += 1;
    }
}

/// The absolute expiry RESTORE … ABSTTL would give `entry` (0: none; a
/// key that expired at the epoch is as expired as any past one).
fn expiry_of(entry: &Entry) -> u64 {
    entry
        .expire_ms
        .map_or(0, |ms| u64::try_from(ms).unwrap_or(0).max(1))
}

/// The keys a load has written into destinations that held no record
/// when it began, remembered in a Bloom filter of bounded size (at most
/// [`FreshKeys::MAX_BYTES`]): a key it has not seen is certainly not in
/// the destination, so its current state need not be read; a key it may
/// have seen (written before, in an earlier database mapped to the same
/// namespace, twice in a bad file, or a false positive) is read as
/// `RESTORE … REPLACE` reads it.
///
/// Such a key is held back ([`load_fresh_batch`]) and written later, by
/// [`load_held`]: a read waits for the load's writes still behind, and
/// reading it in its own batch held the load to the writer's pace.
pub struct FreshKeys {
    /// The filters, each sized for eight times the keys of the one
    /// before; keys are noted in the last, looked for in all.
    filters: Vec<Filter>,
    /// The entries held back, per namespace in the order first met
    /// (a load maps at most 16), each namespace's in the order met.
    held: Vec<HeldBack>,
}

/// The entries of one namespace held back by [`FreshKeys`].
struct HeldBack {
    ns: Vec<u8>,
    entries: Vec<Entry>,
    /// Their key and payload bytes.
    bytes: usize,
}

/// One Bloom filter of [`FreshKeys`], split in blocks of one cache line
/// (eight 64-bit words): a key sets one bit in each word of one block, so
/// noting or looking for it touches one line of memory, not one per bit.
struct Filter {
    blocks: Vec<[u64; 8]>,
    /// Block index mask (the number of blocks is a power of two).
    mask: u64,
    /// Keys it is sized for.
    keys: u64,
    /// Keys noted in it.
    noted: u64,
}

impl Filter {
    /// Bits of one block.
    const BLOCK_BITS: u64 = 512;
    /// Odd multipliers, one per word, that pick a word's bit from a hash.
    const SALTS: [u64; 8] = [
        0x47b6_137b_4497_4d91,
        0x8824_ad5b_a2b7_289d,
        0x7054_95c7_2df1_424b,
        0x9efc_4947_5c6b_fb31,
        0x2df1_424b_9efc_4947,
        0xa2b7_289d_5c6b_fb31,
        0x4497_4d91_8824_ad5b,
        0x5c6b_fb31_7054_95c7,
    ];

    /// A filter of at most `max_bits` for about `keys` keys.
    fn new(keys: u64, max_bits: u64) -> Filter {
        let bits = keys
            .saturating_mul(FreshKeys::BITS_PER_KEY)
            .clamp(1 << 16, max_bits.max(1 << 16))
            .next_power_of_two()
            .min(max_bits.max(1 << 16));
        let blocks = bits / Self::BLOCK_BITS;
        Filter {
            blocks: vec![[0; 8]; blocks as usize],
            mask: blocks - 1,
            keys: bits / FreshKeys::BITS_PER_KEY,
            noted: 0,
        }
    }

    /// The block of hash `h` (its low bits) and the bit each of its words
    /// holds for `h` (from its high bits).
    fn probe(&self, h: u64) -> (usize, [u64; 8]) {
        let x = h >> 32;
        let bits = std::array::from_fn(|i| 1u64 << (x.wrapping_mul(Self::SALTS[i]) >> 58));
        ((h & self.mask) as usize, bits)
    }

    /// Whether every bit of `h` is set.
    fn holds(&self, h: u64) -> bool {
        let (block, bits) = self.probe(h);
        let words = &self.blocks[block];
        (0..8).all(|i| words[i] & bits[i] != 0)
    }

    /// Sets the bits of `h`.
    fn set(&mut self, h: u64) {
        let (block, bits) = self.probe(h);
        let words = &mut self.blocks[block];
        for i in 0..8 {
            words[i] |= bits[i];
        }
        self.noted += 1;
    }

    /// The bytes it takes.
    fn bytes(&self) -> usize {
        self.blocks.len() * 64
    }
}

impl FreshKeys {
    /// The most memory the filters take, whatever the number of keys.
    pub const MAX_BYTES: usize = 64 << 20;
    /// Bits per key expected (about one false positive in 100,000 keys
    /// at 8 bits a key, in one block).
    const BITS_PER_KEY: u64 = 32;

    /// A filter for a load of about `keys` keys; it grows (within
    /// [`FreshKeys::MAX_BYTES`]) if more come.
    pub fn for_keys(keys: u64) -> FreshKeys {
        FreshKeys {
            filters: vec![Filter::new(keys, (Self::MAX_BYTES as u64) * 8)],
            held: Vec::new(),
        }
    }

    /// A filter for a load of a number of keys not known in advance (an
    /// RDB read while it arrives): small at first, eight times larger
    /// each time the last one is full.
    pub fn growing() -> FreshKeys {
        FreshKeys::for_keys(0)
    }

    /// The bytes the filters take.
    pub fn bytes(&self) -> usize {
        self.filters.iter().map(Filter::bytes).sum()
    }

    /// Entries of one namespace held back before they are written
    /// ([`load_held`]): at most this many…
    pub const MAX_HELD_KEYS: usize = 4096;
    /// …or this many bytes of keys and payloads.
    pub const MAX_HELD_BYTES: usize = BATCH_BYTES;

    /// The namespaces of the entries held back, each once, in the order
    /// first met: [`load_held`] writes each's before the load ends.
    pub fn held_namespaces(&self) -> Vec<Vec<u8>> {
        self.held.iter().map(|held| held.ns.clone()).collect()
    }

    /// Holds `entry` of namespace `ns` back.
    fn hold(&mut self, ns: &[u8], entry: Entry) {
        let at = match self.held.iter().position(|held| held.ns == ns) {
            Some(at) => at,
            None => {
                self.held.push(HeldBack {
                    ns: ns.to_vec(),
                    entries: Vec::new(),
                    bytes: 0,
                });
                self.held.len() - 1
            }
        };
        let held = &mut self.held[at];
        held.bytes += entry_bytes(&entry);
        held.entries.push(entry);
    }

    /// Whether the entries of `ns` held back reach a limit (those of
    /// other namespaces are written by their own loads).
    fn holds_enough(&self, ns: &[u8]) -> bool {
        self.held.iter().any(|held| {
            held.ns == ns
                && (held.entries.len() >= Self::MAX_HELD_KEYS || held.bytes >= Self::MAX_HELD_BYTES)
        })
    }

    /// Takes the entries of `ns` held back, in the order met.
    fn take_held(&mut self, ns: &[u8]) -> Vec<Entry> {
        match self.held.iter().position(|held| held.ns == ns) {
            Some(at) => self.held.remove(at).entries,
            None => Vec::new(),
        }
    }

    /// Notes `key` of namespace `ns` as written; returns whether this load
    /// may have written it before (`false`: certainly not).
    pub fn note(&mut self, ns: &[u8], key: &[u8]) -> bool {
        let h = hash_key(ns, key);
        let seen = self.filters.iter().any(|f| f.holds(h));
        let room = (Self::MAX_BYTES - self.bytes()) as u64 * 8;
        let last = self.filters.last_mut().expect("one filter at least");
        // The next filter is at least as large as the last.
        if last.noted >= last.keys && room >= last.keys * Self::BITS_PER_KEY {
            let next = Filter::new(last.keys.saturating_mul(8), room);
            self.filters.push(next);
        }
        self.filters.last_mut().expect("one filter at least").set(h);
        seen
    }
}

/// A 64-bit hash of a namespace and a key (a multiply-xorshift over
/// 8-byte words, finished as splitmix64).
fn hash_key(ns: &[u8], key: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (ns.len() as u64) ^ ((key.len() as u64) << 32) ^ K;
    for part in [ns, key] {
        let mut words = part.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
            h = (h ^ w).wrapping_mul(K).rotate_left(31);
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        h = (h ^ u64::from_le_bytes(tail))
            .wrapping_mul(K)
            .rotate_left(31);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// A destination that held no record when the load began: the keys
/// written so far, and the namespace's name in them.
struct Fresh<'a> {
    keys: &'a mut FreshKeys,
    ns: &'a [u8],
}

/// Whether `entry` has expired by `ctx`'s clock (then it is not written:
/// RESTORE creates nothing either), or at the time the thread's
/// [`redcodec_engine::ExpiryPin`] judges expiry (a replica's full copy
/// keeps every key).
fn expired<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, entry: &Entry) -> bool {
    let at = expiry_of(entry);
    at != 0 && at <= ctx.expiry_now_ms()
}

/// Writes `entry` (its value taken out as `value`) into `ctx`'s batch
/// over `view`, the key's current state, its records marked as one key's
/// for a load's sort ([`Ctx::begin_key`]).
fn write<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    entry: &Entry,
    value: &Value,
    view: &KeyView,
) -> Result<(), CmdError> {
    ctx.begin_key();
    write_value(
        ctx,
        &entry.key,
        view,
        value,
        ExpireAt::absolute(expiry_of(entry)),
    )
}

/// Whether the key of `entry` may be stored already: always outside a
/// fresh destination; in one, only if this load may have written it.
fn may_be_stored(fresh: Option<&mut Fresh<'_>>, entry: &Entry) -> bool {
    fresh.is_none_or(|f| f.keys.note(f.ns, &entry.key))
}

/// Writes `entry` (its value taken out as `value`) into `ctx`'s batch,
/// unless it has expired (then `false`).
fn stage<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    entry: &Entry,
    value: &Value,
    fresh: Option<&mut Fresh<'_>>,
) -> Result<bool, CmdError> {
    if expired(ctx, entry) {
        return Ok(false);
    }
    let view = if may_be_stored(fresh, entry) {
        ctx.view(&entry.key)?
    } else {
        KeyView::nothing_stored()
    };
    write(ctx, entry, value, &view)?;
    Ok(true)
}

/// Writes `entries` into `core` in one store write; if the engine refuses
/// any of them, writes them again one key at a time, so that only the
/// refused keys are left out (and named in `loaded`). The values are
/// taken out of `entries` (their keys stay).
pub fn load_batch<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    entries: &mut [Entry],
    loaded: &mut Loaded,
) {
    load_entries(core, entries, loaded, None);
}

/// [`load_batch`] into a destination that held no record when the load
/// began (a store just flushed, every namespace the load writes), for a
/// load that is undone whole after a crash (under a load marker): a key
/// is written without reading its current state unless `keys` (one for
/// the whole load, shared by its namespaces; `ns` names this one) says
/// the load may have written it before; the batch is written sorted,
/// atomically within each instance of the store but not across them,
/// and out of the write-ahead log ([`Ctx::commit_for_load`]; a key's
/// records are all in one instance): the caller flushes the store before
/// it counts the load as done.
///
/// A key the load may have written before is held back in `keys`, and
/// written with the others held back once they reach a limit
/// ([`FreshKeys::MAX_HELD_KEYS`]) or by [`load_held`], which the caller
/// calls for each of [`FreshKeys::held_namespaces`] before it flushes.
pub fn load_fresh_batch<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    entries: &mut [Entry],
    loaded: &mut Loaded,
    keys: &mut FreshKeys,
    ns: &[u8],
) {
    load_entries(core, entries, loaded, Some(Fresh { keys, ns }));
    if keys.holds_enough(ns) {
        load_held(core, loaded, keys, ns);
    }
}

/// Writes the entries of namespace `ns` that [`load_fresh_batch`] held
/// back, in the order met, each over its key's current state (as
/// [`load_batch`] writes).
pub fn load_held<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    loaded: &mut Loaded,
    keys: &mut FreshKeys,
    ns: &[u8],
) {
    let mut held = keys.take_held(ns);
    load_batch(core, &mut held, loaded);
}

/// Loads `entries` in runs that hold no key twice: a command reads the
/// store, not its own batch, so a key met again (twice in a bad file) is
/// written once the run before it is, and replaces it.
fn load_entries<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    entries: &mut [Entry],
    loaded: &mut Loaded,
    mut fresh: Option<Fresh<'_>>,
) {
    let mut rest = entries;
    while !rest.is_empty() {
        let mut keys = rustc_hash::FxHashSet::default();
        keys.reserve(rest.len());
        let run = rest
            .iter()
            .position(|e| !keys.insert(e.key.as_slice()))
            .unwrap_or(rest.len());
        let (now, later) = rest.split_at_mut(run);
        load_run(core, now, loaded, fresh.as_mut());
        rest = later;
    }
}

/// What [`load_run`] does with an entry.
enum Staging {
    /// Nothing: it has expired.
    Expired,
    /// Writes it over the key's current state, which is read once the
    /// others are staged.
    Read,
    /// Writes it as a new key.
    New,
    /// Nothing now: a fresh load may have written it, and holds it back
    /// for [`load_held`].
    Held,
}

/// Takes the value out of `entry`, leaving an empty one.
fn take_value(entry: &mut Entry) -> RdbValue {
    std::mem::replace(&mut entry.value, RdbValue::String(Vec::new()))
}

/// Takes `entry` whole, leaving its key and an empty value behind.
fn take_entry(entry: &mut Entry) -> Entry {
    Entry {
        db: entry.db,
        key: entry.key.clone(),
        value: take_value(entry),
        expire_ms: entry.expire_ms,
        object: std::mem::take(&mut entry.object),
    }
}

/// The bytes `entry` counts for in a batch: its key and its payload.
fn entry_bytes(entry: &Entry) -> usize {
    entry.object.len() + entry.key.len()
}

/// Writes `entries` (no key twice) in one store write, or key by key.
///
/// The keys that may be stored already are read after the others are
/// staged; in a fresh load they are held back for [`load_held`]
/// instead. A read there waits for the store's writes still behind
/// ([`KvStore::write_unlogged`]): the run before, which the writer
/// inserts while this one is made. Waiting for it before this run is
/// handed over left the writer idle while the run's batch was made
/// (sorted, and copied into RocksDB's batches): a floyd replica's full
/// copy of 1M keys waited 1.3 s so for its 18 or so unsure keys.
fn load_run<C: Codec, S: KvStore>(
    core: &EngineCore<C, S>,
    entries: &mut [Entry],
    loaded: &mut Loaded,
    mut fresh: Option<&mut Fresh<'_>>,
) {
    let mut ctx = Ctx::new(core);
    // Every key is looked up in the filter first, in one loop: its lookups
    // miss the processor's caches, and there they overlap.
    let mut states: Vec<Staging> = entries
        .iter()
        .map(|e| {
            if expired(&ctx, e) {
                Staging::Expired
            } else if may_be_stored(fresh.as_deref_mut(), e) {
                Staging::Read
            } else {
                Staging::New
            }
        })
        .collect();
    // In a fresh load those that may be stored wait for [`load_held`].
    if let Some(fresh) = fresh.as_deref_mut() {
        for (e, state) in entries.iter_mut().zip(&mut states) {
            if matches!(state, Staging::Read) {
                *state = Staging::Held;
                fresh.keys.hold(fresh.ns, take_entry(e));
            }
        }
    }
    let values: Vec<Value> = entries
        .iter_mut()
        .map(|e| Value::from(take_value(e)))
        .collect();
    let entries = &*entries;
    let mut written = (0, 0);
    let mut to_read = Vec::new();
    let mut staged = entries.iter().zip(&values).zip(&states);
    let together = staged.try_for_each(|((e, value), state)| {
        match state {
            Staging::Expired => written.1 += 1,
            Staging::Held => {}
            Staging::Read => to_read.push((e, value)),
            Staging::New => {
                write(&mut ctx, e, value, &KeyView::nothing_stored())?;
                written.0 += 1;
            }
        }
        Ok::<(), CmdError>(())
    });
    let together = together.and_then(|()| {
        to_read.iter().try_for_each(|&(e, value)| {
            let view = ctx.view(&e.key)?;
            write(&mut ctx, e, value, &view)?;
            written.0 += 1;
            Ok(())
        })
    });
    let committed = together.is_ok()
        && if fresh.is_some() {
            ctx.commit_for_load().is_ok()
        } else {
            ctx.commit().is_ok()
        };
    if committed {
        loaded.keys += written.0;
        loaded.expired += written.1;
        return;
    }
    let staged = entries.iter().zip(&values).zip(&states);
    for ((entry, value), _) in staged.filter(|(_, s)| !matches!(s, Staging::Held)) {
        let mut ctx = Ctx::new(core);
        // Keys of the batch were noted: each is read now.
        match stage(&mut ctx, entry, value, fresh.as_deref_mut())
            .and_then(|w| ctx.commit().map(|()| w))
        {
            Ok(true) => loaded.keys += 1,
            Ok(false) => loaded.expired += 1,
            Err(e) => loaded.refuse(&entry.key, e.to_string()),
        }
    }
}

/// Reads the RDB file `input` in batches of keys of one database (at most
/// [`BATCH_KEYS`] keys or [`BATCH_BYTES`] bytes) and hands each to
/// `write` with its database index — which loads it with [`load_batch`]
/// into the engine of that database, or counts it as skipped. The file is
/// not checked whole first: a caller that must not be left with part of a
/// bad file checks it with [`redcodec_rdb::file_reader::validate`] before.
pub fn import<R: Read>(
    input: R,
    write: impl FnMut(u64, &mut [Entry], &mut Loaded),
) -> Result<Loaded, RdbError> {
    import_in_batches(input, BATCH_KEYS, write)
}

/// [`import`] in batches of at most `keys` keys (or [`BATCH_BYTES`]
/// bytes).
pub fn import_in_batches<R: Read>(
    input: R,
    keys: usize,
    mut write: impl FnMut(u64, &mut [Entry], &mut Loaded),
) -> Result<Loaded, RdbError> {
    let mut reader = RdbFileReader::new(input)?;
    let mut loaded = Loaded::default();
    let mut batch: Vec<Entry> = Vec::new();
    let mut batch_db = 0;
    let mut bytes = 0;
    while let Some(entry) = reader.next_entry()? {
        if entry.db != batch_db || batch.len() >= keys.max(1) || bytes >= BATCH_BYTES {
            write(batch_db, &mut batch, &mut loaded);
            batch.clear();
            bytes = 0;
            batch_db = entry.db;
        }
        bytes += entry_bytes(&entry);
        batch.push(entry);
    }
    write(batch_db, &mut batch, &mut loaded);
    loaded.aux = reader.aux().to_vec();
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestEngine;

    #[test]
    fn fresh_keys_never_forget_a_key() {
        let mut fresh = FreshKeys::for_keys(1000);
        assert!(!fresh.note(b"0", b"k0"), "an empty filter has seen nothing");
        for i in 1..20_000u32 {
            fresh.note(b"0", format!("k{i}").as_bytes());
        }
        // Past its size: false positives grow, but a key noted is always seen.
        for i in 0..20_000u32 {
            assert!(fresh.note(b"0", format!("k{i}").as_bytes()), "k{i}");
        }
        let mut fresh = FreshKeys::for_keys(1000);
        assert!(!fresh.note(b"0", b"key"));
        assert!(!fresh.note(b"1", b"key"), "another namespace's key");
        assert!(!fresh.note(b"", b"0key"), "the namespace is not a prefix");
        assert!(fresh.note(b"1", b"key"));
        let unseen = (0..1000u32)
            .filter(|i| !fresh.note(b"0", format!("other{i}").as_bytes()))
            .count();
        assert!(unseen > 990, "{unseen} of 1000 new keys were new");
    }

    #[test]
    fn fresh_keys_sized_for_their_keys_rarely_take_a_new_key_for_an_old_one() {
        let mut fresh = FreshKeys::for_keys(100_000);
        for i in 0..100_000u32 {
            fresh.note(b"ns", format!("key:{i}").as_bytes());
        }
        let mistaken = (0..100_000u32)
            .filter(|i| fresh.note(b"ns", format!("other:{i}").as_bytes()))
            .count();
        // About one in 100,000 expected (the filter holds 131,072 keys
        // before the next one is added).
        assert!(
            mistaken <= 20,
            "{mistaken} of 100,000 new keys taken for old"
        );
    }

    #[test]
    fn fresh_keys_stay_within_their_bound() {
        let fresh = FreshKeys::for_keys(u64::MAX);
        assert_eq!(fresh.bytes(), FreshKeys::MAX_BYTES);
        assert_eq!(FreshKeys::for_keys(0).bytes(), 8192);
        // A growing filter adds larger ones as keys come, within the bound.
        let mut growing = FreshKeys::growing();
        for i in 0..300_000u32 {
            growing.note(b"0", format!("k{i}").as_bytes());
        }
        assert!(growing.filters.len() > 2, "{}", growing.filters.len());
        assert!(growing.bytes() <= FreshKeys::MAX_BYTES);
        for i in 0..300_000u32 {
            assert!(growing.note(b"0", format!("k{i}").as_bytes()), "k{i}");
        }
        let unseen = (0..10_000u32)
            .filter(|i| !growing.note(b"0", format!("other{i}").as_bytes()))
            .count();
        assert!(unseen > 9_900, "{unseen} of 10000 new keys were new");
    }

    #[test]
    fn entries_are_held_back_and_written_per_namespace() {
        let mut fresh = FreshKeys::for_keys(1000);
        let limit = FreshKeys::MAX_HELD_KEYS;
        for i in 0..limit {
            fresh.hold(
                b"a",
                entry(&format!("a{i}"), RdbValue::String(Vec::new()), None),
            );
            if i < 3 {
                fresh.hold(
                    b"b",
                    entry(&format!("b{i}"), RdbValue::String(Vec::new()), None),
                );
            }
        }
        assert!(fresh.holds_enough(b"a"));
        assert!(
            !fresh.holds_enough(b"b"),
            "another namespace's entries do not make this one's load write"
        );
        assert_eq!(fresh.held_namespaces(), [b"a".to_vec(), b"b".to_vec()]);
        let b: Vec<Vec<u8>> = fresh.take_held(b"b").into_iter().map(|e| e.key).collect();
        assert_eq!(b, [b"b0".to_vec(), b"b1".to_vec(), b"b2".to_vec()]);
        assert!(fresh.take_held(b"b").is_empty());
        let a = fresh.take_held(b"a");
        assert_eq!(a.len(), limit);
        assert_eq!(a[limit - 1].key, format!("a{}", limit - 1).into_bytes());
        assert!(!fresh.holds_enough(b"a") && fresh.held_namespaces().is_empty());
    }

    fn entry(key: &str, value: RdbValue, expire_ms: Option<i64>) -> Entry {
        Entry {
            db: 0,
            key: key.as_bytes().to_vec(),
            value,
            expire_ms,
            object: Vec::new(),
        }
    }

    /// The writes of a fresh load are applied on a thread of their own:
    /// a store closed right after (as a namespace switch closes it) keeps
    /// every one of them.
    #[test]
    fn a_store_closed_right_after_a_fresh_load_keeps_it() {
        use redcodec_engine::clock::ManualClock;
        use redcodec_engine::{Engine, EngineOptions};
        use redcodec_kvrocks::KvrocksCodec;
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let clock = std::sync::Arc::new(ManualClock::at_ms(1_700_000_000_000));
            Engine::open(
                KvrocksCodec::default(),
                dir.path(),
                EngineOptions::with_clock(clock),
            )
            .unwrap()
        };
        let keys = 20_000;
        for round in 0..5 {
            let engine = open();
            let mut batch: Vec<Entry> = (0..keys)
                .map(|i| {
                    let members = (0..5).map(|m| format!("{round}-{i}-{m}").into_bytes());
                    entry(
                        &format!("k{round}:{i}"),
                        RdbValue::Set(members.collect()),
                        None,
                    )
                })
                .collect();
            let mut loaded = Loaded::default();
            let mut fresh = FreshKeys::growing();
            load_fresh_batch(&engine, &mut batch, &mut loaded, &mut fresh, b"");
            // A false positive of the filter is held back until now.
            load_held(&engine, &mut loaded, &mut fresh, b"");
            assert_eq!(loaded.keys, keys as u64);
            drop(engine);
            let engine = open();
            let reply = engine.execute(&[b"DBSIZE".to_vec()]);
            assert_eq!(
                reply,
                redcodec_engine::Reply::Integer(keys * (round + 1)),
                "round {round}"
            );
        }
    }

    /// Keys a fresh load holds back are written once they reach the
    /// limit, in the order met, over what the load wrote before.
    #[test]
    fn keys_held_back_are_written_at_the_limit_in_their_order() {
        let fresh = TestEngine::new();
        let n = FreshKeys::MAX_HELD_KEYS + 10;
        let batch = |tag: &str| -> Vec<Entry> {
            (0..n)
                .map(|i| entry(&format!("k{i}"), RdbValue::String(tag.into()), None))
                .collect()
        };
        let mut loaded = Loaded::default();
        let mut keys = FreshKeys::growing();
        load_fresh_batch(
            &fresh.engine,
            &mut batch("one"),
            &mut loaded,
            &mut keys,
            b"",
        );
        assert!(keys.held_namespaces().is_empty());
        // Each key again, twice: every one is held, and past the limit
        // the batch writes them all before it returns.
        let mut again = batch("two");
        again.extend(batch("three"));
        load_fresh_batch(&fresh.engine, &mut again, &mut loaded, &mut keys, b"");
        assert!(keys.held_namespaces().is_empty());
        assert_eq!(loaded.keys, 3 * n as u64);
        assert_eq!(fresh.run("GET k0").to_string(), "\"three\"");
        assert_eq!(
            fresh.run(&format!("GET k{}", n - 1)).to_string(),
            "\"three\""
        );
        assert_eq!(fresh.run("DBSIZE").to_string(), format!("(integer) {n}"));
    }

    /// A fresh load writes what the reading load writes, keys met twice
    /// (in one batch, in a later batch) and expired ones included.
    #[test]
    fn a_fresh_load_writes_what_restore_writes() {
        let later = 1_800_000_000_000;
        let batches = vec![
            vec![
                entry("s", RdbValue::String(b"one".to_vec()), None),
                entry(
                    "h",
                    RdbValue::Hash(vec![(b"a".to_vec(), b"1".to_vec())]),
                    Some(later),
                ),
                entry("s", RdbValue::String(b"two".to_vec()), None),
                entry("gone", RdbValue::String(b"x".to_vec()), Some(1)),
            ],
            vec![
                entry(
                    "h",
                    RdbValue::Hash(vec![(b"b".to_vec(), b"2".to_vec())]),
                    None,
                ),
                entry(
                    "l",
                    RdbValue::List(vec![b"x".to_vec(), b"y".to_vec()]),
                    None,
                ),
                entry("gone", RdbValue::Set(vec![b"m".to_vec()]), None),
                entry("s", RdbValue::ZSet(vec![(b"m".to_vec(), 1.5)]), None),
            ],
        ];
        let (reading, fresh) = (TestEngine::new(), TestEngine::new());
        let (mut a, mut b) = (Loaded::default(), Loaded::default());
        let mut keys = FreshKeys::for_keys(8);
        for batch in &batches {
            load_batch(&reading.engine, &mut batch.clone(), &mut a);
            load_fresh_batch(&fresh.engine, &mut batch.clone(), &mut b, &mut keys, b"ns");
        }
        // The keys met twice wait for the end.
        assert_eq!(keys.held_namespaces(), vec![b"ns".to_vec()]);
        assert_eq!(fresh.run("HGETALL h").to_string(), "1) \"a\"\n2) \"1\"");
        load_held(&fresh.engine, &mut b, &mut keys, b"ns");
        assert!(keys.held_namespaces().is_empty());
        assert_eq!(a, b);
        assert_eq!(a.keys, 7);
        assert_eq!(a.expired, 1);
        for line in [
            "TYPE s",
            "ZRANGE s 0 -1 WITHSCORES",
            "HGETALL h",
            "TTL h",
            "LRANGE l 0 -1",
            "SMEMBERS gone",
            "DBSIZE",
        ] {
            assert_eq!(reading.run(line), fresh.run(line), "{line}");
        }
        assert_eq!(fresh.run("HGETALL h").to_string(), "1) \"b\"\n2) \"2\"");
    }
}
