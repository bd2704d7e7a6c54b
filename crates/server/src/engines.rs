//! The engine the server works on, reopened in another namespace when a
//! client works there (a store is opened once; a format's namespace is
//! part of its codec).

use parking_lot::{MappedRwLockReadGuard, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::Arc;

use redcodec_engine::internals::lookups::KeyspaceLookups;
use redcodec_engine::key_events::KeyEventSink;
use redcodec_engine::store::ExpiryHold;
use redcodec_engine::{Engine, EngineError, Reply};
use redcodec_formats::AnyCodec;

/// Opens the store in a namespace.
pub type Opener = Box<dyn Fn(&str) -> Result<Engine<AnyCodec>, EngineError> + Send + Sync>;

/// Where the keyspace notifications of the engine of a namespace go
/// ([`crate::keyspace_events`]).
pub type EventSinks = Box<dyn Fn(&str) -> Arc<dyn KeyEventSink> + Send + Sync>;

/// The open engine and its namespace.
pub struct Active {
    namespace: String,
    engine: Option<Engine<AnyCodec>>,
}

impl Active {
    /// The engine; `None` once the server has shut down.
    pub fn engine(&self) -> Option<&Engine<AnyCodec>> {
        self.engine.as_ref()
    }
}

/// The engine held exclusively ([`EngineSlot::exclusive`]).
pub type EngineGuard<'a> = RwLockWriteGuard<'a, Active>;

/// The engine behind a read-write lock: commands share it, `EXEC` and
/// namespace switches hold it exclusively.
pub struct EngineSlot {
    active: RwLock<Active>,
    opener: Opener,
    /// The sink of each engine the slot opens.
    sinks: EventSinks,
    /// INFO's `keyspace_hits` / `keyspace_misses`, counted by every
    /// engine the slot opens.
    lookups: Arc<KeyspaceLookups>,
    /// The open store's expiry hold, whose state every engine the slot
    /// opens takes (a replica's: [`EngineSlot::hold_expiry`]); reached
    /// without the engine's lock, which EXEC may hold.
    expiry: Mutex<Arc<ExpiryHold>>,
}

fn closed() -> Reply {
    Reply::error("ERR the server is shutting down")
}

impl EngineSlot {
    /// Opens the engine in `namespace`.
    pub fn open(
        opener: Opener,
        sinks: EventSinks,
        namespace: &str,
    ) -> Result<EngineSlot, EngineError> {
        let lookups = Arc::new(KeyspaceLookups::default());
        let mut engine = opener(namespace)?;
        engine.share_keyspace_lookups(lookups.clone());
        engine.publish_key_events_to(sinks(namespace));
        let hold = engine.store().expiry_hold().clone();
        Ok(EngineSlot {
            active: RwLock::new(Active {
                namespace: namespace.to_string(),
                engine: Some(engine),
            }),
            opener,
            sinks,
            lookups,
            expiry: Mutex::new(hold),
        })
    }

    /// Holds (`true`) or releases background expiry in the open engine's
    /// store and in every one opened later: a replica's keys expire when
    /// its master's `DEL` comes, not by this machine's clock
    /// ([`ExpiryHold`]).
    pub fn hold_expiry(&self, held: bool) {
        self.expiry.lock().set(held);
    }

    /// Holds background expiry until `until` (CLIENT PAUSE), or no longer
    /// (`None`), in the open engine's store and in every one opened later.
    pub fn pause_expiry(&self, until: Option<std::time::Instant>) {
        self.expiry.lock().pause_until(until);
    }

    /// The key lookups of the clients' read commands, in every namespace.
    pub fn keyspace_lookups(&self) -> &KeyspaceLookups {
        &self.lookups
    }

    /// The engine in `namespace`, newly opened, counting its lookups in
    /// the slot's.
    fn open_in(&self, namespace: &str) -> Result<Engine<AnyCodec>, EngineError> {
        let mut engine = (self.opener)(namespace)?;
        engine.share_keyspace_lookups(self.lookups.clone());
        engine.publish_key_events_to((self.sinks)(namespace));
        let mut expiry = self.expiry.lock();
        let hold = engine.store().expiry_hold();
        hold.take_state_of(&expiry);
        *expiry = hold.clone();
        Ok(engine)
    }

    /// The engine, shared, in `namespace`.
    pub fn shared(
        &self,
        namespace: &str,
    ) -> Result<MappedRwLockReadGuard<'_, Engine<AnyCodec>>, Reply> {
        let guard = self.active.read();
        let guard = if guard.namespace == namespace {
            guard
        } else {
            drop(guard);
            RwLockWriteGuard::downgrade(self.exclusive(namespace)?)
        };
        RwLockReadGuard::try_map(guard, |a| a.engine.as_ref()).map_err(|_| closed())
    }

    /// The engine in whichever namespace is open (the store is the same
    /// in every one).
    pub fn current(&self) -> Result<MappedRwLockReadGuard<'_, Engine<AnyCodec>>, Reply> {
        RwLockReadGuard::try_map(self.active.read(), |a| a.engine.as_ref()).map_err(|_| closed())
    }

    /// The engine, exclusively, in `namespace`.
    pub fn exclusive(&self, namespace: &str) -> Result<EngineGuard<'_>, Reply> {
        self.switched(self.active.write(), namespace)
    }

    /// `guard`'s engine, reopened in `namespace` if it is open in another.
    fn switched<'a>(
        &self,
        mut guard: EngineGuard<'a>,
        namespace: &str,
    ) -> Result<EngineGuard<'a>, Reply> {
        if guard.engine.is_none() {
            return Err(closed());
        }
        if guard.namespace != namespace {
            guard.engine = None;
            match self.open_in(namespace) {
                Ok(engine) => {
                    guard.engine = Some(engine);
                    guard.namespace = namespace.to_string();
                }
                Err(e) => {
                    guard.engine = self.open_in(&guard.namespace).ok();
                    return Err(Reply::error(format!("ERR {e}")));
                }
            }
        }
        Ok(guard)
    }

    /// The engine exclusively in `namespace` if no one holds it now
    /// (`None`: it is held, [`EngineSlot::exclusive`] would wait).
    pub fn try_exclusive(&self, namespace: &str) -> Option<Result<EngineGuard<'_>, Reply>> {
        let guard = self.active.try_write()?;
        Some(self.switched(guard, namespace))
    }

    /// Syncs the WAL of the open engine.
    pub fn sync_wal(&self) -> Result<(), EngineError> {
        let guard = self.active.read();
        match &guard.engine {
            Some(engine) => Ok(engine.store().sync_wal()?),
            None => Ok(()),
        }
    }

    /// The open store's latest sequence numbers and those it was opened
    /// with (the store's `sequences_at_open`); `None`
    /// once closed.
    pub fn sequences(&self) -> Option<(Vec<u64>, Vec<u64>)> {
        let guard = self.active.read();
        let store = guard.engine.as_ref()?.store();
        Some((store.latest_sequences(), store.sequences_at_open().to_vec()))
    }

    /// Saves the open engine's store (see
    /// [`crate::persistence::save_store`]); nothing once the server has
    /// shut down (closing saved it).
    pub fn save(&self) -> Result<(), EngineError> {
        let guard = self.active.read();
        match &guard.engine {
            Some(engine) => crate::persistence::save_store(engine),
            None => Ok(()),
        }
    }

    /// Compacts every column family of the open engine's store (what
    /// Kvrocks' and Pika's COMPACT start); nothing once the server has
    /// shut down.
    pub fn compact(&self) -> Result<(), EngineError> {
        let guard = self.active.read();
        match &guard.engine {
            Some(engine) => engine.compact(),
            None => Ok(()),
        }
    }

    /// Flushes memtables and the WAL, and closes the engine; commands
    /// then fail.
    pub fn close(&self) -> Result<(), EngineError> {
        let mut guard = self.active.write();
        if let Some(engine) = guard.engine.take() {
            engine.store().sync_wal()?;
            engine.store().flush()?;
        }
        Ok(())
    }
}
