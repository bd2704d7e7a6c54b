//! Command implementations, one module per family. Each module registers
//! its commands in the table and implements each command once, through
//! [`Ctx`](crate::keyspace::Ctx) and the codec's declared capabilities.
//!
//! Below the families, [`types`] holds what a type is on disk: whole-value
//! read, write and visit, the list models, the sorted-set walk and the
//! random picks. Families import [`types`] and [`args`], never each other
//! and never this module.

use crate::store::KvStore;
use redcodec_codec::Codec;

use crate::command::Table;

pub(crate) mod args;
mod dump;
mod hashes;
mod keys;
mod lists;
mod scan;
mod scan_args;
mod server;
mod sets;
mod sort;
mod stored;
mod strings;
pub(crate) mod types;
mod variants;
mod zsets;

/// The table of every command the engine implements, each family
/// registering its own.
pub fn table<C: Codec, S: KvStore>() -> Table<C, S> {
    let mut t = Table::default();
    strings::register(&mut t);
    hashes::register(&mut t);
    lists::register(&mut t);
    sets::register(&mut t);
    zsets::register(&mut t);
    keys::register(&mut t);
    sort::register(&mut t);
    scan::register(&mut t);
    server::register(&mut t);
    dump::register(&mut t);
    t
}

#[cfg(test)]
pub(crate) mod testkit;
