//! The [`Engine`]: an [`EngineCore`] (a store opened in one format, the
//! clock and version source, the lock table), the command table built from
//! [`crate::cmd::table`], and the background work the format asks for
//! (active expiry).

use std::ops::Deref;
#[cfg(feature = "rocksdb")]
use std::path::Path;
use std::sync::Arc;
#[cfg(feature = "rocksdb")]
use std::time::Duration;

use redcodec_codec::Codec;

use crate::clock::{Clock, SystemClock};
pub use crate::core::EngineCore;
use crate::dispatch::{self, CommandSpec, CommandTable, Keys};
use crate::error::{CmdError, EngineError};
use crate::expiry::ExpiryTask;
use crate::keyspace::Ctx;
use crate::lookups::KeyspaceLookups;
use crate::reply::Reply;
use crate::store::{Batch, Compat, DefaultStore, KvStore, MemStore, OpenMode};
#[cfg(feature = "rocksdb")]
use crate::store::{Store, StoreOptions};

/// How to open an engine.
#[derive(Clone)]
pub struct EngineOptions {
    /// Time source for expiry and versions.
    pub clock: Arc<dyn Clock>,
    /// Read-write (creating a missing store or not) or read-only. A
    /// read-only engine writes nothing: no records a format writes on
    /// open, no active expiry, and every write command fails.
    pub mode: OpenMode,
    /// Write what this release of the real system opens.
    pub compat: Option<Compat>,
    /// Bytes of the store's block cache (see
    /// [`redcodec_store::DEFAULT_BLOCK_CACHE_BYTES`], the default).
    pub block_cache_bytes: usize,
    /// Bytes of the store's read cache ([`redcodec_store::read_cache`];
    /// 0, the default: none).
    pub read_cache_bytes: usize,
    /// Read the tables past the page cache
    /// ([`redcodec_store::StoreOptions::direct_reads`]; off by default).
    pub direct_reads: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            clock: Arc::new(SystemClock),
            mode: OpenMode::CreateIfMissing,
            compat: None,
            block_cache_bytes: redcodec_store::DEFAULT_BLOCK_CACHE_BYTES,
            read_cache_bytes: 0,
            direct_reads: false,
        }
    }
}

impl EngineOptions {
    /// Options that open an existing store read-only.
    pub fn read_only() -> EngineOptions {
        EngineOptions {
            mode: OpenMode::ReadOnly,
            ..EngineOptions::default()
        }
    }

    /// Options with a specific clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> EngineOptions {
        EngineOptions {
            clock,
            ..EngineOptions::default()
        }
    }
}

/// Redis semantics over one store in the format of `C`. Send + Sync: share
/// it between threads behind an `Arc`. Everything it does is in
/// [`EngineCore`], which it dereferences to; the engine also owns the
/// background tasks of the format, and stops them when dropped.
pub struct Engine<C: Codec, S: KvStore = DefaultStore> {
    /// Declared first: dropped (stopped and joined) before the core.
    expiry: Option<ExpiryTask>,
    core: Arc<EngineCore<C, S>>,
    commands: CommandTable<C, S>,
    /// The key lookups of the clients' read commands
    /// ([`Engine::keyspace_lookups`]).
    lookups: Arc<KeyspaceLookups>,
}

impl<C: Codec, S: KvStore> Deref for Engine<C, S> {
    type Target = EngineCore<C, S>;

    fn deref(&self) -> &EngineCore<C, S> {
        &self.core
    }
}

