//! [`GroupIter`]: a store's iterator merged with the writes a
//! [`crate::Group`] holds back, so a scan reads the store as if the group
//! were committed — forward or reverse, after seeks, in the family's
//! order (any comparator).

use std::cmp::Ordering;

use crate::kv::{KvIter, Order};
use crate::{Pair, StoreError};

/// The group's writes within one scanned range.
pub(crate) struct Overlay {
    /// Each key's last write in the range, in the family's order:
    /// `Some(value)` put, `None` deleted.
    pub(crate) keys: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// The family's deleted ranges, `[lower, upper)`.
    pub(crate) ranges: Vec<(Vec<u8>, Vec<u8>)>,
    /// The family's order.
    pub(crate) order: Order,
}

impl Overlay {
    /// Whether a deleted range holds `key`.
    fn deletes(&self, key: &[u8]) -> bool {
        let order = self.order;
        self.ranges
            .iter()
            .any(|(a, b)| order(a, key) != Ordering::Greater && order(key, b) == Ordering::Less)
    }
}

/// A store iterator with a group's writes laid over it.
pub struct GroupIter<I> {
    base: I,
    /// The base's next pair, read ahead.
    head: Option<Pair>,
    /// Whether the base has ended (until the next seek).
    base_done: bool,
    overlay: Option<Overlay>,
    reverse: bool,
    /// Forward: the index of the overlay's next key. Reverse: one past it.
    next: usize,
}

impl<I: KvIter> GroupIter<I> {
    /// `base` (a scan made with `from` and `reverse`) with `overlay` over
    /// it; without one, `base` as it is.
    pub(crate) fn new(
        base: I,
        overlay: Option<Overlay>,
        from: Option<&[u8]>,
        reverse: bool,
    ) -> GroupIter<I> {
        let next = match (&overlay, reverse) {
            (Some(o), true) => o.keys.len(),
            _ => 0,
        };
        let mut it = GroupIter {
            base,
            head: None,
            base_done: false,
            overlay,
            reverse,
            next,
        };
        if let Some(key) = from {
            it.position(key);
        }
        it
    }

    /// An iterator of the store alone.
    pub fn plain(base: I) -> GroupIter<I> {
        GroupIter::new(base, None, None, false)
    }

    /// Places the overlay's cursor at `key` (at or after it forward, at or
    /// before it in reverse).
    fn position(&mut self, key: &[u8]) {
        let Some(overlay) = &self.overlay else {
            return;
        };
        let order = overlay.order;
        self.next = if self.reverse {
            overlay
                .keys
                .partition_point(|(k, _)| order(k, key) != Ordering::Greater)
        } else {
            overlay
                .keys
                .partition_point(|(k, _)| order(k, key) == Ordering::Less)
        };
    }

    /// The overlay's next key and write, if any.
    fn peek(&self) -> Option<&(Vec<u8>, Option<Vec<u8>>)> {
        let keys = &self.overlay.as_ref()?.keys;
        if self.reverse {
            self.next.checked_sub(1).map(|i| &keys[i])
        } else {
            keys.get(self.next)
        }
    }

    /// Moves past the overlay's next key.
    fn advance(&mut self) {
        if self.reverse {
            self.next -= 1;
        } else {
            self.next += 1;
        }
    }

    /// The base's next pair not deleted by a range of the group.
    fn fill_head(&mut self) -> Result<(), StoreError> {
        while self.head.is_none() && !self.base_done {
            match self.base.next()? {
                None => self.base_done = true,
                Some((k, v)) => {
                    let deleted = self.overlay.as_ref().is_some_and(|o| o.deletes(&k));
                    if !deleted {
                        self.head = Some((k, v));
                    }
                }
            }
        }
        Ok(())
    }
}

impl<I: KvIter> KvIter for GroupIter<I> {
    fn seek(&mut self, key: &[u8]) {
        self.base.seek(key);
        self.head = None;
        self.base_done = false;
        self.position(key);
    }

    #[inline]
    fn next(&mut self) -> Result<Option<Pair>, StoreError> {
        let Some(order) = self.overlay.as_ref().map(|o| o.order) else {
            return self.base.next();
        };
        self.merged_next(order)
    }
}

impl<I: KvIter> GroupIter<I> {
    /// [`KvIter::next`] with an overlay: the base's and the group's pairs
    /// merged in `order`.
    fn merged_next(&mut self, order: Order) -> Result<Option<Pair>, StoreError> {
        loop {
            self.fill_head()?;
            let ahead = match (&self.head, self.peek()) {
                (None, None) => return Ok(None),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((b, _)), Some((o, _))) => {
                    let by_order = order(b, o);
                    if self.reverse {
                        by_order.reverse()
                    } else {
                        by_order
                    }
                }
            };
            // `ahead`: how the base's next key stands to the overlay's, in
            // the direction of the scan.
            if ahead == Ordering::Less {
                return Ok(self.head.take());
            }
            if ahead == Ordering::Equal {
                // The group wrote this key: its write decides.
                self.head = None;
            }
            let (key, write) = self.peek().cloned().unwrap_or_default();
            self.advance();
            if let Some(value) = write {
                return Ok(Some((key, value)));
            }
        }
    }
}
