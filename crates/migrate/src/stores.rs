//! The two stores of a migration or a verification: never one store
//! twice.

use std::path::Path;

use redcodec_codec::Codec;
use redcodec_engine::Engine;

use crate::error::MigrateError;

/// Refuses to compare or copy a store with itself.
pub(crate) fn check_distinct<A: Codec, B: Codec>(
    src: &Engine<A>,
    dst: &Engine<B>,
) -> Result<(), MigrateError> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if canonical(src.store().root()) == canonical(dst.store().root()) {
        return Err(MigrateError::SameStore);
    }
    Ok(())
}
