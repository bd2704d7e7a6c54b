//! The master's replication state: the stream, its backlog, the
//! connected replicas' queues (the data [`crate::master`] works on; a
//! leaf the server's state holds).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::backlog::Backlog;
use super::backlog_size::DEFAULT_BACKLOG_SIZE;
use super::propagate::{self, Args};
use crate::clients::ClientInfo;
use crate::held_feed::Held;

/// The most bytes a replica's output queue may hold before the replica
/// is disconnected (Redis' `client-output-buffer-limit replica` hard
/// limit, 256 MB).
pub const QUEUE_LIMIT: usize = 256 * 1024 * 1024;

/// How long the stream may stay silent before a `PING` is sent, by
/// default (Redis' `repl-ping-replica-period`, 10 seconds).
pub const PING_PERIOD: Duration = Duration::from_secs(10);

/// Where a replica is in its synchronisation, as INFO names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// The snapshot is being written.
    WaitBgsave,
    /// The RDB file is being sent.
    SendBulk,
    /// The replica follows the stream.
    Online,
}

impl LinkState {
    /// INFO's name.
    pub fn name(self) -> &'static str {
        match self {
            LinkState::WaitBgsave => "wait_bgsave",
            LinkState::SendBulk => "send_bulk",
            LinkState::Online => "online",
        }
    }
}

/// What the stream holds for one replica and has not yet sent.
#[derive(Default)]
pub(crate) struct Queue {
    pub(crate) chunks: VecDeque<Bytes>,
    pub(crate) bytes: usize,
    pub(crate) overflowed: bool,
}

/// One connected replica.
pub struct Link {
    /// The connection's registry entry (CLIENT KILL closes it).
    pub info: Arc<ClientInfo>,
    /// The address INFO shows (`REPLCONF ip-address`, else the peer's).
    pub ip: String,
    /// The port INFO shows (`REPLCONF listening-port`).
    pub port: u16,
    pub(crate) queue: Mutex<Queue>,
    /// Woken when the queue grows.
    pub wake: Notify,
    pub(crate) state: Mutex<LinkState>,
    /// The offset the replica last acknowledged (`REPLCONF ACK`).
    pub ack: AtomicU64,
    pub(crate) ack_time: Mutex<Instant>,
}

impl Link {
    pub(crate) fn push(&self, bytes: &Bytes) {
        let mut q = self.queue.lock();
        if q.overflowed {
            return;
        }
        q.bytes += bytes.len();
        q.chunks.push_back(bytes.clone());
        if q.bytes > QUEUE_LIMIT {
            q.overflowed = true;
            q.chunks.clear();
            q.bytes = 0;
        }
        drop(q);
        self.wake.notify_one();
    }

    /// Everything queued; `None` when the queue overflowed (the replica
    /// must be disconnected).
    pub fn take(&self) -> Option<Vec<Bytes>> {
        let mut q = self.queue.lock();
        if q.overflowed {
            return None;
        }
        q.bytes = 0;
        Some(q.chunks.drain(..).collect())
    }

    /// Whether the queue passed [`QUEUE_LIMIT`].
    pub fn overflowed(&self) -> bool {
        self.queue.lock().overflowed
    }

    /// Sets the synchronisation state.
    pub fn set_state(&self, state: LinkState) {
        *self.state.lock() = state;
    }

    /// Records `REPLCONF ACK offset`.
    pub fn acknowledge(&self, offset: u64) {
        self.ack.fetch_max(offset, Ordering::SeqCst);
        *self.ack_time.lock() = Instant::now();
    }
}

/// Whether the stream is inside a transaction being propagated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Multi {
    Off,
    /// EXEC runs; `MULTI` goes out before its first write.
    Pending,
    /// `MULTI` went out; `EXEC` closes it.
    Open,
}

/// The stream's state, under one mutex.
pub(crate) struct Stream {
    pub(crate) backlog: Option<Backlog>,
    /// The database the stream has selected.
    pub(crate) selected: Option<u32>,
    pub(crate) multi: Multi,
    pub(crate) links: Vec<Arc<Link>>,
    pub(crate) last_feed: Instant,
}

/// What a replica said with REPLCONF before PSYNC.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    /// `listening-port`.
    pub port: u16,
    /// `ip-address`.
    pub ip: Option<String>,
    /// `capa eof`: it reads the `$EOF:<mark>` form of the RDB transfer.
    pub capa_eof: bool,
}

