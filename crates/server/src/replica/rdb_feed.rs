//! The master's RDB read while it arrives: every chunk received is also
//! handed to a thread that reads the RDB from those chunks, so the work
//! on it is done when its last byte lands, not one full read later. What
//! the thread does is the caller's: check the RDB whole ([`RdbFeed::check`]:
//! every object decoded, the CRC) before the data held is replaced, or,
//! on a replica that holds no key, load it at once
//! ([`super::load::load`] over a [`ChunkReader`]). The hand-over is
//! bounded (64 chunks at most): a reader slower than the network slows
//! the receiving down instead of holding the RDB in memory.

use std::io::Read;

use redcodec_rdb::file_reader::{validate, RdbFileError};
use tokio::sync::mpsc;

/// Chunks handed over and not yet read, at most.
const CHUNKS_IN_FLIGHT: usize = 64;

/// A thread reading an RDB while its bytes are fed in, to end with `T`.
pub struct RdbFeed<T> {
    chunks: Option<mpsc::Sender<Vec<u8>>>,
    reader: tokio::task::JoinHandle<T>,
}

impl RdbFeed<Result<u64, RdbFileError>> {
    /// A check of the RDB: it ends with the number of keys, or why the
    /// bytes fed are not a whole, valid RDB.
    pub fn check() -> Self {
        RdbFeed::start(validate)
    }
}

impl<T: Send + 'static> RdbFeed<T> {
    /// Starts `read` (a blocking task) over the chunks, none fed yet.
    pub fn start(read: impl FnOnce(ChunkReader) -> T + Send + 'static) -> Self {
        let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let reader = tokio::task::spawn_blocking(move || {
            read(ChunkReader {
                chunks: rx,
                current: Vec::new(),
                at: 0,
            })
        });
        RdbFeed {
            chunks: Some(tx),
            reader,
        }
    }

    /// Hands the next bytes of the RDB to the reader. A reader that has
    /// stopped (the RDB is already known bad) is fed nothing more.
    pub async fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(tx) = &self.chunks {
            if tx.send(bytes.to_vec()).await.is_err() {
                self.chunks = None;
            }
        }
    }

    /// Ends the RDB here (the reader reads to the end of what was fed)
    /// and gives the reader's task, to wait for its result.
    pub fn finish(mut self) -> tokio::task::JoinHandle<T> {
        self.chunks = None;
        self.reader
    }
}

/// The bytes fed to an [`RdbFeed`], read in order; the end of the feed is
/// the end of the file.
pub struct ChunkReader {
    chunks: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.chunks.blocking_recv() {
                Some(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_rdb::file_writer::{FileInfo, RdbFileWriter};
    use redcodec_rdb::{EncodeOptions, Value};

    fn rdb(keys: usize) -> Vec<u8> {
        let info = FileInfo::new(1_700_000_000);
        let mut w = RdbFileWriter::new(Vec::new(), &info, EncodeOptions::default()).unwrap();
        w.select_db(0, keys as u64, 0).unwrap();
        for i in 0..keys {
            let value = Value::String(format!("value {i}").into_bytes());
            w.key(format!("key{i}").as_bytes(), &value, None).unwrap();
        }
        w.finish().unwrap().0
    }

    async fn check_in_chunks(bytes: &[u8], chunk: usize) -> Result<u64, RdbFileError> {
        let mut check = RdbFeed::check();
        for part in bytes.chunks(chunk) {
            check.feed(part).await;
        }
        check.finish().await.unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_valid_rdb_fed_in_any_chunks_counts_its_keys() {
        let bytes = rdb(1000);
        for chunk in [1, 7, 4096, bytes.len()] {
            assert_eq!(
                check_in_chunks(&bytes, chunk).await.unwrap(),
                1000,
                "{chunk}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cut_or_damaged_rdb_is_refused() {
        let bytes = rdb(1000);
        let cut = &bytes[..bytes.len() - 3];
        assert!(check_in_chunks(cut, 512).await.is_err());
        let mut damaged = bytes.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0x55;
        assert!(check_in_chunks(&damaged, 512).await.is_err());
        // A bad header stops the checker early; feeding goes on regardless.
        let mut bad = bytes;
        bad[0] = b'X';
        assert!(check_in_chunks(&bad, 1).await.is_err());
    }
}
