//! A connection to a master, line and bulk replies read within
//! `repl-timeout` (Kvrocks' and Pika's links speak RESP through it).

use bytes::BytesMut;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use crate::replica::link_error::{read_line, read_more, LinkError, REPL_TIMEOUT};
use crate::state::Shared;

/// A connection to the master.
pub struct Conn {
    pub(crate) rd: OwnedReadHalf,
    pub(crate) wr: OwnedWriteHalf,
    /// Bytes read and not consumed yet.
    pub buf: BytesMut,
}

impl Conn {
    /// Connects (within [`REPL_TIMEOUT`]).
    pub async fn connect(host: &str, port: u16) -> Result<Conn, LinkError> {
        let stream = tokio::time::timeout(REPL_TIMEOUT, TcpStream::connect((host, port)))
            .await
            .map_err(|_| LinkError::Connect(std::io::ErrorKind::TimedOut.into()))?
            .map_err(LinkError::Connect)?;
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        Ok(Conn {
            rd,
            wr,
            buf: BytesMut::with_capacity(64 * 1024),
        })
    }

    /// Sends a command.
    pub async fn send(&mut self, args: &[&[u8]]) -> Result<(), LinkError> {
        let mut out = Vec::new();
        redcodec_protocol::encode_request(args, &mut out);
        self.wr.write_all(&out).await.map_err(LinkError::Write)
    }

    /// One line, without its `\r\n`.
    pub async fn line(&mut self) -> Result<Vec<u8>, LinkError> {
        read_line(&mut self.rd, &mut self.buf, 1024).await
    }

    /// Reads more bytes into the buffer.
    pub async fn more(&mut self) -> Result<usize, LinkError> {
        read_more(&mut self.rd, &mut self.buf).await
    }

    /// Sends a command and reads a one-line reply.
    pub async fn ask(&mut self, args: &[&[u8]]) -> Result<String, LinkError> {
        self.send(args).await?;
        Ok(String::from_utf8_lossy(&self.line().await?).into_owned())
    }

    /// A bulk string reply (`$<len>\r\n<bytes>\r\n`); `Ok(None)` for an
    /// error reply, returned as the `Err` string of the inner result.
    pub async fn bulk(&mut self) -> Result<Result<Vec<u8>, String>, LinkError> {
        let line = self.line().await?;
        let text = String::from_utf8_lossy(&line).into_owned();
        let Some(len) = text.strip_prefix('$') else {
            return Ok(Err(text));
        };
        let len: usize = len
            .parse()
            .map_err(|_| LinkError::Protocol(format!("bad bulk length from the master: {text}")))?;
        while self.buf.len() < len + 2 {
            self.more().await?;
        }
        let body = self.buf.split_to(len).to_vec();
        let _ = self.buf.split_to(2);
        Ok(Ok(body))
    }

    /// `AUTH` with `--masterauth`, if set.
    pub async fn auth(&mut self, shared: &Shared) -> Result<(), LinkError> {
        if let Some(pass) = &shared.config.replica.masterauth {
            let reply = self.ask(&[b"AUTH", pass.as_bytes()]).await?;
            if reply != "+OK" {
                return Err(LinkError::Handshake(format!(
                    "Unable to AUTH to MASTER: {reply}"
                )));
            }
        }
        Ok(())
    }
}
