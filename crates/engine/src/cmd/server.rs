//! Connection and server commands: PING, ECHO, FLUSHDB, FLUSHALL.

use crate::store::KvStore;
use redcodec_codec::Codec;

use crate::cmd::args::is;
use crate::command::{Keys, Table};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::reply::Reply;

pub fn register<C: Codec, S: KvStore>(t: &mut Table<C, S>) {
    t.add("ping", -1, Keys::None, ping);
    t.add("echo", 2, Keys::None, echo);
    t.add("flushdb", -1, Keys::Everything, flush);
    t.add("flushall", -1, Keys::Everything, flush);
}

fn ping<C: Codec, S: KvStore>(_ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match a.len() {
        1 => Ok(Reply::Status("PONG".into())),
        2 => Ok(Reply::bulk(a[1].to_vec())),
        _ => Err(CmdError::WrongArity("ping".into())),
    }
}

fn echo<C: Codec, S: KvStore>(_ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::bulk(a[1].to_vec()))
}

/// FLUSHDB / FLUSHALL [ASYNC|SYNC]: removes every record of the store's
/// keyspace (element records too, so no garbage outlives the flush).
fn flush<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    match a.len() {
        1 => {}
        2 if is(a[1], "async") || is(a[1], "sync") => {}
        _ => return Err(CmdError::Syntax),
    }
    for range in ctx.codec().flush_ranges() {
        ctx.batch_mut().delete_range(&range);
    }
    Ok(Reply::ok())
}
