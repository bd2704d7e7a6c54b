//! String commands.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::cmd::args::is;
use crate::cmd::kvrocks_args;
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::{Ctx, ExpireAt, KeyView};
use crate::long_double::LongDouble;
use crate::number::{int_arg, parse_i64};
use crate::reply::Reply;

/// The live string at `key`, WRONGTYPE for another type.
fn read<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Option<Meta>> {
    ctx.typed(key, DataType::String)
}

/// Queues `value` as the new string at `key` with expiry `expire` (an
/// absolute time in ms, 0: none, or an [`ExpireAt`]), replacing whatever
/// `view` shows there.
pub(super) fn write<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    view: &KeyView,
    value: &[u8],
    expire: impl Into<ExpireAt>,
) -> CmdResult<()> {
    let mut meta = ctx.create(key, DataType::String, view)?;
    ctx.set_expire_at(&mut meta, expire.into())?;
    ctx.put_meta_with(key, &meta, value)
}

/// Rewrites the value of a live string, keeping its expiry.
pub(super) fn rewrite<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    mut meta: Meta,
    value: Vec<u8>,
) -> CmdResult<()> {
    meta.value = value;
    ctx.put_meta(key, &meta)
}

pub fn get<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::opt_bulk(read(ctx, a[1])?.map(|m| m.value)))
}

