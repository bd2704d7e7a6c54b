//! [`Batch`]: the writes of one command, queued by place and applied
//! atomically by a [`crate::KvStore`].

use redcodec_codec::{KeyRange, Place};

/// Pending writes of one command; written as one RocksDB write batch per
/// instance it touches.
#[derive(Default)]
pub struct Batch {
    pub(crate) pending: Vec<(Place, Op)>,
}

/// One queued write of a [`Batch`].
pub(crate) enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

impl Op {
    /// The record a put or a delete writes (a range: its lower bound).
    fn key(&self) -> &[u8] {
        match self {
            Op::Put(key, _) | Op::Delete(key) | Op::DeleteRange(key, _) => key,
        }
    }
}

impl Batch {
    /// Queues a put.
    pub fn put(&mut self, place: Place, key: Vec<u8>, value: Vec<u8>) {
        self.pending.push((place, Op::Put(key, value)));
    }

    /// Queues a delete.
    pub fn delete(&mut self, place: Place, key: Vec<u8>) {
        self.pending.push((place, Op::Delete(key)));
    }

    /// Queues a range delete of `[range.lower, range.upper)`.
    pub fn delete_range(&mut self, range: &KeyRange) {
        self.pending.push((
            range.place,
            Op::DeleteRange(range.lower.clone(), range.upper.clone()),
        ));
    }

    /// Orders the queued writes by place, then key (bytes), keeping the
    /// order of writes to one record, so that RocksDB inserts them into
    /// its memtable in order (each insert then starts from the last one's
    /// position). A batch with a range delete, whose place in the order
    /// matters, is left as it is.
    pub fn sort_by_record(&mut self) {
        if self
            .pending
            .iter()
            .any(|(_, op)| matches!(op, Op::DeleteRange(..)))
        {
            return;
        }
        self.pending.sort_by(|(pa, a), (pb, b)| {
            (pa.instance, pa.cf, a.key()).cmp(&(pb.instance, pb.cf, b.key()))
        });
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// What the queued writes say about record `key` of `place`, the last
    /// one first: `Some(Some(value))` put, `Some(None)` deleted (by key, or
    /// by a range that holds it under `compare`, the family's order),
    /// `None` not touched.
    pub fn pending(
        &self,
        place: Place,
        key: &[u8],
        compare: fn(&[u8], &[u8]) -> std::cmp::Ordering,
    ) -> Option<Option<&[u8]>> {
        use std::cmp::Ordering::{Greater, Less};
        self.pending
            .iter()
            .rev()
            .filter(|(p, _)| *p == place)
            .find_map(|(_, op)| match op {
                Op::Put(k, v) if k.as_slice() == key => Some(Some(v.as_slice())),
                Op::Delete(k) if k.as_slice() == key => Some(None),
                Op::DeleteRange(a, b) if compare(a, key) != Greater && compare(key, b) == Less => {
                    Some(None)
                }
                _ => None,
            })
    }
}

/// A stored key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes of [`hex`]'s text (either case); `None` for text that is not
/// hex pairs.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
