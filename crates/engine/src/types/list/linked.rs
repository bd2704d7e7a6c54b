//! The linked list model (Pika's nemo): a list is a doubly linked chain of
//! [`SubKind::ListItem`] records with id [`SubId::Seq`], each holding
//! [`SubValue::Node`] `{ prev, next, value }`. The metadata's
//! [`ListBounds::Linked`] names the first (`left`) and last (`right`) node
//! and the next sequence number to hand out (`next_seq`); sequence 0 is
//! the null link.
//!
//! - Every new node takes `next_seq`, which then grows: sequence numbers
//!   are unique and never reused while the list exists. Only a list that
//!   became empty starts again at 1, as nemo's `ListMeta()` does.
//! - A push links the new node to the old end node; a pop unlinks the end
//!   node and clears its neighbour's link; LINSERT and LREM relink the
//!   neighbours of the inserted or removed nodes. Nothing else moves.
//! - Positions are found by walking the links from the nearer end: the
//!   node keys hold sequence numbers, not positions (and sort little-endian,
//!   so a key range is not in list order either).
//!
//! Every walk is bounded by the list's size and checks each node's back
//! link, so corrupt links are an error naming the key, never a loop.
//! Within one operation, nodes read or changed are kept in [`Chain`], so
//! that a node changed twice (a multi-value push, LREM of neighbours) is
//! written once, with its final links.

use std::collections::{BTreeMap, BTreeSet};

use crate::store::KvStore;
use redcodec_codec::{Codec, ListBounds, Meta, SubIdRef, SubKind, SubValue, SubValueRef};

use super::ops::{matches, visit_values, Insertion, List, ListOps, Side, ValueMut};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::{corrupt, Ctx};

/// The null link.
const NIL: i64 = 0;

/// The bounds of an empty list (nemo's `ListMeta()`): no nodes, and the
/// next node takes sequence 1.
const EMPTY: ListBounds = ListBounds::Linked {
    left: NIL,
    right: NIL,
    next_seq: 1,
};

/// One node's links and value.
#[derive(Clone, Debug, PartialEq)]
struct Node {
    prev: i64,
    next: i64,
    value: Vec<u8>,
}

impl AsRef<[u8]> for Node {
    /// The node's element.
    fn as_ref(&self) -> &[u8] {
        &self.value
    }
}

impl Node {
    /// The link towards `side`'s end.
    fn toward(&self, side: Side) -> i64 {
        side.pick(self.prev, self.next)
    }

    /// The link away from `side`'s end.
    fn away_from(&self, side: Side) -> i64 {
        self.toward(side.opposite())
    }

    /// Sets the link towards `side`'s end.
    fn set_toward(&mut self, side: Side, seq: i64) {
        *side.pick(&mut self.prev, &mut self.next) = seq;
    }
}

/// The linked bounds of a list, in memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Bounds {
    left: i64,
    right: i64,
    next_seq: i64,
}

impl Bounds {
    /// The bounds of `meta`, checked against its size: an empty list has
    /// no end nodes, a non-empty one has both.
    fn of(key: &[u8], meta: &Meta) -> CmdResult<Bounds> {
        let bad = || {
            corrupt(
                key,
                format!(
                    "list bounds {:?} do not hold {} elements",
                    meta.list, meta.size
                ),
            )
        };
        let Some((left, right, next_seq)) = meta.list.linked() else {
            return Err(bad());
        };
        let empty = meta.size == 0;
        if empty != (left == NIL) || empty != (right == NIL) {
            return Err(bad());
        }
        Ok(Bounds {
            left,
            right,
            next_seq,
        })
    }

    /// The end node at `side`.
    fn end(&self, side: Side) -> i64 {
        side.pick(self.left, self.right)
    }

    /// Makes `seq` the end node at `side`.
    fn set_end(&mut self, side: Side, seq: i64) {
        *side.pick(&mut self.left, &mut self.right) = seq;
    }

