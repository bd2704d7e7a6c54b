//! Element records read key after key, in key order, through one
//! iterator per element family ([`SubCursors`]) that a seek moves from one
//! key's range to the next, instead of an iterator made for each key:
//! making a RocksDB iterator (a merge of every level's tables) costs more
//! than seeking one. For walks over a store that stands still (migration,
//! verification); the iterators see the store as it was when each was
//! made.

use std::cmp::Ordering;

use redcodec_codec::{Codec, Meta, Place, SubIdRef, SubKind};

use crate::error::CmdResult;
use crate::keyspace::{Ctx, KeyView, SubIter};
use crate::store::{KvIter, KvStore, Order, Pair, StoreError};

/// One unbounded iterator per element family, made on first use and kept.
pub struct SubCursors<'e, S: KvStore> {
    open: Vec<(Place, Cursor<S::Iter<'e>>)>,
}

/// A family's iterator, and where the last range read on it left it.
struct Cursor<I> {
    it: I,
    /// Set when a range was read to its end: its upper bound, and the
    /// first pair at or past it (`None`: the family ends there). A next
    /// range that starts at or past the bound, and at or before that
    /// pair, starts with the pair: no seek.
    parked: Option<(Vec<u8>, Option<Pair>)>,
}

impl<S: KvStore> Default for SubCursors<'_, S> {
    fn default() -> Self {
        SubCursors { open: Vec::new() }
    }
}

impl<'e, S: KvStore> SubCursors<'e, S> {
    /// No iterator made yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cursor of the family at `place`.
    fn at(&mut self, store: &'e S, place: Place) -> &mut Cursor<S::Iter<'e>> {
        family(&mut self.open, place, || Cursor {
            it: store.scan_all(place),
            parked: None,
        })
    }
}

/// The entry of the family at `place` in `open`, made by `make` on first
/// use (a store has a handful of families: a list beats a map).
fn family<T>(open: &mut Vec<(Place, T)>, place: Place, make: impl FnOnce() -> T) -> &mut T {
    let index = match open.iter().position(|(p, _)| *p == place) {
        Some(index) => index,
        None => {
            open.push((place, make()));
            open.len() - 1
        }
    };
    &mut open[index].1
}

/// One key's range read on a family's cursor: it ends at the first pair
/// at or past the range's upper bound, and parks the cursor there.
pub struct Within<'c, I> {
    cursor: &'c mut Cursor<I>,
    /// The range's first pair, when the parked cursor held it.
    first: Option<Pair>,
    upper: Vec<u8>,
    order: Order,
    ended: bool,
}

impl<'c, I: KvIter> Within<'c, I> {
    /// The range `[lower, upper)` on `cursor`, in `order`.
    fn new(cursor: &'c mut Cursor<I>, lower: &[u8], upper: Vec<u8>, order: Order) -> Self {
        let mut within = Within {
            cursor,
            first: None,
            upper,
            order,
            ended: false,
        };
        match within.cursor.parked.take() {
            Some((bound, head)) if order(lower, &bound) != Ordering::Less => match head {
                // Nothing lies between the bound and the head.
                Some(head) if order(&head.0, lower) != Ordering::Less => {
                    within.first = Some(head);
                }
                Some(_) => within.cursor.it.seek(lower),
                None => {
                    within.cursor.parked = Some((bound, None));
                    within.ended = true;
                }
            },
            _ => within.cursor.it.seek(lower),
        }
        within
    }
}

impl<I: KvIter> KvIter for Within<'_, I> {
    fn seek(&mut self, key: &[u8]) {
        self.cursor.parked = None;
        self.first = None;
        self.cursor.it.seek(key);
        self.ended = false;
    }

    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        if self.ended {
            return Ok(None);
        }
        let pair = match self.first.take() {
            Some(pair) => Some(pair),
            None => self.cursor.it.next()?,
        };
        match pair {
            Some((k, v)) if (self.order)(&k, &self.upper) == Ordering::Less => Ok(Some((k, v))),
            head => {
                self.ended = true;
                self.cursor.parked = Some((std::mem::take(&mut self.upper), head));
                Ok(None)
            }
        }
    }
}

