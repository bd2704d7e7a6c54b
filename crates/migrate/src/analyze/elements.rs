//! The pass over the element records: one iterator per column family,
//! read ahead on a thread of its own ([`ReadAhead`]), each record read
//! once. A key's records are next to each other in a
//! family, so the records are taken in groups of one owner (the metadata
//! record [`Codec::gc_sub_owner`] names): the owner's metadata is read
//! once per group, each record is judged by the format's compaction rule
//! (stale or not, as `check` judges it) and, when it is one of the live
//! key's current element records, its bytes are added to the key.
//!
//! A key's total is complete when its group of its first kind's records
//! ends (hash fields, set members, list items, sorted-set members): the
//! records of its other kinds (a sorted set's score index) are then read
//! by moving that family's own iterator forward to them, in step, when
//! that family keeps keys in the same order (they are then also judged
//! there, once); otherwise (an iterator already past them, or kinds kept
//! in the same family) through their range, as the first version did.
//! Memory: one group per family, the top lists, the prefix table.

use std::cmp::Ordering;
use std::collections::HashSet;

use redcodec_codec::{
    Codec, DataType, GcDecision, KeyRange, Meta, Place, Record, SubKind, SubOwner,
};
use redcodec_engine::internals::cursors::ReadCursors;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::store::{ReadAhead, Store, StoreIter};
use redcodec_engine::CmdError;

use super::analysis::{Analysis, AnalyzeOptions, KeyStats};
use super::tally::{is_live, kinds_of, prefix_bucket, visible, StaleCounts, Top};

/// The live key a group's records belong to, when its owner is the
/// metadata a read sees.
struct LiveOwner {
    user_key: Vec<u8>,
    /// The metadata a read sees (its size counted where the format
    /// stores none).
    meta: Meta,
    /// The range of each kind of the key's type, its first kind first.
    ranges: Vec<(SubKind, KeyRange)>,
    /// Bytes of the metadata record (its key and its encoded value).
    meta_bytes: u64,
    /// The prefix bucket the key was counted under.
    prefix: String,
    /// Kinds (bit = index in `ranges`) with a record in this group.
    touched: u32,
    /// Bytes of this group's current records of the key.
    bytes: u64,
}

/// The records of one owner read so far in one family.
struct Group {
    owner: Record,
    /// A record of another namespace, analyzed with it.
    skip: bool,
    /// The owner's metadata as stored, and decoded.
    raw: Option<Vec<u8>>,
    decoded: Option<Meta>,
    live: Option<LiveOwner>,
    /// (version, dropped, orphan) of the versions judged.
    verdicts: Vec<(u64, bool, bool)>,
    /// The verdict of the key's current records, once one was judged.
    current: Option<(bool, bool)>,
}

/// A stored key and value.
type Pair = (Vec<u8>, Vec<u8>);

/// One element family being read.
pub(super) struct Cursor {
    place: Place,
    /// The family's key order.
    order: fn(&[u8], &[u8]) -> Ordering,
    /// The family, read ahead on a thread of its own.
    it: ReadAhead,
    head: Option<(Vec<u8>, Vec<u8>)>,
    /// The key of the last record taken (every record up to it judged).
    last: Option<Vec<u8>>,
    done: bool,
    group: Option<Group>,
    /// The owner of the record in `head`, when it was put back.
    next_owner: Option<(SubOwner, bool)>,
    /// Buffers of records taken, reused for the next ones: every record
    /// of the store passes through here, and allocating two buffers for
    /// each cost a tenth of the pass.
    spare: Vec<Vec<u8>>,
}

/// Buffers a [`Cursor`] keeps for reuse (a key and a value in hand, the
/// last key, and one put back).
const SPARE_BUFFERS: usize = 4;

impl Cursor {
    fn peek(&mut self) -> Result<Option<&Pair>, CmdError> {
        if self.head.is_none() && !self.done {
            match self.it.next_ref()? {
                Some((key, value)) => {
                    let mut k = self.spare.pop().unwrap_or_default();
                    let mut v = self.spare.pop().unwrap_or_default();
                    k.clear();
                    k.extend_from_slice(key);
                    v.clear();
                    v.extend_from_slice(value);
                    self.head = Some((k, v));
                }
                None => self.done = true,
            }
        }
        Ok(self.head.as_ref())
    }

