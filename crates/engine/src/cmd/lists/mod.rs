//! List commands. Each command is written once against [`Model`], the
//! list operations ([`ListOps`]) of the format's declared list model; the
//! models live in the type layer ([`crate::types::list`]).

#[cfg(test)]
mod list_tests;

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::cmd::args::{is, mpop_count, numkeys_block, resolve_range};
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::number::{int_arg, parse_i64};
use crate::reply::Reply;
use crate::types::list::{Insertion, List, ListOps, Model, Side, ValueMut};

/// The live list at `key`, WRONGTYPE for another type.
fn read<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::List)
}

/// Redis' length as a reply integer.
fn len_reply(meta: &Meta) -> Reply {
    Reply::Integer(i64::try_from(meta.size).unwrap_or(i64::MAX))
}

/// The position of Redis index `index` (negative counts from the tail) in
/// a list of `len` elements, if it is inside the list.
fn position(index: i64, len: u64) -> Option<u64> {
    let pos = if index < 0 {
        i128::from(len) + i128::from(index)
    } else {
        i128::from(index)
    };
    u64::try_from(pos).ok().filter(|&p| p < len)
}

/// Parses LMOVE's `LEFT` / `RIGHT`.
fn side_arg(arg: &[u8]) -> CmdResult<Side> {
    if is(arg, "left") {
        Ok(Side::Left)
    } else if is(arg, "right") {
        Ok(Side::Right)
    } else {
        Err(CmdError::Syntax)
    }
}

/// Parses a non-negative integer option: anything else (non-numbers
/// included) is the error `text`, as Redis' `getPositiveLongFromObject`.
fn non_negative_arg(arg: &[u8], text: &str) -> CmdResult<u64> {
    parse_i64(arg)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| CmdError::other(text))
}

/// The events of a push and of a pop at `side`.
fn push_event(side: Side) -> &'static str {
    match side {
        Side::Left => "lpush",
        Side::Right => "rpush",
    }
}

/// See [`push_event`].
fn pop_event(side: Side) -> &'static str {
    match side {
        Side::Left => "lpop",
        Side::Right => "rpop",
    }
}

/// Notes a pop's events: the pop, and `del` if it emptied the list.
fn notify_pop<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8], meta: &Meta, side: Side) {
    ctx.notify(Class::LIST, pop_event(side), key);
    ctx.notify_if_emptied(key, meta);
}

fn push_generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    side: Side,
    create: bool,
) -> CmdResult<Reply> {
    let key = a[1];
    let mut meta = if create {
        ctx.typed_or_create(key, DataType::List)?
    } else {
        match read(ctx, key)? {
            Some(meta) => meta,
            None => return Ok(Reply::Integer(0)),
        }
    };
    Model::of(ctx)?.push(ValueMut::new(ctx, key, &mut meta), side, &a[2..])?;
    ctx.save(key, &meta)?;
    ctx.notify(Class::LIST, push_event(side), key);
    Ok(len_reply(&meta))
}

variants! {
    pub fn lpush(ctx, a) => push_generic(ctx, a, Side::Left, true);
    pub fn rpush(ctx, a) => push_generic(ctx, a, Side::Right, true);
    pub fn lpushx(ctx, a) => push_generic(ctx, a, Side::Left, false);
    pub fn rpushx(ctx, a) => push_generic(ctx, a, Side::Right, false);
}

/// LPOP / RPOP `key [count]`: without a count one bulk (nil when the key
/// is missing); with one an array (nil array when missing, empty for 0).
fn pop_generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    side: Side,
) -> CmdResult<Reply> {
    if a.len() > 3 {
        return Err(CmdError::WrongArity(
            String::from_utf8_lossy(a[0]).to_ascii_lowercase(),
        ));
    }
    let count = match a.get(2) {
        Some(arg) => Some(non_negative_arg(
            arg,
            "ERR value is out of range, must be positive",
        )?),
        None => None,
    };
    let key = a[1];
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(if count.is_some() {
            Reply::NilArray
        } else {
            Reply::Nil
        });
    };
    if count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let n = count.unwrap_or(1).min(meta.size);
    let values = Model::of(ctx)?.pop(ValueMut::new(ctx, key, &mut meta), side, n)?;
    ctx.save(key, &meta)?;
    notify_pop(ctx, key, &meta, side);
    Ok(match count {
        Some(_) => Reply::bulks(values),
        None => Reply::opt_bulk(values.into_iter().next()),
    })
}

variants! {
    pub fn lpop(ctx, a) => pop_generic(ctx, a, Side::Left);
    pub fn rpop(ctx, a) => pop_generic(ctx, a, Side::Right);
}

