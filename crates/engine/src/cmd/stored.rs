//! The destination of the commands that store a computed collection
//! (SINTERSTORE and the other set stores, ZRANGESTORE, ZUNIONSTORE and the
//! other sorted-set stores).

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::error::CmdResult;
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::reply::Reply;

/// Replaces `dest` with a collection of `data_type` that `write` fills, or
/// removes `dest` when the result is `empty`; replies with the size stored.
/// Announces `event` (`sinterstore`…) on what it stored, `del` on a
/// destination it removed.
pub(super) fn store_collection<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    dest: &[u8],
    data_type: DataType,
    event: &'static str,
    empty: bool,
    write: impl FnOnce(&mut Ctx<'_, C, S>, &mut Meta) -> CmdResult<()>,
) -> CmdResult<Reply> {
    let view = ctx.view(dest)?;
    if empty {
        if let Some(live) = &view.live {
            ctx.remove_key(dest, live)?;
            ctx.notify(Class::GENERIC, "del", dest);
        }
        return Ok(Reply::Integer(0));
    }
    let mut meta = ctx.create(dest, data_type, &view)?;
    write(ctx, &mut meta)?;
    ctx.save(dest, &meta)?;
    let class = match data_type {
        DataType::Set => Class::SET,
        _ => Class::ZSET,
    };
    ctx.notify(class, event, dest);
    Ok(Reply::Integer(i64::try_from(meta.size).unwrap_or(i64::MAX)))
}
