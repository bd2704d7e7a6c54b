//! Redis semantics over RocksDB, written once and generic over a
//! [`redcodec_codec::Codec`].
//!
//! [`Engine::execute`] takes a command as its arguments and returns the
//! [`Reply`] Redis 7 would give; [`clock`] makes time injectable so the bytes
//! a run writes can be reproduced exactly.

pub mod check;
mod cmd;
pub mod cmdline;
pub mod dispatch;
mod engine;
pub mod error;
pub mod expiry;
mod fnv;
pub mod keyspace;
mod locks;
pub mod long_double;
pub mod migrate;
pub mod namespaces;
pub mod number;
pub mod reply;
pub mod typed;
pub mod value;
mod walk;

pub use engine::{Engine, EngineCore, EngineOptions};
pub use error::{CmdError, EngineError};
pub use redcodec_store as store;
pub use redcodec_store::clock;
pub use redcodec_store::{Clock, Compat, ManualClock, OpenMode, Store, StoreOptions, SystemClock};
pub use reply::Reply;
