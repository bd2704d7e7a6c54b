//! The array list model (Kvrocks): a list's elements sit at the consecutive
//! integer indexes `[head, tail)` of its metadata, as
//! [`SubKind::ListItem`] records with id [`SubId::Index`]. Pushes and pops
//! move `head` / `tail`; an insert or removal in the middle moves the
//! elements of one side by as many indexes as needed, the side chosen by
//! the format's [`ListShift`] rule, so the indexes stay consecutive.
//!
//! `ctx.subs` returns list items in index order, so a window is read by
//! seeking to its first index.

use crate::cursors::SubCursors;
use crate::store::{GroupIter, KvIter, KvStore};
use redcodec_codec::{Codec, ListBounds, ListShift, Meta, SubId, SubIdRef, SubKind, SubValue};

use super::ops::{
    matches, put_item, take_exactly, unexpected_item, values, visit_values, Insertion, List,
    ListOps, Side, ValueMut,
};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx, SubIter};

/// Pops of up to this many elements read each by its index, as Kvrocks'
/// `List::PopMulti` does (a point read costs less than an iterator's
/// creation and seek); longer pops walk an iterator.
const POP_BY_POINT_READS: u64 = 8;

/// The `[head, tail)` bounds of a list, checked against its size.
fn bounds(key: &[u8], meta: &Meta) -> CmdResult<(u64, u64)> {
    match meta.list {
        ListBounds::Array { head, tail } if tail.checked_sub(head) == Some(meta.size) => {
            Ok((head, tail))
        }
        _ => Err(corrupt(
            key,
            format!(
                "list bounds {:?} do not hold {} elements",
                meta.list, meta.size
            ),
        )),
    }
}

/// Stores new bounds and the size they imply.
fn set_bounds(meta: &mut Meta, head: u64, tail: u64) {
    meta.list = ListBounds::Array { head, tail };
    meta.size = tail - head;
}

/// The error for a list that reached an end of the index space.
fn index_space_exhausted() -> CmdError {
    CmdError::other("ERR list index space exhausted")
}

/// The index of position `pos`.
fn index_of(key: &[u8], meta: &Meta, pos: u64) -> CmdResult<u64> {
    let (head, _) = bounds(key, meta)?;
    head.checked_add(pos).ok_or_else(index_space_exhausted)
}

/// Elements from index `from` (inclusive) towards the tail, or towards the
/// head when `reverse`, as `(index, value)`; ends at the list's bounds.
struct Items<'e, 'k, C: Codec, S: KvStore, I = GroupIter<<S as KvStore>::Iter<'e>>> {
    subs: SubIter<'e, 'k, C, S, I>,
    key: &'k [u8],
    head: u64,
    tail: u64,
}

impl<'e, 'k, C: Codec, S: KvStore> Items<'e, 'k, C, S> {
    fn new(
        ctx: &Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        from: u64,
        reverse: bool,
    ) -> CmdResult<Items<'e, 'k, C, S>> {
        let (head, tail) = bounds(key, meta)?;
        let subs = ctx.subs(
            SubKind::ListItem,
            key,
            meta,
            Some(SubIdRef::Index(from)),
            reverse,
        );
        Ok(Items {
            subs,
            key,
            head,
            tail,
        })
    }

    /// From the `side` end, walking inward.
    fn from_side(
        ctx: &Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        side: Side,
    ) -> CmdResult<Items<'e, 'k, C, S>> {
        let (head, tail) = bounds(key, meta)?;
        let (start, reverse) = side.pick((head, false), (tail.saturating_sub(1), true));
        Items::new(ctx, key, meta, start, reverse)
    }
}

impl<C: Codec, S: KvStore, I: KvIter> Iterator for Items<'_, '_, C, S, I> {
    type Item = CmdResult<(u64, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.subs.next()? {
            Err(e) => Some(Err(e)),
            Ok((SubId::Index(i), _)) if i < self.head || i >= self.tail => None,
            Ok((SubId::Index(i), SubValue::Bytes(v))) => Some(Ok((i, v))),
            Ok((id, value)) => Some(Err(unexpected_item(self.key, id, value))),
        }
    }
}

