//! Checking the master's RDB while it arrives: every chunk written to the
//! spool is also handed to a thread that decodes it as
//! [`validate`] does (every object, the CRC), so the whole file is known
//! good or bad when its last byte lands, not one full read later. The
//! hand-over is bounded (64 chunks at most): a checker slower
//! than the network slows the receiving down instead of holding the RDB
//! in memory.

use std::io::Read;

use redcodec_rdb::file_reader::{validate, RdbFileError};
use tokio::sync::mpsc;

/// Chunks handed over and not yet checked, at most.
const CHUNKS_IN_FLIGHT: usize = 64;

/// A check of an RDB that runs while its bytes are fed in.
pub struct StreamCheck {
    chunks: Option<mpsc::Sender<Vec<u8>>>,
    checker: tokio::task::JoinHandle<Result<u64, RdbFileError>>,
}

impl StreamCheck {
    /// Starts the checker (a blocking task) with nothing fed yet.
    pub fn start() -> StreamCheck {
        let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let checker = tokio::task::spawn_blocking(move || {
            validate(ChunkReader {
                chunks: rx,
                current: Vec::new(),
                at: 0,
            })
        });
        StreamCheck {
            chunks: Some(tx),
            checker,
        }
    }

    /// Hands the next bytes of the RDB to the checker. A checker that has
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

    /// Ends the RDB here and waits for the verdict: the number of keys,
    /// or why the bytes fed are not a whole, valid RDB.
    pub fn finish(mut self) -> tokio::task::JoinHandle<Result<u64, RdbFileError>> {
        self.chunks = None;
        self.checker
    }
}

/// The bytes fed to a [`StreamCheck`], read in order; the end of the feed
/// is the end of the file.
struct ChunkReader {
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
        let mut check = StreamCheck::start();
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
