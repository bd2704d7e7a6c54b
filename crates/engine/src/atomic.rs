//! [`Engine::atomically`]: a group of commands committed as one store
//! write.

use std::sync::atomic::Ordering;

use redcodec_codec::{Codec, DataType};

use crate::core::{EngineCore, ThreadGroup};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::key_events::KeyEvent;
use crate::store::{Group, KvStore};

impl<C: Codec, S: KvStore> Engine<C, S> {
    /// Runs `run` with every store write of this engine deferred into one
    /// group, then commits the group as one atomic store write.
    ///
    /// # What `run` sees
    /// Inside `run`, the caller issues ordinary commands
    /// ([`Engine::execute`], the typed writes of [`crate::typed`], …) on
    /// this engine, from the calling thread. Each command reads the store
    /// with the group's earlier writes laid over it — point reads, and
    /// scans forward or reverse, from a key or after a seek, with deleted
    /// ranges, in each column family's own order — so its reply is the
    /// one it would give had every earlier command of the group been
    /// written. Nothing of the group reaches the store, nor any other
    /// reader, before the commit.
    ///
    /// # Commit
    /// After `run` returns, the group's writes go to the store as one
    /// [`KvStore::write`] (each key's last write, after the ranges the
    /// group deleted): one RocksDB write batch, or — where the group
    /// touches several instances (blackwidow and nemo keep one per type,
    /// floyd spreads keys over three) — one batch per instance under one
    /// intent record, so a crash leaves all of the group or none of it. A
    /// group that wrote nothing writes nothing. Returns `run`'s value, or
    /// the store's error when the commit fails: then nothing of the group
    /// was applied (the RocksDB store's one exception, documented at its
    /// `Store::write`: a multi-instance write that failed
    /// after its first instance is completed from its intent record before
    /// any later read or write, so the group then happened whole).
    ///
    /// # Concurrency
    /// The engine stays `Send + Sync`. The group holds every key lock of
    /// the engine (as `FLUSHALL` does) from before `run` until the commit
    /// is written: commands of other threads — keyed or not, and the
    /// active-expiry task — wait until then, so none sees or joins the
    /// open group, and none writes under it. Lock-free reads of other
    /// threads (the typed reads of [`crate::typed`], a replica's
    /// snapshot) see the store before the group. The calling thread's own
    /// lock requests are granted at once while the group is open. A
    /// thread that `run` starts and waits for must not use this engine
    /// (it would wait for the group, and the group for it). Called again
    /// inside `run`, on the same thread, `atomically` runs its closure in
    /// the open group and returns `Ok`: the outer group commits both. If
    /// `run` panics, the group is dropped unwritten and the locks are
    /// released.
    ///
    /// # State beside the store
    /// What the engine keeps in memory is updated as each command runs,
    /// and is not rolled back when the commit fails:
    /// - versions ([`EngineCore::version_counter`]) handed out by the
    ///   group's commands stay used: versions only have to grow, and a
    ///   failed single command skips them the same way;
    /// - SCAN cursors issued inside the group stay valid (a cursor names a
    ///   position in the keyspace, not a state of it);
    /// - the observer ([`crate::observe`]) is told of each command as it
    ///   finishes inside the group, on the calling thread, reading the
    ///   state the command left through the group; when the commit then
    ///   fails, it has been told of writes that did not happen (a server
    ///   ends the transaction it replicates with `DISCARD` then).
    pub fn atomically<T>(&self, run: impl FnOnce(&Self) -> T) -> Result<T, EngineError> {
        if self.in_group() {
            // Already in this thread's group: it commits this too.
            return Ok(run(self));
        }
        let Some(held) = self.locks.hold_for_group() else {
            return Ok(run(self));
        };
        self.run_group(held, Commit::Whole, |e| Ok::<T, Never>(run(e)), || {})
            .map(Never::unwrap)
    }

