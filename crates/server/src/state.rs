//! What every connection shares.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::clients::Clients;
use crate::command_stats::CommandStats;
use crate::config::ServerConfig;
use crate::engines::EngineSlot;
use crate::error_stats::ErrorStats;
use crate::persistence::Saves;
use crate::settings::Settings;
use crate::waiters::Waiters;
use crate::watch::WatchTable;

/// The server's shared state.
pub struct Shared {
    /// How the server was started.
    pub config: ServerConfig,
    /// Kvrocks' namespace tokens, as started and as NAMESPACE changed
    /// them (`config.namespace_tokens` is how the server started).
    pub namespace_tokens: crate::namespace_tokens::NamespaceTokens,
    /// The engine (shared with background saves).
    pub engines: Arc<EngineSlot>,
    /// CONFIG settings.
    pub settings: Mutex<Settings>,
    /// `proto-max-bulk-len`, read by every connection's parser.
    pub max_bulk_len: AtomicI64,
    /// Connected clients.
    pub clients: Clients,
    /// WATCH counters.
    pub watch: WatchTable,
    /// Where keyed commands wait for each other ([`crate::admission`]).
    pub admission: crate::admission::Admission,
    /// Blocked clients.
    pub waiters: Waiters,
    /// INFO commandstats and `total_commands_processed`.
    pub command_stats: CommandStats,
    /// CLIENT PAUSE.
    pub client_pause: crate::client_pause::ClientPause,
    /// SLOWLOG's entries and settings.
    pub slowlog: crate::slowlog::SlowLog,
    /// The clients in MONITOR mode.
    pub monitors: crate::monitors::Monitors,
    /// Pub/Sub's channels, patterns and subscribers.
    pub pubsub: Arc<crate::pubsub::PubSub>,
    /// `notify-keyspace-events`, and where the engines' events go.
    pub keyspace_events: Arc<crate::keyspace_events::KeyspaceEvents>,
    /// INFO errorstats and `total_error_replies`.
    pub error_stats: ErrorStats,
    /// SAVE, BGSAVE, LASTSAVE (shared with background saves).
    pub saves: Arc<Saves>,
    /// INFO's `run_id` and `master_replid`: 40 random hex digits each,
    /// new at every start.
    pub run_id: String,
    /// See [`Shared::run_id`].
    pub replid: String,
    /// Whether something was written since the WAL was last synced.
    pub dirty: AtomicBool,
    /// `--sync always`: the syncs connections wait for before replying.
    pub wal_sync: crate::wal_sync::WalSync,
    /// When the server started.
    pub started: Instant,
    /// Kvrocks' cluster model: topology, routing, slot moves.
    pub cluster: crate::cluster::cluster_state::Cluster,
    /// Set to `true` when the server shuts down.
    pub shutdown: watch::Sender<bool>,
    /// Following a master (REPLICAOF): [`crate::replica`].
    pub replica: crate::replica::replica_state::Replica,
    /// The replication master: backlog, replicas, stream.
    pub repl: crate::master::replication_state::Replication,
    /// EVAL's script cache, function libraries, the running script.
    pub scripts: crate::scripts::Scripts,
    /// The state itself, for the tasks and threads that outlive a
    /// command (REPLICAOF's link task, a slot migration): set once at
    /// start by [`Shared::attach`].
    pub(crate) handle: OnceLock<Weak<Shared>>,
}

impl Shared {
    /// Gives the state its own handle ([`Shared::handle`]).
    pub fn attach(self: &Arc<Self>) {
        let _ = self.handle.set(Arc::downgrade(self));
    }

    /// The state, while the server runs.
    pub fn handle(&self) -> Option<Arc<Shared>> {
        self.handle.get()?.upgrade()
    }

    /// Whether the server replicates its namespace tokens (Kvrocks'
    /// `repl-namespace-enabled yes` on a store with tokens:
    /// [`crate::namespace_replication`]).
    pub fn replicates_namespace_tokens(&self) -> bool {
        self.config.namespaces == crate::config::NamespaceMode::Tokens
            && self
                .settings
                .lock()
                .value(crate::settings::REPL_NAMESPACE_ENABLED)
                == Some("yes")
    }

    /// The default user's password (on Kvrocks' namespaces, the default
    /// namespace's token): `requirepass` as the server started or CONFIG
    /// SET last changed it, as Redis takes it at once; `None` when empty.
    pub fn requirepass(&self) -> Option<String> {
        let settings = self.settings.lock();
        let pass = settings.value("requirepass").unwrap_or_default();
        (!pass.is_empty()).then(|| pass.to_string())
    }

    /// Starts the shutdown: connections finish what they run and close.
    pub fn begin_shutdown(&self) {
        self.scripts.control().abort();
        self.shutdown.send_replace(true);
    }

    /// Whether the shutdown has begun.
    pub fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Records a write that changed something: the WAL has something to
    /// sync, and one more change is unsaved.
    pub fn note_write(&self) {
        self.dirty.store(true, Ordering::Relaxed);
        self.saves.note_change();
    }
}
