//! The [`Engine`]: a store opened in one format, the clock and version
//! source, the lock table, and the command dispatcher.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use redcodec_codec::{Capabilities, Codec};

use crate::clock::{Clock, SystemClock};
use crate::dispatch::{self, CommandSpec};
use crate::error::{CmdError, EngineError};
use crate::keyspace::Ctx;
use crate::locks::LockTable;
use crate::reply::Reply;
use crate::store::{OpenMode, Store};

/// How to open an engine.
#[derive(Clone)]
pub struct EngineOptions {
    /// Time source for expiry and versions.
    pub clock: Arc<dyn Clock>,
    /// Whether a missing store may be created.
    pub mode: OpenMode,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            clock: Arc::new(SystemClock),
            mode: OpenMode::CreateIfMissing,
        }
    }
}

impl EngineOptions {
    /// Options with a specific clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> EngineOptions {
        EngineOptions {
            clock,
            ..EngineOptions::default()
        }
    }
}

/// Redis semantics over one store in the format of `C`. Send + Sync: share
/// it between threads behind an `Arc`.
pub struct Engine<C: Codec> {
    pub(crate) codec: Arc<C>,
    pub(crate) store: Store,
    pub(crate) clock: Arc<dyn Clock>,
    counter: AtomicU64,
    pub(crate) locks: LockTable,
    pub(crate) cursors: Mutex<CursorTable>,
    commands: HashMap<&'static str, CommandSpec<C>>,
}

/// SCAN cursors handed to clients, mapped to the position they stand for.
#[derive(Default)]
pub(crate) struct CursorTable {
    next_id: u64,
    positions: HashMap<u64, Vec<u8>>,
}

impl CursorTable {
    /// A new cursor for `position`.
    pub(crate) fn issue(&mut self, position: Vec<u8>) -> u64 {
        if self.positions.len() > 100_000 {
            self.positions.clear();
        }
        self.next_id += 1;
        self.positions.insert(self.next_id, position);
        self.next_id
    }

    /// The position of a cursor, if known.
    pub(crate) fn position(&self, id: u64) -> Option<Vec<u8>> {
        self.positions.get(&id).cloned()
    }
}

impl<C: Codec> Engine<C> {
    /// Opens the store of `codec`'s format in `dir`.
    pub fn open(codec: C, dir: &Path, options: EngineOptions) -> Result<Engine<C>, EngineError> {
        let codec = Arc::new(codec);
        let store = Store::open(codec.clone(), options.clock.clone(), dir, options.mode)?;
        Ok(Engine {
            codec,
            store,
            clock: options.clock,
            counter: AtomicU64::new(0),
            locks: LockTable::default(),
            cursors: Mutex::new(CursorTable::default()),
            commands: dispatch::command_table(),
        })
    }

    /// The format.
    pub fn codec(&self) -> &C {
        &self.codec
    }

    /// The format's declared capabilities.
    pub fn capabilities(&self) -> &Capabilities {
        self.codec.capabilities()
    }

    /// The underlying store (raw pairs, compaction, properties).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Current time in unix milliseconds, from the engine's clock.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Runs a full compaction of every column family.
    pub fn compact(&self) -> Result<(), EngineError> {
        self.store.compact_all()
    }

    /// The running counter the next version is computed with (migration
    /// checkpoints save it so a resumed run hands out the same versions).
    pub(crate) fn version_counter(&self) -> u64 {
        self.counter.load(Ordering::SeqCst)
    }

    /// Restores the running counter saved by [`Engine::version_counter`].
    pub(crate) fn set_version_counter(&self, counter: u64) {
        self.counter.store(counter, Ordering::SeqCst);
    }

    /// A fresh version for a key whose previous version was `previous`.
    pub(crate) fn next_version(&self, previous: Option<u64>) -> u64 {
        let counter = self.counter.fetch_add(1, Ordering::SeqCst);
        self.codec
            .next_version(self.clock.now_us(), counter, previous)
    }

    /// Runs one command given as its arguments (name first) and returns
    /// Redis' reply. Errors, including storage errors, become error replies.
    pub fn execute<A: AsRef<[u8]>>(&self, args: &[A]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(AsRef::as_ref).collect();
        match self.run(&args) {
            Ok(reply) => reply,
            Err(e) => Reply::Error(e.to_string()),
        }
    }

    fn run(&self, args: &[&[u8]]) -> Result<Reply, CmdError> {
        let Some(name) = args.first() else {
            return Err(CmdError::other("ERR empty command"));
        };
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let Some(spec) = self.commands.get(lower.as_str()) else {
            return Err(dispatch::unknown_command(args));
        };
        if !spec.arity_ok(args.len()) {
            return Err(CmdError::WrongArity(lower));
        }
        let _held = match spec.keys {
            dispatch::Keys::Everything => self.locks.lock_all(),
            ref keys => self.locks.lock_keys(&keys.of(args)),
        };
        let mut ctx = Ctx::new(self);
        let reply = (spec.run)(&mut ctx, args)?;
        ctx.commit()?;
        Ok(reply)
    }
}
