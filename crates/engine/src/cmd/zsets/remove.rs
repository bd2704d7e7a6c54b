//! Removing ranges: ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX,
//! ZPOPMIN, ZPOPMAX, ZMPOP.

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta};

use super::common::{entries_reply, zset};
use super::range::Span;
use crate::cmd::args::{is, mpop_count, numkeys_block};
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::{format_score, int_arg, parse_i64};
use crate::reply::Reply;
use crate::types::zset::bounds::{LexRange, ScoreRange};
use crate::types::zset::order::{walk, Entry, Start, Window};
use crate::types::zset::write::del_member;

/// Queues the removal of `entries` from the set and its new size, and
/// announces `event`, then `del` if the set was emptied.
fn remove_entries<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    mut meta: Meta,
    entries: &[Entry],
    event: &'static str,
) -> CmdResult<()> {
    if entries.is_empty() {
        return Ok(());
    }
    for e in entries {
        del_member(ctx, key, &meta, &e.member, e.score);
    }
    meta.size = meta.size.saturating_sub(entries.len() as u64);
    ctx.save(key, &meta)?;
    ctx.notify(Class::ZSET, event, key);
    ctx.notify_if_emptied(key, &meta);
    Ok(())
}

/// The event of a pop from one end.
fn pop_event(from_max: bool) -> &'static str {
    if from_max {
        "zpopmax"
    } else {
        "zpopmin"
    }
}

/// The ZREMRANGEBY* commands: reads the range, then removes it.
fn remove_range<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    span: Span,
    event: &'static str,
) -> CmdResult<Reply> {
    let Some(meta) = zset(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut entries = Vec::new();
    span.visit(ctx, key, &meta, false, Some(Window::ALL), |e| {
        entries.push(e);
    })?;
    remove_entries(ctx, key, meta, &entries, event)?;
    Ok(Reply::Integer(entries.len() as i64))
}

variants! {
    pub fn zremrangebyrank(ctx, a) => remove_range(
        ctx, a[1], Span::Rank(int_arg(a[2])?, int_arg(a[3])?), "zremrangebyrank");
    pub fn zremrangebyscore(ctx, a) => remove_range(
        ctx, a[1], Span::Score(ScoreRange::parse(a[2], a[3])?), "zremrangebyscore");
    pub fn zremrangebylex(ctx, a) => remove_range(
        ctx, a[1], Span::Lex(LexRange::parse(a[2], a[3])?), "zremrangebylex");
}

/// ZPOPMIN / ZPOPMAX's count: a non-negative integer, with the one error
/// Redis gives for anything else.
fn pop_count(arg: &[u8]) -> CmdResult<u64> {
    parse_i64(arg)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| CmdError::other("ERR value is out of range, must be positive"))
}

/// ZPOPMIN and ZPOPMAX: removes and returns up to `count` entries from one
/// end.
fn pop<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    from_max: bool,
) -> CmdResult<Reply> {
    let count = match a.len() {
        2 => 1,
        3 => pop_count(a[2])?,
        _ => return Err(CmdError::Syntax),
    };
    let key = a[1];
    let Some(meta) = zset(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let entries = walk(ctx, key, &meta, Start::Edge, from_max)
        .take(usize::try_from(count).unwrap_or(usize::MAX))
        .collect::<CmdResult<Vec<_>>>()?;
    remove_entries(ctx, key, meta, &entries, pop_event(from_max))?;
    Ok(entries_reply(entries, true))
}

variants! {
    pub fn zpopmin(ctx, a) => pop(ctx, a, false);
    pub fn zpopmax(ctx, a) => pop(ctx, a, true);
}

/// ZMPOP `numkeys key… MIN|MAX [COUNT count]`: pops up to `count` entries
/// from the first existing sorted set, replying `[key, [[member, score]…]]`,
/// or a nil array when every key is missing. Arguments are checked in
/// Redis' order (numkeys, MIN|MAX, COUNT) before any key is read; a key of
/// another type met before a sorted set is WRONGTYPE.
pub fn zmpop<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (keys, side_at) = numkeys_block(a, 1, true)?;
    let from_max = if is(a[side_at], "min") {
        false
    } else if is(a[side_at], "max") {
        true
    } else {
        return Err(CmdError::Syntax);
    };
    let count = mpop_count(a, side_at + 1)?;
    for key in keys {
        let Some(meta) = zset(ctx, key)? else {
            continue;
        };
        let entries = walk(ctx, key, &meta, Start::Edge, from_max)
            .take(usize::try_from(count).unwrap_or(usize::MAX))
            .collect::<CmdResult<Vec<_>>>()?;
        remove_entries(ctx, key, meta, &entries, pop_event(from_max))?;
        let pairs = entries
            .into_iter()
            .map(|e| {
                Reply::Array(vec![
                    Reply::Bulk(e.member),
                    Reply::bulk(format_score(e.score)),
                ])
            })
            .collect();
        return Ok(Reply::Array(vec![
            Reply::bulk(key.to_vec()),
            Reply::Array(pairs),
        ]));
    }
    Ok(Reply::NilArray)
}
