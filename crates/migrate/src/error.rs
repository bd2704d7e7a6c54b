//! Why a migration fails.

use thiserror::Error;

use crate::report::Skipped;
use redcodec_engine::error::{CmdError, EngineError};

/// Why a migration failed.
#[derive(Debug, Error)]
pub enum MigrateError {
    /// Reading or writing a store failed. A storage failure reads as the
    /// store's own message, without the `ERR` of a Redis reply.
    #[error("{}", .0.message())]
    Store(#[from] CmdError),
    /// Source and destination are one directory.
    #[error("the source and the destination are the same directory")]
    SameStore,
    /// The destination holds data and merging was not asked for.
    #[error("the destination already holds data (for example key {key}); refusing to migrate into it without merge")]
    DestinationNotEmpty {
        /// A key it holds, quoted.
        key: String,
    },
    /// `--bulk` into a destination that holds records.
    #[error("the bulk path writes only into an empty destination, and this one holds records (for example {key}): migrate without --bulk")]
    BulkNotEmpty {
        /// One record's key, quoted.
        key: String,
    },
    /// A checkpoint exists and resuming was not asked for.
    #[error("an interrupted migration is recorded in {path}: resume it, or delete that file to start over")]
    CheckpointPresent {
        /// The checkpoint file.
        path: String,
    },
    /// The checkpoint cannot be used.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The checkpoint file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A source key's metadata does not decode.
    #[error("source key {key} is unreadable; nothing was written for it")]
    SourceUnreadable {
        /// The key, quoted.
        key: String,
    },
    /// Keys the destination cannot represent (stop mode).
    #[error("{}", unrepresentable_text(.format, .keys, *.more))]
    Unrepresentable {
        /// The destination format.
        format: String,
        /// The first such keys.
        keys: Vec<Skipped>,
        /// How many more there are.
        more: u64,
    },
    /// A migration with a server failed: the server, the command and the
    /// key, or what to do next.
    #[error("{0}")]
    Network(String),
}

/// A [`MigrateError::Network`] with `message`.
pub(crate) fn fail(message: impl Into<String>) -> MigrateError {
    MigrateError::Network(message.into())
}

fn unrepresentable_text(format: &str, keys: &[Skipped], more: u64) -> String {
    let mut text = format!(
        "{} key{} cannot be stored in the {format} format; nothing was written for {}:",
        keys.len() as u64 + more,
        if keys.len() as u64 + more == 1 {
            ""
        } else {
            "s"
        },
        if keys.len() as u64 + more == 1 {
            "it"
        } else {
            "them"
        }
    );
    for k in keys {
        text.push_str(&format!("\n  {k}"));
    }
    if more > 0 {
        text.push_str(&format!("\n  … and {more} more"));
    }
    text
}

impl From<EngineError> for MigrateError {
    fn from(e: EngineError) -> Self {
        MigrateError::Store(CmdError::Engine(e))
    }
}

impl From<redcodec_engine::store::StoreError> for MigrateError {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        MigrateError::Store(CmdError::Engine(EngineError::Store(e)))
    }
}
