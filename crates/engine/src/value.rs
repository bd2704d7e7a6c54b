//! A key's whole logical value, independent of any format: read from one
//! key and written to another (RENAME, migration).

use crate::store::KvStore;
use redcodec_codec::{Codec, DataType, Meta, SubId, SubKind, SubValue};

use crate::cursors::SubCursors;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx, ExpireAt, KeyView};
use crate::types::ValueMut;
use crate::types::{hash, list, set, zset};

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

impl From<redcodec_rdb::Value> for Value {
    fn from(value: redcodec_rdb::Value) -> Value {
        use redcodec_rdb::Value as R;
        match value {
            R::String(s) => Value::String(s),
            R::Hash(pairs) => Value::Hash(pairs),
            R::List(items) => Value::List(items),
            R::Set(members) => Value::Set(members),
            R::ZSet(members) => Value::ZSet(members),
        }
    }
}

impl From<Value> for redcodec_rdb::Value {
    fn from(value: Value) -> redcodec_rdb::Value {
        use redcodec_rdb::Value as R;
        match value {
            Value::String(s) => R::String(s),
            Value::Hash(pairs) => R::Hash(pairs),
            Value::List(items) => R::List(items),
            Value::Set(members) => R::Set(members),
            Value::ZSet(members) => R::ZSet(members),
        }
    }
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

    /// A value of type `data_type` without elements (an empty string).
    pub fn empty(data_type: DataType) -> Value {
        match data_type {
            DataType::String => Value::String(Vec::new()),
            DataType::Hash => Value::Hash(Vec::new()),
            DataType::List => Value::List(Vec::new()),
            DataType::Set => Value::Set(Vec::new()),
            DataType::ZSet => Value::ZSet(Vec::new()),
        }
    }

    /// Appends `element` to a collection of its type (a list item to a
    /// list, a member to a set…); an element of another type is ignored.
    pub fn push(&mut self, element: Element) {
        match (self, element) {
            (Value::List(v), Element::Item(x)) | (Value::Set(v), Element::Member(x)) => v.push(x),
            (Value::Hash(v), Element::Field(f, x)) => v.push((f, x)),
            (Value::ZSet(v), Element::Scored(m, s)) => v.push((m, s)),
            _ => {}
        }
    }

    /// Elements in the value (a string counts as one).
    pub fn element_count(&self) -> u64 {
        (match self {
            Value::String(_) => 1,
            Value::Hash(v) => v.len(),
            Value::List(v) | Value::Set(v) => v.len(),
            Value::ZSet(v) => v.len(),
        }) as u64
    }

    /// Logical bytes of the value: its strings, and 8 per score (what
    /// migrations count).
    pub fn byte_count(&self) -> u64 {
        (match self {
            Value::String(v) => v.len(),
            Value::Hash(v) => v.iter().map(|(f, x)| f.len() + x.len()).sum(),
            Value::List(v) | Value::Set(v) => v.iter().map(Vec::len).sum(),
            Value::ZSet(v) => v.iter().map(|(m, _)| m.len() + 8).sum(),
        }) as u64
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
        DataType::Hash => Value::Hash(hash::read_all(ctx, key, meta)?),
        DataType::List => Value::List(list::read_all(ctx, key, meta)?),
        DataType::Set => Value::Set(set::read_all(ctx, key, meta)?),
        DataType::ZSet => Value::ZSet(zset::read_all(ctx, key, meta)?),
    })
}

/// [`read_value`] for a walk in key order: the element records are read
/// on `cursors`, kept from key to key (as [`visit_elements_on`] reads
/// them). A sorted set's members come in record order, not by score.
pub fn read_value_on<'e, C: Codec, S: KvStore>(
    ctx: &Ctx<'e, C, S>,
    cursors: &mut SubCursors<'e, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Value> {
    if meta.data_type == DataType::String {
        return Ok(Value::String(meta.value.clone()));
    }
    let mut value = Value::empty(meta.data_type);
    visit_elements_on(ctx, Some(cursors), key, meta, |element| {
        value.push(element);
        Ok::<(), CmdError>(())
    })?;
    Ok(value)
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
    let records = ValueMut::new(ctx, key, &mut meta);
    match value {
        Value::String(v) => records.meta.value = v.clone(),
        Value::Hash(pairs) => hash::write_all(records, pairs)?,
        Value::List(items) => list::write_all(records, items)?,
        Value::Set(members) => set::write_all(records, members)?,
        Value::ZSet(members) => zset::write_all(records, members)?,
    }
    if value.data_type().is_collection() && meta.size == 0 {
        if let Some(live) = &view.live {
            ctx.remove_key(key, live)?;
        }
        return Ok(());
    }
    ctx.save(key, &meta)
}

