//! The options every command that opens a store shares: clap's form of
//! [`StoreSpec`], which names and opens the store.

use std::path::PathBuf;

use clap::Args;
use redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES;
use redcodec_engine::{Compat, Engine, OpenMode};
use redcodec_formats::AnyCodec;
use redcodec_migrate::store_spec::StoreSpec;

use crate::error::CliError;

/// clap's parser of a size in MiB: a whole number whose bytes this machine
/// can address (a mistyped size is refused, not wrapped to a small one).
pub fn parse_mib(s: &str) -> Result<usize, String> {
    let most = usize::MAX >> 20;
    match s.parse::<u128>() {
        Ok(mib) if mib <= most as u128 => Ok(mib as usize),
        Ok(mib) => Err(format!(
            "{mib} MiB is more bytes than this machine can address (at most {most} MiB)"
        )),
        Err(_) => Err(format!("'{s}' is not a whole number of MiB")),
    }
}

/// Which store, in which format, on which clock.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// Format name: kvrocks, blackwidow, nemo, ardb or floyd.
    #[arg(long)]
    pub format: String,
    /// Store directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// Freeze time at this unix time in milliseconds; version counters start
    /// at 0, so the bytes written are reproducible.
    #[arg(long, value_name = "MS")]
    pub fixed_clock: Option<u64>,
    /// Namespace, for formats that have them (kvrocks: the key prefix,
    /// default __namespace; ardb: the column family, default 0).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Cluster mode, for formats that have it (kvrocks: slot in every key).
    #[arg(long)]
    pub cluster: bool,
    /// Block cache of the store in MiB. Point reads spread
    /// over a large store whose tables hold whole (not partitioned) index
    /// and filter blocks — Pika's, Ardb's — may need more.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_BLOCK_CACHE_BYTES >> 20, value_parser = parse_mib)]
    pub block_cache_mb: usize,
    /// Read cache of a store opened for writing, in MiB: the records point
    /// reads found (or found absent), in front of RocksDB's memtables and
    /// tables. It pays where reads repeat over a set of keys that fits it
    /// (GET-heavy loads); writes over a larger set run slower with it
    /// (docs/src/performance.md). 0, the default: none.
    #[arg(long, value_name = "MIB", default_value_t = 0, value_parser = parse_mib)]
    pub read_cache_mb: usize,
}

impl StoreArgs {
    /// The store these options name.
    pub fn spec(&self) -> StoreSpec {
        StoreSpec {
            format: self.format.clone(),
            dir: self.dir.clone(),
            fixed_clock: self.fixed_clock,
            namespace: self.namespace.clone(),
            cluster: self.cluster,
            block_cache_bytes: self.block_cache_mb << 20,
            read_cache_bytes: self.read_cache_mb << 20,
        }
    }

    /// The codec these options name.
    pub fn codec(&self) -> Result<AnyCodec, CliError> {
        Ok(self.spec().codec()?)
    }

    /// These options once per namespace the store holds
    /// ([`StoreSpec::each_namespace`]).
    pub fn each_namespace(&self) -> Result<Vec<StoreArgs>, CliError> {
        Ok(self
            .spec()
            .each_namespace()?
            .into_iter()
            .map(|spec| StoreArgs {
                namespace: spec.namespace,
                ..self.clone()
            })
            .collect())
    }

    /// Opens the engine ([`StoreSpec::open`]).
    pub fn open(
        &self,
        mode: OpenMode,
        compat: Option<Compat>,
    ) -> Result<Engine<AnyCodec>, CliError> {
        Ok(self.spec().open(mode, compat)?)
    }
}
