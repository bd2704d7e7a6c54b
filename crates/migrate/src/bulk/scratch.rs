//! The scratch space of the bulk path: whether the next run is written
//! raw or LZ4-compressed ([`RunCompression`]), from the free space of the
//! file system the runs go to and the source's size on disk.

use std::io;
use std::path::Path;

use crate::options::{RunCompression, RAW_RUNS_HEADROOM};

use super::runs::Encoding;

/// How the next run is written. `source` is the source's size on disk;
/// `work` the directory of the runs. Free space that cannot be read
/// compresses.
pub(crate) fn run_encoding(choice: RunCompression, source: u64, work: &Path) -> Encoding {
    match choice {
        RunCompression::Lz4 => Encoding::Lz4,
        RunCompression::None => Encoding::Raw,
        RunCompression::Auto => match free_bytes(work) {
            Ok(free) if free >= source.saturating_mul(RAW_RUNS_HEADROOM) => Encoding::Raw,
            _ => Encoding::Lz4,
        },
    }
}

/// The bytes an unprivileged process may still write on the file system
/// holding `dir`.
fn free_bytes(dir: &Path) -> io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// The bytes of the files under `dir` (the source's size on disk; a file
/// that vanishes while it is summed, as a live store's may, counts
/// nothing).
pub(crate) fn tree_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(t) if t.is_dir() => tree_bytes(&entry.path()),
            Ok(t) if t.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_writes_raw_runs_only_while_the_free_space_is_several_times_the_source() {
        let work = tempfile::tempdir().unwrap();
        let free = free_bytes(work.path()).unwrap();
        assert!(free > 0);
        let room = free / RAW_RUNS_HEADROOM;
        let auto = |source| run_encoding(RunCompression::Auto, source, work.path());
        assert_eq!(auto(0), Encoding::Raw);
        assert_eq!(auto(room / 2), Encoding::Raw);
        assert_eq!(auto(room * 2 + 1), Encoding::Lz4);
        assert_eq!(auto(u64::MAX), Encoding::Lz4);
        // A directory that is not there: compressed.
        let gone = work.path().join("gone");
        assert_eq!(run_encoding(RunCompression::Auto, 0, &gone), Encoding::Lz4);
        for source in [0, u64::MAX] {
            let lz4 = run_encoding(RunCompression::Lz4, source, work.path());
            let raw = run_encoding(RunCompression::None, source, work.path());
            assert_eq!((lz4, raw), (Encoding::Lz4, Encoding::Raw));
        }
    }

    #[test]
    fn a_trees_bytes_are_its_files_bytes_in_every_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 10]).unwrap();
        std::fs::create_dir_all(dir.path().join("d/e")).unwrap();
        std::fs::write(dir.path().join("d/b"), [0u8; 100]).unwrap();
        std::fs::write(dir.path().join("d/e/c"), [0u8; 1000]).unwrap();
        assert_eq!(tree_bytes(dir.path()), 1110);
        assert_eq!(tree_bytes(&dir.path().join("missing")), 0);
    }
}
