//! Commands over the whole keyspace: KEYS, SCAN, DBSIZE, RANDOMKEY.

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType};

use super::scan_args::{glob_match, parse_cursor, scan_reply, ScanOptions};
use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::reply::Reply;
use crate::types::random::Rng;
use crate::walk::KeyWalk;

pub fn keys<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    // Redis' KEYS, DBSIZE and RANDOMKEY skip expired keys without
    // deleting them: none is announced `expired` (SCAN's are).
    ctx.without_events(|ctx| {
        let mut out = Vec::new();
        let mut walk = KeyWalk::new(ctx, None);
        while let Some((key, _)) = walk.next()? {
            if glob_match(a[1], &key) {
                out.push(key);
            }
        }
        Ok(Reply::bulks(out))
    })
}

/// `DBSIZE`: the live keys, counted now. `DBSIZE SCAN` is Kvrocks' (it
/// starts the background count that its later DBSIZEs report): here every
/// DBSIZE counts, so it answers OK and has nothing to start. Any other
/// argument gets Redis' arity error.
pub fn dbsize<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match a {
        [_] => {}
        [_, word] if is(word, "scan") => return Ok(Reply::ok()),
        _ => return Err(CmdError::WrongArity("dbsize".into())),
    }
    ctx.without_events(|ctx| {
        let mut n = 0;
        let mut walk = KeyWalk::new(ctx, None);
        while walk.next()?.is_some() {
            n += 1;
        }
        Ok(Reply::Integer(n))
    })
}

/// RANDOMKEY: one live key chosen uniformly (one pass, keeping the i-th
/// key with probability 1/i), or nil in an empty keyspace.
pub fn randomkey<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, _a: &[&[u8]]) -> CmdResult<Reply> {
    let mut rng = Rng::new(ctx.now_ms());
    ctx.without_events(|ctx| {
        let mut chosen = None;
        let mut seen = 0u64;
        let mut walk = KeyWalk::new(ctx, None);
        while let Some((key, _)) = walk.next()? {
            seen += 1;
            if rng.below(seen) == 0 {
                chosen = Some(key);
            }
        }
        Ok(Reply::opt_bulk(chosen))
    })
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. Cursors are
/// numbers the engine maps to the last key returned; `0` starts and ends.
pub fn scan<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let cursor = parse_cursor(a[1])?;
    let opts = ScanOptions::parse(&a[2..], true)?;
    let type_filter = opts.type_name.map(DataType::from_redis_name);
    let after = if cursor == 0 {
        None
    } else {
        match ctx.engine().cursors.lock().position(cursor) {
            Some(p) => Some(p),
            None => return Ok(keys_reply(0, Vec::new())),
        }
    };
    let mut walk = KeyWalk::new(ctx, after.as_deref());
    let mut visited = 0u64;
    let mut out = Vec::new();
    let mut last = None;
    while visited < opts.count {
        let Some((key, meta)) = walk.next()? else {
            return Ok(keys_reply(0, out));
        };
        visited += 1;
        let type_ok = match type_filter {
            None => true,
            Some(t) => meta.as_ref().is_some_and(|m| Some(m.data_type) == t),
        };
        if type_ok && opts.matches(&key) {
            out.push(key.clone());
        }
        last = Some(key);
    }
    // Report completion now if nothing is left, as Redis does.
    if walk.next()?.is_none() {
        return Ok(keys_reply(0, out));
    }
    let next = ctx.engine().cursors.lock().issue(last.unwrap_or_default());
    Ok(keys_reply(next, out))
}

fn keys_reply(cursor: u64, keys: Vec<Vec<u8>>) -> Reply {
    scan_reply(cursor, keys.into_iter().map(Reply::Bulk).collect())
}
