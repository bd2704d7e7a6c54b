//! Why a payload was refused, and the reply Redis gives for it.

use redcodec_codec::DecodeError;
use thiserror::Error;

/// A DUMP payload that cannot be restored.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum DumpError {
    /// Shorter than its footer, an RDB version above 10, or a CRC64 that
    /// does not match.
    #[error("DUMP payload version or checksum are wrong")]
    VersionOrChecksum,
    /// The object's bytes are not a valid object (the detail names what).
    #[error("Bad data format: {0}")]
    BadData(String),
}

impl DumpError {
    /// The error reply Redis 7.0 gives RESTORE for this payload.
    pub fn reply_text(&self) -> &'static str {
        match self {
            DumpError::VersionOrChecksum => "ERR DUMP payload version or checksum are wrong",
            DumpError::BadData(_) => "ERR Bad data format",
        }
    }
}

impl From<DecodeError> for DumpError {
    fn from(e: DecodeError) -> DumpError {
        DumpError::BadData(e.to_string())
    }
}

/// A [`DumpError::BadData`] with its reason.
pub(crate) fn bad(why: impl Into<String>) -> DumpError {
    DumpError::BadData(why.into())
}

/// Result of decoding.
pub type DumpResult<T> = Result<T, DumpError>;
