//! The per-command context: reads a key's metadata through the codec,
//! applies Redis' key rules (expiry, one type per key, WRONGTYPE), and
//! queues every write of the command in one batch.
//!
//! Inside a group of commands ([`crate::Engine::atomically`]), a context
//! of the group's thread reads the store with the group's held-back writes
//! laid over it ([`Ctx::get_with`], [`Ctx::scan`]), and its commit adds
//! its batch to the group instead of writing it.

use std::cell::{Cell, RefCell};

use redcodec_codec::{
    Capabilities, Codec, DataType, DecodeError, DeleteModel, Meta, MetaLookup, Place,
    RelativeExpiry, SubId, SubIdRef, SubKind, SubValue, SubValueRef, TtlResolution, VersionWidth,
};

use crate::core::EngineCore;
use crate::error::{CmdError, CmdResult};
use crate::key_events::{EventClasses, KeyEvent};
use crate::lookups::KeyspaceLookups;
use crate::reply::quote_bytes;
use crate::store::{Batch, DefaultStore, GroupIter, KvIter, KvStore, StoreError};

/// What is stored under one key.
#[derive(Debug, Default)]
pub struct KeyView {
    /// The key's live value, if any.
    pub live: Option<Meta>,
    /// Metadata that is still on disk but expired or empty.
    pub dead: Vec<Meta>,
    /// Live values of other types under the same key, hidden by the rule
    /// of [`TYPE_ORDER`] (only in stores the real system wrote: redcodec
    /// keeps one type per key).
    pub shadowed: Vec<Meta>,
    /// The store holds no record of the key at all, not even element
    /// records of an old version: a load into a store it emptied knows
    /// it ([`KeyView::nothing_stored`]).
    pub nothing_stored: bool,
}

impl KeyView {
    /// The view of a key the store certainly holds no record of: a new
    /// collection there needs no check that its version is unused
    /// ([`redcodec_codec::Capabilities::version_may_repeat`]).
    pub fn nothing_stored() -> KeyView {
        KeyView {
            nothing_stored: true,
            ..KeyView::default()
        }
    }
}

/// The rule for a key held in several types at once, which Pika's
/// blackwidow and nemo allow (one metadata place per type): the key's type
/// is its first live type in this order — the order blackwidow's `TYPE`
/// probes (`src/blackwidow.cc`, `BlackWidow::Type`). Every command sees
/// only that value; the others are shadowed, and the first command that
/// writes the key (or deletes it) removes them in its own batch, so from
/// then on the key has one type, as in Redis.
pub const TYPE_ORDER: [DataType; 5] = [
    DataType::String,
    DataType::Hash,
    DataType::List,
    DataType::ZSet,
    DataType::Set,
];

/// One command's view of the engine and its pending writes.
pub struct Ctx<'e, C: Codec, S: KvStore = DefaultStore> {
    pub(crate) eng: &'e EngineCore<C, S>,
    /// The command's time, read from the clock on first use and then kept:
    /// every check in a command agrees. Commands that never need the time
    /// (a read of a key without expiry) never read the clock.
    now_ms: Cell<Option<u64>>,
    batch: Batch,
    /// Whether the context runs in the open group of its thread: it reads
    /// through the group's writes and commits into the group.
    grouped: bool,
    /// Shadowed values met by [`Ctx::view`] (see [`TYPE_ORDER`]), removed
    /// when the command writes their key.
    shadowed: RefCell<Vec<(Vec<u8>, Meta)>>,
    /// Keys the command names but did not change (see
    /// [`Ctx::leave_unchanged`]).
    unchanged: Vec<Vec<u8>>,
    /// Keys met with expired metadata (see [`crate::observe::CommandEvent::expired`]).
    expired: RefCell<Vec<Vec<u8>>>,
    /// Where [`Ctx::live`] counts its lookups as Redis' `lookupKeyRead`
    /// does, for a client's read command.
    lookups: Option<&'e KeyspaceLookups>,
    /// The keyspace notifications of the command so far ([`Ctx::notify`]).
    events: RefCell<Vec<KeyEvent>>,
    /// While set, [`Ctx::notify`] notes nothing ([`Ctx::without_events`]).
    muted: Cell<bool>,
    /// The expiries this command announces (`expired`), recorded as
    /// announced once it committed ([`Ctx::take_events`]).
    announcing: RefCell<Vec<(Vec<u8>, u64)>>,
}

impl<'e, C: Codec, S: KvStore> Ctx<'e, C, S> {
    /// A command's context on `eng`: nothing read, nothing queued; the
    /// caller holds the keys' locks and ends with [`Ctx::commit`].
    pub fn new(eng: &'e EngineCore<C, S>) -> Ctx<'e, C, S> {
        Ctx {
            eng,
            now_ms: Cell::new(None),
            batch: Batch::default(),
            grouped: eng.group_here(),
            shadowed: RefCell::new(Vec::new()),
            unchanged: Vec::new(),
            expired: RefCell::new(Vec::new()),
            lookups: None,
            events: RefCell::new(Vec::new()),
            muted: Cell::new(false),
            announcing: RefCell::new(Vec::new()),
        }
    }

    /// Runs `f` with [`Ctx::notify`] noting nothing: for a command that
    /// announces its events itself, in Redis' order, and writes otherwise.
    pub fn without_events<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let was = self.muted.replace(true);
        let out = f(self);
        self.muted.set(was);
        out
    }

    /// Notes the keyspace event `event` of `class` on `key`, where Redis
    /// calls `notifyKeyspaceEvent`: published once the command committed,
    /// if `notify-keyspace-events` asks for its class
    /// ([`crate::key_events`]).
    pub fn notify(&self, class: EventClasses, event: &'static str, key: &[u8]) {
        if !self.muted.get() && self.eng.key_event_classes().publishes(class) {
            self.events.borrow_mut().push(KeyEvent {
                class,
                event,
                key: key.to_vec(),
            });
        }
    }

