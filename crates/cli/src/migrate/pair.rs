//! The two stores (or a store and a server) of `redcodec migrate` and
//! `redcodec verify`, as the command line names them, and how they open.

use std::path::{Path, PathBuf};

use clap::Args;
use redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES;
use redcodec_engine::{Compat, Engine, OpenMode};
use redcodec_formats::AnyCodec;

use crate::error::{fail, CliError};
use crate::store_args::{parse_mib, StoreArgs};

/// The two stores of a migration or a verification.
#[derive(Args, Debug, Clone)]
pub struct PairArgs {
    /// Format of the source store, or a server: redis://HOST:PORT[/DB].
    #[arg(long, value_name = "FMT|URL")]
    pub from: String,
    /// Source store directory (must hold a store of --from); not with a
    /// server.
    #[arg(long, value_name = "DIR")]
    pub src: Option<PathBuf>,
    /// Format of the destination store, or a server: redis://HOST:PORT[/DB],
    /// or a cluster: redis-cluster://HOST:PORT (any node).
    #[arg(long, value_name = "FMT|URL")]
    pub to: String,
    /// Destination store directory; not with a server.
    #[arg(long, value_name = "DIR")]
    pub dst: Option<PathBuf>,
    /// Namespace of the source, for formats that have them.
    #[arg(long, value_name = "NS")]
    pub src_namespace: Option<String>,
    /// Namespace of the destination, for formats that have them.
    #[arg(long, value_name = "NS")]
    pub dst_namespace: Option<String>,
    /// Every namespace of the source (Kvrocks, Ardb), each into the
    /// destination namespace of the same name.
    #[arg(long, conflicts_with_all = ["src_namespace", "dst_namespace"])]
    pub all_namespaces: bool,
    /// The source is a Kvrocks store in cluster mode (a slot in every key).
    #[arg(long)]
    pub src_cluster: bool,
    /// Write the destination in Kvrocks' cluster mode.
    #[arg(long)]
    pub dst_cluster: bool,
    /// Freeze time at this unix time in milliseconds (expiry decisions and
    /// the destination's versions are then reproducible).
    #[arg(long, value_name = "MS")]
    pub fixed_clock: Option<u64>,
    /// Block cache of each store in MiB (see `analyze --help`).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_BLOCK_CACHE_BYTES >> 20, value_parser = parse_mib)]
    pub block_cache_mb: usize,
}

impl PairArgs {
    /// The source store's directory (required for a store).
    pub fn src_dir(&self) -> Result<&Path, CliError> {
        self.src
            .as_deref()
            .ok_or_else(|| fail("--src DIR is required: the source store's directory"))
    }

    /// The destination store's directory (required for a store).
    pub fn dst_dir(&self) -> Result<&Path, CliError> {
        self.dst
            .as_deref()
            .ok_or_else(|| fail("--dst DIR is required: the destination store's directory"))
    }

    /// The store args of one side: `format` in `dir`.
    pub fn store(
        &self,
        format: &str,
        dir: &Path,
        namespace: Option<&String>,
        cluster: bool,
    ) -> StoreArgs {
        StoreArgs {
            format: format.to_string(),
            dir: dir.to_path_buf(),
            fixed_clock: self.fixed_clock,
            namespace: namespace.cloned(),
            cluster,
            block_cache_mb: self.block_cache_mb,
            read_cache_mb: 0,
        }
    }

    /// Opens the source read-only: it must exist in the named format, and
    /// none of its files changes.
    pub fn open_source(&self) -> Result<Engine<AnyCodec>, CliError> {
        self.store(
            &self.from,
            self.src_dir()?,
            self.src_namespace.as_ref(),
            self.src_cluster,
        )
        .open(OpenMode::ReadOnly, None)
    }

    /// Opens the destination.
    pub fn open_destination(
        &self,
        mode: OpenMode,
        compat: Option<Compat>,
    ) -> Result<Engine<AnyCodec>, CliError> {
        self.store(
            &self.to,
            self.dst_dir()?,
            self.dst_namespace.as_ref(),
            self.dst_cluster,
        )
        .open(mode, compat)
    }
}
