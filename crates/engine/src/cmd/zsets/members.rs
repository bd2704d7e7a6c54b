//! Commands on single members: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD,
//! ZRANDMEMBER.

use std::collections::{HashMap, HashSet};

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use super::common::{scored_reply, zset};
use crate::cmd::args::{is, random_count_with};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::number::format_score;
use crate::reply::Reply;
use crate::types::random::{random_pick, Rng};
use crate::types::zset::float::score_arg;
use crate::types::zset::read_all;
use crate::types::zset::write::{del_member, put_member, score_of};

/// ZADD's options.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// What one score–member pair did, as Redis' `zsetAdd` reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// The member was added with this score.
    Added(f64),
    /// The member's score became this (possibly the same) score.
    Updated { changed: bool, score: f64 },
    /// Nothing was done (NX, XX, GT or LT).
    Skipped,
}

/// `zsetAdd` for one pair on a member whose current score is `current`.
fn add_step(flags: AddFlags, current: Option<f64>, score: f64) -> CmdResult<Step> {
    let Some(current) = current else {
        return Ok(if flags.xx {
            Step::Skipped
        } else {
            Step::Added(score)
        });
    };
    if flags.nx {
        return Ok(Step::Skipped);
    }
    let score = if flags.incr { score + current } else { score };
    if score.is_nan() {
        return Err(CmdError::other("ERR resulting score is not a number (NaN)"));
    }
    if (flags.lt && score >= current) || (flags.gt && score <= current) {
        return Ok(Step::Skipped);
    }
    Ok(Step::Updated {
        changed: score != current,
        score,
    })
}

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

/// The members a command touched: their score on disk and their score now.
#[derive(Default)]
struct Touched<'a> {
    order: Vec<&'a [u8]>,
    scores: HashMap<&'a [u8], (Option<f64>, Option<f64>)>,
}

impl<'a> Touched<'a> {
    /// The current score of `member`, read from disk on first touch.
    fn current<C: Codec, S: KvStore>(
        &mut self,
        ctx: &Ctx<'_, C, S>,
        key: &[u8],
        meta: &Meta,
        member: &'a [u8],
    ) -> CmdResult<Option<f64>> {
        if let Some((_, now)) = self.scores.get(member) {
            return Ok(*now);
        }
        let on_disk = score_of(ctx, key, meta, member)?;
        self.order.push(member);
        self.scores.insert(member, (on_disk, on_disk));
        Ok(on_disk)
    }

    fn set(&mut self, member: &'a [u8], score: f64) {
        if let Some(entry) = self.scores.get_mut(member) {
            entry.1 = Some(score);
        }
    }

    /// Queues the records of every member whose score changed and updates
    /// the size. Returns whether anything changed.
    fn write<C: Codec, S: KvStore>(
        &self,
        ctx: &mut Ctx<'_, C, S>,
        key: &[u8],
        meta: &mut Meta,
    ) -> CmdResult<bool> {
        let mut changed = false;
        for member in &self.order {
            let Some(&(on_disk, Some(now))) = self.scores.get(member) else {
                continue;
            };
            if on_disk == Some(now) {
                continue;
            }
            put_member(ctx, key, meta, member, on_disk, now)?;
            if on_disk.is_none() {
                meta.size += 1;
            }
            changed = true;
        }
        Ok(changed)
    }
}

/// ZADD and ZINCRBY: applies `pairs` in order, as Redis does one by one.
fn add<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    flags: AddFlags,
    pairs: &[(f64, &[u8])],
) -> CmdResult<Reply> {
    let skipped = if flags.incr {
        Reply::Nil
    } else {
        Reply::Integer(0)
    };
    let view = ctx.view(key)?;
    let mut meta = match &view.live {
        Some(m) if m.data_type == DataType::ZSet => m.clone(),
        Some(_) => return Err(CmdError::WrongType),
        None if flags.xx => return Ok(skipped),
        None => ctx.create(key, DataType::ZSet, &view)?,
    };
    let mut touched = Touched::default();
    let (mut added, mut updated) = (0, 0);
    let mut last = None;
    for &(score, member) in pairs {
        let current = touched.current(ctx, key, &meta, member)?;
        match add_step(flags, current, score)? {
            Step::Added(score) => {
                added += 1;
                touched.set(member, score);
                last = Some(score);
            }
            Step::Updated { changed, score } => {
                updated += i64::from(changed);
                touched.set(member, score);
                last = Some(score);
            }
            Step::Skipped => {}
        }
    }
    if touched.write(ctx, key, &mut meta)? {
        ctx.save(key, &meta)?;
    }
    Ok(match (flags.incr, last) {
        (true, Some(score)) => Reply::bulk(format_score(score)),
        (true, None) => skipped,
        (false, _) => Reply::Integer(if flags.ch { added + updated } else { added }),
    })
}

pub fn zadd<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (flags, pairs) = parse_zadd(a)?;
    add(ctx, a[1], flags, &pairs)
}

pub fn zincrby<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let increment = score_arg(a[2]).ok_or(CmdError::NotFloat)?;
    let flags = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    add(ctx, a[1], flags, &[(increment, a[3])])
}

pub fn zrem<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(mut meta) = zset(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut seen = HashSet::new();
    let mut removed = 0;
    for member in &a[2..] {
        if !seen.insert(*member) {
            continue;
        }
        if let Some(score) = score_of(ctx, key, &meta, member)? {
            del_member(ctx, key, &meta, member, score);
            removed += 1;
        }
    }
    if removed > 0 {
        meta.size = meta.size.saturating_sub(removed);
        ctx.save(key, &meta)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_zset_add() {
        let flags = |f: &str| AddFlags {
            nx: f.contains("nx"),
            xx: f.contains("xx"),
            gt: f.contains("gt"),
            lt: f.contains("lt"),
            ch: false,
            incr: f.contains("incr"),
        };
        assert_eq!(add_step(flags(""), None, 1.0).ok(), Some(Step::Added(1.0)));
        assert_eq!(add_step(flags("xx"), None, 1.0).ok(), Some(Step::Skipped));
        assert_eq!(
            add_step(flags("gt"), None, 1.0).ok(),
            Some(Step::Added(1.0))
        );
        assert_eq!(
            add_step(flags("nx"), Some(2.0), 1.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("gt"), Some(2.0), 2.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("lt"), Some(2.0), 3.0).ok(),
            Some(Step::Skipped)
        );
        assert_eq!(
            add_step(flags("lt incr"), Some(2.0), -1.0).ok(),
            Some(Step::Updated {
                changed: true,
                score: 1.0
            })
        );
        assert_eq!(
            add_step(flags(""), Some(0.0), -0.0).ok(),
            Some(Step::Updated {
                changed: false,
                score: -0.0
            })
        );
        let nan = add_step(flags("incr"), Some(f64::INFINITY), f64::NEG_INFINITY);
        assert_eq!(
            nan.expect_err("NaN").to_string(),
            "ERR resulting score is not a number (NaN)"
        );
    }
}
