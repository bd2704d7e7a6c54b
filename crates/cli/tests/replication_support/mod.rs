//! What the replication tests share: a redis-server master, INFO fields,
//! polling, the keyspace as comparable values, and an RDB redis-server
//! wrote.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use redcodec_conformance::target::RedisServer;
use redcodec_rdb::{decode_payload, Value};

use crate::serve_support::connect;

/// How long convergence may take on a busy machine.
pub const BOUND: Duration = Duration::from_secs(180);

/// How long the keys written to live 300 ms take to be gone everywhere:
/// blackwidow keeps whole seconds and rounds an expiry up, by up to one.
#[allow(dead_code)]
pub const SHORT_GONE: Duration = Duration::from_millis(2500);

/// A redis-server master on a loopback port, killed on drop (before its
/// directory is removed).
#[allow(dead_code)]
pub struct Master {
    _server: RedisServer,
    /// Its port.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Master {
    pub fn start(test: &str, args: &[&str]) -> Option<Master> {
        let dir = tempfile::tempdir().unwrap();
        let mut extra = vec!["--repl-diskless-sync-delay", "0"];
        extra.extend_from_slice(args);
        let server = RedisServer::start_with_or_skip(test, Some(dir.path()), &extra)?;
        let port = server.port();
        Some(Master {
            _server: server,
            port,
            _dir: dir,
        })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn conn(&self) -> redis::Connection {
        connect(&self.url())
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// One field of an INFO section.
#[allow(dead_code)]
pub fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

#[allow(dead_code)]
pub fn info(c: &mut redis::Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(c).unwrap()
}

/// Polls until `ready` holds, failing with `what` and the last state
/// after [`BOUND`].
#[allow(dead_code)]
pub fn wait_until(what: &str, mut ready: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + BOUND;
    loop {
        let Err(state) = ready() else { return };
        assert!(Instant::now() < deadline, "never {what}: {state}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the replica `c`'s link to its master is up (`what` names
/// the wait in a failure).
#[allow(dead_code)]
pub fn wait_link_up(c: &mut redis::Connection, what: &str) {
    wait_until(what, || {
        let text = info(c, "replication");
        match field(&text, "master_link_status").as_deref() {
            Some("up") => Ok(()),
            _ => Err(text),
        }
    });
}

/// Every key of the selected database: its value (DUMP, decoded, in an
/// order-free form) and PEXPIRETIME (`None`: no expiry).
#[allow(dead_code)]
pub fn contents(c: &mut redis::Connection) -> BTreeMap<Vec<u8>, (Value, Option<i64>)> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    let mut out = BTreeMap::new();
    for key in keys {
        let payload: Option<Vec<u8>> = redis::cmd("DUMP").arg(&key).query(c).unwrap();
        let Some(payload) = payload else { continue };
        let value = decode_payload(&payload).unwrap().canonical();
        let at: i64 = redis::cmd("PEXPIRETIME").arg(&key).query(c).unwrap();
        out.insert(key, (value, (at >= 0).then_some(at)));
    }
    out
}

#[allow(dead_code)]
pub fn q(c: &mut redis::Connection, args: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
        .unwrap_or_else(|e| panic!("{args:?} on the master: {e}"))
}

#[allow(dead_code)]
pub fn wait_rounds(rounds: &AtomicUsize, at_least: usize) {
    wait_until(&format!("{at_least} rounds written"), || {
        let n = rounds.load(Ordering::SeqCst);
        if n >= at_least {
            Ok(())
        } else {
            Err(format!("{n} rounds"))
        }
    });
}

/// A real RDB file (what redis-server SAVEs) holding `keys` strings.
#[allow(dead_code)]
pub fn real_rdb(test: &str, keys: usize) -> Option<Vec<u8>> {
    let master = Master::start(test, &["--enable-debug-command", "yes"])?;
    let mut c = master.conn();
    q(&mut c, &["DEBUG", "POPULATE", &keys.to_string(), "k", "8"]);
    q(&mut c, &["SAVE"]);
    Some(std::fs::read(master._dir.path().join("dump.rdb")).unwrap())
}