    /// Hands out the next sequence number.
    fn take_seq(&mut self) -> CmdResult<i64> {
        let seq = self.next_seq;
        if seq <= NIL {
            return Err(CmdError::other("ERR list sequence numbers exhausted"));
        }
        self.next_seq = seq.checked_add(1).unwrap_or(i64::MIN);
        Ok(seq)
    }

    /// Stores the bounds and the size in `meta`; an empty list gets the
    /// bounds of a new one.
    fn store(self, meta: &mut Meta, size: u64) {
        meta.size = size;
        meta.list = if size == 0 {
            EMPTY
        } else {
            ListBounds::Linked {
                left: self.left,
                right: self.right,
                next_seq: self.next_seq,
            }
        };
    }
}

/// Reads one node of `key`; a missing node is corrupt data.
fn read_node<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
    seq: i64,
) -> CmdResult<Node> {
    match ctx.sub_get(SubKind::ListItem, key, meta, SubIdRef::Seq(seq))? {
        Some(SubValue::Node { prev, next, value }) => Ok(Node { prev, next, value }),
        Some(other) => Err(corrupt(key, format!("list node {seq} holds {other:?}"))),
        None => Err(corrupt(key, format!("list node {seq} is missing"))),
    }
}

/// The nodes of one list touched by one operation, and its bounds: read
/// once, changed in memory, then handed over as [`Changes`] to be written
/// (or deleted) once.
struct Chain<'c, 'e, 'k, C: Codec, S: KvStore> {
    ctx: &'c Ctx<'e, C, S>,
    meta: &'c Meta,
    changes: Changes<'k>,
}

/// What one operation did to a list's nodes and bounds (see [`Chain`]).
struct Changes<'k> {
    key: &'k [u8],
    bounds: Bounds,
    nodes: BTreeMap<i64, Node>,
    changed: BTreeSet<i64>,
    deleted: BTreeSet<i64>,
}

impl<'c, 'e, 'k, C: Codec, S: KvStore> Chain<'c, 'e, 'k, C, S> {
    /// The list `key` with metadata `meta` in `ctx`, nothing touched yet.
    fn new(
        ctx: &'c Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'c Meta,
    ) -> CmdResult<Chain<'c, 'e, 'k, C, S>> {
        let changes = Changes {
            key,
            bounds: Bounds::of(key, meta)?,
            nodes: BTreeMap::new(),
            changed: BTreeSet::new(),
            deleted: BTreeSet::new(),
        };
        Ok(Chain { ctx, meta, changes })
    }

    /// The changes made, to be written.
    fn done(self) -> Changes<'k> {
        self.changes
    }

    /// Takes `nodes`, already read, as they are.
    fn know(&mut self, nodes: impl IntoIterator<Item = (i64, Node)>) {
        self.changes.nodes.extend(nodes);
    }

    /// The node `seq`, as this operation last left it.
    fn get(&mut self, seq: i64) -> CmdResult<&mut Node> {
        let key = self.changes.key;
        if self.changes.deleted.contains(&seq) {
            return Err(corrupt(key, format!("list node {seq} is linked twice")));
        }
        if !self.changes.nodes.contains_key(&seq) {
            let node = read_node(self.ctx, key, self.meta, seq)?;
            self.changes.nodes.insert(seq, node);
        }
        Ok(self.changes.nodes.get_mut(&seq).expect("inserted above"))
    }

    /// Adds or replaces node `seq`.
    fn put(&mut self, seq: i64, node: Node) {
        self.changes.nodes.insert(seq, node);
        self.changes.changed.insert(seq);
    }

    /// Removes node `seq`.
    fn delete(&mut self, seq: i64) {
        self.changes.nodes.remove(&seq);
        self.changes.changed.remove(&seq);
        self.changes.deleted.insert(seq);
    }

    /// Hands out the next sequence number.
    fn take_seq(&mut self) -> CmdResult<i64> {
        self.changes.bounds.take_seq()
    }

    /// Sets the link of node `seq` towards `side` to `to`. `seq` NIL is the
    /// list's boundary on the other side: then `to` becomes the end node
    /// there (the metadata's link).
    fn link_toward(&mut self, seq: i64, side: Side, to: i64) -> CmdResult<()> {
        if seq == NIL {
            self.changes.bounds.set_end(side.opposite(), to);
        } else {
            self.get(seq)?.set_toward(side, to);
            self.changes.changed.insert(seq);
        }
        Ok(())
    }

    /// Unlinks node `seq` from its neighbours and deletes it; returns it.
    fn unlink(&mut self, seq: i64) -> CmdResult<Node> {
        let node = self.get(seq)?.clone();
        // The previous node's next link skips `seq`, and so on.
        self.link_toward(node.prev, Side::Right, node.next)?;
        self.link_toward(node.next, Side::Left, node.prev)?;
        self.delete(seq);
        Ok(node)
    }

    /// Links a new node holding `value` at the `side` end.
    fn push(&mut self, side: Side, value: &[u8]) -> CmdResult<()> {
        let seq = self.take_seq()?;
        let old_end = self.changes.bounds.end(side);
        let mut node = Node {
            prev: NIL,
            next: NIL,
            value: value.to_vec(),
        };
        // The new node points inward at the old end node, which points back.
        node.set_toward(side.opposite(), old_end);
        self.put(seq, node);
        // On an empty list the new node is the other end too.
        self.link_toward(old_end, side, seq)?;
        self.changes.bounds.set_end(side, seq);
        Ok(())
    }

    /// Unlinks `n` nodes from the `side` end; returns their values in pop
    /// order.
    fn pop(&mut self, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>> {
        let key = self.changes.key;
        let mut out = Vec::new();
        for _ in 0..n {
            let seq = self.changes.bounds.end(side);
            if seq == NIL {
                return Err(corrupt(key, "list ends before its size"));
            }
            let node = self.unlink(seq)?;
            if node.toward(side) != NIL {
                return Err(corrupt(
                    key,
                    format!("list end node {seq} links past the end"),
                ));
            }
            out.push(node.value);
        }
        Ok(out)
    }
}