/// The zeroed `(xl + 1) × (yl + 1)` table LCS fills, refused as Redis
/// refuses it: strings of 2^32 − 1 bytes or more, a table larger than
/// `proto-max-bulk-len` bytes, or one the allocator cannot give.
fn lcs_table<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    xl: usize,
    yl: usize,
) -> CmdResult<Vec<u32>> {
    const TOO_LONG: u64 = u32::MAX as u64 - 1;
    if xl as u64 >= TOO_LONG || yl as u64 >= TOO_LONG {
        return Err(CmdError::other("ERR String too long for LCS"));
    }
    let failed =
        || CmdError::other("ERR Insufficient memory, failed allocating transient memory for LCS");
    let cells = (xl as u64 + 1) * (yl as u64 + 1);
    let bytes = cells.checked_mul(4).ok_or_else(failed)?;
    if bytes > ctx.engine().max_bulk_len() {
        return Err(CmdError::other(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let cells = usize::try_from(cells).map_err(|_| failed())?;
    let mut table = Vec::new();
    table.try_reserve_exact(cells).map_err(|_| failed())?;
    table.resize(cells, 0);
    Ok(table)
}

/// LCS `key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`: the longest
/// common subsequence of two strings (a missing key is the empty string),
/// its length, or its matching ranges, as Redis' `lcsCommand` computes and
/// walks them.
pub fn lcs<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut values = Vec::with_capacity(2);
    for key in &a[1..3] {
        match ctx.live(key)? {
            None => values.push(Vec::new()),
            Some(m) if m.data_type == DataType::String => values.push(m.value),
            Some(_) => {
                return Err(CmdError::other(
                    "ERR The specified keys must contain string values",
                ))
            }
        }
    }
    let (mut get_idx, mut get_len, mut with_match_len) = (false, false, false);
    let mut min_match_len = 0i64;
    let mut i = 3;
    while i < a.len() {
        if is(a[i], "idx") {
            get_idx = true;
        } else if is(a[i], "len") {
            get_len = true;
        } else if is(a[i], "withmatchlen") {
            with_match_len = true;
        } else if is(a[i], "minmatchlen") && i + 1 < a.len() {
            min_match_len = int_arg(a[i + 1])?.max(0);
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if get_idx && get_len {
        return Err(CmdError::other(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    let (x, y) = (&values[0], &values[1]);
    let (xl, yl) = (x.len(), y.len());
    let width = yl + 1;
    let mut dp = lcs_table(ctx, xl, yl)?;
    for i in 1..=xl {
        for j in 1..=yl {
            dp[i * width + j] = if x[i - 1] == y[j - 1] {
                dp[(i - 1) * width + j - 1] + 1
            } else {
                dp[(i - 1) * width + j].max(dp[i * width + j - 1])
            };
        }
    }
    let total = dp[xl * width + yl];
    if get_len && !get_idx {
        return Ok(Reply::Integer(i64::from(total)));
    }
    let mut result = vec![0u8; total as usize];
    let mut idx = total as usize;
    let mut matches = Vec::new();
    // Redis' walk back through the table, emitting each maximal range.
    let (mut ai, mut bj) = (xl, yl);
    let (mut a_start, mut a_end, mut b_start, mut b_end) = (xl, 0, 0, 0);
    while ai > 0 && bj > 0 {
        let mut emit = false;
        if x[ai - 1] == y[bj - 1] {
            result[idx - 1] = x[ai - 1];
            if a_start == xl {
                (a_start, a_end, b_start, b_end) = (ai - 1, ai - 1, bj - 1, bj - 1);
            } else if a_start == ai && b_start == bj {
                a_start -= 1;
                b_start -= 1;
            } else {
                emit = true;
            }
            if a_start == 0 || b_start == 0 {
                emit = true;
            }
            idx -= 1;
            ai -= 1;
            bj -= 1;
        } else {
            if dp[(ai - 1) * width + bj] > dp[ai * width + bj - 1] {
                ai -= 1;
            } else {
                bj -= 1;
            }
            if a_start != xl {
                emit = true;
            }
        }
        if emit {
            let len = (a_end - a_start + 1) as i64;
            if min_match_len == 0 || len >= min_match_len {
                let mut item = vec![
                    Reply::Array(vec![
                        Reply::Integer(a_start as i64),
                        Reply::Integer(a_end as i64),
                    ]),
                    Reply::Array(vec![
                        Reply::Integer(b_start as i64),
                        Reply::Integer(b_end as i64),
                    ]),
                ];
                if with_match_len {
                    item.push(Reply::Integer(len));
                }
                matches.push(Reply::Array(item));
            }
            a_start = xl;
        }
    }
    if get_idx {
        return Ok(Reply::Array(vec![
            Reply::bulk("matches"),
            Reply::Array(matches),
            Reply::bulk("len"),
            Reply::Integer(i64::from(total)),
        ]));
    }
    Ok(Reply::Bulk(result))
}

/// A bit offset: from 0 to the last bit of the longest string
/// (`proto-max-bulk-len`, 512 MB unless set), with Redis' one error text
/// for anything else.
fn bit_offset<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, arg: &[u8]) -> CmdResult<u64> {
    let max = ctx.engine().max_bulk_len();
    parse_i64(arg)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n >> 3 < max)
        .ok_or_else(|| CmdError::other("ERR bit offset is not an integer or out of range"))
}

/// SETBIT `key offset 0|1`: sets one bit (bit 0 the most significant of
/// byte 0), growing the string with zero bytes; replies with the old bit.
/// The expiry is kept.
pub fn setbit<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let offset = bit_offset(ctx, a[2])?;
    let on = match parse_i64(a[3]) {
        Some(0) => false,
        Some(1) => true,
        _ => return Err(CmdError::other("ERR bit is not an integer or out of range")),
    };
    let view = ctx.view(a[1])?;
    let live = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        other => other.clone(),
    };
    let mut value = live.as_ref().map(|m| m.value.clone()).unwrap_or_default();
    let byte = usize::try_from(offset >> 3).unwrap_or(usize::MAX);
    let grown = value.len() <= byte;
    if grown {
        value.resize(byte + 1, 0);
    }
    let mask = 1u8 << (7 - (offset & 7));
    let old = value[byte] & mask != 0;
    if live.is_some() && !grown && old == on {
        // Redis counts no change for a bit set to what it was.
        ctx.leave_unchanged(a[1]);
        return Ok(Reply::Integer(i64::from(old)));
    }
    if on {
        value[byte] |= mask;
    } else {
        value[byte] &= !mask;
    }
    match live {
        Some(m) => rewrite(ctx, a[1], m, value)?,
        None => write(ctx, a[1], &view, &value, 0)?,
    }
    ctx.notify(Class::STRING, "setbit", a[1]);
    Ok(Reply::Integer(i64::from(old)))
}

/// GETBIT `key offset`: 0 past the end or for a missing key.
pub fn getbit<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let offset = bit_offset(ctx, a[2])?;
    let value = read(ctx, a[1])?.map(|m| m.value).unwrap_or_default();
    let bit = usize::try_from(offset >> 3)
        .ok()
        .and_then(|byte| value.get(byte))
        .is_some_and(|b| b & (1u8 << (7 - (offset & 7))) != 0);
    Ok(Reply::Integer(i64::from(bit)))
}

/// BITCOUNT `key [start end [BYTE|BIT]]`: the set bits in the range, as
/// Redis' `bitcountCommand` resolves it; a missing key is 0 before any
/// argument is read.
pub fn bitcount<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let Some(meta) = read(ctx, a[1])? else {
        return Ok(Reply::Integer(0));
    };
    let p = &meta.value;
    let len = p.len() as i64;
    let (start, end, masks) = match a.len() {
        2 => (0, len - 1, (0u8, 0u8)),
        4 | 5 => {
            let (start, end) = (int_arg(a[2])?, int_arg(a[3])?);
            let is_bit = bit_unit(a.get(4))?;
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Integer(0));
            }
            bit_range(start, end, is_bit, len)
        }
        _ => return Err(CmdError::Syntax),
    };
    if start > end {
        return Ok(Reply::Integer(0));
    }
    let (s, e) = (start as usize, end as usize);
    let mut count: u64 = p[s..=e].iter().map(|b| u64::from(b.count_ones())).sum();
    count -= u64::from((p[s] & masks.0).count_ones());
    count -= u64::from((p[e] & masks.1).count_ones());
    Ok(Reply::Integer(count as i64))
}

