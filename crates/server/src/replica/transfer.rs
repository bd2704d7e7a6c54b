//! Receiving the master's RDB into a spool file in the data directory (or
//! none, when the RDB is loaded as it arrives), each byte also handed to
//! the thread that reads it as it arrives ([`RdbFeed`]): a
//! bulk of known length (`$<len>`, the master saved to disk) or, from a
//! diskless master, `$EOF:<40 bytes>` then the RDB then the same 40 bytes.
//! Memory stays bounded by the read buffer whatever the RDB's size.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use bytes::{Buf, BytesMut};
use tokio::net::tcp::OwnedReadHalf;

use super::link_error::{read_more, LinkError};
use super::rdb_feed::RdbFeed;

/// The length of a diskless transfer's end mark (`CONFIG_RUN_ID_SIZE`).
pub const EOF_MARK_LEN: usize = 40;

/// How the master announced the RDB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Announced {
    /// `$<len>`: exactly this many bytes follow.
    Length(u64),
    /// `$EOF:<mark>`: bytes follow until the mark.
    EofMark(Vec<u8>),
}

impl Announced {
    /// Reads the bulk header line (without `\r\n`).
    pub fn parse(line: &[u8]) -> Result<Announced, LinkError> {
        let bad = || {
            LinkError::Protocol(format!(
                "bad protocol from MASTER, the first byte is not '$' (we received '{}'), are you sure the host and port are right?",
                String::from_utf8_lossy(line)
            ))
        };
        let rest = line.strip_prefix(b"$").ok_or_else(bad)?;
        if let Some(mark) = rest.strip_prefix(b"EOF:") {
            if mark.len() != EOF_MARK_LEN {
                return Err(bad());
            }
            return Ok(Announced::EofMark(mark.to_vec()));
        }
        std::str::from_utf8(rest)
            .ok()
            .and_then(|n| n.parse::<u64>().ok())
            .map(Announced::Length)
            .ok_or_else(bad)
    }
}

/// Copies the RDB into `spool` (created anew; `None`: no spool), starting
/// with what `buf` already holds, and hands every byte to `feed` too;
/// bytes after the RDB stay in `buf`. `progress` gets the bytes received
/// so far.
pub async fn receive<T: Send + 'static>(
    rd: &mut OwnedReadHalf,
    buf: &mut BytesMut,
    announced: &Announced,
    spool: Option<&Path>,
    feed: &mut RdbFeed<T>,
    mut progress: impl FnMut(u64),
) -> Result<u64, LinkError> {
    let file = match spool {
        Some(path) => Some(File::create(path).map_err(LinkError::spool)?),
        None => None,
    };
    let mut sink = Sink {
        file,
        feed,
        written: 0,
    };
    match announced {
        Announced::Length(len) => {
            while sink.written < *len {
                if buf.is_empty() {
                    read_more(rd, buf).await?;
                }
                let n = usize::try_from(*len - sink.written)
                    .unwrap_or(usize::MAX)
                    .min(buf.len());
                sink.put(&buf[..n]).await?;
                buf.advance(n);
                progress(sink.written);
            }
        }
        Announced::EofMark(mark) => {
            // Everything but the last 40 bytes seen is written; the mark
            // is looked for in what is held back and what came since.
            let mut held: Vec<u8> = Vec::new();
            loop {
                if buf.is_empty() {
                    read_more(rd, buf).await?;
                }
                held.extend_from_slice(buf);
                buf.clear();
                if let Some(at) = held
                    .windows(EOF_MARK_LEN)
                    .position(|w| w == mark.as_slice())
                {
                    sink.put(&held[..at]).await?;
                    buf.extend_from_slice(&held[at + EOF_MARK_LEN..]);
                    progress(sink.written);
                    break;
                }
                let keep = held.len().saturating_sub(EOF_MARK_LEN - 1);
                sink.put(&held[..keep]).await?;
                held.drain(..keep);
                progress(sink.written);
            }
        }
    }
    if let Some(file) = &sink.file {
        file.sync_all().map_err(LinkError::spool)?;
    }
    Ok(sink.written)
}

/// Where the RDB's bytes go: the spool file, if any, and the thread that
/// reads them as they arrive.
struct Sink<'a, T> {
    file: Option<File>,
    feed: &'a mut RdbFeed<T>,
    /// Bytes put so far.
    written: u64,
}

impl<T: Send + 'static> Sink<'_, T> {
    /// Writes `bytes` to the spool and hands them to the reader.
    async fn put(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        if let Some(file) = &mut self.file {
            file.write_all(bytes).map_err(LinkError::spool)?;
        }
        self.feed.feed(bytes).await;
        self.written += bytes.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(Announced::parse(b"$12").unwrap(), Announced::Length(12));
        let mark = [b'a'; 40];
        let mut line = b"$EOF:".to_vec();
        line.extend_from_slice(&mark);
        assert_eq!(
            Announced::parse(&line).unwrap(),
            Announced::EofMark(mark.to_vec())
        );
        assert!(Announced::parse(b"$EOF:short").is_err());
        assert!(Announced::parse(b"+OK").is_err());
        assert!(Announced::parse(b"$-1").is_err());
    }
}
