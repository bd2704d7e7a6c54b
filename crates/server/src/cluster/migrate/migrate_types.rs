//! `migrate-type`'s values (a leaf: [`crate::settings`] names them).

/// `migrate-type`'s values (Kvrocks' `migration_types`), default first.
pub const MIGRATE_TYPES: &[&str] = &["redis-command", "raw-key-value"];