    /// Ends the taking of a record: `key` becomes the last key taken, and
    /// the buffers of the key before it and of `value` are kept for reuse.
    fn took(&mut self, key: Vec<u8>, value: Vec<u8>) {
        if let Some(before) = self.last.replace(key) {
            self.reuse(before);
        }
        self.reuse(value);
    }

    fn reuse(&mut self, buffer: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS {
            self.spare.push(buffer);
        }
    }
}

/// The state of the pass over the element records of one analysis.
pub(super) struct ElementPass<'a, 'c, 'e, C: Codec> {
    ctx: &'c Ctx<'e, C>,
    codec: &'e C,
    store: &'e Store,
    now: u64,
    place_types: Vec<(Place, Option<DataType>)>,
    ambiguous: &'a HashSet<Vec<u8>>,
    options: &'a AnalyzeOptions,
    analysis: &'a mut Analysis,
    by_bytes: &'a mut Top,
    by_elements: &'a mut Top,
    stale: &'a mut StaleCounts,
    /// Iterators read through a key's range (one per family).
    lanes: Vec<(Place, StoreIter<'e>)>,
    /// Live collections offered to the top lists.
    offered: u64,
    /// Cursors over the metadata families, to read owners' metadata.
    metas: ReadCursors<'e, Store>,
}

/// Whether `key` is in `range` under `order`.
fn holds(order: fn(&[u8], &[u8]) -> Ordering, range: &KeyRange, key: &[u8]) -> bool {
    order(key, &range.lower) != Ordering::Less && order(key, &range.upper) == Ordering::Less
}

