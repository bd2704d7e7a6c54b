//! What the sorted-set commands share: the typed lookup and the flat reply.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::error::CmdResult;
use crate::keyspace::Ctx;
use crate::number::format_score;
use crate::reply::Reply;
use crate::types::zset::order::Entry;

/// The live sorted set at `key`; WRONGTYPE for another type.
pub(super) fn zset<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::ZSet)
}

/// Entries as a flat reply: members, each followed by its score if asked.
pub(super) fn entries_reply(entries: Vec<Entry>, withscores: bool) -> Reply {
    scored_reply(entries.into_iter().map(|e| (e.member, e.score)), withscores)
}

/// `(member, score)` pairs as a flat reply: members, each followed by its
/// score if asked.
pub(super) fn scored_reply(
    members: impl IntoIterator<Item = (Vec<u8>, f64), IntoIter: ExactSizeIterator>,
    withscores: bool,
) -> Reply {
    let members = members.into_iter();
    let mut items = Vec::with_capacity(members.len() * if withscores { 2 } else { 1 });
    for (member, score) in members {
        items.push(Reply::Bulk(member));
        if withscores {
            items.push(Reply::bulk(format_score(score)));
        }
    }
    Reply::Array(items)
}
