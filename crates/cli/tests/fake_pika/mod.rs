//! The client side of a fake Pika master for the tests: two listeners (the
//! client port, and the replication port 2000 above it), and the client
//! port's answers as Pika gives them: `INFO` with a `pika_version:` line,
//! `CONFIG GET binlog-file-size`, and an error for anything else.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

/// The `binlog-file-size` the fake master reports.
pub const BINLOG_FILE_SIZE: u64 = 1000;

/// A client port and the replication port 2000 above it, both free: the
/// listeners and the client port.
pub fn listeners() -> (TcpListener, TcpListener, u16) {
    (0..500)
        .find_map(|_| {
            let client = TcpListener::bind("127.0.0.1:0").ok()?;
            let port = client.local_addr().ok()?.port();
            let repl = TcpListener::bind(("127.0.0.1", port.checked_add(2000)?)).ok()?;
            Some((client, repl, port))
        })
        .expect("two free ports")
}

/// Answers every connection of `client` on a thread of its own, as a Pika
/// server of `version` does.
pub fn serve_clients(client: TcpListener, version: &'static str) {
    std::thread::spawn(move || {
        for stream in client.incoming().flatten() {
            std::thread::spawn(move || answer_client(stream, version));
        }
    });
}

/// One command in RESP, its words lowercased; `None` once the peer left.
fn read_command(r: &mut impl BufRead) -> Option<Vec<String>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
    let mut words = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().trim_start_matches('$').parse().unwrap_or(0);
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        words.push(String::from_utf8_lossy(&buf).to_ascii_lowercase());
    }
    Some(words)
}

fn answer_client(stream: TcpStream, version: &str) {
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    while let Some(words) = read_command(&mut r) {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let answer = match words.as_slice() {
            ["info", ..] => {
                let body = format!("# Server\r\npika_version:{version}\r\n");
                format!("${}\r\n{body}\r\n", body.len())
            }
            ["config", "get", "binlog-file-size"] => {
                let size = BINLOG_FILE_SIZE.to_string();
                format!(
                    "*2\r\n$16\r\nbinlog-file-size\r\n${}\r\n{size}\r\n",
                    size.len()
                )
            }
            ["config", ..] => "*0\r\n".to_string(),
            _ => "-ERR unknown command\r\n".to_string(),
        };
        if w.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}
