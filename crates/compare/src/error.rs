//! Why a comparison fails.

/// Why a comparison failed.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A format name could not be parsed.
    #[error("{0}")]
    Format(#[from] redcodec_formats::FormatError),
    /// A store could not be opened, written or read.
    #[error("{0}")]
    Engine(#[from] redcodec_engine::EngineError),
    /// A migration of `migrate-bench` failed.
    #[error("{0}")]
    Migrate(#[from] redcodec_migrate::MigrateError),
    /// Writing the report, or a file of a store.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Anything else: bad options, a failed probe, an unexpected reply.
    #[error("{0}")]
    Failed(String),
}

impl From<redcodec_engine::store::StoreError> for CompareError {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        CompareError::Engine(e.into())
    }
}

/// An error of the comparison.
pub(crate) fn fail(message: String) -> CompareError {
    CompareError::Failed(message)
}
