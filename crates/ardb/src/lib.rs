//! The Ardb on-disk format, RocksDB engine (yinqiwen/ardb `9f703a6b9c34`,
//! April 2019, ARDB_VERSION 0.10.0).
//!
//! Every module reads top to bottom beside `formats-spec/ardb.md`:
//!
//! - [`primitives`]: varints, the tagged `Data` scalar, "try int encoding";
//! - [`keys`]: key types and `KeyObject` encoding;
//! - [`comparator`]: `ardb.comparator`, the order of every column family;
//! - [`layout`]: the `rocksdb` instance, `default` and the namespace family;
//! - [`meta`]: `META` values (strings hold their value there);
//! - [`elements`]: element keys and values of hashes, lists, sets, zsets;
//! - [`gc`]: the compaction filter;
//! - [`merge`]: merge operands and `ardb.merger`, the merge operator that
//!   resolves them;
//! - `codec`: [`ArdbCodec`], the [`redcodec_codec::Codec`] implementation.
//!
//! Only strings, hashes, lists, sets and sorted sets are supported; a
//! stream's metadata decodes to [`redcodec_codec::DecodeError::UnknownType`].

#![deny(missing_docs)]

mod codec;
pub mod comparator;
pub mod elements;
pub mod gc;
pub mod keys;
pub mod layout;
pub mod merge;
pub mod meta;
pub mod primitives;

pub use codec::{ArdbCodec, EXPIRY_PERIOD_MS, FAMILY_LOWER, FAMILY_UPPER, RANGE_DELETE_MIN_SIZE};

use thiserror::Error;

/// The namespace Ardb uses until a client `SELECT`s another
/// (`src/context.hpp`).
pub const DEFAULT_NAMESPACE: &[u8] = b"0";

/// The namespace Ardb reserves for its TTL index (`TTL_DB_NSMAESPACE`,
/// `src/db/db.hpp`); `SELECT` refuses it.
pub const TTL_DB_NAMESPACE: &str = "__TTL_DB__";

/// The longest namespace `SELECT` accepts (`src/command/connection.cpp`).
pub const MAX_NAMESPACE_LEN: usize = 512;

/// Which Ardb store to read and write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArdbOptions {
    /// The namespace, which is also the name of its column family.
    pub namespace: Vec<u8>,
}

impl Default for ArdbOptions {
    fn default() -> Self {
        ArdbOptions {
            namespace: DEFAULT_NAMESPACE.to_vec(),
        }
    }
}

/// Namespaces redcodec cannot use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptionsError {
    /// Column family names are opened as UTF-8 text.
    #[error("ardb namespace is not valid UTF-8; column family names must be")]
    NotUtf8,
    /// An empty namespace.
    #[error("ardb namespace is empty")]
    Empty,
    /// Longer than `SELECT` allows.
    #[error("ardb namespace is {len} bytes; at most 512 are allowed")]
    TooLong {
        /// The namespace length.
        len: usize,
    },
    /// A name Ardb or RocksDB uses for something else.
    #[error("ardb namespace '{name}' is reserved")]
    Reserved {
        /// The name.
        name: String,
    },
}

/// The namespace as a column family name, if redcodec can use it.
fn check_namespace(namespace: &[u8]) -> Result<&str, OptionsError> {
    let name = std::str::from_utf8(namespace).map_err(|_| OptionsError::NotUtf8)?;
    if name.is_empty() {
        return Err(OptionsError::Empty);
    }
    if name.len() > MAX_NAMESPACE_LEN {
        return Err(OptionsError::TooLong { len: name.len() });
    }
    if name == TTL_DB_NAMESPACE || name == "default" {
        return Err(OptionsError::Reserved {
            name: name.to_string(),
        });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_rules() {
        assert_eq!(check_namespace(b"0"), Ok("0"));
        assert_eq!(check_namespace(&[b'n'; 512]).map(str::len), Ok(512));
        assert_eq!(
            check_namespace(&[b'n'; 513]),
            Err(OptionsError::TooLong { len: 513 })
        );
        assert_eq!(check_namespace(b""), Err(OptionsError::Empty));
        assert_eq!(check_namespace(&[0xFF]), Err(OptionsError::NotUtf8));
        for reserved in [&b"__TTL_DB__"[..], b"default"] {
            assert!(matches!(
                check_namespace(reserved),
                Err(OptionsError::Reserved { .. })
            ));
        }
        let c = ArdbCodec::new(ArdbOptions {
            namespace: b"tenant".to_vec(),
        })
        .unwrap();
        use redcodec_codec::Codec;
        assert_eq!(c.layout().instances[0].column_families[1].name, "tenant");
        assert_eq!(c.namespace(), b"tenant");
    }
}
