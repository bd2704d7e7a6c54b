//! The [`Codec`] trait: everything the engine asks of a format.

use crate::{
    Capabilities, DataType, DecodeError, Elements, EncodeError, KeyRange, Layout, Meta, Place,
    Record, SubId, SubIdRef, SubKind, SubValue, SubValueRef,
};

/// What a compaction filter does with one record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GcDecision {
    /// Keep the record.
    Keep,
    /// Drop the record.
    Drop,
}

/// The metadata record an element record belongs to, parsed from the
/// element's key for garbage collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubOwner {
    /// The owner's metadata record.
    pub meta: Record,
    /// The version stamped in the element's key or value (0 if it has
    /// none).
    pub version: u64,
}

/// What one metadata key says of how its store was written, for formats
/// that keep namespaces (and cluster slots) in their keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyShape {
    /// The namespace the key belongs to.
    pub namespace: Vec<u8>,
    /// Whether the key carries a cluster slot that matches its user key.
    pub slotted: bool,
    /// The first key, in the family's order, past every key of the
    /// namespace (`None`: they run to the end of the family). A walk
    /// that wants one key of each namespace seeks there.
    pub namespace_end: Option<Vec<u8>>,
}

/// What a format declares of itself: its name, its layout and the
/// capabilities the engine adapts to.
#[derive(Clone, Debug)]
pub struct Declaration {
    /// The format's name as the command line spells it.
    pub name: &'static str,
    /// Instances, column families, comparators and GC rules.
    pub layout: Layout,
    /// The behaviours the engine adapts to.
    pub capabilities: Capabilities,
}

