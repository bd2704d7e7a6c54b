//! Sorted-set commands.
//!
//! Every member has two records: a member record (member → exact score)
//! and a score-index record ((score, member) → nothing). Point reads use
//! the member records; everything ordered goes through [`order::walk`],
//! which yields members in Redis order with exact scores whatever the
//! format's score index keeps (exact, or rounded: see [`order`]). Every
//! score written goes through [`write::put_member`], which applies the
//! format's score limit.

use std::collections::HashMap;

use redcodec_codec::{Codec, DataType, Meta};

use super::is;
use crate::dispatch::{Keys, Table};
use crate::error::CmdResult;
use crate::keyspace::Ctx;
use crate::number::format_score;
use crate::reply::Reply;

mod bounds;
mod float;
mod members;
mod order;
mod range;
mod remove;
mod setops;
mod write;

#[cfg(test)]
mod nemo_tests;
#[cfg(test)]
mod tests;

use order::{walk, Entry, Start};

pub fn register<C: Codec>(t: &mut Table<C>) {
    t.add("zadd", -4, Keys::First, members::zadd);
    t.add("zincrby", 4, Keys::First, members::zincrby);
    t.add("zrem", -3, Keys::First, members::zrem);
    t.add("zcard", 2, Keys::First, members::zcard);
    t.add("zscore", 3, Keys::First, members::zscore);
    t.add("zmscore", -3, Keys::First, members::zmscore);
    t.add("zrank", 3, Keys::First, range::zrank);
    t.add("zrevrank", 3, Keys::First, range::zrevrank);
    t.add("zrange", -4, Keys::First, range::zrange);
    t.add("zrevrange", -4, Keys::First, range::zrevrange);
    t.add("zrangebyscore", -4, Keys::First, range::zrangebyscore);
    t.add("zrevrangebyscore", -4, Keys::First, range::zrevrangebyscore);
    t.add("zrangebylex", -4, Keys::First, range::zrangebylex);
    t.add("zrevrangebylex", -4, Keys::First, range::zrevrangebylex);
    t.add("zcount", 4, Keys::First, range::zcount);
    t.add("zlexcount", 4, Keys::First, range::zlexcount);
    t.add("zscan", -3, Keys::First, range::zscan);
    t.add("zremrangebyrank", 4, Keys::First, remove::zremrangebyrank);
    t.add("zremrangebyscore", 4, Keys::First, remove::zremrangebyscore);
    t.add("zremrangebylex", 4, Keys::First, remove::zremrangebylex);
    t.add("zpopmin", -2, Keys::First, remove::zpopmin);
    t.add("zpopmax", -2, Keys::First, remove::zpopmax);
    t.add("zunionstore", -4, Keys::DestNumKeys, setops::zunionstore);
    t.add("zinterstore", -4, Keys::DestNumKeys, setops::zinterstore);
}

/// Members with their exact scores.
pub(crate) type Members = Vec<(Vec<u8>, f64)>;

/// The live sorted set at `key`; WRONGTYPE for another type.
fn zset<C: Codec>(ctx: &Ctx<'_, C>, key: &[u8]) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::ZSet)
}

/// Entries as a flat reply: members, each followed by its score if asked.
fn entries_reply(entries: Vec<Entry>, withscores: bool) -> Reply {
    let mut items = Vec::with_capacity(entries.len() * if withscores { 2 } else { 1 });
    for e in entries {
        items.push(Reply::Bulk(e.member));
        if withscores {
            items.push(Reply::bulk(format_score(e.score)));
        }
    }
    Reply::Array(items)
}

/// Every member of the sorted set with its exact score, in Redis order
/// (RENAME, migration, ZUNIONSTORE).
pub(crate) fn read_all<C: Codec>(ctx: &Ctx<'_, C>, key: &[u8], meta: &Meta) -> CmdResult<Members> {
    walk(ctx, key, meta, Start::Edge, false)
        .map(|e| e.map(|e| (e.member, e.score)))
        .collect()
}

/// Queues `members` as the records of the fresh sorted set `meta` at `key`
/// and sets its size. A member given twice keeps its last score. Does not
/// write the metadata. Scores beyond the format's limit are an error.
pub(crate) fn write_all<C: Codec>(
    ctx: &mut Ctx<'_, C>,
    key: &[u8],
    meta: &mut Meta,
    members: &[(Vec<u8>, f64)],
) -> CmdResult<()> {
    let mut last: HashMap<&[u8], f64> = HashMap::new();
    let mut order = Vec::new();
    for (member, score) in members {
        if last.insert(member, *score).is_none() {
            order.push(member.as_slice());
        }
    }
    for member in &order {
        if let Some(&score) = last.get(member) {
            write::put_member(ctx, key, meta, member, None, score)?;
        }
    }
    meta.size = order.len() as u64;
    Ok(())
}

/// Queues `members`, none of them already in the sorted set `meta` at
/// `key` and each given once (a migration copying a sorted set), and grows
/// its size. Does not write the metadata. Scores beyond the format's limit
/// are an error.
pub(crate) fn write_new<C: Codec>(
    ctx: &mut Ctx<'_, C>,
    key: &[u8],
    meta: &mut Meta,
    members: &[(Vec<u8>, f64)],
) -> CmdResult<()> {
    for (member, score) in members {
        write::put_member(ctx, key, meta, member, None, *score)?;
    }
    meta.size += members.len() as u64;
    Ok(())
}
