//! The type layer: what each Redis type is in records, below the commands.
//! Whole-value read, write and visit per type (RENAME, migration, the
//! typed API), the list models, the sorted-set walk in Redis order, and
//! the random picks. Used by `cmd`'s families, [`crate::value`], the typed
//! API and migration; imports only the keyspace ([`crate::keyspace::Ctx`])
//! and the leaves below it, never a command family.

pub(crate) mod hashes;
pub(crate) mod lists;
pub(crate) mod random;
pub(crate) mod sets;
pub(crate) mod zsets;
