//! HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, on strings holding
//! Redis' HLL bytes ([`crate::types::hll`]).

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::error::{CmdError, CmdResult};
use crate::key_events::EventClasses as Class;
use crate::keyspace::Ctx;
use crate::reply::Reply;
use crate::types::hll::{self, HllError, REGISTERS};

use super::strings::{rewrite, write};

impl From<HllError> for CmdError {
    fn from(e: HllError) -> CmdError {
        CmdError::other(e.text())
    }
}

/// The live HLL at `key` (`None`: missing): WRONGTYPE for another type,
/// and Redis' own WRONGTYPE text for a string that is not an HLL.
fn live_hll<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>, key: &[u8]) -> CmdResult<Option<Meta>> {
    let meta = ctx.typed(key, DataType::String)?;
    if let Some(m) = &meta {
        hll::check(&m.value)?;
    }
    Ok(meta)
}

/// PFADD `key [element …]`: 1 when the key was created or a register
/// grew.
pub fn pfadd<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let view = ctx.view(a[1])?;
    let live = match &view.live {
        Some(m) if m.data_type != DataType::String => return Err(CmdError::WrongType),
        Some(m) => {
            hll::check(&m.value)?;
            Some(m.clone())
        }
        None => None,
    };
    let mut value = live
        .as_ref()
        .map_or_else(hll::new_sparse, |m| m.value.clone());
    let mut updated = live.is_none();
    for element in &a[2..] {
        updated |= hll::add(&mut value, element)?;
    }
    if !updated {
        return Ok(Reply::Integer(0));
    }
    hll::invalidate_cache(&mut value);
    match live {
        Some(m) => rewrite(ctx, a[1], m, value)?,
        None => write(ctx, a[1], &view, &value, 0)?,
    }
    ctx.notify(Class::STRING, "pfadd", a[1]);
    Ok(Reply::Integer(1))
}

/// PFCOUNT `key [key …]`: one key's cardinality (cached in its header
/// when it was stale, as Redis writes it), or the union's of several.
/// Only the cache's update counts as a change (every other path leaves
/// its keys unchanged), which a master then sends to its replicas as
/// Redis does.
pub fn pfcount<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let wrote_nothing = |ctx: &mut Ctx<'_, C, S>| {
        for key in &a[1..] {
            ctx.leave_unchanged(key);
        }
    };
    if a.len() > 2 {
        wrote_nothing(ctx);
        let max = union(ctx, &a[1..])?.0;
        return Ok(Reply::Integer(hll::count_raw(&max) as i64));
    }
    let Some(mut meta) = live_hll(ctx, a[1])? else {
        wrote_nothing(ctx);
        return Ok(Reply::Integer(0));
    };
    if let Some(card) = hll::cached(&meta.value) {
        wrote_nothing(ctx);
        return Ok(Reply::Integer(card as i64));
    }
    let card = hll::count(&meta.value)?;
    let mut value = std::mem::take(&mut meta.value);
    hll::set_cache(&mut value, card);
    rewrite(ctx, a[1], meta, value)?;
    Ok(Reply::Integer(card as i64))
}

/// The registers of the union of `keys` (missing keys are empty), and
/// whether one of them is dense.
fn union<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    keys: &[&[u8]],
) -> CmdResult<(Box<[u8; REGISTERS]>, bool)> {
    let mut max = Box::new([0u8; REGISTERS]);
    let mut dense = false;
    for key in keys {
        if let Some(m) = live_hll(ctx, key)? {
            dense |= hll::is_dense(&m.value);
            hll::merge_into(&mut max, &m.value)?;
        }
    }
    Ok((max, dense))
}

/// PFMERGE `destkey [sourcekey …]`: the union of every key named, the
/// destination included, into the destination (dense when a source is).
pub fn pfmerge<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, a: &[&[u8]]) -> CmdResult<Reply> {
    let (max, dense) = union(ctx, &a[1..])?;
    let view = ctx.view(a[1])?;
    let live = view.live.clone();
    let mut value = live
        .as_ref()
        .map_or_else(hll::new_sparse, |m| m.value.clone());
    hll::merge_from(&mut value, &max, dense)?;
    match live {
        Some(m) => rewrite(ctx, a[1], m, value)?,
        None => write(ctx, a[1], &view, &value, 0)?,
    }
    ctx.notify(Class::STRING, "pfadd", a[1]);
    Ok(Reply::ok())
}
