//! A real Apache Kvrocks server for the tests that run one beside
//! redcodec: its binary is named by `REDCODEC_KVROCKS_BIN`; without it a
//! test records a skip (`redcodec_conformance::skip`), or fails under
//! `REDCODEC_REQUIRE_KVROCKS=1`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Kvrocks binary, or a recorded skip of `test`.
pub fn kvrocks_bin(test: &str) -> Option<PathBuf> {
    match std::env::var_os("REDCODEC_KVROCKS_BIN") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            redcodec_conformance::skip::unavailable(
                "REDCODEC_REQUIRE_KVROCKS",
                test,
                "REDCODEC_KVROCKS_BIN does not name a Kvrocks server binary",
            );
            None
        }
    }
}

/// A Kvrocks server on a loopback port, killed on drop.
pub struct Kvrocks {
    child: Child,
    /// Its port.
    pub port: u16,
    /// Its password, if the configuration set one.
    password: Option<String>,
    /// The configuration file (and, for a fresh server, its data).
    _tmp: tempfile::TempDir,
}

impl Kvrocks {
    /// A fresh server: `bind`, `port`, `dir`, `workers 2`, `log-dir
    /// stdout`, then the `extra` configuration lines.
    pub fn start(bin: &Path, extra: &str) -> Kvrocks {
        Kvrocks::start_on(bin, None, extra, None)
    }

    /// [`Kvrocks::start`] on data directory `dir` (a fresh one when
    /// `None`), with `password` when `extra` sets `requirepass`; returns
    /// once it answers PING.
    pub fn start_on(
        bin: &Path,
        dir: Option<&Path>,
        extra: &str,
        password: Option<&str>,
    ) -> Kvrocks {
        let tmp = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let data = dir.map_or_else(|| tmp.path().join("data"), Path::to_path_buf);
        let conf = tmp.path().join("kvrocks.conf");
        std::fs::write(
            &conf,
            format!(
                "bind 127.0.0.1\nport {port}\ndir {}\nworkers 2\nlog-dir stdout\n{extra}",
                data.display()
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kvrocks starts");
        let mut k = Kvrocks {
            child,
            port,
            password: password.map(str::to_string),
            _tmp: tmp,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = k.child.try_wait() {
                panic!("kvrocks exited at start: {status}");
            }
            let ping = redis::Client::open(k.url())
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if ping.is_ok() {
                return k;
            }
            assert!(Instant::now() < deadline, "kvrocks never answered PING");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `redis://[:password@]127.0.0.1:port/`.
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/", self.port),
            None => format!("redis://127.0.0.1:{}/", self.port),
        }
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Kvrocks {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