/// BIT or BYTE (the default) as the unit of a BITCOUNT/BITPOS range.
fn bit_unit(arg: Option<&&[u8]>) -> CmdResult<bool> {
    match arg {
        None => Ok(false),
        Some(u) if is(u, "bit") => Ok(true),
        Some(u) if is(u, "byte") => Ok(false),
        Some(_) => Err(CmdError::Syntax),
    }
}

/// A BITCOUNT/BITPOS range over a string of `len` bytes, as Redis 7.0
/// reads it: `start` and `end` count bytes, or bits with `is_bit`,
/// negative ones from the end, clamped to the string. Returns the first
/// and last byte and, with `is_bit`, the masks of the bits of those two
/// bytes that lie outside the range.
fn bit_range(mut start: i64, mut end: i64, is_bit: bool, len: i64) -> (i64, i64, (u8, u8)) {
    let total = if is_bit { len << 3 } else { len };
    if start < 0 {
        start = total.saturating_add(start);
    }
    if end < 0 {
        end = total.saturating_add(end);
    }
    start = start.max(0);
    end = end.max(0).min(total - 1);
    let mut masks = (0u8, 0u8);
    if is_bit && start <= end {
        masks = (
            !((1u16 << (8 - (start & 7))) - 1) as u8,
            ((1u16 << (7 - (end & 7))) - 1) as u8,
        );
        start >>= 3;
        end >>= 3;
    }
    (start, end, masks)
}

/// BITPOS key bit [start [end [BYTE|BIT]]]: the first bit set to `bit`
/// in the range, as Redis 7.0's `bitposCommand` finds it: a missing key
/// is an endless run of zeros (-1 for a 1, 0 for a 0); without an end,
/// the string is padded with zeros on its right, so a search for a 0 in
/// a string of ones finds the bit after it; with an end, it is not (-1).
pub fn bitpos<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let bit = int_arg(a[2])?;
    if bit != 0 && bit != 1 {
        return Err(CmdError::other("ERR The bit argument must be 1 or 0."));
    }
    let want_one = bit == 1;
    let Some(meta) = read(ctx, a[1])? else {
        return Ok(Reply::Integer(if want_one { -1 } else { 0 }));
    };
    let p = &meta.value;
    let len = p.len() as i64;
    let mut end_given = false;
    let (start, end, masks) = match a.len() {
        3 => (0, len - 1, (0, 0)),
        4..=6 => {
            let start = int_arg(a[3])?;
            let is_bit = bit_unit(a.get(5))?;
            let end = match a.get(4) {
                Some(end) => {
                    end_given = true;
                    int_arg(end)?
                }
                None if is_bit => (len << 3) + 7,
                None => len - 1,
            };
            bit_range(start, end, is_bit, len)
        }
        _ => return Err(CmdError::Syntax),
    };
    if start > end {
        return Ok(Reply::Integer(-1));
    }
    let (start, end) = (start as usize, end as usize);
    // The bits outside the range (the masks' bits) are made the opposite
    // of the one sought, so that they are never found.
    let hide = |byte: u8, mask: u8| if want_one { byte & !mask } else { byte | mask };
    let bytes: Vec<u8> = (start..=end)
        .map(|i| {
            let mut byte = p[i];
            if i == start {
                byte = hide(byte, masks.0);
            }
            if i == end {
                byte = hide(byte, masks.1);
            }
            byte
        })
        .collect();
    let found = bytes.iter().enumerate().find_map(|(i, &byte)| {
        let byte = if want_one { byte } else { !byte };
        (byte != 0).then(|| (i as i64) * 8 + i64::from(byte.leading_zeros()))
    });
    let pos = match found {
        Some(pos) => pos,
        // No 0 in the range: the first bit past it, unless an end bounds it.
        None if !want_one && !end_given => bytes.len() as i64 * 8,
        None => return Ok(Reply::Integer(-1)),
    };
    Ok(Reply::Integer(pos + (start as i64) * 8))
}

