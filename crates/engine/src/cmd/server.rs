//! Connection and server commands: PING, ECHO, FLUSHDB, FLUSHALL.

use crate::store::KvStore;
use redcodec_codec::{Codec, KeyRange};

use crate::cmd::args::is;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::reply::Reply;

pub fn ping<C: Codec, S: KvStore>(_ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match a.len() {
        1 => Ok(Reply::Status("PONG".into())),
        2 => Ok(Reply::bulk(a[1].to_vec())),
        _ => Err(CmdError::WrongArity("ping".into())),
    }
}

pub fn echo<C: Codec, S: KvStore>(_ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::bulk(a[1].to_vec()))
}

/// FLUSHDB [ASYNC|SYNC]: removes every record of the store's keyspace
/// (element records too, so no garbage outlives the flush).
pub fn flush<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let ranges = ctx.codec().flush_ranges();
    delete_ranges(ctx, a, ranges)
}

/// FLUSHALL [ASYNC|SYNC]: as FLUSHDB, over every keyspace the codec's
/// places reach ([`Codec::flush_all_ranges`]).
pub fn flush_all<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let ranges = ctx.codec().flush_all_ranges();
    delete_ranges(ctx, a, ranges)
}

/// The flushes' option check, then `ranges` deleted. A range that holds
/// no record is left alone: a range deletion there would change nothing
/// but would stay in the store (a flushed memtable keeps it in a file of
/// its own) until a compaction reaches it, and every read of that place
/// would consult it until then, as a replica's reads did in every empty
/// type's instance after the flush that starts its full copy. Telling a
/// range empty costs a bounded look ([`KvStore::may_hold`]): one that
/// holds many deleted records first is deleted as one that holds some.
fn delete_ranges<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    a: &[&[u8]],
    ranges: Vec<KeyRange>,
) -> CmdResult<Reply> {
    match a.len() {
        1 => {}
        2 if is(a[1], "async") || is(a[1], "sync") => {}
        _ => return Err(CmdError::Syntax),
    }
    for range in ranges {
        if ctx.may_hold(&range)? {
            ctx.batch_mut().delete_range(&range);
        }
    }
    // The expired keys announced are gone with the rest.
    ctx.engine().announced_expiries.lock().clear();
    Ok(Reply::ok())
}
