//! The logical model every format stores: a metadata record per key plus
//! records per element.

/// The five Redis data types redcodec stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// A string value.
    String,
    /// Field → value.
    Hash,
    /// An ordered sequence of values.
    List,
    /// Unordered unique members.
    Set,
    /// Members ordered by an exact `f64` score.
    ZSet,
}

impl DataType {
    /// Every type, in the order formats with one metadata place per type probe them.
    pub const ALL: [DataType; 5] = [
        DataType::String,
        DataType::Hash,
        DataType::Set,
        DataType::List,
        DataType::ZSet,
    ];

    /// The collection types: every type but strings.
    pub const COLLECTIONS: [DataType; 4] = [
        DataType::Hash,
        DataType::Set,
        DataType::List,
        DataType::ZSet,
    ];

    /// The name Redis' `TYPE` command gives.
    pub fn redis_name(self) -> &'static str {
        match self {
            DataType::String => "string",
            DataType::Hash => "hash",
            DataType::List => "list",
            DataType::Set => "set",
            DataType::ZSet => "zset",
        }
    }

    /// Parses a `TYPE` name as `SCAN ... TYPE` accepts it (case-insensitive).
    pub fn from_redis_name(name: &[u8]) -> Option<DataType> {
        let lower = name.to_ascii_lowercase();
        DataType::ALL
            .into_iter()
            .find(|t| t.redis_name().as_bytes() == lower.as_slice())
    }

    /// Whether values of this type are collections of element records.
    pub fn is_collection(self) -> bool {
        self != DataType::String
    }
}

/// Where a list's elements sit, in the model the format declares
/// (see [`crate::ListModel`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ListBounds {
    /// Not a list.
    None,
    /// Array model: elements at the integer indexes `[head, tail)`.
    Array {
        /// Index of the first element.
        head: u64,
        /// One past the index of the last element.
        tail: u64,
    },
    /// Doubly linked nodes: sequence numbers of the first and last node, and
    /// the next unused sequence number. `0` is the null link.
    Linked {
        /// Sequence number of the first node (0 when empty).
        left: i64,
        /// Sequence number of the last node (0 when empty).
        right: i64,
        /// Next sequence number to hand out; never reused.
        next_seq: i64,
    },
    /// Sparse numeric index: the lowest and highest element index, and
    /// whether indexes are still consecutive integers.
    Sparse {
        /// Lowest index in use.
        min: SparseIndex,
        /// Highest index in use.
        max: SparseIndex,
        /// True while `min..=max` are consecutive integers.
        sequential: bool,
    },
}

impl ListBounds {
    /// `(left, right, next_seq)` of linked bounds; `None` for another
    /// model.
    #[inline]
    pub fn linked(&self) -> Option<(i64, i64, i64)> {
        match *self {
            ListBounds::Linked {
                left,
                right,
                next_seq,
            } => Some((left, right, next_seq)),
            _ => None,
        }
    }

    /// `(min, max, sequential)` of sparse bounds; `None` for another
    /// model.
    #[inline]
    pub fn sparse(&self) -> Option<(SparseIndex, SparseIndex, bool)> {
        match *self {
            ListBounds::Sparse {
                min,
                max,
                sequential,
            } => Some((min, max, sequential)),
            _ => None,
        }
    }
}

/// A sparse list index: an integer, or a float after an insert between two
/// neighbours.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SparseIndex {
    /// An integer index.
    Int(i64),
    /// A fractional index.
    Float(f64),
}

/// The metadata of one key, in logical units.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// The key's type.
    pub data_type: DataType,
    /// Absolute expiry in unix milliseconds; 0 means no expiry.
    pub expire_ms: u64,
    /// Version stamped on the key's element records (0 where a format has none).
    pub version: u64,
    /// Number of elements (0 for strings).
    pub size: u64,
    /// List positions (lists only).
    pub list: ListBounds,
    /// The string payload (strings only).
    pub value: Vec<u8>,
    /// A format-specific encoding variant read from disk and kept when the
    /// record is rewritten (Kvrocks: the legacy 32-bit common-field layout).
    pub variant: u8,
    /// Sets and sorted sets, for formats that store them (Ardb): the lowest
    /// and highest member the collection has held, in the format's member
    /// order — bounds for a seek, not kept exact on removal. Widened by
    /// [`crate::Codec::note_member`]; `None`: none stored (or unknown).
    pub bounds: Option<(Vec<u8>, Vec<u8>)>,
}

impl Meta {
    /// Metadata of a string key.
    pub fn string(value: Vec<u8>, expire_ms: u64) -> Meta {
        Meta {
            data_type: DataType::String,
            expire_ms,
            version: 0,
            size: 0,
            list: ListBounds::None,
            value,
            variant: 0,
            bounds: None,
        }
    }

    /// Metadata of a new, empty key of `data_type` at `version`: no
    /// expiry, no elements, no value; a list has `empty_list`, the bounds
    /// of the format's empty list.
    pub fn fresh(data_type: DataType, version: u64, empty_list: ListBounds) -> Meta {
        Meta {
            data_type,
            version,
            list: if data_type == DataType::List {
                empty_list
            } else {
                ListBounds::None
            },
            ..Meta::string(Vec::new(), 0)
        }
    }