/// LMPOP `numkeys key… LEFT|RIGHT [COUNT count]`: pops up to `count`
/// elements from the first non-empty list, replying `[key, [element…]]`,
/// or a nil array when every key is missing. Arguments are checked in
/// Redis' order (numkeys, side, COUNT) before any key is read; a key of
/// another type met before a list is WRONGTYPE.
pub fn lmpop<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (keys, side_at) = numkeys_block(a, 1, true)?;
    let side = side_arg(a[side_at])?;
    let count = mpop_count(a, side_at + 1)?;
    for key in keys {
        let Some(mut meta) = read(ctx, key)? else {
            continue;
        };
        if meta.size == 0 {
            continue;
        }
        let n = count.min(meta.size);
        let values = Model::of(ctx)?.pop(ValueMut::new(ctx, key, &mut meta), side, n)?;
        ctx.save(key, &meta)?;
        notify_pop(ctx, key, &meta, side);
        return Ok(Reply::Array(vec![
            Reply::bulk(key.to_vec()),
            Reply::bulks(values),
        ]));
    }
    Ok(Reply::NilArray)
}

pub fn llen<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(read(ctx, a[1])?.map_or(Reply::Integer(0), |meta| len_reply(&meta)))
}

pub fn lindex<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(meta) = read(ctx, key)? else {
        return Ok(Reply::Nil);
    };
    let Some(pos) = position(int_arg(a[2])?, meta.size) else {
        return Ok(Reply::Nil);
    };
    let list = List::new(ctx, key, &meta);
    Ok(Reply::Bulk(Model::of(ctx)?.get(list, pos)?))
}

pub fn lrange<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let (start, stop) = (int_arg(a[2])?, int_arg(a[3])?);
    let Some(meta) = read(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let Some((start, stop)) = resolve_range(start, stop, meta.size) else {
        return Ok(Reply::Array(Vec::new()));
    };
    let list = List::new(ctx, key, &meta);
    Ok(Reply::bulks(Model::of(ctx)?.range(list, start, stop)?))
}

pub fn lset<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let Some(mut meta) = read(ctx, key)? else {
        return Err(CmdError::NoSuchKey);
    };
    let Some(pos) = position(int_arg(a[2])?, meta.size) else {
        return Err(CmdError::other("ERR index out of range"));
    };
    Model::of(ctx)?.set(ValueMut::new(ctx, key, &mut meta), pos, a[3])?;
    ctx.notify(Class::LIST, "lset", key);
    Ok(Reply::ok())
}

pub fn linsert<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let before = if is(a[2], "before") {
        true
    } else if is(a[2], "after") {
        false
    } else {
        return Err(CmdError::Syntax);
    };
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let new = Insertion {
        pivot: a[3],
        before,
        value: a[4],
    };
    if !Model::of(ctx)?.insert(ValueMut::new(ctx, key, &mut meta), new)? {
        return Ok(Reply::Integer(-1));
    }
    ctx.save(key, &meta)?;
    ctx.notify(Class::LIST, "linsert", key);
    Ok(len_reply(&meta))
}

pub fn lrem<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let count = int_arg(a[2])?;
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let len = meta.size;
    let before = meta.clone();
    let removed = Model::of(ctx)?.remove(ValueMut::new(ctx, key, &mut meta), count, a[3])?;
    if removed == len {
        ctx.remove_key(key, &meta)?;
    } else if removed > 0 || meta != before {
        // A model may change the metadata even when nothing matched
        // (the sparse model clears its `sequential` flag, as Ardb does).
        ctx.save(key, &meta)?;
    }
    if removed > 0 {
        ctx.notify(Class::LIST, "lrem", key);
        if removed == len {
            ctx.notify(Class::GENERIC, "del", key);
        }
    }
    Ok(Reply::Integer(i64::try_from(removed).unwrap_or(i64::MAX)))
}

pub fn ltrim<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let (start, stop) = (int_arg(a[2])?, int_arg(a[3])?);
    let Some(mut meta) = read(ctx, key)? else {
        return Ok(Reply::ok());
    };
    ctx.notify(Class::LIST, "ltrim", key);
    match resolve_range(start, stop, meta.size) {
        None => {
            ctx.remove_key(key, &meta)?;
            ctx.notify(Class::GENERIC, "del", key);
        }
        Some((0, stop)) if stop + 1 == meta.size => {}
        Some((start, stop)) => {
            Model::of(ctx)?.trim(ValueMut::new(ctx, key, &mut meta), start, stop)?;
            ctx.save(key, &meta)?;
        }
    }
    Ok(Reply::ok())
}

/// LPOS options, as Redis reads them.
struct LposQuery {
    /// `RANK` (default 1); negative scans from the tail.
    rank: i64,
    /// `COUNT`, if given (0: every match).
    count: Option<u64>,
    /// `MAXLEN` (0: no limit): how many elements to compare at most.
    maxlen: u64,
}