/// BITOP `AND|OR|XOR|NOT destkey srckey…`: stores the bitwise operation
/// of the source strings at `destkey`, as Redis' `bitopCommand` computes
/// it: a missing source is the empty string, a shorter one is padded with
/// zero bytes; the result is as long as the longest source, stored without
/// expiry, and an empty result deletes `destkey`. Replies with its length.
pub fn bitop<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    // The operation folding each further source in; NOT has none.
    let op: Option<fn(u8, u8) -> u8> = if is(a[1], "and") {
        Some(|x, y| x & y)
    } else if is(a[1], "or") {
        Some(|x, y| x | y)
    } else if is(a[1], "xor") {
        Some(|x, y| x ^ y)
    } else if is(a[1], "not") {
        None
    } else {
        return Err(CmdError::Syntax);
    };
    if op.is_none() && a.len() != 4 {
        return Err(CmdError::other(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    let mut sources = Vec::with_capacity(a.len() - 3);
    for key in &a[3..] {
        sources.push(read(ctx, key)?.map(|m| m.value).unwrap_or_default());
    }
    let max_len = sources.iter().map(Vec::len).max().unwrap_or(0);
    let dest = a[2];
    let view = ctx.view(dest)?;
    if max_len == 0 {
        if let Some(live) = &view.live {
            ctx.remove_key(dest, live)?;
            ctx.notify(Class::GENERIC, "del", dest);
        }
        return Ok(Reply::Integer(0));
    }
    let mut sources = sources.into_iter();
    let mut out = sources.next().unwrap_or_default();
    out.resize(max_len, 0);
    match op {
        None => out.iter_mut().for_each(|b| *b = !*b),
        Some(op) => {
            for source in sources {
                let padded = source.iter().copied().chain(std::iter::repeat(0));
                out.iter_mut().zip(padded).for_each(|(b, s)| *b = op(*b, s));
            }
        }
    }
    write(ctx, dest, &view, &out, 0)?;
    ctx.notify(Class::STRING, "set", dest);
    Ok(Reply::Integer(max_len as i64))
}

/// An expiry option of SET / GETEX.
enum Expiry {
    Keep,
    Clear,
    At(ExpireAt),
}

/// Parses `EX s | PX ms | EXAT s | PXAT ms` at `a[i]` (`a[i+1]` the number)
/// into an absolute time in ms, relative for `EX`/`PX`; `cmd` names the
/// command in errors.
fn expiry_at(now_ms: u64, unit: &[u8], n: &[u8], cmd: &str) -> CmdResult<ExpireAt> {
    let v = int_arg(n)?;
    let invalid = || CmdError::other(format!("ERR invalid expire time in '{cmd}' command"));
    if v <= 0 {
        return Err(invalid());
    }
    let ms = if is(unit, "ex") || is(unit, "exat") {
        v.checked_mul(1000).ok_or_else(invalid)?
    } else {
        v
    };
    if is(unit, "ex") || is(unit, "px") {
        let at = ms.checked_add(now_ms as i64).ok_or_else(invalid)?;
        Ok(ExpireAt::relative(at as u64))
    } else {
        Ok(ExpireAt::absolute(ms as u64))
    }
}

/// SET's options, parsed as Redis' `parseExtendedStringArgumentsOrReply`:
/// an option conflicts with the others of its group but may repeat itself
/// (the last value wins), and numbers are checked after the whole syntax.
struct SetOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    /// The expiry option and its number, as given.
    expiry: Option<(&'a [u8], &'a [u8])>,
}

impl<'a> SetOptions<'a> {
    fn parse(opts: &[&'a [u8]]) -> CmdResult<SetOptions<'a>> {
        let mut o = SetOptions {
            nx: false,
            xx: false,
            get: false,
            keep_ttl: false,
            expiry: None,
        };
        let mut i = 0;
        while i < opts.len() {
            let opt = opts[i];
            let unit = ["ex", "px", "exat", "pxat"]
                .into_iter()
                .find(|u| is(opt, u));
            let same_unit =
                |e: &Option<(&[u8], &[u8])>| e.is_none_or(|(u, _)| u.eq_ignore_ascii_case(opt));
            if is(opt, "nx") && !o.xx {
                o.nx = true;
            } else if is(opt, "xx") && !o.nx {
                o.xx = true;
            } else if is(opt, "get") {
                o.get = true;
            } else if is(opt, "keepttl") && o.expiry.is_none() {
                o.keep_ttl = true;
            } else if unit.is_some() && !o.keep_ttl && same_unit(&o.expiry) && i + 1 < opts.len() {
                o.expiry = Some((opt, opts[i + 1]));
                i += 1;
            } else {
                return Err(CmdError::Syntax);
            }
            i += 1;
        }
        Ok(o)
    }
}

pub fn set<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (key, value) = (a[1], a[2]);
    let opts = SetOptions::parse(&a[3..])?;
    let (nx, xx, get) = (opts.nx, opts.xx, opts.get);
    let expiry = match opts.expiry {
        Some((unit, n)) => Expiry::At(expiry_at(ctx.now_ms(), unit, n, "set")?),
        None if opts.keep_ttl => Expiry::Keep,
        None => Expiry::Clear,
    };
    let reads_old = nx || xx || get || matches!(expiry, Expiry::Keep);
    let expires_at_once = matches!(expiry, Expiry::At(t) if t.ms <= ctx.expiry_now_ms());
    let view = if reads_old || expires_at_once {
        ctx.view(key)?
    } else {
        ctx.view_for_overwrite(key)?
    };
    let old = match &view.live {
        Some(m) if m.data_type == DataType::String => Some(m.value.clone()),
        Some(_) if get => return Err(CmdError::WrongType),
        _ => None,
    };
    let exists = view.live.is_some();
    let reply_skip = if get {
        Reply::opt_bulk(old.clone())
    } else {
        Reply::Nil
    };
    if (nx && exists) || (xx && !exists) {
        return Ok(reply_skip);
    }
    let expire = match expiry {
        Expiry::Clear => ExpireAt::absolute(0),
        Expiry::At(t) => t,
        Expiry::Keep => ExpireAt::absolute(view.live.as_ref().map_or(0, |m| m.expire_ms)),
    };
    if expire.ms != 0 && expire.ms <= ctx.expiry_now_ms() {
        // Already expired: removed at once. Redis 7.0 stores it expired
        // and announces it stored, then `expired` when it next meets the
        // key; here all three are announced now.
        if let Some(live) = &view.live {
            ctx.remove_key(key, live)?;
        } else {
            ctx.notify(Class::NEW, "new", key);
        }
        ctx.notify(Class::STRING, "set", key);
        ctx.notify(Class::GENERIC, "expire", key);
        ctx.notify(Class::EXPIRED, "expired", key);
        return Ok(if get {
            Reply::opt_bulk(old)
        } else {
            Reply::ok()
        });
    }
    write(ctx, key, &view, value, expire)?;
    ctx.notify(Class::STRING, "set", key);
    if matches!(expiry, Expiry::At(_)) {
        ctx.notify(Class::GENERIC, "expire", key);
    }
    Ok(if get {
        Reply::opt_bulk(old)
    } else {
        Reply::ok()
    })
}

pub fn setnx<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let view = ctx.view(a[1])?;
    if view.live.is_some() {
        return Ok(Reply::Integer(0));
    }
    write(ctx, a[1], &view, a[2], 0)?;
    ctx.notify(Class::STRING, "set", a[1]);
    Ok(Reply::Integer(1))
}

fn setex_with<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    unit: &str,
    cmd: &str,
) -> CmdResult<Reply> {
    let at = expiry_at(ctx.now_ms(), unit.as_bytes(), a[2], cmd)?;
    let view = ctx.view_for_overwrite(a[1])?;
    write(ctx, a[1], &view, a[3], at)?;
    ctx.notify(Class::STRING, "set", a[1]);
    ctx.notify(Class::GENERIC, "expire", a[1]);
    Ok(Reply::ok())
}

