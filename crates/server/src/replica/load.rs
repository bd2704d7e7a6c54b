//! Loading a full copy: the spooled RDB was checked whole while it arrived
//! (every object decoded, the CRC checked: [`super::rdb_feed`]), the
//! data held left alone; only then is a load marker written to the data
//! directory, the data flushed and every key loaded through the engine
//! (the code `RESTORE` runs), and the marker removed once the keys are
//! durable. A replica killed in between
//! finds the marker when it starts again ([`recover`]): it flushes the
//! half copy instead of serving it as complete, and resynchronises.
//!
//! A replica that holds no key ([`holds_nothing`]) has nothing to keep
//! from a bad RDB: it loads the RDB while it arrives, under the same
//! marker, and a copy that turns out bad or cut short (a wrong CRC at the
//! end, a link lost) is flushed as a failed load is. The copy then takes
//! the time of the slower of the two, not of both.
//!
//! The load writes into a store it has just emptied, under its marker:
//! up to 32,768 keys per RocksDB write, sorted, each instance's part
//! written on its own, and a key's current state read only if the load
//! may have written it already ([`rdb_file::load_fresh_batch`]). A batch
//! holding a key the engine refuses is written again key by key, as
//! `RESTORE key <expiry> <payload> REPLACE ABSTTL` writes it, so only
//! that key is left out (named on stderr).
//!
//! **Databases.** A Redis master has databases 0–15; the master's
//! `SELECT n` and the RDB's SELECTDB map as a client's `SELECT n` does on
//! this format ([`namespace_of`]): Ardb keeps database n in namespace `n`;
//! Kvrocks' SELECT changes nothing, so every database lands in the default
//! namespace; Pika's formats have database 0 only, and keys of other
//! databases are skipped (counted, reported on stderr).

use std::fs::OpenOptions;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use redcodec_engine::Reply;
use redcodec_migrate::rdb_file;
use redcodec_rdb::file_reader::RdbFileError;

use crate::access::Access;
use crate::config::NamespaceMode;
use crate::namespace_replication;
use crate::runner;
use crate::session::Session;
use crate::state::Shared;

/// The spool file's name in the data directory.
pub const SPOOL_FILE: &str = "redcodec-replica-sync.rdb";

/// The load marker's name in the data directory.
pub const MARKER_FILE: &str = "redcodec-replica-loading";

/// The spool file of the server's data directory.
pub fn spool_path(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(SPOOL_FILE)
}

/// The load marker of the server's data directory.
pub fn marker_path(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(MARKER_FILE)
}

/// The namespace a Redis database index maps to on this format (as a
/// client's SELECT maps it), `None` when the format cannot hold it.
pub fn namespace_of(shared: &Shared, db: u64) -> Option<String> {
    let config = &shared.config;
    match config.namespaces {
        NamespaceMode::DbIndex if db < 16 => Some(db.to_string()),
        NamespaceMode::Tokens if db < 16 => Some(config.default_namespace.clone()),
        NamespaceMode::None if db == 0 => Some(config.default_namespace.clone()),
        _ => None,
    }
}

/// The namespace name of a database the format cannot hold: commands
/// there are not run.
pub(crate) const SKIPPED_DB: &str = "\u{0}redcodec-skipped-db";

/// Every namespace a master's data can reach.
fn reachable_namespaces(shared: &Shared) -> Vec<String> {
    let mut all: Vec<String> = (0..16).filter_map(|db| namespace_of(shared, db)).collect();
    all.dedup();
    all
}

/// Why a load failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The spooled RDB is not a valid RDB (nothing was changed).
    #[error("the master's RDB is invalid, the data held is kept: {0}")]
    Invalid(RdbFileError),
    /// The RDB became unreadable during the load.
    #[error("reading the master's RDB: {0}")]
    Read(RdbFileError),
    /// The spool or the marker could not be written or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The engine refused to flush.
    #[error("flushing the data held: {0}")]
    Flush(String),
}

/// What a load did.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Keys loaded.
    pub keys: u64,
    /// Keys of databases the format cannot hold, skipped.
    pub skipped: u64,
    /// Keys the engine refused (reported on stderr), skipped.
    pub refused: u64,
}