    /// Runs `run` as one group, as [`Engine::atomically`] does, but holding
    /// only the locks of `keys` instead of every lock of the engine:
    /// groups and commands of other threads on other keys run meanwhile.
    ///
    /// Every command `run` issues must lock only keys among `keys` (a
    /// caller derives them from the commands' key positions, as
    /// [`Engine::execute`] does): no keyless command (its shared keyspace
    /// lock), no keyspace-wide command (`FLUSHALL`), no key outside
    /// `keys` (its lock would be taken out of order, and two such groups
    /// could deadlock). What `run` sees, the commit, and the state beside
    /// the store are as for [`Engine::atomically`]; lock-free reads of
    /// other threads see the store before the group.
    ///
    /// # Commit, where each command wrote one instance
    /// Unlike [`Engine::atomically`], the group is a pipeline of
    /// independent commands, not one transaction: where the codec keeps
    /// every key in one instance ([`Capabilities::key_in_one_instance`](redcodec_codec::Capabilities::key_in_one_instance):
    /// one-instance stores, floyd) and each command of the group wrote
    /// one instance, the group commits as one atomic write per instance
    /// ([`KvStore::write_per_instance`]), without the intent record and
    /// its syncs that a write across instances takes. Each command is
    /// still applied whole (its writes are in one instance's batch), and
    /// each key's writes in order; a crash between two instances' writes
    /// keeps the group's commands on the keys of the instances written,
    /// none of the others' (their clients had no reply yet). A group
    /// with a command that wrote two instances (`MSET` of keys in both)
    /// commits as [`Engine::atomically`]'s does.
    ///
    /// After a successful commit, and before the locks are released,
    /// `committed` runs: what it does (a server appending the group's
    /// writes to its replication stream) is ordered, for each key, with
    /// the commands of other threads on that key as the writes were. It
    /// does not run when the commit fails. Called inside an open group of
    /// this thread, `run` runs in that group, `committed` at once, and
    /// the outer group commits both.
    pub fn atomically_on<T>(
        &self,
        keys: &[&[u8]],
        run: impl FnOnce(&Self) -> T,
        committed: impl FnOnce(),
    ) -> Result<T, EngineError> {
        if self.in_group() {
            let out = run(self);
            committed();
            return Ok(out);
        }
        let Some(held) = self.locks.hold_keys_for_group(keys) else {
            let out = run(self);
            committed();
            return Ok(out);
        };
        self.run_group(
            held,
            self.key_group_commit(),
            |e| Ok::<T, Never>(run(e)),
            committed,
        )
        .map(Never::unwrap)
    }

    /// Runs `run` as one group on `keys`, as [`Engine::atomically_on`]
    /// does, or abandons it: when `run` returns `Err`, nothing of the
    /// group reaches the store, `committed` does not run, the locks are
    /// released, and the error is returned inside `Ok`. What the group
    /// left beside the store stays as [`Engine::atomically`] describes
    /// (versions used, the observer told of its commands): a caller that
    /// abandons discards what it held back for them.
    ///
    /// A server runs scripts side by side this way, each group holding
    /// the keys the scripts declared, and abandons a group whose script
    /// reaches for another key, to run it again holding the engine whole.
    ///
    /// Called inside an open group of this thread, the group cannot be
    /// abandoned: `run` runs in it, and its writes stay in the outer
    /// group whatever it returns (`committed` runs when it returns `Ok`).
    pub fn atomically_on_or_abandon<T, A>(
        &self,
        keys: &[&[u8]],
        run: impl FnOnce(&Self) -> Result<T, A>,
        committed: impl FnOnce(),
    ) -> Result<Result<T, A>, EngineError> {
        let held = match self.in_group() {
            true => None,
            false => self.locks.hold_keys_for_group(keys),
        };
        let Some(held) = held else {
            let out = run(self);
            if out.is_ok() {
                committed();
            }
            return Ok(out);
        };
        self.run_group(held, self.key_group_commit(), run, committed)
    }

    /// How a group on known keys commits (see [`Engine::atomically_on`]).
    fn key_group_commit(&self) -> Commit {
        if self.codec.capabilities().key_in_one_instance {
            Commit::PerInstanceIfEachCommandIs
        } else {
            Commit::Whole
        }
    }