impl Changes<'_> {
    /// Stores the bounds and `size` in `meta`, then queues every node
    /// change ([`Changes::write`]).
    fn apply<C: Codec, S: KvStore>(self, ctx: &mut Ctx<'_, C, S>, meta: &mut Meta, size: u64) {
        self.bounds.store(meta, size);
        self.write(ctx, meta);
    }

    /// Queues every node change under `meta` (the list's metadata after
    /// the operation: its version and expiry stamp the records).
    fn write<C: Codec, S: KvStore>(self, ctx: &mut Ctx<'_, C, S>, meta: &Meta) {
        for seq in &self.deleted {
            ctx.sub_del(SubKind::ListItem, self.key, meta, SubIdRef::Seq(*seq));
        }
        for seq in &self.changed {
            if let Some(node) = self.nodes.get(seq) {
                let value = SubValueRef::Node {
                    prev: node.prev,
                    next: node.next,
                    value: &node.value,
                };
                ctx.sub_put(
                    SubKind::ListItem,
                    self.key,
                    meta,
                    SubIdRef::Seq(*seq),
                    value,
                );
            }
        }
    }
}

/// A walk over a list's nodes from one end, checking each back link.
struct Walk<'c, 'e, 'k, C: Codec, S: KvStore> {
    ctx: &'c Ctx<'e, C, S>,
    key: &'k [u8],
    meta: &'k Meta,
    /// The direction the walk goes: from `from`'s end towards the other.
    from: Side,
    /// The next node to visit and the node visited before it.
    next: i64,
    came_from: i64,
    /// Nodes left to visit (the list's size bounds every walk).
    left: u64,
}