impl<'a, 'c, 'e, C: Codec> ElementPass<'a, 'c, 'e, C> {
    /// A pass adding to `analysis`, the top lists and `stale`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        ctx: &'c Ctx<'e, C>,
        options: &'a AnalyzeOptions,
        ambiguous: &'a HashSet<Vec<u8>>,
        analysis: &'a mut Analysis,
        by_bytes: &'a mut Top,
        by_elements: &'a mut Top,
        stale: &'a mut StaleCounts,
    ) -> Self {
        let codec = ctx.codec();
        ElementPass {
            ctx,
            codec,
            store: ctx.engine().store(),
            now: ctx.now_ms(),
            place_types: codec
                .meta_ranges()
                .into_iter()
                .map(|(range, ty)| (range.place, ty))
                .collect(),
            ambiguous,
            options,
            analysis,
            by_bytes,
            by_elements,
            stale,
            lanes: Vec::new(),
            offered: 0,
            metas: ReadCursors::new(ctx.engine().store()),
        }
    }

    /// Reads every element family once; then offers the live collections
    /// that have no current record of their first kind (a damaged store),
    /// if the metadata pass counted more than were offered.
    pub(super) fn run(self, live_collections: u64) -> Result<(), CmdError> {
        let store = self.store;
        std::thread::scope(|scope| self.run_in(scope, store, live_collections))
    }

    /// [`ElementPass::run`], each family read ahead on a thread of `scope`.
    fn run_in<'scope>(
        mut self,
        scope: &'scope std::thread::Scope<'scope, 'e>,
        store: &'e Store,
        live_collections: u64,
    ) -> Result<(), CmdError> {
        let places = self.codec.element_places();
        let mut cursors: Vec<Option<Cursor>> = places
            .iter()
            .map(|&place| {
                Some(Cursor {
                    place,
                    order: store.order(place),
                    it: store.read_ahead(scope, place),
                    head: None,
                    last: None,
                    done: false,
                    group: None,
                    next_owner: None,
                    spare: Vec::new(),
                })
            })
            .collect();
        for at in 0..cursors.len() {
            let Some(mut cursor) = cursors[at].take() else {
                continue;
            };
            while cursor.peek()?.is_some() {
                let (key, value) = cursor.head.take().expect("peeked");
                let (ended, _) = self.record(&mut cursor, key, value)?;
                if let Some(group) = ended {
                    self.finish(group, cursor.place, &mut cursors)?;
                }
            }
            if let Some(group) = cursor.group.take() {
                self.finish(group, cursor.place, &mut cursors)?;
            }
            cursors[at] = Some(cursor);
        }
        if self.offered < live_collections {
            self.offer_the_rest()?;
        }
        Ok(())
    }

    /// The type of the metadata kept at `place`.
    fn type_at(&self, place: Place) -> DataType {
        self.place_types
            .iter()
            .find(|(p, _)| *p == place)
            .and_then(|(_, ty)| *ty)
            .unwrap_or(DataType::String)
    }

    /// The stored metadata `record`, read through its family's cursor.
    fn read_meta(&mut self, record: &Record) -> Result<Option<Vec<u8>>, CmdError> {
        Ok(self.metas.get(record.place, &record.key)?)
    }

    /// A group for the records of `owner`: its metadata read and judged.
    fn open(&mut self, owner: Record) -> Result<Group, CmdError> {
        let mut group = Group {
            skip: true,
            raw: None,
            decoded: None,
            live: None,
            verdicts: Vec::new(),
            current: None,
            owner,
        };
        // Elements of another namespace are analyzed with it.
        let Ok(Some(user_key)) = self
            .codec
            .decode_meta_key(group.owner.place, &group.owner.key)
        else {
            return Ok(group);
        };
        group.skip = false;
        let ty = self.type_at(group.owner.place);
        group.raw = self.read_meta(&group.owner)?;
        let Some(raw) = group.raw.as_deref() else {
            return Ok(group);
        };
        let Ok(decoded) = self.codec.decode_meta(ty, raw) else {
            return Ok(group);
        };
        // The metadata a read sees, as the metadata pass judged it.
        let view = if self.ambiguous.contains(&user_key) {
            match self.ctx.live(&user_key) {
                Ok(Some(meta)) if meta.data_type == decoded.data_type => Some(meta),
                _ => None,
            }
        } else if self.ctx.caps().size_unknown(&decoded) {
            self.ctx
                .decode_meta(&user_key, ty, raw)
                .ok()
                .filter(|m| visible(m, self.now))
        } else {
            Some(decoded.clone()).filter(|m| visible(m, self.now))
        };
        group.decoded = Some(decoded);
        let Some(meta) = view.filter(|m| m.data_type.is_collection()) else {
            return Ok(group);
        };
        let ranges = kinds_of(meta.data_type)
            .iter()
            .map(|&kind| (kind, self.codec.sub_range(kind.of(&user_key, &meta))))
            .collect();
        let meta_value = self.codec.encode_meta(&meta).map_or(0, |v| v.len());
        let prefix = prefix_bucket(&user_key, self.options, &self.analysis.by_prefix);
        group.live = Some(LiveOwner {
            meta_bytes: (group.owner.key.len() + meta_value) as u64,
            user_key,
            meta,
            ranges,
            prefix,
            touched: 0,
            bytes: 0,
        });
        Ok(group)
    }

    /// Whether the record (`key`, `value`) of `place` is one of the live
    /// key's current records: the index of its kind.
    fn current_kind(
        &self,
        live: &LiveOwner,
        place: Place,
        order: fn(&[u8], &[u8]) -> Ordering,
        key: &[u8],
        value: &[u8],
    ) -> Option<usize> {
        let at = live
            .ranges
            .iter()
            .position(|(_, r)| r.place == place && holds(order, r, key))?;
        let kind = live.ranges[at].0;
        self.codec
            .sub_is_current(kind.of(&live.user_key, &live.meta), value)
            .then_some(at)
    }

    /// Counts a stale record of `place`.
    fn count_stale(&mut self, place: Place, verdict: (bool, bool), bytes: u64) {
        let (dropped, orphan) = verdict;
        if dropped || orphan {
            let s = self.stale.at(place);
            if dropped {
                s.element_records += 1;
            } else {
                s.orphan_records += 1;
            }
            s.bytes += bytes;
        }
    }

    /// Takes one record of `cursor`'s family: judged, and counted to its
    /// live key. Returns the group it ended (its owner's records are
    /// over) and the bytes it added to a live key.
    fn record(
        &mut self,
        cursor: &mut Cursor,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> Result<(Option<Group>, u64), CmdError> {
        let place = cursor.place;
        let order = cursor.order;
        let bytes = (key.len() + value.len()) as u64;
        // The common case: the next current record of the group's key,
        // judged as the first one was.
        if let Some(group) = cursor.group.as_mut() {
            if let (Some(live), Some(verdict)) = (group.live.as_ref(), group.current) {
                if let Some(at) = self.current_kind(live, place, order, &key, &value) {
                    let live = group.live.as_mut().expect("checked");
                    live.touched |= 1 << at;
                    live.bytes += bytes;
                    self.count_stale(place, verdict, bytes);
                    cursor.took(key, value);
                    return Ok((None, bytes));
                }
            }
        }
        // The owner the compaction rule names (the record is judged), or
        // the one the format names for reading (it is not).
        let owner = match cursor.next_owner.take() {
            Some(owner) => Some(owner),
            None => match self.codec.gc_sub_owner(place, &key, &value) {
                Some(owner) => Some((owner, true)),
                None => self
                    .codec
                    .sub_owner(place, &key, &value)
                    .map(|owner| (owner, false)),
            },
        };
        let Some((owner, judged)) = owner else {
            // Not an element record (format bookkeeping): kept. Inside a
            // live key's range it is counted, as a read of the range sees it.
            let mut added = 0;
            if let Some(group) = cursor.group.as_mut() {
                if let Some(live) = group.live.as_ref() {
                    if let Some(at) = self.current_kind(live, place, order, &key, &value) {
                        let live = group.live.as_mut().expect("checked");
                        live.touched |= 1 << at;
                        live.bytes += bytes;
                        added = bytes;
                    }
                }
            }
            cursor.took(key, value);
            return Ok((None, added));
        };
        if cursor.group.as_ref().is_some_and(|g| g.owner != owner.meta) {
            // The group is over: it is finished before the next owner's
            // metadata is read (its other kinds may need the metadata
            // cursor where it is); the record is taken again after it.
            cursor.head = Some((key, value));
            cursor.next_owner = Some((owner, judged));
            return Ok((cursor.group.take(), 0));
        }
        if cursor.group.is_none() {
            cursor.group = Some(self.open(owner.meta.clone())?);
        }
        let group = cursor.group.as_mut().expect("opened");
        if group.skip {
            cursor.took(key, value);
            return Ok((None, 0));
        }
        let verdict = match group.verdicts.iter().find(|v| v.0 == owner.version) {
            _ if !judged => (false, false),
            Some(&(_, dropped, orphan)) => (dropped, orphan),
            None => {
                // Dropped by the format's rule, or kept for a key no read
                // sees (expired, deleted), or of another version (an
                // orphan).
                let dropped = self.codec.gc_sub(&owner, group.raw.as_deref(), self.now)
                    == GcDecision::Drop
                    || group
                        .decoded
                        .as_ref()
                        .is_some_and(|m| !is_live(m, self.now));
                let orphan = !dropped
                    && group
                        .decoded
                        .as_ref()
                        .is_some_and(|m| owner.version != 0 && m.version != owner.version);
                group.verdicts.push((owner.version, dropped, orphan));
                (dropped, orphan)
            }
        };
        let mut added = 0;
        if let Some(live) = group.live.as_ref() {
            if let Some(at) = self.current_kind(live, place, order, &key, &value) {
                let live = group.live.as_mut().expect("checked");
                live.touched |= 1 << at;
                live.bytes += bytes;
                added = bytes;
                if group.current.is_none() && owner.version == live.meta.version {
                    group.current = Some(verdict);
                }
            }
        }
        self.count_stale(place, verdict, bytes);
        cursor.took(key, value);
        Ok((None, added))
    }

    /// Ends a group of `place`: its bytes added to its key's type and
    /// prefix; if it held the key's first kind, the key's total completed
    /// (its other kinds read, in step through `cursors` where they can
    /// be) and offered to the top lists.
    fn finish(
        &mut self,
        group: Group,
        place: Place,
        cursors: &mut [Option<Cursor>],
    ) -> Result<(), CmdError> {
        let Some(live) = group.live else {
            return Ok(());
        };
        let type_name = live.meta.data_type.redis_name();
        if live.bytes > 0 {
            self.analysis.total.bytes += live.bytes;
            if let Some(t) = self.analysis.by_type.get_mut(type_name) {
                t.bytes += live.bytes;
            }
            if let Some(p) = self.analysis.by_prefix.get_mut(&live.prefix) {
                p.bytes += live.bytes;
            }
        }
        if live.touched & 1 == 0 {
            return Ok(());
        }
        let mut bytes = live.meta_bytes + live.bytes;
        for (at, (kind, range)) in live.ranges.iter().enumerate().skip(1) {
            if live.touched & (1 << at) != 0 {
                continue;
            }
            let in_step = if range.place == place {
                None
            } else {
                cursors
                    .iter_mut()
                    .flatten()
                    .find(|c| c.place == range.place)
            };
            bytes += match in_step {
                Some(cursor) if self.before(cursor, range) => self.in_step(cursor, range)?,
                _ => self.through_range(*kind, range, &live.user_key, &live.meta)?,
            };
        }
        self.offered += 1;
        let elements = live.meta.size;
        let stats = || KeyStats {
            bytes,
            elements,
            key: String::from_utf8_lossy(&live.user_key).into_owned(),
            type_name,
            expire_ms: live.meta.expire_ms,
        };
        self.by_bytes
            .offer((bytes, elements), &live.user_key, stats);
        self.by_elements
            .offer((elements, bytes), &live.user_key, stats);
        Ok(())
    }

    /// Whether `cursor` has taken no record of `range` yet.
    fn before(&self, cursor: &Cursor, range: &KeyRange) -> bool {
        let order = cursor.order;
        match &cursor.last {
            None => !cursor.done,
            Some(last) => order(last, &range.lower) == Ordering::Less,
        }
    }

    /// Moves `cursor` past `range`, taking (judging and counting) every
    /// record on the way; the bytes of `range`'s current records.
    fn in_step(&mut self, cursor: &mut Cursor, range: &KeyRange) -> Result<u64, CmdError> {
        let order = cursor.order;
        let mut bytes = 0;
        while let Some((key, _)) = cursor.peek()? {
            if order(key, &range.upper) != Ordering::Less {
                break;
            }
            let inside = order(key, &range.lower) != Ordering::Less;
            let (key, value) = cursor.head.take().expect("peeked");
            let (ended, added) = self.record(cursor, key, value)?;
            if let Some(group) = ended {
                // Groups met on the way read their other kinds through
                // their ranges.
                self.finish(group, cursor.place, &mut [])?;
            }
            if inside {
                bytes += added;
            }
        }
        Ok(bytes)
    }

    /// The bytes of the current records of `kind` of `user_key` (`meta`),
    /// read through their range.
    fn through_range(
        &mut self,
        kind: SubKind,
        range: &KeyRange,
        user_key: &[u8],
        meta: &Meta,
    ) -> Result<u64, CmdError> {
        let store = self.store;
        let at = match self.lanes.iter().position(|(p, _)| *p == range.place) {
            Some(at) => at,
            None => {
                self.lanes
                    .push((range.place, store.scan_family(range.place)));
                self.lanes.len() - 1
            }
        };
        let order = store.order(range.place);
        let of = kind.of(user_key, meta);
        let it = &mut self.lanes[at].1;
        it.seek(&range.lower);
        let mut bytes = 0;
        while let Some((k, v)) = it.next()? {
            if order(&k, &range.upper) != Ordering::Less {
                break;
            }
            if self.codec.sub_is_current(of, &v) {
                bytes += (k.len() + v.len()) as u64;
            }
        }
        Ok(bytes)
    }

    /// Offers the live collections no group offered: those without a
    /// current record of their first kind (none in a sound store), each
    /// read through its ranges.
    fn offer_the_rest(&mut self) -> Result<(), CmdError> {
        let mut walk = KeyWalk::new(self.ctx, None);
        while let Some((key, meta)) = walk.next()? {
            let Some(meta) = meta.filter(|m| m.data_type.is_collection()) else {
                continue;
            };
            let kinds = kinds_of(meta.data_type);
            let ranges: Vec<KeyRange> = kinds
                .iter()
                .map(|&kind| self.codec.sub_range(kind.of(&key, &meta)))
                .collect();
            if self.through_range(kinds[0], &ranges[0], &key, &meta)? > 0 {
                continue;
            }
            let meta_key = self
                .codec
                .meta_record(&key, meta.data_type)
                .map_or(key.len(), |r| r.key.len());
            let meta_value = self.codec.encode_meta(&meta).map_or(0, |v| v.len());
            let mut bytes = (meta_key + meta_value) as u64;
            for (kind, range) in kinds.iter().zip(&ranges).skip(1) {
                bytes += self.through_range(*kind, range, &key, &meta)?;
            }
            let elements = meta.size;
            let type_name = meta.data_type.redis_name();
            let stats = || KeyStats {
                bytes,
                elements,
                key: String::from_utf8_lossy(&key).into_owned(),
                type_name,
                expire_ms: meta.expire_ms,
            };
            self.by_bytes.offer((bytes, elements), &key, stats);
            self.by_elements.offer((elements, bytes), &key, stats);
        }
        Ok(())
    }
}
