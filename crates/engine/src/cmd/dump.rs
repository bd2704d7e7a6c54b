//! DUMP and RESTORE: a key's value in Redis 7.0's DUMP payload format
//! (`redcodec-rdb`), so tools that copy keys between Redis-compatible
//! servers with DUMP/RESTORE work with any format.

use crate::store::KvStore;
use redcodec_codec::Codec;
use redcodec_rdb as rdb;

use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::{Ctx, ExpireAt};
use crate::number::int_arg;
use crate::reply::Reply;
use crate::value::{read_value, write_value, Value};

fn to_payload_value(value: Value) -> rdb::Value {
    match value {
        Value::String(s) => rdb::Value::String(s),
        Value::Hash(pairs) => rdb::Value::Hash(pairs),
        Value::List(items) => rdb::Value::List(items),
        Value::Set(members) => rdb::Value::Set(members),
        Value::ZSet(members) => rdb::Value::ZSet(members),
    }
}

fn from_payload_value(value: rdb::Value) -> Value {
    match value {
        rdb::Value::String(s) => Value::String(s),
        rdb::Value::Hash(pairs) => Value::Hash(pairs),
        rdb::Value::List(items) => Value::List(items),
        rdb::Value::Set(members) => Value::Set(members),
        rdb::Value::ZSet(members) => Value::ZSet(members),
    }
}

/// DUMP `key`: the payload of its value (no expiry: RESTORE takes it
/// apart), nil when the key is missing.
pub fn dump<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let Some(meta) = ctx.live(a[1])? else {
        return Ok(Reply::Nil);
    };
    let value = to_payload_value(read_value(ctx, a[1], &meta)?);
    Ok(Reply::Bulk(rdb::encode_payload(
        &value,
        rdb::EncodeOptions::default(),
    )))
}

/// RESTORE's options after the payload.
#[derive(Default)]
struct RestoreOptions {
    replace: bool,
    absttl: bool,
}

impl RestoreOptions {
    /// Parses the options as Redis does, in order: IDLETIME and FREQ take a
    /// value each and exclude one another; their values are checked, then
    /// ignored (the engine keeps no LRU or LFU data).
    fn parse(opts: &[&[u8]]) -> CmdResult<RestoreOptions> {
        let mut o = RestoreOptions::default();
        let (mut idle, mut freq) = (false, false);
        let mut i = 0;
        while i < opts.len() {
            let more = i + 1 < opts.len();
            if is(opts[i], "replace") {
                o.replace = true;
            } else if is(opts[i], "absttl") {
                o.absttl = true;
            } else if is(opts[i], "idletime") && more && !freq {
                if int_arg(opts[i + 1])? < 0 {
                    return Err(CmdError::other("ERR Invalid IDLETIME value, must be >= 0"));
                }
                idle = true;
                i += 1;
            } else if is(opts[i], "freq") && more && !idle {
                if !(0..=255).contains(&int_arg(opts[i + 1])?) {
                    return Err(CmdError::other(
                        "ERR Invalid FREQ value, must be >= 0 and <= 255",
                    ));
                }
                freq = true;
                i += 1;
            } else {
                return Err(CmdError::Syntax);
            }
            i += 1;
        }
        Ok(o)
    }
}

/// RESTORE `key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]`,
/// checking in Redis' order: options, an existing key without REPLACE,
/// the TTL, the payload's footer, then its object. A TTL already past
/// creates nothing (REPLACE still removes the old key) and replies OK.
pub fn restore<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let key = a[1];
    let opts = RestoreOptions::parse(&a[4..])?;
    let view = ctx.view(key)?;
    if view.live.is_some() && !opts.replace {
        return Err(CmdError::other("BUSYKEY Target key name already exists."));
    }
    let ttl = int_arg(a[2])?;
    if ttl < 0 {
        return Err(CmdError::other("ERR Invalid TTL value, must be >= 0"));
    }
    let value = rdb::decode_payload(a[3]).map_err(|e| CmdError::other(e.reply_text()))?;
    let expire = match ttl as u64 {
        0 => ExpireAt::absolute(0),
        ms if opts.absttl => ExpireAt::absolute(ms),
        ms => ExpireAt::relative(ctx.now_ms().saturating_add(ms)),
    };
    if expire.ms != 0 && expire.ms <= ctx.expiry_now_ms() {
        if let Some(live) = &view.live {
            ctx.remove_key(key, live)?;
            ctx.notify(Class::GENERIC, "del", key);
        }
        return Ok(Reply::ok());
    }
    // Redis deletes a key it replaces and adds it anew.
    if view.live.is_some() {
        ctx.notify(Class::NEW, "new", key);
    }
    write_value(ctx, key, &view, &from_payload_value(value), expire)?;
    ctx.notify(Class::GENERIC, "restore", key);
    Ok(Reply::ok())
}

#[cfg(test)]
#[path = "dump_tests.rs"]
mod tests;
