//! What both passes of `analyze` count with: the bounded top lists
//! ([`Top`]), the stale records per place ([`StaleCounts`]), and the rules
//! a key or record is judged by (live, visible, its prefix).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use redcodec_codec::{Codec, DataType, Meta, Place, SubKind};
use redcodec_engine::internals::keyspace::Ctx;

use super::analysis::{AnalyzeOptions, KeyStats, Stale, Totals};

/// A bounded top list: the `n` greatest keys by rank, ties broken by the
/// smaller key (lossy UTF-8), whatever order they are offered in.
pub(crate) struct Top {
    n: usize,
    heap: BinaryHeap<Reverse<TopEntry>>,
}

/// A key of a [`Top`], ordered by rank and then by the reverse of its key
/// (the least of a heap is the one to drop).
struct TopEntry((u64, u64), KeyStats);

impl TopEntry {
    fn order(&self) -> ((u64, u64), Reverse<&str>) {
        (self.0, Reverse(self.1.key.as_str()))
    }
}

impl PartialEq for TopEntry {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}

impl Eq for TopEntry {}

impl PartialOrd for TopEntry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TopEntry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

impl Top {
    pub(crate) fn new(n: usize) -> Top {
        Top {
            n,
            heap: BinaryHeap::new(),
        }
    }

    /// Offers the key `make` describes (whose lossy key is `key`) at
    /// `rank`.
    pub(crate) fn offer(&mut self, rank: (u64, u64), key: &[u8], make: impl FnOnce() -> KeyStats) {
        if self.n == 0 {
            return;
        }
        if self.heap.len() == self.n {
            if let Some(Reverse(least)) = self.heap.peek() {
                // The key breaks ties only: most offers lose on rank alone.
                let beaten = match least.0.cmp(&rank) {
                    std::cmp::Ordering::Less => false,
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Equal => {
                        Reverse(least.1.key.as_str()) >= Reverse(&*String::from_utf8_lossy(key))
                    }
                };
                if beaten {
                    return;
                }
            }
            self.heap.pop();
        }
        self.heap.push(Reverse(TopEntry(rank, make())));
    }

    pub(crate) fn into_sorted(self) -> Vec<KeyStats> {
        let mut v: Vec<TopEntry> = self.heap.into_iter().map(|Reverse(x)| x).collect();
        v.sort_by(|a, b| b.cmp(a));
        v.into_iter().map(|TopEntry(_, k)| k).collect()
    }
}

/// The element kinds a type keeps records of.
pub(crate) fn kinds_of(t: DataType) -> &'static [SubKind] {
    match t {
        DataType::String => &[],
        DataType::Hash => &[SubKind::HashField],
        DataType::Set => &[SubKind::SetMember],
        DataType::List => &[SubKind::ListItem],
        DataType::ZSet => &[SubKind::ZSetMember, SubKind::ZSetScore],
    }
}

/// Whether the key of `meta` is not stale: unexpired, and a string or a
/// collection with elements (the rule stale metadata and elements are
/// judged by).
pub(crate) fn is_live(meta: &Meta, now_ms: u64) -> bool {
    !meta.expired_at(now_ms) && (meta.data_type == DataType::String || meta.size > 0)
}

/// The prefix of `key`: its first `depth` parts, if it has more.
pub(crate) fn prefix_of(key: &[u8], options: &AnalyzeOptions) -> String {
    let mut cut = None;
    let mut found = 0;
    for (i, b) in key.iter().enumerate() {
        if *b == options.delimiter {
            found += 1;
            if found == options.depth {
                cut = Some(i);
                break;
            }
        }
    }
    match cut {
        Some(i) if options.depth > 0 => String::from_utf8_lossy(&key[..i]).into_owned(),
        _ => "(none)".into(),
    }
}

/// Whether a read sees the key of `meta` (the engine's rule, which a
/// key without an expiry always passes).
pub(crate) fn visible(meta: &Meta, now_ms: u64) -> bool {
    let unexpired = meta.expire_ms == 0 || !meta.expired_at(now_ms);
    unexpired && (meta.data_type == DataType::String || meta.size > 0)
}

/// The prefix bucket a key was counted under by the metadata pass: its
/// prefix if the table holds it, `(other)` if it was full.
pub(crate) fn prefix_bucket(
    key: &[u8],
    options: &AnalyzeOptions,
    by_prefix: &BTreeMap<String, Totals>,
) -> String {
    let prefix = prefix_of(key, options);
    if by_prefix.contains_key(&prefix) {
        prefix
    } else {
        "(other)".into()
    }
}

/// Stale records counted per place, reported per family in the order the
/// first version met them: metadata places, then element places.
#[derive(Default)]
pub(crate) struct StaleCounts {
    at: Vec<(Place, Stale)>,
}

impl StaleCounts {
    /// The counts of `place`.
    pub(crate) fn at(&mut self, place: Place) -> &mut Stale {
        let at = match self.at.iter().position(|(p, _)| *p == place) {
            Some(at) => at,
            None => {
                self.at.push((place, Stale::default()));
                self.at.len() - 1
            }
        };
        &mut self.at[at].1
    }

    /// The families that hold any stale record: first those with stale
    /// metadata (in [`Codec::meta_ranges`] order), then the others (in
    /// place order).
    pub(super) fn into_stale<C: Codec>(mut self, ctx: &Ctx<'_, C>) -> Vec<Stale> {
        let mut order: Vec<Place> = ctx
            .codec()
            .meta_ranges()
            .into_iter()
            .map(|(range, _)| range.place)
            .collect();
        let mut rest: Vec<Place> = self.at.iter().map(|(p, _)| *p).collect();
        rest.sort();
        let mut out = Vec::new();
        let mut take = |place: Place, meta_first: bool, out: &mut Vec<Stale>| {
            if let Some(at) = self.at.iter().position(|(p, s)| {
                *p == place
                    && (s.meta_records > 0
                        || (!meta_first && (s.element_records > 0 || s.orphan_records > 0)))
            }) {
                let (_, mut s) = self.at.remove(at);
                s.family = family_name(ctx, place);
                out.push(s);
            }
        };
        order.dedup();
        for place in order {
            take(place, true, &mut out);
        }
        for place in rest {
            take(place, false, &mut out);
        }
        out
    }
}

/// `<instance>/<column family>` of `place`.
pub(crate) fn family_name<C: Codec>(ctx: &Ctx<'_, C>, place: Place) -> String {
    let layout = ctx.engine().store().layout();
    format!(
        "{}/{}",
        layout.instances[place.instance].dir,
        layout.cf(place).name
    )
}
