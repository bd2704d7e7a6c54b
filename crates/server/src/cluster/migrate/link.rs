//! The migration's connection to the destination node: commands written
//! as RESP arrays, pipelined; replies read back one by one (a status, an
//! error, an integer, a bulk string or an array of them).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a reply may take before the migration gives up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection to the destination node.
pub struct Link {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    out: Vec<u8>,
    pending: usize,
}

/// The first line of a reply, or why none came.
type ReplyResult = Result<(), String>;

impl Link {
    /// Connects to `host:port`.
    pub fn connect(host: &str, port: u16) -> Result<Link, String> {
        let stream = TcpStream::connect((host, port)).map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(REPLY_TIMEOUT))
            .map_err(|e| e.to_string())?;
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        Ok(Link {
            reader: BufReader::new(stream),
            writer,
            out: Vec::new(),
            pending: 0,
        })
    }

    /// Queues a command.
    pub fn queue(&mut self, args: &[Vec<u8>]) {
        self.out
            .extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            self.out
                .extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            self.out.extend_from_slice(a);
            self.out.extend_from_slice(b"\r\n");
        }
        self.pending += 1;
    }

    /// How many queued commands wait for their replies.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Sends the queued commands and reads one reply for each; an error
    /// reply fails the whole batch.
    pub fn flush(&mut self) -> ReplyResult {
        if self.pending == 0 {
            return Ok(());
        }
        self.writer
            .write_all(&self.out)
            .map_err(|e| format!("failed to send commands: {e}"))?;
        self.out.clear();
        let mut first_error = None;
        for _ in 0..std::mem::take(&mut self.pending) {
            if let Err(e) = self.read_reply() {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Sends one command and checks its reply.
    pub fn call(&mut self, args: &[Vec<u8>]) -> ReplyResult {
        self.queue(args);
        self.flush()
    }

    fn line(&mut self) -> Result<Vec<u8>, String> {
        let mut line = Vec::new();
        let n = self
            .reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("failed to read a reply: {e}"))?;
        if n == 0 || !line.ends_with(b"\r\n") {
            return Err("the destination node closed the connection".into());
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_reply(&mut self) -> ReplyResult {
        let line = self.line()?;
        let (kind, rest) = line.split_first().ok_or("an empty reply line")?;
        let rest = String::from_utf8_lossy(rest).into_owned();
        match kind {
            b'+' | b':' => Ok(()),
            b'-' => Err(rest),
            b'$' => {
                let len: i64 = rest.parse().map_err(|_| "a malformed bulk length")?;
                if len >= 0 {
                    let mut buf = vec![0u8; len as usize + 2];
                    std::io::Read::read_exact(&mut self.reader, &mut buf)
                        .map_err(|e| format!("failed to read a reply: {e}"))?;
                }
                Ok(())
            }
            b'*' => {
                let len: i64 = rest.parse().map_err(|_| "a malformed array length")?;
                for _ in 0..len.max(0) {
                    self.read_reply()?;
                }
                Ok(())
            }
            _ => Err(format!(
                "an unexpected reply: {}",
                String::from_utf8_lossy(&line)
            )),
        }
    }
}
