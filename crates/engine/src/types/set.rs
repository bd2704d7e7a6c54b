//! Sets as whole values: every member read, a fresh set written, and the
//! identity of a member record.

use crate::store::KvStore;

use redcodec_codec::{Codec, Meta, SubId, SubIdRef, SubKind, SubValueRef};

use crate::error::CmdResult;
use crate::keyspace::{corrupt, Ctx};
use crate::types::first_seen::distinct;
use crate::types::ValueMut;

/// The element records of a set.
pub(crate) const KIND: SubKind = SubKind::SetMember;

/// Every member of the set at `key` (RENAME, migration), in the codec's
/// record order.
pub(crate) fn read_all<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Vec<Vec<u8>>> {
    ctx.subs(KIND, key, meta, None, false)
        .map(|record| record.and_then(|(id, _)| record_name(key, id)))
        .collect()
}

/// Queues `members` as the records of the fresh set `meta` at `key` and sets
/// its size (duplicates count once). Does not write the metadata.
pub(crate) fn write_all<C: Codec, S: KvStore>(
    value: ValueMut<'_, '_, C, S>,
    members: &[Vec<u8>],
) -> CmdResult<()> {
    let ValueMut { ctx, key, meta } = value;
    let unique = distinct(members.iter().map(Vec::as_slice));
    for member in &unique {
        ctx.sub_put(KIND, key, meta, member_id(member), SubValueRef::Empty);
        ctx.codec().note_member(meta, member);
    }
    meta.size = unique.len() as u64;
    Ok(())
}

/// The name of a hash-field, set-member or zset-member record.
pub(crate) fn record_name(key: &[u8], id: SubId) -> CmdResult<Vec<u8>> {
    match id {
        SubId::Name(name) => Ok(name),
        other => Err(corrupt(key, format!("unexpected element id {other:?}"))),
    }
}

pub(crate) fn member_id(member: &[u8]) -> SubIdRef<'_> {
    SubIdRef::Name(member)
}
