//! Starting `redcodec serve` on a fresh store and a free port, and
//! talking to it with the `redis` crate or raw TCP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Every format's name, from the registry (`Format::ALL`).
#[allow(dead_code)]
pub fn formats() -> impl Iterator<Item = &'static str> {
    redcodec_formats::Format::ALL.iter().map(|f| f.name())
}

/// A running `redcodec serve`, killed on drop if still running.
pub struct Serve {
    child: Child,
    /// `127.0.0.1:port`.
    pub addr: String,
}

impl Serve {
    /// Starts a server on `dir` with extra options; returns once it
    /// prints that it accepts connections.
    pub fn start(format: &str, dir: &Path, extra: &[&str]) -> Serve {
        Serve::start_with_env(format, dir, extra, &[])
    }

    /// [`Serve::start`] with extra environment variables.
    pub fn start_with_env(format: &str, dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Serve {
        Serve::start_wrapped(&[], format, dir, extra, env)
    }

    /// [`Serve::start_with_env`] through `wrapper`: the server's command
    /// line is appended to it (e.g. a shell that sets a limit and then
    /// `exec "$@"`, so the server keeps the wrapper's process id).
    pub fn start_wrapped(
        wrapper: &[&str],
        format: &str,
        dir: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let server = env!("CARGO_BIN_EXE_redcodec");
        let mut cmd = match wrapper {
            [] => Command::new(server),
            [program, args @ ..] => {
                let mut c = Command::new(program);
                c.args(args).arg(server);
                c
            }
        };
        let mut child = cmd
            .args(["serve", "--format", format, "--port", "0", "--dir"])
            .arg(dir)
            .args(extra)
            .envs(env.iter().copied())
            // A panic in any task is a crash the test sees.
            .env("REDCODEC_ABORT_ON_PANIC", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redcodec serve starts");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("ready line");
        let addr = line.trim().rsplit(' ').next().expect("address").to_string();
        assert!(line.contains("ready to accept connections"), "{line}");
        // Keep reading stdout so the server never blocks on it.
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = out.read_to_string(&mut rest);
        });
        Serve { child, addr }
    }

    /// [`Serve::start`] on a fresh store directory, removed when the
    /// returned guard drops: bound first (`let (_tmp, server) = …`), it
    /// drops after the server stops.
    #[allow(dead_code)]
    pub fn on_fresh_store(format: &str, extra: &[&str]) -> (tempfile::TempDir, Serve) {
        let (tmp, dir) = store_dir();
        (tmp, Serve::start(format, &dir, extra))
    }

    /// `redis://addr/` with `query` appended.
    pub fn url(&self, query: &str) -> String {
        format!("redis://{}/{query}", self.addr)
    }

    /// A RESP2 connection.
    #[allow(dead_code)]
    pub fn conn(&self) -> redis::Connection {
        connect(&self.url(""))
    }

    /// A RESP3 connection (the client sends HELLO 3).
    #[allow(dead_code)]
    pub fn conn3(&self) -> redis::Connection {
        redis::Client::open(self.url("?protocol=resp3"))
            .and_then(|c| c.get_connection())
            .expect("connects with RESP3")
    }