variants! {
    pub fn setex(ctx, a) => setex_with(ctx, a, "ex", "setex");
    pub fn psetex(ctx, a) => setex_with(ctx, a, "px", "psetex");
}

pub fn mget<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut out = Vec::with_capacity(a.len() - 1);
    for key in &a[1..] {
        let value = match ctx.live(key)? {
            Some(m) if m.data_type == DataType::String => Some(m.value),
            _ => None,
        };
        out.push(Reply::opt_bulk(value));
    }
    Ok(Reply::Array(out))
}

fn mset_pairs<'a>(a: &[&'a [u8]], cmd: &str) -> CmdResult<Vec<(&'a [u8], &'a [u8])>> {
    if a.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity(cmd.into()));
    }
    // The last write of a key wins, as in Redis.
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
    for p in a[1..].chunks(2) {
        pairs.retain(|(k, _)| *k != p[0]);
        pairs.push((p[0], p[1]));
    }
    Ok(pairs)
}

pub fn mset<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let pairs = mset_pairs(a, "mset")?;
    write_pairs(ctx, a, &pairs, Ctx::view_for_overwrite)?;
    Ok(Reply::ok())
}

pub fn msetnx<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let pairs = mset_pairs(a, "msetnx")?;
    for (k, _) in &pairs {
        if ctx.live(k)?.is_some() {
            return Ok(Reply::Integer(0));
        }
    }
    write_pairs(ctx, a, &pairs, Ctx::view)?;
    Ok(Reply::Integer(1))
}

