//! Engine errors, and the Redis reply text each one becomes.

use redcodec_codec::{DecodeError, EncodeError};
use redcodec_store::StoreError;
use thiserror::Error;

/// Failures of the storage layer.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The store (RocksDB) reported an error.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// Stored bytes do not decode.
    #[error("{0}")]
    Corrupt(#[from] DecodeError),
    /// A value the format cannot store.
    #[error("{0}")]
    Unrepresentable(#[from] EncodeError),
    /// The directory cannot be opened as a store of this format.
    #[error("{0}")]
    Open(String),
    /// Writing output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Why a command failed; each variant renders as Redis' exact error text.
#[derive(Debug, Error)]
pub enum CmdError {
    /// `WRONGTYPE ...`
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// Wrong arity for the named command (lower-case name).
    #[error("ERR wrong number of arguments for '{0}' command")]
    WrongArity(String),
    /// Unknown command.
    #[error("ERR unknown command '{name}', with args beginning with: {args}")]
    UnknownCommand {
        /// The command name as sent.
        name: String,
        /// The first arguments, quoted as Redis quotes them.
        args: String,
    },
    /// `ERR syntax error`
    #[error("ERR syntax error")]
    Syntax,
    /// `ERR value is not an integer or out of range`
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    /// `ERR value is not a valid float`
    #[error("ERR value is not a valid float")]
    NotFloat,
    /// `ERR no such key`
    #[error("ERR no such key")]
    NoSuchKey,
    /// The key holds a type redcodec does not model.
    #[error(
        "ERR key {} holds a {type_name}, a type redcodec does not model",
        crate::reply::quote_bytes(key)
    )]
    Unmodelled {
        /// The key.
        key: Vec<u8>,
        /// The real system's name of the type.
        type_name: &'static str,
    },
    /// Any other error with its complete Redis text.
    #[error("{0}")]
    Other(String),
    /// A storage failure, reported with an `ERR` prefix.
    #[error("ERR {0}")]
    Engine(#[from] EngineError),
}

impl CmdError {
    /// An error with a literal Redis text.
    pub fn other(text: impl Into<String>) -> CmdError {
        CmdError::Other(text.into())
    }

    /// The text for a program's own message (a command line's error, a
    /// log): a storage failure without the `ERR` of its Redis reply.
    pub fn message(&self) -> String {
        match self {
            CmdError::Engine(e) => e.to_string(),
            e => e.to_string(),
        }
    }
}

impl From<StoreError> for CmdError {
    fn from(e: StoreError) -> Self {
        CmdError::Engine(EngineError::Store(e))
    }
}

impl From<DecodeError> for CmdError {
    fn from(e: DecodeError) -> Self {
        CmdError::Engine(EngineError::Corrupt(e))
    }
}

impl From<EncodeError> for CmdError {
    fn from(e: EncodeError) -> Self {
        CmdError::Engine(EngineError::Unrepresentable(e))
    }
}

/// Result of a command step.
pub type CmdResult<T> = Result<T, CmdError>;
