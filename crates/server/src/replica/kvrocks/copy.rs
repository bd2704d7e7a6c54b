//! The full copy: the fetched checkpoint opened read-only as a Kvrocks
//! store, every key of every namespace written into this server's engine
//! (a few hundred keys per RocksDB write, through the code RESTORE uses),
//! under the load marker of the Redis full copy: clients get `-LOADING`
//! meanwhile, and a replica killed in between flushes the half copy when
//! it starts again instead of serving it.

use bytes::Bytes;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use redcodec_codec::Codec;
use redcodec_engine::internals::keyspace::{Ctx, ExpireAt};
use redcodec_engine::typed::{KeyInfo, Stored};
use redcodec_engine::{value, Engine, EngineOptions};
use redcodec_kvrocks::layout::{NAMESPACE_TOKENS_KEY, PROPAGATE};
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};

use super::namespace_dest::destination;
use crate::access::Access;
use crate::durable::sync_dir;
use crate::namespace_replication;
use crate::replica::link_error::LinkError;
use crate::replica::load::{write_marker, MARKER_FILE};
use crate::runner;
use crate::session::Session;
use crate::state::Shared;

/// The spool directory's name in the data directory.
pub const SPOOL_DIR: &str = "redcodec-kvrocks-sync";

/// Keys per RocksDB write while copying.
const BATCH_KEYS: usize = 256;

/// The spool directory of the server's data directory.
pub fn spool_dir(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(SPOOL_DIR)
}

/// The stored values of one page of a copied store's keys: keys of types
/// redcodec does not model, and keys it cannot read, are counted as
/// unmodelled; a key expired between the walk and the read is left out.
pub(crate) fn read_page<C: Codec>(
    src: &Engine<C>,
    page: Vec<KeyInfo>,
    copied: &mut Copied,
) -> Vec<(Vec<u8>, Stored)> {
    let mut entries = Vec::with_capacity(page.len());
    for (key, data_type) in page {
        if data_type.is_none() {
            copied.unmodelled += 1;
            continue;
        }
        match src.read(&key) {
            Ok(Some(stored)) => entries.push((key, stored)),
            Ok(None) => {}
            Err(_) => copied.unmodelled += 1,
        }
    }
    entries
}

/// What a full copy did.
#[derive(Debug, Default)]
pub struct Copied {
    /// The checkpoint's last sequence number.
    pub sequence: u64,
    /// Keys copied.
    pub keys: u64,
    /// Keys of namespaces this format cannot hold.
    pub skipped: u64,
    /// Keys of types redcodec does not model.
    pub unmodelled: u64,
    /// Keys the engine refused.
    pub refused: u64,
}

impl Copied {
    /// The counts of keys left out, for the log line.
    pub fn note(&self) -> String {
        let mut note = String::new();
        if self.skipped > 0 {
            note += &format!(
                ", {} keys of other namespaces skipped (this format has one keyspace)",
                self.skipped
            );
        }
        if self.unmodelled > 0 {
            note += &format!(
                ", {} keys of types redcodec does not model skipped",
                self.unmodelled
            );
        }
        if self.refused > 0 {
            note += &format!(", {} keys refused by the engine skipped", self.refused);
        }
        note
    }
}

fn copy_error(what: &str, e: impl std::fmt::Display) -> LinkError {
    LinkError::Protocol(format!("the Kvrocks master's checkpoint: {what}: {e}"))
}

/// The checkpoint's last sequence number (RocksDB opened read-only, its
/// WAL replayed).
pub fn checkpoint_sequence(db: &Path) -> Result<u64, LinkError> {
    let opts = rocksdb::Options::default();
    let families = rocksdb::DB::list_cf(&opts, db)
        .map_err(|e| copy_error("listing its column families", e))?;
    let opened = rocksdb::DB::open_cf_for_read_only(&opts, db, families, false)
        .map_err(|e| copy_error("opening it", e))?;
    Ok(opened.latest_sequence_number())
}

