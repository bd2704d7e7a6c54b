//! The two stores of a migration or a verification: never one store
//! twice, and both in bulk mode while every key is read once.

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

/// Both stores set for one pass over everything: reads do not fill the
/// block cache (memory would grow with the store). Dropping it restores
/// them.
pub(crate) struct BulkMode<'a, A: Codec, B: Codec> {
    src: &'a Engine<A>,
    dst: &'a Engine<B>,
}

impl<'a, A: Codec, B: Codec> BulkMode<'a, A, B> {
    pub(crate) fn enter(src: &'a Engine<A>, dst: &'a Engine<B>) -> BulkMode<'a, A, B> {
        src.store().set_fill_cache(false);
        dst.store().set_fill_cache(false);
        BulkMode { src, dst }
    }
}

impl<A: Codec, B: Codec> Drop for BulkMode<'_, A, B> {
    fn drop(&mut self) {
        self.src.store().set_fill_cache(true);
        self.dst.store().set_fill_cache(true);
    }
}
