//! Redis semantics over RocksDB, written once and generic over a
//! [`redcodec_codec::Codec`].
//!
//! [`Engine::execute`] takes a command as its arguments and returns the
//! [`Reply`] Redis 7 would give; [`clock`] makes time injectable so the bytes
//! a run writes can be reproduced exactly.
//!
//! # Architecture
//!
//! Floors, each importing only the floors below it:
//!
//! ```text
//! engine     Engine: open, execute, background tasks (engine.rs)
//!   │
//! dispatch   command lookup by name (dispatch.rs), over the table
//!   │        cmd::table() builds from command.rs's Table and Keys
//! cmd        the command table (cmd/table.rs: every command's name, arity,
//!   │        keys and handler) and one module per command family
//!   │        (cmd/strings.rs, cmd/hashes.rs, cmd/lists/, cmd/zsets/, ...)
//! types      what a type is in records (types/): whole-value read,
//!   │        write (through ValueMut: keyspace, key, metadata) and visit,
//!   │        list models behind ListOps, the sorted-set walk, random
//!   │        picks; also used by value.rs, typed.rs and migration
//! keyspace   Ctx: one command's view of the keyspace (keyspace.rs), on
//!   │        EngineCore (core.rs): codec, store, clock, locks, cursors
//! store      behind redcodec_store::KvStore (get, multi-get, ordered scan,
//!            write batch): Store (RocksDB, compaction filters) by default,
//!            MemStore (in memory) for Engine::in_memory and unit tests
//! ```
//!
//! Beside the floors: `expiry` (the store side of active expiry, a pass
//! over reported keys, and the task side, the thread that runs it),
//! `namespaces`, [`check`], [`typed`] and [`value`] (typed reads and
//! whole values for tools and migration, which lives in its own crate,
//! `redcodec-migrate`). `scripts/modgraph` prints the module graph's
//! cycles: there are none.
//!
//! # What is public
//! [`Engine`] and its options, [`Reply`], the errors, the typed API
//! ([`typed`], [`value`]), [`check`], [`observe`] and [`cmdline`]. The
//! other modules are private; what the workspace's other crates need of
//! them is re-exported from one hidden module, `internals`.

mod atomic;
#[cfg(feature = "rocksdb")]
pub mod check;
mod cmd;
pub mod cmdline;
mod command;
mod core;
mod engine;
pub mod error;
mod event;
mod expiry;
mod expiry_pin;
mod fnv;
mod geohash;
pub mod key_events;
mod locks;
mod long_double;
pub mod observe;
pub mod reply;
pub mod typed;
mod types;
pub mod value;

#[doc(hidden)]
pub mod internals;
#[cfg(feature = "rocksdb")]
use internals::namespaces;
use internals::{cursors, dispatch, keyspace, lookups, number, walk};

pub use engine::{Engine, EngineCore, EngineOptions};
pub use error::{CmdError, EngineError};
pub use expiry_pin::ExpiryPin;
pub use locks::Held;
pub use redcodec_store as store;
pub use redcodec_store::clock;
#[cfg(feature = "rocksdb")]
pub use redcodec_store::Store;
pub use redcodec_store::{Clock, Compat, ManualClock, OpenMode, StoreOptions, SystemClock};
pub use reply::Reply;
