//! The registry of connected clients: CLIENT LIST, KILL, UNBLOCK, INFO.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::waiters::Waiter;

/// What the server knows of one client.
pub struct ClientInfo {
    /// `CLIENT ID`.
    pub id: u64,
    /// Peer address.
    pub addr: SocketAddr,
    /// Local address.
    pub laddr: SocketAddr,
    /// When it connected.
    pub created: Instant,
    /// What changes while it runs.
    pub live: Mutex<Live>,
    /// Set by CLIENT KILL; the connection closes.
    pub killed: AtomicBool,
    /// Wakes the connection when killed.
    pub kill: Notify,
    /// A replica's link to its master: Redis' client of type `master`
    /// (`flags=M`).
    pub master: bool,
}

/// The changing part of [`ClientInfo`].
pub struct Live {
    /// `CLIENT SETNAME`.
    pub name: Vec<u8>,
    /// Last command, as `CLIENT LIST` shows it.
    pub last_cmd: String,
    /// When the last command came.
    pub last_seen: Instant,
    /// Database index `CLIENT LIST` shows.
    pub db: i64,
    /// Protocol version.
    pub resp: i64,
    /// Inside MULTI.
    pub multi: Option<usize>,
    /// The blocking command it waits in, if any.
    pub blocked: Option<Arc<Waiter>>,
    /// Its command waits for the end of a CLIENT PAUSE.
    pub paused: bool,
    /// `CLIENT SETINFO LIB-NAME`, `LIB-VER`.
    pub lib: (String, String),
    /// Its channels, patterns and sharded channels (`sub=`, `psub=`,
    /// `ssub=`).
    pub subscriptions: (usize, usize, usize),
}

impl ClientInfo {
    /// Asks the connection to close.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.kill.notify_one();
    }

    /// One line of `CLIENT LIST`.
    pub fn list_line(&self) -> String {
        let live = self.live.lock();
        let flags = match (&live.blocked, live.multi) {
            _ if self.master => "M",
            _ if live.subscriptions != (0, 0, 0) => "P",
            (Some(_), _) => "b",
            (None, Some(_)) => "x",
            _ => "N",
        };
        format!(
            "id={} addr={} laddr={} fd=8 name={} age={} idle={} flags={flags} db={} sub={} psub={} ssub={} multi={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user=default redir=-1 resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            String::from_utf8_lossy(&live.name),
            self.created.elapsed().as_secs(),
            live.last_seen.elapsed().as_secs(),
            live.db,
            live.subscriptions.0,
            live.subscriptions.1,
            live.subscriptions.2,
            live.multi.map_or(-1, |n| n as i64),
            live.last_cmd,
            live.resp,
            live.lib.0,
            live.lib.1,
        )
    }
}

/// Every connected client, by id.
#[derive(Default)]
pub struct Clients {
    next_id: AtomicU64,
    by_id: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    /// Connections ever accepted.
    pub received: AtomicU64,
}

impl Clients {
    /// Registers a new client.
    pub fn add(&self, addr: SocketAddr, laddr: SocketAddr) -> Arc<ClientInfo> {
        self.register(addr, laddr, false)
    }

    /// Registers a replica's link to its master (`addr`: the master's),
    /// a client of type `master`.
    pub fn add_master(&self, addr: SocketAddr, laddr: SocketAddr) -> Arc<ClientInfo> {
        self.register(addr, laddr, true)
    }

    fn register(&self, addr: SocketAddr, laddr: SocketAddr, master: bool) -> Arc<ClientInfo> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        self.received.fetch_add(1, Ordering::Relaxed);
        let info = Arc::new(ClientInfo {
            id,
            addr,
            laddr,
            created: Instant::now(),
            live: Mutex::new(Live {
                name: Vec::new(),
                last_cmd: "NULL".into(),
                last_seen: Instant::now(),
                db: 0,
                resp: 2,
                multi: None,
                blocked: None,
                paused: false,
                lib: (String::new(), String::new()),
                subscriptions: (0, 0, 0),
            }),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
            master,
        });
        self.by_id.lock().insert(id, info.clone());
        info
    }

    /// Forgets a client that disconnected.
    pub fn remove(&self, id: u64) {
        self.by_id.lock().remove(&id);
    }

    /// Every client, by id.
    pub fn all(&self) -> Vec<Arc<ClientInfo>> {
        self.by_id.lock().values().cloned().collect()
    }

    /// The client with `id`.
    pub fn get(&self, id: u64) -> Option<Arc<ClientInfo>> {
        self.by_id.lock().get(&id).cloned()
    }

    /// Connected clients.
    pub fn count(&self) -> usize {
        self.by_id.lock().len()
    }

    /// Clients waiting in a blocking command.
    pub fn blocked(&self) -> usize {
        self.by_id
            .lock()
            .values()
            .filter(|c| {
                let live = c.live.lock();
                live.blocked.is_some() || live.paused
            })
            .count()
    }
}
