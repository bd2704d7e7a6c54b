//! Accepting clients, the WAL sync task, and the graceful shutdown.

use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::clients::Clients;
use crate::command_stats::CommandStats;
use crate::config::{ServerConfig, SyncPolicy};
use crate::engines::{EngineSlot, Opener};
use crate::error::ServerError;
use crate::error_stats::ErrorStats;
use crate::persistence::Saves;
use crate::settings::Settings;
use crate::state::Shared;
use crate::waiters::Waiters;
use crate::watch::WatchTable;

/// A bound server, not yet serving.
pub struct Server {
    shared: Arc<Shared>,
    listener: TcpListener,
}

/// Kvrocks' `Config::finish` on the namespace tokens a server starts
/// with: they need a password (a token is a password of its own), and a
/// cluster node has none (its slots move keys of the default namespace
/// only, so a namespace's keys would stay behind).
fn refused_tokens(config: &ServerConfig, cluster: bool) -> Option<&'static str> {
    if config.namespace_tokens.is_empty() {
        None
    } else if config.requirepass.is_none() {
        Some("requirepass empty wasn't allowed while the namespace exists")
    } else if cluster {
        Some("enabled cluster mode wasn't allowed while the namespace exists")
    } else {
        None
    }
}

impl Server {
    /// Opens the engine and binds the listening socket.
    pub async fn bind(config: ServerConfig, opener: Opener) -> Result<Server, ServerError> {
        let pubsub = Arc::new(crate::pubsub::PubSub::default());
        let keyspace_events = crate::keyspace_events::KeyspaceEvents::new(pubsub.clone());
        let sinks = {
            let events = keyspace_events.clone();
            let by_index = config.namespaces == crate::config::NamespaceMode::DbIndex;
            Box::new(move |namespace: &str| {
                // The database a client of the namespace has selected.
                let db = namespace
                    .parse::<u32>()
                    .ok()
                    .filter(|db| by_index && *db < 16);
                events.sink(db.unwrap_or(0))
            })
        };
        let engines = EngineSlot::open(opener, sinks, &config.default_namespace)?;
        let listener = TcpListener::bind((config.bind.as_str(), config.port)).await?;
        let mut settings = Settings::new(
            listener.local_addr()?.port(),
            &config.bind,
            &config.dir,
            config.sync.name(),
            config.requirepass.as_deref().unwrap_or(""),
        );
        let given: Vec<(Vec<u8>, Vec<u8>)> = config
            .settings
            .iter()
            .map(|(n, v)| (n.clone().into_bytes(), v.clone().into_bytes()))
            .collect();
        settings.set(&given).map_err(std::io::Error::other)?;
        keyspace_events.configure(
            settings
                .value(crate::settings::KEYSPACE_EVENTS)
                .unwrap_or(""),
        );
        let slowlog = crate::slowlog::SlowLog::default();
        settings.configure_slowlog(&slowlog);
        let max_bulk_len = AtomicI64::new(settings.max_bulk_len());
        let (shutdown, _) = watch::channel(false);
        let command_stats = CommandStats::new(
            crate::commands::registry::REGISTRY
                .iter()
                .map(|spec| spec.name),
        );
        let cluster =
            crate::cluster::Cluster::for_server(&engines, &config, listener.local_addr()?.port())?;
        if let Some(why) = refused_tokens(&config, cluster.enabled()) {
            return Err(std::io::Error::other(why).into());
        }
        let replid = random_hex40();
        let scripts = crate::scripting::Scripts::new(&config.dir);
        crate::scripting::apply_threshold(&settings, &scripts.control);
        crate::commands::install();
        let namespace_tokens =
            crate::namespace_tokens::NamespaceTokens::new(config.namespace_tokens.clone());
        let shared = Arc::new(Shared {
            config,
            namespace_tokens,
            engines: Arc::new(engines),
            settings: Mutex::new(settings),
            max_bulk_len,
            clients: Clients::default(),
            watch: WatchTable::default(),
            admission: Default::default(),
            waiters: Waiters::default(),
            command_stats,
            slowlog,
            client_pause: Default::default(),
            error_stats: ErrorStats::default(),
            monitors: Default::default(),
            pubsub,
            keyspace_events,
            saves: Arc::new(Saves::default()),
            run_id: random_hex40(),
            replica: crate::replica::Replica::new(&replid),
            replid,
            dirty: AtomicBool::new(false),
            wal_sync: Default::default(),
            started: Instant::now(),
            cluster,
            shutdown,
            repl: Default::default(),
            scripts,
            handle: std::sync::OnceLock::new(),
        });
        shared.attach();
        // Kvrocks' start: the tokens of the store join the file's, and a
        // store holding tokens needs namespace replication on.
        crate::namespace_replication::load_and_rewrite(&shared)
            .map_err(|e| std::io::Error::other(e.strip_prefix("ERR ").unwrap_or(&e).to_string()))?;
        Ok(Server { shared, listener })
    }

