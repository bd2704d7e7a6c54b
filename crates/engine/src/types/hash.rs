//! Hashes as whole values: every field read, a fresh hash written, and the
//! field records every hash command reads and writes.

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta, SubId, SubIdRef, SubKind, SubValue, SubValueRef};

use super::set::record_name;
use crate::error::CmdResult;
use crate::keyspace::{corrupt, Ctx};
use crate::types::first_seen::last_wins;
use crate::types::ValueMut;

/// The element records of a hash.
pub(crate) const KIND: SubKind = SubKind::HashField;

/// Every field and value of the hash at `key` (RENAME, migration), in the
/// codec's record order.
pub(crate) fn read_all<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Vec<(Vec<u8>, Vec<u8>)>> {
    ctx.subs(KIND, key, meta, None, false)
        .map(|record| record.and_then(|(id, value)| decode_pair(key, id, value)))
        .collect()
}

/// Queues `pairs` as the records of the fresh hash `meta` at `key` and sets
/// its size (a repeated field counts once; its last value wins). Does not
/// write the metadata.
pub(crate) fn write_all<C: Codec, S: KvStore>(
    value: ValueMut<'_, '_, C, S>,
    pairs: &[(Vec<u8>, Vec<u8>)],
) -> CmdResult<()> {
    let ValueMut { ctx, key, meta } = value;
    let pairs = last_wins(pairs.iter().map(|(f, v)| (f.as_slice(), v.as_slice())));
    for (field, value) in &pairs {
        put_value(ctx, key, meta, field, value);
    }
    meta.size = pairs.len() as u64;
    Ok(())
}

pub(crate) fn field_id(field: &[u8]) -> SubIdRef<'_> {
    SubIdRef::Name(field)
}

/// The bytes of a field's value record.
pub(crate) fn value_bytes(key: &[u8], value: SubValue) -> CmdResult<Vec<u8>> {
    match value {
        SubValue::Bytes(bytes) => Ok(bytes),
        other => Err(corrupt(key, format!("unexpected hash value {other:?}"))),
    }
}

/// A decoded field record as (field, value).
pub(crate) fn decode_pair(key: &[u8], id: SubId, value: SubValue) -> CmdResult<(Vec<u8>, Vec<u8>)> {
    Ok((record_name(key, id)?, value_bytes(key, value)?))
}

pub(crate) fn put_value<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    field: &[u8],
    value: &[u8],
) {
    ctx.sub_put(KIND, key, meta, field_id(field), SubValueRef::Bytes(value));
}
