//! Commands on single members: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD,
//! ZRANDMEMBER.

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta};

use super::common::{scored_reply, zset};
use crate::cmd::args::{is, random_count_with};
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::format_score;
use crate::reply::Reply;
use crate::types::first_seen::distinct;
use crate::types::random::{random_pick, Rng};
use crate::types::zset::add::{add, AddFlags, Added};
use crate::types::zset::float::score_arg;
use crate::types::zset::read_all;
use crate::types::zset::write::{del_member, score_of};

/// Score–member pairs as given.
type Pairs<'a> = Vec<(f64, &'a [u8])>;

/// Parses ZADD's options and pairs with Redis' checks, in Redis' order.
fn parse_zadd<'a>(a: &[&'a [u8]]) -> CmdResult<(AddFlags, Pairs<'a>)> {
    let mut flags = AddFlags::default();
    let mut i = 2;
    while let Some(opt) = a.get(i) {
        let flag = match () {
            () if is(opt, "nx") => &mut flags.nx,
            () if is(opt, "xx") => &mut flags.xx,
            () if is(opt, "gt") => &mut flags.gt,
            () if is(opt, "lt") => &mut flags.lt,
            () if is(opt, "ch") => &mut flags.ch,
            () if is(opt, "incr") => &mut flags.incr,
            () => break,
        };
        *flag = true;
        i += 1;
    }
    let rest = &a[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    if flags.nx && flags.xx {
        return Err(CmdError::other(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if [flags.gt, flags.lt, flags.nx]
        .iter()
        .filter(|f| **f)
        .count()
        > 1
    {
        return Err(CmdError::other(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && rest.len() > 2 {
        return Err(CmdError::other(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    let pairs = rest
        .chunks_exact(2)
        .map(|pair| {
            score_arg(pair[0])
                .map(|s| (s, pair[1]))
                .ok_or(CmdError::NotFloat)
        })
        .collect::<CmdResult<_>>()?;
    Ok((flags, pairs))
}

/// ZADD's or ZINCRBY's reply to what [`add`] did.
fn added_reply(added: Added) -> Reply {
    match added {
        Added::Count(n) => Reply::Integer(n),
        Added::Score(Some(score)) => Reply::bulk(format_score(score)),
        Added::Score(None) => Reply::Nil,
    }
}

pub fn zadd<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (flags, pairs) = parse_zadd(a)?;
    add(ctx, a[1], flags, &pairs).map(added_reply)
}

pub fn zincrby<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let increment = score_arg(a[2]).ok_or(CmdError::NotFloat)?;
    let flags = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    add(ctx, a[1], flags, &[(increment, a[3])]).map(added_reply)
}

pub fn zrem<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(mut meta) = zset(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut removed = 0;
    for member in distinct(a[2..].iter().copied()) {
        if let Some(score) = score_of(ctx, key, &meta, member)? {
            del_member(ctx, key, &meta, member, score);
            removed += 1;
        }
    }
    if removed > 0 {
        meta.size = meta.size.saturating_sub(removed);
        ctx.save(key, &meta)?;
        ctx.notify(Class::ZSET, "zrem", key);
        ctx.notify_if_emptied(key, &meta);
    }
    Ok(Reply::Integer(removed as i64))
}

/// The score of `member` as a reply: its printed score, or nil.
fn score_reply<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: Option<&Meta>,
    member: &[u8],
) -> CmdResult<Reply> {
    let score = match meta {
        Some(meta) => score_of(ctx, key, meta, member)?,
        None => None,
    };
    Ok(Reply::opt_bulk(score.map(|s| format_score(s).into_bytes())))
}

pub fn zscore<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let meta = zset(ctx, a[1])?;
    score_reply(ctx, a[1], meta.as_ref(), a[2])
}

pub fn zmscore<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let meta = zset(ctx, a[1])?;
    let scores = a[2..]
        .iter()
        .map(|member| score_reply(ctx, a[1], meta.as_ref(), member))
        .collect::<CmdResult<_>>()?;
    Ok(Reply::Array(scores))
}

pub fn zcard<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let size = zset(ctx, a[1])?.map_or(0, |m| m.size);
    Ok(Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX)))
}

/// ZRANDMEMBER `key [count [WITHSCORES]]`, by Redis' rules for random
/// picks (see [`random_pick`]): without a count one member or nil; with
/// one an array, distinct members for a positive count, repeats allowed
/// for a negative one.
pub fn zrandmember<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    if a.len() == 2 {
        let Some(meta) = zset(ctx, key)? else {
            return Ok(Reply::Nil);
        };
        let members = read_all(ctx, key, &meta)?;
        let picked = random_pick(&mut Rng::new(ctx.now_ms()), members, 1)?;
        return Ok(Reply::opt_bulk(picked.into_iter().next().map(|(m, _)| m)));
    }
    let (count, withscores) = random_count_with(&a[2..], "withscores")?;
    let Some(meta) = zset(ctx, key)?.filter(|_| count != 0) else {
        return Ok(Reply::Array(Vec::new()));
    };
    let members = read_all(ctx, key, &meta)?;
    let picked = random_pick(&mut Rng::new(ctx.now_ms()), members, count)?;
    Ok(scored_reply(picked, withscores))
}