    /// Notes `del` on `key` if the collection `meta` describes was
    /// emptied (Redis deletes an empty collection and announces it).
    pub fn notify_if_emptied(&self, key: &[u8], meta: &Meta) {
        if meta.data_type.is_collection() && meta.size == 0 {
            self.notify(EventClasses::GENERIC, "del", key);
        }
    }

    /// [`Ctx::met_expired`] for metadata a walk over the keyspace met dead
    /// (expired, or an emptied collection).
    pub(crate) fn met_expired_now(&self, key: &[u8], meta: &Meta) {
        if meta.expired_at(self.expiry_now_ms()) {
            self.met_expired(key, meta.expire_ms);
        }
    }

    /// The events noted by [`Ctx::notify`], and the expiries they
    /// announce, for [`EngineCore::publish_key_events`] once the command
    /// committed (a command that fails announces nothing, and an expiry
    /// it met is announced by the next command that meets it).
    pub(crate) fn take_events(&mut self) -> (Vec<KeyEvent>, Vec<(Vec<u8>, u64)>) {
        (
            std::mem::take(self.events.get_mut()),
            std::mem::take(self.announcing.get_mut()),
        )
    }

    /// Notes that `key` was met expired at `expire_ms`: Redis deletes it
    /// there and announces `expired`; here its record stays until removed,
    /// and it is announced the first time it is met.
    fn met_expired(&self, key: &[u8], expire_ms: u64) {
        if self.muted.get()
            || !self
                .eng
                .key_event_classes()
                .publishes(EventClasses::EXPIRED)
        {
            return;
        }
        let mut announcing = self.announcing.borrow_mut();
        let met = |(k, at): &(Vec<u8>, u64)| k == key && *at == expire_ms;
        if announcing.iter().any(met) || self.eng.announced_expiries.lock().contains(key, expire_ms)
        {
            return;
        }
        announcing.push((key.to_vec(), expire_ms));
        drop(announcing);
        self.notify(EventClasses::EXPIRED, "expired", key);
    }

    /// Makes [`Ctx::live`] count each lookup as a keyspace hit or miss in
    /// `lookups`: the context runs a client's read command.
    pub(crate) fn count_lookups(&mut self, lookups: &'e KeyspaceLookups) {
        self.lookups = Some(lookups);
    }

    /// Notes that this run of a writing command left `key`, one of the
    /// keys it names, unchanged (SMOVE's destination that held the member
    /// already, SORT's source): WATCH does not count it as modified.
    pub fn leave_unchanged(&mut self, key: &[u8]) {
        self.unchanged.push(key.to_vec());
    }