/// Writes MSET's and MSETNX's `pairs` (each key once, with its last
/// value: [`mset_pairs`]) over what `view_of` shows of each key, and
/// announces their events as Redis does: `set` for every pair of `a`, a
/// key named twice included, and `new` the first time for a key that was
/// absent.
fn write_pairs<'e, C: Codec, S: KvStore>(
    ctx: &mut Ctx<'e, C, S>,
    a: &[&[u8]],
    pairs: &[(&[u8], &[u8])],
    view_of: impl Fn(&Ctx<'e, C, S>, &[u8]) -> CmdResult<KeyView>,
) -> CmdResult<()> {
    let mut views = Vec::with_capacity(pairs.len());
    for (k, _) in pairs {
        views.push(view_of(ctx, k)?);
    }
    let mut announced: Vec<&[u8]> = Vec::new();
    for p in a[1..].chunks(2) {
        let key = p[0];
        if !announced.contains(&key) {
            announced.push(key);
            let absent = pairs
                .iter()
                .zip(&views)
                .any(|((k, _), view)| *k == key && view.live.is_none());
            if absent {
                ctx.notify(Class::NEW, "new", key);
            }
        }
        ctx.notify(Class::STRING, "set", key);
    }
    ctx.without_events(|ctx| {
        pairs
            .iter()
            .zip(&views)
            .try_for_each(|((k, v), view)| write(ctx, k, view, v, 0))
    })
}

pub fn getset<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let view = ctx.view(a[1])?;
    let old = match &view.live {
        Some(m) if m.data_type == DataType::String => Some(m.value.clone()),
        Some(_) => return Err(CmdError::WrongType),
        None => None,
    };
    write(ctx, a[1], &view, a[2], 0)?;
    ctx.notify(Class::STRING, "set", a[1]);
    Ok(Reply::opt_bulk(old))
}

pub fn getdel<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match read(ctx, a[1])? {
        Some(m) => {
            ctx.remove_key(a[1], &m)?;
            ctx.notify(Class::GENERIC, "del", a[1]);
            Ok(Reply::bulk(m.value))
        }
        None => Ok(Reply::Nil),
    }
}

/// `CAS key old new [EX s|PX ms|EXAT s|PXAT ms]`, Kvrocks' compare and
/// swap (`String::CAS`): the string takes `new`, with the expiry given or
/// none, where it holds `old` (1); 0 where it holds another value, -1
/// where there is no such key. The options are read first, as Kvrocks
/// reads them ([`kvrocks_args::expiry`]).
pub fn cas<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let at = kvrocks_args::expiry(&a[4..], ctx.now_ms())?;
    let view = ctx.view(a[1])?;
    match &view.live {
        None => return Ok(Reply::Integer(-1)),
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        Some(m) if m.value != a[2] => return Ok(Reply::Integer(0)),
        Some(_) => {}
    }
    write(ctx, a[1], &view, a[3], at)?;
    // Events as SET's (Kvrocks publishes none).
    ctx.notify(Class::STRING, "set", a[1]);
    if at.ms != 0 {
        ctx.notify(Class::GENERIC, "expire", a[1]);
    }
    Ok(Reply::Integer(1))
}

