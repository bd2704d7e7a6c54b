//! Reading ranges: ZRANGE and its older forms, ZCOUNT, ZLEXCOUNT, ZRANK,
//! ZREVRANK, ZSCAN — and the walks by rank, score and member name that the
//! removing commands share.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta, ScoreIndex};

use super::common::{entries_reply, zset};
use crate::cmd::args::is;
use crate::cmd::args::resolve_range;
use crate::cmd::scan_args::{empty_scan_reply, scan_page, scan_reply, scan_start};
use crate::cmd::stored::store_collection;
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::number::{format_score, int_arg};
use crate::reply::Reply;
use crate::types::zset::bounds::{Interval, LexRange, ScoreRange};
use crate::types::zset::order::{range_walk, walk, Entry, Start, Window};
use crate::types::zset::{write_all, Members};
use crate::types::ValueMut;

/// The entries at ranks `first..=last` counted in the walk's direction
/// (resolved and within the set), in that direction. A range nearer the
/// far end is read from there.
pub(super) fn by_rank<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    (first, last): (u64, u64),
    reverse: bool,
) -> CmdResult<Vec<Entry>> {
    let wanted = usize::try_from(last - first + 1).unwrap_or(usize::MAX);
    let from_far_end = meta.size.saturating_sub(1).saturating_sub(last);
    let (skip, backward) = if from_far_end < first {
        (from_far_end, !reverse)
    } else {
        (first, reverse)
    };
    let mut entries = walk(ctx, key, meta, Start::Edge, backward)
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .take(wanted)
        .collect::<CmdResult<Vec<_>>>()?;
    if backward != reverse {
        entries.reverse();
    }
    Ok(entries)
}

/// Where a walk over the scores in `range` starts: at the range's first
/// bound in the walk's direction.
fn score_start(range: &ScoreRange, reverse: bool) -> Start<'_> {
    Start::Score(if reverse {
        range.max.value
    } else {
        range.min.value
    })
}

/// Where a walk over the members in `range` starts, as Redis does on its
/// compact encoding (`zzlFirstInLexRange` and on): nowhere (`None`) when
/// the first entry is above the maximum or the last below the minimum;
/// else at the first entry at or past the range's start. The range is
/// meaningful when all scores are equal; then, with an exact index, the
/// walk seeks to the bound's member instead of reading from the edge.
fn lex_start<'r, C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    range: &'r LexRange,
    reverse: bool,
) -> CmdResult<Option<Start<'r>>> {
    let edge = |backward| {
        walk(ctx, key, meta, Start::Edge, backward)
            .next()
            .transpose()
    };
    let (Some(first), Some(last)) = (edge(false)?, edge(true)?) else {
        return Ok(None);
    };
    if !range.reaches_min(&last) || !range.within_max(&first) {
        return Ok(None);
    }
    let bound = if reverse { &range.max } else { &range.min };
    let uniform = first.score.to_bits() == last.score.to_bits();
    Ok(Some(match bound.member() {
        Some(member) if uniform && ctx.caps().score_index == ScoreIndex::Exact => {
            Start::Entry(first.score, member)
        }
        _ => Start::Edge,
    }))
}

/// How ZRANGE selects entries.
#[derive(Clone, Copy, Debug, PartialEq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// A parsed ZRANGE-family request.
struct RangeRequest<'a> {
    by: By,
    reverse: bool,
    withscores: bool,
    /// `LIMIT offset count` as given; count -1 when absent.
    offset: i64,
    count: i64,
    /// The two range arguments, minimum first (swapped for reverse
    /// score and lex ranges, which Redis takes as max then min).
    min: &'a [u8],
    max: &'a [u8],
}