impl<'c, 'e, 'k, C: Codec, S: KvStore> Walk<'c, 'e, 'k, C, S> {
    /// Starts at the `from` end.
    fn new(
        ctx: &'c Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        from: Side,
    ) -> CmdResult<Walk<'c, 'e, 'k, C, S>> {
        let bounds = Bounds::of(key, meta)?;
        Ok(Walk {
            ctx,
            key,
            meta,
            from,
            next: bounds.end(from),
            came_from: NIL,
            left: meta.size,
        })
    }

    /// Reads nodes until `skip` of them are behind the walk.
    fn pass(&mut self, skip: u64) -> CmdResult<()> {
        for _ in 0..skip {
            if self.next_node()?.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// Starts at the end nearer to positions `start..=stop` and passes the
    /// nodes before them.
    fn to_window(
        ctx: &'c Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        start: u64,
        stop: u64,
    ) -> CmdResult<Walk<'c, 'e, 'k, C, S>> {
        let after = meta.size - 1 - stop;
        let (from, skip) = if after < start {
            (Side::Right, after)
        } else {
            (Side::Left, start)
        };
        let mut walk = Walk::new(ctx, key, meta, from)?;
        walk.pass(skip)?;
        Ok(walk)
    }

    /// The node `(seq, node)` at position `pos`, walking in from the nearer
    /// end.
    fn node_at(
        ctx: &'c Ctx<'e, C, S>,
        key: &'k [u8],
        meta: &'k Meta,
        pos: u64,
    ) -> CmdResult<(i64, Node)> {
        Walk::to_window(ctx, key, meta, pos, pos)?
            .next_node()?
            .ok_or_else(|| corrupt(key, format!("list has no element {pos}")))
    }

    /// The next node `(seq, node)`, or `None` after the list's last one.
    fn next_node(&mut self) -> CmdResult<Option<(i64, Node)>> {
        if self.left == 0 {
            return Ok(None);
        }
        let seq = self.next;
        if seq == NIL {
            return Err(corrupt(
                self.key,
                format!("list ends {} elements early", self.left),
            ));
        }
        let node = read_node(self.ctx, self.key, self.meta, seq)?;
        if node.toward(self.from) != self.came_from {
            return Err(corrupt(
                self.key,
                format!(
                    "list node {seq} links back to {}, not {}",
                    node.toward(self.from),
                    self.came_from
                ),
            ));
        }
        self.left -= 1;
        self.came_from = seq;
        self.next = node.away_from(self.from);
        if self.left == 0 && self.next != NIL {
            return Err(corrupt(
                self.key,
                format!("list goes on after its last node {seq}"),
            ));
        }
        Ok(Some((seq, node)))
    }
}

impl<C: Codec, S: KvStore> Iterator for Walk<'_, '_, '_, C, S> {
    type Item = CmdResult<(i64, Node)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_node().transpose()
    }
}

/// The linked model: doubly linked nodes with never-reused sequence
/// numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Linked;

impl<C: Codec, S: KvStore> ListOps<C, S> for Linked {
    fn get(&self, list: List<'_, '_, C, S>, pos: u64) -> CmdResult<Vec<u8>> {
        Ok(Walk::node_at(list.ctx, list.key, list.meta, pos)?.1.value)
    }

    fn range(&self, list: List<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>> {
        let List { ctx, key, meta } = list;
        let n = stop - start + 1;
        let mut walk = Walk::to_window(ctx, key, meta, start, stop)?;
        let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(0).min(1 << 16));
        for _ in 0..n {
            match walk.next_node()? {
                Some((_, node)) => out.push(node.value),
                None => return Err(corrupt(key, format!("list has no element {stop}"))),
            }
        }
        if walk.from == Side::Right {
            out.reverse();
        }
        Ok(out)
    }

    fn visit<F>(&self, list: List<'_, '_, C, S>, from: Side, visit: F) -> CmdResult<()>
    where
        F: FnMut(&[u8]) -> bool,
    {
        let List { ctx, key, meta } = list;
        visit_values(Walk::new(ctx, key, meta, from)?, visit)
    }

