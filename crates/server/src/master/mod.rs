//! `redcodec serve` as a replication master that redis-server replicas
//! follow: `REPLCONF`, `PSYNC`/`SYNC`, full resynchronisation (an RDB
//! snapshot, then the stream), partial resynchronisation from the
//! backlog (`+CONTINUE`), `WAIT`, and INFO replication's master fields.
//!
//! **The stream.** The engine calls an observer after every command,
//! while the command still holds its keys' locks
//! ([`redcodec_engine::observe`]). A write that changed something is
//! turned into what Redis 7 propagates ([`propagate`]), preceded by a
//! `DEL` of each key it met expired (a replica still holds those: it
//! never expires keys itself), encoded as RESP and appended, under one
//! mutex, to the backlog and to the output queue of every replica. Two
//! commands on one key hold its lock in turn, so they are appended in
//! the order they applied; commands on different keys commute.
//!
//! **Full resynchronisation.** The snapshot takes every key lock
//! ([`redcodec_engine::EngineCore::lock_all`]): no command runs, none is
//! half applied and unappended. Under it, the stream's offset is read, the
//! replica's queue registered, and the store checkpointed (RocksDB hard
//! links and a flush: [`snapshot::Checkpoint`]); then the locks go, and
//! the keyspace is written as an RDB file from the checkpoint while
//! commands run. Every write is therefore either in the snapshot (applied
//! before) or in the replica's queue (after), never both, never neither.
//! Commands wait only for the checkpoint, whatever the store's size (see
//! `docs/src/replication-master.md` for figures).
//!
//! Only the default namespace is replicated (as database 0).

pub mod backlog;
pub mod backlog_size;
pub mod kvrocks;
pub mod propagate;
pub mod replica_link;
pub mod replication_commands;
pub mod snapshot;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use redcodec_engine::observe::CommandEvent;
use redcodec_engine::EngineCore;
use redcodec_formats::AnyCodec;
use tokio::sync::Notify;

use crate::clients::ClientInfo;
use crate::state::Shared;
use backlog::Backlog;
use propagate::Args;

pub use backlog_size::DEFAULT_BACKLOG_SIZE;
pub use replica_link::serve_replica;
pub use replication_commands::{check_sync, client_type, replconf, type_name, wait, wait_now};

/// The most bytes a replica's output queue may hold before the replica
/// is disconnected (Redis' `client-output-buffer-limit replica` hard
/// limit, 256 MB).
pub const QUEUE_LIMIT: usize = 256 * 1024 * 1024;

/// How long the stream may stay silent before a `PING` is sent (Redis'
/// `repl-ping-replica-period`, 10 seconds).
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
struct Queue {
    chunks: VecDeque<Bytes>,
    bytes: usize,
    overflowed: bool,
}

/// One connected replica.
pub struct Link {
    /// The connection's registry entry (CLIENT KILL closes it).
    pub info: Arc<ClientInfo>,
    /// The address INFO shows (`REPLCONF ip-address`, else the peer's).
    pub ip: String,
    /// The port INFO shows (`REPLCONF listening-port`).
    pub port: u16,
    queue: Mutex<Queue>,
    /// Woken when the queue grows.
    pub wake: Notify,
    state: Mutex<LinkState>,
    /// The offset the replica last acknowledged (`REPLCONF ACK`).
    pub ack: AtomicU64,
    ack_time: Mutex<Instant>,
}

impl Link {
    fn push(&self, bytes: &Bytes) {
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
enum Multi {
    Off,
    /// EXEC runs; `MULTI` goes out before its first write.
    Pending,
    /// `MULTI` went out; `EXEC` closes it.
    Open,
}

/// The stream's state, under one mutex.
struct Stream {
    backlog: Option<Backlog>,
    /// The database the stream has selected.
    selected: Option<u32>,
    multi: Multi,
    links: Vec<Arc<Link>>,
    last_feed: Instant,
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
    stream: Mutex<Stream>,
    active: AtomicBool,
    backlog_size: AtomicUsize,
    handshakes: Mutex<HashMap<u64, Handshake>>,
    /// Woken at every acknowledgement (WAIT).
    pub acked: Notify,
    sync_full: AtomicU64,
    sync_partial_ok: AtomicU64,
    sync_partial_err: AtomicU64,
}

/// The replication state of the server (see the module docs).
pub struct Replication {
    core: Arc<ReplCore>,
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
            }),
        }
    }
}