/// One element of a collection, as its record holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Element {
    /// A list element.
    Item(Vec<u8>),
    /// A hash field and its value.
    Field(Vec<u8>, Vec<u8>),
    /// A set member.
    Member(Vec<u8>),
    /// A sorted-set member and its score.
    Scored(Vec<u8>, f64),
}

/// Calls `visit` with each element of the live collection `meta` at `key`
/// (a list's head first, the others in record order), reading as it goes
/// (migrations stream big values), until `visit` fails; returns how many
/// elements were visited. A string has no elements. A record of another
/// kind than the type's is an error naming the key.
pub fn visit_elements<C: Codec, S: KvStore, E: From<CmdError>>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    visit: impl FnMut(Element) -> Result<(), E>,
) -> Result<u64, E> {
    visit_elements_on(ctx, None, key, meta, visit)
}

/// [`visit_elements`], reading the records of hashes, sets and sorted sets
/// on `cursors` when given (kept from key to key of a walk in key order),
/// else on an iterator made for the key.
pub fn visit_elements_on<'e, C: Codec, S: KvStore, E: From<CmdError>>(
    ctx: &Ctx<'e, C, S>,
    cursors: Option<&mut SubCursors<'e, S>>,
    key: &[u8],
    meta: &Meta,
    visit: impl FnMut(Element) -> Result<(), E>,
) -> Result<u64, E> {
    match (element_kind(meta.data_type), cursors) {
        (Elements::None, _) => Ok(0),
        (Elements::List, cursors) => visit_list(ctx, cursors, key, meta, visit),
        (Elements::Records(kind), Some(cursors)) => visit_records(
            key,
            kind,
            ctx.subs_on(cursors, kind, key, meta, None),
            visit,
        ),
        (Elements::Records(kind), None) => {
            visit_records(key, kind, ctx.subs(kind, key, meta, None, false), visit)
        }
    }
}

/// How a type's elements are read.
enum Elements {
    /// A string: none.
    None,
    /// Through the format's list model.
    List,
    /// One element record each.
    Records(SubKind),
}

fn element_kind(data_type: DataType) -> Elements {
    match data_type {
        DataType::String => Elements::None,
        DataType::List => Elements::List,
        DataType::Hash => Elements::Records(SubKind::HashField),
        DataType::Set => Elements::Records(SubKind::SetMember),
        DataType::ZSet => Elements::Records(SubKind::ZSetMember),
    }
}

fn visit_list<'e, C: Codec, S: KvStore, E: From<CmdError>>(
    ctx: &Ctx<'e, C, S>,
    cursors: Option<&mut SubCursors<'e, S>>,
    key: &[u8],
    meta: &Meta,
    mut visit: impl FnMut(Element) -> Result<(), E>,
) -> Result<u64, E> {
    let mut count = 0u64;
    let mut failed = None;
    list::visit_all(ctx, cursors, key, meta, |item| {
        count += 1;
        match visit(Element::Item(item.to_vec())) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    failed.map_or(Ok(count), Err)
}

fn visit_records<E: From<CmdError>>(
    key: &[u8],
    kind: SubKind,
    records: impl Iterator<Item = CmdResult<(SubId, SubValue)>>,
    mut visit: impl FnMut(Element) -> Result<(), E>,
) -> Result<u64, E> {
    let mut count = 0u64;
    for record in records {
        let element = match (record?, kind) {
            ((SubId::Name(f), SubValue::Bytes(v)), SubKind::HashField) => Element::Field(f, v),
            ((SubId::Name(m), _), SubKind::SetMember) => Element::Member(m),
            ((SubId::Name(m), SubValue::Score(s)), SubKind::ZSetMember) => Element::Scored(m, s),
            ((id, value), _) => {
                let what = format!("unexpected {kind:?} record {id:?} = {value:?}");
                return Err(corrupt(key, what).into());
            }
        };
        count += 1;
        visit(element)?;
    }
    Ok(count)
}

/// The error for a collection `meta` at `key` in which `found` elements
/// were read: `None` when its metadata counts as many.
pub fn miscounted(key: &[u8], meta: &Meta, found: u64) -> Option<CmdError> {
    (found != meta.size).then(|| {
        let what = format!(
            "its metadata counts {} elements but {found} were found",
            meta.size
        );
        corrupt(key, what)
    })
}

/// Appends `items` in order to the list `meta` at `key`, as RPUSH would,
/// updating its size and bounds; the caller saves the metadata.
pub fn append_list<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    items: &[Vec<u8>],
) -> CmdResult<()> {
    list::write_all(ValueMut::new(ctx, key, meta), items)
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
    zset::write_new(ValueMut::new(ctx, key, meta), members)
}