/// The master's replication state (shared through an `Arc` with the
/// observer the engine calls).
pub struct ReplCore {
    pub(crate) stream: Mutex<Stream>,
    pub(crate) active: AtomicBool,
    pub(crate) backlog_size: AtomicUsize,
    pub(crate) handshakes: Mutex<HashMap<u64, Handshake>>,
    /// Woken at every acknowledgement (WAIT).
    pub acked: Notify,
    pub(crate) sync_full: AtomicU64,
    pub(crate) sync_partial_ok: AtomicU64,
    pub(crate) sync_partial_err: AtomicU64,
    /// `master_replid2` and `second_repl_offset`: the stream this one
    /// continues ([`super::restart`]), served from the backlog to a
    /// replica asking for it up to that offset.
    pub(crate) second: Mutex<Option<(String, u64)>>,
    /// `repl-ping-replica-period`, in seconds.
    pub(crate) ping_period: AtomicU64,
}

/// The replication state of the server (see [`crate::master`]).
pub struct Replication {
    pub(crate) core: Arc<ReplCore>,
}

impl Default for Replication {
    fn default() -> Replication {
        Replication {
            core: Arc::new(ReplCore {
                stream: Mutex::new(Stream {
                    backlog: None,
                    selected: None,
                    multi: Multi::Off,
                    links: Vec::new(),
                    last_feed: Instant::now(),
                }),
                active: AtomicBool::new(false),
                backlog_size: AtomicUsize::new(DEFAULT_BACKLOG_SIZE),
                handshakes: Mutex::new(HashMap::new()),
                acked: Notify::new(),
                sync_full: AtomicU64::new(0),
                sync_partial_ok: AtomicU64::new(0),
                sync_partial_err: AtomicU64::new(0),
                second: Mutex::new(None),
                ping_period: AtomicU64::new(PING_PERIOD.as_secs()),
            }),
        }
    }
}

impl Replication {
    /// The state the observer shares.
    pub fn core(&self) -> &Arc<ReplCore> {
        &self.core
    }

    /// EXEC starts: its writes go out between `MULTI` and `EXEC`.
    pub fn begin_transaction(&self) {
        let mut s = self.core.stream.lock();
        if s.backlog.is_some() {
            s.multi = Multi::Pending;
        }
    }

    /// EXEC ended: closes the `MULTI` it opened, if any.
    pub fn end_transaction(&self) {
        self.close_transaction(b"EXEC");
    }

    /// EXEC's writes failed to commit (none applied): closes the `MULTI`
    /// it opened, if any, with `DISCARD`, so replicas apply none either.
    pub fn discard_transaction(&self) {
        self.close_transaction(b"DISCARD");
    }

    pub(crate) fn close_transaction(&self, with: &[u8]) {
        let open = {
            let mut s = self.core.stream.lock();
            std::mem::replace(&mut s.multi, Multi::Off) == Multi::Open
        };
        if open {
            self.core.feed(&[vec![with.to_vec()]]);
        }
    }

    /// Applies `repl-backlog-size` and `repl-ping-replica-period` from the
    /// settings.
    pub fn configure(&self, settings: &crate::settings::Settings) {
        let period = settings
            .value("repl-ping-replica-period")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(PING_PERIOD.as_secs());
        self.core.ping_period.store(period, Ordering::SeqCst);
        let size = settings
            .value("repl-backlog-size")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(DEFAULT_BACKLOG_SIZE)
            .max(16 * 1024);
        self.core.backlog_size.store(size, Ordering::SeqCst);
        if let Some(b) = self.core.stream.lock().backlog.as_mut() {
            b.resize(size);
        }
    }

    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.core.offset()
    }

    /// The offset of this server's stream if it was fed (a replica
    /// followed it, or it continues another stream), else `None`.
    pub fn fed_offset(&self) -> Option<u64> {
        self.core
            .stream
            .lock()
            .backlog
            .as_ref()
            .map(Backlog::offset)
    }

    /// A replica promoted: when it serves no replica of its own, its
    /// stream continues the one it followed, Redis' `shiftReplicationId`
    /// (`replid` at `offset` becomes `master_replid2`, and the backlog
    /// starts there), so the other replicas of its old master, and that
    /// master, may continue from it. Returns whether it did.
    pub fn continue_stream(&self, replid: &str, offset: u64) -> bool {
        let core = &self.core;
        let mut s = core.stream.lock();
        if s.backlog.is_some() {
            // Its own replicas follow its own offsets.
            return false;
        }
        let size = core.backlog_size.load(Ordering::SeqCst);
        s.backlog = Some(Backlog::new(size, offset));
        s.selected = None;
        core.active.store(true, Ordering::SeqCst);
        *core.second.lock() = Some((replid.to_string(), offset + 1));
        true
    }

    /// The connected replicas.
    pub fn links(&self) -> Vec<Arc<Link>> {
        self.core.stream.lock().links.clone()
    }

    /// INFO stats' synchronisation counters (`sync_full`,
    /// `sync_partial_ok`, `sync_partial_err`).
    pub fn info_stats(&self) -> String {
        format!(
            "sync_full:{}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\n",
            self.core.sync_full.load(Ordering::Relaxed),
            self.core.sync_partial_ok.load(Ordering::Relaxed),
            self.core.sync_partial_err.load(Ordering::Relaxed),
        )
    }

    /// Keeps what a connection said with REPLCONF until its PSYNC.
    pub fn handshake(&self, client: u64, update: impl FnOnce(&mut Handshake)) {
        let mut all = self.core.handshakes.lock();
        if all.len() > 10_000 {
            all.clear();
        }
        update(all.entry(client).or_default());
    }

    /// The handshake of a connection that sent PSYNC or SYNC.
    pub fn take_handshake(&self, client: u64) -> Handshake {
        self.core
            .handshakes
            .lock()
            .remove(&client)
            .unwrap_or_default()
    }

    /// Whether the client `id` is a replica.
    pub fn is_replica(&self, id: u64) -> bool {
        self.core
            .stream
            .lock()
            .links
            .iter()
            .any(|l| l.info.id == id)
    }
}