/// `CAD key value`, Kvrocks' compare and delete (`String::CAD`): the key
/// is deleted where its string is `value` (1); 0 where it holds another
/// value, -1 where there is no such key.
pub fn cad<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match read(ctx, a[1])? {
        None => Ok(Reply::Integer(-1)),
        Some(m) if m.value != a[2] => Ok(Reply::Integer(0)),
        Some(m) => {
            ctx.remove_key(a[1], &m)?;
            ctx.notify(Class::GENERIC, "del", a[1]);
            Ok(Reply::Integer(1))
        }
    }
}

pub fn getex<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    // Redis parses the options, then answers nil for a missing key and
    // WRONGTYPE for another type, and only then reads the time given. As
    // in SET, an option conflicts with the others but may repeat itself
    // (`EX 1 EX 2`, `PERSIST PERSIST`): the last value wins.
    let mut persist = false;
    let mut time: Option<(&[u8], &[u8])> = None;
    let mut i = 2;
    while i < a.len() {
        let opt = a[i];
        let same_unit = time.is_none_or(|(unit, _)| unit.eq_ignore_ascii_case(opt));
        if is(opt, "persist") && time.is_none() {
            persist = true;
            i += 1;
        } else if ["ex", "px", "exat", "pxat"].iter().any(|o| is(opt, o))
            && !persist
            && same_unit
            && i + 1 < a.len()
        {
            time = Some((opt, a[i + 1]));
            i += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let Some(mut meta) = read(ctx, a[1])? else {
        return Ok(Reply::Nil);
    };
    let expiry = match time {
        Some((opt, value)) => Expiry::At(expiry_at(ctx.now_ms(), opt, value, "getex")?),
        None if persist => Expiry::Clear,
        None => Expiry::Keep,
    };
    let value = meta.value.clone();
    match expiry {
        Expiry::Keep => {}
        Expiry::Clear => {
            if meta.expire_ms != 0 {
                meta.expire_ms = 0;
                ctx.put_meta(a[1], &meta)?;
                ctx.notify(Class::GENERIC, "persist", a[1]);
            }
        }
        Expiry::At(t) if t.ms <= ctx.expiry_now_ms() => {
            ctx.remove_key(a[1], &meta)?;
            ctx.notify(Class::GENERIC, "del", a[1]);
        }
        Expiry::At(t) => {
            ctx.set_expire_at(&mut meta, t)?;
            ctx.put_meta(a[1], &meta)?;
            ctx.notify(Class::GENERIC, "expire", a[1]);
        }
    }
    Ok(Reply::bulk(value))
}

/// Redis' `checkStringLength`: a string a command makes is at most
/// `proto-max-bulk-len` bytes.
fn check_size<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, len: u64) -> CmdResult<()> {
    if len > ctx.engine().max_bulk_len() {
        return Err(CmdError::other(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        ));
    }
    Ok(())
}

pub fn append<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let view = ctx.view(a[1])?;
    match view.live.clone() {
        Some(m) if m.data_type != DataType::String => Err(CmdError::WrongType),
        Some(m) => {
            check_size(ctx, m.value.len() as u64 + a[2].len() as u64)?;
            let mut value = m.value.clone();
            value.extend_from_slice(a[2]);
            let len = value.len();
            rewrite(ctx, a[1], m, value)?;
            ctx.notify(Class::STRING, "append", a[1]);
            Ok(Reply::Integer(len as i64))
        }
        None => {
            write(ctx, a[1], &view, a[2], 0)?;
            ctx.notify(Class::STRING, "append", a[1]);
            Ok(Reply::Integer(a[2].len() as i64))
        }
    }
}

pub fn strlen<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(
        read(ctx, a[1])?.map_or(0, |m| m.value.len() as i64),
    ))
}

/// Adds `by` to the integer at `key`.
fn incr_by<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, key: &[u8], by: i64) -> CmdResult<Reply> {
    let view = ctx.view(key)?;
    let current = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        Some(m) => parse_i64(&m.value).ok_or(CmdError::NotInteger)?,
        None => 0,
    };
    let next = current
        .checked_add(by)
        .ok_or_else(|| CmdError::other("ERR increment or decrement would overflow"))?;
    let value = itoa::Buffer::new().format(next).as_bytes().to_vec();
    match view.live.clone() {
        Some(m) => rewrite(ctx, key, m, value)?,
        None => write(ctx, key, &view, &value, 0)?,
    }
    ctx.notify(Class::STRING, "incrby", key);
    Ok(Reply::Integer(next))
}

