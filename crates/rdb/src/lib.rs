//! Redis 7.0 DUMP payloads: `<RDB object type> ‖ <object body> ‖ <RDB
//! version u16 LE> ‖ <CRC64 u64 LE>`, as `DUMP` returns them and
//! `RESTORE` takes them. Pure bytes: no RocksDB, no engine. The byte
//! layout is in `formats-spec/dump-payload.md`.
//!
//! **Decoding** reads every object type Redis 7.0 accepts for strings,
//! lists, sets, sorted sets and hashes ([`ObjectType`]): strings plain,
//! integer-encoded (8, 16, 32 bits) or LZF-compressed; `LIST`, `SET`,
//! `ZSET`, `ZSET_2`, `HASH`; the compact encodings of older RDB versions
//! (`HASH_ZIPMAP`, `LIST_ZIPLIST`, `ZSET_ZIPLIST`, `HASH_ZIPLIST`,
//! `LIST_QUICKLIST`) and of version 10 (`SET_INTSET`, `HASH_LISTPACK`,
//! `ZSET_LISTPACK`, `LIST_QUICKLIST_2`). A payload shorter than its
//! footer, of an RDB version above 10 or with a wrong CRC is
//! [`DumpError::VersionOrChecksum`]; any other fault —  truncation, a
//! length past the input, a listpack or ziplist whose header, back-lengths
//! or terminator disagree, an intset out of order, duplicate members or
//! fields, a NaN score, an empty collection, a stream or module type — is
//! [`DumpError::BadData`]. [`DumpError::reply_text`] gives Redis' reply
//! for each. No input panics, and no length read from the input
//! allocates more than the rest of the input can hold (an LZF string
//! expands at most 88 times its compressed size). As in Redis' RESTORE,
//! the object is read from the whole payload once the footer is right:
//! bytes it leaves unread are ignored, and it may run into the footer.
//!
//! **Encoding** ([`encode_payload`]) writes what redis-server 7.0.15
//! DUMPs under its default configuration for a value built by the
//! ordinary commands:
//!
//! - strings: integer-encoded when they are a 32-bit integer's canonical
//!   text, LZF-compressed when longer than 20 bytes and compression
//!   saves 4 bytes or more, else plain;
//! - lists: `LIST_QUICKLIST_2`, listpack nodes filled as `RPUSH` fills
//!   them (`list-max-listpack-size -2`: 8 KiB per node);
//! - sets: `SET_INTSET` (narrowest width) for up to 512 integers, else
//!   `SET`;
//! - sorted sets: `ZSET_LISTPACK` for up to 128 members of at most 64
//!   bytes (whole scores as integers, others as `%.17g`), else `ZSET_2`
//!   (highest score first, binary doubles);
//! - hashes: `HASH_LISTPACK` for up to 128 pairs of at most 64 bytes,
//!   else `HASH`.
//!
//! Where the bytes can differ from Redis' (every such payload is still one
//! Redis 7.0 restores to the same value):
//!
//! - **LZF.** No crate reproduces Redis' `lzf_compress` exactly, and Redis'
//!   own output is not a function of the input alone: its hash table is
//!   left uninitialised between calls (`INIT_HTAB 0`), so earlier
//!   compressions steer later matches. The [`lzf`] crate (1.0, pure Rust,
//!   marked deprecated by its author but complete and stable; the newer
//!   `lzf-rust` 0.1 emits a different token stream for most inputs) gives
//!   Redis' bytes for about half of compressible strings and a valid,
//!   equivalent stream for the others. With
//!   [`EncodeOptions::compression`] off, the bytes equal Redis' under
//!   `rdbcompression no` for every encoding listed above.
//! - **Hash table encodings** (`SET`, `HASH`): Redis writes members in its
//!   dict's order, which depends on a hash seed drawn at start-up; these
//!   are written in the order given.
//! - **History.** Redis' encoding also depends on how a value was built:
//!   a list built by `LPUSH` or `LINSERT` has other node boundaries, an
//!   intset keeps its width after its widest member is removed, a hash
//!   keeps first-insertion order and a collection never goes back to its
//!   compact encoding when it shrinks. The encoder gives the bytes of the
//!   value built by `RPUSH`/`SADD`/`ZADD`/`HSET` in the given order.

mod error;
pub mod file_reader;
pub mod file_writer;
mod intset;
mod listpack;
mod object;
mod payload;
mod string;
mod ziplist;
mod zipmap;

pub use error::{DumpError, DumpResult};
pub use object::{decode_object, encode_object, ObjectType};
pub use payload::{decode_payload, encode_payload, seal, verify_footer, RDB_VERSION};
pub use string::EncodeOptions;

/// The logical content of a key, as a payload carries it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string.
    String(Vec<u8>),
    /// Elements, head first.
    List(Vec<Vec<u8>>),
    /// Members.
    Set(Vec<Vec<u8>>),
    /// Members with their scores.
    ZSet(Vec<(Vec<u8>, f64)>),
    /// Field–value pairs.
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
}

impl Value {
    /// The value in an order-free form, to compare values whose encodings
    /// order elements differently: sets and hashes sorted, sorted sets by
    /// member, `-0.0` scores as `0.0` (one score to Redis).
    pub fn canonical(&self) -> Value {
        match self {
            Value::Set(m) => {
                let mut m = m.clone();
                m.sort();
                Value::Set(m)
            }
            Value::Hash(p) => {
                let mut p = p.clone();
                p.sort();
                Value::Hash(p)
            }
            Value::ZSet(m) => {
                let mut m: Vec<_> = m.iter().map(|(k, s)| (k.clone(), s + 0.0)).collect();
                m.sort_by(|a, b| a.0.cmp(&b.0));
                Value::ZSet(m)
            }
            other => other.clone(),
        }
    }
}
