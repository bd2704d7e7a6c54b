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

mod families;
mod render;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use redcodec_codec::{Codec, DataType, GcDecision, Meta, Place, SubKind};
use redcodec_engine::keyspace::Ctx;
use redcodec_engine::walk::KeyWalk;
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
    fn add(&mut self, elements: u64, bytes: u64) {
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

/// A bounded top list.
struct Top {
    n: usize,
    heap: BinaryHeap<Reverse<((u64, u64), KeyStats)>>,
}

impl Top {
    fn new(n: usize) -> Top {
        Top {
            n,
            heap: BinaryHeap::new(),
        }
    }

    fn offer(&mut self, rank: (u64, u64), make: impl FnOnce() -> KeyStats) {
        if self.n == 0 {
            return;
        }
        if self.heap.len() == self.n {
            match self.heap.peek() {
                Some(Reverse((least, _))) if *least >= rank => return,
                _ => {}
            }
            self.heap.pop();
        }
        self.heap.push(Reverse((rank, make())));
    }

    fn into_sorted(self) -> Vec<KeyStats> {
        let mut v: Vec<_> = self.heap.into_iter().map(|Reverse(x)| x).collect();
        v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
        v.into_iter().map(|(_, k)| k).collect()
    }
}

/// The element kinds a type keeps records of.
fn kinds_of(t: DataType) -> &'static [SubKind] {
    match t {
        DataType::String => &[],
        DataType::Hash => &[SubKind::HashField],
        DataType::Set => &[SubKind::SetMember],
        DataType::List => &[SubKind::ListItem],
        DataType::ZSet => &[SubKind::ZSetMember, SubKind::ZSetScore],
    }
}

/// Whether a read sees the key of `meta` (the engine's rule).
fn is_live(meta: &Meta, now_ms: u64) -> bool {
    !meta.expired_at(now_ms) && (meta.data_type == DataType::String || meta.size > 0)
}