#[cfg(feature = "rocksdb")]
impl<C: Codec> Engine<C> {
    /// Opens the store of `codec`'s format in `dir`, and starts the
    /// background tasks the format declares (active expiry).
    pub fn open(
        codec: C,
        dir: impl AsRef<Path>,
        options: EngineOptions,
    ) -> Result<Engine<C>, EngineError> {
        let dir = dir.as_ref();
        let codec = Arc::new(codec);
        let store_options = StoreOptions {
            mode: options.mode,
            compat: options.compat,
            block_cache_bytes: options.block_cache_bytes,
            read_cache_bytes: options.read_cache_bytes,
            direct_reads: options.direct_reads,
        };
        let store = Store::open(codec.clone(), options.clock.clone(), dir, store_options)?;
        let writes = options.mode.writes();
        let core = Arc::new(EngineCore::new(codec, store, options.clock));
        crate::namespaces::check_slots(core.codec(), core.store())?;
        if writes {
            core.store.write_bootstrap(core.codec.bootstrap_records())?;
        }
        let expiry = match core.codec.capabilities().active_expiry {
            Some(active) if writes => Some(
                ExpiryTask::start(Duration::from_millis(active.period_ms.max(1)), {
                    let core = core.clone();
                    // A failed pass leaves the keys it could not handle
                    // reported; the next pass tries again.
                    move || {
                        let _ = core.expire_reported_keys();
                    }
                })
                .map_err(|e| EngineError::Open(format!("cannot start the expiry task: {e}")))?,
            ),
            _ => None,
        };
        Ok(Engine {
            expiry,
            core,
            commands: CommandTable::new(crate::cmd::table()),
            lookups: Arc::default(),
        })
    }
}

impl<C: Codec> Engine<C, MemStore> {
    /// An engine over an empty in-memory store ([`MemStore`]) on `clock`,
    /// for tests: the same commands over the same records, in each
    /// family's comparator order, with no RocksDB, no compaction filters
    /// and no active-expiry task.
    pub fn in_memory(codec: C, clock: Arc<dyn Clock>) -> Result<Engine<C, MemStore>, EngineError> {
        let store = MemStore::new(codec.layout());
        Engine::over(codec, store, clock)
    }
}

impl<C: Codec, S: KvStore> Engine<C, S> {
    /// An engine over `store` (one the caller made for `codec`'s layout,
    /// e.g. a [`crate::store::FaultyStore`] around a [`MemStore`]) on
    /// `clock`, after writing the records the format writes on every open.
    /// No active-expiry task.
    pub fn over(codec: C, store: S, clock: Arc<dyn Clock>) -> Result<Engine<C, S>, EngineError> {
        let mut bootstrap = Batch::default();
        for (record, value) in codec.bootstrap_records() {
            bootstrap.put(record.place, record.key, value);
        }
        store.write(bootstrap)?;
        Ok(Engine {
            expiry: None,
            core: Arc::new(EngineCore::new(Arc::new(codec), store, clock)),
            commands: CommandTable::new(crate::cmd::table()),
            lookups: Arc::default(),
        })
    }
}

impl<C: Codec, S: KvStore> Engine<C, S> {
    /// Whether the active-expiry task runs (the format declares
    /// [`redcodec_codec::Capabilities::active_expiry`], and it was not stopped).
    pub fn has_expiry_task(&self) -> bool {
        self.expiry.is_some()
    }

    /// Wakes the active-expiry task for one pass and waits until a pass
    /// has completed; `false` when no task runs. The task otherwise runs
    /// every period of real time; tests drive it with this and a manual
    /// clock instead of waiting.
    pub fn tick_expiry_task(&self) -> bool {
        match &self.expiry {
            Some(task) => {
                task.tick();
                true
            }
            None => false,
        }
    }

    /// Stops the active-expiry task and waits for it to finish. Expired
    /// keys stay hidden; reported keys are then deleted only by explicit
    /// [`EngineCore::expire_reported_keys`] passes (tests that drive the
    /// passes themselves call this right after opening).
    pub fn stop_expiry_task(&mut self) {
        self.expiry = None;
    }

    /// The counts of the key lookups of the clients' read commands
    /// (INFO's `keyspace_hits` and `keyspace_misses`).
    pub fn keyspace_lookups(&self) -> &KeyspaceLookups {
        &self.lookups
    }

    /// Counts lookups in `lookups` from now on: a server shares one count
    /// among the engines it opens in turn (one per namespace).
    pub fn share_keyspace_lookups(&mut self, lookups: Arc<KeyspaceLookups>) {
        self.lookups = lookups;
    }

    /// Runs one command given as its arguments (name first) and returns
    /// Redis' reply. Errors, including storage errors, become error replies.
    /// Its key lookups are not counted (an internal read, not a client's:
    /// see [`Engine::execute_resolved`]).
    pub fn execute<A: AsRef<[u8]>>(&self, args: &[A]) -> Reply {
        self.execute_noting_unchanged(args).0
    }

