//! The sparse list model (Ardb): every element is a
//! [`SubKind::ListItem`] record whose id is a number,
//! [`SubId::Sparse`] — an integer, or a float once LINSERT has put an
//! element between two others — and the list is the records in numeric
//! order. The metadata keeps the lowest and highest index in use and a
//! `sequential` flag ([`ListBounds::Sparse`]).
//!
//! The rules, as Ardb applies them (formats-spec/ardb.md §6):
//! - the first element of a list gets index 0; a push goes one below the
//!   lowest index (LPUSH) or one above the highest (RPUSH), a float bound
//!   being first truncated toward zero, and the new index becomes the bound;
//! - LINSERT puts the element at the float midpoint of the pivot and its
//!   neighbour on that side, or one past the pivot at an end of the list,
//!   and clears `sequential`; so does LREM, even when it removes nothing;
//! - a pop or trim moves the bound to the index of the next element;
//! - while `sequential` holds (indexes `min..=max`, consecutive integers),
//!   position `p` is read directly at index `min + p`; otherwise positions
//!   are found by walking the records.
//!
//! Where Ardb would corrupt a list, this model does not: when two
//! neighbours are so close that their midpoint equals one of them (after
//! about fifty inserts into the same gap), the list is renumbered with
//! consecutive integer indexes from 0 before the insert.

use std::cmp::Ordering;

use crate::cursors::SubCursors;
use crate::store::{GroupIter, KvIter, KvStore};
use redcodec_codec::{Codec, ListBounds, Meta, SparseIndex, SubId, SubIdRef, SubKind, SubValue};

use super::ops::{
    matches, put_item, take_exactly, unexpected_item, values, visit_values, Insertion, List,
    ListOps, Side, ValueMut,
};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx, SubIter};

/// The `(min, max, sequential)` bounds of a list.
fn bounds(key: &[u8], meta: &Meta) -> CmdResult<(SparseIndex, SparseIndex, bool)> {
    meta.list
        .sparse()
        .ok_or_else(|| corrupt(key, format!("list bounds {:?} are not sparse", meta.list)))
}

fn set_bounds(meta: &mut Meta, min: SparseIndex, max: SparseIndex, sequential: bool) {
    meta.list = ListBounds::Sparse {
        min,
        max,
        sequential,
    };
}

/// The lowest index, when position `p` is at index `min + p`: the list is
/// sequential, its bounds are integers and they span exactly its size.
fn direct_base(key: &[u8], meta: &Meta) -> CmdResult<Option<i64>> {
    let (min, max, sequential) = bounds(key, meta)?;
    match (sequential, min, max) {
        (true, SparseIndex::Int(lo), SparseIndex::Int(hi))
            if i128::from(hi) - i128::from(lo) + 1 == i128::from(meta.size) =>
        {
            Ok(Some(lo))
        }
        _ => Ok(None),
    }
}

/// An index as the comparator orders it: a double.
fn as_f64(i: SparseIndex) -> f64 {
    match i {
        SparseIndex::Int(i) => i as f64,
        SparseIndex::Float(f) => f,
    }
}

/// The numeric order of two indexes (integers exactly, else as doubles).
pub(super) fn compare(a: SparseIndex, b: SparseIndex) -> Ordering {
    match (a, b) {
        (SparseIndex::Int(a), SparseIndex::Int(b)) => a.cmp(&b),
        _ => as_f64(a).total_cmp(&as_f64(b)),
    }
}

/// An index as C's `(int64_t)` cast makes it (toward zero, saturating).
fn truncate(i: SparseIndex) -> i64 {
    match i {
        SparseIndex::Int(i) => i,
        SparseIndex::Float(f) => f as i64,
    }
}

/// The error for a list that reached an end of the index space.
fn index_space_exhausted() -> CmdError {
    CmdError::other("ERR list index space exhausted")
}

/// The index `offset` past integer index `base`.
fn offset(base: i64, offset: u64) -> CmdResult<SparseIndex> {
    i64::try_from(offset)
        .ok()
        .and_then(|o| base.checked_add(o))
        .map(SparseIndex::Int)
        .ok_or_else(index_space_exhausted)
}

