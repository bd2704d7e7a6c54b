//! Every script of `tests/corpus.lua` (one a line) run by a real
//! redis-server 7.0 (`EVAL script 0`) and by a local Lua state with
//! [`redcodec_lualib::load`]: the replies must be the same.
//!
//! A script's result is converted as Redis converts it (string to bulk,
//! number to integer, true to 1, false and nil to nil, table to array).
//! An error is compared by its message: Redis' `ERR ` code and its
//! ` script: <sha>, on @user_script:<line>.` suffix removed, the
//! position (`user_script:1: `) kept.
//!
//! Without redis-server the test is skipped (reported on stderr and in
//! `REDCODEC_SKIP_LOG`), unless `REDCODEC_REQUIRE_REDIS=1` (set by CI),
//! where it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mlua::{Lua, Value};

/// A reply, as compared.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Bulk(Vec<u8>),
    Integer(i64),
    Status(String),
    Nil,
    Array(Vec<Reply>),
    Error(String),
}

impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Bulk(b) if b.len() > 200 => write!(
                f,
                "{:?}... ({} bytes)",
                String::from_utf8_lossy(&b[..200]),
                b.len()
            ),
            Reply::Bulk(b) => write!(f, "{:?}", String::from_utf8_lossy(b)),
            Reply::Integer(i) => write!(f, "(integer) {i}"),
            Reply::Status(s) => write!(f, "+{s}"),
            Reply::Nil => write!(f, "(nil)"),
            Reply::Array(items) => {
                write!(f, "[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{item}")?;
                }
                write!(f, "]")
            }
            Reply::Error(e) => write!(f, "(error) {e}"),
        }
    }
}

/// A redis-server child on a free port, killed on drop.
struct Server {
    child: Child,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Server {
    fn start() -> Result<Server, String> {
        // A free port above 27900 (not the ephemeral range others use).
        let base = 27_950 + (std::process::id() % 500) as u16;
        let port = (base..base + 500)
            .find(|&p| TcpListener::bind(("127.0.0.1", p)).is_ok())
            .ok_or("no free port")?;
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server: {e} (is it installed?)"))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("redis-server exited: {status}"));
            }
            if let Ok(conn) = TcpStream::connect(("127.0.0.1", port)) {
                conn.set_read_timeout(Some(Duration::from_secs(60)))
                    .map_err(|e| e.to_string())?;
                let writer = conn.try_clone().map_err(|e| e.to_string())?;
                let mut server = Server {
                    child,
                    reader: BufReader::new(conn),
                    writer,
                };
                if server.command(&[b"PING"]) == Reply::Status("PONG".into()) {
                    return Ok(server);
                }
                return Err("no PONG".into());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return Err(format!("no answer on port {port} within 60 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn command(&mut self, args: &[&[u8]]) -> Reply {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).expect("write to redis-server");
        self.read_reply()
    }

    fn read_reply(&mut self) -> Reply {
        let mut line = Vec::new();
        self.reader
            .read_until(b'\n', &mut line)
            .expect("read from redis-server");
        let text = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        match line[0] {
            b'+' => Reply::Status(text),
            b'-' => Reply::Error(text),
            b':' => Reply::Integer(text.parse().expect("integer reply")),
            b'$' => {
                let Ok(len) = usize::try_from(text.parse::<i64>().expect("bulk length")) else {
                    return Reply::Nil;
                };
                let mut bulk = vec![0; len + 2];
                self.reader.read_exact(&mut bulk).expect("bulk");
                bulk.truncate(len);
                Reply::Bulk(bulk)
            }
            b'*' => {
                let Ok(len) = usize::try_from(text.parse::<i64>().expect("array length")) else {
                    return Reply::Nil;
                };
                Reply::Array((0..len).map(|_| self.read_reply()).collect())
            }
            other => panic!("unexpected reply type {:?}", other as char),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Redis' error reply as compared: no `ERR ` code, no script suffix.
fn redis_error(text: &str) -> String {
    let text = text.strip_prefix("ERR ").unwrap_or(text);
    match text.rfind(" script: ") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// A Lua value converted to a reply as Redis converts script results.
fn to_reply(value: &Value) -> Reply {
    match value {
        Value::String(s) => Reply::Bulk(s.as_bytes().to_vec()),
        Value::Integer(i) => Reply::Integer(*i),
        Value::Number(n) => Reply::Integer(*n as i64),
        Value::Boolean(true) => Reply::Integer(1),
        Value::Table(t) => {
            if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
                return Reply::Error(e.to_string_lossy());
            }
            if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
                return Reply::Status(s.to_string_lossy());
            }
            let mut items = Vec::new();
            for i in 1.. {
                match t.raw_get::<Value>(i) {
                    Ok(Value::Nil) | Err(_) => break,
                    Ok(v) => items.push(to_reply(&v)),
                }
            }
            Reply::Array(items)
        }
        _ => Reply::Nil,
    }
}

/// The local run of `script`.
fn run_locally(lua: &Lua, script: &str) -> Reply {
    match lua.load(script).set_name("@user_script").eval::<Value>() {
        Ok(value) => to_reply(&value),
        // mlua appends a traceback to an error that ends the chunk.
        Err(mlua::Error::RuntimeError(message)) => Reply::Error(
            message
                .split("\nstack traceback:")
                .next()
                .unwrap_or_default()
                .to_string(),
        ),
        Err(e) => Reply::Error(format!("unexpected mlua error: {e}")),
    }
}

/// The scripts of the corpus: every line that is not blank or a comment.
fn corpus() -> Vec<&'static str> {
    include_str!("corpus.lua")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .collect()
}

/// `test` cannot run: fail under `REDCODEC_REQUIRE_REDIS=1`, else report
/// the skip.
fn unavailable(test: &str, reason: &str) {
    if std::env::var("REDCODEC_REQUIRE_REDIS").is_ok_and(|v| v == "1") {
        panic!("{test} cannot run (REDCODEC_REQUIRE_REDIS=1): {reason}");
    }
    eprintln!("SKIPPED: {test}: {reason}");
    if let Ok(path) = std::env::var("REDCODEC_SKIP_LOG") {
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(file, "{test}: {}", reason.replace('\n', " "));
        }
    }
}

#[test]
fn corpus_replies_as_redis_does() {
    let mut server = match Server::start() {
        Ok(server) => server,
        Err(reason) => {
            unavailable("lualib::corpus_replies_as_redis_does", &reason);
            return;
        }
    };
    let lua = Lua::new();
    redcodec_lualib::load(&lua).expect("load the libraries");
    let scripts = corpus();
    assert!(scripts.len() >= 150, "corpus of {} scripts", scripts.len());
    let mut mismatches = Vec::new();
    for script in &scripts {
        let redis = match server.command(&[b"EVAL", script.as_bytes(), b"0"]) {
            Reply::Error(e) => Reply::Error(redis_error(&e)),
            reply => reply,
        };
        let local = run_locally(&lua, script);
        if redis != local {
            mismatches.push(format!("{script}\n    redis: {redis}\n    local: {local}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} scripts differ:\n{}",
        mismatches.len(),
        scripts.len(),
        mismatches.join("\n")
    );
    eprintln!("{} scripts replied as redis-server does", scripts.len());
}
