//! A whole column family read on a thread of its own, handed over in
//! chunks: for walks over every record of a store (`analyze`), where
//! RocksDB's iteration (merging levels, reading and decompressing
//! blocks) costs about as much as what the walk does with each record.
//! With the reading on another core the two overlap.
//!
//! The reader copies each pair into a chunk (one buffer of bytes and the
//! ends of each key and value), sends it over a channel that holds
//! [`CHUNKS_IN_FLIGHT`] at most, and reuses the chunks the walk is done
//! with: memory is bounded by a few chunks whatever the family's size,
//! and no pair is allocated on its own. The walk borrows each pair from
//! its chunk ([`ReadAhead::next_ref`]), as from a [`StoreIter`].
//!
//! The reader stops at the end of the family, at a read error (handed to
//! the walk in order, after the pairs read before it), or as soon as the
//! walk drops its [`ReadAhead`].

use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::thread::Scope;

use redcodec_codec::{KeyRange, Place};

use crate::batch::PairRef;
use crate::error::StoreError;
use crate::kv::Order;
use crate::store::{Store, StoreIter};

/// Bytes of keys and values a chunk holds before it is sent (it may pass
/// it by one pair).
const CHUNK_BYTES: usize = 256 * 1024;

/// Chunks sent and not yet taken by the walk.
const CHUNKS_IN_FLIGHT: usize = 2;

/// Pairs read, one after the other in one buffer.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    /// For each pair, where its key ends and where its value ends in
    /// `bytes` (its key starts where the pair before it ends).
    ends: Vec<(usize, usize)>,
}

impl Chunk {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((key_end, self.bytes.len()));
    }

    fn pair(&self, at: usize) -> (&[u8], &[u8]) {
        let start = at.checked_sub(1).map_or(0, |before| self.ends[before].1);
        let (key_end, value_end) = self.ends[at];
        (&self.bytes[start..key_end], &self.bytes[key_end..value_end])
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }
}

/// The pairs of one column family, in its order, read ahead on a thread
/// of the scope it was made in ([`Store::read_ahead`]).
pub struct ReadAhead {
    chunks: Receiver<Result<Chunk, StoreError>>,
    /// Chunks the walk is done with, back to the reader.
    used: Sender<Chunk>,
    chunk: Option<Chunk>,
    /// The next pair of `chunk`.
    at: usize,
}

impl ReadAhead {
    /// Moves past every pair before `key` in `order` (the family's): the
    /// next pair is the first at or after it. A seek forward, made by
    /// reading on, as a scan of every record reads them anyway.
    pub fn skip_to(&mut self, key: &[u8], order: Order) -> Result<(), StoreError> {
        loop {
            if let Some(chunk) = self.chunk.as_ref() {
                while self.at < chunk.ends.len() {
                    if order(chunk.pair(self.at).0, key) != std::cmp::Ordering::Less {
                        return Ok(());
                    }
                    self.at += 1;
                }
            }
            if !self.next_chunk()? {
                return Ok(());
            }
        }
    }

    /// The next pair, borrowed until the next call, or `None` at the end
    /// of the family.
    pub fn next_ref(&mut self) -> Result<Option<PairRef<'_>>, StoreError> {
        loop {
            if self
                .chunk
                .as_ref()
                .is_some_and(|chunk| self.at < chunk.ends.len())
            {
                let at = self.at;
                self.at += 1;
                return Ok(self.chunk.as_ref().map(|chunk| chunk.pair(at)));
            }
            if !self.next_chunk()? {
                return Ok(None);
            }
        }
    }

    /// Hands the chunk read back to the reader and takes the next one:
    /// `false` at the end of the family.
    fn next_chunk(&mut self) -> Result<bool, StoreError> {
        if let Some(used) = self.chunk.take() {
            // The reader may have stopped already: the chunk is dropped.
            let _ = self.used.send(used);
        }
        match self.chunks.recv() {
            Ok(Ok(chunk)) => {
                self.chunk = Some(chunk);
                self.at = 0;
                Ok(true)
            }
            Ok(Err(e)) => Err(e),
            // The reader ended after its last chunk.
            Err(_) => Ok(false),
        }
    }
}

impl Store {
    /// Every pair of the family at `place` (none if it does not exist),
    /// read on a thread of `scope`: see [`ReadAhead`].
    pub fn read_ahead<'scope, 'env>(
        &'env self,
        scope: &'scope Scope<'scope, 'env>,
        place: Place,
    ) -> ReadAhead {
        self.read_ahead_with(scope, move |store| store.scan_pass(place, None))
    }

    /// The pairs of `range`, read on a thread of `scope`.
    pub fn read_ahead_range<'scope, 'env>(
        &'env self,
        scope: &'scope Scope<'scope, 'env>,
        range: &KeyRange,
    ) -> ReadAhead {
        let range = range.clone();
        self.read_ahead_with(scope, move |store| {
            store.scan_pass(range.place, Some(&range))
        })
    }

    /// The pairs of the iterator `open` makes, read on a thread of `scope`.
    fn read_ahead_with<'scope, 'env>(
        &'env self,
        scope: &'scope Scope<'scope, 'env>,
        open: impl FnOnce(&'env Store) -> StoreIter<'env> + Send + 'scope,
    ) -> ReadAhead {
        let (send, chunks) = sync_channel(CHUNKS_IN_FLIGHT);
        let (used, reuse) = channel::<Chunk>();
        let failed = send.clone();
        let reader = std::thread::Builder::new()
            .name("read-ahead".into())
            .spawn_scoped(scope, move || {
                let mut it = open(self);
                loop {
                    let mut chunk = reuse.try_recv().unwrap_or_default();
                    chunk.clear();
                    let ended = match fill(&mut it, &mut chunk) {
                        Ok(ended) => ended,
                        Err(e) => {
                            // The pairs before the error first, then the error.
                            let _ = send.send(Ok(chunk));
                            let _ = send.send(Err(e));
                            return;
                        }
                    };
                    if send.send(Ok(chunk)).is_err() || ended {
                        return;
                    }
                }
            });
        if let Err(e) = reader {
            // No thread to read on (the system's limit): the walk's first
            // step reports it. The channel has room for it.
            let _ = failed.send(Err(StoreError::Io(std::io::Error::other(format!(
                "cannot start a thread to read the store: {e}"
            )))));
        }
        drop(failed);
        ReadAhead {
            chunks,
            used,
            chunk: None,
            at: 0,
        }
    }
}

/// Reads pairs of `it` into `chunk` until it holds [`CHUNK_BYTES`] or the
/// family ends (`true`).
fn fill(it: &mut StoreIter<'_>, chunk: &mut Chunk) -> Result<bool, StoreError> {
    while chunk.bytes.len() < CHUNK_BYTES {
        match it.next_ref()? {
            Some((key, value)) => chunk.push(key, value),
            None => return Ok(true),
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_hands_back_each_pair_as_pushed() {
        let mut chunk = Chunk::default();
        chunk.push(b"a", b"");
        chunk.push(b"", b"xyz");
        chunk.push(b"key", b"value");
        assert_eq!(chunk.pair(0), (&b"a"[..], &b""[..]));
        assert_eq!(chunk.pair(1), (&b""[..], &b"xyz"[..]));
        assert_eq!(chunk.pair(2), (&b"key"[..], &b"value"[..]));
        chunk.clear();
        assert!(chunk.ends.is_empty() && chunk.bytes.is_empty());
    }
}
