//! `redcodec generate`: a realistic dataset written into an empty store of
//! any format, through the write path migrations use (the same
//! `Sink`: each key written the way the destination's commands write
//! it, many small keys per write batch or a big key over several, the
//! metadata after the elements it counts), in the order of the keys'
//! names ([`Distribution::in_name_order`]), as a migration reads them.
//!
//! The dataset is a function of its [`Distribution`] (seed included) and
//! its size alone: see [`shape`] for the distribution. Memory holds one
//! write batch, whatever the size. "Records" are top-level keys; the
//! report also counts their elements.

pub mod shape;

use redcodec_codec::{Codec, DataType, ListBounds, Meta};
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::value::Value;
use redcodec_engine::{CmdError, Engine};

use crate::report::{Observer, Plan, Tally};
use crate::sink::Sink;
use crate::source::Limits;

pub use shape::{Distribution, Mix, Rng, Shape};

/// Why a dataset could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The store already holds keys.
    #[error(
        "the store already holds data (for example key {key}); generate writes into an empty store"
    )]
    NotEmpty {
        /// A key it holds, quoted.
        key: String,
    },
    /// Reading or writing the store failed.
    #[error("{}", .0.message())]
    Store(#[from] CmdError),
    /// The store's RocksDB failed.
    #[error("the store: {0}")]
    Storage(#[from] redcodec_engine::store::StoreError),
}

/// How much to generate, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerateOptions {
    /// Top-level keys.
    pub records: u64,
    /// The distribution (and seed) they are drawn from.
    pub distribution: Distribution,
    /// Elements per write batch (and per chunk of a big key).
    pub batch_elements: usize,
    /// Logical bytes per write batch.
    pub batch_bytes: usize,
    /// Most memtable memory of the store, in bytes, before a flush is
    /// requested after a commit (as migrations do).
    pub memtable_budget: usize,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        GenerateOptions {
            records: 1000,
            distribution: Distribution::default(),
            batch_elements: 8192,
            batch_bytes: 8 << 20,
            memtable_budget: 96 << 20,
        }
    }
}

/// What a run wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generated {
    /// Keys, elements and logical bytes written.
    pub tally: Tally,
    /// Keys per type: string, hash, list, set, zset.
    pub keys_by_type: [u64; 5],
    /// Keys with an expiry.
    pub with_ttl: u64,
    /// The big keys: name, type and elements.
    pub big_keys: Vec<(Vec<u8>, DataType, u64)>,
    /// Write batches committed.
    pub commits: u64,
}

/// Keys and elements the dataset of `options` holds, without writing it
/// (a quick pass over the draws; the progress bar's totals).
pub fn plan(options: &GenerateOptions) -> Plan {
    let mut plan = Plan::default();
    for index in 0..options.records {
        plan.keys += 1;
        plan.elements += options.distribution.shape(index).elements;
    }
    plan
}

fn type_index(t: DataType) -> usize {
    match t {
        DataType::String => 0,
        DataType::Hash => 1,
        DataType::List => 2,
        DataType::Set => 3,
        DataType::ZSet => 4,
    }
}

/// Writes the dataset of `options` into `dst`, which must hold no key;
/// `observer` sees the plan, the progress and every commit.
pub fn generate<B: Codec>(
    dst: &Engine<B>,
    options: &GenerateOptions,
    observer: &mut dyn Observer,
) -> Result<Generated, GenerateError> {
    let _held = dst.lock_all();
    {
        let ctx = Ctx::new(dst);
        if let Some((key, _)) = KeyWalk::new(&ctx, None).next()? {
            return Err(GenerateError::NotEmpty {
                key: quote_bytes(&key),
            });
        }
    }
    observer.planned(&plan(options));
    let limits = Limits {
        elements: options.batch_elements.max(1),
        bytes: options.batch_bytes.max(1),
    };
    let mut writer = Writer {
        dst,
        sink: Sink::new(dst, limits),
        budget: options.memtable_budget as u64,
        out: Generated::default(),
        observer,
    };
    // Leftovers of expired keys may sit under the names written.
    let mut leftovers = false;
    for (range, _) in dst.codec().meta_ranges() {
        leftovers |= dst.store().scan(&range, None, false).next()?.is_some();
    }
    writer.sink.set_probe(leftovers);
    let now = dst.now_ms();
    for index in options.distribution.in_name_order(options.records) {
        let shape = options.distribution.shape(index);
        writer.key(shape, now, limits.elements as u64)?;
    }
    writer.commit()?;
    dst.store().flush()?;
    Ok(writer.out)
}

/// The write loop's state.
struct Writer<'d, 'o, B: Codec> {
    dst: &'d Engine<B>,
    sink: Sink<'d, B>,
    budget: u64,
    out: Generated,
    observer: &'o mut dyn Observer,
}

impl<B: Codec> Writer<'_, '_, B> {
    /// Queues one key, committing whenever the batch is full.
    fn key(&mut self, mut shape: Shape, now: u64, chunk: u64) -> Result<(), GenerateError> {
        let mut src = Meta::fresh(shape.data_type, 0, ListBounds::None);
        src.expire_ms = shape.ttl_ms.map_or(0, |ttl| now + ttl);
        let key = std::mem::take(&mut shape.key);
        let Some(mut meta) = self.sink.begin(&key, &src)? else {
            return Ok(());
        };
        self.out.tally.keys += 1;
        self.out.tally.bytes += key.len() as u64;
        self.out.keys_by_type[type_index(shape.data_type)] += 1;
        if shape.ttl_ms.is_some() {
            self.out.with_ttl += 1;
        }
        if shape.big {
            self.out
                .big_keys
                .push((key.clone(), shape.data_type, shape.elements));
        }
        if shape.data_type == DataType::String {
            self.append(&key, &mut meta, Value::String(shape.string_value()))?;
        } else {
            let mut done = 0;
            while done < shape.elements {
                let len = chunk.min(shape.elements - done);
                let value = shape.chunk(done, len);
                done += len;
                self.append(&key, &mut meta, value)?;
                if done < shape.elements && self.sink.is_full() {
                    // Cut here: the metadata so far goes with its elements.
                    self.sink.finish(&key, &meta)?;
                    self.commit()?;
                }
            }
        }
        self.sink.finish(&key, &meta)?;
        if self.sink.is_full() {
            self.commit()?;
        }
        Ok(())
    }

    fn append(&mut self, key: &[u8], meta: &mut Meta, value: Value) -> Result<(), GenerateError> {
        self.out.tally.elements += value.element_count();
        self.out.tally.bytes += value.byte_count();
        self.sink.append(key, meta, value)?;
        self.observer.progressed(&self.out.tally);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), GenerateError> {
        if self.sink.is_empty() {
            return Ok(());
        }
        self.sink.commit()?;
        self.out.commits += 1;
        let store = self.dst.store();
        if store.memtable_bytes()? > self.budget {
            store.request_flush()?;
        }
        self.observer.committed(self.out.commits);
        Ok(())
    }
}
