//! A key's whole logical value, independent of any format: read from one
//! key and written to another (RENAME, migration).

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta};

use crate::cmd::types::{hashes, lists, sets, zsets};
use crate::error::CmdResult;
use crate::keyspace::{Ctx, ExpireAt, KeyView};

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
pub fn read_value<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Value> {
    Ok(match meta.data_type {
        DataType::String => Value::String(meta.value.clone()),
        DataType::Hash => Value::Hash(hashes::read_all(ctx, key, meta)?),
        DataType::List => Value::List(lists::read_all(ctx, key, meta)?),
        DataType::Set => Value::Set(sets::read_all(ctx, key, meta)?),
        DataType::ZSet => Value::ZSet(zsets::read_all(ctx, key, meta)?),
    })
}

/// Queues `value` as the new content of `key` (replacing what `view` shows
/// there) with expiry `expire` (an absolute time in ms, 0: none; or an
/// [`ExpireAt`] given relative to the command's time).
pub fn write_value<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    view: &KeyView,
    value: &Value,
    expire: impl Into<ExpireAt>,
) -> CmdResult<()> {
    let mut meta = ctx.create(key, value.data_type(), view)?;
    ctx.set_expire_at(&mut meta, expire.into())?;
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

/// Calls `visit` with each element of the live list `meta` at `key`, head
/// first, until it returns `false`; reads as it goes (migration streams
/// lists).
pub fn visit_list<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    visit: impl FnMut(&[u8]) -> bool,
) -> CmdResult<()> {
    lists::visit_all(ctx, key, meta, visit)
}

/// Appends `items` in order to the list `meta` at `key`, as RPUSH would,
/// updating its size and bounds; the caller saves the metadata.
pub fn append_list<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    items: &[Vec<u8>],
) -> CmdResult<()> {
    lists::write_all(ctx, key, meta, items)
}

/// Queues `members`, none of them already in the sorted set `meta` at
/// `key` and each given once (a migration copying a sorted set in chunks),
/// and grows its size. Does not write the metadata. Scores beyond the
/// format's limit are an error.
pub fn add_new_zset_members<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    members: &[(Vec<u8>, f64)],
) -> CmdResult<()> {
    zsets::write_new(ctx, key, meta, members)
}
