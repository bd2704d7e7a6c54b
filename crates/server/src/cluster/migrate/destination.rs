//! The migration's connection to the destination node: commands written
//! as RESP arrays, pipelined; replies read back one by one (a status, an
//! error, an integer, a bulk string or an array of them).

use bytes::Bytes;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The longest reply line taken (an error text, a length).
const MAX_LINE: usize = 64 * 1024;

/// Arrays in arrays a reply may nest (the commands sent answer flat).
const MAX_DEPTH: usize = 8;

/// How long a reply may take before the migration gives up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// A connection to the destination node.
pub struct Link {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    out: Vec<u8>,
    pending: usize,
    /// Commands sent whose replies are not read yet.
    awaiting: usize,
    sent: u64,
    commands: u64,
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
            awaiting: 0,
            sent: 0,
            commands: 0,
        })
    }

    /// Queues a command.
    pub fn queue(&mut self, args: &[impl AsRef<[u8]>]) {
        redcodec_protocol::encode_request(args, &mut self.out);
        self.pending += 1;
    }

    /// Bytes and commands sent so far.
    pub fn sent(&self) -> (u64, u64) {
        (self.sent, self.commands)
    }

    /// How many queued commands wait for their replies.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Sends the queued commands and reads the reply of every command
    /// awaited; an error reply fails the whole batch.
    pub fn flush(&mut self) -> ReplyResult {
        self.send_queued()?;
        let mut first_error = None;
        for _ in 0..std::mem::take(&mut self.awaiting) {
            if let Err(e) = self.read_reply(0) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Sends the queued commands without reading their replies (read
    /// later by [`Link::await_replies`]: the commands are pipelined).
    pub fn send_queued(&mut self) -> ReplyResult {
        if self.pending == 0 {
            return Ok(());
        }
        self.writer
            .write_all(&self.out)
            .map_err(|e| format!("failed to send commands: {e}"))?;
        self.sent += self.out.len() as u64;
        self.commands += self.pending as u64;
        self.out.clear();
        self.awaiting += std::mem::take(&mut self.pending);
        Ok(())
    }

    /// Reads the replies of commands sent by [`Link::send_queued`] until at
    /// most `keep` are awaited; the first error (an error reply, a closed
    /// connection) stops and fails.
    pub fn await_replies(&mut self, keep: usize) -> ReplyResult {
        while self.awaiting > keep {
            self.awaiting -= 1;
            self.read_reply(0)?;
        }
        Ok(())
    }

    /// Sends one command and tells whether its reply is an array whose
    /// first element is an array (Kvrocks'
    /// `supportedApplyBatchCommandOnDstNode` asks `COMMAND INFO
    /// applybatch` so); any other reply, an error included, is `false`.
    pub fn call_is_nested_array(&mut self, args: &[impl AsRef<[u8]>]) -> Result<bool, String> {
        self.queue(args);
        self.send_queued()?;
        self.awaiting -= 1;
        let line = self.line()?;
        let n = match line.split_first() {
            Some((b'*', rest)) => String::from_utf8_lossy(rest).parse::<i64>().unwrap_or(0),
            Some((b'-', _)) => return Ok(false),
            _ => return self.reply_body(&line, 0).map(|()| false),
        };
        if n < 1 {
            return Ok(false);
        }
        let first = self.line()?;
        let nested = first.first() == Some(&b'*');
        self.reply_body(&first, 1)?;
        for _ in 1..n {
            self.read_reply(1)?;
        }
        Ok(nested)
    }

    /// Sends one command and checks its reply.
    pub fn call(&mut self, args: &[Bytes]) -> ReplyResult {
        self.queue(args);
        self.flush()
    }

    fn line(&mut self) -> Result<Vec<u8>, String> {
        let mut line = Vec::new();
        let n = std::io::Read::take(&mut self.reader, MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("failed to read a reply: {e}"))?;
        if n == MAX_LINE && !line.ends_with(b"\n") {
            return Err("a reply line too long".into());
        }
        if n == 0 || !line.ends_with(b"\r\n") {
            return Err("the destination node closed the connection".into());
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_reply(&mut self, depth: usize) -> ReplyResult {
        let line = self.line()?;
        self.reply_body(&line, depth)
    }

    /// The rest of a reply whose first line is `line`.
    fn reply_body(&mut self, line: &[u8], depth: usize) -> ReplyResult {
        let (kind, rest) = line.split_first().ok_or("an empty reply line")?;
        let rest = String::from_utf8_lossy(rest).into_owned();
        match kind {
            b'+' | b':' => Ok(()),
            b'-' => Err(rest),
            b'$' => {
                let len: i64 = rest.parse().map_err(|_| "a malformed bulk length")?;
                if len >= 0 {
                    // Skipped, not kept: whatever length the peer claims.
                    let want = len as u64 + 2;
                    let got = std::io::copy(
                        &mut std::io::Read::take(&mut self.reader, want),
                        &mut std::io::sink(),
                    )
                    .map_err(|e| format!("failed to read a reply: {e}"))?;
                    if got != want {
                        return Err("the destination node closed the connection".into());
                    }
                }
                Ok(())
            }
            b'*' => {
                let len: i64 = rest.parse().map_err(|_| "a malformed array length")?;
                if depth >= MAX_DEPTH {
                    return Err("a reply nested too deep".into());
                }
                for _ in 0..len.max(0) {
                    self.read_reply(depth + 1)?;
                }
                Ok(())
            }
            _ => Err(format!(
                "an unexpected reply: {}",
                String::from_utf8_lossy(line)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A peer that reads one request and answers `reply`, then closes.
    fn peer(reply: &'static [u8]) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            let _ = s.write_all(reply);
        });
        Link::connect("127.0.0.1", port).unwrap()
    }

    fn call(reply: &'static [u8]) -> ReplyResult {
        peer(reply).call(&[Bytes::from_static(b"ping")])
    }

    #[test]
    fn replies_and_misbehaving_peers() {
        assert_eq!(call(b"+OK\r\n"), Ok(()));
        assert_eq!(call(b":3\r\n"), Ok(()));
        assert_eq!(call(b"$3\r\nabc\r\n"), Ok(()));
        assert_eq!(call(b"*2\r\n$-1\r\n:1\r\n"), Ok(()));
        assert_eq!(call(b"-ERR no\r\n"), Err("ERR no".into()));
        let closed = Err("the destination node closed the connection".to_string());
        assert_eq!(call(b""), closed);
        assert_eq!(call(b"$999999999999\r\nab"), closed);
        assert_eq!(call(b"*9\r\n:1\r\n"), closed);
        assert_eq!(
            call(b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n"),
            Err("a reply nested too deep".into())
        );
        assert_eq!(call(b"$x\r\n"), Err("a malformed bulk length".into()));
        let long: &'static [u8] = Box::leak(vec![b'-'; MAX_LINE + 10].into_boxed_slice());
        assert_eq!(call(long), Err("a reply line too long".into()));
        assert!(call(b"?\r\n")
            .unwrap_err()
            .starts_with("an unexpected reply"));
    }
}
