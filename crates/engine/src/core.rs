//! [`EngineCore`]: the state every command works on through a
//! [`Ctx`](crate::keyspace::Ctx): the store opened in one format, the clock
//! and version source, the lock table and the SCAN cursors. `Ctx` and
//! `EngineCore` refer to each other; nothing else in the engine closes a
//! circle.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use redcodec_codec::{Capabilities, Codec};

use crate::clock::Clock;
#[cfg(feature = "rocksdb")]
use crate::error::EngineError;
use crate::event::CommandEvent;
use crate::key_events::{AnnouncedExpiries, EventClasses, KeyEvent, KeyEventSink};
use crate::locks::{Held, LockTable};
#[cfg(feature = "rocksdb")]
use crate::store::Store;
use crate::store::{DefaultStore, Group, KvStore};

/// The store, clock, version source and locks of an [`crate::Engine`],
/// shared with its background tasks: what a [`Ctx`](crate::keyspace::Ctx)
/// works on.
pub struct EngineCore<C: Codec, S: KvStore = DefaultStore> {
    pub(crate) codec: Arc<C>,
    pub(crate) store: S,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) counter: AtomicU64,
    pub(crate) locks: LockTable,
    pub(crate) cursors: Mutex<CursorTable>,
    /// The writes of the open groups of commands
    /// ([`crate::Engine::atomically`], [`crate::Engine::atomically_on`]),
    /// each with the thread that opened it: only that thread (holding
    /// every lock, or the locks of the group's keys) reads or adds to it;
    /// and the keyspace events of its commands, published once the
    /// group's write is in the store (a subscriber that reads the key it
    /// hears of then finds what the command wrote).
    pub(crate) groups: Mutex<Vec<ThreadGroup>>,
    /// How many groups are open (reads skip [`EngineCore::groups`] while
    /// it is 0).
    pub(crate) open_groups: std::sync::atomic::AtomicUsize,
    /// Redis' `proto-max-bulk-len`, which also bounds what commands make.
    max_bulk_len: AtomicU64,
    /// Told what each command did: the observer [`crate::observe`]
    /// installs (its type, `observe::Observer`, spelled out).
    #[allow(clippy::type_complexity)]
    pub(crate) observer: parking_lot::RwLock<
        Option<Arc<dyn Fn(&EngineCore<C, S>, &CommandEvent<'_>) + Send + Sync>>,
    >,
    /// Whether `observer` holds one: what every command checks, without
    /// the lock, before it gathers what the observer is told.
    pub(crate) observed: std::sync::atomic::AtomicBool,
    /// Where keyspace notifications go, once a server installed it
    /// ([`EngineCore::publish_key_events_to`]).
    pub(crate) key_events: std::sync::OnceLock<Arc<dyn KeyEventSink>>,
    /// The expired keys already announced ([`AnnouncedExpiries`]).
    pub(crate) announced_expiries: Mutex<AnnouncedExpiries>,
    /// Keys written with an expiry while `expired` events are published,
    /// by the time they expire: what [`EngineCore::expire_watched_keys`]
    /// deletes and announces once due.
    pub(crate) expiry_watch: Mutex<std::collections::BTreeSet<(u64, Vec<u8>)>>,
}

/// The open group of one thread ([`EngineCore::groups`]).
pub(crate) struct ThreadGroup {
    /// The thread that opened it.
    pub(crate) thread: u64,
    /// The writes of its commands so far.
    pub(crate) writes: Group,
    /// The keyspace events they announced, published after the write.
    pub(crate) events: Vec<KeyEvent>,
}

/// Redis' default `proto-max-bulk-len`: 512 MB.
pub const DEFAULT_MAX_BULK_LEN: u64 = 512 * 1024 * 1024;

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

impl<C: Codec, S: KvStore> EngineCore<C, S> {
    /// The state of a new engine over `store`.
    pub(crate) fn new(codec: Arc<C>, store: S, clock: Arc<dyn Clock>) -> EngineCore<C, S> {
        EngineCore {
            codec,
            store,
            clock,
            counter: AtomicU64::new(0),
            locks: LockTable::default(),
            cursors: Mutex::new(CursorTable::default()),
            groups: Mutex::new(Vec::new()),
            open_groups: std::sync::atomic::AtomicUsize::new(0),
            max_bulk_len: AtomicU64::new(DEFAULT_MAX_BULK_LEN),
            observer: parking_lot::RwLock::new(None),
            observed: std::sync::atomic::AtomicBool::new(false),
            key_events: std::sync::OnceLock::new(),
            announced_expiries: Mutex::new(AnnouncedExpiries::default()),
            expiry_watch: Mutex::new(std::collections::BTreeSet::new()),
        }
    }

    /// Publishes the keyspace notifications of every later command to
    /// `sink`; `false` (and `sink` unused) if one was installed before.
    pub fn publish_key_events_to(&self, sink: Arc<dyn KeyEventSink>) -> bool {
        self.key_events.set(sink).is_ok()
    }

