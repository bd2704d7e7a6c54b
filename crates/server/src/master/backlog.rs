//! The replication backlog: the last `repl-backlog-size` bytes of the
//! replication stream, and the offset of the stream's end, counted in
//! bytes from the start as Redis counts `master_repl_offset`.

use std::collections::VecDeque;

/// A ring of the stream's most recent bytes.
pub struct Backlog {
    buf: VecDeque<u8>,
    size: usize,
    /// Bytes ever appended: `master_repl_offset`.
    offset: u64,
}

impl Backlog {
    /// An empty backlog of `size` bytes whose stream has reached `offset`.
    pub fn new(size: usize, offset: u64) -> Backlog {
        Backlog {
            buf: VecDeque::new(),
            size: size.max(1),
            offset,
        }
    }

    /// Appends `bytes`, dropping the oldest beyond the size.
    pub fn push(&mut self, bytes: &[u8]) {
        self.offset += bytes.len() as u64;
        let keep = bytes.len().min(self.size);
        self.buf.extend(&bytes[bytes.len() - keep..]);
        self.trim();
    }

    fn trim(&mut self) {
        if self.buf.len() > self.size {
            let excess = self.buf.len() - self.size;
            self.buf.drain(..excess);
        }
    }

    /// Changes the size (`CONFIG SET repl-backlog-size`), dropping the
    /// oldest bytes when it shrinks.
    pub fn resize(&mut self, size: usize) {
        self.size = size.max(1);
        self.trim();
        self.buf.shrink_to(self.size);
    }

    /// `repl_backlog_size`.
    pub fn size(&self) -> usize {
        self.size
    }

    /// `master_repl_offset`: bytes ever appended.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// `repl_backlog_histlen`: bytes held.
    pub fn histlen(&self) -> u64 {
        self.buf.len() as u64
    }

    /// `repl_backlog_first_byte_offset`: the offset of the oldest byte
    /// held (bytes are numbered from 1; the offset after the end when
    /// empty).
    pub fn first_byte_offset(&self) -> u64 {
        self.offset + 1 - self.histlen()
    }

    /// The bytes from offset `from` (the first byte a replica lacks) to
    /// the end, when the backlog still holds them all, as
    /// `masterTryPartialResynchronization` accepts: `from` within
    /// `[first byte, end + 1]`.
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        let first = self.first_byte_offset();
        if from < first || from > self.offset + 1 {
            return None;
        }
        let skip = (from - first) as usize;
        Some(self.buf.iter().skip(skip).copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_every_byte_and_the_ring_keeps_the_last() {
        let mut b = Backlog::new(4, 0);
        assert_eq!((b.first_byte_offset(), b.histlen()), (1, 0));
        assert_eq!(b.since(1), Some(Vec::new()));
        b.push(b"abc");
        assert_eq!(b.since(2), Some(b"bc".to_vec()));
        b.push(b"defgh");
        assert_eq!((b.offset(), b.histlen(), b.first_byte_offset()), (8, 4, 5));
        assert_eq!(b.since(5), Some(b"efgh".to_vec()));
        assert_eq!(b.since(9), Some(Vec::new()));
        assert_eq!(b.since(4), None);
        assert_eq!(b.since(10), None);
        b.resize(2);
        assert_eq!(b.since(7), Some(b"gh".to_vec()));
    }
}
