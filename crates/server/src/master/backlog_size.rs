//! The backlog's default size (a leaf: [`crate::settings`] names it).

/// Redis' default `repl-backlog-size`: 1 MB.
pub const DEFAULT_BACKLOG_SIZE: usize = 1024 * 1024;
