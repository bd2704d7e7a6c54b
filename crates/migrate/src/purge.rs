//! Removing every trace of a key from the destination, for a resumed run:
//! its metadata and element records, deleted in bounded batches.

use redcodec_codec::{Codec, Meta};

use crate::error::MigrateError;
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::keyspace::{kinds_of, Ctx};
use redcodec_engine::store::Batch;
use redcodec_engine::Engine;

/// Removes every record of `key` from `engine`: the elements of every
/// metadata record found (live or dead, any type), then the metadata,
/// writing a batch every `chunk` deletions.
pub(super) fn purge_key<C: Codec>(
    engine: &Engine<C>,
    key: &[u8],
    chunk: usize,
) -> Result<(), MigrateError> {
    let ctx = Ctx::new(engine);
    let view = ctx.view(key)?;
    for meta in view.live.iter().chain(&view.dead) {
        delete_elements(engine, key, meta, chunk)?;
        let record = engine
            .codec()
            .meta_record(key, meta.data_type)
            .map_err(CmdError::from)?;
        let mut batch = Batch::default();
        batch.delete(record.place, record.key);
        engine.store().write(batch)?;
    }
    Ok(())
}

/// Deletes the element records of `key` under `meta`, a batch every
/// `chunk` records.
pub(super) fn delete_elements<C: Codec>(
    engine: &Engine<C>,
    key: &[u8],
    meta: &Meta,
    chunk: usize,
) -> Result<(), MigrateError> {
    for &kind in kinds_of(meta.data_type) {
        let range = engine.codec().sub_range(kind.of(key, meta));
        let mut it = engine.store().scan(&range, None, false);
        let mut batch = Batch::default();
        let mut queued = 0;
        while let Some((raw, _)) = it.next()? {
            batch.delete(range.place, raw);
            queued += 1;
            if queued >= chunk {
                engine.store().write(std::mem::take(&mut batch))?;
                queued = 0;
            }
        }
        if queued > 0 {
            engine.store().write(batch)?;
        }
    }
    Ok(())
}
