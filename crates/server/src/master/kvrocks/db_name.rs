//! `db-name`, what the master side of Kvrocks' protocol is started with
//! (a leaf: [`crate::config`] holds it).

/// Kvrocks' default `db-name`.
pub const DEFAULT_DB_NAME: &str = "change.me.db";

/// What the master side of Kvrocks' protocol is started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `db-name`: what `_db_name` answers.
    pub db_name: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            db_name: DEFAULT_DB_NAME.to_string(),
        }
    }
}