/// The prefix of `key`: its first `depth` parts, if it has more.
fn prefix_of(key: &[u8], options: &AnalyzeOptions) -> String {
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

/// Analyzes the store behind `engine` (open it read-only).
pub fn analyze<C: Codec>(
    engine: &EngineCore<C>,
    options: &AnalyzeOptions,
) -> Result<Analysis, CmdError> {
    let ctx = Ctx::new(engine);
    let mut analysis = Analysis {
        format: engine.codec().name(),
        ..Analysis::default()
    };
    live_keys(&ctx, options, &mut analysis)?;
    stale_records(&ctx, &mut analysis)?;
    analysis.families = families::families(engine.store(), &|p| family_name(&ctx, p))?;
    Ok(analysis)
}

/// `<instance>/<column family>` of `place`.
fn family_name<C: Codec>(ctx: &Ctx<'_, C>, place: Place) -> String {
    let layout = ctx.engine().store().layout();
    format!(
        "{}/{}",
        layout.instances[place.instance].dir,
        layout.cf(place).name
    )
}

/// The pass over the live keys: each key's records counted through its
/// metadata and the ranges of its element records.
fn live_keys<C: Codec>(
    ctx: &Ctx<'_, C>,
    options: &AnalyzeOptions,
    analysis: &mut Analysis,
) -> Result<(), CmdError> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let now = ctx.now_ms();
    let mut by_bytes = Top::new(options.top);
    let mut by_elements = Top::new(options.top);
    let mut ttl = [0u64; TTL_BUCKETS.len()];
    let mut lanes: Vec<(Place, redcodec_engine::store::StoreIter<'_>)> = Vec::new();
    let mut walk = KeyWalk::new(ctx, None);
    while let Some((key, meta)) = walk.next()? {
        let Some(meta) = meta else {
            analysis.unreadable_keys += 1;
            continue;
        };
        let meta_key = codec
            .meta_record(&key, meta.data_type)
            .map_or(key.len(), |r| r.key.len());
        let meta_value = codec.encode_meta(&meta).map_or(0, |v| v.len());
        let mut bytes = (meta_key + meta_value) as u64;
        let mut counted = 0u64;
        for &kind in kinds_of(meta.data_type) {
            let of = kind.of(&key, &meta);
            let range = codec.sub_range(of);
            // One iterator per family, moved from key to key: creating
            // one per key would cost more than the key's records.
            let it = match lanes.iter().position(|(p, _)| *p == range.place) {
                Some(at) => &mut lanes[at].1,
                None => {
                    lanes.push((range.place, store.scan_family(range.place)));
                    &mut lanes.last_mut().expect("just pushed").1
                }
            };
            let order = store.order(range.place);
            it.seek(&range.lower);
            while let Some((k, v)) = it.next()? {
                if order(&k, &range.upper) != std::cmp::Ordering::Less {
                    break;
                }
                if !codec.sub_is_current(of, &v) {
                    continue;
                }
                bytes += (k.len() + v.len()) as u64;
                if kind != SubKind::ZSetScore {
                    counted += 1;
                }
            }
        }
        let elements = match meta.data_type {
            DataType::String => 1,
            _ if ctx.caps().size_unknown(&meta) => counted,
            _ => meta.size,
        };
        let type_name = meta.data_type.redis_name();
        analysis.total.add(elements, bytes);
        analysis
            .by_type
            .entry(type_name)
            .or_default()
            .add(elements, bytes);
        let mut prefix = prefix_of(&key, options);
        if !analysis.by_prefix.contains_key(&prefix) && analysis.by_prefix.len() >= MAX_PREFIXES {
            prefix = "(other)".into();
        }
        analysis
            .by_prefix
            .entry(prefix)
            .or_default()
            .add(elements, bytes);
        if meta.expire_ms == 0 {
            analysis.no_ttl += 1;
        } else {
            let left = meta.expire_ms.saturating_sub(now);
            let bucket = TTL_BUCKETS
                .iter()
                .position(|(_, upper)| left < *upper)
                .unwrap_or(TTL_BUCKETS.len() - 1);
            ttl[bucket] += 1;
        }
        let stats = || KeyStats {
            bytes,
            elements,
            key: String::from_utf8_lossy(&key).into_owned(),
            type_name,
            expire_ms: meta.expire_ms,
        };
        by_bytes.offer((bytes, elements), stats);
        by_elements.offer((elements, bytes), stats);
    }
    analysis.top_by_bytes = by_bytes.into_sorted();
    analysis.top_by_elements = by_elements.into_sorted();
    analysis.ttl = TTL_BUCKETS
        .iter()
        .zip(ttl)
        .map(|((label, _), keys)| TtlBucket { label, keys })
        .collect();
    Ok(())
}

/// The stale records of a family, created when first met.
fn stale_of(stale: &mut Vec<Stale>, family: String) -> &mut Stale {
    let at = match stale.iter().position(|s| s.family == family) {
        Some(at) => at,
        None => {
            stale.push(Stale {
                family,
                ..Stale::default()
            });
            stale.len() - 1
        }
    };
    &mut stale[at]
}

/// The pass over every metadata and element record: what no read sees.
fn stale_records<C: Codec>(ctx: &Ctx<'_, C>, analysis: &mut Analysis) -> Result<(), CmdError> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let now = ctx.now_ms();
    let mut stale = Vec::new();
    let place_types: Vec<(Place, Option<DataType>)> = codec
        .meta_ranges()
        .into_iter()
        .map(|(range, ty)| (range.place, ty))
        .collect();
    let type_at = |place: Place| {
        place_types
            .iter()
            .find(|(p, _)| *p == place)
            .and_then(|(_, ty)| *ty)
            .unwrap_or(DataType::String)
    };
    for (range, place_type) in codec.meta_ranges() {
        let mut it = store.scan(&range, None, false);
        while let Some((raw_key, value)) = it.next()? {
            let Ok(Some(_)) = codec.decode_meta_key(range.place, &raw_key) else {
                continue;
            };
            let ty = place_type.unwrap_or(DataType::String);
            if let Ok(meta) = codec.decode_meta(ty, &value) {
                if !is_live(&meta, now) {
                    let s = stale_of(&mut stale, family_name(ctx, range.place));
                    s.meta_records += 1;
                    s.bytes += (raw_key.len() + value.len()) as u64;
                }
            }
        }
    }
    let mut places: Vec<Place> = [
        SubKind::HashField,
        SubKind::SetMember,
        SubKind::ListItem,
        SubKind::ZSetMember,
        SubKind::ZSetScore,
    ]
    .into_iter()
    .flat_map(|kind| codec.sub_places(kind))
    .collect();
    places.sort();
    places.dedup();
    // The owner's metadata of the last element record (raw, and decoded):
    // a key's element records are next to each other in their family.
    let mut last: Option<(redcodec_codec::Record, Option<Vec<u8>>, Option<Meta>)> = None;
    for place in places {
        let mut it = store.scan_family(place);
        while let Some((key, value)) = it.next()? {
            let Some(owner) = codec.gc_sub_owner(place, &key, &value) else {
                continue;
            };
            // Elements of another namespace are analyzed with it.
            if !matches!(
                codec.decode_meta_key(owner.meta.place, &owner.meta.key),
                Ok(Some(_))
            ) {
                continue;
            }
            if last.as_ref().is_none_or(|(r, _, _)| *r != owner.meta) {
                let raw = store.get(owner.meta.place, &owner.meta.key)?;
                let decoded = raw
                    .as_deref()
                    .and_then(|raw| codec.decode_meta(type_at(owner.meta.place), raw).ok());
                last = Some((owner.meta.clone(), raw, decoded));
            }
            let (raw, meta) = last.as_ref().map_or((None, None), |(_, raw, meta)| {
                (raw.as_deref(), meta.as_ref())
            });
            // Dropped by the format's rule, or kept for a key no read
            // sees (expired, deleted), or of another version (an orphan).
            let dropped = codec.gc_sub(&owner, raw, now) == GcDecision::Drop
                || meta.is_some_and(|m| !is_live(m, now));
            let orphan =
                !dropped && meta.is_some_and(|m| owner.version != 0 && m.version != owner.version);
            if dropped || orphan {
                let s = stale_of(&mut stale, family_name(ctx, place));
                if dropped {
                    s.element_records += 1;
                } else {
                    s.orphan_records += 1;
                }
                s.bytes += (key.len() + value.len()) as u64;
            }
        }
    }
    analysis.stale = stale;
    Ok(())
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