    /// The classes of keyspace events published now (none without a sink).
    pub fn key_event_classes(&self) -> EventClasses {
        self.key_events
            .get()
            .map_or(EventClasses::NONE, |sink| sink.classes())
    }

    /// Hands one committed command's `events` to the sink, if any, and
    /// records the expiries they announce (`(events, expiries)`, from
    /// [`crate::keyspace::Ctx::take_events`]).
    pub(crate) fn publish_key_events(
        &self,
        (events, expiries): &(Vec<KeyEvent>, Vec<(Vec<u8>, u64)>),
    ) {
        if !expiries.is_empty() {
            let mut announced = self.announced_expiries.lock();
            for (key, at) in expiries {
                announced.first_time(key, *at);
            }
        }
        if let Some(sink) = self.sink_for(events) {
            if !self.hold_in_group(events) {
                sink.publish(events);
            }
        }
    }

    /// The sink `events` go to: none when there are none, or no sink.
    fn sink_for(&self, events: &[KeyEvent]) -> Option<&Arc<dyn KeyEventSink>> {
        self.key_events.get().filter(|_| !events.is_empty())
    }

    /// Holds `events` in the calling thread's open group until its write
    /// (see [`EngineCore::groups`]); `false` outside a group.
    fn hold_in_group(&self, events: &[KeyEvent]) -> bool {
        if self.open_groups.load(Ordering::Acquire) == 0 {
            return false;
        }
        let me = crate::locks::thread_id();
        let mut groups = self.groups.lock();
        match groups.iter_mut().find(|g| g.thread == me) {
            Some(group) => {
                group.events.extend_from_slice(events);
                true
            }
            None => false,
        }
    }

    /// Publishes the events a group held ([`EngineCore::hold_in_group`])
    /// once its write is in the store.
    pub(crate) fn publish_held_events(&self, events: &[KeyEvent]) {
        if let Some(sink) = self.sink_for(events) {
            sink.publish(events);
        }
    }

    /// Whether the calling thread runs a group of this engine: its
    /// commands read through the group's writes and add theirs to it.
    pub(crate) fn group_here(&self) -> bool {
        if self.open_groups.load(Ordering::Acquire) == 0 {
            return false;
        }
        let me = crate::locks::thread_id();
        self.groups.lock().iter().any(|g| g.thread == me)
    }

    /// Runs `f` on the calling thread's open group, if any.
    pub(crate) fn with_group<R>(&self, f: impl FnOnce(&mut Group) -> R) -> Option<R> {
        let me = crate::locks::thread_id();
        let mut groups = self.groups.lock();
        groups
            .iter_mut()
            .find(|g| g.thread == me)
            .map(|g| f(&mut g.writes))
    }

    /// The longest string a command may make (SETRANGE, APPEND, SETBIT's
    /// offset) and the most transient memory LCS may take: Redis'
    /// `proto-max-bulk-len`, 512 MB (Redis' default) unless set.
    pub fn max_bulk_len(&self) -> u64 {
        self.max_bulk_len.load(Ordering::Relaxed)
    }

    /// Sets [`EngineCore::max_bulk_len`] (`CONFIG SET proto-max-bulk-len`).
    pub fn set_max_bulk_len(&self, len: u64) {
        self.max_bulk_len.store(len, Ordering::Relaxed);
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
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The engine's clock (expiry and versions).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Current time in unix milliseconds, from the engine's clock.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The running counter the next version is computed with (migration
    /// checkpoints save it so a resumed run hands out the same versions).
    pub fn version_counter(&self) -> u64 {
        self.counter.load(Ordering::SeqCst)
    }

    /// Restores the running counter saved by [`EngineCore::version_counter`].
    pub fn set_version_counter(&self, counter: u64) {
        self.counter.store(counter, Ordering::SeqCst);
    }

    /// Takes the locks of `keys` (in a fixed order, so two callers never
    /// deadlock), as a command on them does; released when dropped.
    pub fn lock_keys<'a>(&'a self, keys: &[&[u8]]) -> Held<'a> {
        self.locks.lock_keys(keys)
    }

    /// Takes the whole keyspace exclusively, as FLUSHALL does; released
    /// when dropped.
    pub fn lock_all(&self) -> Held<'_> {
        self.locks.lock_all()
    }

    /// A fresh version for a key whose previous version was `previous`.
    pub(crate) fn next_version(&self, previous: Option<u64>) -> u64 {
        let counter = self.counter.fetch_add(1, Ordering::SeqCst);
        self.codec
            .next_version(self.clock.now_us(), counter, previous)
    }
}

#[cfg(feature = "rocksdb")]
impl<C: Codec> EngineCore<C, Store> {
    /// Runs a full compaction of every column family.
    pub fn compact(&self) -> Result<(), EngineError> {
        Ok(self.store.compact_all()?)
    }
}
