//! Where scenarios run: an engine of any format on a manual clock, or a
//! real `redis-server` started on a free loopback port.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redcodec_engine::{Engine, EngineOptions, ManualClock, Reply};
use redcodec_formats::{AnyCodec, Format, FormatOptions};
use redis_protocol::resp2::decode::decode;
use redis_protocol::resp2::encode::encode;
use redis_protocol::resp2::types::{OwnedFrame, Resp2Frame};
use thiserror::Error;

use crate::scenario::ExpiryCaps;

/// The time an engine target starts at, and returns to before every case:
/// 2023-11-14T22:13:20.000Z, a whole second.
pub const START_MS: u64 = 1_700_000_000_000;

/// A target that cannot be started or reached.
#[derive(Debug, Error)]
pub enum TargetError {
    /// Starting or opening the target failed.
    #[error("cannot start {target}: {message}")]
    Start {
        /// Which target.
        target: String,
        /// Why.
        message: String,
    },
    /// Talking to the target failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The target sent bytes that are not RESP2.
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// Something that runs commands and whose clock a scenario can move.
pub trait Target {
    /// A name for messages (a format name, or `redis`).
    fn name(&self) -> String;
    /// Runs one command.
    fn execute(&mut self, args: &[Vec<u8>]) -> Result<Reply, TargetError>;
    /// Lets `ms` milliseconds pass.
    fn advance_ms(&mut self, ms: u64);
    /// What the target declares about expiry, for `@requires`.
    fn expiry_caps(&self) -> ExpiryCaps;
    /// Called before each case, after the store is emptied. A target on a
    /// manual clock sets it back to [`START_MS`], so that every case starts
    /// at the same instant (a whole second) whatever ran before it.
    fn begin_case(&mut self) {}
}

/// An engine of one format in a temporary directory, on a manual clock.
pub struct EngineTarget {
    engine: Engine<AnyCodec>,
    clock: Arc<ManualClock>,
    format: Format,
    _dir: tempfile::TempDir,
}

impl EngineTarget {
    /// A fresh store of `format` with default options, at a fixed time.
    pub fn new(format: Format) -> Result<EngineTarget, TargetError> {
        let start = |message: String| TargetError::Start {
            target: format.to_string(),
            message,
        };
        let dir = tempfile::tempdir().map_err(|e| start(e.to_string()))?;
        let clock = Arc::new(ManualClock::at_ms(START_MS));
        let codec = format
            .codec(&FormatOptions::default())
            .map_err(|e| start(e.to_string()))?;
        let engine = Engine::open(codec, dir.path(), EngineOptions::with_clock(clock.clone()))
            .map_err(|e| start(e.to_string()))?;
        Ok(EngineTarget {
            engine,
            clock,
            format,
            _dir: dir,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Engine<AnyCodec> {
        &self.engine
    }
}

impl Target for EngineTarget {
    fn name(&self) -> String {
        self.format.to_string()
    }

    fn execute(&mut self, args: &[Vec<u8>]) -> Result<Reply, TargetError> {
        Ok(self.engine.execute(args))
    }

    fn advance_ms(&mut self, ms: u64) {
        self.clock.advance_ms(ms);
    }

    fn expiry_caps(&self) -> ExpiryCaps {
        let caps = self.engine.capabilities();
        ExpiryCaps {
            ttl: caps.ttl,
            max_expire_ms: caps.max_expire_ms,
            relative_expiry: caps.relative_expiry,
            score_limit: caps.score_limit,
            collection_key_limit: caps.collection_key_limit,
        }
    }

    fn begin_case(&mut self) {
        self.clock.set_ms(START_MS);
    }
}

/// The error of a redis-server that does not start.
fn start_error(message: String) -> TargetError {
    TargetError::Start {
        target: "redis-server".into(),
        message,
    }
}

/// A connection to `port` whose PING was answered by a Redis server (with
/// PONG, or NOAUTH under `--requirepass`).
fn answers_ping(port: u16) -> Option<TcpStream> {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    conn.write_all(b"*1\r\n$4\r\nPING\r\n").ok()?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => line.push(byte[0]),
            _ => return None,
        }
    }
    let ready = line == b"+PONG\r\n" || line.starts_with(b"-NOAUTH");
    conn.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    ready.then_some(conn)
}

/// A real `redis-server` child process on a loopback port, stopped on drop.
pub struct RedisServer {
    child: Child,
    port: u16,
    conn: TcpStream,
    buf: Vec<u8>,
}

impl RedisServer {
    /// The loopback port it listens on, for other clients.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts `redis-server` (from PATH) with persistence off.
    pub fn start() -> Result<RedisServer, TargetError> {
        RedisServer::start_with(None, &[])
    }

