//! A key's whole logical value, independent of any format: read from one
//! key and written to another (RENAME, migration).

use redcodec_codec::{Codec, DataType, Meta};

use crate::cmd::types::{hashes, lists, sets, zsets};
use crate::error::CmdResult;
use crate::keyspace::{Ctx, KeyView};

/// The content of one key.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string.
    String(Vec<u8>),
    /// Field–value pairs.
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    /// Elements in order.
    List(Vec<Vec<u8>>),
    /// Members.
    Set(Vec<Vec<u8>>),
    /// Members with exact scores, in Redis order.
    ZSet(Vec<(Vec<u8>, f64)>),
}

impl Value {
    /// The Redis type of the value.
    pub fn data_type(&self) -> DataType {
        match self {
            Value::String(_) => DataType::String,
            Value::Hash(_) => DataType::Hash,
            Value::List(_) => DataType::List,
            Value::Set(_) => DataType::Set,
            Value::ZSet(_) => DataType::ZSet,
        }
    }
}

/// Reads the whole value of a live key.
pub fn read_value<C: Codec>(ctx: &Ctx<'_, C>, key: &[u8], meta: &Meta) -> CmdResult<Value> {
    Ok(match meta.data_type {
        DataType::String => Value::String(meta.value.clone()),
        DataType::Hash => Value::Hash(hashes::read_all(ctx, key, meta)?),
        DataType::List => Value::List(lists::read_all(ctx, key, meta)?),
        DataType::Set => Value::Set(sets::read_all(ctx, key, meta)?),
        DataType::ZSet => Value::ZSet(zsets::read_all(ctx, key, meta)?),
    })
}

/// Queues `value` as the new content of `key` (replacing what `view` shows
/// there) with absolute expiry `expire_ms` (0: none).
pub fn write_value<C: Codec>(
    ctx: &mut Ctx<'_, C>,
    key: &[u8],
    view: &KeyView,
    value: &Value,
    expire_ms: u64,
) -> CmdResult<()> {
    let mut meta = ctx.create(key, value.data_type(), view)?;
    ctx.set_expire(&mut meta, expire_ms)?;
    match value {
        Value::String(v) => meta.value = v.clone(),
        Value::Hash(pairs) => hashes::write_all(ctx, key, &mut meta, pairs)?,
        Value::List(items) => lists::write_all(ctx, key, &mut meta, items)?,
        Value::Set(members) => sets::write_all(ctx, key, &mut meta, members)?,
        Value::ZSet(members) => zsets::write_all(ctx, key, &mut meta, members)?,
    }
    if value.data_type().is_collection() && meta.size == 0 {
        if let Some(live) = &view.live {
            ctx.remove_key(key, live)?;
        }
        return Ok(());
    }
    ctx.save(key, &meta)
}
