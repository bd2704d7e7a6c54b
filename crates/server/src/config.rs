//! How the server is started.

use std::fmt;
use std::str::FromStr;

/// When the write-ahead log reaches the disk, as Redis' `appendfsync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Sync the WAL before replying to any batch of requests that wrote.
    Always,
    /// Sync the WAL once a second when something was written.
    Everysec,
    /// Leave it to RocksDB and the operating system.
    No,
}

impl SyncPolicy {
    /// The name `--sync` and `CONFIG GET appendfsync` use.
    pub fn name(self) -> &'static str {
        match self {
            SyncPolicy::Always => "always",
            SyncPolicy::Everysec => "everysec",
            SyncPolicy::No => "no",
        }
    }
}

impl fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SyncPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "always" => Ok(SyncPolicy::Always),
            "everysec" => Ok(SyncPolicy::Everysec),
            "no" => Ok(SyncPolicy::No),
            other => Err(format!(
                "unknown sync policy '{other}': always, everysec or no"
            )),
        }
    }
}

/// How namespaces are chosen on a connection, as the real system of the
/// format exposes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamespaceMode {
    /// One keyspace: `SELECT 0` only (Pika's formats).
    None,
    /// Kvrocks: `AUTH <token>` selects the namespace the token belongs to;
    /// `SELECT` answers OK and changes nothing.
    Tokens,
    /// Ardb: `SELECT n` works in the namespace `n`.
    DbIndex,
}

/// Everything `redcodec serve` is started with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to listen on.
    pub bind: String,
    /// TCP port (0: any free port).
    pub port: u16,
    /// The password clients must AUTH with, if any.
    pub requirepass: Option<String>,
    /// WAL sync policy.
    pub sync: SyncPolicy,
    /// How connections choose namespaces.
    pub namespaces: NamespaceMode,
    /// The namespace a new connection works in.
    pub default_namespace: String,
    /// Kvrocks namespace tokens: `(namespace, token)`.
    pub namespace_tokens: Vec<(String, String)>,
    /// The store directory (`CONFIG GET dir`).
    pub dir: String,
    /// The process' global allocator, as INFO's `mem_allocator` names it
    /// (the binary chooses it: `mimalloc` for `redcodec`, `libc` for the
    /// system's).
    pub allocator: &'static str,
    /// `--replicaof`, `--masterauth`: [`crate::replica`].
    pub replica: crate::replica::replica_options::ReplicaOptions,
    /// Settings `CONFIG SET` takes, set at start (`serve --config-set`).
    pub settings: Vec<(String, String)>,
    /// `--db-name`: [`crate::master::kvrocks`].
    pub kvrocks_master: crate::master::kvrocks::db_name::Options,
    /// The configuration file the server was started with (`serve
    /// --config`), which CONFIG REWRITE rewrites.
    pub config_file: Option<std::path::PathBuf>,
}

impl ServerConfig {
    /// A server on `127.0.0.1:6379` over the store in `dir`, as
    /// `redcodec serve` starts without options: no password, `everysec`
    /// sync, one keyspace, the system's allocator, no master. Change the
    /// fields you need with struct update syntax:
    /// `ServerConfig { port: 0, ..ServerConfig::new(dir) }`.
    pub fn new(dir: impl Into<String>) -> ServerConfig {
        ServerConfig {
            bind: "127.0.0.1".into(),
            port: 6379,
            requirepass: None,
            sync: SyncPolicy::Everysec,
            namespaces: NamespaceMode::None,
            default_namespace: String::new(),
            namespace_tokens: Vec::new(),
            dir: dir.into(),
            allocator: "libc",
            replica: Default::default(),
            settings: Vec::new(),
            kvrocks_master: Default::default(),
            config_file: None,
        }
    }
}