    /// Starts `redis-server` with persistence off, its files in `dir`
    /// (else the current directory) and `extra` options after those. It
    /// is ready once it answers PING, with PONG or, under
    /// `--requirepass`, NOAUTH.
    pub fn start_with(dir: Option<&Path>, extra: &[&str]) -> Result<RedisServer, TargetError> {
        // A port found free may be taken by another process before
        // redis-server binds it: redis-server then exits, and another
        // port is tried.
        for _ in 0..5 {
            if let Some(server) = RedisServer::start_on_a_free_port(dir, extra)? {
                return Ok(server);
            }
        }
        Err(start_error(
            "it exited at start five times (its port taken each time, or bad options)".into(),
        ))
    }

    /// One try of [`RedisServer::start_with`]: `None` when redis-server
    /// exited before it answered.
    fn start_on_a_free_port(
        dir: Option<&Path>,
        extra: &[&str],
    ) -> Result<Option<RedisServer>, TargetError> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| start_error(e.to_string()))?
            .port();
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"]);
        if let Some(dir) = dir {
            command.arg("--dir").arg(dir);
        }
        let mut child = command
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| start_error(format!("{e} (is redis-server installed?)")))?;
        // Generous: a busy 2-core machine may take a while to start it.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if child.try_wait()?.is_some() {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(start_error(format!("no answer to PING on port {port}")));
            }
            if let Some(conn) = answers_ping(port) {
                let mut server = RedisServer {
                    child,
                    port,
                    conn,
                    buf: Vec::new(),
                };
                // The server that answered is ours when INFO names our
                // child's pid (under `--requirepass` INFO is refused:
                // then ours is still running, as it would not be had it
                // failed to bind). Dropping another's kills our child.
                let pid = format!("process_id:{}\r\n", server.child.id());
                return Ok(
                    match server.execute(&[b"INFO".to_vec(), b"server".to_vec()])? {
                        Reply::Bulk(info)
                            if info.windows(pid.len()).any(|w| w == pid.as_bytes()) =>
                        {
                            Some(server)
                        }
                        Reply::Error(e) if e.starts_with("NOAUTH") => {
                            server.child.try_wait()?.is_none().then_some(server)
                        }
                        _ => None,
                    },
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// [`RedisServer::start`] for the test `test`: when redis-server
    /// cannot start, the skip is recorded ([`crate::skip::record`]) and
    /// `None` returned — or, under `REDCODEC_REQUIRE_REDIS=1`, the test
    /// fails.
    pub fn start_or_skip(test: &str) -> Option<RedisServer> {
        RedisServer::start_with_or_skip(test, None, &[])
    }

    /// [`RedisServer::start_with`], skipped as [`RedisServer::start_or_skip`].
    pub fn start_with_or_skip(
        test: &str,
        dir: Option<&Path>,
        extra: &[&str],
    ) -> Option<RedisServer> {
        RedisServer::start_with(dir, extra)
            .inspect_err(|e| {
                crate::skip::unavailable("REDCODEC_REQUIRE_REDIS", test, &e.to_string());
            })
            .ok()
    }

    fn read_frame(&mut self) -> Result<OwnedFrame, TargetError> {
        loop {
            match decode(&self.buf) {
                Ok(Some((frame, used))) => {
                    self.buf.drain(..used);
                    return Ok(frame);
                }
                Ok(None) => {}
                Err(e) => return Err(TargetError::Protocol(e.to_string())),
            }
            let mut chunk = vec![0u8; 64 * 1024];
            let n = self.conn.read(&mut chunk)?;
            if n == 0 {
                return Err(TargetError::Protocol("connection closed".into()));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

impl Target for RedisServer {
    fn name(&self) -> String {
        "redis".into()
    }

    fn execute(&mut self, args: &[Vec<u8>]) -> Result<Reply, TargetError> {
        let frame = OwnedFrame::Array(args.iter().cloned().map(OwnedFrame::BulkString).collect());
        let mut out = vec![0u8; frame.encode_len(false)];
        encode(&mut out, &frame, false).map_err(|e| TargetError::Protocol(e.to_string()))?;
        self.conn.write_all(&out)?;
        Ok(to_reply(self.read_frame()?))
    }

    fn advance_ms(&mut self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn expiry_caps(&self) -> ExpiryCaps {
        ExpiryCaps::REDIS
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Pub/Sub message as a subscriber received it: its channel and its
/// payload.
pub type Message = (Vec<u8>, Vec<u8>);

/// Any server speaking RESP2 on a loopback port (`redcodec serve`, for
/// the scenarios of server commands such as scripting), under a name.
pub struct ServerTarget {
    name: String,
    conn: TcpStream,
    buf: Vec<u8>,
}

impl ServerTarget {
    /// Connects to `127.0.0.1:port`, once it answers PING.
    pub fn connect(name: &str, port: u16) -> Result<ServerTarget, TargetError> {
        let conn = answers_ping(port).ok_or_else(|| TargetError::Start {
            target: name.to_string(),
            message: format!("nothing answers PING on port {port}"),
        })?;
        Ok(ServerTarget {
            name: name.to_string(),
            conn,
            buf: Vec::new(),
        })
    }
}

impl Target for ServerTarget {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn execute(&mut self, args: &[Vec<u8>]) -> Result<Reply, TargetError> {
        self.send(args)?;
        self.read_reply()
    }

    fn advance_ms(&mut self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn expiry_caps(&self) -> ExpiryCaps {
        ExpiryCaps::REDIS
    }
}

impl ServerTarget {
    /// Sends one command without reading its reply.
    pub fn send(&mut self, args: &[Vec<u8>]) -> Result<(), TargetError> {
        let frame = OwnedFrame::Array(args.iter().cloned().map(OwnedFrame::BulkString).collect());
        let mut out = vec![0u8; frame.encode_len(false)];
        encode(&mut out, &frame, false).map_err(|e| TargetError::Protocol(e.to_string()))?;
        self.conn.write_all(&out)?;
        Ok(())
    }

    /// To a RESP2 subscriber: the `(channel, message)` of every message,
    /// pattern message and sharded message it received before the reply to a PING sent
    /// now (a server sends that reply after whatever it published
    /// before).
    pub fn messages(&mut self) -> Result<Vec<Message>, TargetError> {
        self.send(&[b"PING".to_vec()])?;
        let mut out = Vec::new();
        loop {
            let reply = self.read_reply()?;
            let Reply::Array(items) = &reply else {
                return Err(TargetError::Protocol(format!("a subscriber got {reply:?}")));
            };
            match items.as_slice() {
                [Reply::Bulk(kind), Reply::Bulk(channel), Reply::Bulk(message)]
                    if kind == b"message" || kind == b"smessage" =>
                {
                    out.push((channel.clone(), message.clone()));
                }
                [Reply::Bulk(kind), Reply::Bulk(_), Reply::Bulk(channel), Reply::Bulk(message)]
                    if kind == b"pmessage" =>
                {
                    out.push((channel.clone(), message.clone()));
                }
                [Reply::Bulk(pong), Reply::Bulk(_)] if pong == b"pong" => return Ok(out),
                _ => return Err(TargetError::Protocol(format!("a subscriber got {reply:?}"))),
            }
        }
    }

    /// Reads the next reply (or message, to a subscriber).
    pub fn read_reply(&mut self) -> Result<Reply, TargetError> {
        loop {
            match decode(&self.buf) {
                Ok(Some((frame, used))) => {
                    self.buf.drain(..used);
                    return Ok(to_reply(frame));
                }
                Ok(None) => {}
                Err(e) => return Err(TargetError::Protocol(e.to_string())),
            }
            let mut chunk = vec![0u8; 64 * 1024];
            let n = self.conn.read(&mut chunk)?;
            if n == 0 {
                return Err(TargetError::Protocol("connection closed".into()));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn to_reply(frame: OwnedFrame) -> Reply {
    match frame {
        OwnedFrame::SimpleString(s) => Reply::Status(String::from_utf8_lossy(&s).into_owned()),
        OwnedFrame::Error(e) => Reply::Error(e),
        OwnedFrame::Integer(i) => Reply::Integer(i),
        OwnedFrame::BulkString(b) => Reply::Bulk(b),
        OwnedFrame::Array(items) => Reply::Array(items.into_iter().map(to_reply).collect()),
        OwnedFrame::Null => Reply::Nil,
    }
}
