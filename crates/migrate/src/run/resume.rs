//! The start of a run: a fresh destination checked, or the checkpoint of
//! an interrupted run picked up (the keys its last commit may have touched
//! removed, the version counter restored); and the checkpoint itself.

use std::path::Path;

use redcodec_codec::{Codec, Meta};

use super::{Mark, Run};
use crate::checkpoint::{checkpoint_error, dir_bytes, Checkpoint};
use crate::error::MigrateError;
use crate::purge::{delete_elements, purge_key};
use crate::represent;
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::Engine;

impl<A: Codec, B: Codec> Run<'_, A, B> {
    /// Checks the destination, or picks up the checkpoint of an
    /// interrupted run, and plans.
    pub(super) fn start(&mut self) -> Result<(), MigrateError> {
        let existing = match &self.options.checkpoint {
            Some(path) if path.exists() => Some(path.clone()),
            _ => None,
        };
        match existing {
            Some(path) if !self.options.resume => Err(MigrateError::CheckpointPresent {
                path: path.display().to_string(),
            }),
            Some(path) => self.resume_from(&path),
            None => {
                if !self.merge {
                    let ctx = Ctx::new(self.dst);
                    if let Some((key, _)) = KeyWalk::new(&ctx, None).next()? {
                        return Err(MigrateError::DestinationNotEmpty {
                            key: quote_bytes(&key),
                        });
                    }
                }
                let probe = self.merge || has_metadata(self.dst)?;
                self.set_probe(probe);
                self.fresh = true;
                let counter = self.dst.version_counter();
                self.committed.counter = counter;
                self.last_complete.counter = counter;
                self.current.counter = counter;
                self.save_checkpoint(None)
            }
        }
    }

    /// The checkpoint as of now, with `pending` the key cut by the commit
    /// about to happen.
    fn checkpoint(&self, pending: Option<&Meta>) -> Result<Checkpoint, MigrateError> {
        let pending = match pending {
            Some(meta) => Some((
                meta.data_type,
                self.dst.codec().encode_meta(meta).map_err(CmdError::from)?,
            )),
            None => None,
        };
        Ok(Checkpoint {
            source_format: self.src.codec().name().to_string(),
            source_dir: dir_bytes(self.src.store().root()),
            destination_format: self.dst.codec().name().to_string(),
            merge: self.merge,
            probe: self.probe,
            done: self.committed.key.clone(),
            counter: self.committed.counter,
            through: self.last_queued.clone(),
            through_count: self.current.walked - self.committed.walked,
            pending,
            tally: self.committed.tally,
            expired: self.committed.expired,
            skipped: self.skipped.clone(),
            bulk: None,
        })
    }

    pub(super) fn save_checkpoint(&mut self, pending: Option<&Meta>) -> Result<(), MigrateError> {
        let Some(path) = &self.options.checkpoint else {
            return Ok(());
        };
        if self.options.sync {
            // Everything the checkpoint calls done must be on disk first.
            self.dst.store().sync_wal()?;
        }
        self.checkpoint(pending)?
            .save(path, self.options.sync)
            .map_err(|e| checkpoint_error(path, e.to_string()))
    }

    /// Loads the checkpoint, removes every trace of the keys the
    /// interrupted commit may have touched, and continues after `done`.
    fn resume_from(&mut self, path: &Path) -> Result<(), MigrateError> {
        let cp = Checkpoint::load(path).map_err(|reason| checkpoint_error(path, reason))?;
        let mismatch = |what: &str, recorded: &str, now: &str| {
            checkpoint_error(
                path,
                format!("it records a migration with {what} {recorded}, not {now}"),
            )
        };
        let src_name = self.src.codec().name();
        let dst_name = self.dst.codec().name();
        if cp.source_format != src_name {
            return Err(mismatch("source format", &cp.source_format, src_name));
        }
        if cp.destination_format != dst_name {
            return Err(mismatch(
                "destination format",
                &cp.destination_format,
                dst_name,
            ));
        }
        let here = dir_bytes(self.src.store().root());
        if cp.source_dir != here {
            return Err(mismatch(
                "source",
                &String::from_utf8_lossy(&cp.source_dir),
                &String::from_utf8_lossy(&here),
            ));
        }
        self.merge = cp.merge;
        self.set_probe(cp.probe);
        self.purge_in_flight(path, &cp)?;
        self.dst.set_version_counter(cp.counter);
        let mark = Mark {
            key: cp.done.clone(),
            counter: cp.counter,
            tally: cp.tally,
            expired: cp.expired,
            walked: 0,
        };
        self.committed = mark.clone();
        self.last_complete = mark.clone();
        self.current = mark;
        self.skipped_keys = cp.skipped.iter().map(|s| s.key.clone()).collect();
        self.skipped = cp.skipped;
        self.resumed_after = Some(cp.done);
        Ok(())
    }

    /// Deletes the destination records of the keys after `done` up to
    /// `through`, and the orphan elements of a key cut between commits.
    fn purge_in_flight(&mut self, path: &Path, cp: &Checkpoint) -> Result<(), MigrateError> {
        let dst = self.dst;
        if let Some((ty, raw)) = &cp.pending {
            if let Some(key) = &cp.through {
                let meta = dst.codec().decode_meta(*ty, raw).map_err(|e| {
                    checkpoint_error(path, format!("pending metadata does not decode: {e}"))
                })?;
                delete_elements(dst, key, &meta, self.limits.elements)?;
            }
        }
        let Some(through) = &cp.through else {
            return Ok(());
        };
        let src_ctx = Ctx::new(self.src);
        let mut walk = KeyWalk::new(&src_ctx, cp.done.as_deref());
        let mut walked = 0;
        while walked < cp.through_count {
            let Some((key, meta)) = walk.next()? else {
                break;
            };
            walked += 1;
            // A key the destination cannot hold was never written: leave
            // whatever the destination has under that name.
            let representable = meta
                .as_ref()
                .is_some_and(|m| represent::check_key(dst.codec(), &key, m).is_none());
            if representable {
                purge_key(dst, &key, self.limits.elements)?;
            }
            if &key == through {
                break;
            }
        }
        Ok(())
    }
}

/// Whether `engine` holds any metadata record, live or not.
fn has_metadata<C: Codec>(engine: &Engine<C>) -> Result<bool, MigrateError> {
    for (range, _) in engine.codec().meta_ranges() {
        if engine.store().scan(&range, None, false).next()?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}