impl<'e, C: Codec, S: KvStore> Ctx<'e, C, S> {
    /// The element records of `kind` of `key`, forward from the first
    /// (or from `from`, inclusive), read on `cursors` (as [`Ctx::subs`]
    /// reads them on an iterator of their own). Not inside a group of
    /// commands: the group's held-back writes are not laid over the
    /// cursors.
    pub fn subs_on<'c, 'k>(
        &self,
        cursors: &'c mut SubCursors<'e, S>,
        kind: SubKind,
        key: &'k [u8],
        meta: &'k Meta,
        from: Option<SubIdRef<'_>>,
    ) -> SubIter<'e, 'k, C, S, Within<'c, S::Iter<'e>>> {
        let codec = self.codec();
        let range = codec.sub_range(kind.of(key, meta));
        let lower = match from {
            Some(id) => codec.sub_key(kind.of(key, meta), id),
            None => range.lower,
        };
        let store = self.eng.store();
        let cursor = cursors.at(store, range.place);
        let order = store.order(range.place);
        let within = Within::new(cursor, &lower, range.upper, order);
        SubIter::over(codec, kind, key, meta, within)
    }

    /// [`Ctx::view`] with the metadata records read on `cursors`, moved
    /// forward from key to key instead of a point read each: for walks
    /// in key order over a store that stands still. Not inside a group
    /// of commands (its held-back writes are not laid over the cursors).
    pub fn view_on(&self, cursors: &mut ReadCursors<'e, S>, key: &[u8]) -> CmdResult<KeyView> {
        self.view_by(key, |place, raw_key, ty| {
            let raw = cursors.get(place, raw_key)?;
            Ok(raw.map(|raw| self.codec().decode_meta(ty, &raw)))
        })
    }
}

/// Records read ahead before a [`ReadCursors`] iterator seeks instead.
const STEPS_BEFORE_SEEK: usize = 64;

/// Point reads of records asked for mostly in their family's order (the
/// owners' metadata of element records read family by family): one
/// iterator per family moved forward, a few steps from one record to the
/// next, seeking only when the record is behind it or far ahead. Far
/// cheaper than a point read each. Like [`SubCursors`], for a store that
/// stands still.
pub struct ReadCursors<'e, S: KvStore> {
    store: &'e S,
    open: Vec<(Place, ReadCursor<S::Iter<'e>>)>,
}

/// One family's iterator and the record it is at.
struct ReadCursor<I> {
    order: Order,
    it: I,
    /// The record the iterator is at (`None`: past the end, or before
    /// the first read).
    at: Option<Pair>,
    /// A key from which no record lies before `at` (before the end when
    /// `at` is `None`): a key asked for in between is absent, with no
    /// move. Set by a read that found its key absent; cleared when `at`
    /// moves.
    gap: Option<Vec<u8>>,
}

impl<'e, S: KvStore> ReadCursors<'e, S> {
    /// No iterator made yet.
    pub fn new(store: &'e S) -> Self {
        ReadCursors {
            store,
            open: Vec::new(),
        }
    }

    /// The value of the record `key` of the family at `place`, if stored.
    pub fn get(&mut self, place: Place, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let store = self.store;
        family(&mut self.open, place, || ReadCursor {
            order: store.order(place),
            it: store.scan_all(place),
            at: None,
            gap: None,
        })
        .get(key)
    }
}

impl<I: KvIter> ReadCursor<I> {
    fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let order = self.order;
        let in_gap = self.gap.as_deref().is_some_and(|gap| {
            order(gap, key) != Ordering::Greater
                && self
                    .at
                    .as_ref()
                    .is_none_or(|(at, _)| order(key, at) == Ordering::Less)
        });
        if in_gap {
            return Ok(None);
        }
        let mut steps = match &self.at {
            Some((k, v)) => match order(k, key) {
                Ordering::Equal => return Ok(Some(v.clone())),
                Ordering::Less => STEPS_BEFORE_SEEK,
                Ordering::Greater => 0,
            },
            None => 0,
        };
        self.gap = None;
        while steps > 0 {
            steps -= 1;
            self.at = self.it.next()?;
            match &self.at {
                Some((k, v)) if order(k, key) == Ordering::Equal => return Ok(Some(v.clone())),
                Some((k, _)) if order(k, key) == Ordering::Less => {}
                // Past the key, from a record before it: nothing between.
                _ => return Ok(self.absent(key)),
            }
        }
        self.it.seek(key);
        self.at = self.it.next()?;
        Ok(match &self.at {
            Some((k, v)) if order(k, key) == Ordering::Equal => Some(v.clone()),
            _ => self.absent(key),
        })
    }

    /// `key` is absent, and so is every key from it up to `at`.
    fn absent(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.gap = Some(key.to_vec());
        None
    }
}