    /// The keys noted by [`Ctx::leave_unchanged`].
    pub(crate) fn take_unchanged(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.unchanged)
    }

    /// The keys met with expired metadata so far.
    pub(crate) fn take_expired(&mut self) -> Vec<Vec<u8>> {
        let mut keys = self.expired.take();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The command's time in unix milliseconds (the same on every call).
    pub fn now_ms(&self) -> u64 {
        match self.now_ms.get() {
            Some(now) => now,
            None => {
                let now = self.eng.clock.now_ms();
                self.now_ms.set(Some(now));
                now
            }
        }
    }

    /// The time keys are judged expired at, those read and those given
    /// an expiry already past (deleted at once): the thread's
    /// [`crate::ExpiryPin`] if one is alive (a script's start, or never
    /// for a master's stream, as Redis' `checkAlreadyExpired` on a
    /// replica), else the command's time.
    pub fn expiry_now_ms(&self) -> u64 {
        crate::ExpiryPin::current().unwrap_or_else(|| self.now_ms())
    }

    /// The format.
    pub fn codec(&self) -> &'e C {
        &self.eng.codec
    }

    /// The format's capabilities.
    pub fn caps(&self) -> &'e Capabilities {
        self.eng.codec.capabilities()
    }

    /// The engine.
    pub fn engine(&self) -> &'e EngineCore<C, S> {
        self.eng
    }

    /// Writes everything queued, atomically (one batch; across instances,
    /// with the store's intent record). In a group, adds it to the group
    /// instead: written when the group commits.
    pub fn commit(mut self) -> CmdResult<()> {
        self.commit_queued()
    }

    /// [`Ctx::commit`] without giving the context up (nothing stays
    /// queued): the engine's own command path, which keeps the context
    /// where it is rather than moving it.
    pub(crate) fn commit_queued(&mut self) -> CmdResult<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let mut batch = Some(std::mem::take(&mut self.batch));
        if self.grouped {
            let store = &self.eng.store;
            self.eng.with_group(|group| {
                if let Some(batch) = batch.take() {
                    group.add(batch, store);
                }
            });
        }
        if let Some(batch) = batch {
            self.eng.store.write(batch)?;
        }
        Ok(())
    }

    /// Marks where the writes of the next key begin, for
    /// [`Ctx::commit_for_load`]'s sort ([`Batch::begin_group`]): a key's
    /// element records begin with the key in every format, so each key's
    /// records are sorted on their own and the keys by their first
    /// records (the sort checks that they do not interleave).
    pub fn begin_key(&mut self) {
        self.batch.begin_group();
    }

    /// Writes everything queued for a load that is undone whole after a
    /// crash (a replica's full copy under its load marker): sorted by
    /// record ([`Batch::sort_by_record`]) and written atomically within
    /// each instance, not across them (no intent record: every key's
    /// records are in one instance), and out of the write-ahead log
    /// ([`KvStore::write_unlogged`]: the load flushes the store before it
    /// is done). In a group: [`Ctx::commit`].
    pub fn commit_for_load(mut self) -> CmdResult<()> {
        if self.grouped || self.batch.is_empty() {
            return self.commit();
        }
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort_by_record();
        self.eng.store.write_unlogged(batch)?;
        Ok(())
    }

    /// Reads one record as the command sees the store: through the
    /// writes of its group, if any, then the store.
    pub fn get_with<T>(
        &self,
        place: redcodec_codec::Place,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<Option<T>, StoreError> {
        let mut read = Some(read);
        if self.grouped {
            let decided = self
                .eng
                .with_group(|group| {
                    let decided = group.get(place, key)?;
                    Some(decided.map(|raw| (read.take().expect("read once"))(raw)))
                })
                .flatten();
            if let Some(decided) = decided {
                return Ok(decided);
            }
        }
        self.eng
            .store
            .get_with(place, key, read.take().expect("read once"))
    }

    /// Iterates `range` as the command sees the store (see
    /// [`KvStore::scan`]): the store's pairs merged with the writes of its
    /// group, if any.
    pub fn scan(
        &self,
        range: &redcodec_codec::KeyRange,
        from: Option<&[u8]>,
        reverse: bool,
    ) -> GroupIter<S::Iter<'e>> {
        let base = self.eng.store.scan(range, from, reverse);
        if self.grouped {
            let mut base = Some(base);
            let grouped = self.eng.with_group(|group| {
                let base = base.take().expect("taken once");
                group.scan(base, range, from, reverse)
            });
            if let Some(iter) = grouped {
                return iter;
            }
            return GroupIter::plain(base.expect("not taken"));
        }
        GroupIter::plain(base)
    }

    /// Whether `range` may hold a record, the group's held-back puts
    /// included: `false` only when it holds none (see
    /// [`KvStore::may_hold`]).
    pub(crate) fn may_hold(&self, range: &redcodec_codec::KeyRange) -> CmdResult<bool> {
        if self.grouped && self.eng.with_group(|group| group.puts_in(range)) == Some(true) {
            return Ok(true);
        }
        Ok(self.eng.store.may_hold(range)?)
    }

    /// Queues raw range deletions (FLUSHDB).
    pub(crate) fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    pub(crate) fn is_live(&self, meta: &Meta) -> bool {
        let unexpired = meta.expire_ms == 0 || !meta.expired_at(self.expiry_now_ms());
        unexpired && (meta.data_type == DataType::String || meta.size > 0)
    }

    /// Reads every metadata record of `key`.
    pub fn view(&self, key: &[u8]) -> CmdResult<KeyView> {
        self.view_by(key, |place, raw_key, ty| {
            self.read_meta(key, place, raw_key, ty)
        })
    }

    /// Reads the metadata record `raw_key` of type `ty` of `key`. In a
    /// group that holds the key's lock, a record the store does not hold
    /// is noted in the group, which answers for it from then on
    /// ([`Group::note_absent`](redcodec_store::Group::note_absent)).
    fn read_meta(
        &self,
        key: &[u8],
        place: redcodec_codec::Place,
        raw_key: &[u8],
        ty: DataType,
    ) -> Result<Option<Result<Meta, DecodeError>>, StoreError> {
        let read = self.get_with(place, raw_key, |raw| self.codec().decode_meta(ty, raw))?;
        if read.is_none() && self.grouped && self.eng.locks.held_by_group_here_for(key) {
            self.eng
                .with_group(|group| group.note_absent(place, raw_key));
        }
        Ok(read)
    }

    /// The view of `key` from its metadata records of each type, as
    /// `read` decodes them (`None`: no record).
    pub(crate) fn view_by(
        &self,
        key: &[u8],
        mut read: impl FnMut(
            Place,
            &[u8],
            DataType,
        ) -> Result<Option<Result<Meta, DecodeError>>, StoreError>,
    ) -> CmdResult<KeyView> {
        let types: &[DataType] = match self.caps().meta_lookup {
            MetaLookup::Shared => &[DataType::String],
            MetaLookup::PerType => &TYPE_ORDER,
        };
        let mut view = KeyView::default();
        for &ty in types {
            // A key a place cannot hold (too long for the format) is absent there.
            let Ok(record) = self.codec().meta_record(key, ty) else {
                continue;
            };
            let Some(decoded) = read(record.place, &record.key, ty)? else {
                continue;
            };
            let meta = self.counted(key, decoded.map_err(|e| undecodable(key, e))?)?;
            if !self.is_live(&meta) {
                if meta.expire_ms != 0 && meta.expired_at(self.expiry_now_ms()) {
                    self.expired.borrow_mut().push(key.to_vec());
                    self.met_expired(key, meta.expire_ms);
                }
                view.dead.push(meta);
            } else if view.live.is_none() {
                view.live = Some(meta);
            } else {
                view.shadowed.push(meta);
            }
        }
        if !view.shadowed.is_empty() {
            let mut met = self.shadowed.borrow_mut();
            for meta in &view.shadowed {
                let known = met
                    .iter()
                    .any(|(k, m)| k.as_slice() == key && m.data_type == meta.data_type);
                if !known {
                    met.push((key.to_vec(), meta.clone()));
                }
            }
        }
        Ok(view)
    }

    /// The types of `key` that [`TYPE_ORDER`] shadowed in the reads of
    /// this context so far (empty for a key held in one type).
    pub fn shadowed_types(&self, key: &[u8]) -> Vec<DataType> {
        self.shadowed
            .borrow()
            .iter()
            .filter(|(k, _)| k.as_slice() == key)
            .map(|(_, m)| m.data_type)
            .collect()
    }

    /// Queues the removal of the values of `key` that [`TYPE_ORDER`]
    /// shadowed, once: the command writes the key.
    fn drop_shadowed(&mut self, key: &[u8]) -> CmdResult<()> {
        let taken: Vec<Meta> = {
            let mut met = self.shadowed.borrow_mut();
            if met.is_empty() {
                return Ok(());
            }
            let (mine, rest) = std::mem::take(&mut *met)
                .into_iter()
                .partition(|(k, _)| k.as_slice() == key);
            *met = rest;
            mine.into_iter().map(|(_, m)| m).collect()
        };
        taken
            .iter()
            .try_for_each(|meta| self.remove_value(key, meta))
    }

    /// What [`Ctx::create`] needs to know to overwrite `key` with a string,
    /// whatever it holds. Where one shared metadata record decides a key and
    /// element records carry versions, writing the new metadata record is the
    /// whole replacement (old elements are orphaned and collected by
    /// compaction), so nothing is read. Where each type has its own
    /// metadata record and strings carry no version, the string's own
    /// record is not read either (the new one replaces it, live or
    /// expired); the other types' are, to be removed. Otherwise this is
    /// [`Ctx::view`].
    pub fn view_for_overwrite(&self, key: &[u8]) -> CmdResult<KeyView> {
        // Whether the key was there, or expired, is announced.
        let announced = EventClasses::NEW.with(EventClasses::EXPIRED);
        if self.eng.key_event_classes().publishes(announced) {
            return self.view(key);
        }
        let caps = self.caps();
        if caps.meta_lookup == MetaLookup::Shared && caps.version_width != VersionWidth::None {
            return Ok(KeyView::default());
        }
        if caps.meta_lookup == MetaLookup::PerType && !caps.string_version {
            return self.view_by(key, |place, raw_key, ty| {
                if ty == DataType::String {
                    return Ok(None);
                }
                self.read_meta(key, place, raw_key, ty)
            });
        }
        self.view(key)
    }

    /// Decodes the metadata of `key` read from the place of `ty`. When the
    /// format stored no element count ([`Capabilities::size_unknown`]), the
    /// elements are counted, so `size` is exact for every command.
    pub fn decode_meta(&self, key: &[u8], ty: DataType, raw: &[u8]) -> CmdResult<Meta> {
        let meta = self
            .codec()
            .decode_meta(ty, raw)
            .map_err(|e| undecodable(key, e))?;
        self.counted(key, meta)
    }

    /// `meta` with its exact size: counted in the element records when the
    /// format stored no count ([`Capabilities::size_unknown`]).
    fn counted(&self, key: &[u8], mut meta: Meta) -> CmdResult<Meta> {
        if meta.data_type.is_collection() && self.caps().size_unknown(&meta) {
            meta.size = self.count_elements(key, &meta)?;
        }
        Ok(meta)
    }

    /// The number of elements of a collection, counted in its records.
    fn count_elements(&self, key: &[u8], meta: &Meta) -> CmdResult<u64> {
        let Some(&kind) = kinds_of(meta.data_type).first() else {
            return Ok(0);
        };
        let range = self.codec().sub_range(kind.of(key, meta));
        let mut it = self.scan(&range, None, false);
        let mut n = 0u64;
        while it.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    /// Whether a collection is deleted with range deletes: the format
    /// deletes that way from `min_size` elements, or its size is unknown.
    fn deletes_by_range(&self, meta: &Meta) -> bool {
        match self.caps().delete {
            DeleteModel::RemoveElements { min_size } => {
                meta.size >= min_size || self.caps().size_unknown(meta)
            }
            _ => false,
        }
    }

    /// The live metadata of type `ty` under `key`, whether commands see it
    /// or [`TYPE_ORDER`] shadows it (for `check`).
    pub fn meta_of_type(&self, key: &[u8], ty: DataType) -> CmdResult<Option<Meta>> {
        let view = self.view(key)?;
        Ok(view
            .live
            .into_iter()
            .chain(view.shadowed)
            .find(|m| m.data_type == ty))
    }

    /// The live metadata of `key`, of any type: a lookup, which a
    /// client's read command counts as a keyspace hit or miss.
    pub fn live(&self, key: &[u8]) -> CmdResult<Option<Meta>> {
        let live = self.view(key)?.live;
        if let Some(lookups) = self.lookups {
            lookups.count(live.is_some());
            if live.is_none() {
                self.notify(EventClasses::KEY_MISS, "keymiss", key);
            }
        }
        Ok(live)
    }

    /// The live metadata of `key` if it has type `ty`; `WRONGTYPE` if it
    /// holds another type.
    pub fn typed(&self, key: &[u8], ty: DataType) -> CmdResult<Option<Meta>> {
        match self.live(key)? {
            Some(m) if m.data_type == ty => Ok(Some(m)),
            Some(_) => Err(CmdError::WrongType),
            None => Ok(None),
        }
    }

    /// The live metadata of `key` of type `ty`, or fresh metadata for a new
    /// collection (not yet written). `WRONGTYPE` if it holds another type.
    pub fn typed_or_create(&mut self, key: &[u8], ty: DataType) -> CmdResult<Meta> {
        let view = self.view(key)?;
        match &view.live {
            Some(m) if m.data_type == ty => {
                self.drop_shadowed(key)?;
                Ok(m.clone())
            }
            Some(_) => Err(CmdError::WrongType),
            None => self.create(key, ty, &view),
        }
    }

    /// Fresh metadata for a new value of type `ty` at `key`, replacing
    /// whatever is there (the caller has checked types). Queues the removal
    /// of anything the new value's records would not overwrite.
    pub fn create(&mut self, key: &[u8], ty: DataType, view: &KeyView) -> CmdResult<Meta> {
        // A key the format cannot store fails here, before any element is
        // queued. (A string is checked by the `put_meta` that follows.)
        if ty != DataType::String {
            self.codec().meta_record(key, ty)?;
        }
        self.drop_shadowed(key)?;
        if view.live.is_none() {
            self.notify(EventClasses::NEW, "new", key);
        }
        if let Some(live) = &view.live {
            let other_place =
                self.caps().meta_lookup == MetaLookup::PerType && live.data_type != ty;
            let unversioned = self.caps().version_width == VersionWidth::None;
            if other_place || (unversioned && live.data_type.is_collection()) {
                self.remove_key(key, live)?;
            }
        }
        if self.caps().version_width == VersionWidth::None {
            self.remove_dead_now(key, view)?;
        }
        let previous = view
            .live
            .iter()
            .chain(&view.dead)
            .filter(|m| m.data_type == ty || self.caps().meta_lookup == MetaLookup::Shared)
            .map(|m| m.version)
            .max();
        if ty == DataType::String {
            let mut meta = Meta::string(Vec::new(), 0);
            // A format that stamps strings (Capabilities::string_version)
            // gets a version as a new collection does.
            if self.caps().string_version {
                meta.version = self.eng.next_version(previous);
            }
            return Ok(meta);
        }
        // A record of the type still stored (expired or emptied) is
        // re-used the format's way (Codec::reset_meta); otherwise the key
        // is new.
        let stale = view.dead.iter().find(|m| m.data_type == ty);
        let meta_at = |version| match stale {
            Some(old) => self.codec().reset_meta(old, version),
            None => self.codec().new_meta(ty, version),
        };
        let mut meta = meta_at(self.eng.next_version(previous));
        // A version the key held before may still have element records
        // (Capabilities::version_may_repeat): take the next one.
        if self.caps().version_may_repeat && !view.nothing_stored {
            while self.has_elements(key, &meta)? {
                meta = meta_at(self.eng.next_version(Some(meta.version)));
            }
        }
        Ok(meta)
    }

    /// Whether any element record of `meta`'s version of `key` is stored.
    fn has_elements(&self, key: &[u8], meta: &Meta) -> CmdResult<bool> {
        let Some(&kind) = kinds_of(meta.data_type).first() else {
            return Ok(false);
        };
        let range = self.codec().sub_range(kind.of(key, meta));
        Ok(self.scan(&range, None, false).next()?.is_some())
    }

    /// Without versions, the records of an expired collection would still
    /// be read as the new value's by the rest of the command (a member
    /// "already there", an old score). Their removal is queued first in the
    /// command's batch, the way Ardb deletes an expired key it meets
    /// (`CheckMeta`); the command's point reads of elements see the queued
    /// deletions ([`Ctx::sub_get`]), and a fresh collection is otherwise
    /// only written, never scanned, by the command that creates it.
    fn remove_dead_now(&mut self, key: &[u8], view: &KeyView) -> CmdResult<()> {
        view.dead
            .iter()
            .filter(|dead| dead.data_type.is_collection())
            .try_for_each(|dead| self.remove_key(key, dead))
    }

    /// Queues a metadata write.
    pub fn put_meta(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        self.put_meta_with(key, meta, &meta.value)
    }

    /// [`Ctx::put_meta`] with `string` as a string's payload in place of
    /// [`Meta::value`]: the value a client sent is encoded as it came.
    pub fn put_meta_with(&mut self, key: &[u8], meta: &Meta, string: &[u8]) -> CmdResult<()> {
        self.drop_shadowed(key)?;
        if meta.expire_ms != 0
            && self
                .eng
                .key_event_classes()
                .publishes(EventClasses::EXPIRED)
        {
            self.eng
                .expiry_watch
                .lock()
                .insert((meta.expire_ms, key.to_vec()));
        }
        let record = self.codec().meta_record(key, meta.data_type)?;
        let value = self.codec().encode_meta_with(meta, string)?;
        self.batch.put(record.place, record.key, value);
        Ok(())
    }

    /// Queues the metadata of a collection after its elements changed: kept,
    /// or removed when it became empty (unless the format keeps empty
    /// metadata for the type).
    pub fn save(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        self.drop_shadowed(key)?;
        if meta.data_type.is_collection() && meta.size == 0 {
            if self.caps().keeps_empty_meta.contains(&meta.data_type) {
                return self.put_meta(key, meta);
            }
            let record = self.codec().meta_record(key, meta.data_type)?;
            self.batch.delete(record.place, record.key);
            return Ok(());
        }
        self.put_meta(key, meta)
    }

    /// Queues the deletion of a key's value, the way the format deletes,
    /// with any value of another type it shadowed ([`TYPE_ORDER`]).
    pub fn remove_key(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        self.drop_shadowed(key)?;
        self.remove_value(key, meta)
    }

    /// Queues the deletion of one value of `key`, the way the format deletes.
    fn remove_value(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        let record = self.codec().meta_record(key, meta.data_type)?;
        if meta.data_type == DataType::String {
            self.batch.delete(record.place, record.key);
            return Ok(());
        }
        match self.caps().delete {
            DeleteModel::DropMeta => self.batch.delete(record.place, record.key),
            DeleteModel::ResetMeta => {
                let fresh = self
                    .codec()
                    .reset_meta(meta, self.eng.next_version(Some(meta.version)));
                let value = self.codec().encode_meta(&fresh)?;
                self.batch.put(record.place, record.key, value);
            }
            DeleteModel::RemoveElements { .. } => match self.codec().key_range(key) {
                // One range holds the whole key: delete it at once, or
                // record by record.
                Some(range) if self.deletes_by_range(meta) => self.batch.delete_range(&range),
                Some(range) => {
                    let mut it = self.scan(&range, None, false);
                    while let Some((k, _)) = it.next()? {
                        self.batch.delete(range.place, k);
                    }
                }
                None => {
                    self.clear_elements(key, meta)?;
                    self.batch.delete(record.place, record.key);
                }
            },
        }
        Ok(())
    }

    /// Queues the deletion of every element record of a collection: by
    /// range when the format deletes large collections that way, else one
    /// by one.
    pub fn clear_elements(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        let by_range = self.deletes_by_range(meta);
        for &kind in kinds_of(meta.data_type) {
            let range = self.codec().sub_range(kind.of(key, meta));
            if by_range {
                self.batch.delete_range(&range);
                continue;
            }
            let mut it = self.scan(&range, None, false);
            while let Some((k, _)) = it.next()? {
                self.batch.delete(range.place, k);
            }
        }
        Ok(())
    }

    /// Sets the absolute expiry (unix ms; 0 clears it) in `meta`, rounded to
    /// the format's resolution. Expiries the format cannot hold are errors,
    /// raised before anything is written: a command that fails here leaves
    /// the store as it was (its batch is never committed).
    ///
    /// With [`TtlResolution::Seconds`] the absolute expiry is rounded **up**
    /// to a whole second: `stored = ceil(expire_ms / 1000) * 1000`. A key
    /// never expires before Redis would have expired it, and at most 999 ms
    /// after; an expiry already on a whole second is kept exactly. The
    /// rounding applies to every way of setting an expiry (EXPIRE, PEXPIRE,
    /// EXPIREAT, PEXPIREAT, SET EX/PX/EXAT/PXAT, SETEX, PSETEX, GETEX);
    /// TTL and PTTL then report the stored expiry minus the current time in
    /// ms (TTL rounding that to the nearest second, as Redis does). A key is
    /// live up to and including the millisecond of its stored expiry.
    ///
    /// A format declaring [`RelativeExpiry::SecondsMinusOne`] stores
    /// whole seconds it keeps a key live through: an absolute expiry is
    /// stored as the second that holds it, and an expiry given relative to
    /// now (see [`Ctx::set_expire_at`]) as `now_s + ttl_s - 1`; see
    /// [`stored_expiry_at`].
    pub fn set_expire(&self, meta: &mut Meta, expire_ms: u64) -> CmdResult<()> {
        self.set_expire_at(meta, ExpireAt::absolute(expire_ms))
    }

    /// [`Ctx::set_expire`] for an expiry that may have been given relative
    /// to the command's time.
    pub fn set_expire_at(&self, meta: &mut Meta, expire: ExpireAt) -> CmdResult<()> {
        let expire_ms = expire.ms;
        let stored = stored_expiry_at(self.caps(), self.now_ms(), expire);
        let max = self.caps().max_expire_ms;
        // Stored seconds lived through end after `max`: the limit applies
        // to the expiry asked for.
        let checked = match self.caps().relative_expiry {
            RelativeExpiry::Exact => stored,
            RelativeExpiry::SecondsMinusOne => expire_ms,
        };
        if checked > max {
            return Err(CmdError::other(format!(
                "ERR expire time {expire_ms} ms is past the latest this format stores \
                 ({max} ms, {})",
                iso_utc(max)
            )));
        }
        meta.expire_ms = stored;
        Ok(())
    }

    /// Reads one element record: `None` when it is missing, or when it
    /// belongs to an older version of the key ([`Codec::sub_is_current`]).
    pub fn sub_get(
        &self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        id: SubIdRef<'_>,
    ) -> CmdResult<Option<SubValue>> {
        self.sub_get_at(kind, key, meta, &self.sub_key(kind, key, meta, id))
    }

    /// The key of the element record `id`, for a command that reads the
    /// record and then writes it: made once, read with
    /// [`Ctx::sub_get_at`] and written with [`Ctx::sub_put_at`].
    pub fn sub_key(&self, kind: SubKind, key: &[u8], meta: &Meta, id: SubIdRef<'_>) -> Vec<u8> {
        self.codec().sub_key(kind.of(key, meta), id)
    }

    /// [`Ctx::sub_get_at`] of a hash field, set member or sorted-set
    /// member in the collection as it stands: none in one of size 0 (a new
    /// key), whatever stale records a version-less format still holds
    /// under its key, and without a read.
    pub fn member_at(
        &self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        raw_key: &[u8],
    ) -> CmdResult<Option<SubValue>> {
        if meta.size == 0 {
            return Ok(None);
        }
        self.sub_get_at(kind, key, meta, raw_key)
    }

    /// [`Ctx::sub_get`] of the record whose key is `raw_key`
    /// ([`Ctx::sub_key`]).
    pub fn sub_get_at(
        &self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        raw_key: &[u8],
    ) -> CmdResult<Option<SubValue>> {
        let place = self.codec().sub_place(kind, key);
        let of = kind.of(key, meta);
        // A record this command already wrote or deleted reads as written:
        // a command that writes an element and reads it back (a linked list
        // push after a push, a migration appending chunks) sees its own
        // writes.
        if !self.batch.is_empty() {
            let order = self.eng.store.order(place);
            if let Some(pending) = self.batch.pending(place, raw_key, order) {
                let Some(raw) = pending else {
                    return Ok(None);
                };
                if !self.codec().sub_is_current(of, raw) {
                    return Ok(None);
                }
                return self
                    .codec()
                    .decode_sub_value(of, raw)
                    .map(Some)
                    .map_err(|e| corrupt(key, e));
            }
        }
        let decoded = self.get_with(place, raw_key, |raw| {
            if !self.codec().sub_is_current(of, raw) {
                return None;
            }
            Some(self.codec().decode_sub_value(of, raw))
        })?;
        decoded.flatten().transpose().map_err(|e| corrupt(key, e))
    }

    /// Queues an element record write.
    pub fn sub_put(
        &mut self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        id: SubIdRef<'_>,
        value: SubValueRef<'_>,
    ) {
        let raw_key = self.sub_key(kind, key, meta, id);
        self.sub_put_at(kind, key, meta, raw_key, value);
    }

    /// [`Ctx::sub_put`] of the record whose key is `raw_key`
    /// ([`Ctx::sub_key`]).
    pub fn sub_put_at(
        &mut self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        raw_key: Vec<u8>,
        value: SubValueRef<'_>,
    ) {
        let place = self.codec().sub_place(kind, key);
        let raw_value = self.codec().encode_sub_value(kind.of(key, meta), value);
        self.batch.put(place, raw_key, raw_value);
    }

    /// Queues an element record deletion.
    pub fn sub_del(&mut self, kind: SubKind, key: &[u8], meta: &Meta, id: SubIdRef<'_>) {
        let place = self.codec().sub_place(kind, key);
        let raw_key = self.codec().sub_key(kind.of(key, meta), id);
        self.batch.delete(place, raw_key);
    }

    /// Iterates the element records of `kind`, forward or backward, from the
    /// start (or from `from`, inclusive). Records of older versions of the
    /// key ([`Codec::sub_is_current`]) are skipped.
    pub fn subs<'k>(
        &self,
        kind: SubKind,
        key: &'k [u8],
        meta: &'k Meta,
        from: Option<SubIdRef<'_>>,
        reverse: bool,
    ) -> SubIter<'e, 'k, C, S> {
        let codec = self.codec();
        let range = codec.sub_range(kind.of(key, meta));
        let start = from.map(|id| codec.sub_key(kind.of(key, meta), id));
        SubIter::over(
            codec,
            kind,
            key,
            meta,
            self.scan(&range, start.as_deref(), reverse),
        )
    }
}

