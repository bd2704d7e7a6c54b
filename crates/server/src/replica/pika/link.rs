//! A connection that speaks Pika's framed protobuf (its `PbConn`): to the
//! replication port (port + 2000) or to the rsync2 service (port +
//! 10001).

use bytes::BytesMut;
use prost::Message;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use super::messages::{frame, frame_len, unframe};
use crate::replica::link_error::{read_more, LinkError, REPL_TIMEOUT};

/// A framed connection to a Pika master.
pub struct PbConn {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    buf: BytesMut,
    /// This end's address (the IP a Pika replica names itself by).
    pub local: std::net::SocketAddr,
}

impl PbConn {
    /// Connects (within [`REPL_TIMEOUT`]).
    pub async fn connect(host: &str, port: u16) -> Result<PbConn, LinkError> {
        let stream = tokio::time::timeout(REPL_TIMEOUT, TcpStream::connect((host, port)))
            .await
            .map_err(|_| LinkError::Connect(std::io::ErrorKind::TimedOut.into()))?
            .map_err(LinkError::Connect)?;
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().map_err(LinkError::Connect)?;
        let (rd, wr) = stream.into_split();
        Ok(PbConn {
            rd,
            wr,
            buf: BytesMut::with_capacity(256 * 1024),
            local,
        })
    }

    /// Sends one message.
    pub async fn send(&mut self, message: &impl Message) -> Result<(), LinkError> {
        self.wr
            .write_all(&frame(message))
            .await
            .map_err(LinkError::Write)
    }

    /// The next message (waiting at most [`REPL_TIMEOUT`] for each read).
    pub async fn recv<M: Message + Default>(&mut self) -> Result<M, LinkError> {
        loop {
            if let Some(end) =
                frame_len(&self.buf).map_err(|e| LinkError::Protocol(e.to_string()))?
            {
                let body = self.buf.split_to(end);
                return unframe(&body[4..]).map_err(|e| LinkError::Protocol(e.to_string()));
            }
            read_more(&mut self.rd, &mut self.buf).await?;
        }
    }

    /// A complete message already read, if any (no waiting).
    pub fn ready<M: Message + Default>(&mut self) -> Result<Option<M>, LinkError> {
        match frame_len(&self.buf).map_err(|e| LinkError::Protocol(e.to_string()))? {
            Some(end) => {
                let body = self.buf.split_to(end);
                unframe(&body[4..])
                    .map(Some)
                    .map_err(|e| LinkError::Protocol(e.to_string()))
            }
            None => Ok(None),
        }
    }

    /// Reads more bytes (at most [`REPL_TIMEOUT`]); the count.
    pub async fn more(&mut self) -> Result<usize, LinkError> {
        read_more(&mut self.rd, &mut self.buf).await
    }
}
