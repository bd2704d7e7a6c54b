//! The blackwidow on-disk format of Pika 3.x (`Qihoo360/blackwidow`; Pika
//! v3.0–v3.5, whose `src/storage` has the same bytes).
//!
//! Every module reads top to bottom beside `formats-spec/blackwidow.md`:
//!
//! - [`layout`]: five RocksDB instances, their column families;
//! - [`keys`]: data keys and range bounds for each family's order;
//! - [`comparator`]: `ListsDataKeyComparator` and `ZSetsScoreKeyComparator`;
//! - [`meta`]: string values and collection metadata values;
//! - [`elements`]: element records' places, ids and values;
//! - [`version`]: the int32 seconds clock and the version rule;
//! - [`gc`]: the compaction filters;
//! - `codec`: [`BlackwidowCodec`], the [`redcodec_codec::Codec`]
//!   implementation.

#![deny(missing_docs)]

mod codec;
pub mod comparator;
pub mod elements;
pub mod gc;
pub mod keys;
pub mod layout;
pub mod meta;
pub mod version;

pub use codec::{BlackwidowCodec, MAX_EXPIRE_MS};

/// Length of [`TOP_KEY`].
pub const TOP_KEY_LEN: usize = 1024;

/// The upper bound of the whole-family ranges (`meta_ranges`,
/// `flush_ranges`): 1024 `0xFF` bytes.
///
/// Blackwidow keys have no prefix, so no finite key bounds a bytewise
/// family; [`redcodec_codec::KeyRange`] has no "unbounded" form. In the
/// bytewise families, keys that start with 1024 `0xFF` bytes fall outside.
/// Under the two custom comparators this key is malformed and sorts after
/// every well-formed key, so only malformed keys starting with it fall
/// outside.
pub const TOP_KEY: [u8; TOP_KEY_LEN] = [0xFF; TOP_KEY_LEN];
