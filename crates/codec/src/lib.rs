//! The shared vocabulary of redcodec: the logical Redis data model, the
//! description of an on-disk layout, the capabilities a format declares, and
//! the [`Codec`] trait every format implements.
//!
//! This crate is pure: no RocksDB, no I/O. A format crate turns logical
//! records into bytes and back; the engine decides what to write.

mod caps;
mod codec;
pub mod elements;
mod error;
mod layout;
mod model;
pub mod number;
pub mod reader;

pub use caps::{
    ActiveExpiry, Capabilities, DeleteModel, MetaLookup, Namespaces, RelativeExpiry, ScoreIndex,
    SizeUnknown, TtlResolution, VersionWidth,
};
pub use codec::{Codec, Declaration, GcDecision, KeyShape, SubOwner};
pub use error::{DecodeError, EncodeError};
pub use layout::{
    beyond_prefix, malformed_last, prefix_successor, CfSpec, ComparatorSpec, FullMergeFn, GcRule,
    InstanceSpec, KeyRange, Layout, MergeOperatorSpec, Place, Record,
};
pub use model::{
    DataType, Elements, ListBounds, ListModel, ListShift, Meta, SparseIndex, SubId, SubIdRef,
    SubKind, SubValue, SubValueRef,
};
pub use reader::Reader;