    /// Whether the key has expired at `now_ms`: as in Redis, a key is
    /// still live at the very millisecond it expires.
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.expire_ms != 0 && self.expire_ms < now_ms
    }
}

/// The kinds of element record.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SubKind {
    /// Hash field → value.
    HashField,
    /// Set member → nothing.
    SetMember,
    /// Sorted-set member → score.
    ZSetMember,
    /// Sorted-set score index: (score, member) → nothing.
    ZSetScore,
    /// List element at a position → value.
    ListItem,
}

impl SubKind {
    /// Every kind of element record.
    pub const ALL: [SubKind; 5] = [
        SubKind::HashField,
        SubKind::SetMember,
        SubKind::ZSetMember,
        SubKind::ZSetScore,
        SubKind::ListItem,
    ];

    /// The type whose elements are of this kind.
    pub fn owner_type(self) -> DataType {
        match self {
            SubKind::HashField => DataType::Hash,
            SubKind::SetMember => DataType::Set,
            SubKind::ZSetMember | SubKind::ZSetScore => DataType::ZSet,
            SubKind::ListItem => DataType::List,
        }
    }

    /// The element records of this kind of `key` whose metadata is `meta`.
    pub fn of<'a>(self, key: &'a [u8], meta: &'a Meta) -> Elements<'a> {
        Elements {
            kind: self,
            key,
            meta,
        }
    }
}

/// The element records of one kind of one version of a key: what every
/// element record's key and value are encoded under.
#[derive(Copy, Clone, Debug)]
pub struct Elements<'a> {
    /// The kind of element.
    pub kind: SubKind,
    /// The user key.
    pub key: &'a [u8],
    /// The key's metadata (its version, for most formats).
    pub meta: &'a Meta,
}

/// What identifies an element record inside its key.
#[derive(Clone, Debug, PartialEq)]
pub enum SubId {
    /// A hash field, set member or sorted-set member.
    Name(Vec<u8>),
    /// A score-index entry. For a format with a lossy score index the decoded
    /// score is the indexed (rounded) one.
    Scored {
        /// The score.
        score: f64,
        /// The member.
        member: Vec<u8>,
    },
    /// A list position in the array model.
    Index(u64),
    /// A list node in the linked model.
    Seq(i64),
    /// A list position in the sparse model.
    Sparse(SparseIndex),
}

impl SubId {
    /// Whether this is the id of an element of `kind` in a format whose
    /// lists follow `lists`: a name for a field or member, a score and a
    /// member for a score-index entry, and for a list item the position
    /// `lists` addresses items by.
    pub fn is_of(&self, kind: SubKind, lists: ListModel) -> bool {
        self.view().is_of(kind, lists)
    }
}

/// An element id to encode, its bytes borrowed: what a [`SubId`] holds, so
/// that a command makes an element's key from the field or member a client
/// sent, without a copy of it first ([`crate::Codec::sub_key`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SubIdRef<'a> {
    /// A hash field, set member or sorted-set member.
    Name(&'a [u8]),
    /// A score-index entry.
    Scored {
        /// The score.
        score: f64,
        /// The member.
        member: &'a [u8],
    },
    /// A list position in the array model.
    Index(u64),
    /// A list node in the linked model.
    Seq(i64),
    /// A list position in the sparse model.
    Sparse(SparseIndex),
}

impl SubId {
    /// The id with its bytes borrowed, to encode.
    pub fn view(&self) -> SubIdRef<'_> {
        match self {
            SubId::Name(name) => SubIdRef::Name(name),
            SubId::Scored { score, member } => SubIdRef::Scored {
                score: *score,
                member,
            },
            SubId::Index(i) => SubIdRef::Index(*i),
            SubId::Seq(s) => SubIdRef::Seq(*s),
            SubId::Sparse(sparse) => SubIdRef::Sparse(*sparse),
        }
    }
}

impl SubIdRef<'_> {
    /// Whether this is the id of an element of `kind` ([`SubId::is_of`]).
    pub fn is_of(self, kind: SubKind, lists: ListModel) -> bool {
        match (kind, self) {
            (SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember, SubIdRef::Name(_)) => {
                true
            }
            (SubKind::ZSetScore, SubIdRef::Scored { .. }) => true,
            (SubKind::ListItem, SubIdRef::Index(_)) => matches!(lists, ListModel::Array { .. }),
            (SubKind::ListItem, SubIdRef::Seq(_)) => lists == ListModel::Linked,
            (SubKind::ListItem, SubIdRef::Sparse(_)) => lists == ListModel::Sparse,
            _ => false,
        }
    }

    /// The id with its bytes copied.
    pub fn to_sub_id(self) -> SubId {
        match self {
            SubIdRef::Name(name) => SubId::Name(name.to_vec()),
            SubIdRef::Scored { score, member } => SubId::Scored {
                score,
                member: member.to_vec(),
            },
            SubIdRef::Index(i) => SubId::Index(i),
            SubIdRef::Seq(s) => SubId::Seq(s),
            SubIdRef::Sparse(sparse) => SubId::Sparse(sparse),
        }
    }
}