/// Elements in index order (or reverse), from index `from` (inclusive) or
/// from the end, as `(index, value)`.
struct Items<'e, 'k, C: Codec, S: KvStore, I = GroupIter<<S as KvStore>::Iter<'e>>> {
    subs: SubIter<'e, 'k, C, S, I>,
    key: &'k [u8],
}

impl<'e, 'k, C: Codec, S: KvStore> Items<'e, 'k, C, S> {
    fn new(
        ctx: &Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        from: Option<SparseIndex>,
        reverse: bool,
    ) -> Items<'e, 'k, C, S> {
        let from = from.map(SubIdRef::Sparse);
        Items {
            subs: ctx.subs(SubKind::ListItem, key, meta, from, reverse),
            key,
        }
    }

    /// From the `side` end, walking inward.
    fn from_side(ctx: &Ctx<'e, C, S>, key: &'k [u8], meta: &'k Meta, side: Side) -> Self {
        Items::new(ctx, key, meta, None, side == Side::Right)
    }
}

impl<C: Codec, S: KvStore, I: KvIter> Iterator for Items<'_, '_, C, S, I> {
    type Item = CmdResult<(SparseIndex, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.subs.next()? {
            Err(e) => Some(Err(e)),
            Ok((SubId::Sparse(i), SubValue::Bytes(v))) => Some(Ok((i, v))),
            Ok((id, value)) => Some(Err(unexpected_item(self.key, id, value))),
        }
    }
}

impl Sparse {
    /// [`ListOps::visit`] from the head, on `cursors`: every item, in
    /// index order.
    pub(super) fn visit_on<'e, C: Codec, S: KvStore>(
        &self,
        list: List<'_, 'e, C, S>,
        cursors: &mut SubCursors<'e, S>,
        visit: impl FnMut(&[u8]) -> bool,
    ) -> CmdResult<()> {
        let List { ctx, key, meta } = list;
        let subs = ctx.subs_on(cursors, SubKind::ListItem, key, meta, None);
        visit_values(Items { subs, key }, visit)
    }
}

fn put<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    i: SparseIndex,
    v: &[u8],
) {
    put_item(ctx, key, meta, SubId::Sparse(i), v);
}

fn del<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &Meta, index: SparseIndex) {
    ctx.sub_del(SubKind::ListItem, key, meta, SubIdRef::Sparse(index));
}

/// The elements at positions `start..start + n`.
fn window<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    start: u64,
    n: u64,
) -> CmdResult<Vec<(SparseIndex, Vec<u8>)>> {
    if let Some(base) = direct_base(key, meta)? {
        let from = offset(base, start)?;
        return take_exactly(key, Items::new(ctx, key, meta, Some(from), false), n);
    }
    // Walk from the nearer end.
    let from_tail = meta.size - start - n;
    if from_tail < start {
        let mut run = take_exactly(
            key,
            Items::from_side(ctx, key, meta, Side::Right).skip(from_tail as usize),
            n,
        )?;
        run.reverse();
        Ok(run)
    } else {
        take_exactly(
            key,
            Items::from_side(ctx, key, meta, Side::Left).skip(start as usize),
            n,
        )
    }
}

/// The index of position `pos`.
fn index_at<C: Codec, S: KvStore>(list: List<'_, '_, C, S>, pos: u64) -> CmdResult<SparseIndex> {
    let List { ctx, key, meta } = list;
    if let Some(base) = direct_base(key, meta)? {
        return offset(base, pos);
    }
    Ok(window(ctx, key, meta, pos, 1)?[0].0)
}

/// Where LINSERT puts its element: the midpoint of the pivot and its
/// neighbour, or one past the pivot; `None` when no double lies strictly
/// between them.
fn insert_index(pivot: SparseIndex, neighbour: Option<SparseIndex>, before: bool) -> Option<f64> {
    let p = as_f64(pivot);
    let (index, limit) = match neighbour {
        Some(n) => ((as_f64(n) + p) / 2.0, Some(n)),
        None if before => (p - 1.0, None),
        None => (p + 1.0, None),
    };
    let new = SparseIndex::Float(index);
    let beyond_pivot = if before {
        compare(new, pivot) == Ordering::Less
    } else {
        compare(new, pivot) == Ordering::Greater
    };
    let within_limit = limit.is_none_or(|n| {
        if before {
            compare(new, n) == Ordering::Greater
        } else {
            compare(new, n) == Ordering::Less
        }
    });
    (index.is_finite() && beyond_pivot && within_limit).then_some(index)
}