    /// [`Engine::execute`], also returning the keys the command names but
    /// left unchanged although it may write (SMOVE's destination when it
    /// held the member already, SORT's source): a server does not count
    /// them as modified for WATCH.
    pub fn execute_noting_unchanged<A: AsRef<[u8]>>(&self, args: &[A]) -> (Reply, Vec<Vec<u8>>) {
        with_borrowed(args, |args| self.run(args))
    }

    /// [`Engine::execute_noting_unchanged`] for a command its caller
    /// already looked up (a server resolves each request once): `spec`
    /// is the command named `name` (lower-case) in the engine's command table,
    /// `args` its arguments, name first. The name is not looked up again.
    /// A client's command: a read command counts each key it looks up in
    /// [`Engine::keyspace_lookups`], as Redis counts `keyspace_hits` and
    /// `keyspace_misses`.
    pub fn execute_resolved<A: AsRef<[u8]>>(
        &self,
        name: &str,
        spec: &CommandSpec<C, S>,
        args: &[A],
    ) -> (Reply, Vec<Vec<u8>>) {
        with_borrowed(args, |args| self.run_resolved(name, spec, args, true))
    }

    fn run(&self, args: &[&[u8]]) -> Result<(Reply, Vec<Vec<u8>>), CmdError> {
        let Some(name) = args.first() else {
            return Err(CmdError::other("ERR empty command"));
        };
        let Some((lower, spec)) = self.commands.get(name) else {
            return Err(dispatch::unknown_command(args));
        };
        self.run_resolved(lower, spec, args, false)
    }

    fn run_resolved(
        &self,
        lower: &str,
        spec: &CommandSpec<C, S>,
        args: &[&[u8]],
        client: bool,
    ) -> Result<(Reply, Vec<Vec<u8>>), CmdError> {
        if !spec.arity_ok(args.len()) {
            return Err(CmdError::WrongArity(lower.to_string()));
        }
        let _held = match spec.keys {
            Keys::Everything => self.locks.lock_all(),
            Keys::First if args.len() > 1 => self.locks.lock_key(args[1]),
            ref keys => self.locks.lock_keys(&keys.of(args)),
        };
        let mut ctx = Ctx::new(self);
        if client && !spec.flags.has(crate::command::Flags::WRITE) {
            ctx.count_lookups(&self.lookups);
        }
        let reply = (spec.run)(&mut ctx, args)?;
        self.finish(&mut ctx, reply, args)
    }

    /// Commits what `ctx` queued for the command `args` and tells the
    /// observer what it did, the caller still holding the keys' locks (so
    /// commands on one key reach the observer in the order they applied).
    /// Returns the reply and the keys the command left unchanged.
    #[inline]
    pub(crate) fn finish(
        &self,
        ctx: &mut Ctx<'_, C, S>,
        reply: Reply,
        args: &[&[u8]],
    ) -> Result<(Reply, Vec<Vec<u8>>), CmdError> {
        let unchanged = ctx.take_unchanged();
        let events = ctx.take_events();
        if !self.has_observer() {
            // Nobody to tell: nothing more to gather.
            ctx.commit_queued()?;
            self.publish_key_events(&events);
            return Ok((reply, unchanged));
        }
        let expired = ctx.take_expired();
        ctx.commit_queued()?;
        self.notify(&crate::observe::CommandEvent {
            args,
            reply: &reply,
            unchanged: &unchanged,
            expired: &expired,
        });
        self.publish_key_events(&events);
        Ok((reply, unchanged))
    }
}

/// Runs `run` on `args` borrowed as byte slices (on the stack for the
/// few arguments most commands have); an error becomes its reply.
#[inline(always)]
fn with_borrowed<A: AsRef<[u8]>>(
    args: &[A],
    run: impl FnOnce(&[&[u8]]) -> Result<(Reply, Vec<Vec<u8>>), CmdError>,
) -> (Reply, Vec<Vec<u8>>) {
    const INLINE: usize = 8;
    let outcome = if args.len() <= INLINE {
        let mut inline: [&[u8]; INLINE] = [&[]; INLINE];
        for (slot, arg) in inline.iter_mut().zip(args) {
            *slot = arg.as_ref();
        }
        run(&inline[..args.len()])
    } else {
        let args: Vec<&[u8]> = args.iter().map(AsRef::as_ref).collect();
        run(&args)
    };
    match outcome {
        Ok(done) => done,
        Err(e) => (Reply::Error(e.to_string()), Vec::new()),
    }
}
