//! SORT and SORT_RO with Redis 7.0's semantics (`sortCommandGeneric`): the
//! elements of a list, set or sorted set, sorted by their own value or by
//! the keys a `BY` pattern names (`nosort`: no sorting), `LIMIT`ed,
//! replaced by what `GET` patterns name, and returned or `STORE`d as a list.

use std::cmp::Ordering;

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType};

use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::{parse_f64, parse_i64};
use crate::reply::Reply;
use crate::types::{hash, list, set, zset};
use crate::value::{write_value, Value};

pub fn sort<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, a, false)
}

pub fn sort_ro<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    run(ctx, a, true)
}

/// The parsed options of one SORT.
#[derive(Debug, Default)]
struct Options<'a> {
    desc: bool,
    alpha: bool,
    /// `BY` without `*`: the elements keep their order.
    dont_sort: bool,
    by: Option<&'a [u8]>,
    /// `LIMIT offset count` as given (count -1: to the end).
    limit: Option<(i64, i64)>,
    gets: Vec<&'a [u8]>,
    store: Option<&'a [u8]>,
}

impl<'a> Options<'a> {
    /// Parses the options after the key as Redis does: the last of each
    /// wins, and a `BY` without `*` turns sorting off for good.
    fn parse(args: &[&'a [u8]], read_only: bool) -> CmdResult<Options<'a>> {
        let mut o = Options::default();
        let mut j = 0;
        while j < args.len() {
            let arg = args[j];
            let left = args.len() - j - 1;
            if is(arg, "asc") {
                o.desc = false;
            } else if is(arg, "desc") {
                o.desc = true;
            } else if is(arg, "alpha") {
                o.alpha = true;
            } else if is(arg, "limit") && left >= 2 {
                let start = parse_i64(args[j + 1]).ok_or(CmdError::NotInteger)?;
                let count = parse_i64(args[j + 2]).ok_or(CmdError::NotInteger)?;
                o.limit = Some((start, count));
                j += 2;
            } else if !read_only && is(arg, "store") && left >= 1 {
                o.store = Some(args[j + 1]);
                j += 1;
            } else if is(arg, "by") && left >= 1 {
                o.by = Some(args[j + 1]);
                if !args[j + 1].contains(&b'*') {
                    o.dont_sort = true;
                }
                j += 1;
            } else if is(arg, "get") && left >= 1 {
                o.gets.push(args[j + 1]);
                j += 1;
            } else {
                return Err(CmdError::Syntax);
            }
            j += 1;
        }
        Ok(o)
    }
}

/// Redis' `[start, end]` window over `len` elements for `LIMIT`; empty
/// when `end < start`.
fn window(limit: Option<(i64, i64)>, len: usize) -> (i64, i64) {
    let len = len as i64;
    let (offset, count) = limit.unwrap_or((0, -1));
    let mut start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

/// One element being sorted, with its weight.
struct Item {
    element: Vec<u8>,
    score: f64,
    /// The `BY` value under ALPHA (`None`: the weight key is missing).
    by: Option<Vec<u8>>,
}

fn run<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    read_only: bool,
) -> CmdResult<Reply> {
    let key = a[1];
    let mut o = Options::parse(&a[2..], read_only)?;
    let meta = ctx.live(key)?;
    let data_type = meta.as_ref().map_or(DataType::List, |m| m.data_type);
    if !matches!(data_type, DataType::List | DataType::Set | DataType::ZSet) {
        return Err(CmdError::WrongType);
    }
    // A set has no order of its own: stored, it is sorted (ALPHA).
    if o.dont_sort && data_type == DataType::Set && o.store.is_some() {
        o.dont_sort = false;
        o.alpha = true;
        o.by = None;
    }
    let mut elements = match &meta {
        None => Vec::new(),
        Some(m) => match data_type {
            DataType::List => list::read_all(ctx, key, m)?,
            DataType::Set => set::read_all(ctx, key, m)?,
            _ => zset::read_all(ctx, key, m)?
                .into_iter()
                .map(|(member, _)| member)
                .collect(),
        },
    };
    let (start, end) = window(o.limit, elements.len());
    if o.dont_sort && data_type != DataType::Set && o.desc {
        // Lists and sorted sets keep their own order, read from the tail.
        elements.reverse();
    }
    let mut items: Vec<Item> = elements
        .into_iter()
        .map(|element| Item {
            element,
            score: 0.0,
            by: None,
        })
        .collect();
    if !o.dont_sort {
        let mut convertible = true;
        for item in &mut items {
            let weight = match o.by {
                Some(pattern) => match lookup(ctx, pattern, &item.element)? {
                    Some(w) => w,
                    None => continue,
                },
                None => item.element.clone(),
            };
            if o.alpha {
                if o.by.is_some() {
                    item.by = Some(weight);
                }
            } else {
                match strtod_whole(&weight) {
                    Some(score) => item.score = score,
                    None => convertible = false,
                }
            }
        }
        order(&mut items, &o);
        if !convertible {
            return Err(CmdError::other(
                "ERR One or more scores can't be converted into double",
            ));
        }
    }
    let selected = if end >= start {
        &items[start as usize..=end as usize]
    } else {
        &[][..]
    };
    let mut out: Vec<Option<Vec<u8>>> = Vec::new();
    for item in selected {
        if o.gets.is_empty() {
            out.push(Some(item.element.clone()));
        }
        for pattern in &o.gets {
            out.push(lookup(ctx, pattern, &item.element)?);
        }
    }
    let Some(dest) = o.store else {
        ctx.leave_unchanged(key);
        return Ok(Reply::Array(out.into_iter().map(Reply::opt_bulk).collect()));
    };
    if dest != key {
        ctx.leave_unchanged(key);
    }
    let stored = out.len() as i64;
    let view = ctx.view(dest)?;
    if stored == 0 && view.live.is_none() {
        ctx.leave_unchanged(dest);
    }
    let list = Value::List(out.into_iter().map(Option::unwrap_or_default).collect());
    if stored > 0 || view.live.is_some() {
        write_value(ctx, dest, &view, &list, 0)?;
    }
    if stored > 0 {
        ctx.notify(Class::LIST, "sortstore", dest);
    } else if view.live.is_some() {
        ctx.notify(Class::GENERIC, "del", dest);
    }
    Ok(Reply::Integer(stored))
}

/// Sorts `items` as Redis' `sortCompare`: by score with the element's bytes
/// breaking ties; under ALPHA by the `BY` values (missing ones first) or
/// by the elements' bytes; reversed for DESC.
fn order(items: &mut [Item], o: &Options<'_>) {
    let compare = |x: &Item, y: &Item| -> Ordering {
        if !o.alpha {
            x.score
                .partial_cmp(&y.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| x.element.cmp(&y.element))
        } else if o.by.is_some() {
            x.by.cmp(&y.by)
        } else {
            x.element.cmp(&y.element)
        }
    };
    if o.desc {
        items.sort_by(|x, y| compare(y, x));
    } else {
        items.sort_by(compare);
    }
}

/// Redis' `lookupKeyByPattern`: `#` is the element itself; otherwise the
/// first `*` is replaced by the element and the key read — a string, or
/// with `->field` after the `*`, that field of a hash. Anything else (no
/// `*`, a missing key, another type) is `None`.
fn lookup<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    pattern: &[u8],
    element: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    if pattern == b"#" {
        return Ok(Some(element.to_vec()));
    }
    let Some(star) = pattern.iter().position(|&b| b == b'*') else {
        return Ok(None);
    };
    let after = &pattern[star + 1..];
    let (suffix, field) = match after.windows(2).position(|w| w == b"->") {
        Some(arrow) if arrow + 2 < after.len() => (&after[..arrow], Some(&after[arrow + 2..])),
        _ => (after, None),
    };
    let name = [&pattern[..star], element, suffix].concat();
    let Some(meta) = ctx.live(&name)? else {
        return Ok(None);
    };
    match (field, meta.data_type) {
        (None, DataType::String) => Ok(Some(meta.value)),
        (Some(field), DataType::Hash) if meta.size > 0 => ctx
            .sub_get(hash::KIND, &name, &meta, hash::field_id(field))?
            .map(|value| hash::value_bytes(&name, value))
            .transpose(),
        _ => Ok(None),
    }
}

/// A weight as Redis reads it with `strtod`: the whole value (up to a NUL
/// byte) must be the number, after optional leading spaces; the empty
/// value is 0; NaN, overflow and underflow are not numbers.
fn strtod_whole(bytes: &[u8]) -> Option<f64> {
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let hex = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"));
    let v = match hex {
        _ if text.is_empty() => 0.0,
        Some(digits) => {
            let magnitude = u64::from_str_radix(digits, 16).ok()? as f64;
            if negative {
                -magnitude
            } else {
                magnitude
            }
        }
        None => parse_f64(text.as_bytes())?,
    };
    // strtod's underflow (ERANGE): a non-zero mantissa read as 0.
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    if v == 0.0 && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
        return None;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::testkit::check_parser;

    #[test]
    fn weights_read_like_strtod() {
        check_parser(
            strtod_whole,
            &[
                ("1.5", 1.5),
                ("  -2", -2.0),
                ("", 0.0),
                ("3\0junk", 3.0),
                ("+inf", f64::INFINITY),
                ("0x10", 16.0),
                ("1e2", 100.0),
            ],
            &["abc", "1 ", "nan", "1e400", "1e-400", "--1", "1x"],
        );
    }

    #[test]
    fn limit_windows_follow_redis() {
        assert_eq!(window(None, 5), (0, 4));
        assert_eq!(window(Some((1, 2)), 5), (1, 2));
        assert_eq!(window(Some((-3, 2)), 5), (0, 1));
        assert_eq!(window(Some((2, -7)), 5), (2, 4));
        assert_eq!(window(Some((9, 2)), 5), (4, 3));
        assert_eq!(window(Some((0, 0)), 5), (0, -1));
        assert_eq!(window(None, 0), (-1, -2));
    }
}
