//! The source side: a live key's value read in chunks, so that memory does
//! not grow with the size of a collection. A chunk is a [`Value`] of the
//! key's type holding some of its elements (lists: consecutive, head
//! first); a string is one chunk.

use redcodec_codec::{Codec, DataType, Meta, SubId, SubKind, SubValue};

use redcodec_engine::error::CmdError;
use redcodec_engine::keyspace::{corrupt, Ctx};
use redcodec_engine::value;
use redcodec_engine::value::Value;

/// The most a chunk holds: whichever limit is reached first.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Limits {
    /// Elements per chunk.
    pub elements: usize,
    /// Logical bytes per chunk (an element larger than this is a chunk
    /// of its own).
    pub bytes: usize,
}

/// Elements in a value (a string counts as one).
pub(crate) fn element_count(value: &Value) -> u64 {
    (match value {
        Value::String(_) => 1,
        Value::Hash(v) => v.len(),
        Value::List(v) | Value::Set(v) => v.len(),
        Value::ZSet(v) => v.len(),
    }) as u64
}

/// Logical bytes of a value: its strings, and 8 per score.
pub(crate) fn byte_count(value: &Value) -> u64 {
    (match value {
        Value::String(v) => v.len(),
        Value::Hash(v) => v.iter().map(|(f, x)| f.len() + x.len()).sum(),
        Value::List(v) | Value::Set(v) => v.iter().map(Vec::len).sum(),
        Value::ZSet(v) => v.iter().map(|(m, _)| m.len() + 8).sum(),
    }) as u64
}

/// A chunk being filled.
struct Chunk {
    value: Value,
    elements: usize,
    bytes: usize,
    limits: Limits,
}

impl Chunk {
    fn new(data_type: DataType, limits: Limits) -> Chunk {
        let value = match data_type {
            DataType::String => Value::String(Vec::new()),
            DataType::Hash => Value::Hash(Vec::new()),
            DataType::List => Value::List(Vec::new()),
            DataType::Set => Value::Set(Vec::new()),
            DataType::ZSet => Value::ZSet(Vec::new()),
        };
        Chunk {
            value,
            elements: 0,
            bytes: 0,
            limits,
        }
    }

    fn counted(&mut self, bytes: usize) -> bool {
        self.elements += 1;
        self.bytes += bytes;
        self.elements >= self.limits.elements || self.bytes >= self.limits.bytes
    }

    /// Adds a hash field; `true` when the chunk is full.
    fn field(&mut self, field: Vec<u8>, value: Vec<u8>) -> bool {
        let n = field.len() + value.len();
        if let Value::Hash(v) = &mut self.value {
            v.push((field, value));
        }
        self.counted(n)
    }

    /// Adds a list element or set member; `true` when the chunk is full.
    fn item(&mut self, item: Vec<u8>) -> bool {
        let n = item.len();
        if let Value::List(v) | Value::Set(v) = &mut self.value {
            v.push(item);
        }
        self.counted(n)
    }

    /// Adds a sorted-set member; `true` when the chunk is full.
    fn scored(&mut self, member: Vec<u8>, score: f64) -> bool {
        let n = member.len() + 8;
        if let Value::ZSet(v) = &mut self.value {
            v.push((member, score));
        }
        self.counted(n)
    }

    /// The chunk's value, leaving it empty.
    fn take(&mut self) -> Value {
        self.elements = 0;
        self.bytes = 0;
        let empty = Chunk::new(self.value.data_type(), self.limits).value;
        std::mem::replace(&mut self.value, empty)
    }
}

/// Reads the live key `key` (metadata `meta`) and hands its value to
/// `sink` in chunks; returns how many elements were read (1 for a string).
/// A collection that holds a different number of elements than its
/// metadata says is an error naming the key: nothing is dropped silently.
pub(crate) fn stream_value<C: Codec, E: From<CmdError>>(
    ctx: &Ctx<'_, C>,
    key: &[u8],
    meta: &Meta,
    limits: Limits,
    mut sink: impl FnMut(Value) -> Result<(), E>,
) -> Result<u64, E> {
    let mut chunk = Chunk::new(meta.data_type, limits);
    let mut count = 0u64;
    match meta.data_type {
        DataType::String => {
            sink(Value::String(meta.value.clone()))?;
            return Ok(1);
        }
        DataType::List => {
            let mut failed: Option<E> = None;
            value::visit_list(ctx, key, meta, |item| {
                count += 1;
                if chunk.item(item.to_vec()) {
                    if let Err(e) = sink(chunk.take()) {
                        failed = Some(e);
                        return false;
                    }
                }
                true
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        DataType::Hash | DataType::Set | DataType::ZSet => {
            let kind = match meta.data_type {
                DataType::Hash => SubKind::HashField,
                DataType::Set => SubKind::SetMember,
                _ => SubKind::ZSetMember,
            };
            for record in ctx.subs(kind, key, meta, None, false) {
                let full = match record? {
                    (SubId::Name(field), SubValue::Bytes(value)) if kind == SubKind::HashField => {
                        chunk.field(field, value)
                    }
                    (SubId::Name(member), _) if kind == SubKind::SetMember => chunk.item(member),
                    (SubId::Name(member), SubValue::Score(score))
                        if kind == SubKind::ZSetMember =>
                    {
                        chunk.scored(member, score)
                    }
                    (id, value) => {
                        return Err(corrupt(
                            key,
                            format!("unexpected {kind:?} record {id:?} = {value:?}"),
                        )
                        .into())
                    }
                };
                count += 1;
                if full {
                    sink(chunk.take())?;
                }
            }
        }
    }
    if chunk.elements > 0 {
        sink(chunk.take())?;
    }
    if count != meta.size {
        return Err(corrupt(
            key,
            format!(
                "its metadata counts {} elements but {count} were found",
                meta.size
            ),
        )
        .into());
    }
    Ok(count)
}
