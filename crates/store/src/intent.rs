//! The intent record: makes a write that spans several RocksDB instances
//! (blackwidow and nemo keep one per type) all-or-nothing across a crash.
//!
//! A write that touches two or more instances first records every
//! instance's batch in the file `redcodec-intent` at the store's root
//! (written to a temporary name, synced, renamed, the directory synced),
//! then writes the batches, syncs those instances' write-ahead logs and
//! removes the file (the directory synced again). A read-write open that
//! finds the file writes its batches again before anything else, then
//! removes it: a crash anywhere after the rename ends as "the command
//! happened", anywhere before it as "it did not". Writing a batch again
//! is harmless: it holds the command's final puts and deletes, and no
//! other write ran after it (multi-instance writes are serialized, and
//! the file is only left behind by a crash). A write to one instance is
//! atomic in RocksDB itself and writes no intent.
//!
//! File format: `redcodec-intent 1\n`, the number of batches (u32 LE),
//! then per batch the instance index (u32 LE), the length of the batch
//! (u64 LE) and RocksDB's serialized batch (`WriteBatch::data`).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::StoreError;

/// The file name, at the store's root.
pub const INTENT_FILE: &str = "redcodec-intent";

const MAGIC: &[u8] = b"redcodec-intent 1\n";

/// The intent file of the store at `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(INTENT_FILE)
}

fn sync_dir(root: &Path) -> Result<(), StoreError> {
    File::open(root)?.sync_all()?;
    Ok(())
}

/// Records `batches` (instance index, serialized batch) durably.
pub fn record(root: &Path, batches: &[(usize, &[u8])]) -> Result<(), StoreError> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(
        &u32::try_from(batches.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    for (index, data) in batches {
        bytes.extend_from_slice(&u32::try_from(*index).unwrap_or(u32::MAX).to_le_bytes());
        bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
        bytes.extend_from_slice(data);
    }
    let tmp = root.join(format!("{INTENT_FILE}.tmp"));
    let mut f = File::create(&tmp)?;
    f.write_all(&bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, path(root))?;
    sync_dir(root)
}

/// Removes the intent once its batches are durable.
pub fn clear(root: &Path) -> Result<(), StoreError> {
    fs::remove_file(path(root))?;
    sync_dir(root)
}

/// Serialized batches, each with its instance index.
pub type Batches = Vec<(usize, Vec<u8>)>;

/// The batches of a pending intent, if the file exists.
pub fn pending(root: &Path) -> Result<Option<Batches>, StoreError> {
    let file = path(root);
    let bytes = match fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let bad = || {
        StoreError::Open(format!(
            "{} is not a complete intent record; remove it only if the store was \
             not written by redcodec since",
            file.display()
        ))
    };
    let mut rest = bytes.strip_prefix(MAGIC).ok_or_else(bad)?;
    let mut take = |n: usize| -> Result<&[u8], StoreError> {
        if rest.len() < n {
            return Err(bad());
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?);
    let mut batches = Vec::new();
    for _ in 0..count {
        let index = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?);
        let len = u64::from_le_bytes(take(8)?.try_into().map_err(|_| bad())?);
        let len = usize::try_from(len).map_err(|_| bad())?;
        let data = take(len)?.to_vec();
        batches.push((index as usize, data));
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    Ok(Some(batches))
}

/// Whether the test hook asks to abort the process between the instances
/// of a multi-instance write (`REDCODEC_ABORT_BETWEEN_INSTANCES=1`), as a
/// crash there would: the crash tests use it.
pub fn abort_between_instances() -> bool {
    static HOOK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HOOK.get_or_init(|| {
        std::env::var_os("REDCODEC_ABORT_BETWEEN_INSTANCES").is_some_and(|v| v == "1")
    })
}

/// How many multi-instance writes of a store opened in this process fail
/// between their instances, as a full disk would fail the second
/// (`REDCODEC_FAIL_BETWEEN_INSTANCES=N`; see
/// [`crate::Store::fail_between_instances`]): for tests of a server
/// process.
pub fn failures_between_instances() -> u64 {
    std::env::var("REDCODEC_FAIL_BETWEEN_INSTANCES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_torn_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(pending(dir.path()).unwrap().is_none());
        record(dir.path(), &[(0, b"abc"), (3, b"")]).unwrap();
        let got = pending(dir.path()).unwrap().unwrap();
        assert_eq!(got, vec![(0, b"abc".to_vec()), (3, Vec::new())]);
        let full = fs::read(path(dir.path())).unwrap();
        fs::write(path(dir.path()), &full[..full.len() - 1]).unwrap();
        assert!(matches!(pending(dir.path()), Err(StoreError::Open(_))));
        clear(dir.path()).unwrap();
        assert!(pending(dir.path()).unwrap().is_none());
    }
}