/// Every namespace of this server's store, with the default one.
pub fn destination_namespaces(shared: &Shared) -> Vec<String> {
    let mut all: Vec<String> = (0..16)
        .filter_map(|db| crate::replica::load::namespace_of(shared, db))
        .collect();
    if let Some(default) = all.first().cloned() {
        if let Ok(engine) = shared.engines.shared(&default) {
            if let Ok(found) =
                redcodec_engine::internals::namespaces::namespaces(engine.codec(), engine.store())
            {
                all.extend(
                    found
                        .into_iter()
                        .map(|n| String::from_utf8_lossy(&n.name).into_owned()),
                );
            }
        }
    }
    all.sort();
    all.dedup();
    all
}

/// Runs `name` in every namespace of this server (FLUSHALL).
pub fn flush_everything(shared: &Shared, session: &mut Session) -> Result<(), LinkError> {
    for ns in destination_namespaces(shared) {
        session.namespace = ns;
        let reply = (runner::path().run_sync)(
            shared,
            session,
            &Access::Shared(&shared.engines),
            &[Bytes::from_static(b"flushall")],
        );
        if let redcodec_engine::Reply::Error(e) = reply {
            return Err(LinkError::Protocol(format!("flushing the data held: {e}")));
        }
    }
    Ok(())
}

/// Replaces the data with the checkpoint's keys (see the module docs).
pub fn load(shared: &Shared, spool: &Path, cluster: bool) -> Result<Copied, LinkError> {
    let db = spool.join(redcodec_kvrocks::layout::DIR);
    let sequence = checkpoint_sequence(&db)?;
    let default_codec = KvrocksCodec::new(KvrocksOptions {
        cluster,
        ..KvrocksOptions::default()
    })
    .map_err(|e| copy_error("its key scheme", e))?;
    let (namespaces, tokens) = {
        let src = Engine::open(default_codec, spool, EngineOptions::read_only())
            .map_err(|e| copy_error("opening it as a Kvrocks store", e))?;
        let namespaces =
            redcodec_engine::internals::namespaces::namespaces(src.codec(), src.store())
                .map_err(|e| copy_error("listing its namespaces", e))?;
        let tokens = src
            .store()
            .get(PROPAGATE, NAMESPACE_TOKENS_KEY)
            .map_err(|e| copy_error("reading its namespace tokens", e))?;
        (namespaces, tokens)
    };
    let drain: Vec<String> = destination(shared, redcodec_kvrocks::DEFAULT_NAMESPACE)
        .into_iter()
        .collect();
    let copied = replace_data(shared, &drain, copy_error, |session| {
        copy_all(shared, session, spool, cluster, namespaces, sequence)
    })?;
    // The master's namespace tokens, as a Kvrocks replica loads them after
    // its full copy.
    namespace_replication::learn_json(shared, tokens.as_deref());
    Ok(copied)
}

/// Replaces this server's data with what `copy` writes, as a replica
/// loading a master's full copy: clients get `-LOADING` meanwhile (the
/// commands of `drain`'s namespaces already past that check finish
/// first); `copy` runs in a local session under the load marker; a
/// failed copy is flushed away, a finished one saved before the marker
/// goes. `copy_error` words an error of the save.
pub(crate) fn replace_data(
    shared: &Shared,
    drain: &[String],
    copy_error: fn(&str, redcodec_engine::EngineError) -> LinkError,
    copy: impl FnOnce(&mut Session) -> Result<Copied, LinkError>,
) -> Result<Copied, LinkError> {
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let info = shared.clients.add(local, local);
    let mut session = Session::new(shared, info.clone());
    session.authenticated = true;
    shared.replica.loading.store(true, Ordering::SeqCst);
    shared.replica.begin_full_copy();
    let result = under_marker(shared, &mut session, drain, copy_error, copy);
    shared.replica.loading.store(false, Ordering::SeqCst);
    session.unwatch(shared);
    shared.clients.remove(info.id);
    result
}

