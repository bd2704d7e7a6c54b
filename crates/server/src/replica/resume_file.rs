//! The replication state file (`redcodec-replica-state`) of the data
//! directory: where it is, and its removal before the store changes (the
//! rule and the contents: [`super::resume`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::state::Shared;

/// The file's name in the data directory.
pub const STATE_FILE: &str = "redcodec-replica-state";

/// The file of the server's data directory.
pub fn state_path(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(STATE_FILE)
}

/// Removes the file before the store changes (nothing to do when it is
/// not on disk).
pub fn invalidate(shared: &Shared) -> std::io::Result<()> {
    let resume = &shared.replica.resume;
    if resume.on_disk.load(Ordering::SeqCst) {
        crate::durable::remove(&state_path(shared))?;
        resume.on_disk.store(false, Ordering::SeqCst);
    }
    Ok(())
}