impl Loaded {
    /// The counts of keys left out, for the log line.
    pub fn note(&self) -> String {
        let mut note = String::new();
        if self.skipped > 0 {
            note += &format!(
                ", {} keys of databases this format cannot hold skipped",
                self.skipped
            );
        }
        if self.refused > 0 {
            note += &format!(", {} keys refused by the engine skipped", self.refused);
        }
        note
    }
}

/// Writes the empty file `path` and makes it, and its name, durable.
pub(crate) fn write_marker(path: &Path) -> std::io::Result<()> {
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    file.sync_all()?;
    crate::durable::sync_dir(path)
}

/// Runs a command on the engine as the replication link does, in the
/// session's namespace: an error reply is an error.
fn run(shared: &Shared, session: &mut Session, args: &[&[u8]]) -> Result<Reply, String> {
    let owned = crate::frame::args_of(args);
    let ns = session.namespace.clone();
    let reply = Access::Shared(&shared.engines)
        .with(&ns, |engine| {
            (runner::path().run_engine)(shared, session, engine, &owned)
        })
        .unwrap_or_else(|e| e);
    match reply {
        Reply::Error(e) => Err(e),
        reply => Ok(reply),
    }
}

/// Whether no namespace the master's data reaches holds a live key (a
/// `SCAN 0 COUNT 1` in each finds none and ends); a namespace that cannot
/// be read counts as holding keys.
pub fn holds_nothing(shared: &Shared, session: &mut Session) -> bool {
    reachable_namespaces(shared).into_iter().all(|ns| {
        session.namespace = ns;
        let first = run(shared, session, &[b"scan", b"0", b"count", b"1"]);
        let Ok(Reply::Array(parts)) = first else {
            return false;
        };
        matches!(parts.as_slice(), [Reply::Bulk(cursor), Reply::Array(keys)]
            if cursor.as_slice() == b"0" && keys.is_empty())
    })
}

/// Flushes every namespace the master's data reaches (watched keys that
/// existed are touched, as FLUSHALL touches them).
fn flush_all(shared: &Shared, session: &mut Session) -> Result<(), LoadError> {
    for ns in reachable_namespaces(shared) {
        session.namespace = ns;
        run(shared, session, &[b"flushall"]).map_err(LoadError::Flush)?;
    }
    Ok(())
}

/// Replaces the data with the keys of the RDB `input` (`keys` of them if
/// known: one checked before by [`super::rdb_feed`]; `None`: one read as
/// it arrives), under the load marker; `session` is the master's. Sets
/// the replica's loading flag (the caller clears it).
pub fn load(
    shared: &Shared,
    session: &mut Session,
    input: impl Read,
    keys: Option<u64>,
) -> Result<Loaded, LoadError> {
    // A key of the master's copy is kept even where its expiry has passed
    // here (the copy arrived late, or the clocks differ): the master's `DEL`
    // follows in the stream, and its writes before then apply to the key.
    let _never = redcodec_engine::ExpiryPin::never();
    // Clients get -LOADING from now until the caller says it is over;
    // commands that passed that check before finish first (the engine
    // taken exclusively once waits for them).
    shared.replica.loading.store(true, Ordering::SeqCst);
    if let Some(ns) = reachable_namespaces(shared).first() {
        drop(shared.engines.exclusive(ns));
    }
    // The data stops matching any saved replication offset.
    super::resume_file::invalidate(shared)?;
    shared.replica.begin_full_copy();
    let marker = marker_path(shared);
    write_marker(&marker)?;
    let loaded = load_keys(shared, session, input, keys);
    if loaded.is_err() {
        // A half copy is not kept: flushed, as Redis empties a replica
        // whose load failed (the marker stays if even that fails).
        if flush_all(shared, session).is_ok() && shared.engines.save().is_ok() {
            let _ = std::fs::remove_file(&marker);
        }
        return loaded;
    }
    std::fs::remove_file(&marker)?;
    crate::durable::sync_dir(&marker)?;
    loaded
}