/// Decoded element records of one key, read on `I` (an iterator of
/// their own, or a family's kept iterator: [`crate::internals::cursors`]).
pub struct SubIter<
    'e,
    'k,
    C: Codec,
    S: KvStore = DefaultStore,
    I = GroupIter<<S as KvStore>::Iter<'e>>,
> {
    codec: &'e C,
    kind: SubKind,
    key: &'k [u8],
    meta: &'k Meta,
    it: I,
    _store: std::marker::PhantomData<fn() -> S>,
}

impl<'e, 'k, C: Codec, S: KvStore, I: KvIter> SubIter<'e, 'k, C, S, I> {
    /// The element records of `kind` of `key` that `it` yields.
    pub(crate) fn over(codec: &'e C, kind: SubKind, key: &'k [u8], meta: &'k Meta, it: I) -> Self {
        SubIter {
            codec,
            kind,
            key,
            meta,
            it,
            _store: std::marker::PhantomData,
        }
    }
}

impl<C: Codec, S: KvStore, I: KvIter> Iterator for SubIter<'_, '_, C, S, I> {
    type Item = CmdResult<(SubId, SubValue)>;

    fn next(&mut self) -> Option<Self::Item> {
        let of = self.kind.of(self.key, self.meta);
        let (k, v) = loop {
            match self.it.next() {
                Ok(Some((k, v))) if self.codec.sub_is_current(of, &v) => break (k, v),
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => return Some(Err(e.into())),
            }
        };
        let decoded = self
            .codec
            .decode_sub_key(of, &k)
            .and_then(|id| self.codec.decode_sub_value(of, &v).map(|val| (id, val)))
            .map_err(|e| corrupt(self.key, e));
        Some(decoded)
    }
}

