//! Keyspace commands on named keys: DEL, UNLINK, EXISTS, TYPE, the EXPIRE
//! family, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, RENAME, RENAMENX,
//! COPY.

use crate::store::KvStore;
use redcodec_codec::Codec;

use crate::cmd::args::is;
use crate::cmd::variants::variants;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::{Ctx, ExpireAt, KeyView};
use crate::number::int_arg;
use crate::reply::Reply;
use crate::value::{read_value, write_value};

pub fn del<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut removed = 0;
    for &key in &a[1..] {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(meta) = ctx.live(key)? {
            ctx.remove_key(key, &meta)?;
            ctx.notify(Class::GENERIC, "del", key);
            removed += 1;
        }
    }
    Ok(Reply::Integer(removed))
}

pub fn exists<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let mut n = 0;
    for key in &a[1..] {
        if ctx.live(key)?.is_some() {
            n += 1;
        }
    }
    Ok(Reply::Integer(n))
}

pub fn type_of<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let name = ctx.live(a[1])?.map_or("none", |m| m.data_type.redis_name());
    Ok(Reply::Status(name.into()))
}

/// The conditions of EXPIRE's NX / XX / GT / LT options.
#[derive(Default)]
struct Condition {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Condition {
    fn parse(opts: &[&[u8]]) -> CmdResult<Condition> {
        let mut c = Condition::default();
        for opt in opts {
            match () {
                () if is(opt, "nx") => c.nx = true,
                () if is(opt, "xx") => c.xx = true,
                () if is(opt, "gt") => c.gt = true,
                () if is(opt, "lt") => c.lt = true,
                () => {
                    return Err(CmdError::other(format!(
                        "ERR Unsupported option {}",
                        String::from_utf8_lossy(opt)
                    )))
                }
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(CmdError::other(
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            ));
        }
        if c.gt && c.lt {
            return Err(CmdError::other(
                "ERR GT and LT options at the same time are not compatible",
            ));
        }
        Ok(c)
    }

    /// Whether a key whose current expiry is `current` (0: none) may get `new`.
    fn allows(&self, current: u64, new: u64) -> bool {
        let persistent = current == 0;
        !((self.nx && !persistent)
            || (self.xx && persistent)
            || (self.gt && (persistent || new <= current))
            || (self.lt && !persistent && new >= current))
    }
}

/// The EXPIRE family: `unit_ms` is 1000 for seconds, `relative` adds now.
fn expire_generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    unit_ms: i64,
    relative: bool,
) -> CmdResult<Reply> {
    let n = int_arg(a[2])?;
    let cond = Condition::parse(&a[3..])?;
    let invalid = || {
        CmdError::other(format!(
            "ERR invalid expire time in '{}' command",
            String::from_utf8_lossy(a[0]).to_ascii_lowercase()
        ))
    };
    let mut at = n.checked_mul(unit_ms).ok_or_else(invalid)?;
    let given = if relative {
        ExpireAt::relative
    } else {
        ExpireAt::absolute
    };
    if relative {
        at = at.checked_add(ctx.now_ms() as i64).ok_or_else(invalid)?;
    }
    let Some(mut meta) = ctx.live(a[1])? else {
        return Ok(Reply::Integer(0));
    };
    let at = at.max(0) as u64;
    if !cond.allows(meta.expire_ms, at) {
        return Ok(Reply::Integer(0));
    }
    if at <= ctx.expiry_now_ms() {
        ctx.remove_key(a[1], &meta)?;
        ctx.notify(Class::GENERIC, "del", a[1]);
    } else {
        ctx.set_expire_at(&mut meta, given(at))?;
        ctx.put_meta(a[1], &meta)?;
        ctx.notify(Class::GENERIC, "expire", a[1]);
    }
    Ok(Reply::Integer(1))
}

variants! {
    pub fn expire(ctx, a) => expire_generic(ctx, a, 1000, true);
    pub fn pexpire(ctx, a) => expire_generic(ctx, a, 1, true);
    pub fn expireat(ctx, a) => expire_generic(ctx, a, 1000, false);
    pub fn pexpireat(ctx, a) => expire_generic(ctx, a, 1, false);
}

/// Remaining time to live in ms: -2 missing, -1 no expiry; 0 for a key
/// alive past its expiry (a script's, or a master's command on a replica,
/// judges expiry at a pinned time).
fn remaining_ms<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<i64> {
    Ok(match ctx.live(key)? {
        None => -2,
        Some(m) if m.expire_ms == 0 => -1,
        Some(m) => m.expire_ms.saturating_sub(ctx.now_ms()) as i64,
    })
}

/// Milliseconds to seconds, rounded as Redis' `ttlGenericCommand` rounds;
/// the negative answers (-2 missing, -1 no expiry) stay as they are.
fn ms_to_seconds(ms: i64) -> i64 {
    if ms < 0 {
        ms
    } else {
        // Saturating: a stored expiry near the end of time does not overflow.
        ms.saturating_add(500) / 1000
    }
}

pub fn ttl<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(ms_to_seconds(remaining_ms(ctx, a[1])?)))
}