    fn push<V>(&self, list: ValueMut<'_, '_, C, S>, side: Side, values: &[V]) -> CmdResult<()>
    where
        V: AsRef<[u8]>,
    {
        let ValueMut { ctx, key, meta } = list;
        let mut chain = Chain::new(ctx, key, meta)?;
        for value in values {
            chain.push(side, value.as_ref())?;
        }
        chain
            .done()
            .apply(ctx, meta, meta.size + values.len() as u64);
        Ok(())
    }

    fn pop(&self, list: ValueMut<'_, '_, C, S>, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>> {
        let ValueMut { ctx, key, meta } = list;
        let mut chain = Chain::new(ctx, key, meta)?;
        let n = n.min(meta.size);
        let values = chain.pop(side, n)?;
        chain.done().apply(ctx, meta, meta.size - n);
        Ok(values)
    }

    /// LMOVE of a list of two or more elements onto itself: one element from
    /// the `from` end to the `to` end (the other one), relinked in one chain.
    fn rotate(&self, list: ValueMut<'_, '_, C, S>, from: Side, to: Side) -> CmdResult<Vec<u8>> {
        let ValueMut { ctx, key, meta } = list;
        let mut chain = Chain::new(ctx, key, meta)?;
        let value = chain.pop(from, 1)?.pop().unwrap_or_default();
        chain.push(to, &value)?;
        chain.done().apply(ctx, meta, meta.size);
        Ok(value)
    }

    fn set(&self, list: ValueMut<'_, '_, C, S>, pos: u64, value: &[u8]) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let (seq, mut node) = Walk::node_at(ctx, key, meta, pos)?;
        node.value = value.to_vec();
        let mut chain = Chain::new(ctx, key, meta)?;
        chain.put(seq, node);
        chain.done().write(ctx, meta);
        Ok(())
    }

    fn insert(&self, list: ValueMut<'_, '_, C, S>, new: Insertion<'_>) -> CmdResult<bool> {
        let ValueMut { ctx, key, meta } = list;
        let mut found = None;
        for item in Walk::new(ctx, key, meta, Side::Left)? {
            let (seq, node) = item?;
            if node.value == new.pivot {
                found = Some((seq, node));
                break;
            }
        }
        let Some((pivot_seq, pivot_node)) = found else {
            return Ok(false);
        };
        let mut chain = Chain::new(ctx, key, meta)?;
        let seq = chain.take_seq()?;
        let (prev, next) = if new.before {
            (pivot_node.prev, pivot_seq)
        } else {
            (pivot_seq, pivot_node.next)
        };
        chain.know([(pivot_seq, pivot_node)]);
        chain.put(
            seq,
            Node {
                prev,
                next,
                value: new.value.to_vec(),
            },
        );
        chain.link_toward(prev, Side::Right, seq)?;
        chain.link_toward(next, Side::Left, seq)?;
        chain.done().apply(ctx, meta, meta.size + 1);
        Ok(true)
    }

    fn remove(&self, list: ValueMut<'_, '_, C, S>, count: i64, value: &[u8]) -> CmdResult<u64> {
        let ValueMut { ctx, key, meta } = list;
        let from = Side::scan_from(count);
        let walk = Walk::new(ctx, key, meta, from)?;
        let doomed = matches(walk, value, count.unsigned_abs(), |found| found)?;
        let n = doomed.len() as u64;
        if n == 0 || n == meta.size {
            return Ok(n);
        }
        let mut chain = Chain::new(ctx, key, meta)?;
        let seqs: Vec<i64> = doomed.iter().map(|(seq, _)| *seq).collect();
        chain.know(doomed);
        for seq in seqs {
            chain.unlink(seq)?;
        }
        chain.done().apply(ctx, meta, meta.size - n);
        Ok(n)
    }

    fn trim(&self, list: ValueMut<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<()> {
        let ValueMut { ctx, key, meta } = list;
        let mut chain = Chain::new(ctx, key, meta)?;
        let after = meta.size - 1 - stop;
        chain.pop(Side::Left, start)?;
        chain.pop(Side::Right, after)?;
        chain.done().apply(ctx, meta, stop - start + 1);
        Ok(())
    }
}
