//! The sorted-set algebra: ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZUNION,
//! ZINTER, ZDIFF and ZINTERCARD, all through
//! `zunionInterDiffGenericCommand`'s one parser.

use std::collections::HashMap;

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use super::common::scored_reply;
use crate::cmd::args::is;
use crate::cmd::stored::store_collection;
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::number::{int_arg, parse_i64};
use crate::reply::Reply;
use crate::types::set;
use crate::types::zset::float::score_arg;
use crate::types::zset::{read_all, write_all, Members};
use crate::types::ValueMut;

/// Union, intersection or difference.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

/// How scores of the same member combine.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// `zunionInterAggregate`: a NaN sum (inf + -inf) is 0; MIN and MAX
    /// keep the current value against a NaN.
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *target {
                    *target = value;
                }
            }
            Aggregate::Max => {
                if value > *target {
                    *target = value;
                }
            }
        }
    }
}

/// One input: its members with scores (a set's members score 1) and its
/// weight.
struct Source {
    members: Members,
    weight: f64,
}

impl Source {
    /// A member's weighted score; a NaN product (inf × 0) is 0.
    fn weighted(&self, score: f64) -> f64 {
        let value = score * self.weight;
        if value.is_nan() {
            0.0
        } else {
            value
        }
    }
}

/// What a command of the family returns.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Output<'a> {
    /// Stores into the key (Z*STORE), replying with its size.
    Store(&'a [u8]),
    /// Replies with the members (ZUNION, ZINTER, ZDIFF).
    Members,
    /// Replies with the size, up to a LIMIT (ZINTERCARD).
    Cardinality,
}

/// The options after the keys.
struct Options {
    aggregate: Aggregate,
    withscores: bool,
    limit: u64,
}

