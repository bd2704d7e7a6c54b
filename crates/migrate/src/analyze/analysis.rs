//! What `analyze` reports ([`Analysis`]) and how it is asked
//! ([`AnalyzeOptions`]): the figures, with no reading of a store.

use std::collections::BTreeMap;

use serde::Serialize;

use super::families::FamilyStats;

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
pub(super) const TTL_BUCKETS: [(&str, u64); 6] = [
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