/// An expiry as a command gives it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ExpireAt {
    /// Absolute unix milliseconds (for a relative expiry, the command's
    /// time plus the TTL); 0: no expiry.
    pub ms: u64,
    /// Whether the command gave it relative to now (`EX`, `PX`, `EXPIRE`,
    /// `PEXPIRE`, `SETEX`, `PSETEX`).
    pub relative: bool,
}

impl ExpireAt {
    /// An absolute expiry (0: none).
    pub fn absolute(ms: u64) -> ExpireAt {
        ExpireAt {
            ms,
            relative: false,
        }
    }

    /// An expiry given as a TTL: `ms` is the command's time plus the TTL.
    pub fn relative(ms: u64) -> ExpireAt {
        ExpireAt { ms, relative: true }
    }
}

impl From<u64> for ExpireAt {
    fn from(ms: u64) -> ExpireAt {
        ExpireAt::absolute(ms)
    }
}

/// The expiry a format with capabilities `caps` stores for `expire` set at
/// `now_ms` (0 stays 0):
///
/// - [`RelativeExpiry::Exact`]: [`stored_expiry`] of the absolute time;
/// - [`RelativeExpiry::SecondsMinusOne`]: the stored second `s` keeps the
///   key live through its last millisecond, `s * 1000 + 999`. An absolute
///   expiry is stored in the second that holds it, `s = floor(ms / 1000)`:
///   the key never expires before Redis would expire it, and at most
///   999 ms after. A relative one is stored as nemo stores it,
///   `s = floor(now_ms / 1000) + ceil(ttl_ms / 1000) - 1`: a TTL given at
///   a whole second expires 1 ms before Redis would expire it (Redis keeps
///   the key through the millisecond `now + ttl`), one given later in a
///   second up to a second earlier.
pub fn stored_expiry_at(caps: &Capabilities, now_ms: u64, expire: ExpireAt) -> u64 {
    if expire.ms == 0 {
        return 0;
    }
    match caps.relative_expiry {
        RelativeExpiry::Exact => stored_expiry(caps.ttl, expire.ms),
        RelativeExpiry::SecondsMinusOne => {
            let second = if expire.relative {
                let ttl_s = expire.ms.saturating_sub(now_ms).div_ceil(1000);
                (now_ms / 1000).saturating_add(ttl_s).saturating_sub(1)
            } else {
                expire.ms / 1000
            };
            second.saturating_mul(1000).saturating_add(999)
        }
    }
}

