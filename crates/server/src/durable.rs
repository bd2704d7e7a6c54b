//! Files in the data directory that must survive a crash whole or not at
//! all: written to a temporary file, synced, renamed over the old one,
//! and the directory entry synced.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` atomically and durably (a temporary file
/// beside it, `path` with the extension `tmp`, renamed over it).
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    sync_dir(path)
}

/// Makes the directory entry of `path` durable.
pub fn sync_dir(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(dir) => File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

/// Reads `path` and removes it durably: its text, or `None` when there is
/// no such file.
pub fn take(path: &Path) -> std::io::Result<Option<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    remove(path)?;
    Ok(Some(text))
}

/// Removes `path` (nothing to do if it is not there) and makes the
/// removal durable.
pub fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => sync_dir(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_is_replaced_whole_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        super::replace(&path, b"one").unwrap();
        super::replace(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(!path.with_extension("tmp").exists());
        assert_eq!(super::take(&path).unwrap().as_deref(), Some("two"));
        assert!(!path.exists());
        assert_eq!(super::take(&path).unwrap(), None);
        super::replace(&path, b"three").unwrap();
        super::remove(&path).unwrap();
        assert!(!path.exists());
        super::remove(&path).unwrap();
    }
}
