//! The type layer: what each Redis type is in records, below the commands.
//! Whole-value read, write and visit per type (RENAME, migration, the
//! typed API), the list models, the sorted-set walk in Redis order, the
//! random picks, and elements each once in first-seen order. Used by
//! `cmd`'s families, [`crate::value`], the typed API and migration;
//! imports only the keyspace ([`crate::keyspace::Ctx`]) and the leaves
//! below it, never a command family.

pub(crate) mod first_seen;
pub(crate) mod hash;
pub(crate) mod hll;
pub(crate) mod list;
pub(crate) mod random;
pub(crate) mod set;
pub(crate) mod zset;

use crate::keyspace::Ctx;
use crate::store::KvStore;
use redcodec_codec::{Codec, Meta};

/// A key's value as a command changes it: the keyspace (where element
/// writes are queued), the key and its metadata (updated in memory; the
/// caller saves it).
pub(crate) struct ValueMut<'l, 'e, C: Codec, S: KvStore> {
    /// The keyspace the value lives in.
    pub(crate) ctx: &'l mut Ctx<'e, C, S>,
    /// The value's key.
    pub(crate) key: &'l [u8],
    /// The value's live metadata.
    pub(crate) meta: &'l mut Meta,
}

impl<'l, 'e, C: Codec, S: KvStore> ValueMut<'l, 'e, C, S> {
    /// The value of `key` with metadata `meta` in `ctx`.
    pub(crate) fn new(ctx: &'l mut Ctx<'e, C, S>, key: &'l [u8], meta: &'l mut Meta) -> Self {
        ValueMut { ctx, key, meta }
    }

    /// The same value, borrowed again for one more operation.
    pub(crate) fn reborrow(&mut self) -> ValueMut<'_, 'e, C, S> {
        ValueMut {
            ctx: self.ctx,
            key: self.key,
            meta: self.meta,
        }
    }
}
