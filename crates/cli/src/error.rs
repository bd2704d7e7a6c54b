//! Errors of the command line.

use redcodec_engine::EngineError;
use redcodec_formats::FormatError;
use redcodec_migrate::rdb_store::RdbStoreError;
use redcodec_migrate::store_spec::SpecError;
use redcodec_migrate::MigrateError;
use thiserror::Error;

/// Why a `redcodec` command failed.
#[derive(Debug, Error)]
pub enum CliError {
    /// A format name or its options.
    #[error("{0}")]
    Format(#[from] FormatError),
    /// The store could not be opened or read.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// Reading input or writing output.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A migration or verification failed.
    #[error("{0}")]
    Migrate(#[from] MigrateError),
    /// The format comparison failed.
    #[error("{0}")]
    Compare(#[from] redcodec_compare::CompareError),
    /// `check` found faults in the store (listed on stdout).
    #[error("check found {0} problem(s) in the store")]
    Findings(usize),
    /// A command line of the input could not be parsed.
    #[error("line {line}: {message}")]
    Input {
        /// 1-based input line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl From<redcodec_engine::store::StoreError> for CliError {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        CliError::Engine(e.into())
    }
}

impl From<redcodec_engine::error::CmdError> for CliError {
    fn from(e: redcodec_engine::error::CmdError) -> Self {
        match e {
            redcodec_engine::error::CmdError::Engine(e) => CliError::Engine(e),
            e => fail(e.message()),
        }
    }
}

impl From<SpecError> for CliError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Format(e) => CliError::Format(e),
            SpecError::Engine(e) => CliError::Engine(e),
            SpecError::Namespaces(message) => fail(message),
        }
    }
}

impl From<RdbStoreError> for CliError {
    fn from(e: RdbStoreError) -> Self {
        match e {
            RdbStoreError::Spec(e) => e.into(),
            RdbStoreError::Io(e) => CliError::Io(e),
            RdbStoreError::Failed(message) => fail(message),
        }
    }
}

/// An error with `message` as its whole text.
pub(crate) fn fail(message: impl Into<String>) -> CliError {
    CliError::Io(std::io::Error::other(message.into()))
}