impl LposQuery {
    /// Parses the options after `LPOS key element`.
    fn parse(args: &[&[u8]]) -> CmdResult<LposQuery> {
        let mut q = LposQuery {
            rank: 1,
            count: None,
            maxlen: 0,
        };
        let mut opts = args.iter();
        while let Some(opt) = opts.next() {
            let Some(value) = opts.next() else {
                return Err(CmdError::Syntax);
            };
            if is(opt, "rank") {
                q.rank = int_arg(value)?;
                if q.rank == 0 {
                    return Err(CmdError::other(
                        "ERR RANK can't be zero: use 1 to start from the first match, \
                         2 from the second ... or use negative to start from the end of the list",
                    ));
                }
            } else if is(opt, "count") {
                q.count = Some(non_negative_arg(value, "ERR COUNT can't be negative")?);
            } else if is(opt, "maxlen") {
                q.maxlen = non_negative_arg(value, "ERR MAXLEN can't be negative")?;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok(q)
    }

    /// Which end the scan starts from.
    fn from(&self) -> Side {
        if self.rank < 0 {
            Side::Right
        } else {
            Side::Left
        }
    }

    /// How many matches to pass over before reporting. Redis negates the
    /// rank in a C `long`, so `i64::MIN` stays negative and skips nothing.
    fn skip(&self) -> u64 {
        if self.rank == i64::MIN {
            0
        } else {
            self.rank.unsigned_abs() - 1
        }
    }

    /// How many matches to report. With `RANK i64::MIN` Redis' stop test
    /// overflows and never fires, so every match is reported.
    fn wanted(&self) -> u64 {
        match self.count {
            None => 1,
            Some(0) => u64::MAX,
            Some(_) if self.rank == i64::MIN => u64::MAX,
            Some(n) => n,
        }
    }
}

pub fn lpos<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (key, element) = (a[1], a[2]);
    let q = LposQuery::parse(&a[3..])?;
    let found = match read(ctx, key)? {
        None => Vec::new(),
        Some(meta) => find_positions(ctx, key, &meta, element, &q)?,
    };
    let mut found = found
        .into_iter()
        .map(|pos| Reply::Integer(i64::try_from(pos).unwrap_or(i64::MAX)));
    Ok(match q.count {
        Some(_) => Reply::Array(found.collect()),
        None => found.next().unwrap_or(Reply::Nil),
    })
}

/// The positions (from the head) of the matches of `element` that `q`
/// asks for, in scan order.
fn find_positions<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    element: &[u8],
    q: &LposQuery,
) -> CmdResult<Vec<u64>> {
    let from = q.from();
    let (skip, wanted) = (q.skip(), q.wanted());
    let mut found = Vec::new();
    let (mut scanned, mut matches) = (0u64, 0u64);
    Model::of(ctx)?.visit(List::new(ctx, key, meta), from, |value| {
        if q.maxlen != 0 && scanned >= q.maxlen {
            return false;
        }
        if value == element {
            matches += 1;
            if matches > skip {
                found.push(match from {
                    Side::Left => scanned,
                    Side::Right => meta.size - 1 - scanned,
                });
            }
        }
        scanned += 1;
        (found.len() as u64) < wanted
    })?;
    Ok(found)
}

pub fn rpoplpush<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    move_element(ctx, a[1], a[2], Side::Right, Side::Left)
}

pub fn lmove<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (from, to) = (side_arg(a[3])?, side_arg(a[4])?);
    move_element(ctx, a[1], a[2], from, to)
}

/// Pops one element from the `from` end of `src` and pushes it at the `to`
/// end of `dst`. The destination's type is checked only when the source
/// exists, as Redis does.
fn move_element<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    src: &[u8],
    dst: &[u8],
    from: Side,
    to: Side,
) -> CmdResult<Reply> {
    let Some(mut src_meta) = read(ctx, src)? else {
        return Ok(Reply::Nil);
    };
    let model = Model::of(ctx)?;
    if src == dst {
        return rotate(ctx, model, src, src_meta, from, to);
    }
    let mut dst_meta = ctx.typed_or_create(dst, DataType::List)?;
    let popped = model.pop(ValueMut::new(ctx, src, &mut src_meta), from, 1)?;
    model.push(ValueMut::new(ctx, dst, &mut dst_meta), to, &popped)?;
    ctx.save(src, &src_meta)?;
    ctx.save(dst, &dst_meta)?;
    ctx.notify(Class::LIST, push_event(to), dst);
    notify_pop(ctx, src, &src_meta, from);
    Ok(Reply::opt_bulk(popped.into_iter().next()))
}

/// LMOVE of a list onto itself. Moving an element back to the end it came
/// from, or rotating a one-element list, changes nothing and writes
/// nothing; otherwise the pop and the push apply to the same metadata.
fn rotate<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    model: Model,
    key: &[u8],
    mut meta: Meta,
    from: Side,
    to: Side,
) -> CmdResult<Reply> {
    // Redis pops and pushes back: the push's event, then the pop's.
    ctx.notify(Class::LIST, push_event(to), key);
    ctx.notify(Class::LIST, pop_event(from), key);
    if from == to || meta.size == 1 {
        let pos = match from {
            Side::Left => 0,
            Side::Right => meta.size - 1,
        };
        return Ok(Reply::Bulk(model.get(List::new(ctx, key, &meta), pos)?));
    }
    let moved = model.rotate(ValueMut::new(ctx, key, &mut meta), from, to)?;
    ctx.save(key, &meta)?;
    Ok(Reply::Bulk(moved))
}
