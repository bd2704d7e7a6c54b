//! The floyd on-disk format of Pika 4.x (`OpenAtomFoundation/pika`,
//! `src/storage`, v4.0.1 and later; v4.0.0's second-resolution records are
//! read too).
//!
//! Every module reads top to bottom beside `formats-spec/floyd.md`:
//!
//! - [`layout`]: `db-instance-num` RocksDB instances of seven column
//!   families each;
//! - [`route`]: which instance holds a key (CRC-32 slot, as Pika);
//! - [`keys`]: the escaped user key, metadata and element keys, ranges;
//! - [`comparator`]: `floyd.ListsDataKeyComparator` and
//!   `floyd.ZSetsScoreKeyComparator`;
//! - [`meta`]: string values and collection metadata values, with the
//!   type byte and the millisecond times;
//! - [`elements`]: element records' families, ids and values;
//! - [`version`]: the millisecond version rule;
//! - [`gc`]: the compaction filters;
//! - `codec`: [`FloydCodec`], the [`redcodec_codec::Codec`]
//!   implementation.

#![deny(missing_docs)]

mod codec;
pub mod comparator;
pub mod elements;
pub mod gc;
pub mod keys;
pub mod layout;
pub mod meta;
pub mod route;
pub mod version;

pub use codec::{FloydCodec, FloydOptions, OptionsError, MAX_EXPIRE_MS};