/// LINSERT where no index is left between the pivot and its neighbour:
/// rewrites the list at the integer indexes `0..=size` with the new
/// element in place.
fn renumber_and_insert<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &mut Meta,
    new: Insertion<'_>,
) -> CmdResult<bool> {
    let items = take_exactly(key, Items::from_side(ctx, key, meta, Side::Left), meta.size)?;
    let mut values = Vec::with_capacity(items.len() + 1);
    let mut inserted = false;
    for (index, v) in &items {
        del(ctx, key, meta, *index);
        if !inserted && v.as_slice() == new.pivot {
            inserted = true;
            if new.before {
                values.push(new.value);
                values.push(v.as_slice());
            } else {
                values.push(v.as_slice());
                values.push(new.value);
            }
        } else {
            values.push(v.as_slice());
        }
    }
    // Deletes first, puts after: an old index equal to a new one (1.0 and
    // 1 are the same key) ends up holding the new element.
    for (i, v) in values.iter().enumerate() {
        put(ctx, key, meta, SparseIndex::Int(i as i64), v);
    }
    meta.size = values.len() as u64;
    set_bounds(
        meta,
        SparseIndex::Int(0),
        SparseIndex::Int(values.len() as i64 - 1),
        false,
    );
    Ok(inserted)
}

/// The sparse model: numeric indexes, fractional after LINSERT.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sparse;

impl<C: Codec, S: KvStore> ListOps<C, S> for Sparse {
    fn get(&self, list: List<'_, '_, C, S>, pos: u64) -> CmdResult<Vec<u8>> {
        let List { ctx, key, meta } = list;
        if let Some(base) = direct_base(key, meta)? {
            let index = offset(base, pos)?;
            return ctx
                .sub_get(SubKind::ListItem, key, meta, SubIdRef::Sparse(index))?
                .and_then(SubValue::into_bytes)
                .ok_or_else(|| corrupt(key, format!("list item {index:?} is missing")));
        }
        Ok(window(ctx, key, meta, pos, 1)?.remove(0).1)
    }