/// Parses `WEIGHTS w…`, `AGGREGATE SUM|MIN|MAX`, `WITHSCORES` and `LIMIT n`
/// after the keys, each where `zunionInterDiffGenericCommand` accepts it,
/// into `sources`' weights.
fn parse_options(
    args: &[&[u8]],
    weights: &mut [f64],
    op: SetOp,
    output: Output<'_>,
) -> CmdResult<Options> {
    let mut options = Options {
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let algebra = op != SetOp::Diff && output != Output::Cardinality;
    let mut i = 0;
    while let Some(opt) = args.get(i) {
        let left = args.len() - i;
        if algebra && is(opt, "weights") && left > weights.len() {
            for (w, arg) in weights.iter_mut().zip(&args[i + 1..]) {
                *w = score_arg(arg)
                    .ok_or_else(|| CmdError::other("ERR weight value is not a float"))?;
            }
            i += 1 + weights.len();
        } else if algebra && is(opt, "aggregate") && left >= 2 {
            let name = args[i + 1];
            options.aggregate = match () {
                () if is(name, "sum") => Aggregate::Sum,
                () if is(name, "min") => Aggregate::Min,
                () if is(name, "max") => Aggregate::Max,
                () => return Err(CmdError::Syntax),
            };
            i += 2;
        } else if output == Output::Members && is(opt, "withscores") {
            options.withscores = true;
            i += 1;
        } else if output == Output::Cardinality && is(opt, "limit") && left >= 2 {
            options.limit = parse_i64(args[i + 1])
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| CmdError::other("ERR LIMIT can't be negative"))?;
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(options)
}

/// The members of every source, in argument order; a missing key is an
/// empty source. WRONGTYPE for anything but sorted sets and sets.
fn read_sources<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    keys: &[&[u8]],
) -> CmdResult<Vec<Members>> {
    let metas = keys
        .iter()
        .map(|key| match ctx.live(key)? {
            Some(m) if !matches!(m.data_type, DataType::ZSet | DataType::Set) => {
                Err(CmdError::WrongType)
            }
            meta => Ok(meta),
        })
        .collect::<CmdResult<Vec<Option<Meta>>>>()?;
    keys.iter()
        .zip(&metas)
        .map(|(key, meta)| match meta {
            None => Ok(Vec::new()),
            Some(m) if m.data_type == DataType::Set => Ok(set::read_all(ctx, key, m)?
                .into_iter()
                .map(|member| (member, 1.0))
                .collect()),
            Some(m) => read_all(ctx, key, m),
        })
        .collect()
}

/// Combines the sources as Redis does: smallest first (a stable sort, as
/// glibc's qsort is), so that sums add up in the same order.
/// The difference keeps the first source first.
fn combine(op: SetOp, mut sources: Vec<Source>, aggregate: Aggregate) -> Members {
    if op == SetOp::Diff {
        return diff(&sources);
    }
    sources.sort_by_key(|s| s.members.len());
    match op {
        SetOp::Union => union(&sources, aggregate),
        _ => inter(&sources, aggregate),
    }
}

/// Each source's members, looked up by name, with their stored scores.
fn by_member(sources: &[Source]) -> Vec<HashMap<&[u8], f64>> {
    sources
        .iter()
        .map(|s| s.members.iter().map(|(m, v)| (m.as_slice(), *v)).collect())
        .collect()
}

/// The first source's members (with their own scores) that are in none of
/// the others.
fn diff(sources: &[Source]) -> Members {
    let Some((first, others)) = sources.split_first() else {
        return Vec::new();
    };
    let others = by_member(others);
    first
        .members
        .iter()
        .filter(|(m, _)| !others.iter().any(|o| o.contains_key(m.as_slice())))
        .cloned()
        .collect()
}

/// Sorts members as a sorted set holds them: by score, then by member.
fn in_zset_order(members: &mut Members) {
    members.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
}

fn union(sources: &[Source], aggregate: Aggregate) -> Members {
    let mut order: Vec<&[u8]> = Vec::new();
    let mut scores: HashMap<&[u8], f64> = HashMap::new();
    for source in sources {
        for (member, score) in &source.members {
            let value = source.weighted(*score);
            match scores.get_mut(member.as_slice()) {
                Some(target) => aggregate.apply(target, value),
                None => {
                    order.push(member);
                    scores.insert(member, value);
                }
            }
        }
    }
    order
        .into_iter()
        .map(|m| (m.to_vec(), scores.get(m).copied().unwrap_or(0.0)))
        .collect()
}

fn inter(sources: &[Source], aggregate: Aggregate) -> Members {
    let Some((smallest, others)) = sources.split_first() else {
        return Vec::new();
    };
    let lookups = by_member(others);
    let mut out = Vec::new();
    'members: for (member, score) in &smallest.members {
        let mut total = smallest.weighted(*score);
        for (source, lookup) in others.iter().zip(&lookups) {
            let Some(score) = lookup.get(member.as_slice()) else {
                continue 'members;
            };
            aggregate.apply(&mut total, score * source.weight);
        }
        out.push((member.clone(), total));
    }
    out
}

/// The family's one command: `[dest] numkeys key… [options]`, with
/// `numkeys` at `a[at]`. Checks in Redis' order: numkeys, the keys' types,
/// then the options. A stored empty result removes the destination.
fn generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    at: usize,
    op: SetOp,
    output: Output<'_>,
) -> CmdResult<Reply> {
    let numkeys = int_arg(a[at])?;
    if numkeys < 1 {
        return Err(CmdError::other(format!(
            "ERR at least 1 input key is needed for '{}' command",
            String::from_utf8_lossy(a[0]).to_ascii_lowercase()
        )));
    }
    let rest = &a[at + 1..];
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    if numkeys > rest.len() {
        return Err(CmdError::Syntax);
    }
    let (keys, options) = rest.split_at(numkeys);
    let members = read_sources(ctx, keys)?;
    let mut weights = vec![1.0; numkeys];
    let options = parse_options(options, &mut weights, op, output)?;
    let sources = members
        .into_iter()
        .zip(weights)
        .map(|(members, weight)| Source { members, weight })
        .collect();
    let mut result = combine(op, sources, options.aggregate);
    let dest = match output {
        Output::Store(dest) => dest,
        Output::Cardinality => {
            let size = result.len() as u64;
            let size = if options.limit == 0 {
                size
            } else {
                size.min(options.limit)
            };
            return Ok(Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX)));
        }
        Output::Members => {
            in_zset_order(&mut result);
            return Ok(scored_reply(result, options.withscores));
        }
    };
    let event = match op {
        SetOp::Union => "zunionstore",
        SetOp::Inter => "zinterstore",
        SetOp::Diff => "zdiffstore",
    };
    store_collection(
        ctx,
        dest,
        DataType::ZSet,
        event,
        result.is_empty(),
        |ctx, meta| write_all(ValueMut::new(ctx, dest, meta), &result),
    )
}