fn under_marker(
    shared: &Shared,
    session: &mut Session,
    drain: &[String],
    copy_error: fn(&str, redcodec_engine::EngineError) -> LinkError,
    copy: impl FnOnce(&mut Session) -> Result<Copied, LinkError>,
) -> Result<Copied, LinkError> {
    let marker = Path::new(&shared.config.dir).join(MARKER_FILE);
    // Commands already past the LOADING check finish first.
    for ns in drain {
        drop(shared.engines.exclusive(ns));
    }
    write_marker(&marker).map_err(LinkError::spool)?;
    let copied = copy(session);
    if copied.is_err() {
        if flush_everything(shared, session).is_ok() && shared.engines.save().is_ok() {
            let _ = std::fs::remove_file(&marker);
        }
        return copied;
    }
    shared
        .engines
        .save()
        .map_err(|e| copy_error("saving the copy", e))?;
    shared.note_write();
    std::fs::remove_file(&marker).map_err(LinkError::spool)?;
    sync_dir(&marker).map_err(LinkError::spool)?;
    copied
}

fn copy_all(
    shared: &Shared,
    session: &mut Session,
    spool: &Path,
    cluster: bool,
    namespaces: Vec<redcodec_engine::internals::namespaces::NamespaceInfo>,
    sequence: u64,
) -> Result<Copied, LinkError> {
    flush_everything(shared, session)?;
    let mut copied = Copied {
        sequence,
        ..Copied::default()
    };
    for ns in namespaces {
        let codec = KvrocksCodec::new(KvrocksOptions {
            namespace: ns.name.clone(),
            cluster,
        })
        .map_err(|e| copy_error("a namespace", e))?;
        let src = Engine::open(codec, spool, EngineOptions::read_only())
            .map_err(|e| copy_error("opening it as a Kvrocks store", e))?;
        let dest = destination(shared, &ns.name);
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = src
                .keys_after(after.as_deref(), BATCH_KEYS)
                .map_err(|e| copy_error("walking its keys", e))?;
            let Some(last) = page.last() else { break };
            after = Some(last.0.clone());
            let Some(dest) = &dest else {
                copied.skipped += page.len() as u64;
                continue;
            };
            let entries = read_page(&src, page, &mut copied);
            write_entries(shared, dest, &entries, &mut copied);
        }
    }
    Ok(copied)
}

/// Writes the keys in one RocksDB write; if the engine refuses one, each
/// key alone, so only the refused ones are left out (named on stderr).
/// The keys copied so far are the load's progress (`migrate --follow`'s
/// line).
pub(crate) fn write_entries(
    shared: &Shared,
    dest: &str,
    entries: &[(Vec<u8>, Stored)],
    copied: &mut Copied,
) {
    write_page(shared, dest, entries, copied);
    shared
        .replica
        .loaded_keys
        .store(copied.keys, Ordering::Relaxed);
}

fn write_page(shared: &Shared, dest: &str, entries: &[(Vec<u8>, Stored)], copied: &mut Copied) {
    if entries.is_empty() {
        return;
    }
    let together = shared.engines.shared(dest).ok().is_some_and(|engine| {
        let mut ctx = Ctx::new(&engine);
        let now = ctx.now_ms();
        for (key, stored) in entries {
            if stored.expire_ms != 0 && stored.expire_ms <= now {
                continue;
            }
            let written = ctx.view(key).and_then(|view| {
                value::write_value(
                    &mut ctx,
                    key,
                    &view,
                    &stored.value,
                    ExpireAt::absolute(stored.expire_ms),
                )
            });
            if written.is_err() {
                return false;
            }
        }
        ctx.commit().is_ok()
    });
    if together {
        copied.keys += entries.len() as u64;
        return;
    }
    for (key, stored) in entries {
        let written = shared
            .engines
            .shared(dest)
            .map_err(|r| format!("{r:?}"))
            .and_then(|engine| {
                engine
                    .write(key, &stored.value, stored.expire_ms)
                    .map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => copied.keys += 1,
            Err(e) => {
                if copied.refused < 10 {
                    eprintln!(
                        "redcodec serve: replication: key '{}' of the master is not copied: {e}",
                        String::from_utf8_lossy(key)
                    );
                }
                copied.refused += 1;
            }
        }
    }
}