/// One on-disk format: its layout, its declared capabilities, and the
/// encoding of every record. Implementations are pure byte functions.
pub trait Codec: Send + Sync + 'static {
    /// The format's name, layout and capabilities.
    fn declaration(&self) -> &Declaration;

    /// The format's name as the command line spells it; the format
    /// registry (`redcodec-formats`) takes each format's name from here.
    #[inline]
    fn name(&self) -> &'static str {
        self.declaration().name
    }

    /// Instances, column families, comparators and GC rules.
    #[inline]
    fn layout(&self) -> &Layout {
        &self.declaration().layout
    }

    /// The behaviours the engine adapts to.
    #[inline]
    fn capabilities(&self) -> &Capabilities {
        &self.declaration().capabilities
    }

    /// The next version for a key whose previous version was
    /// `previous`, at `now_us` (unix microseconds), with the engine's
    /// running `counter`.
    fn next_version(&self, now_us: u64, counter: u64, previous: Option<u64>) -> u64;

    /// Fresh metadata for a new key of type `data_type` with `version`.
    fn new_meta(&self, data_type: DataType, version: u64) -> Meta;

    /// Metadata that takes the place of `old`, a collection's metadata
    /// still stored (expired, emptied, or live and being deleted), at
    /// `version`: what [`crate::DeleteModel::ResetMeta`]'s `DEL` writes,
    /// and the new key of `old`'s type written over a stale one. Empty,
    /// as [`Codec::new_meta`] (the default); a format whose real system
    /// re-initializes the old record differently from a new one (floyd:
    /// Pika's `InitialMetaValue` clears the creation time) says so here.
    fn reset_meta(&self, old: &Meta, version: u64) -> Meta {
        self.new_meta(old.data_type, version)
    }

    /// The metadata record of `key`. With [`crate::MetaLookup::Shared`]
    /// `data_type` is ignored; with `PerType` it picks the place.
    fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError>;

    /// The metadata value bytes.
    fn encode_meta(&self, meta: &Meta) -> Result<Vec<u8>, EncodeError> {
        self.encode_meta_with(meta, &meta.value)
    }

    /// [`Codec::encode_meta`] with `string` as a string's payload in
    /// place of [`Meta::value`] (which is not read): a write encodes the
    /// bytes a client sent without copying them into its metadata first.
    fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError>;

    /// Decodes metadata read from the place of `data_type` (which
    /// shared-place formats ignore: the bytes name the type).
    fn decode_meta(&self, data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError>;

    /// Ranges holding every metadata record, with the type of each
    /// place for per-type formats (`None` for a shared place).
    fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)>;

    /// The user key of a metadata record found in a
    /// [`Codec::meta_ranges`] range, or `None` for a record that is
    /// not a key's metadata (format bookkeeping).
    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError>;

    /// Ranges holding every record of this store's keyspace (its
    /// namespace, where it has one), for FLUSHDB.
    fn flush_ranges(&self) -> Vec<KeyRange>;

    /// Ranges holding every record of every keyspace this codec's places
    /// reach, for FLUSHALL: every namespace of a format whose namespaces
    /// share its families (Kvrocks, whose FLUSHALL range-deletes from the
    /// first to the last metadata key). By default this keyspace's
    /// [`Codec::flush_ranges`] (one keyspace, or namespaces in families
    /// of their own that the codec's places do not name).
    fn flush_all_ranges(&self) -> Vec<KeyRange> {
        self.flush_ranges()
    }

    /// Where the element records of `kind` of `key` live. Most formats
    /// keep every key's elements of a kind in one family; a format that
    /// spreads keys over several instances by a hash of the key (Pika 4's
    /// floyd) keeps them in the key's instance.
    fn sub_place(&self, kind: SubKind, key: &[u8]) -> Place;

    /// Every place element records of `kind` can live in, whatever their
    /// key (for `check`, which reads them all). By default the one place
    /// [`Codec::sub_place`] gives, for formats where it does not depend on
    /// the key.
    fn sub_places(&self, kind: SubKind) -> Vec<Place> {
        vec![self.sub_place(kind, b"")]
    }

    /// Every place element records of any kind can live in, in order,
    /// each once (for the commands that read them all: `check`,
    /// `analyze`).
    fn element_places(&self) -> Vec<Place> {
        let mut places: Vec<Place> = SubKind::ALL
            .into_iter()
            .flat_map(|kind| self.sub_places(kind))
            .collect();
        places.sort();
        places.dedup();
        places
    }

    /// The key of the element record `id` of `of`.
    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8>;

    /// The range holding every element record of `of`.
    fn sub_range(&self, of: Elements<'_>) -> KeyRange;

    /// Decodes the identity of an element record found in
    /// [`Codec::sub_range`].
    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError>;

    /// The value bytes of an element record of `of` ([`SubValue::view`]
    /// of a decoded value; a command's own bytes as they came).
    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8>;

    /// Decodes the value of an element record of `of`.
    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError>;

    /// Compaction rule for a metadata record.
    fn gc_meta(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> GcDecision;

    /// The owner of the element record `key` (whose stored value is
    /// `value`), or `None` if it is not an element record: it is
    /// then kept, or, in a [`crate::GcRule::MetaAndSubKeys`]
    /// family, judged by [`Codec::gc_meta`].
    fn gc_sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner>;

    /// The owner of the element record `key` of `place` (whose stored
    /// value is `value`) for reading: the metadata record of its key and
    /// the version it carries; `None` if it is not an element record.
    /// Where the format's compaction rule names no owner
    /// ([`Codec::gc_sub_owner`] is `None` for every record: Ardb, whose
    /// `DEL` removes all of a key's records at once), a format names it
    /// here, so that a reader going through a family can add each element
    /// record to its key. A hook because it parses the record's key. By
    /// default the compaction rule's owner.
    fn sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner> {
        self.gc_sub_owner(place, key, value)
    }

    /// Compaction rule for an element record whose owner is `owner`
    /// and whose owner's metadata bytes are `meta` (`None`: missing).
    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision;

    // Byte hooks. What a format *is* (its places, its comparators, which
    // families appear lazily, how it expires, deletes and counts) is a
    // fact in `Layout` and `Capabilities`, the closed list the engine
    // branches on. The methods below stay on the trait because each one
    // encodes or parses record bytes that only the format knows; each has
    // a default that says "this format has no such records", so a format
    // overrides only the ones its bytes need.

    /// Records the real system writes on every open. The engine puts them
    /// after opening the layout, before serving commands, as
    /// `(record, value)`. A hook because the keys and values are the
    /// format's bytes (nemo's separator records); none by default.
    fn bootstrap_records(&self) -> Vec<(Record, Vec<u8>)> {
        Vec::new()
    }

    /// Whether the element record of `of` whose stored value is
    /// `raw_value` belongs to the key's current version. Formats that keep
    /// the version in the element's value leave older versions' records in
    /// the key's [`Codec::sub_range`]; for those this is false and the
    /// engine treats the record as absent: skipped in scans, `None` in point
    /// reads, and a write over it adds an element. A hook because it parses
    /// the value's bytes (nemo); true by default.
    fn sub_is_current(&self, of: Elements<'_>, raw_value: &[u8]) -> bool {
        let _ = (of, raw_value);
        true
    }

    /// One range holding every record of `key`, its metadata included, for
    /// formats whose `DEL` removes a key with one range delete, or by
    /// iterating that range (Ardb: `[META key, END key)`). A hook because
    /// the bounds are encoded keys. `None`: the format has none.
    fn key_range(&self, key: &[u8]) -> Option<KeyRange> {
        let _ = key;
        None
    }

    /// With [`crate::Capabilities::active_expiry`]: the user key of a
    /// metadata record of `place` that has expired at `now_ms`, which the
    /// compaction filter keeps but reports to the engine's periodic expiry
    /// task. A hook because it parses the record's key and value. `None`
    /// for every other record, and by default.
    fn gc_expired_key(
        &self,
        place: Place,
        key: &[u8],
        value: &[u8],
        now_ms: u64,
    ) -> Option<Vec<u8>> {
        let _ = (place, key, value, now_ms);
        None
    }

    /// The namespace and slot shape of the raw metadata key `raw` found at
    /// `place`, in any namespace of the store. A hook because it parses a
    /// key's bytes (Kvrocks' namespace prefix and slot). `None` where the
    /// format keeps no namespace in its keys (or `raw` is not a metadata
    /// key), and by default.
    fn key_shape(&self, place: Place, raw: &[u8]) -> Option<KeyShape> {
        let _ = (place, raw);
        None
    }

    /// Records that `member` was just written into the set or sorted set
    /// `meta` (Ardb widens the lowest and highest member kept in
    /// [`Meta::bounds`]). A hook because the bounds follow the format's own
    /// member order. Default: nothing.
    fn note_member(&self, meta: &mut Meta, member: &[u8]) {
        let _ = (meta, member);
    }
}
