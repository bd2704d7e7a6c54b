//! The options every command that opens a store shares.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use redcodec_engine::namespaces::namespaces;
use redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES;
use redcodec_engine::{Clock, Compat, Engine, EngineOptions, ManualClock, OpenMode, SystemClock};
use redcodec_formats::{AnyCodec, Format, FormatOptions};

use crate::error::CliError;

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
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_BLOCK_CACHE_BYTES >> 20)]
    pub block_cache_mb: usize,
}

impl StoreArgs {
    /// The codec these options name.
    pub fn codec(&self) -> Result<AnyCodec, CliError> {
        let format: Format = self.format.parse()?;
        let options = FormatOptions {
            namespace: self.namespace.as_ref().map(|n| n.as_bytes().to_vec()),
            cluster: self.cluster,
        };
        Ok(format.codec(&options)?)
    }

    /// These options once per namespace the store holds (read-only), for
    /// commands that cover a whole store: just these options when
    /// `--namespace` is given, when the format has no namespaces, or when
    /// the store holds none yet.
    pub fn each_namespace(&self) -> Result<Vec<StoreArgs>, CliError> {
        if self.namespace.is_some() {
            return Ok(vec![self.clone()]);
        }
        let engine = self.open(OpenMode::ReadOnly, None)?;
        let found = namespaces(engine.codec(), engine.store())
            .map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
        if found.is_empty() {
            return Ok(vec![self.clone()]);
        }
        Ok(found
            .into_iter()
            .map(|ns| StoreArgs {
                namespace: Some(String::from_utf8_lossy(&ns.name).into_owned()),
                ..self.clone()
            })
            .collect())
    }

    /// Opens the engine: read-write (creating the store or not) or
    /// read-only; written for the release `compat` names, if any.
    pub fn open(
        &self,
        mode: OpenMode,
        compat: Option<Compat>,
    ) -> Result<Engine<AnyCodec>, CliError> {
        let codec = self.codec()?;
        let clock: Arc<dyn Clock> = match self.fixed_clock {
            Some(ms) => Arc::new(ManualClock::at_ms(ms)),
            None => Arc::new(SystemClock),
        };
        let options = EngineOptions {
            clock,
            mode,
            compat,
            block_cache_bytes: self.block_cache_mb << 20,
        };
        Ok(Engine::open(codec, &self.dir, options)?)
    }
}