/// The logical value of an element record.
#[derive(Clone, Debug, PartialEq)]
pub enum SubValue {
    /// No value (set members, score-index entries).
    Empty,
    /// A byte string (hash values, array or sparse list elements).
    Bytes(Vec<u8>),
    /// A sorted-set member's exact score.
    Score(f64),
    /// A linked-list node.
    Node {
        /// Previous node's sequence number (0: none).
        prev: i64,
        /// Next node's sequence number (0: none).
        next: i64,
        /// The element.
        value: Vec<u8>,
    },
}

/// An element value to encode, its bytes borrowed: what a [`SubValue`]
/// holds, so that a command encodes the bytes a client sent as they came
/// ([`crate::Codec::encode_sub_value`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SubValueRef<'a> {
    /// No value (set members, score-index entries).
    Empty,
    /// A byte string (hash values, array or sparse list elements).
    Bytes(&'a [u8]),
    /// A sorted-set member's exact score.
    Score(f64),
    /// A linked-list node.
    Node {
        /// Previous node's sequence number (0: none).
        prev: i64,
        /// Next node's sequence number (0: none).
        next: i64,
        /// The element.
        value: &'a [u8],
    },
}

impl SubValue {
    /// The value with its bytes borrowed, to encode.
    pub fn view(&self) -> SubValueRef<'_> {
        match self {
            SubValue::Empty => SubValueRef::Empty,
            SubValue::Bytes(b) => SubValueRef::Bytes(b),
            SubValue::Score(s) => SubValueRef::Score(*s),
            SubValue::Node { prev, next, value } => SubValueRef::Node {
                prev: *prev,
                next: *next,
                value,
            },
        }
    }

    /// The bytes of a `Bytes` or `Node` value.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            SubValue::Bytes(v) | SubValue::Node { value: v, .. } => Some(v),
            _ => None,
        }
    }
}

/// How list elements are addressed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ListModel {
    /// Consecutive integer indexes `[head, tail)`.
    Array {
        /// Which side an insert or removal in the middle moves.
        shift: ListShift,
    },
    /// Doubly linked nodes with never-reused sequence numbers.
    Linked,
    /// Numeric indexes, fractional after LINSERT.
    Sparse,
}

/// For array lists: how LINSERT and LREM choose the elements to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ListShift {
    /// Move the part on the shorter side; on a tie move the head side.
    /// LINSERT compares the two sides of the gap the new element goes into
    /// (Kvrocks); LREM compares the elements each side would move.
    ShorterSideHeadOnTie,
    /// LINSERT moves the head side when the elements *before the pivot* are
    /// no more than those after it, whether the insert is BEFORE or AFTER
    /// the pivot (blackwidow: `pivot <= left + (right - left) / 2`). The
    /// moved part is still the one on that side of the gap, so with AFTER
    /// the pivot itself moves down. LREM behaves as
    /// [`ListShift::ShorterSideHeadOnTie`].
    PivotHalfHeadOnTie,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_fit_their_kind_and_list_model() {
        let array = ListModel::Array {
            shift: crate::ListShift::ShorterSideHeadOnTie,
        };
        let name = SubId::Name(b"f".to_vec());
        let scored = SubId::Scored {
            score: 1.5,
            member: b"m".to_vec(),
        };
        for kind in [SubKind::HashField, SubKind::SetMember, SubKind::ZSetMember] {
            assert!(name.is_of(kind, array));
            assert!(!scored.is_of(kind, array));
        }
        assert!(scored.is_of(SubKind::ZSetScore, ListModel::Linked));
        assert!(!name.is_of(SubKind::ZSetScore, ListModel::Linked));
        let lists = [
            (SubId::Index(1), array),
            (SubId::Seq(1), ListModel::Linked),
            (SubId::Sparse(SparseIndex::Float(0.5)), ListModel::Sparse),
        ];
        for (id, model) in &lists {
            for (_, other) in &lists {
                assert_eq!(id.is_of(SubKind::ListItem, *other), model == other);
            }
            assert!(!id.is_of(SubKind::HashField, *model));
        }
    }

    #[test]
    fn fresh_metadata_is_empty_but_for_the_list_bounds() {
        let bounds = ListBounds::Array { head: 7, tail: 7 };
        let list = Meta::fresh(DataType::List, 9, bounds.clone());
        assert_eq!((list.version, list.size, list.expire_ms), (9, 0, 0));
        assert_eq!(list.list, bounds);
        let hash = Meta::fresh(DataType::Hash, 9, bounds);
        assert_eq!(hash.list, ListBounds::None);
        assert_eq!(hash.data_type, DataType::Hash);
        let string = Meta::fresh(DataType::String, 0, ListBounds::None);
        assert_eq!(string, Meta::string(Vec::new(), 0));
    }
}
