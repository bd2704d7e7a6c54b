//! The one internal interface every list command goes through: the list
//! operations, dispatched on the list model the format declares
//! ([`redcodec_codec::ListModel`]). Each model is a sibling module implementing
//! [`ListOps`] on the same list ([`List`] or [`ValueMut`]: the keyspace,
//! the key and its metadata); commands never see indexes, nodes or
//! sequence numbers.
//!
//! Contract shared by every model:
//! - positions are 0-based from the head and already validated by the
//!   caller (`pos < len`, `start <= stop < len`, `1 <= n <= len`);
//! - operations read the store, queue element writes, and update `meta`
//!   (size and bounds) in memory; they never write the metadata: the caller
//!   saves it once, after the whole command;
//! - an operation whose result would be an empty list is not called (the
//!   caller drops the key), except pops, which leave `meta.size == 0`.

use crate::store::KvStore;
use redcodec_codec::{Codec, Meta, SubId, SubKind, SubValue, SubValueRef};

use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
pub(crate) use crate::types::ValueMut;

/// An end of a list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The head (index 0).
    Left,
    /// The tail (index -1).
    Right,
}

impl Side {
    /// `left` at the head, `right` at the tail: what belongs to this end
    /// of a pair (places, links, bounds, or places to write them).
    pub(crate) fn pick<T>(self, left: T, right: T) -> T {
        match self {
            Side::Left => left,
            Side::Right => right,
        }
    }

    /// The other end.
    pub(crate) fn opposite(self) -> Side {
        self.pick(Side::Right, Side::Left)
    }

    /// The end LREM with `count` scans from: the tail for a negative
    /// count, else the head.
    pub(crate) fn scan_from(count: i64) -> Side {
        if count < 0 {
            Side::Right
        } else {
            Side::Left
        }
    }
}

/// A list as an operation reads it: the keyspace, the list's key and its
/// metadata.
pub(crate) struct List<'l, 'e, C: Codec, S: KvStore> {
    /// The keyspace the list lives in.
    pub(crate) ctx: &'l Ctx<'e, C, S>,
    /// The list's key.
    pub(crate) key: &'l [u8],
    /// The list's live metadata.
    pub(crate) meta: &'l Meta,
}

impl<'l, 'e, C: Codec, S: KvStore> List<'l, 'e, C, S> {
    /// The list `key` with metadata `meta` in `ctx`.
    pub(crate) fn new(ctx: &'l Ctx<'e, C, S>, key: &'l [u8], meta: &'l Meta) -> Self {
        List { ctx, key, meta }
    }
}

impl<C: Codec, S: KvStore> Clone for List<'_, '_, C, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: Codec, S: KvStore> Copy for List<'_, '_, C, S> {}

/// LINSERT's request: `value` goes next to the first element equal to
/// `pivot` (from the head), before it or after it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Insertion<'v> {
    /// The element to insert next to.
    pub(crate) pivot: &'v [u8],
    /// Before the pivot (`true`) or after it.
    pub(crate) before: bool,
    /// The new element.
    pub(crate) value: &'v [u8],
}

/// The list operations every model implements (array, linked, sparse,
/// and [`super::Model`], which forwards to the format's), each on a
/// [`List`] or [`ValueMut`] and under the contract of this module.
pub(crate) trait ListOps<C: Codec, S: KvStore> {
    /// The element at position `pos`.
    fn get(&self, list: List<'_, '_, C, S>, pos: u64) -> CmdResult<Vec<u8>>;