/// The expiry a store with capabilities `caps` keeps for a key that must
/// stay live through `expire_ms` (unix ms; 0: none): itself in
/// milliseconds; rounded up to a whole second by a whole-second format; and
/// by a format that keeps a key live *through* its stored second
/// ([`RelativeExpiry::SecondsMinusOne`]), the second before that one, which
/// it decodes as `ceil(expire_ms / 1000) * 1000 - 1`. The two second-based
/// rules then differ by exactly 1 ms, the same offset as nemo's
/// `now + ttl - 1`, so an expiry copied between any two formats and back
/// is the one it started from at the coarser format's resolution.
/// Migration writes and compares expiries this way.
pub fn migrated_expiry(caps: &Capabilities, expire_ms: u64) -> u64 {
    if expire_ms == 0 {
        return 0;
    }
    let whole_second = stored_expiry(caps.ttl, expire_ms);
    match (caps.ttl, caps.relative_expiry) {
        (TtlResolution::Seconds, RelativeExpiry::SecondsMinusOne) => whole_second - 1,
        _ => whole_second,
    }
}

/// The absolute expiry stored for `expire_ms` at resolution `ttl`: itself
/// in milliseconds, rounded up to a whole second in seconds.
pub fn stored_expiry(ttl: TtlResolution, expire_ms: u64) -> u64 {
    match ttl {
        TtlResolution::Millis => expire_ms,
        TtlResolution::Seconds => expire_ms.div_ceil(1000).saturating_mul(1000),
    }
}

