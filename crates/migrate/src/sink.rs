//! The destination side: keys written into write batches through the same
//! code the commands use ([`Ctx::create`], [`Ctx::set_expire`], the list
//! model's push, the sorted sets' `put_member`), a key's element records
//! first and its metadata after them.
//!
//! A batch holds many small keys, or part of a big one; [`Sink::is_full`]
//! tells the caller when to commit. A key cut by a commit gets its
//! metadata so far queued in that batch ([`Sink::finish`] may be called
//! more than once): element records without their metadata would be
//! collected by the formats' compaction filters.

use redcodec_codec::{Codec, DataType, Meta, SubId, SubIdRef, SubKind, SubValueRef};

use redcodec_engine::error::CmdResult;
use redcodec_engine::internals::keyspace::{migrated_expiry, Ctx, KeyView};
use redcodec_engine::store::{DefaultStore, KvStore};
use redcodec_engine::value;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

use crate::source::Limits;

/// Write batches on the destination engine.
pub(crate) struct Sink<'d, B: Codec, S: KvStore = DefaultStore> {
    dst: &'d Engine<B, S>,
    ctx: Ctx<'d, B, S>,
    limits: Limits,
    /// Whether the destination may hold records under the keys written
    /// (merging, or leftovers of expired keys): each key is then looked up
    /// before it is written. A destination without any metadata skips it.
    probe: bool,
    elements: u64,
    bytes: u64,
    records: u64,
}

impl<'d, B: Codec, S: KvStore> Sink<'d, B, S> {
    /// An empty batch on `dst`, full at `limits`.
    pub(crate) fn new(dst: &'d Engine<B, S>, limits: Limits) -> Sink<'d, B, S> {
        Sink {
            dst,
            ctx: Ctx::new(dst),
            limits,
            probe: true,
            elements: 0,
            bytes: 0,
            records: 0,
        }
    }

    /// Sets whether keys are looked up in the destination before they are
    /// written (see the field).
    pub(crate) fn set_probe(&mut self, probe: bool) {
        self.probe = probe;
    }

    /// Starts `key` with the type and expiry of the source metadata `src`:
    /// queues the removal of whatever the destination holds under `key`
    /// that the new value does not overwrite, and returns the new key's
    /// metadata (not yet queued). `None` if the key's expiry, at the
    /// destination's resolution, has already passed.
    pub(crate) fn begin(&mut self, key: &[u8], src: &Meta) -> CmdResult<Option<Meta>> {
        let ctx = &mut self.ctx;
        let stored = migrated_expiry(ctx.caps(), src.expire_ms);
        if src.expire_ms != 0 && stored < ctx.now_ms() {
            return Ok(None);
        }
        let mut meta = if self.probe {
            let view = ctx.view(key)?;
            ctx.create(key, src.data_type, &view)?
        } else if src.data_type == DataType::String && !ctx.caps().string_version {
            // Nothing to replace, and a string has no version: what
            // `create` would return (its metadata record is checked when
            // it is queued).
            Meta::string(Vec::new(), 0)
        } else {
            ctx.create(key, src.data_type, &KeyView::default())?
        };
        ctx.set_expire(&mut meta, stored)?;
        self.records += 1;
        Ok(Some(meta))
    }

    /// Queues one chunk of the key's value and grows `meta` accordingly.
    pub(crate) fn append(&mut self, key: &[u8], meta: &mut Meta, chunk: Value) -> CmdResult<()> {
        let elements = chunk.element_count();
        let bytes = chunk.byte_count();
        let ctx = &mut self.ctx;
        // The source holds each field or member once: no de-duplication,
        // and records are queued straight from the chunk (a hash field is
        // a `HashField` record named by the field holding the value, a set
        // member a `SetMember` record with no value).
        match chunk {
            Value::String(v) => meta.value = v,
            Value::Hash(pairs) => {
                meta.size += pairs.len() as u64;
                for (field, value) in pairs {
                    let value = SubValueRef::Bytes(&value);
                    ctx.sub_put(SubKind::HashField, key, meta, SubIdRef::Name(&field), value);
                }
            }
            Value::Set(members) => {
                meta.size += members.len() as u64;
                for member in members {
                    let id = SubId::Name(member);
                    ctx.sub_put(SubKind::SetMember, key, meta, id.view(), SubValueRef::Empty);
                }
            }
            Value::ZSet(members) => value::add_new_zset_members(ctx, key, meta, &members)?,
            Value::List(items) => value::append_list(ctx, key, meta, &items)?,
        }
        self.elements += elements;
        self.bytes += bytes;
        self.records += elements;
        Ok(())
    }

    /// Queues the metadata of the key as far as it is written (again at
    /// every cut, and when it is finished).
    pub(crate) fn finish(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        self.ctx.save(key, meta)
    }

    /// Whether the batch has reached its limits.
    pub(crate) fn is_full(&self) -> bool {
        self.elements >= self.limits.elements as u64 || self.bytes >= self.limits.bytes as u64
    }

    /// Whether the batch holds `factor` times its element limit, or twice
    /// its byte limit.
    pub(crate) fn is_full_by(&self, factor: usize) -> bool {
        self.elements >= (self.limits.elements * factor) as u64
            || self.bytes >= (self.limits.bytes * 2) as u64
    }

    /// Whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Writes the batch (one atomic write per destination instance) and
    /// starts the next one.
    pub(crate) fn commit(&mut self) -> CmdResult<()> {
        let full = std::mem::replace(&mut self.ctx, Ctx::new(self.dst));
        full.commit()?;
        self.elements = 0;
        self.bytes = 0;
        self.records = 0;
        Ok(())
    }

    /// Drops the batch unwritten.
    pub(crate) fn discard(&mut self) {
        self.ctx = Ctx::new(self.dst);
        self.elements = 0;
        self.bytes = 0;
        self.records = 0;
    }
}