impl Replication {
    /// The state the observer shares.
    pub fn core(&self) -> &Arc<ReplCore> {
        &self.core
    }

    /// Installs the observer on `engine` when it works in the default
    /// namespace (the one replicated) and has none yet.
    pub fn attach(&self, shared: &Shared, engine: &EngineCore<AnyCodec>, namespace: &str) {
        if namespace == shared.config.default_namespace && !engine.has_observer() {
            let core = self.core.clone();
            let observer: redcodec_engine::observe::Observer<AnyCodec, _> = Arc::new(
                move |engine: &EngineCore<AnyCodec>, event: &CommandEvent<'_>| {
                    core.observe(engine, event);
                },
            );
            engine.set_observer(Some(observer));
        }
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

    fn close_transaction(&self, with: &[u8]) {
        let open = {
            let mut s = self.core.stream.lock();
            std::mem::replace(&mut s.multi, Multi::Off) == Multi::Open
        };
        if open {
            self.core.feed(&[vec![with.to_vec()]]);
        }
    }

    /// Applies `repl-backlog-size` from the settings.
    pub fn configure(&self, settings: &crate::settings::Settings) {
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

    /// The connected replicas.
    pub fn links(&self) -> Vec<Arc<Link>> {
        self.core.stream.lock().links.clone()
    }

    /// INFO replication on a master, Redis 7.0's fields in its order.
    pub fn info_replication(&self, shared: &Shared) -> String {
        let s = self.core.stream.lock();
        let (kvrocks, kvrocks_lines) = kvrocks::feed::info_lines(shared, s.links.len());
        let mut out = format!(
            "role:master\r\nconnected_slaves:{}\r\n",
            s.links.len() + kvrocks
        );
        for (i, link) in s.links.iter().enumerate() {
            let lag = link.ack_time.lock().elapsed().as_secs();
            out.push_str(&format!(
                "slave{i}:ip={},port={},state={},offset={},lag={lag}\r\n",
                link.ip,
                link.port,
                link.state.lock().name(),
                link.ack.load(Ordering::SeqCst),
            ));
        }
        out.push_str(&kvrocks_lines);
        let (offset, active, first, histlen) = match &s.backlog {
            Some(b) => (b.offset(), 1, b.first_byte_offset(), b.histlen()),
            None => (0, 0, 0, 0),
        };
        out.push_str(&format!(
            "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\nmaster_repl_offset:{offset}\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:{active}\r\nrepl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{first}\r\nrepl_backlog_histlen:{histlen}\r\n",
            shared.replid,
            "0".repeat(40),
            self.core.backlog_size.load(Ordering::SeqCst),
        ));
        out
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
    /// The engine's observer: propagates a write that changed something.
    fn observe(&self, engine: &EngineCore<AnyCodec>, event: &CommandEvent<'_>) {
        if !self.active.load(Ordering::SeqCst) {
            return;
        }
        let Some(name) = event.args.first() else {
            return;
        };
        let Some(spec) = crate::commands::registry::get(name) else {
            return;
        };
        if !spec.may_have_changed(event.reply) {
            return;
        }
        let name = spec.name;
        let mut commands: Vec<Args> = event
            .expired
            .iter()
            .map(|k| vec![b"DEL".to_vec(), k.clone()])
            .collect();
        let rewritten = propagate::rewrite(engine, name, event);
        if rewritten.is_empty() {
            return;
        }
        commands.extend(rewritten);
        if let Some(commands) = crate::group_commit::hold_feed(commands) {
            self.feed(&commands);
        }
    }

    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.stream
            .lock()
            .backlog
            .as_ref()
            .map_or(0, Backlog::offset)
    }

    /// Appends `commands` to the stream: backlog and every replica.
    pub fn feed(&self, commands: &[Args]) {
        let mut s = self.stream.lock();
        s.feed(commands);
    }

    /// Sends `PING` when the stream has been silent for [`PING_PERIOD`],
    /// so replicas see their master alive.
    pub fn ping_if_idle(&self) {
        let mut s = self.stream.lock();
        if s.backlog.is_some() && s.last_feed.elapsed() >= PING_PERIOD {
            s.feed(&[vec![b"PING".to_vec()]]);
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

    fn remove_link_of(&self, client: u64) {
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
    fn feed(&mut self, commands: &[Args]) {
        let Some(backlog) = self.backlog.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        if self.selected != Some(0) {
            propagate::encode(&[b"SELECT".as_slice(), b"0"], &mut out);
            self.selected = Some(0);
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
