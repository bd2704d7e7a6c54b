//! The closed list of behaviours in which formats differ. The engine branches
//! on these, never on a format's name.

use crate::{DataType, ListModel, Meta};

/// Where a key's metadata is found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MetaLookup {
    /// One metadata place for every type; the record names the type, and the
    /// format itself keeps one type per key.
    Shared,
    /// One metadata place per type; the engine probes all of them and
    /// enforces one type per key.
    PerType,
}

/// The precision of stored expiry times.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TtlResolution {
    /// Milliseconds.
    Millis,
    /// Whole seconds.
    Seconds,
}

/// The width of the version stamped on element records.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VersionWidth {
    /// No versions: deleting a collection removes its elements.
    None,
    /// 32-bit versions.
    Bits32,
    /// 64-bit versions.
    Bits64,
}

/// How `DEL` of a collection is carried out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeleteModel {
    /// Delete the metadata record; stale elements are collected by compaction.
    DropMeta,
    /// Rewrite the metadata as empty with a new version; stale elements are
    /// collected by compaction.
    ResetMeta,
    /// Remove the elements: a range delete over the key's records when the
    /// collection has at least `min_size` elements, otherwise one by one.
    RemoveElements {
        /// Smallest size deleted by range.
        min_size: u64,
    },
}

/// How the sorted-set score index orders scores.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ScoreIndex {
    /// The index holds the exact score.
    Exact,
    /// The index holds the score rounded to `decimals` places; exact scores
    /// live only in the member records.
    Rounded {
        /// Decimal places kept.
        decimals: u32,
    },
}

/// How namespaces are kept apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Namespaces {
    /// No namespaces.
    None,
    /// A name prefix on every key, optionally followed by a cluster slot.
    Prefix {
        /// Whether keys carry a cluster slot.
        slots: bool,
    },
    /// One column family per namespace.
    ColumnFamily,
}

/// Everything a format declares about its behaviour.
#[derive(Clone, Debug)]
pub struct Capabilities {
    /// Where metadata is found.
    pub meta_lookup: MetaLookup,
    /// Expiry precision.
    pub ttl: TtlResolution,
    /// Largest storable absolute expiry, in unix milliseconds.
    pub max_expire_ms: u64,
    /// Element-record version width.
    pub version_width: VersionWidth,
    /// Longest key of each collection type, if limited.
    pub collection_key_limit: Option<usize>,
    /// `DEL` of a collection.
    pub delete: DeleteModel,
    /// Types whose metadata is kept with size 0 when the last element goes.
    pub keeps_empty_meta: &'static [DataType],
    /// List addressing.
    pub list_model: ListModel,
    /// Score index precision.
    pub score_index: ScoreIndex,
    /// Smallest and largest storable score, if limited.
    pub score_limit: Option<(f64, f64)>,
    /// Namespaces.
    pub namespaces: Namespaces,
    /// How expiries given relative to now (`EXPIRE`, `SETEX`, `SET EX`, …)
    /// are stored.
    pub relative_expiry: RelativeExpiry,
    /// Whether the engine deletes expired keys in the background, and how
    /// often (`None`: expired keys are only hidden, and collected by
    /// compaction filters).
    pub active_expiry: Option<ActiveExpiry>,
    /// Whether string values carry a stamp the engine supplies as
    /// [`crate::Meta::version`] (Pika 4's floyd stores the time a value
    /// was created, in ms): the engine then gives every string it creates
    /// a version from [`crate::Codec::next_version`], as it does a new
    /// collection, and keeps a decoded string's version when it rewrites
    /// the value. False: strings have version 0.
    pub string_version: bool,
    /// Whether a key can be created again with a version it held before
    /// while element records of that version remain: versions come from
    /// a clock that repeats within a millisecond, and a string replacing a
    /// collection's one shared metadata record (then `DEL`) leaves no
    /// trace of the old version (Pika 4's floyd). The engine then takes the
    /// next version until the new collection's element range is empty.
    /// False: versions are never reused.
    pub version_may_repeat: bool,
    /// Whether collection metadata may be stored without its element
    /// count, and how a decoded [`Meta`] says so.
    pub size_unknown: SizeUnknown,
    /// Whether every record of a key, whatever its type, lives in one
    /// instance that the key alone decides: true for a store of one
    /// instance and for floyd (which spreads keys over its instances by
    /// hash), false for blackwidow and nemo (one instance per type: a key
    /// written as a string and then as a hash touches two). The engine
    /// then commits a pipeline's group of commands that each wrote one
    /// instance as one write per instance, without the store's intent
    /// record (`Engine::atomically_on`).
    pub key_in_one_instance: bool,
}

impl Capabilities {
    /// Whether `meta` was stored without its element count
    /// ([`SizeUnknown::VariantBit`]). The engine then counts the elements
    /// in [`crate::Codec::sub_range`] to know the size (and range-deletes
    /// the key on `DEL`); [`crate::Codec::encode_meta`] keeps writing the
    /// count as unknown.
    pub fn size_unknown(&self, meta: &Meta) -> bool {
        match self.size_unknown {
            SizeUnknown::Never => false,
            SizeUnknown::VariantBit(bit) => {
                meta.data_type.is_collection() && meta.variant & bit != 0
            }
        }
    }
}

/// Whether a collection's metadata can lack its element count.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SizeUnknown {
    /// Every collection's metadata holds its element count.
    Never,
    /// A collection's metadata may hold "unknown" instead of a count
    /// (Ardb: size −1); the codec then sets this bit of [`Meta::variant`]
    /// when it decodes such metadata.
    VariantBit(u8),
}

/// How an expiry given relative to now is stored, and what a stored
/// whole-second expiry means.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RelativeExpiry {
    /// A relative expiry becomes the absolute time `now + ttl`, stored at
    /// the format's [`TtlResolution`] like any absolute expiry.
    Exact,
    /// Whole seconds, counted the way Pika's nemo counts them: a stored
    /// second `s` keeps the key live **through** second `s` (it is stale
    /// once `now_s > s`; the codec decodes `s` as `s * 1000 + 999` ms), and
    /// a relative TTL of `ttl_s` seconds is stored as
    /// `s = now_s + ttl_s - 1` with `now_s` truncated to whole seconds
    /// (a TTL in milliseconds counts as `ceil(ttl_ms / 1000)` seconds). An
    /// absolute expiry is stored as the second that holds it,
    /// `s = floor(expire_ms / 1000)`.
    SecondsMinusOne,
}

/// Active expiry: the compaction filter reports expired keys
/// ([`crate::Codec::gc_expired_key`]) instead of dropping them, and a
/// periodic task of the engine deletes every reported key that is still
/// expired when the task runs (Ardb's compaction filter and cron task).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ActiveExpiry {
    /// How often the task runs, in milliseconds.
    pub period_ms: u64,
}