impl Array {
    /// [`ListOps::visit`] from the head, on `cursors`: the items from
    /// index `head` on, in index order.
    pub(super) fn visit_on<'e, C: Codec, S: KvStore>(
        &self,
        list: List<'_, 'e, C, S>,
        cursors: &mut SubCursors<'e, S>,
        visit: impl FnMut(&[u8]) -> bool,
    ) -> CmdResult<()> {
        let List { ctx, key, meta } = list;
        let (head, tail) = bounds(key, meta)?;
        if head == tail {
            return Ok(());
        }
        let from = SubIdRef::Index(head);
        let subs = ctx.subs_on(cursors, SubKind::ListItem, key, meta, Some(from));
        let items = Items {
            subs,
            key,
            head,
            tail,
        };
        visit_values(items, visit)
    }
}

fn put<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &Meta, i: u64, v: &[u8]) {
    put_item(ctx, key, meta, SubId::Index(i), v);
}

fn del<C: Codec, S: KvStore>(ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &Meta, index: u64) {
    ctx.sub_del(SubKind::ListItem, key, meta, SubIdRef::Index(index));
}

/// Whether a move in the middle shifts the head side, given how many
/// elements each side would move.
fn shifts_head_side(shift: ListShift, head_side: u64, tail_side: u64) -> bool {
    match shift {
        ListShift::ShorterSideHeadOnTie | ListShift::PivotHalfHeadOnTie => head_side <= tail_side,
    }
}

/// Whether LINSERT at the gap before index `gap` (next to the pivot at
/// `pivot`) in `[head, tail)` moves the head side down.
fn insert_moves_head_side(shift: ListShift, head: u64, tail: u64, pivot: u64, gap: u64) -> bool {
    match shift {
        ListShift::ShorterSideHeadOnTie => shifts_head_side(shift, gap - head, tail - gap),
        // Elements before the pivot against elements after it.
        ListShift::PivotHalfHeadOnTie => pivot - head <= tail - 1 - pivot,
    }
}

/// The index of the first element equal to `value`, from the head.
fn find_first<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    value: &[u8],
) -> CmdResult<Option<u64>> {
    let (head, _) = bounds(key, meta)?;
    for item in Items::new(ctx, key, meta, head, false)? {
        let (index, v) = item?;
        if v == value {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// Moves the `n` elements starting at index `from` one index towards the
/// head (`down`) or the tail.
fn move_by_one<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    from: u64,
    n: u64,
    down: bool,
) -> CmdResult<()> {
    for (index, value) in take_exactly(key, Items::new(ctx, key, meta, from, false)?, n)? {
        let to = if down { index - 1 } else { index + 1 };
        put(ctx, key, meta, to, &value);
    }
    Ok(())
}

/// The indexes of up to `limit` elements equal to `value` (0: no limit),
/// scanning from the `from` end; ascending.
fn matching_indexes<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    value: &[u8],
    from: Side,
    limit: u64,
) -> CmdResult<Vec<u64>> {
    let (head, tail) = bounds(key, meta)?;
    if head == tail {
        return Ok(Vec::new());
    }
    let items = Items::from_side(ctx, key, meta, from)?;
    let mut found = matches(items, value, limit, |(index, _)| index)?;
    found.sort_unstable();
    Ok(found)
}

/// Walks from index `from` towards the head (`reverse`) or the tail to the
/// list's end, skipping the `doomed` indexes and writing every survivor
/// at the next free index, counted from `from`.
fn compact<C: Codec, S: KvStore>(
    ctx: &mut Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    doomed: &[u64],
    from: u64,
    reverse: bool,
) -> CmdResult<()> {
    let mut free = from;
    for item in Items::new(ctx, key, meta, from, reverse)? {
        let (index, value) = item?;
        if doomed.binary_search(&index).is_ok() {
            continue;
        }
        put(ctx, key, meta, free, &value);
        free = if reverse { free - 1 } else { free + 1 };
    }
    Ok(())
}

/// The array model: consecutive integer indexes `[head, tail)`; `shift`
/// picks the side that moves on LINSERT and LREM.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Array {
    /// Which side an insert or removal in the middle moves.
    pub(crate) shift: ListShift,
}

