//! `redcodec serve`: a Redis server on a store of any format.

use std::io::Write;

use clap::Args;
use redcodec_codec::{Codec, Namespaces};
use redcodec_engine::{Compat, EngineError, OpenMode};
use redcodec_formats::Format;
use redcodec_server::config::NamespaceMode;
use redcodec_server::{Opener, ServerConfig, SyncPolicy};

use crate::error::CliError;
use crate::store_args::StoreArgs;
use redcodec_server::signals::ShutdownSignals;

/// Options of `serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Write the store so that this release of the real system opens it
    /// (as `exec --compat`).
    #[arg(long, value_name = "SYSTEM-VERSION")]
    compat: Option<Compat>,
    /// TCP port (0: any free port, printed when ready).
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Password clients must AUTH with (Kvrocks: the admin token of the
    /// default namespace).
    #[arg(long)]
    requirepass: Option<String>,
    /// When the write-ahead log is synced, as Redis' appendfsync: always,
    /// everysec or no.
    #[arg(long, default_value = "everysec")]
    sync: SyncPolicy,
    /// Kvrocks namespace token, `NAMESPACE=TOKEN` (repeatable): `AUTH
    /// TOKEN` works in that namespace.
    #[arg(long = "namespace-token", value_name = "NAMESPACE=TOKEN")]
    namespace_tokens: Vec<String>,
    /// Follow a Redis master from the start, as a read-only replica
    /// (`REPLICAOF HOST PORT`; see the replication page of the book).
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_host_port)]
    replicaof: Option<(String, u16)>,
    /// The password to AUTH with on the master.
    #[arg(long, value_name = "PASS")]
    masterauth: Option<String>,
    /// A Kvrocks or Pika configuration file: its port, bind, dir or
    /// db-path, requirepass, masterauth, slaveof, namespace tokens and
    /// cluster-enabled become these options (given ones win); the rest is
    /// named and ignored. See the serving page of the book.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// A setting `CONFIG SET` takes, set at start, `NAME=VALUE`
    /// (repeatable; e.g. `migrate-type=raw-key-value`).
    #[arg(long = "config-set", value_name = "NAME=VALUE")]
    config_set: Vec<String>,
    /// Kvrocks replicas: [`crate::serve_kvrocks`].
    #[command(flatten)]
    kvrocks_master: crate::serve_kvrocks::KvrocksMasterArgs,
}

/// `HOST:PORT` (the last colon splits them).
fn parse_host_port(s: &str) -> Result<(String, u16), String> {
    let (host, port) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("'{s}': expected HOST:PORT"))?;
    let port = port
        .parse()
        .map_err(|_| format!("'{s}': the port is not a number from 0 to 65535"))?;
    Ok((host.to_string(), port))
}

/// Serves until SHUTDOWN, SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<(), CliError> {
    // Only Kvrocks' layout carries the slot of every key.
    if args.store.cluster && args.store.format.parse::<Format>()? != Format::Kvrocks {
        return Err(CliError::Io(std::io::Error::other(format!(
            "serve --cluster needs --format kvrocks: only Kvrocks' layout carries a slot in every key (not {})",
            args.store.format
        ))));
    }
    args.kvrocks_master.apply_retention();
    let (mut config, opener) = server_config(&args.store, args.compat)?;
    let mut tokens = Vec::new();
    for t in &args.namespace_tokens {
        let Some((ns, token)) = t.split_once('=') else {
            return Err(CliError::Io(std::io::Error::other(format!(
                "--namespace-token {t}: expected NAMESPACE=TOKEN"
            ))));
        };
        tokens.push((ns.to_string(), token.to_string()));
    }
    config.bind.clone_from(&args.bind);
    config.port = args.port;
    config.requirepass.clone_from(&args.requirepass);
    config.sync = args.sync;
    config.namespace_tokens = tokens;
    for s in &args.config_set {
        let Some((name, value)) = s.split_once('=') else {
            return Err(CliError::Io(std::io::Error::other(format!(
                "--config-set {s}: expected NAME=VALUE"
            ))));
        };
        config.settings.push((name.to_string(), value.to_string()));
    }
    config.replica = redcodec_server::replica::ReplicaOptions {
        replicaof: args.replicaof.clone(),
        masterauth: args.masterauth.clone(),
    };
    config.kvrocks_master = args.kvrocks_master.options();
    // Absolute, as Redis keeps it: CONFIG REWRITE writes this file.
    config.config_file = args
        .config
        .as_ref()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()));
    // Before any thread starts: SIGTERM and SIGINT wait for the server.
    let signals = ShutdownSignals::block()?;
    // Commands run on the runtime's threads; some recurse deeply (KEYS
    // with a pattern of 100,000 `*?`, as Redis' keyspace tests send), so
    // the threads get a large stack (reserved, touched only as used).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(256 << 20)
        .build()?;
    let format = args.store.format.clone();
    let dir = args.store.dir.display().to_string();
    let stop = signals.wait()?;
    runtime
        .block_on(redcodec_server::run_until(
            config,
            opener,
            |addr| {
                println!(
                    "redcodec serve: {format} store {dir}, ready to accept connections on {addr}"
                );
                let _ = std::io::stdout().flush();
            },
            stop,
        ))
        .map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
    println!("redcodec serve: store flushed and closed");
    Ok(())
}

/// The server's configuration for `store` with the defaults of `serve`
/// (127.0.0.1, any free port, no password, `--sync everysec`, not a
/// replica), and the opener of its namespaces.
pub(crate) fn server_config(
    store: &StoreArgs,
    compat: Option<Compat>,
) -> Result<(ServerConfig, Opener), CliError> {
    let codec = store.codec()?;
    let (mode, default_ns) = match codec.capabilities().namespaces {
        Namespaces::Prefix { .. } => (NamespaceMode::Tokens, "__namespace"),
        Namespaces::ColumnFamily => (NamespaceMode::DbIndex, "0"),
        Namespaces::None => (NamespaceMode::None, ""),
    };
    let config = ServerConfig {
        bind: "127.0.0.1".to_string(),
        port: 0,
        requirepass: None,
        sync: SyncPolicy::Everysec,
        namespaces: mode.clone(),
        default_namespace: store
            .namespace
            .clone()
            .unwrap_or_else(|| default_ns.to_string()),
        namespace_tokens: Vec::new(),
        dir: store.dir.display().to_string(),
        allocator: crate::allocator::ALLOCATOR,
        replica: redcodec_server::replica::ReplicaOptions::default(),
        settings: Vec::new(),
        kvrocks_master: Default::default(),
        config_file: None,
    };
    let store = store.clone();
    let opener: Opener = Box::new(move |ns: &str| {
        let store = StoreArgs {
            namespace: (mode != NamespaceMode::None).then(|| ns.to_string()),
            ..store.clone()
        };
        store
            .open(OpenMode::CreateIfMissing, compat)
            .map_err(|e| match e {
                CliError::Engine(e) => e,
                other => EngineError::Open(other.to_string()),
            })
    });
    Ok((config, opener))
}
