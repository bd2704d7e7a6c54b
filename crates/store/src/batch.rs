//! [`Batch`]: the writes of one command, queued by place and applied
//! atomically by a [`crate::KvStore`].

use redcodec_codec::{KeyRange, Place};

/// Pending writes of one command; written as one RocksDB write batch per
/// instance it touches.
#[derive(Default)]
pub struct Batch {
    pub(crate) pending: Vec<(Place, Op)>,
    /// The order [`Batch::sort_by_record`] found for `pending` (indices
    /// into it), or empty: the order they were queued in. Either order
    /// writes the same records; a store may follow this one.
    pub(crate) order: Vec<u32>,
    /// Where each group of writes marked by [`Batch::begin_group`] begins
    /// (indices into `pending`, ascending).
    groups: Vec<u32>,
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

    /// The bytes of its key and value (or range bounds).
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Op::Put(a, b) | Op::DeleteRange(a, b) => a.len() + b.len(),
            Op::Delete(key) => key.len(),
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

    /// Marks the writes queued from here on as a group whose records lie
    /// next to each other in each place's order, apart from every other
    /// group's: the records of one key, whose element records all begin
    /// with the key. A hint to [`Batch::sort_by_record`], which then sorts
    /// each group on its own and the groups by their first records; it
    /// finds the same order with or without the hint, right or wrong.
    pub fn begin_group(&mut self) {
        if self.groups.last() != Some(&(self.pending.len() as u32)) {
            self.groups.push(self.pending.len() as u32);
        }
    }

    /// Finds the order of the queued writes by place, then key (bytes),
    /// keeping the order of writes to one record, so that RocksDB inserts
    /// them into its memtable in order (each insert then starts from the
    /// last one's position): the store writes them so. The writes
    /// themselves stay where they are (moving them costs as much as the
    /// sort). A batch with a range delete, whose place in the order
    /// matters, is left as it is.
    ///
    /// The writes are ordered through small sort keys: the
    /// place, and 32 bytes of the key after the prefix every key of the
    /// batch shares (a namespace, say); only writes whose 32 bytes are
    /// equal compare the rest of their keys, then their order in the batch.
    /// Writes marked in groups ([`Batch::begin_group`]) are sorted group by
    /// group, and the groups by their first writes
    /// (`sorted_in_groups`): a load's batch holds a few records per key,
    /// and this takes half the time of one sort of them all.
    pub fn sort_by_record(&mut self) {
        if self
            .pending
            .iter()
            .any(|(_, op)| matches!(op, Op::DeleteRange(..)))
        {
            return;
        }
        let shared = self.shared_prefix();
        SORT_KEYS.with_borrow_mut(|keys| {
            keys.clear();
            keys.extend(
                self.pending
                    .iter()
                    .enumerate()
                    .map(|(at, (place, op))| SortKey::of(*place, op.key(), shared, at)),
            );
            let pending = &self.pending;
            let compare = |a: &SortKey, b: &SortKey| {
                (a.place, a.prefix, a.len)
                    .cmp(&(b.place, b.prefix, b.len))
                    .then_with(|| {
                        let rest = |k: &SortKey| {
                            let key = pending[k.at as usize].1.key();
                            key.get(shared + SortKey::PREFIX..).unwrap_or(&[])
                        };
                        rest(a).cmp(rest(b)).then(a.at.cmp(&b.at))
                    })
            };
            self.order = match sorted_in_groups(keys, &self.groups, compare) {
                Some(order) => order,
                None => {
                    keys.sort_unstable_by(compare);
                    keys.iter().map(|k| k.at).collect()
                }
            };
        });
    }

    /// The queued writes in the order [`Batch::sort_by_record`] found, or
    /// as queued (if it was not called, or writes were queued since).
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    pub(crate) fn ordered(&self) -> impl Iterator<Item = &(Place, Op)> {
        // An order found before more writes were queued is not used.
        let sorted = self.order.len() == self.pending.len();
        (0..self.pending.len()).map(move |j| {
            let at = if sorted { self.order[j] as usize } else { j };
            &self.pending[at]
        })
    }