/// Flushes, then loads every key of `input` (in batches of one
/// database, each in one store write where the engine takes them all:
/// [`rdb_file::load_fresh_batch`], which reads no key's state but one
/// this load may have written already) and makes them durable.
fn load_keys(
    shared: &Shared,
    session: &mut Session,
    input: impl Read,
    keys: Option<u64>,
) -> Result<Loaded, LoadError> {
    flush_all(shared, session)?;
    // Every namespace the load writes is empty from here on.
    let mut fresh = keys.map_or_else(rdb_file::FreshKeys::growing, rdb_file::FreshKeys::for_keys);
    let mut warned = false;
    let mut named = 0;
    let batch = rdb_file::FRESH_BATCH_KEYS;
    let counts = rdb_file::import_in_batches(input, batch, |db, entries, counts| {
        if entries.is_empty() {
            return;
        }
        let Some(ns) = namespace_of(shared, db) else {
            if !warned {
                eprintln!(
                    "redcodec serve: replication: this format holds database 0 only; keys of database {db} are skipped"
                );
                warned = true;
            }
            counts.skipped += entries.len() as u64;
            return;
        };
        match shared.engines.shared(&ns) {
            Ok(engine) => {
                rdb_file::load_fresh_batch(&engine, entries, counts, &mut fresh, ns.as_bytes());
            }
            Err(reply) => {
                for e in entries.iter() {
                    counts.refused.push(rdb_file::Refused {
                        key: e.key.clone(),
                        reason: reply.to_string(),
                    });
                }
                counts.refused_count += entries.len() as u64;
            }
        }
        name_refused(counts, &mut named);
        // Progress (`migrate --follow`'s line, INFO's loading fields).
        shared
            .replica
            .loaded_keys
            .store(counts.keys + counts.expired, Ordering::Relaxed);
    })
    .map_err(|e| match e {
        rdb_file::RdbError::File(e) => LoadError::Read(e),
        other => LoadError::Io(std::io::Error::other(other.to_string())),
    })?;
    let mut counts = counts;
    for ns in fresh.held_namespaces() {
        let name = String::from_utf8_lossy(&ns).into_owned();
        let engine = shared.engines.shared(&name).map_err(|reply| {
            std::io::Error::other(format!("namespace '{name}' of the load: {reply}"))
        })?;
        rdb_file::load_held(&engine, &mut counts, &mut fresh, &ns);
        name_refused(&mut counts, &mut named);
    }
    // Keys already expired count as loaded, as RESTORE answers OK for them.
    let loaded = Loaded {
        keys: counts.keys + counts.expired,
        skipped: counts.skipped,
        refused: counts.refused_count,
    };
    shared
        .engines
        .save()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    shared.note_write();
    // The master's replicated namespace tokens (none: it keeps none).
    let tokens = counts
        .aux
        .iter()
        .find(|(k, _)| k.as_slice() == namespace_replication::RDB_AUX.as_bytes());
    namespace_replication::learn_json(shared, tokens.map(|(_, json)| json.as_slice()));
    Ok(loaded)
}

/// Names on stderr the first refused keys of `counts` (`named` so far):
/// a value this format cannot hold (an expiry past its range, a score it
/// does not store…) is named and skipped, and the rest of the copy goes
/// on, as the stream goes on past a command the engine refuses.
fn name_refused(counts: &mut rdb_file::Loaded, named: &mut usize) {
    for refused in counts.refused.drain(..) {
        if *named < 10 {
            eprintln!(
                "redcodec serve: replication: key '{}' of the master's RDB is not loaded: {}",
                String::from_utf8_lossy(&refused.key),
                refused.reason
            );
            *named += 1;
        }
    }
}

/// At start: a load marker left by a replica killed while loading means
/// the data is a half copy: it is flushed (and made durable) before the
/// marker is removed, so a crash in between flushes again.
pub fn recover(shared: &Shared) -> Result<(), LoadError> {
    let _ = std::fs::remove_file(spool_path(shared));
    let marker = marker_path(shared);
    if !marker.exists() {
        return Ok(());
    }
    eprintln!(
        "redcodec serve: replication: a full copy from a master was interrupted ({} found): its keys are flushed{}",
        marker.display(),
        if shared.config.replica.replicaof.is_some() {
            "; a new full copy follows"
        } else {
            " (start with --replicaof to copy again)"
        }
    );
    let info = shared.clients.add(
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
    );
    let mut session = Session::new(shared, info.clone());
    session.authenticated = true;
    let flushed = flush_all(shared, &mut session);
    shared.clients.remove(info.id);
    flushed?;
    shared
        .engines
        .save()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    std::fs::remove_file(&marker)?;
    crate::durable::sync_dir(&marker)?;
    Ok(())
}
