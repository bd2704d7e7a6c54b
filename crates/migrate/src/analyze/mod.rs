//! `redcodec analyze`: what a store holds and where its bytes go, read
//! without writing anything (open the engine read-only), in one pass over
//! the live keys and one over every element record, in bounded memory:
//!
//! - the top-N keys by bytes (their metadata record and every element
//!   record, keys and values as stored) and by element count;
//! - keys, elements and bytes per type and per key prefix (the key cut at
//!   its first `depth` delimiters; at most [`MAX_PREFIXES`] prefixes are
//!   kept, later ones are counted under `(other)`);
//! - a histogram of the time left to live;
//! - stale records per column family: metadata of expired or deleted
//!   keys, and element records of deleted, expired or old versions, that
//!   compaction has not removed yet. An element record is judged by the
//!   format's own compaction rule ([`Codec::gc_sub_owner`],
//!   [`Codec::gc_sub`]), as `redcodec check` judges it: dropped by the
//!   rule, owned by metadata no read sees (an expired or deleted key the
//!   rule keeps until its metadata goes), or of a version its key's
//!   metadata does not have (check's orphans), it is stale;
//! - bytes per column family and per level, from RocksDB's properties.

mod elements;
mod families;
mod keys;
mod render;
mod two_pass;

pub use two_pass::analyze_two_pass;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use redcodec_codec::{Codec, DataType, Meta, Place, SubKind};
use redcodec_engine::keyspace::Ctx;
use redcodec_engine::{CmdError, EngineCore};
use serde::Serialize;

pub use families::FamilyStats;

/// Most distinct prefixes counted one by one.
pub const MAX_PREFIXES: usize = 10_000;

/// How to analyze.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyzeOptions {
    /// Keys listed in each top list.
    pub top: usize,
    /// The byte that separates a key's parts.
    pub delimiter: u8,
    /// Parts of a key that make its prefix.
    pub depth: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            top: 10,
            delimiter: b':',
            depth: 1,
        }
    }
}

/// Keys, elements and bytes of a group of keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Keys.
    pub keys: u64,
    /// Elements (a string counts as one).
    pub elements: u64,
    /// Stored bytes: keys and values of the metadata and element records.
    pub bytes: u64,
}

impl Totals {
    pub(crate) fn add(&mut self, elements: u64, bytes: u64) {
        self.keys += 1;
        self.elements += elements;
        self.bytes += bytes;
    }
}

/// One key of a top list.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KeyStats {
    /// Stored bytes (metadata and element records).
    pub bytes: u64,
    /// Elements (a string counts as one).
    pub elements: u64,
    /// The key (lossy UTF-8).
    pub key: String,
    /// Its type.
    #[serde(rename = "type")]
    pub type_name: &'static str,
    /// Absolute expiry in unix milliseconds (0: none).
    pub expire_ms: u64,
}

/// Stale records of one column family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stale {
    /// `<instance>/<column family>`.
    pub family: String,
    /// Metadata records of keys no read sees (expired, or deleted and
    /// kept as a marker).
    pub meta_records: u64,
    /// Element records compaction will drop, or whose key no read sees.
    pub element_records: u64,
    /// Element records compaction keeps but no read sees (`check`'s
    /// orphans).
    pub orphan_records: u64,
    /// Bytes of all of them (keys and values).
    pub bytes: u64,
}

/// One bucket of the time-to-live histogram.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TtlBucket {
    /// What the bucket holds.
    pub label: &'static str,
    /// Live keys in it.
    pub keys: u64,
}

/// The histogram's buckets: upper bounds of the time left, in ms.
const TTL_BUCKETS: [(&str, u64); 6] = [
    ("under 1 minute", 60_000),
    ("1 minute to 1 hour", 3_600_000),
    ("1 hour to 1 day", 86_400_000),
    ("1 to 7 days", 7 * 86_400_000),
    ("7 to 30 days", 30 * 86_400_000),
    ("30 days or more", u64::MAX),
];

/// What `analyze` found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Analysis {
    /// The format.
    pub format: &'static str,
    /// Every live key.
    pub total: Totals,
    /// Keys whose metadata does not decode (`check` names them).
    pub unreadable_keys: u64,
    /// Per type (Redis names), in type order.
    pub by_type: BTreeMap<&'static str, Totals>,
    /// Per prefix (lossy UTF-8; `(none)` for keys without a delimiter,
    /// `(other)` past [`MAX_PREFIXES`]).
    pub by_prefix: BTreeMap<String, Totals>,
    /// The biggest keys by bytes, biggest first.
    pub top_by_bytes: Vec<KeyStats>,
    /// The biggest keys by elements, biggest first.
    pub top_by_elements: Vec<KeyStats>,
    /// Live keys without an expiry.
    pub no_ttl: u64,
    /// Live keys with one, by time left.
    pub ttl: Vec<TtlBucket>,
    /// Stale records per column family that holds any.
    pub stale: Vec<Stale>,
    /// Bytes per column family and level.
    pub families: Vec<FamilyStats>,
}

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
                let lossy = String::from_utf8_lossy(key);
                if least.order() >= (rank, Reverse(&*lossy)) {
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

/// Analyzes the store behind `engine` (open it read-only): one pass over
/// the metadata records ([`keys`]), then one over each family of element
/// records ([`elements`]), each record read once.
pub fn analyze<C: Codec>(
    engine: &EngineCore<C>,
    options: &AnalyzeOptions,
) -> Result<Analysis, CmdError> {
    let ctx = Ctx::new(engine);
    let mut analysis = Analysis {
        format: engine.codec().name(),
        ..Analysis::default()
    };
    let mut by_bytes = Top::new(options.top);
    let mut by_elements = Top::new(options.top);
    let mut stale = StaleCounts::default();
    let seen = keys::meta_pass(
        &ctx,
        options,
        &mut analysis,
        &mut by_bytes,
        &mut by_elements,
        &mut stale,
    )?;
    elements::ElementPass::new(
        &ctx,
        options,
        &seen.ambiguous,
        &mut analysis,
        &mut by_bytes,
        &mut by_elements,
        &mut stale,
    )
    .run(seen.live_collections)?;
    analysis.top_by_bytes = by_bytes.into_sorted();
    analysis.top_by_elements = by_elements.into_sorted();
    analysis.stale = stale.into_stale(&ctx);
    analysis.families = families::families(engine.store(), &|p| family_name(&ctx, p))?;
    Ok(analysis)
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
    fn into_stale<C: Codec>(mut self, ctx: &Ctx<'_, C>) -> Vec<Stale> {
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

/// What a raw scan of a store read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RawScan {
    /// Records (pairs) read.
    pub records: u64,
    /// Their bytes (keys and values).
    pub bytes: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// Reads every pair of every column family of the layout with a plain
/// RocksDB iterator, touching nothing else: the floor an analysis (or a
/// `dump`, a `check`, a migration's read side) of the same store is
/// measured against.
pub fn raw_scan(store: &redcodec_engine::store::Store) -> Result<RawScan, CmdError> {
    let started = std::time::Instant::now();
    let mut scan = RawScan::default();
    store
        .for_each_pair(|_, key, value| {
            scan.records += 1;
            scan.bytes += (key.len() + value.len()) as u64;
            Ok(())
        })
        .map_err(|e| CmdError::other(format!("ERR {e}")))?;
    scan.seconds = started.elapsed().as_secs_f64();
    Ok(scan)
}