    /// The length of the prefix every queued key shares.
    fn shared_prefix(&self) -> usize {
        let mut keys = self.pending.iter().map(|(_, op)| op.key());
        let Some(first) = keys.next() else {
            return 0;
        };
        keys.fold(first.len(), |shared, key| {
            first[..shared]
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        })
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

thread_local! {
    /// [`Batch::sort_by_record`]'s sort keys, kept between batches: a load
    /// sorts batches of one size over and over, and memory taken anew for
    /// each costs as much as the sort (the kernel zeroes every page).
    static SORT_KEYS: std::cell::RefCell<Vec<SortKey>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What [`Batch::sort_by_record`] orders a write by: its place, then the
/// first [`SortKey::PREFIX`] bytes of its key after the batch's shared
/// prefix (zero-padded) and that part's length up to one more (so that of
/// two keys equal but for the padding, the shorter sorts first, as its
/// bytes do), then the rest of its key and its index `at` in the batch.
/// The prefix is long enough to hold a collection's key and most of an
/// element's name, so the rest is rarely read.
struct SortKey {
    prefix: [u64; 4],
    place: u32,
    at: u32,
    len: u8,
}

impl SortKey {
    /// The bytes of a key a sort key holds.
    const PREFIX: usize = 32;

    /// Whether a group's sorted writes `self` and `before` (the one before
    /// it) belong to one run: one place, and one first byte after the
    /// batch's shared prefix. A format that keeps a key's metadata and its
    /// elements in one family tells them apart by a tag before the key
    /// (Ardb's type, Nemo's `H` and `h`): cut there, the key's metadata
    /// and elements are two runs, each apart from the other keys'.
    fn same_run(&self, before: &SortKey) -> bool {
        self.place == before.place && self.prefix[0] >> 56 == before.prefix[0] >> 56
    }

    fn of(place: Place, key: &[u8], shared: usize, at: usize) -> SortKey {
        let tail = key.get(shared..).unwrap_or(&[]);
        let mut prefix = [0u8; Self::PREFIX];
        let n = tail.len().min(Self::PREFIX);
        prefix[..n].copy_from_slice(&tail[..n]);
        let word = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&prefix[i * 8..i * 8 + 8]);
            u64::from_be_bytes(bytes)
        };
        SortKey {
            // Layouts have a handful of instances and families.
            place: ((place.instance as u32) << 16) | place.cf as u32,
            prefix: [word(0), word(1), word(2), word(3)],
            len: tail.len().min(Self::PREFIX + 1) as u8,
            at: at as u32,
        }
    }
}

/// The order of `keys` (the writes' indices) sorted by `compare`, found
/// from `groups` (where each group begins, see [`Batch::begin_group`]):
/// each group sorted on its own, cut into runs ([`SortKey::same_run`]), the
/// runs sorted by their first key and checked to follow one another
/// (each run's last key before the next run's first). `compare` orders
/// every two writes one way, so an order that passes the check is the
/// sorted order; `None` (and the groups left sorted) if the groups are
/// fewer than two or their runs interleave.
fn sorted_in_groups(
    keys: &mut [SortKey],
    groups: &[u32],
    compare: impl Fn(&SortKey, &SortKey) -> std::cmp::Ordering,
) -> Option<Vec<u32>> {
    if groups.len() < 2 {
        return None;
    }
    // Where each group begins and the last one ends (writes queued before
    // the first mark are a group too).
    let mut bounds = Vec::with_capacity(groups.len() + 2);
    if groups[0] != 0 {
        bounds.push(0);
    }
    bounds.extend(groups.iter().map(|&g| g as usize));
    bounds.push(keys.len());
    let mut runs: Vec<(usize, usize)> = Vec::with_capacity(2 * bounds.len());
    for group in bounds.windows(2) {
        let (start, end) = (group[0], group[1]);
        keys[start..end].sort_unstable_by(&compare);
        let mut run = start;
        for at in start + 1..end {
            if !keys[at].same_run(&keys[at - 1]) {
                runs.push((run, at));
                run = at;
            }
        }
        if run < end {
            runs.push((run, end));
        }
    }
    runs.sort_unstable_by(|a, b| compare(&keys[a.0], &keys[b.0]));
    let apart = runs
        .windows(2)
        .all(|w| compare(&keys[w[0].1 - 1], &keys[w[1].0]).is_lt());
    apart.then(|| {
        runs.iter()
            .flat_map(|&(start, end)| keys[start..end].iter().map(|k| k.at))
            .collect()
    })
}

/// A stored key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);

/// A stored key and value, borrowed from where they were read.
pub type PairRef<'a> = (&'a [u8], &'a [u8]);

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// The bytes of [`hex()`]'s text (either case); `None` for text that is not
/// hex pairs.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    hex::decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The queued puts as (place, key, value), in order.
    fn puts(batch: &Batch) -> Vec<(Place, Vec<u8>, Vec<u8>)> {
        batch
            .ordered()
            .map(|(place, op)| match op {
                Op::Put(k, v) => (*place, k.clone(), v.clone()),
                _ => unreachable!("puts only"),
            })
            .collect()
    }

