//! Opening an engine by naming its format: [`OpenFormat`].

use std::path::Path;

use redcodec_engine::{Engine, EngineError, EngineOptions};
use redcodec_formats::{AnyCodec, Format, FormatError, FormatOptions};

/// Why an engine could not be opened by [`OpenFormat`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The format refused its options (a namespace it cannot hold, cluster
    /// mode on a format without it).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The directory could not be opened as a store of the format.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Opens an [`Engine`] over a format chosen at run time ([`Format`]),
/// without building its codec first:
///
/// ```no_run
/// use redcodec::{Engine, EngineOptions, Format, OpenFormat};
///
/// # fn main() -> Result<(), redcodec::Error> {
/// let engine = Engine::open_format(Format::Nemo, "/var/lib/pika/db/db0", EngineOptions::read_only())?;
/// # Ok(()) }
/// ```
///
/// It is [`Format::codec`] followed by [`Engine::open`]; use those two
/// directly to open a store with one format's codec type (static
/// dispatch, e.g. `Engine<redcodec::kvrocks::KvrocksCodec>`).
pub trait OpenFormat: Sized {
    /// Opens (or, with the default [`EngineOptions`], creates) the store of
    /// `format` in `dir`, with the format's default namespace.
    fn open_format(
        format: Format,
        dir: impl AsRef<Path>,
        options: EngineOptions,
    ) -> Result<Self, Error> {
        Self::open_format_with(format, &FormatOptions::default(), dir, options)
    }

    /// As [`OpenFormat::open_format`], with a namespace or cluster mode
    /// ([`FormatOptions`]) for the formats that have them.
    fn open_format_with(
        format: Format,
        format_options: &FormatOptions,
        dir: impl AsRef<Path>,
        options: EngineOptions,
    ) -> Result<Self, Error>;
}

impl OpenFormat for Engine<AnyCodec> {
    fn open_format_with(
        format: Format,
        format_options: &FormatOptions,
        dir: impl AsRef<Path>,
        options: EngineOptions,
    ) -> Result<Self, Error> {
        let codec = format.codec(format_options)?;
        Ok(Engine::open(codec, dir, options)?)
    }
}

/// For callers that speak [`EngineError`] (a server's `Opener`): a format
/// error becomes [`EngineError::Open`].
impl From<Error> for EngineError {
    fn from(e: Error) -> EngineError {
        match e {
            Error::Format(e) => EngineError::Open(e.to_string()),
            Error::Engine(e) => e,
        }
    }
}
