//! The planning pass: one walk over the source's metadata, on its own
//! thread while the copy starts, counting what is left to migrate and
//! finding every key the destination cannot represent. The copy commits
//! nothing before the plan is in (see `Run::plan_settled`), so a
//! migration refused for such keys writes nothing at all.

use std::sync::atomic::{AtomicBool, Ordering};

use redcodec_codec::Codec;

use crate::options::TypeConflict;
use crate::report::Skipped;
use crate::represent::{self, Unrepresentable};
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::Engine;

/// Unrepresentable keys kept by name (all are counted).
const LISTED: usize = 20;

/// What the planning pass found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Live keys after the resume point.
    pub keys: u64,
    /// Their elements (a string counts as one).
    pub elements: u64,
    /// The first keys the destination cannot represent (when asked).
    pub unrepresentable: Vec<Skipped>,
    /// How many more there are.
    pub more: u64,
}

/// Walks the live keys of `src` after `after`; with `check`, judges each
/// against `destination` (and, with [`TypeConflict::Fail`], lists keys
/// held in several types whatever `check` says). Returns early (with what it has) once `cancel`
/// is set.
pub(crate) fn walk<A: Codec, B: Codec>(
    src: &Engine<A>,
    destination: &B,
    after: Option<&[u8]>,
    check: bool,
    conflicts: TypeConflict,
    cancel: &AtomicBool,
) -> Result<Found, CmdError> {
    let ctx = Ctx::new(src);
    let mut walk = KeyWalk::new(&ctx, after);
    let mut found = Found::default();
    while let Some((key, meta)) = walk.next()? {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let Some(meta) = meta else {
            if check {
                if let Some(type_name) = super::reader::unmodelled(&ctx, &key) {
                    let reason = Unrepresentable::Unmodelled { type_name };
                    if found.unrepresentable.len() < LISTED {
                        found.unrepresentable.push(Skipped {
                            key,
                            data_type: None,
                            reason,
                        });
                    } else {
                        found.more += 1;
                    }
                }
            }
            continue;
        };
        found.keys += 1;
        found.elements += if meta.data_type.is_collection() {
            meta.size
        } else {
            1
        };
        if !check && conflicts != TypeConflict::Fail {
            continue;
        }
        let found_reason = represent::check(&ctx, destination, &key, &meta, conflicts)?;
        let stops = |reason: &Unrepresentable| match reason {
            Unrepresentable::SeveralTypes { .. } => conflicts == TypeConflict::Fail,
            _ => check,
        };
        if let Some(reason) = found_reason.filter(stops) {
            if found.unrepresentable.len() < LISTED {
                found.unrepresentable.push(Skipped {
                    key,
                    data_type: Some(meta.data_type),
                    reason,
                });
            } else {
                found.more += 1;
            }
        }
    }
    Ok(found)
}
