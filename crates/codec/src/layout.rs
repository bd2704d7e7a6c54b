//! Where a format's records live: instances (one RocksDB each), their column
//! families, the comparator and garbage-collection rule of each family.

use std::cmp::Ordering;

/// A key comparator a column family is opened with.
#[derive(Copy, Clone)]
pub struct ComparatorSpec {
    /// The name RocksDB records in the MANIFEST; must match the real system's.
    pub name: &'static str,
    /// The total order over encoded keys.
    pub compare: fn(&[u8], &[u8]) -> Ordering,
}

/// The order of a custom comparator that parses its keys: two keys that
/// `parse` are ordered by `cmp` on their parts; a key that does not parse
/// (malformed) sorts after every key that does, and malformed keys compare
/// bytewise among themselves. A total order that never panics.
pub fn malformed_last<'a, T>(
    a: &'a [u8],
    b: &'a [u8],
    parse: impl Fn(&'a [u8]) -> Option<T>,
    cmp: impl FnOnce(T, T) -> Ordering,
) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

impl std::fmt::Debug for ComparatorSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The full merge of a [`MergeOperatorSpec`]: the key, its base value
/// (`None`: there is none) and its merge operands, oldest first, give the
/// merged value; `None` fails the merge.
pub type FullMergeFn = fn(
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &mut dyn Iterator<Item = &[u8]>,
) -> Option<Vec<u8>>;

/// A merge operator a column family is opened with, for a real system
/// that wrote RocksDB merge operands (Ardb's `ardb.merger`). RocksDB calls
/// `full_merge` when a read or a compaction meets a key's operands together
/// with its base value (or the lack of one). Operands are never combined
/// without their base: there is no partial merge, RocksDB keeps them as
/// they are. When `full_merge` returns `None`, RocksDB fails the read or
/// the compaction with `Corruption: Merge operator failed`.
#[derive(Copy, Clone)]
pub struct MergeOperatorSpec {
    /// The operator's name. RocksDB does not record or check it.
    pub name: &'static str,
    /// The full merge.
    pub full_merge: FullMergeFn,
}

impl std::fmt::Debug for MergeOperatorSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Which garbage-collection rule a column family's compaction filter applies.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GcRule {
    /// No filter: keep every record.
    KeepAll,
    /// Metadata records: drop by [`crate::Codec::gc_meta`].
    Metadata,
    /// Element records: drop by [`crate::Codec::gc_sub`] after looking up
    /// their owner's metadata.
    SubKeys,
    /// Drop every record (replication-only families).
    DropAll,
    /// Metadata and element records share the family: the engine asks
    /// [`crate::Codec::gc_sub_owner`]; a record with an owner is judged by
    /// [`crate::Codec::gc_sub`] after its owner's metadata is looked up,
    /// any other record by [`crate::Codec::gc_meta`].
    MetaAndSubKeys,
}

/// One column family of an instance.
#[derive(Clone, Debug)]
pub struct CfSpec {
    /// Column family name (`default` for RocksDB's default family).
    pub name: &'static str,
    /// Custom comparator, or `None` for RocksDB's bytewise order.
    pub comparator: Option<ComparatorSpec>,
    /// Compaction-filter rule.
    pub gc: GcRule,
    /// Merge operator, or `None` for a format that never writes merge
    /// operands. The families of an instance that the layout does not name
    /// ([`InstanceSpec::other_families`]) are opened with the merge operator
    /// of the instance's first family that declares one.
    pub merge: Option<MergeOperatorSpec>,
    /// Whether the family is created by the first write to it rather than
    /// when the store is created (Ardb creates a namespace's family
    /// lazily). Until then it reads as empty.
    pub created_on_first_write: bool,
}

impl CfSpec {
    /// A family that exists from the start and takes no merge operands:
    /// `name`, ordered by `comparator` (`None`: bytewise), compacted by
    /// `gc`.
    pub const fn plain(name: &'static str, comparator: Option<ComparatorSpec>, gc: GcRule) -> Self {
        CfSpec {
            name,
            comparator,
            gc,
            merge: None,
            created_on_first_write: false,
        }
    }
}

/// One RocksDB instance of a layout.
#[derive(Clone, Debug)]
pub struct InstanceSpec {
    /// Directory relative to the store directory.
    pub dir: &'static str,
    /// Column families in the order the real system opens them.
    pub column_families: Vec<CfSpec>,
    /// Column families whose presence marks a store of another kind (an
    /// older release, …), each with the reason the store is refused.
    pub refused: &'static [(&'static str, &'static str)],
    /// How to open the column families of the instance that the layout
    /// does not name (Ardb: the other namespaces of a store):
    /// `Some(comparator)` opens each with that comparator and no compaction
    /// filter, and never writes to it; `None` refuses a store that holds
    /// one.
    pub other_families: Option<ComparatorSpec>,
}

impl InstanceSpec {
    /// The instance in `dir` holding `column_families`, refusing no
    /// family and opening no family it does not name.
    pub fn new(dir: &'static str, column_families: Vec<CfSpec>) -> Self {
        InstanceSpec {
            dir,
            column_families,
            refused: &[],
            other_families: None,
        }
    }
}

/// A format's whole on-disk layout.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Instances in the order the real system opens them.
    pub instances: Vec<InstanceSpec>,
}

impl Layout {
    /// The column family at `place`.
    pub fn cf(&self, place: Place) -> &CfSpec {
        &self.instances[place.instance].column_families[place.cf]
    }

    /// Every place of the layout, instances and families in layout order.
    pub fn places(&self) -> impl Iterator<Item = Place> + '_ {
        self.instances.iter().enumerate().flat_map(|(i, inst)| {
            (0..inst.column_families.len()).map(move |cf| Place { instance: i, cf })
        })
    }
}

/// A column family of a layout: indexes into [`Layout::instances`] and that
/// instance's [`InstanceSpec::column_families`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// Instance index.
    pub instance: usize,
    /// Column family index within the instance.
    pub cf: usize,
}

impl Place {
    /// A place from its two indexes.
    pub const fn new(instance: usize, cf: usize) -> Place {
        Place { instance, cf }
    }
}

/// An encoded key and where it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The column family.
    pub place: Place,
    /// The encoded key.
    pub key: Vec<u8>,
}

/// A half-open range of encoded keys in one column family, ordered by that
/// family's comparator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRange {
    /// The column family.
    pub place: Place,
    /// Inclusive lower bound.
    pub lower: Vec<u8>,
    /// Exclusive upper bound.
    pub upper: Vec<u8>,
}

/// The smallest byte string greater than every string starting with
/// `prefix`, in bytewise order: drop trailing `0xFF` bytes, then add one to
/// the last byte. `None` if `prefix` is all `0xFF` (or empty).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut out = prefix[..=last].to_vec();
    out[last] += 1;
    Some(out)
}

/// `prefix` followed by sixteen `0xFF` bytes: the upper bound a range
/// starting at `prefix` takes where no exact one exists (a prefix of only
/// `0xFF` bytes, which no format's key prefix is). Unreachable through
/// the codecs; kept so that nothing panics.
pub fn beyond_prefix(prefix: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    out.extend_from_slice(&[0xFF; 16]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_successor_rule() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff"), None);
        assert_eq!(prefix_successor(b""), None);
        assert_eq!(beyond_prefix(b"\xff").len(), 17);
    }
}