impl ReplCore {
    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.stream
            .lock()
            .backlog
            .as_ref()
            .map_or(0, Backlog::offset)
    }

    /// Appends `commands`, which need no database (`PING`, `REPLCONF`,
    /// a transaction's end), to the stream: backlog and every replica.
    pub fn feed(&self, commands: &[Args]) {
        self.stream.lock().feed(None, commands);
    }

    /// Appends `commands`, run in database `db`, to the stream, after a
    /// `SELECT db` when the stream has another one selected.
    pub fn feed_in(&self, db: u32, commands: &[Args]) {
        self.stream.lock().feed(Some(db), commands);
    }

    /// Appends what a group held back once it committed (see
    /// [`crate::held_feed`]).
    pub(crate) fn feed_held(&self, held: Held) {
        if !held.commands.is_empty() {
            self.feed_in(held.db, &held.commands);
        }
    }

    /// Sends `PING` when the stream has been silent for
    /// `repl-ping-replica-period` ([`PING_PERIOD`] by default), so
    /// replicas see their master alive.
    pub fn ping_if_idle(&self) {
        let period = Duration::from_secs(self.ping_period.load(Ordering::SeqCst));
        let mut s = self.stream.lock();
        if s.backlog.is_some() && s.last_feed.elapsed() >= period {
            s.feed(None, &[vec![b"PING".to_vec()]]);
        }
    }

    /// Asks every replica for an acknowledgement (`REPLCONF GETACK *`).
    pub fn request_acks(&self) {
        self.feed(&[vec![
            b"REPLCONF".to_vec(),
            b"GETACK".to_vec(),
            b"*".to_vec(),
        ]]);
    }

    pub(crate) fn remove_link_of(&self, client: u64) {
        self.stream.lock().links.retain(|l| l.info.id != client);
    }

    /// Counts replicas whose acknowledged offset reached `offset`.
    pub fn acked_at_least(&self, offset: u64) -> usize {
        self.stream
            .lock()
            .links
            .iter()
            .filter(|l| l.ack.load(Ordering::SeqCst) >= offset)
            .count()
    }
}

impl Stream {
    /// Appends `commands` (run in database `db`, if they need one).
    pub(crate) fn feed(&mut self, db: Option<u32>, commands: &[Args]) {
        let Some(backlog) = self.backlog.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        if let Some(db) = db.filter(|db| self.selected != Some(*db)) {
            propagate::encode(&[b"SELECT".as_slice(), db.to_string().as_bytes()], &mut out);
            self.selected = Some(db);
        }
        if self.multi == Multi::Pending {
            propagate::encode(&[b"MULTI".as_slice()], &mut out);
            self.multi = Multi::Open;
        }
        for c in commands {
            propagate::encode(c, &mut out);
        }
        backlog.push(&out);
        let bytes = Bytes::from(out);
        for link in &self.links {
            link.push(&bytes);
        }
        self.last_feed = Instant::now();
    }
}