/// Parses `key min max [options]` as `zrangeGenericCommand` does. `by` and
/// `reverse` are fixed by the older commands (ZRANGEBYSCORE, ZREVRANGE…),
/// which then do not accept the option that would set them.
fn parse_range<'a>(
    a: &[&'a [u8]],
    by: Option<By>,
    reverse: Option<bool>,
    store: bool,
) -> CmdResult<RangeRequest<'a>> {
    let (mut by_opt, mut reverse_opt) = (by, reverse);
    let (mut withscores, mut offset, mut count) = (false, 0, -1);
    let mut i = 4;
    while let Some(opt) = a.get(i) {
        let left = a.len() - i - 1;
        if !store && is(opt, "withscores") {
            withscores = true;
        } else if is(opt, "limit") && left >= 2 {
            offset = int_arg(a[i + 1])?;
            count = int_arg(a[i + 2])?;
            i += 2;
        } else if reverse.is_none() && reverse_opt.is_none() && is(opt, "rev") {
            reverse_opt = Some(true);
        } else if by.is_none() && by_opt.is_none() && is(opt, "bylex") {
            by_opt = Some(By::Lex);
        } else if by.is_none() && by_opt.is_none() && is(opt, "byscore") {
            by_opt = Some(By::Score);
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    let by = by_opt.unwrap_or(By::Rank);
    let reverse = reverse_opt.unwrap_or(false);
    if count != -1 && by == By::Rank {
        return Err(CmdError::other(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && by == By::Lex {
        return Err(CmdError::other(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    let (min, max) = if reverse && by != By::Rank {
        (a[3], a[2])
    } else {
        (a[2], a[3])
    };
    Ok(RangeRequest {
        by,
        reverse,
        withscores,
        offset,
        count,
        min,
        max,
    })
}

/// The ZRANGE family.
fn zrange_generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    by: Option<By>,
    reverse: Option<bool>,
) -> CmdResult<Reply> {
    let (entries, withscores) = range_entries(ctx, a, by, reverse, false)?;
    Ok(entries_reply(entries, withscores))
}

/// ZRANGESTORE `dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset
/// count]`: ZRANGE's selection (without WITHSCORES) replaces the
/// destination; an empty one removes it. Replies with the size stored.
pub fn zrangestore<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let dest = a[1];
    let (entries, _) = range_entries(ctx, &a[1..], None, None, true)?;
    let empty = entries.is_empty();
    let members: Members = entries.into_iter().map(|e| (e.member, e.score)).collect();
    store_collection(
        ctx,
        dest,
        DataType::ZSet,
        "zrangestore",
        empty,
        |ctx, meta| write_all(ValueMut::new(ctx, dest, meta), &members),
    )
}

/// The entries a ZRANGE-family request `a` (`a[1]` the key) selects, in
/// reply order, and whether WITHSCORES was given.
fn range_entries<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    by: Option<By>,
    reverse: Option<bool>,
    store: bool,
) -> CmdResult<(Vec<Entry>, bool)> {
    let req = parse_range(a, by, reverse, store)?;
    let span = match req.by {
        By::Rank => Span::Rank(int_arg(req.min)?, int_arg(req.max)?),
        By::Score => Span::Score(ScoreRange::parse(req.min, req.max)?),
        By::Lex => Span::Lex(LexRange::parse(req.min, req.max)?),
    };
    let key = a[1];
    let Some(meta) = zset(ctx, key)? else {
        return Ok((Vec::new(), req.withscores));
    };
    let mut entries = Vec::new();
    // A negative offset skips everything, as in Redis.
    let window = (req.offset >= 0).then(|| Window {
        offset: req.offset as u64,
        count: u64::try_from(req.count).ok(),
    });
    span.visit(ctx, key, &meta, req.reverse, window, |e| entries.push(e))?;
    Ok((entries, req.withscores))
}

variants! {
    pub fn zrange(ctx, a) => zrange_generic(ctx, a, None, None);
    pub fn zrevrange(ctx, a) => zrange_generic(ctx, a, Some(By::Rank), Some(true));
    pub fn zrangebyscore(ctx, a) => zrange_generic(ctx, a, Some(By::Score), Some(false));
    pub fn zrevrangebyscore(ctx, a) => zrange_generic(ctx, a, Some(By::Score), Some(true));
    pub fn zrangebylex(ctx, a) => zrange_generic(ctx, a, Some(By::Lex), Some(false));
    pub fn zrevrangebylex(ctx, a) => zrange_generic(ctx, a, Some(By::Lex), Some(true));
}

/// A stretch of a sorted set by rank, score or member name, parsed before
/// the key is read.
pub(super) enum Span {
    /// Ranks `start..=stop` as given (negative from the end).
    Rank(i64, i64),
    /// The scores in a range.
    Score(ScoreRange),
    /// The member names in a range.
    Lex(LexRange),
}

impl Span {
    /// Visits the entries of the span in the walk's direction; a score or
    /// name range within `window` only (nothing without one: a negative
    /// LIMIT offset skips everything, as in Redis).
    pub(super) fn visit<C: Codec, S: KvStore>(
        &self,
        ctx: &Ctx<'_, C, S>,
        key: &[u8],
        meta: &Meta,
        reverse: bool,
        window: Option<Window>,
        emit: impl FnMut(Entry),
    ) -> CmdResult<()> {
        match (self, window) {
            (Span::Rank(start, stop), _) => {
                if let Some(ranks) = resolve_range(*start, *stop, meta.size) {
                    by_rank(ctx, key, meta, ranks, reverse)?
                        .into_iter()
                        .for_each(emit);
                }
                Ok(())
            }
            (Span::Score(range), Some(w)) if !range.is_empty() => {
                let entries = walk(ctx, key, meta, score_start(range, reverse), reverse);
                range_walk(entries, range, reverse, w, emit)
            }
            (Span::Lex(range), Some(w)) if !range.is_empty() => {
                match lex_start(ctx, key, meta, range, reverse)? {
                    Some(start) => {
                        let entries = walk(ctx, key, meta, start, reverse);
                        range_walk(entries, range, reverse, w, emit)
                    }
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

/// ZCOUNT and ZLEXCOUNT: the number of entries in `span` (0: no such key).
fn count<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8], span: Span) -> CmdResult<Reply> {
    let mut n = 0;
    if let Some(meta) = zset(ctx, key)? {
        span.visit(ctx, key, &meta, false, Some(Window::ALL), |_| n += 1)?;
    }
    Ok(Reply::Integer(n))
}

variants! {
    pub fn zcount(ctx, a) => count(ctx, a[1], Span::Score(ScoreRange::parse(a[2], a[3])?));
    pub fn zlexcount(ctx, a) => count(ctx, a[1], Span::Lex(LexRange::parse(a[2], a[3])?));
}

/// ZRANK and ZREVRANK: the member's position in the walk's direction.
fn rank<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    reverse: bool,
) -> CmdResult<Reply> {
    let (key, member) = (a[1], a[2]);
    let Some(meta) = zset(ctx, key)? else {
        return Ok(Reply::Nil);
    };
    for (position, entry) in walk(ctx, key, &meta, Start::Edge, reverse).enumerate() {
        if entry?.member == member {
            return Ok(Reply::Integer(position as i64));
        }
    }
    Ok(Reply::Nil)
}

variants! {
    pub fn zrank(ctx, a) => rank(ctx, a, false);
    pub fn zrevrank(ctx, a) => rank(ctx, a, true);
}

/// ZSCAN: pages through the set in Redis order; the cursor counts the
/// entries already visited.
pub fn zscan<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some((cursor, meta, opts)) = scan_start(ctx, a, zset)? else {
        return Ok(empty_scan_reply());
    };
    let entries = walk(ctx, key, &meta, Start::Edge, false);
    let (next, page) = scan_page(entries, cursor, opts.count)?;
    let items = page
        .into_iter()
        .filter(|e| opts.matches(&e.member))
        .flat_map(|e| [Reply::Bulk(e.member), Reply::bulk(format_score(e.score))])
        .collect();
    Ok(scan_reply(next, items))
}