    fn range(&self, list: List<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>> {
        let List { ctx, key, meta } = list;
        let run = window(ctx, key, meta, start, stop - start + 1)?;
        Ok(values(run))
    }

    fn visit<F>(&self, list: List<'_, '_, C, S>, from: Side, visit: F) -> CmdResult<()>
    where
        F: FnMut(&[u8]) -> bool,
    {
        let List { ctx, key, meta } = list;
        visit_values(Items::from_side(ctx, key, meta, from), visit)
    }

    fn push<V>(&self, list: ValueMut<'_, '_, C, S>, side: Side, values: &[V]) -> CmdResult<()>
    where
        V: AsRef<[u8]>,
    {
        let ValueMut { ctx, key, meta } = list;
        let (mut min, mut max, sequential) = bounds(key, meta)?;
        for value in values {
            let index = if meta.size == 0 {
                min = SparseIndex::Int(0);
                max = SparseIndex::Int(0);
                0
            } else {
                // One past the bound at that end, which then moves there.
                let bound = side.pick(&mut min, &mut max);
                let index = match side {
                    Side::Left => truncate(*bound).checked_sub(1),
                    Side::Right => truncate(*bound).checked_add(1),
                }
                .ok_or_else(index_space_exhausted)?;
                *bound = SparseIndex::Int(index);
                index
            };
            put(ctx, key, meta, SparseIndex::Int(index), value.as_ref());
            meta.size += 1;
        }
        set_bounds(meta, min, max, sequential);
        Ok(())
    }

    fn pop(&self, list: ValueMut<'_, '_, C, S>, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>> {
        let ValueMut { ctx, key, meta } = list;
        let n = n.min(meta.size);
        if n == 0 {
            return Ok(Vec::new());
        }
        let (mut min, mut max, sequential) = bounds(key, meta)?;
        // A sequential list starts its walk at the bound, not at the start
        // of the key's range: the records of elements popped before are
        // tombstones there, which every pop would otherwise step over.
        let start = direct_base(key, meta)?.map(|_| match side {
            Side::Left => min,
            Side::Right => max,
        });
        let from_end = || Items::new(ctx, key, meta, start, side == Side::Right);
        // The popped elements, and the one after them (the new bound).
        let run = take_exactly(key, from_end(), n)?;
        if n < meta.size {
            let mut rest = from_end().skip(n as usize);
            let next = rest
                .next()
                .transpose()?
                .ok_or_else(|| corrupt(key, "list has fewer elements than its size"))?;
            *side.pick(&mut min, &mut max) = next.0;
        }
        for (index, _) in &run {
            del(ctx, key, meta, *index);
        }
        meta.size -= n;
        set_bounds(meta, min, max, sequential);
        Ok(values(run))
    }

    fn set(&self, list: ValueMut<'_, '_, C, S>, pos: u64, value: &[u8]) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let index = index_at(List::new(ctx, key, meta), pos)?;
        put(ctx, key, meta, index, value);
        Ok(())
    }

    fn insert(&self, list: ValueMut<'_, '_, C, S>, new: Insertion<'_>) -> CmdResult<bool> {
        let ValueMut { ctx, key, meta } = list;
        let (min, max, _) = bounds(key, meta)?;
        // The pivot (first match from the head) and its neighbours.
        let mut previous = None;
        let mut found = None;
        let mut items = Items::from_side(ctx, key, meta, Side::Left);
        for item in items.by_ref() {
            let (index, v) = item?;
            if v == new.pivot {
                found = Some(index);
                break;
            }
            previous = Some(index);
        }
        let Some(pivot_index) = found else {
            return Ok(false);
        };
        let neighbour = if new.before {
            previous
        } else {
            items.next().transpose()?.map(|(i, _)| i)
        };
        drop(items);
        let Some(index) = insert_index(pivot_index, neighbour, new.before) else {
            return renumber_and_insert(ctx, key, meta, new);
        };
        let index = SparseIndex::Float(index);
        put(ctx, key, meta, index, new.value);
        meta.size += 1;
        let min = if compare(index, min) == Ordering::Less {
            index
        } else {
            min
        };
        let max = if compare(index, max) == Ordering::Greater {
            index
        } else {
            max
        };
        set_bounds(meta, min, max, false);
        Ok(true)
    }

    /// LREM: deletes the matches, scanning from the head (`count >= 0`) or
    /// the tail, and moves the bounds to the first and last survivors. The
    /// list is no longer sequential afterwards, even when nothing matched.
    fn remove(&self, list: ValueMut<'_, '_, C, S>, count: i64, value: &[u8]) -> CmdResult<u64> {
        let ValueMut { ctx, key, meta } = list;
        let (mut min, mut max, _) = bounds(key, meta)?;
        let from = Side::scan_from(count);
        let items = Items::from_side(ctx, key, meta, from);
        let doomed = matches(items, value, count.unsigned_abs(), |(index, _)| index)?;
        let n = doomed.len() as u64;
        if n == meta.size {
            return Ok(n);
        }
        if n > 0 {
            let is_doomed = |i: &SparseIndex| doomed.iter().any(|d| compare(*d, *i).is_eq());
            let survivor = |side| -> CmdResult<SparseIndex> {
                for item in Items::from_side(ctx, key, meta, side) {
                    let (index, _) = item?;
                    if !is_doomed(&index) {
                        return Ok(index);
                    }
                }
                Err(corrupt(key, "list has fewer elements than its size"))
            };
            min = survivor(Side::Left)?;
            max = survivor(Side::Right)?;
            for index in &doomed {
                del(ctx, key, meta, *index);
            }
        }
        meta.size -= n;
        set_bounds(meta, min, max, false);
        Ok(n)
    }

    fn trim(&self, list: ValueMut<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let (_, _, sequential) = bounds(key, meta)?;
        let tail_cut = meta.size - 1 - stop;
        let head = take_exactly(key, Items::from_side(ctx, key, meta, Side::Left), start + 1)?;
        let tail = take_exactly(
            key,
            Items::from_side(ctx, key, meta, Side::Right),
            tail_cut + 1,
        )?;
        let (min, max) = (head[start as usize].0, tail[tail_cut as usize].0);
        for (index, _) in head[..start as usize]
            .iter()
            .chain(&tail[..tail_cut as usize])
        {
            del(ctx, key, meta, *index);
        }
        meta.size = stop - start + 1;
        set_bounds(meta, min, max, sequential);
        Ok(())
    }
}
