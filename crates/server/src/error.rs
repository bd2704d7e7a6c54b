//! Errors of the server layer.

use thiserror::Error;

/// Why the server could not start or stop cleanly.
#[derive(Debug, Error)]
pub enum ServerError {
    /// Binding the listening socket or another socket operation.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Opening the engine, or flushing it at shutdown.
    #[error("{0}")]
    Engine(#[from] redcodec_engine::EngineError),
}