    /// Keys that share long prefixes, differ in their last bytes, end in
    /// zero bytes, or repeat.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::sample::select(vec![
                &b""[..],
                b"\x0b__namespace",
                b"\x0b__namespace\0\0\0\x05key:",
            ]),
            prop::collection::vec(prop::sample::select(vec![0u8, 1, b'k', 0xff]), 0..24),
        )
            .prop_map(|(shared, tail)| [shared, &tail].concat())
    }

    proptest! {
        #[test]
        fn sorting_by_record_orders_as_a_stable_sort_of_the_bytes(
            writes in prop::collection::vec((0usize..2, 0usize..2, key()), 0..200)
        ) {
            let mut batch = Batch::default();
            for (at, (instance, cf, key)) in writes.into_iter().enumerate() {
                batch.put(Place::new(instance, cf), key, at.to_string().into_bytes());
            }
            let mut expected = puts(&batch);
            expected.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            batch.sort_by_record();
            prop_assert_eq!(puts(&batch), expected);
        }
    }

    proptest! {
        #[test]
        fn groups_marked_anywhere_leave_the_order_as_it_was(
            writes in prop::collection::vec((0usize..2, 0usize..2, key(), any::<bool>()), 0..200)
        ) {
            let mut batch = Batch::default();
            for (at, (instance, cf, key, begins)) in writes.into_iter().enumerate() {
                if begins {
                    batch.begin_group();
                }
                batch.put(Place::new(instance, cf), key, at.to_string().into_bytes());
            }
            let mut expected = puts(&batch);
            expected.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            batch.sort_by_record();
            prop_assert_eq!(puts(&batch), expected);
        }

        #[test]
        fn groups_of_one_keys_records_are_sorted_as_a_whole(
            groups in prop::collection::vec(
                (any::<u16>(), prop::collection::vec((0usize..2, 0usize..3, key()), 1..8)),
                2..40,
            )
        ) {
            // Each group's keys begin with its own two bytes, as a key's
            // element records begin with the key; a group may repeat.
            let mut batch = Batch::default();
            let mut at = 0;
            for (name, writes) in &groups {
                batch.begin_group();
                for (instance, cf, tail) in writes {
                    let key = [&b"ns"[..], &name.to_be_bytes(), tail].concat();
                    batch.put(Place::new(*instance, *cf), key, at.to_string().into_bytes());
                    at += 1;
                }
            }
            let mut expected = puts(&batch);
            expected.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            batch.sort_by_record();
            prop_assert_eq!(puts(&batch), expected);
        }
    }

    /// Sort keys of `keys` (one place), as `sort_by_record` makes them.
    fn sort_keys(keys: &[&[u8]]) -> Vec<SortKey> {
        let place = Place::new(0, 0);
        (keys.iter().enumerate())
            .map(|(at, k)| SortKey::of(place, k, 0, at))
            .collect()
    }

    fn by_prefix(a: &SortKey, b: &SortKey) -> std::cmp::Ordering {
        (a.place, a.prefix, a.len, a.at).cmp(&(b.place, b.prefix, b.len, b.at))
    }

    #[test]
    fn groups_apart_are_sorted_group_by_group_and_groups_that_interleave_are_not() {
        let mut keys = sort_keys(&[b"b2", b"b1", b"a2", b"a1", b"c"]);
        let order = sorted_in_groups(&mut keys, &[0, 2, 4], by_prefix);
        assert_eq!(order, Some(vec![3, 2, 1, 0, 4]));
        // "a1" and "a3" in one group, "a2" in another: the caller sorts all.
        let mut keys = sort_keys(&[b"a1", b"a3", b"a2"]);
        assert_eq!(sorted_in_groups(&mut keys, &[0, 2], by_prefix), None);
        // One group: nothing to gain.
        let mut keys = sort_keys(&[b"b", b"a"]);
        assert_eq!(sorted_in_groups(&mut keys, &[0], by_prefix), None);
    }

    #[test]
    fn writes_queued_after_a_sort_are_given_too_in_the_order_queued() {
        let mut batch = Batch::default();
        let place = Place::new(0, 0);
        batch.put(place, b"b".to_vec(), b"1".to_vec());
        batch.put(place, b"a".to_vec(), b"2".to_vec());
        batch.sort_by_record();
        let keys: Vec<&[u8]> = batch.ordered().map(|(_, op)| op.key()).collect();
        assert_eq!(keys, [&b"a"[..], b"b"]);
        batch.put(place, b"0".to_vec(), b"3".to_vec());
        let keys: Vec<&[u8]> = batch.ordered().map(|(_, op)| op.key()).collect();
        assert_eq!(keys, [&b"b"[..], b"a", b"0"]);
    }

    #[test]
    fn a_batch_with_a_range_delete_keeps_its_order() {
        let mut batch = Batch::default();
        let place = Place::new(0, 0);
        batch.put(place, b"b".to_vec(), b"1".to_vec());
        batch.delete_range(&KeyRange {
            place,
            lower: b"a".to_vec(),
            upper: b"c".to_vec(),
        });
        batch.put(place, b"a".to_vec(), b"2".to_vec());
        batch.sort_by_record();
        let keys: Vec<&[u8]> = batch.ordered().map(|(_, op)| op.key()).collect();
        assert_eq!(keys, [&b"b"[..], b"a", b"a"]);
    }
}