/// `ms` (unix milliseconds) as `YYYY-MM-DDTHH:MM:SSZ`, for messages.
pub fn iso_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The element kinds a type stores.
pub fn kinds_of(ty: DataType) -> &'static [SubKind] {
    match ty {
        DataType::String => &[],
        DataType::Hash => &[SubKind::HashField],
        DataType::Set => &[SubKind::SetMember],
        DataType::List => &[SubKind::ListItem],
        DataType::ZSet => &[SubKind::ZSetMember, SubKind::ZSetScore],
    }
}

/// The error reply for undecodable bytes under `key`.
/// The error for metadata of `key` that does not decode: a type redcodec
/// does not model, or corrupt bytes.
pub fn undecodable(key: &[u8], e: redcodec_codec::DecodeError) -> CmdError {
    match e {
        redcodec_codec::DecodeError::Unmodelled { type_name, .. } => CmdError::Unmodelled {
            key: key.to_vec(),
            type_name,
        },
        e => corrupt(key, e),
    }
}

/// The error for bytes under `key` that do not decode.
pub fn corrupt(key: &[u8], e: impl std::fmt::Display) -> CmdError {
    CmdError::other(format!(
        "ERR data under key {} is unreadable: {e}",
        quote_bytes(key)
    ))
}

#[cfg(test)]
mod expiry_tests {
    use super::*;

