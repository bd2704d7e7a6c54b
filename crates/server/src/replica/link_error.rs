//! Why a link to a master ended, and reading from it within
//! `repl-timeout`.

use std::time::Duration;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::net::tcp::OwnedReadHalf;

use super::load::LoadError;

/// Redis' `repl-timeout`: a master silent this long is gone.
pub const REPL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a link ended.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The master could not be reached.
    #[error("Unable to connect to MASTER: {0}")]
    Connect(std::io::Error),
    /// Reading from the master failed.
    #[error("Error reading from MASTER: {0}")]
    Read(std::io::Error),
    /// Writing to the master failed.
    #[error("Error writing to MASTER: {0}")]
    Write(std::io::Error),
    /// The master closed the connection.
    #[error("Connection with master lost (the master closed it)")]
    Closed,
    /// Nothing came from the master for [`REPL_TIMEOUT`].
    #[error("MASTER timeout: no data nor PING received")]
    Timeout,
    /// The master answered the handshake with an error.
    #[error("{0}")]
    Handshake(String),
    /// The master sent something a master does not send.
    #[error("{0}")]
    Protocol(String),
    /// The spool file could not be written.
    #[error("Opening the temp file needed for MASTER <-> REPLICA synchronization: {0}")]
    Spool(std::io::Error),
    /// The full copy could not be loaded.
    #[error("Failed trying to load the MASTER synchronization DB: {0}")]
    Load(#[from] LoadError),
    /// This server's own link client was killed (CLIENT KILL).
    #[error("the link to the master was killed (CLIENT KILL)")]
    Killed,
    /// The engine refused a command of the master's stream: following
    /// stops before it (the data held is kept) and starts again later.
    #[error("Stopped following at offset {offset}: the master's {command} was refused here: {error} (the data held is kept; retrying)")]
    Refused {
        /// The command's name.
        command: String,
        /// The engine's error.
        error: String,
        /// The offset applied, just before the command.
        offset: i64,
    },
    /// The saved replication state could not be removed before a write.
    #[error("removing the saved replication state before applying a write: {0}")]
    State(std::io::Error),
}

impl LinkError {
    /// A spool file error.
    pub fn spool(e: std::io::Error) -> LinkError {
        LinkError::Spool(e)
    }
}

/// One line from the master (without its `\r\n`), read into `buf` as
/// needed; a line longer than `limit_kib` KiB is a protocol error.
pub async fn read_line(
    rd: &mut OwnedReadHalf,
    buf: &mut BytesMut,
    limit_kib: usize,
) -> Result<Vec<u8>, LinkError> {
    loop {
        if let Some(end) = buf.iter().position(|&b| b == b'\n') {
            let mut line = buf.split_to(end + 1).to_vec();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(line);
        }
        if buf.len() > limit_kib * 1024 {
            return Err(LinkError::Protocol(format!(
                "the master sent a line longer than {limit_kib} KiB"
            )));
        }
        read_more(rd, buf).await?;
    }
}

/// Reads more bytes into `buf`, waiting at most [`REPL_TIMEOUT`].
pub async fn read_more(rd: &mut OwnedReadHalf, buf: &mut BytesMut) -> Result<usize, LinkError> {
    match tokio::time::timeout(REPL_TIMEOUT, rd.read_buf(buf)).await {
        Err(_) => Err(LinkError::Timeout),
        Ok(Err(e)) => Err(LinkError::Read(e)),
        Ok(Ok(0)) => Err(LinkError::Closed),
        Ok(Ok(n)) => Ok(n),
    }
}