    /// The elements at positions `start..=stop`, in order.
    fn range(&self, list: List<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>>;

    /// Calls `visit` with each element, starting at the `from` end and
    /// walking inward, until it returns `false`.
    fn visit<F>(&self, list: List<'_, '_, C, S>, from: Side, visit: F) -> CmdResult<()>
    where
        F: FnMut(&[u8]) -> bool;

    /// Pushes `values` one by one at the `side` end (so a multi-value left
    /// push ends with the last value first, as Redis does).
    fn push<V>(&self, list: ValueMut<'_, '_, C, S>, side: Side, values: &[V]) -> CmdResult<()>
    where
        V: AsRef<[u8]>;

    /// Removes and returns `n` elements from the `side` end, in pop order.
    fn pop(&self, list: ValueMut<'_, '_, C, S>, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>>;

    /// Replaces the element at position `pos`.
    fn set(&self, list: ValueMut<'_, '_, C, S>, pos: u64, value: &[u8]) -> CmdResult<()>;

    /// Inserts the new element of `new` next to its pivot; `false` if there
    /// is no such element (nothing queued).
    fn insert(&self, list: ValueMut<'_, '_, C, S>, new: Insertion<'_>) -> CmdResult<bool>;

    /// Removes up to `|count|` elements equal to `value` (all when `count`
    /// is 0), scanning from the head (`count >= 0`) or the tail; returns
    /// how many match. When every element of the list matches, nothing is
    /// queued: the caller drops the whole key.
    fn remove(&self, list: ValueMut<'_, '_, C, S>, count: i64, value: &[u8]) -> CmdResult<u64>;

    /// Moves the element at the `from` end to the `to` end (the other one)
    /// of a list of two or more elements; returns it. By default a pop then
    /// a push, right where pops and pushes touch different records (array
    /// and sparse indexes).
    fn rotate(&self, mut list: ValueMut<'_, '_, C, S>, from: Side, to: Side) -> CmdResult<Vec<u8>> {
        let popped = self.pop(list.reborrow(), from, 1)?;
        self.push(list, to, &popped)?;
        Ok(popped.into_iter().next().unwrap_or_default())
    }

    /// Keeps only positions `start..=stop` (a non-empty, proper part).
    fn trim(&self, list: ValueMut<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<()>;
}

/// Takes exactly `n` elements from `items`, a model's walk over a list's
/// records: fewer means the records disagree with the list's size, an
/// "unreadable" error rather than a short reply.
pub(super) fn take_exactly<T>(
    key: &[u8],
    items: impl Iterator<Item = CmdResult<T>>,
    n: u64,
) -> CmdResult<Vec<T>> {
    let run = items
        .take(usize::try_from(n).unwrap_or(usize::MAX))
        .collect::<CmdResult<Vec<_>>>()?;
    if run.len() as u64 != n {
        return Err(crate::keyspace::corrupt(
            key,
            format!("list has {} of the {n} elements it should", run.len()),
        ));
    }
    Ok(run)
}

/// Queues the list item record `id` of `key` holding `value` (the array
/// and sparse models, whose items hold bare values).
pub(super) fn put_item<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    id: SubId,
    value: &[u8],
) {
    ctx.sub_put(
        SubKind::ListItem,
        key,
        meta,
        id.view(),
        SubValueRef::Bytes(value),
    );
}

/// The error for a list item record a model's walk cannot read.
pub(super) fn unexpected_item(key: &[u8], id: SubId, value: SubValue) -> CmdError {
    crate::keyspace::corrupt(key, format!("unexpected list item {id:?} = {value:?}"))
}

/// Calls `visit` with the value of each `(place, value)` of a model's walk
/// until it returns `false`.
pub(super) fn visit_values<T, V: AsRef<[u8]>>(
    items: impl Iterator<Item = CmdResult<(T, V)>>,
    mut visit: impl FnMut(&[u8]) -> bool,
) -> CmdResult<()> {
    for item in items {
        if !visit(item?.1.as_ref()) {
            break;
        }
    }
    Ok(())
}

/// The values of a run of `(place, value)`, in order.
pub(super) fn values<T>(run: Vec<(T, Vec<u8>)>) -> Vec<Vec<u8>> {
    run.into_iter().map(|(_, v)| v).collect()
}

/// What `keep` makes of the first `limit` items (all when `limit` is 0)
/// of a model's walk whose value equals `value`, in walk order: LREM's
/// matches.
pub(super) fn matches<T, V: AsRef<[u8]>, R>(
    items: impl Iterator<Item = CmdResult<(T, V)>>,
    value: &[u8],
    limit: u64,
    keep: impl Fn((T, V)) -> R,
) -> CmdResult<Vec<R>> {
    let mut found = Vec::new();
    for item in items {
        let item = item?;
        if item.1.as_ref() == value {
            found.push(keep(item));
            if found.len() as u64 == limit {
                break;
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::Side;

    #[test]
    fn each_end_picks_its_own_and_opposes_the_other() {
        assert_eq!(Side::Left.pick("head", "tail"), "head");
        assert_eq!(Side::Right.pick("head", "tail"), "tail");
        assert_eq!(Side::Left.opposite(), Side::Right);
        assert_eq!(Side::Right.opposite(), Side::Left);
        let (mut left, mut right) = (0, 0);
        *Side::Right.pick(&mut left, &mut right) = 7;
        assert_eq!((left, right), (0, 7));
    }
}