variants! {
    pub fn zunionstore(ctx, a) => generic(ctx, a, 2, SetOp::Union, Output::Store(a[1]));
    pub fn zinterstore(ctx, a) => generic(ctx, a, 2, SetOp::Inter, Output::Store(a[1]));
    pub fn zdiffstore(ctx, a) => generic(ctx, a, 2, SetOp::Diff, Output::Store(a[1]));
    pub fn zunion(ctx, a) => generic(ctx, a, 1, SetOp::Union, Output::Members);
    pub fn zinter(ctx, a) => generic(ctx, a, 1, SetOp::Inter, Output::Members);
    pub fn zdiff(ctx, a) => generic(ctx, a, 1, SetOp::Diff, Output::Members);
    pub fn zintercard(ctx, a) => generic(ctx, a, 1, SetOp::Inter, Output::Cardinality);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(members: &[(&str, f64)], weight: f64) -> Source {
        Source {
            members: members
                .iter()
                .map(|(m, s)| (m.as_bytes().to_vec(), *s))
                .collect(),
            weight,
        }
    }

    fn sorted(mut v: Members) -> Vec<(String, f64)> {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter()
            .map(|(m, s)| (String::from_utf8_lossy(&m).into_owned(), s))
            .collect()
    }

    #[test]
    fn infinities_combine_like_redis() {
        let plus = source(&[("x", f64::INFINITY)], 1.0);
        let minus = source(&[("x", f64::NEG_INFINITY)], 1.0);
        let out = combine(SetOp::Union, vec![plus, minus], Aggregate::Sum);
        assert_eq!(sorted(out), [("x".to_string(), 0.0)]);
        let zero_weight = source(&[("x", f64::INFINITY), ("y", 2.0)], 0.0);
        let out = combine(SetOp::Union, vec![zero_weight], Aggregate::Sum);
        assert_eq!(
            sorted(out),
            [("x".to_string(), 0.0), ("y".to_string(), 0.0)]
        );
    }

    #[test]
    fn intersections_keep_common_members() {
        let a = source(&[("x", 1.0), ("y", 2.0), ("z", 3.0)], 2.0);
        let b = source(&[("y", 5.0), ("z", 1.0)], 1.0);
        let sum = combine(SetOp::Inter, vec![a, b], Aggregate::Sum);
        assert_eq!(
            sorted(sum),
            [("y".to_string(), 9.0), ("z".to_string(), 7.0)]
        );
        let a = source(&[("y", 2.0), ("z", 3.0)], 1.0);
        let b = source(&[("y", 5.0), ("z", 1.0)], 1.0);
        let max = combine(SetOp::Inter, vec![a, b], Aggregate::Min);
        assert_eq!(
            sorted(max),
            [("y".to_string(), 2.0), ("z".to_string(), 1.0)]
        );
        let empty = combine(
            SetOp::Inter,
            vec![source(&[], 1.0), source(&[("y", 1.0)], 1.0)],
            Aggregate::Sum,
        );
        assert!(empty.is_empty());
    }
}