impl<C: Codec, S: KvStore> ListOps<C, S> for Array {
    fn get(&self, list: List<'_, '_, C, S>, pos: u64) -> CmdResult<Vec<u8>> {
        let List { ctx, key, meta } = list;
        let index = index_of(key, meta, pos)?;
        ctx.sub_get(SubKind::ListItem, key, meta, SubIdRef::Index(index))?
            .and_then(SubValue::into_bytes)
            .ok_or_else(|| corrupt(key, format!("list item {index} is missing")))
    }

    fn range(&self, list: List<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>> {
        let List { ctx, key, meta } = list;
        let from = index_of(key, meta, start)?;
        let items = Items::new(ctx, key, meta, from, false)?;
        Ok(values(take_exactly(key, items, stop - start + 1)?))
    }

    fn visit<F>(&self, list: List<'_, '_, C, S>, from: Side, visit: F) -> CmdResult<()>
    where
        F: FnMut(&[u8]) -> bool,
    {
        let List { ctx, key, meta } = list;
        let (head, tail) = bounds(key, meta)?;
        if head == tail {
            return Ok(());
        }
        visit_values(Items::from_side(ctx, key, meta, from)?, visit)
    }

    fn push<V>(&self, list: ValueMut<'_, '_, C, S>, side: Side, values: &[V]) -> CmdResult<()>
    where
        V: AsRef<[u8]>,
    {
        let ValueMut { ctx, key, meta } = list;
        let (head, tail) = bounds(key, meta)?;
        let n = values.len() as u64;
        match side {
            Side::Left => {
                let new_head = head.checked_sub(n).ok_or_else(index_space_exhausted)?;
                for (i, value) in values.iter().enumerate() {
                    put(ctx, key, meta, head - 1 - i as u64, value.as_ref());
                }
                set_bounds(meta, new_head, tail);
            }
            Side::Right => {
                let new_tail = tail.checked_add(n).ok_or_else(index_space_exhausted)?;
                for (i, value) in values.iter().enumerate() {
                    put(ctx, key, meta, tail + i as u64, value.as_ref());
                }
                set_bounds(meta, head, new_tail);
            }
        }
        Ok(())
    }

    fn pop(&self, list: ValueMut<'_, '_, C, S>, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>> {
        let ValueMut { ctx, key, meta } = list;
        let (head, tail) = bounds(key, meta)?;
        let n = n.min(tail - head);
        if n == 0 {
            return Ok(Vec::new());
        }
        let run = if n <= POP_BY_POINT_READS {
            let mut run = Vec::with_capacity(n as usize);
            for i in 0..n {
                let index = side.pick(head + i, tail - 1 - i);
                let list = List {
                    ctx: &*ctx,
                    key,
                    meta: &*meta,
                };
                run.push((index, self.get(list, index - head)?));
            }
            run
        } else {
            take_exactly(key, Items::from_side(ctx, key, meta, side)?, n)?
        };
        for (index, _) in &run {
            del(ctx, key, meta, *index);
        }
        match side {
            Side::Left => set_bounds(meta, head + n, tail),
            Side::Right => set_bounds(meta, head, tail - n),
        }
        Ok(values(run))
    }

    fn set(&self, list: ValueMut<'_, '_, C, S>, pos: u64, value: &[u8]) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let index = index_of(key, meta, pos)?;
        put(ctx, key, meta, index, value);
        Ok(())
    }

    /// LINSERT: the new element goes into the gap before index `gap` (the
    /// pivot's index, or the one after it for AFTER). The side of the gap
    /// chosen by `shift` moves one index outward to make room.
    fn insert(&self, list: ValueMut<'_, '_, C, S>, new: Insertion<'_>) -> CmdResult<bool> {
        let ValueMut { ctx, key, meta } = list;
        let shift = self.shift;
        let (head, tail) = bounds(key, meta)?;
        let Some(pivot_index) = find_first(ctx, key, meta, new.pivot)? else {
            return Ok(false);
        };
        let gap = if new.before {
            pivot_index
        } else {
            pivot_index + 1
        };
        if insert_moves_head_side(shift, head, tail, pivot_index, gap) {
            let new_head = head.checked_sub(1).ok_or_else(index_space_exhausted)?;
            move_by_one(ctx, key, meta, head, gap - head, true)?;
            put(ctx, key, meta, gap - 1, new.value);
            set_bounds(meta, new_head, tail);
        } else {
            let new_tail = tail.checked_add(1).ok_or_else(index_space_exhausted)?;
            move_by_one(ctx, key, meta, gap, tail - gap, false)?;
            put(ctx, key, meta, gap, new.value);
            set_bounds(meta, head, new_tail);
        }
        Ok(true)
    }

    /// LREM: removes the matching elements, then closes the holes by moving
    /// the elements of the side chosen by `shift`: towards the tail when the
    /// head side (head up to the highest match) moves, else towards the head;
    /// the freed indexes at that end are deleted.
    fn remove(&self, list: ValueMut<'_, '_, C, S>, count: i64, value: &[u8]) -> CmdResult<u64> {
        let ValueMut { ctx, key, meta } = list;
        let shift = self.shift;
        let (head, tail) = bounds(key, meta)?;
        let from = Side::scan_from(count);
        let doomed = matching_indexes(ctx, key, meta, value, from, count.unsigned_abs())?;
        let n = doomed.len() as u64;
        let (Some(&min), Some(&max)) = (doomed.first(), doomed.last()) else {
            return Ok(0);
        };
        if n == tail - head {
            return Ok(n);
        }
        if shifts_head_side(shift, max - head, tail - 1 - min) {
            compact(ctx, key, meta, &doomed, max, true)?;
            for index in head..head + n {
                del(ctx, key, meta, index);
            }
            set_bounds(meta, head + n, tail);
        } else {
            compact(ctx, key, meta, &doomed, min, false)?;
            for index in tail - n..tail {
                del(ctx, key, meta, index);
            }
            set_bounds(meta, head, tail - n);
        }
        Ok(n)
    }

    fn trim(&self, list: ValueMut<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let (head, tail) = bounds(key, meta)?;
        let (new_head, new_tail) = (head + start, head + stop + 1);
        for index in (head..new_head).chain(new_tail..tail) {
            del(ctx, key, meta, index);
        }
        set_bounds(meta, new_head, new_tail);
        Ok(())
    }
}

#[cfg(test)]
mod shift_tests {
    use super::*;