    /// The state its connections will share.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until SHUTDOWN, SIGTERM or SIGINT: then refuses new
    /// clients, lets every connection finish the requests it is running,
    /// flushes the store and closes it.
    pub async fn serve(self) -> Result<(), ServerError> {
        self.serve_until(wait_for_signal()).await
    }

    /// Serves until SHUTDOWN or until `stop` completes, then shuts down
    /// as [`Server::serve`] does. For a caller that receives the
    /// process' signals itself (`redcodec serve` waits for them on a
    /// thread of its own, so that none is lost however early it comes).
    pub async fn serve_until(
        self,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let Server { shared, listener } = self;
        let mut shutdown = shared.shutdown.subscribe();
        crate::master::restart::restore(&shared);
        crate::replica::start(&shared);
        let stopper = shared.clone();
        let signals = tokio::spawn(async move {
            stop.await;
            stopper.begin_shutdown();
        });
        let syncer = match shared.config.sync {
            SyncPolicy::Everysec => Some(tokio::spawn(sync_every_second(shared.clone()))),
            SyncPolicy::Always => Some(tokio::spawn(sync_always(shared.clone()))),
            SyncPolicy::No => None,
        };
        let expirer = tokio::spawn(expire_watched_keys(shared.clone()));
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, addr)) = accepted else { continue };
                    let laddr = stream.local_addr().unwrap_or(addr);
                    let info = shared.clients.add(addr, laddr);
                    connections.spawn(crate::client_loop::serve(shared.clone(), stream, info));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                _ = shutdown.changed() => break,
            }
        }
        drop(listener);
        while connections.join_next().await.is_some() {}
        crate::replica::finish(&shared).await;
        crate::master::restart::save_at_stop(&shared);
        signals.abort();
        expirer.abort();
        if let Some(task) = syncer {
            task.abort();
        }
        let closing = shared.clone();
        tokio::task::spawn_blocking(move || closing.engines.close())
            .await
            .map_err(std::io::Error::other)??;
        Ok(())
    }
}

/// Binds and serves until shut down (see [`Server::serve`]); `ready`
/// gets the bound address once clients can connect.
pub async fn run(
    config: ServerConfig,
    opener: Opener,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let server = Server::bind(config, opener).await?;
    ready(server.local_addr()?);
    server.serve().await
}

/// Binds and serves until SHUTDOWN or until `stop` completes (see
/// [`Server::serve_until`]); `ready` gets the bound address once clients
/// can connect.
pub async fn run_until(
    config: ServerConfig,
    opener: Opener,
    ready: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let server = Server::bind(config, opener).await?;
    ready(server.local_addr()?);
    server.serve_until(stop).await
}

/// Completes at SIGTERM or SIGINT, through tokio's signal handling
/// (never, if the handlers cannot be installed).
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// `--sync always`: the syncs connections wait for ([`crate::wal_sync`]).
async fn sync_always(shared: Arc<Shared>) {
    let engines = shared.engines.clone();
    shared
        .wal_sync
        .syncs(move || engines.sync_wal().map_err(|e| e.to_string()))
        .await;
}

/// `--sync everysec`: the WAL reaches the disk once a second when
/// something was written.
async fn sync_every_second(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        if shared.dirty.swap(false, Ordering::Relaxed) {
            let s = shared.clone();
            let _ = tokio::task::spawn_blocking(move || s.engines.sync_wal()).await;
        }
    }
}

/// Redis' active expiry for the keys whose `expired` event is awaited:
/// ten times a second (Redis' `hz`), the keys watched since they were
/// written with an expiry while `notify-keyspace-events` publishes
/// `expired` are deleted once due, and announced
/// ([`redcodec_engine::EngineCore::expire_watched_keys`]).
async fn expire_watched_keys(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
        if !shared.keyspace_events.publishes_expired() {
            continue;
        }
        // On a blocking thread: the engine may be taken (a running script,
        // a namespace being opened), and its keys' locks too.
        let s = shared.clone();
        let pass = tokio::task::spawn_blocking(move || {
            let engine = s.engines.current().map_err(|e| e.to_string())?;
            if !engine.watches_expiries() {
                return Ok(0);
            }
            engine.expire_watched_keys().map_err(|e| e.to_string())
        });
        match pass.await {
            Ok(Ok(0)) => {}
            Ok(Ok(_)) => shared.dirty.store(true, Ordering::Relaxed),
            Ok(Err(e)) => eprintln!("redcodec serve: expiring watched keys: {e}"),
            Err(_) => {}
        }
    }
}

/// 40 random hex digits (160 bits), as Redis' run and replication ids:
/// from `/dev/urandom`, else from the standard library's randomly seeded
/// hasher.
fn random_hex40() -> String {
    let mut bytes = [0u8; 20];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let state = std::collections::hash_map::RandomState::new();
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = state.build_hasher();
            h.write_usize(i);
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    hex::encode(bytes)
}
