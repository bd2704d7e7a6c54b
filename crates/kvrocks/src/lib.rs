//! The Apache Kvrocks on-disk format (commit `5fccd57c`, October 2024).
//!
//! Every module reads top to bottom beside `formats-spec/kvrocks.md`:
//!
//! - [`layout`]: the one RocksDB instance and its column families;
//! - [`slot`]: cluster slots (CRC16/XMODEM and hash tags);
//! - [`keys`]: metadata keys (`ns_key`) and subkeys (`InternalKey`);
//! - [`score`]: the order-preserving double encoding;
//! - [`meta`]: metadata values, new (64-bit) and legacy (32-bit) layouts;
//! - [`version`]: the version stamped on subkeys;
//! - [`gc`]: the `MetadataFilter` and `SubKeyFilter` compaction rules;
//! - [`batch`]: RocksDB write batches as a master streams them;
//! - [`changes`]: a batch's changes as Redis commands, for a replica;
//! - `codec`: [`KvrocksCodec`], the [`redcodec_codec::Codec`] implementation.
//!
//! Only strings, hashes, lists, sets and sorted sets are supported; metadata
//! of any other Kvrocks type decodes to [`redcodec_codec::DecodeError::Unmodelled`].

#![deny(missing_docs)]

pub mod batch;
pub mod changes;
mod codec;
pub mod gc;
pub mod keys;
pub mod layout;
pub mod meta;
pub mod score;
pub mod slot;
pub mod version;

pub use codec::KvrocksCodec;

use thiserror::Error;

/// The namespace Kvrocks uses when a client has not selected one
/// (`kDefaultNamespace`, `src/config/config.h`).
pub const DEFAULT_NAMESPACE: &[u8] = b"__namespace";

/// How a Kvrocks store is keyed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvrocksOptions {
    /// The namespace name written in front of every key (at most 255 bytes).
    pub namespace: Vec<u8>,
    /// Cluster mode (`cluster-enabled yes`): a 2-byte slot follows the
    /// namespace in every key.
    pub cluster: bool,
}

impl Default for KvrocksOptions {
    fn default() -> Self {
        KvrocksOptions {
            namespace: DEFAULT_NAMESPACE.to_vec(),
            cluster: false,
        }
    }
}

/// Options Kvrocks could not have written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptionsError {
    /// The namespace length must fit the one-byte length prefix.
    #[error("kvrocks namespace is {len} bytes; at most 255 are allowed")]
    NamespaceTooLong {
        /// The namespace length.
        len: usize,
    },
    /// A 255-byte namespace of only `0xFF` bytes: no key range can bound it.
    #[error("kvrocks namespace of 255 0xFF bytes has no upper bound")]
    NamespaceUnbounded,
}