    /// The instance that holds every record of `key`, where the store
    /// has several and the codec keeps each key in one
    /// ([`Capabilities::key_in_one_instance`](redcodec_codec::Capabilities::key_in_one_instance):
    /// floyd); `None` for a store of one instance, or one that keeps a key
    /// in the instance of its type (blackwidow, nemo). Commands whose keys
    /// share an instance, grouped by [`Engine::atomically_on`], commit as
    /// one atomic write.
    pub fn key_instance(&self, key: &[u8]) -> Option<usize> {
        let one_of_several = self.codec.capabilities().key_in_one_instance
            && self.codec.layout().instances.len() > 1;
        if !one_of_several {
            return None;
        }
        let record = self.codec.meta_record(key, DataType::String).ok()?;
        Some(record.place.instance)
    }

    /// Runs `run` in a new group of this thread, `held` holding its
    /// locks, and commits it (see [`Engine::atomically`]).
    /// An `Err` of `run` abandons the group: nothing is written.
    fn run_group<T, A>(
        &self,
        held: crate::locks::Held<'_>,
        commit: Commit,
        run: impl FnOnce(&Self) -> Result<T, A>,
        committed: impl FnOnce(),
    ) -> Result<Result<T, A>, EngineError> {
        let open = OpenGroup::open(self);
        let out = run(self);
        let (group, events) = open.close();
        if out.is_err() {
            drop(group);
            drop(held);
            return Ok(out);
        }
        if !group.is_empty() {
            let per_instance = matches!(commit, Commit::PerInstanceIfEachCommandIs)
                && group.each_batch_in_one_instance();
            if per_instance {
                self.store.write_per_instance(group.into_batch())?;
            } else {
                self.store.write(group.into_batch())?;
            }
        }
        self.publish_held_events(&events);
        committed();
        drop(held);
        Ok(out)
    }

    /// Whether the calling thread runs inside a group of this engine
    /// ([`Engine::atomically`], [`Engine::atomically_on`]).
    pub fn in_group(&self) -> bool {
        self.locks.held_by_group_here() || self.group_here()
    }
}

/// The error of a group that cannot be abandoned.
enum Never {}

impl Never {
    /// The value of a group that could not have been abandoned.
    fn unwrap<T>(out: Result<T, Never>) -> T {
        match out {
            Ok(t) => t,
            Err(never) => match never {},
        }
    }
}

/// How a group's writes reach the store.
enum Commit {
    /// One atomic store write, across instances too.
    Whole,
    /// One write per instance when each command of the group wrote one
    /// instance (and the codec keeps each key in one instance); else
    /// [`Commit::Whole`].
    PerInstanceIfEachCommandIs,
}

/// The open group of an engine; dropped unwritten if `run` panics.
struct OpenGroup<'a, C: Codec, S: KvStore> {
    core: &'a EngineCore<C, S>,
}

impl<'a, C: Codec, S: KvStore> OpenGroup<'a, C, S> {
    fn open(core: &'a EngineCore<C, S>) -> OpenGroup<'a, C, S> {
        let me = crate::locks::thread_id();
        core.groups.lock().push(ThreadGroup {
            thread: me,
            writes: Group::new(),
            events: Vec::new(),
        });
        core.open_groups.fetch_add(1, Ordering::AcqRel);
        OpenGroup { core }
    }

    /// Takes this thread's group, and the events it held, out of the
    /// engine.
    fn take(&self) -> Option<(Group, Vec<KeyEvent>)> {
        let me = crate::locks::thread_id();
        let mut groups = self.core.groups.lock();
        let at = groups.iter().position(|g| g.thread == me)?;
        self.core.open_groups.fetch_sub(1, Ordering::AcqRel);
        let group = groups.swap_remove(at);
        Some((group.writes, group.events))
    }

    /// The group's writes and the events its commands announced; the
    /// thread has no open group any more.
    fn close(self) -> (Group, Vec<KeyEvent>) {
        self.take().unwrap_or_default()
    }
}

impl<C: Codec, S: KvStore> Drop for OpenGroup<'_, C, S> {
    fn drop(&mut self) {
        self.take();
    }
}
