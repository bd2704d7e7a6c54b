//! Sorted sets as records: every member has a member record (member →
//! exact score) and a score-index record ((score, member) → nothing).
//! [`order::walk`] yields members in Redis order with exact scores whatever
//! the format's score index keeps; [`write::put_member`] applies the
//! format's score limit to every score written. And sorted sets as whole
//! values.

pub(crate) mod add;
pub(crate) mod bounds;
pub(crate) mod entry;
pub(crate) mod float;
pub(crate) mod order;
pub(crate) mod write;

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta};

use self::order::{walk, Start};
use crate::error::CmdResult;
use crate::keyspace::Ctx;
use crate::types::first_seen::last_wins;
use crate::types::ValueMut;

/// Members with their exact scores.
pub(crate) type Members = Vec<(Vec<u8>, f64)>;

/// Every member of the sorted set with its exact score, in Redis order
/// (RENAME, migration, ZUNIONSTORE).
pub(crate) fn read_all<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Members> {
    walk(ctx, key, meta, Start::Edge, false)
        .map(|e| e.map(|e| (e.member, e.score)))
        .collect()
}

/// Queues `members` as the records of the fresh sorted set `meta` at `key`
/// and sets its size. A member given twice keeps its last score. Does not
/// write the metadata. Scores beyond the format's limit are an error.
pub(crate) fn write_all<C: Codec, S: KvStore>(
    value: ValueMut<'_, '_, C, S>,
    members: &[(Vec<u8>, f64)],
) -> CmdResult<()> {
    let ValueMut { ctx, key, meta } = value;
    let members = last_wins(members.iter().map(|(m, score)| (m.as_slice(), *score)));
    for &(member, score) in &members {
        write::put_member(ctx, key, meta, member, None, score)?;
    }
    meta.size = members.len() as u64;
    Ok(())
}

/// Queues `members`, none of them already in the sorted set `meta` at
/// `key` and each given once (a migration copying a sorted set), and grows
/// its size. Does not write the metadata. Scores beyond the format's limit
/// are an error.
pub(crate) fn write_new<C: Codec, S: KvStore>(
    value: ValueMut<'_, '_, C, S>,
    members: &[(Vec<u8>, f64)],
) -> CmdResult<()> {
    let ValueMut { ctx, key, meta } = value;
    for (member, score) in members {
        write::put_member(ctx, key, meta, member, None, *score)?;
    }
    meta.size += members.len() as u64;
    Ok(())
}