    /// A raw TCP connection.
    #[allow(dead_code)]
    pub fn raw(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).expect("tcp connects");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }

    /// Whether the server is still running (has not exited or crashed).
    #[allow(dead_code)]
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's process id.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The port.
    #[allow(dead_code)]
    pub fn port(&self) -> String {
        self.addr.rsplit(':').next().unwrap().to_string()
    }

    /// Sends SIGTERM (or SIGINT) and waits for the exit: a server still
    /// running after two minutes fails the test (and is killed) instead
    /// of hanging the run.
    #[allow(dead_code)]
    pub fn signal(mut self, name: &str) -> ExitStatus {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        for _ in 0..1200 {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!(
            "serve (pid {}) did not exit within two minutes of SIG{name}",
            self.child.id()
        );
    }

    /// Waits for the server to exit by itself (after SHUTDOWN).
    #[allow(dead_code)]
    pub fn wait(mut self) -> ExitStatus {
        self.child.wait().expect("server exits")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh store directory.
pub fn store_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("store");
    (tmp, dir)
}

/// Reads from `s` until the peer closes, or `want` bytes arrived.
#[allow(dead_code)]
pub fn read_until_close(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    all
}

/// Sends `bytes` and reads until `expected.len()` bytes arrived.
#[allow(dead_code)]
pub fn exchange(s: &mut TcpStream, bytes: &[u8], expected_len: usize) -> Vec<u8> {
    s.write_all(bytes).unwrap();
    let mut got = vec![0u8; expected_len];
    s.read_exact(&mut got).unwrap();
    got
}

/// Polls INFO until `blocked_clients` is `n` (no time window: a blocked
/// client stays blocked until served).
#[allow(dead_code)]
pub fn wait_blocked(conn: &mut redis::Connection, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info: String = redis::cmd("INFO").arg("clients").query(conn).unwrap();
        if info.contains(&format!("blocked_clients:{n}\r\n")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never {n} blocked clients: {info}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A RESP2 connection to the server at `url` (for threads, which carry the
/// server's URL rather than the server).
#[allow(dead_code)]
pub fn connect(url: &str) -> redis::Connection {
    redis::Client::open(url)
        .and_then(|c| c.get_connection())
        .expect("connects")
}

/// A bulk string reply.
#[allow(dead_code)]
pub fn bulk(s: &str) -> redis::Value {
    redis::Value::BulkString(s.as_bytes().to_vec())
}

/// An array reply of bulk strings.
#[allow(dead_code)]
pub fn bulks(items: &[&str]) -> redis::Value {
    redis::Value::Array(items.iter().map(|s| bulk(s)).collect())
}

/// A key's type and whole value as a client reads it, in an order-free
/// form, and its PTTL.
#[allow(dead_code)]
pub fn read_key(c: &mut redis::Connection, key: &[u8]) -> (String, redis::Value, i64) {
    let ty: String = redis::cmd("TYPE").arg(key).query(c).unwrap();
    let value = match ty.as_str() {
        "string" => redis::cmd("GET").arg(key).query(c).unwrap(),
        "list" => redis::cmd("LRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .query(c)
            .unwrap(),
        "set" => sorted(redis::cmd("SMEMBERS").arg(key).query(c).unwrap()),
        "zset" => redis::cmd("ZRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(c)
            .unwrap(),
        "hash" => sorted_pairs(redis::cmd("HGETALL").arg(key).query(c).unwrap()),
        "none" => redis::Value::Nil,
        other => panic!("unexpected type {other}"),
    };
    let pttl: i64 = redis::cmd("PTTL").arg(key).query(c).unwrap();
    (ty, value, pttl)
}

/// A set reply in a fixed order.
#[allow(dead_code)]
pub fn sorted(v: redis::Value) -> redis::Value {
    match v {
        redis::Value::Array(mut items) | redis::Value::Set(mut items) => {
            items.sort_by_key(|i| format!("{i:?}"));
            redis::Value::Array(items)
        }
        other => other,
    }
}

/// A field–value reply in a fixed order of its pairs.
#[allow(dead_code)]
pub fn sorted_pairs(v: redis::Value) -> redis::Value {
    match v {
        redis::Value::Array(items) => {
            let mut pairs: Vec<(String, redis::Value)> = items
                .chunks(2)
                .map(|p| (format!("{:?}", p[0]), redis::Value::Array(p.to_vec())))
                .collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            redis::Value::Array(pairs.into_iter().map(|p| p.1).collect())
        }
        other => other,
    }
}

/// Every key, sorted.
#[allow(dead_code)]
pub fn keys(c: &mut redis::Connection) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    keys.sort();
    keys
}

/// Every key of `a` reads the same on `b`: the same keys, and for each its
/// type, value, and TTL within a second.
#[allow(dead_code)]
pub fn assert_same_keys(a: &mut redis::Connection, b: &mut redis::Connection, what: &str) {
    let ak = keys(a);
    let bk = keys(b);
    let names = |k: &[Vec<u8>]| {
        k.iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&ak), names(&bk), "{what}: the same keys");
    assert!(!ak.is_empty(), "{what}: some keys");
    for key in &ak {
        let (at, av, attl) = read_key(a, key);
        let (bt, bv, bttl) = read_key(b, key);
        let k = String::from_utf8_lossy(key);
        assert_eq!(at, bt, "{what}: type of {k}");
        assert_eq!(av, bv, "{what}: value of {k}");
        assert!(
            (attl < 0 && attl == bttl) || (attl >= 0 && bttl >= 0 && (attl - bttl).abs() <= 1000),
            "{what}: TTL of {k}: {attl} against {bttl}"
        );
    }
}
