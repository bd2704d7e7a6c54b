//! A store named the way the command line names one: a format by name, a
//! directory, a namespace, cluster mode and a clock ([`StoreSpec`]); opened
//! as an engine of that format, once or once per namespace it holds.

use std::path::PathBuf;
use std::sync::Arc;

use redcodec_engine::internals::namespaces::namespaces;
use redcodec_engine::{
    Clock, Compat, Engine, EngineError, EngineOptions, ManualClock, OpenMode, SystemClock,
};
use redcodec_formats::{AnyCodec, Format, FormatError, FormatOptions};

/// Which store, in which format, on which clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreSpec {
    /// Format name: kvrocks, blackwidow, nemo, ardb or floyd.
    pub format: String,
    /// Store directory.
    pub dir: PathBuf,
    /// Time frozen at this unix time in milliseconds (version counters
    /// then start at 0, so the bytes written are reproducible).
    pub fixed_clock: Option<u64>,
    /// Namespace, for formats that have them (kvrocks: the key prefix,
    /// default `__namespace`; ardb: the column family, default 0).
    pub namespace: Option<String>,
    /// Cluster mode, for formats that have it (kvrocks: a slot in every
    /// key).
    pub cluster: bool,
    /// Bytes of the store's block cache (default:
    /// [`redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES`]).
    pub block_cache_bytes: usize,
    /// Bytes of the store's read cache, when it is opened for writing
    /// (0: none).
    pub read_cache_bytes: usize,
}

/// Why a store could not be named or opened.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A format name or its options.
    #[error("{0}")]
    Format(#[from] FormatError),
    /// The store could not be opened.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// The namespaces of the store could not be listed.
    #[error("{0}")]
    Namespaces(String),
}

impl From<redcodec_engine::store::StoreError> for SpecError {
    fn from(e: redcodec_engine::store::StoreError) -> Self {
        SpecError::Engine(e.into())
    }
}

impl StoreSpec {
    /// The codec this spec names.
    pub fn codec(&self) -> Result<AnyCodec, SpecError> {
        let format: Format = self.format.parse()?;
        let options = FormatOptions {
            namespace: self.namespace.as_ref().map(|n| n.as_bytes().to_vec()),
            cluster: self.cluster,
        };
        Ok(format.codec(&options)?)
    }

    /// This spec in namespace `namespace`.
    pub fn in_namespace(&self, namespace: impl Into<String>) -> StoreSpec {
        StoreSpec {
            namespace: Some(namespace.into()),
            ..self.clone()
        }
    }

    /// This spec once per namespace the store holds (read-only), for
    /// commands that cover a whole store: just this spec when it names a
    /// namespace, when the format has no namespaces, or when the store
    /// holds none yet.
    pub fn each_namespace(&self) -> Result<Vec<StoreSpec>, SpecError> {
        if self.namespace.is_some() {
            return Ok(vec![self.clone()]);
        }
        let engine = self.open(OpenMode::ReadOnly, None)?;
        let found = namespaces(engine.codec(), engine.store())
            .map_err(|e| SpecError::Namespaces(e.to_string()))?;
        if found.is_empty() {
            return Ok(vec![self.clone()]);
        }
        Ok(found
            .into_iter()
            .map(|ns| self.in_namespace(String::from_utf8_lossy(&ns.name)))
            .collect())
    }

    /// Opens the engine: read-write (creating the store or not) or
    /// read-only; written for the release `compat` names, if any.
    pub fn open(
        &self,
        mode: OpenMode,
        compat: Option<Compat>,
    ) -> Result<Engine<AnyCodec>, SpecError> {
        let codec = self.codec()?;
        let clock: Arc<dyn Clock> = match self.fixed_clock {
            Some(ms) => Arc::new(ManualClock::at_ms(ms)),
            None => Arc::new(SystemClock),
        };
        let options = EngineOptions {
            clock,
            mode,
            compat,
            block_cache_bytes: self.block_cache_bytes,
            read_cache_bytes: self.read_cache_bytes,
            direct_reads: false,
        };
        Ok(Engine::open(codec, &self.dir, options)?)
    }
}
