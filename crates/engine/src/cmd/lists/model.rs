//! The one internal interface every list command goes through: the list
//! operations, dispatched on the list model the format declares
//! ([`ListModel`]). Each model is a sibling module implementing the same
//! operations on the same `(ctx, key, meta)` triple; commands never see
//! indexes, nodes or sequence numbers.
//!
//! Contract shared by every model:
//! - positions are 0-based from the head and already validated by the
//!   caller (`pos < len`, `start <= stop < len`, `1 <= n <= len`);
//! - operations read the store, queue element writes, and update `meta`
//!   (size and bounds) in memory; they never write the metadata: the caller
//!   saves it once, after the whole command;
//! - an operation whose result would be an empty list is not called (the
//!   caller drops the key), except pops, which leave `meta.size == 0`.

use redcodec_codec::{Codec, ListModel, ListShift, Meta};

use super::{array, linked, sparse};
use crate::error::CmdResult;
use crate::keyspace::Ctx;

/// An end of a list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// The head (index 0).
    Left,
    /// The tail (index -1).
    Right,
}

/// The list algorithm chosen for the format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Model {
    /// Consecutive integer indexes; `ListShift` picks the side that moves.
    Array(ListShift),
    /// Doubly linked nodes with never-reused sequence numbers.
    Linked,
    /// Numeric indexes, fractional after LINSERT.
    Sparse,
}

impl Model {
    /// The algorithm for the format behind `ctx`. This is the only place
    /// that knows which list models are implemented.
    pub(super) fn of<C: Codec>(ctx: &Ctx<'_, C>) -> CmdResult<Model> {
        match ctx.caps().list_model {
            ListModel::Array { shift } => Ok(Model::Array(shift)),
            ListModel::Linked => Ok(Model::Linked),
            ListModel::Sparse => Ok(Model::Sparse),
        }
    }

    /// The element at position `pos`.
    pub(super) fn get<C: Codec>(
        self,
        ctx: &Ctx<'_, C>,
        key: &[u8],
        meta: &Meta,
        pos: u64,
    ) -> CmdResult<Vec<u8>> {
        match self {
            Model::Array(_) => array::get(ctx, key, meta, pos),
            Model::Linked => linked::get(ctx, key, meta, pos),
            Model::Sparse => sparse::get(ctx, key, meta, pos),
        }
    }

    /// The elements at positions `start..=stop`, in order.
    pub(super) fn range<C: Codec>(
        self,
        ctx: &Ctx<'_, C>,
        key: &[u8],
        meta: &Meta,
        start: u64,
        stop: u64,
    ) -> CmdResult<Vec<Vec<u8>>> {
        match self {
            Model::Array(_) => array::range(ctx, key, meta, start, stop),
            Model::Linked => linked::range(ctx, key, meta, start, stop),
            Model::Sparse => sparse::range(ctx, key, meta, start, stop),
        }
    }

    /// Calls `visit` with each element, starting at the `from` end and
    /// walking inward, until it returns `false`.
    pub(super) fn visit<C: Codec>(
        self,
        ctx: &Ctx<'_, C>,
        key: &[u8],
        meta: &Meta,
        from: Side,
        visit: impl FnMut(&[u8]) -> bool,
    ) -> CmdResult<()> {
        match self {
            Model::Array(_) => array::visit(ctx, key, meta, from, visit),
            Model::Linked => linked::visit(ctx, key, meta, from, visit),
            Model::Sparse => sparse::visit(ctx, key, meta, from, visit),
        }
    }

    /// Pushes `values` one by one at the `side` end (so a multi-value left
    /// push ends with the last value first, as Redis does).
    pub(super) fn push<C: Codec, V: AsRef<[u8]>>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        side: Side,
        values: &[V],
    ) -> CmdResult<()> {
        match self {
            Model::Array(_) => array::push(ctx, key, meta, side, values),
            Model::Linked => linked::push(ctx, key, meta, side, values),
            Model::Sparse => sparse::push(ctx, key, meta, side, values),
        }
    }

    /// Removes and returns `n` elements from the `side` end, in pop order.
    pub(super) fn pop<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        side: Side,
        n: u64,
    ) -> CmdResult<Vec<Vec<u8>>> {
        match self {
            Model::Array(_) => array::pop(ctx, key, meta, side, n),
            Model::Linked => linked::pop(ctx, key, meta, side, n),
            Model::Sparse => sparse::pop(ctx, key, meta, side, n),
        }
    }

    /// Replaces the element at position `pos`.
    pub(super) fn set<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &Meta,
        pos: u64,
        value: &[u8],
    ) -> CmdResult<()> {
        match self {
            Model::Array(_) => array::set(ctx, key, meta, pos, value),
            Model::Linked => linked::set(ctx, key, meta, pos, value),
            Model::Sparse => sparse::set(ctx, key, meta, pos, value),
        }
    }

    /// Inserts `value` next to the first element equal to `pivot` (from the
    /// head); `false` if there is no such element (nothing queued).
    pub(super) fn insert<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        pivot: &[u8],
        before: bool,
        value: &[u8],
    ) -> CmdResult<bool> {
        match self {
            Model::Array(shift) => array::insert(ctx, key, meta, shift, pivot, before, value),
            Model::Linked => linked::insert(ctx, key, meta, pivot, before, value),
            Model::Sparse => sparse::insert(ctx, key, meta, pivot, before, value),
        }
    }

    /// Removes up to `|count|` elements equal to `value` (all when `count`
    /// is 0), scanning from the head (`count >= 0`) or the tail; returns
    /// how many match. When every element of the list matches, nothing is
    /// queued: the caller drops the whole key.
    pub(super) fn remove<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        count: i64,
        value: &[u8],
    ) -> CmdResult<u64> {
        match self {
            Model::Array(shift) => array::remove(ctx, key, meta, shift, count, value),
            Model::Linked => linked::remove(ctx, key, meta, count, value),
            Model::Sparse => sparse::remove(ctx, key, meta, count, value),
        }
    }

    /// Moves the element at the `from` end to the `to` end (the other one)
    /// of a list of two or more elements; returns it.
    pub(super) fn rotate<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        from: Side,
        to: Side,
    ) -> CmdResult<Vec<u8>> {
        match self {
            // Array and sparse pops and pushes touch different indexes.
            Model::Array(_) | Model::Sparse => {
                let popped = self.pop(ctx, key, meta, from, 1)?;
                self.push(ctx, key, meta, to, &popped)?;
                Ok(popped.into_iter().next().unwrap_or_default())
            }
            // The popped node's neighbour may be the pushed node's
            // neighbour: one chain relinks both.
            Model::Linked => linked::rotate(ctx, key, meta, from, to),
        }
    }

    /// Keeps only positions `start..=stop` (a non-empty, proper part).
    pub(super) fn trim<C: Codec>(
        self,
        ctx: &mut Ctx<'_, C>,
        key: &[u8],
        meta: &mut Meta,
        start: u64,
        stop: u64,
    ) -> CmdResult<()> {
        match self {
            Model::Array(_) => array::trim(ctx, key, meta, start, stop),
            Model::Linked => linked::trim(ctx, key, meta, start, stop),
            Model::Sparse => sparse::trim(ctx, key, meta, start, stop),
        }
    }
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