variants! {
    pub fn incr(ctx, a) => incr_by(ctx, a[1], 1);
    pub fn decr(ctx, a) => incr_by(ctx, a[1], -1);
}

pub fn incrby<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let by = int_arg(a[2])?;
    incr_by(ctx, a[1], by)
}

pub fn decrby<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let by = int_arg(a[2])?;
    let by = by
        .checked_neg()
        .ok_or_else(|| CmdError::other("ERR decrement would overflow"))?;
    incr_by(ctx, a[1], by)
}

pub fn incrbyfloat<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let view = ctx.view(a[1])?;
    let current = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        Some(m) => LongDouble::parse(&m.value).ok_or(CmdError::NotFloat)?,
        None => LongDouble::ZERO,
    };
    let by = LongDouble::parse(a[2]).ok_or(CmdError::NotFloat)?;
    let next = current
        .plus(by)
        .map_err(|_| CmdError::other("ERR increment would produce NaN or Infinity"))?;
    let text = next.to_redis_string();
    match view.live.clone() {
        Some(m) => rewrite(ctx, a[1], m, text.clone().into_bytes())?,
        None => write(ctx, a[1], &view, text.as_bytes(), 0)?,
    }
    ctx.notify(Class::STRING, "incrbyfloat", a[1]);
    Ok(Reply::bulk(text))
}

pub fn getrange<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (mut start, mut end) = (int_arg(a[2])?, int_arg(a[3])?);
    let value = read(ctx, a[1])?.map(|m| m.value).unwrap_or_default();
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        return Ok(Reply::bulk(Vec::new()));
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if len == 0 || start > end {
        return Ok(Reply::bulk(Vec::new()));
    }
    Ok(Reply::bulk(value[start as usize..=end as usize].to_vec()))
}

pub fn setrange<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let offset = int_arg(a[2])?;
    if offset < 0 {
        return Err(CmdError::other("ERR offset is out of range"));
    }
    let piece = a[3];
    let view = ctx.view(a[1])?;
    let live = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        other => other.clone(),
    };
    if piece.is_empty() {
        return Ok(Reply::Integer(live.map_or(0, |m| m.value.len() as i64)));
    }
    check_size(ctx, offset as u64 + piece.len() as u64)?;
    let mut value = live.as_ref().map(|m| m.value.clone()).unwrap_or_default();
    let end = offset as usize + piece.len();
    if value.len() < end {
        value.resize(end, 0);
    }
    value[offset as usize..end].copy_from_slice(piece);
    let len = value.len() as i64;
    match live {
        Some(m) => rewrite(ctx, a[1], m, value)?,
        None => write(ctx, a[1], &view, &value, 0)?,
    }
    ctx.notify(Class::STRING, "setrange", a[1]);
    Ok(Reply::Integer(len))
}

#[cfg(test)]
mod tests {
    use crate::cmd::testkit::TestEngine;

    /// GETEX's options as Redis 7.0.15 answers them (checked against
    /// redis-server): one may repeat itself, the last value winning and
    /// read only then; two different ones are a syntax error.
    #[test]
    fn getex_options_may_repeat_themselves() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === getex options repeated
                > SET k v
                OK
                > GETEX k EX 100 EX 200
                "v"
                > TTL k
                (integer) 200
                > GETEX k PX 100000 PX 300000
                "v"
                > PTTL k
                (integer) 300000
                > GETEX k PXAT 4102444800000 PXAT 4102444801000
                "v"
                > PTTL k
                (integer) 2402444801000
                > GETEX k EXAT 4102444800 EXAT 4102444802
                "v"
                > TTL k
                (integer) 2402444802
                > GETEX k PERSIST PERSIST
                "v"
                > TTL k
                (integer) -1
                > GETEX k EX abc EX 100
                "v"
                > TTL k
                (integer) 100
                > GETEX k EX 100 EX abc
                (error) ERR value is not an integer or out of range
                > GETEX k EX 100 PX 200
                (error) ERR syntax error
                > GETEX k PERSIST EX 100
                (error) ERR syntax error
                > GETEX k EX 100 PERSIST
                (error) ERR syntax error
                > GETEX k EX 100 EX
                (error) ERR syntax error
                > GETEX missing EX 1 EX 2
                (nil)
            "#,
        );
    }
}