    #[test]
    fn seconds_round_up_and_whole_seconds_stay() {
        let s = TtlResolution::Seconds;
        assert_eq!(stored_expiry(s, 1_700_000_000_000), 1_700_000_000_000);
        assert_eq!(stored_expiry(s, 1_700_000_000_001), 1_700_000_001_000);
        assert_eq!(stored_expiry(s, 1_700_000_000_999), 1_700_000_001_000);
        assert_eq!(stored_expiry(TtlResolution::Millis, 7), 7);
    }

    #[test]
    fn seconds_minus_one_lives_through_the_stored_second() {
        let mut caps = seconds_caps();
        caps.relative_expiry = RelativeExpiry::SecondsMinusOne;
        let t = 1_700_000_000_000;
        let at = |now, e| stored_expiry_at(&caps, now, e);
        // EXPIRE k 100 at a whole second: second T+99, lived through.
        assert_eq!(at(t, ExpireAt::relative(t + 100_000)), t + 99_999);
        // Later in the second: now is truncated, as nemo does.
        assert_eq!(at(t + 700, ExpireAt::relative(t + 100_700)), t + 99_999);
        // A TTL in ms counts as whole seconds, rounded up.
        assert_eq!(at(t, ExpireAt::relative(t + 100)), t + 999);
        assert_eq!(at(t + 950, ExpireAt::relative(t + 2_950)), t + 1_999);
        // Absolute: the second that holds the instant.
        assert_eq!(at(t, ExpireAt::absolute(t + 5_000)), t + 5_999);
        assert_eq!(at(t, ExpireAt::absolute(t + 5_001)), t + 5_999);
        assert_eq!(at(t, ExpireAt::absolute(0)), 0);
        assert_eq!(at(t, ExpireAt::relative(0)), 0);
        let exact = seconds_caps();
        assert_eq!(
            stored_expiry_at(&exact, t, ExpireAt::relative(t + 100)),
            t + 1000
        );
        assert_eq!(
            stored_expiry_at(&exact, t, ExpireAt::absolute(t + 5_001)),
            t + 6_000
        );
    }

    /// Capabilities of a whole-second format: Kvrocks' but for the TTL
    /// resolution (only it and the relative-expiry rule matter here).
    fn seconds_caps() -> Capabilities {
        Capabilities {
            ttl: TtlResolution::Seconds,
            relative_expiry: RelativeExpiry::Exact,
            ..redcodec_kvrocks::KvrocksCodec::default()
                .capabilities()
                .clone()
        }
    }

    #[test]
    fn dates_print_in_utc() {
        for (ms, text) in [
            (2_147_483_647_000, "2038-01-19T03:14:07Z"),
            (0, "1970-01-01T00:00:00Z"),
            (1_700_000_000_000, "2023-11-14T22:13:20Z"),
            (951_782_400_000, "2000-02-29T00:00:00Z"),
        ] {
            assert_eq!(iso_utc(ms), text, "{ms}");
        }
    }
}
