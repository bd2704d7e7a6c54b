//! The source side: a live key's value read in chunks, so that memory does
//! not grow with the size of a collection. A chunk is a [`Value`] of the
//! key's type holding some of its elements (lists: consecutive, head
//! first); a string is one chunk.

use redcodec_codec::{Codec, DataType, Meta};

use redcodec_engine::error::CmdError;
use redcodec_engine::internals::cursors::SubCursors;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::value;
use redcodec_engine::value::{Element, Value};
use redcodec_engine::Store;

/// The most a chunk holds: whichever limit is reached first.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Limits {
    /// Elements per chunk.
    pub elements: usize,
    /// Logical bytes per chunk (an element larger than this is a chunk
    /// of its own).
    pub bytes: usize,
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
        Chunk {
            value: Value::empty(data_type),
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

    /// Adds an element; `true` when the chunk is full.
    fn add(&mut self, element: Element) -> bool {
        let n = match &element {
            Element::Item(x) | Element::Member(x) => x.len(),
            Element::Field(f, v) => f.len() + v.len(),
            Element::Scored(m, _) => m.len() + 8,
        };
        self.value.push(element);
        self.counted(n)
    }

    /// The chunk's value, leaving it empty.
    fn take(&mut self) -> Value {
        self.elements = 0;
        self.bytes = 0;
        let empty = Value::empty(self.value.data_type());
        std::mem::replace(&mut self.value, empty)
    }
}

/// Reads the live key `key` (metadata `meta`) and hands its value to
/// `sink` in chunks; returns how many elements were read (1 for a string).
/// A walk over keys in order passes its `cursors`: the element records
/// are read on them rather than on an iterator made for the key.
/// A collection that holds a different number of elements than its
/// metadata says is an error naming the key: nothing is dropped silently.
pub(crate) fn stream_value<'e, C: Codec, E: From<CmdError>>(
    ctx: &Ctx<'e, C>,
    cursors: Option<&mut SubCursors<'e, Store>>,
    key: &[u8],
    meta: &Meta,
    limits: Limits,
    mut sink: impl FnMut(Value) -> Result<(), E>,
) -> Result<u64, E> {
    if meta.data_type == DataType::String {
        sink(Value::String(meta.value.clone()))?;
        return Ok(1);
    }
    let mut chunk = Chunk::new(meta.data_type, limits);
    let add = |element| -> Result<(), E> {
        if chunk.add(element) {
            sink(chunk.take())?;
        }
        Ok(())
    };
    let count = value::visit_elements_on(ctx, cursors, key, meta, add)?;
    if chunk.elements > 0 {
        sink(chunk.take())?;
    }
    if let Some(e) = value::miscounted(key, meta, count) {
        return Err(e.into());
    }
    Ok(count)
}
