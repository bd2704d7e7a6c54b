//! What the server's tests share: `redcodec serve` in the test process on
//! a fresh store, and a client on a raw socket (reading a reply allocates
//! nothing but its buffer, so heap measurements see the server).

#![allow(dead_code)] // each test file uses its own part

use std::collections::BTreeMap;
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
            replica: Default::default(),
            settings: Vec::new(),
            kvrocks_master: Default::default(),
            config_file: None,
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

    /// Reads one whole reply (RESP2).
    pub fn reply(&mut self) -> Resp {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        let rest = rest.trim_end();
        match kind {
            "+" | "-" | ":" => Resp::Line(line),
            "$" if rest == "-1" => Resp::Nil,
            "*" if rest == "-1" => Resp::NilArray,
            "$" => {
                let len: usize = rest.parse().unwrap();
                let mut bytes = vec![0; len + 2];
                self.0.read_exact(&mut bytes).unwrap();
                bytes.truncate(len);
                Resp::Bulk(bytes)
            }
            "*" => {
                let n: usize = rest.parse().unwrap();
                Resp::Array((0..n).map(|_| self.reply()).collect())
            }
            _ => panic!("not a RESP2 reply: {line:?}"),
        }
    }

    /// Runs a command and reads its whole reply.
    pub fn query(&mut self, args: &[&[u8]]) -> Resp {
        self.send(args);
        self.reply()
    }

    /// Reads a RESP array of one-line replies (EXEC's), as lines.
    pub fn array_of_lines(&mut self) -> Vec<String> {
        let head = self.line();
        let n: usize = head.trim_start_matches('*').trim_end().parse().unwrap();
        (0..n).map(|_| self.line()).collect()
    }

    /// Whether the server closed the connection (after any replies sent).
    pub fn closed(&mut self) -> bool {
        matches!(self.0.read(&mut [0; 1]), Ok(0) | Err(_))
    }
}

/// A whole RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    /// A status, error or integer line, its type byte and CRLF included.
    Line(String),
    /// A bulk string.
    Bulk(Vec<u8>),
    /// A null bulk string (`$-1`).
    Nil,
    /// A null array (`*-1`).
    NilArray,
    /// An array.
    Array(Vec<Resp>),
}

impl Resp {
    /// The elements of an array.
    pub fn items(&self) -> &[Resp] {
        match self {
            Resp::Array(items) => items,
            other => panic!("not an array: {other:?}"),
        }
    }

    /// A bulk string's text.
    pub fn text(&self) -> String {
        match self {
            Resp::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("not a bulk string: {other:?}"),
        }
    }
}

/// The `cmdstat_` or `errorstat_` (`prefix`) lines of INFO, without the
/// prefix: name to value.
pub fn stats_lines(info: &str, prefix: &str) -> BTreeMap<String, String> {
    info.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A `cmdstat_` value without its `usec` and `usec_per_call` (timings),
/// checked to parse: `calls=…,rejected_calls=…,failed_calls=…`.
pub fn counts(value: &str) -> String {
    let parts: Vec<&str> = value.split(',').collect();
    assert_eq!(parts.len(), 5, "{value}");
    let usec: u64 = parts[1].strip_prefix("usec=").unwrap().parse().unwrap();
    let per_call: f64 = parts[2]
        .strip_prefix("usec_per_call=")
        .unwrap()
        .parse()
        .unwrap();
    let calls: u64 = parts[0].strip_prefix("calls=").unwrap().parse().unwrap();
    if calls > 0 {
        let expected = usec as f64 / calls as f64;
        assert!((per_call - expected).abs() <= 0.005 + 1e-9, "{value}");
    }
    [parts[0], parts[3], parts[4]].join(",")
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

/// INFO commandstats as `name → calls=…,rejected_calls=…,failed_calls=…`
/// (the times left out: they vary; [`counts`] checks them).
#[allow(dead_code)]
pub fn command_counts(info: &str) -> BTreeMap<String, String> {
    stats_lines(info, "cmdstat_")
        .into_iter()
        .map(|(k, v)| (k, counts(&v)))
        .collect()
}

/// `pairs` as an owned map, to compare with what INFO gave.
#[allow(dead_code)]
pub fn owned(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}
