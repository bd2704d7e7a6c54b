//! The engine's insides that the other crates of this workspace build on
//! (the server's command registry, migration's per-key reads, the
//! conformance oracle): not an API for embedding, and not kept stable.
//! The files stay beside the engine's other modules; the crate names them
//! `crate::dispatch`, `crate::keyspace`, … as before.

#[path = "cursors.rs"]
pub mod cursors;
#[path = "dispatch.rs"]
pub mod dispatch;
#[path = "keyspace.rs"]
pub mod keyspace;
#[path = "lookups.rs"]
pub mod lookups;
#[cfg(feature = "rocksdb")]
#[path = "namespaces.rs"]
pub mod namespaces;
#[path = "number.rs"]
pub mod number;
#[path = "walk.rs"]
pub mod walk;

/// The stripes of the engine's per-key locks: which stripe guards a key
/// (the server awaits its commands' stripes before they run,
/// `redcodec_server::admission`), and how many there are.
pub mod lock_stripes {
    pub use crate::locks::{stripe, STRIPES};
}