pub fn pttl<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(remaining_ms(ctx, a[1])?))
}

/// The absolute expiry in unix ms, as the format stores it (so at its
/// declared TTL resolution): -2 missing, -1 no expiry.
fn expiry_ms<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<i64> {
    Ok(match ctx.live(key)? {
        None => -2,
        Some(m) if m.expire_ms == 0 => -1,
        Some(m) => i64::try_from(m.expire_ms).unwrap_or(i64::MAX),
    })
}

/// EXPIRETIME: the absolute expiry in seconds, rounded as Redis'
/// `ttlGenericCommand` rounds.
pub fn expiretime<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(ms_to_seconds(expiry_ms(ctx, a[1])?)))
}

pub fn pexpiretime<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(expiry_ms(ctx, a[1])?))
}

pub fn persist<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match ctx.live(a[1])? {
        Some(mut meta) if meta.expire_ms != 0 => {
            meta.expire_ms = 0;
            ctx.put_meta(a[1], &meta)?;
            ctx.notify(Class::GENERIC, "persist", a[1]);
            Ok(Reply::Integer(1))
        }
        _ => Ok(Reply::Integer(0)),
    }
}

/// Moves the value of `a[1]` to `a[2]`; with `only_new` the destination
/// must not exist. Returns whether it moved.
fn rename_generic<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    only_new: bool,
) -> CmdResult<bool> {
    let (src, dst) = (a[1], a[2]);
    let Some(meta) = ctx.live(src)? else {
        return Err(CmdError::NoSuchKey);
    };
    if src == dst {
        return Ok(!only_new);
    }
    let view = ctx.view(dst)?;
    if only_new && view.live.is_some() {
        return Ok(false);
    }
    let value = read_value(ctx, src, &meta)?;
    ctx.remove_key(src, &meta)?;
    replaced_as_new(ctx, dst, &view);
    write_value(ctx, dst, &view, &value, meta.expire_ms)?;
    ctx.notify(Class::GENERIC, "rename_from", src);
    ctx.notify(Class::GENERIC, "rename_to", dst);
    Ok(true)
}

/// Redis deletes a destination it replaces, then adds the key anew
/// (`dbDelete`, `dbAdd`): `new` is announced for a key that existed too
/// (for one that did not, the value written announces it).
fn replaced_as_new<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, dst: &[u8], view: &KeyView) {
    if view.live.is_some() {
        ctx.notify(Class::NEW, "new", dst);
    }
}

pub fn rename<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    rename_generic(ctx, a, false)?;
    Ok(Reply::ok())
}

pub fn renamenx<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Integer(i64::from(rename_generic(ctx, a, true)?)))
}

/// COPY `source destination [DB db] [REPLACE]`: copies the value and its
/// expiry; 0 when the source is missing or the destination exists without
/// REPLACE. The engine serves one database: `DB 0` is the current one, any
/// other index is out of range.
pub fn copy<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (src, dst) = (a[1], a[2]);
    let mut replace = false;
    let mut i = 3;
    while i < a.len() {
        if is(a[i], "replace") {
            replace = true;
        } else if is(a[i], "db") && i + 1 < a.len() {
            let db = int_arg(a[i + 1])?;
            if i32::try_from(db).is_err() {
                return Err(CmdError::other(format!(
                    "ERR value is out of range, value must between {} and {}",
                    i32::MIN,
                    i32::MAX
                )));
            }
            if db != 0 {
                return Err(CmdError::other("ERR DB index is out of range"));
            }
            i += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if src == dst {
        return Err(CmdError::other(
            "ERR source and destination objects are the same",
        ));
    }
    let Some(meta) = ctx.live(src)? else {
        return Ok(Reply::Integer(0));
    };
    let view = ctx.view(dst)?;
    if view.live.is_some() && !replace {
        return Ok(Reply::Integer(0));
    }
    let value = read_value(ctx, src, &meta)?;
    replaced_as_new(ctx, dst, &view);
    write_value(ctx, dst, &view, &value, meta.expire_ms)?;
    ctx.notify(Class::GENERIC, "copy_to", dst);
    Ok(Reply::Integer(1))
}

#[cfg(test)]
mod expiretime_tests {
    use crate::cmd::testkit::TestEngine;

    /// Found by the `store_reads` fuzz target: an expiry near the end of
    /// time overflowed EXPIRETIME's rounding.
    #[test]
    fn expiretime_of_the_last_millisecond_does_not_overflow() {
        let t = TestEngine::in_memory();
        t.script(
            r#"
                === expiretime of the last millisecond does not overflow
                > SET k v
                OK
                > PEXPIREAT k 9223372036854775807
                (integer) 1
                > PEXPIRETIME k
                (integer) 9223372036854775807
                > EXPIRETIME k
                (integer) 9223372036854775
            "#,
        );
    }
}
