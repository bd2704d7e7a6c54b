//! What the server's tests share: `redcodec serve` in the test process on
//! a fresh store, and a client on a raw socket (reading a reply allocates
//! nothing but its buffer, so heap measurements see the server).

#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;

use redcodec_engine::{Engine, EngineOptions};
use redcodec_formats::{Format, FormatOptions};
use redcodec_server::config::NamespaceMode;
use redcodec_server::{Opener, Server, ServerConfig, SyncPolicy};

/// `redcodec serve` in this process, on a fresh store of `format`.
pub struct Served {
    pub addr: SocketAddr,
    thread: Option<thread::JoinHandle<()>>,
    tmp: tempfile::TempDir,
}

impl Served {
    pub fn start(format: Format) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let config = ServerConfig {
            bind: "127.0.0.1".into(),
            port: 0,
            requirepass: None,
            sync: SyncPolicy::No,
            namespaces: NamespaceMode::None,
            default_namespace: String::new(),
            namespace_tokens: Vec::new(),
            dir: path.display().to_string(),
            allocator: "libc",
        };
        let opener: Opener = Box::new(move |_ns: &str| {
            let codec = format.codec(&FormatOptions::default()).unwrap();
            Engine::open(codec, &path, EngineOptions::default())
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let server = Server::bind(config, opener).await.unwrap();
                tx.send(server.local_addr().unwrap()).unwrap();
                server.serve().await.unwrap();
            });
        });
        let addr = rx.recv().unwrap();
        Served {
            addr,
            thread: Some(thread),
            tmp: dir,
        }
    }

    pub fn client(&self) -> Client {
        Client(TcpStream::connect(self.addr).unwrap())
    }

    /// The store's directory.
    pub fn dir(&self) -> &std::path::Path {
        self.tmp.path()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let mut c = self.client();
        c.send(&[b"SHUTDOWN".as_slice(), b"NOSAVE"]);
        let _ = c.0.read(&mut [0; 64]);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// A client on a raw socket, so that reading a reply allocates nothing.
pub struct Client(pub TcpStream);

/// A request in RESP.
pub fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl Client {
    pub fn send(&mut self, args: &[&[u8]]) {
        self.0.write_all(&request(args)).unwrap();
    }

    /// Reads exactly `len` bytes and checks they start with `head`.
    pub fn expect(&mut self, len: usize, head: &[u8]) {
        let mut buf = vec![0; 64 * 1024];
        let mut first = Vec::new();
        let mut left = len;
        while left > 0 {
            let n = self.0.read(&mut buf[..left.min(64 * 1024)]).unwrap();
            assert!(n > 0, "the server closed with {left} bytes to come");
            if first.len() < head.len() {
                first.extend_from_slice(&buf[..n.min(head.len() - first.len())]);
            }
            left -= n;
        }
        assert_eq!(first, head, "{}", String::from_utf8_lossy(&first));
    }

    /// Reads a one-line reply (status, error or integer), CRLF included.
    pub fn line(&mut self) -> String {
        let mut reply = Vec::new();
        let mut byte = [0; 1];
        while !reply.ends_with(b"\r\n") {
            let n = self.0.read(&mut byte).unwrap();
            assert!(n > 0, "the server closed after {reply:?}");
            reply.push(byte[0]);
        }
        String::from_utf8_lossy(&reply).into_owned()
    }

    /// Reads a bulk string reply's bytes.
    pub fn bulk(&mut self) -> Vec<u8> {
        let header = self.line();
        let len: usize = header
            .strip_prefix('$')
            .and_then(|n| n.trim_end().parse().ok())
            .unwrap_or_else(|| panic!("not a bulk string: {header}"));
        let mut bytes = vec![0; len + 2];
        self.0.read_exact(&mut bytes).unwrap();
        bytes.truncate(len);
        bytes
    }

    /// Runs INFO with `sections` and returns its text.
    pub fn info(&mut self, sections: &[&str]) -> String {
        let mut args: Vec<&[u8]> = vec![b"INFO"];
        args.extend(sections.iter().map(|s| s.as_bytes()));
        self.send(&args);
        String::from_utf8(self.bulk()).unwrap()
    }

    /// Runs a command whose reply is one line, and returns it.
    pub fn call(&mut self, args: &[&[u8]]) -> String {
        self.send(args);
        self.line()
    }

    /// Whether the server closed the connection (after any replies sent).
    pub fn closed(&mut self) -> bool {
        matches!(self.0.read(&mut [0; 1]), Ok(0) | Err(_))
    }
}

/// The length of a RESP bulk string of `len` bytes.
pub fn bulk_len(len: usize) -> usize {
    format!("${len}\r\n").len() + len + 2
}

/// `n` distinct elements of `len` bytes.
pub fn elements(n: usize, len: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut e = format!("{i:08}").into_bytes();
            e.resize(len, b'a' + (i % 26) as u8);
            e
        })
        .collect()
}

/// Sends each of `requests` and checks its one-line reply is `+OK` or
/// an integer.
pub fn load(c: &mut Client, requests: &[Vec<u8>]) {
    for r in requests {
        c.0.write_all(r).unwrap();
        let reply = c.line();
        assert!(reply.starts_with('+') || reply.starts_with(':'), "{reply}");
    }
}
