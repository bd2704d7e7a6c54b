//! Cluster nodes for the tests: `redcodec serve --format kvrocks
//! --cluster` on fresh stores, a topology set with `CLUSTERX SETNODES`,
//! and a raw RESP client that shows replies exactly (errors included).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::serve_support::{store_dir, Serve};

/// A reply, as it came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum R {
    /// `+…`
    Status(String),
    /// `-…`
    Error(String),
    /// `:…`
    Int(i64),
    /// `$…` (`None`: nil).
    Bulk(Option<Vec<u8>>),
    /// `*…` (`None`: nil).
    Array(Option<Vec<R>>),
}

impl R {
    /// A bulk string's text.
    pub fn text(&self) -> String {
        match self {
            R::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            R::Status(s) => s.clone(),
            other => panic!("not a string: {other:?}"),
        }
    }

    /// `+OK`.
    pub fn ok() -> R {
        R::Status("OK".into())
    }

    /// An error reply.
    pub fn err(text: &str) -> R {
        R::Error(text.into())
    }

    /// A bulk string.
    pub fn bulk(text: &str) -> R {
        R::Bulk(Some(text.as_bytes().to_vec()))
    }
}

/// A raw RESP connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    /// Connects to `addr`.
    pub fn open(addr: &str) -> Conn {
        let s = TcpStream::connect(addr).expect("connects");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        Conn {
            writer: s.try_clone().unwrap(),
            reader: BufReader::new(s),
        }
    }

    /// Sends a command and reads its reply.
    pub fn call(&mut self, args: &[&str]) -> R {
        let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.call_bytes(&bytes)
    }

    /// [`Conn::call`] with byte arguments.
    pub fn call_bytes(&mut self, args: &[&[u8]]) -> R {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).unwrap();
        self.read()
    }

    fn read(&mut self) -> R {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a reply");
        assert!(line.ends_with("\r\n"), "a cut reply: {line:?}");
        let body = line[1..line.len() - 2].to_string();
        match line.as_bytes()[0] {
            b'+' => R::Status(body),
            b'-' => R::Error(body),
            b':' => R::Int(body.parse().unwrap()),
            b'$' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return R::Bulk(None);
                }
                let mut buf = vec![0; n as usize + 2];
                self.reader.read_exact(&mut buf).unwrap();
                buf.truncate(n as usize);
                R::Bulk(Some(buf))
            }
            b'*' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return R::Array(None);
                }
                R::Array(Some((0..n).map(|_| self.read()).collect()))
            }
            _ => panic!("unexpected reply {line:?}"),
        }
    }
}

/// A node's id: 40 hex digits.
pub fn node_id(i: usize) -> String {
    format!("{:040x}", 0xc1u64 << 8 | i as u64)
}

/// One cluster node on a fresh store.
pub struct Node {
    /// The server.
    pub serve: Serve,
    /// Its store directory.
    pub dir: PathBuf,
    /// Its id in the topology the tests set.
    pub id: String,
    _tmp: tempfile::TempDir,
}

impl Node {
    /// `serve --format kvrocks --cluster` on a fresh store.
    pub fn start(i: usize, extra: &[&str]) -> Node {
        let (tmp, dir) = store_dir();
        let mut args = vec!["--cluster", "--sync", "no"];
        args.extend_from_slice(extra);
        let serve = Serve::start("kvrocks", &dir, &args);
        Node {
            serve,
            dir,
            id: node_id(i),
            _tmp: tmp,
        }
    }

    /// Stops the server (SHUTDOWN) and starts it again on the same store
    /// (on another port).
    pub fn restart(self, extra: &[&str]) -> Node {
        let Node {
            serve,
            dir,
            id,
            _tmp,
        } = self;
        let mut c = Conn::open(&serve.addr);
        let _ = c.writer.write_all(b"*1\r\n$8\r\nSHUTDOWN\r\n");
        let mut rest = Vec::new();
        let _ = c.reader.read_to_end(&mut rest);
        assert!(serve.wait().success());
        let mut args = vec!["--cluster", "--sync", "no"];
        args.extend_from_slice(extra);
        let serve = Serve::start("kvrocks", &dir, &args);
        Node {
            serve,
            dir,
            id,
            _tmp,
        }
    }

    /// A raw connection.
    pub fn conn(&self) -> Conn {
        Conn::open(&self.serve.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.serve.port().parse().unwrap()
    }

    /// `host:port`.
    pub fn addr(&self) -> &str {
        &self.serve.addr
    }
}

/// `SETNODES` text for masters that split the slots in order: node `i`
/// gets `ranges[i]`.
pub fn topology(nodes: &[(&str, u16, &str)]) -> String {
    nodes
        .iter()
        .map(|(id, port, slots)| format!("{id} 127.0.0.1 {port} master - {slots}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The slots of three nodes, as kvrocks-controller splits them.
pub const THIRDS: [&str; 3] = ["0-5460", "5461-10922", "10923-16383"];

/// Starts three nodes and gives each a third of the slots (version 1).
pub fn three_nodes() -> (Vec<Node>, String) {
    let nodes: Vec<Node> = (0..3).map(|i| Node::start(i, &[])).collect();
    let text = topology(
        &nodes
            .iter()
            .zip(THIRDS)
            .map(|(n, s)| (n.id.as_str(), n.port(), s))
            .collect::<Vec<_>>(),
    );
    set_nodes(&nodes, &text, 1);
    (nodes, text)
}

/// `CLUSTERX SETNODES text version` on every node.
pub fn set_nodes(nodes: &[Node], text: &str, version: i64) {
    for n in nodes {
        let v = version.to_string();
        assert_eq!(
            n.conn().call(&["CLUSTERX", "SETNODES", text, &v]),
            R::ok(),
            "SETNODES on {}",
            n.addr()
        );
    }
}

/// Waits (at most `bound`) until `CLUSTER INFO` of `c` says the migration
/// ended; its state, `success` or `fail`.
pub fn migration_end(c: &mut Conn, bound: Duration) -> String {
    let deadline = Instant::now() + bound;
    loop {
        let info = c.call(&["CLUSTER", "INFO"]).text();
        for state in ["success", "fail"] {
            if info.contains(&format!("migrating_state: {state}")) {
                return state.to_string();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the migration never ended: {info}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `args` on whichever node serves the slot, as a cluster client
/// does: follows MOVED (connecting to a node not in `conns` yet), retries
/// TRYAGAIN, for at most 60 s; the reply. `at` is the node asked first,
/// and the one that answered after.
pub fn routed(conns: &mut Vec<(String, Conn)>, at: &mut usize, args: &[&str]) -> R {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "{args:?} never acknowledged");
        match conns[*at].1.call(args) {
            R::Error(e) if e.starts_with("MOVED ") => {
                let addr = e.rsplit(' ').next().unwrap().to_string();
                *at = match conns.iter().position(|(a, _)| *a == addr) {
                    Some(i) => i,
                    None => {
                        conns.push((addr.clone(), Conn::open(&addr)));
                        conns.len() - 1
                    }
                };
            }
            R::Error(e) if e.starts_with("TRYAGAIN ") => {
                std::thread::sleep(Duration::from_millis(1));
            }
            other => return other,
        }
    }
}
