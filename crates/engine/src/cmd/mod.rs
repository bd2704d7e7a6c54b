//! Command implementations, one module per family, listed in one command
//! table ([`table`]). Each family implements each command once, through
//! [`Ctx`](crate::keyspace::Ctx) and the codec's declared capabilities.
//!
//! Below the families, [`crate::types`] holds what a type is on disk:
//! whole-value read, write and visit, the list models, the sorted-set walk
//! and the random picks. Families import [`crate::types`] and [`args`],
//! never each other and never this module.

pub use table::table;

pub(crate) mod args;
mod bitfield;
mod dump;
mod hashes;
mod hyperloglog;
mod keys;
mod kvrocks_args;
mod lists;
mod scan;
mod scan_args;
mod server;
mod sets;
mod sort;
mod stored;
mod strings;
mod table;
mod variants;
mod zsets;

#[cfg(test)]
pub(crate) mod testkit;