    const KV: ListShift = ListShift::ShorterSideHeadOnTie;
    const BW: ListShift = ListShift::PivotHalfHeadOnTie;

    #[test]
    fn linsert_side_rules_differ_as_the_blackwidow_spec_says() {
        // [x, P, y] at 10..13, LINSERT AFTER P (pivot 11, gap 12):
        // blackwidow moves x, P down; Kvrocks moves y up.
        assert!(insert_moves_head_side(BW, 10, 13, 11, 12));
        assert!(!insert_moves_head_side(KV, 10, 13, 11, 12));
        // [x, P] at 10..12, LINSERT BEFORE P (pivot 11, gap 11):
        // blackwidow moves P up; Kvrocks moves x down.
        assert!(!insert_moves_head_side(BW, 10, 12, 11, 11));
        assert!(insert_moves_head_side(KV, 10, 12, 11, 11));
        // Blackwidow: BEFORE and AFTER choose alike; a tie moves the head.
        for gap in [12, 13] {
            assert!(insert_moves_head_side(BW, 10, 15, 12, gap));
        }
        assert!(!insert_moves_head_side(BW, 10, 14, 12, 12));
    }

    #[test]
    fn blackwidow_rule_is_its_mid_comparison() {
        // pivot <= left + (right - left) / 2 with left = head - 1, right = tail.
        for n in 1u64..12 {
            let (head, tail) = (100, 100 + n);
            for pivot in head..tail {
                let (left, right) = (head - 1, tail);
                let mid = left + (right - left) / 2;
                for gap in [pivot, pivot + 1] {
                    assert_eq!(
                        insert_moves_head_side(BW, head, tail, pivot, gap),
                        pivot <= mid,
                        "n {n} pivot {pivot}"
                    );
                }
            }
        }
    }
}
