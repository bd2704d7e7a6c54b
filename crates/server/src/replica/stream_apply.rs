//! Applying a master's stream: one command of the master's through the
//! same path clients' commands take, the master's SELECT, and the WAL
//! synced before an acknowledgement with `--sync always`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use redcodec_engine::Reply;

use super::link_error::LinkError;
use super::load::namespace_of;
use crate::access::Access;
use crate::config::SyncPolicy;
use crate::runner;
use crate::session::{Answer, Session};
use crate::state::Shared;

/// Whether a command of the master's may change the store (everything
/// but what only moves the offset or the stream's state).
pub(crate) fn changes_store(name: &str) -> bool {
    !matches!(name, "ping" | "select" | "multi" | "discard")
}

/// The master's SELECT: the database maps to a namespace as a client's
/// SELECT maps it ([`namespace_of`]); a database the format cannot hold
/// leaves the session in no namespace, and its writes are skipped.
pub(crate) fn select_db(shared: &Shared, session: &mut Session, db: u64) {
    session.set_db(i64::try_from(db).unwrap_or(i64::MAX));
    match namespace_of(shared, db) {
        Some(ns) => session.namespace = ns,
        None => {
            if !shared
                .replica
                .warned_skipped_db
                .swap(true, Ordering::SeqCst)
            {
                eprintln!("redcodec serve: replication: this format holds database 0 only; the master's writes to database {db} (and any other but 0) are skipped");
            }
            session.namespace = SKIPPED_DB.to_string();
        }
    }
}

/// The namespace name of a database the format cannot hold: commands
/// there are not run.
const SKIPPED_DB: &str = "\u{0}redcodec-skipped-db";

/// Runs one command of the master's (its reply goes nowhere; an error is
/// reported on stderr).
///
/// A command the engine has but refuses (a value out of the format's
/// range, a key of another type: the data here no longer matches the
/// master's) is returned as an error, the store unchanged by it: the link
/// stops before it. A command the engine does not have is reported and
/// passed over, and so is a refusal inside a transaction (its other
/// commands ran).
pub(crate) fn apply(
    shared: &Arc<Shared>,
    session: &mut Session,
    name: &str,
    args: Vec<Vec<u8>>,
) -> Result<(), String> {
    let started = Instant::now();
    match name {
        "ping" => return Ok(()),
        "select" => {
            let db = std::str::from_utf8(&args[1])
                .ok()
                .and_then(|d| d.parse::<u64>().ok());
            match db {
                Some(db) => select_db(shared, session, db),
                None => report(
                    name,
                    &Reply::error("ERR value is not an integer or out of range"),
                ),
            }
            return Ok(());
        }
        _ => {}
    }
    if session.namespace == SKIPPED_DB {
        return Ok(());
    }
    if session.queued.is_some() && !matches!(name, "exec" | "discard" | "multi") {
        (runner::path().queue)(session, args);
        return Ok(());
    }
    let reply = match name {
        "multi" => session.multi(shared),
        "discard" => session.discard(shared),
        "exec" => match (runner::path().exec)(shared, session) {
            Answer::One(r) => r,
            Answer::Exec(replies) => {
                for (r, _) in &replies {
                    report("exec", r);
                }
                Reply::ok()
            }
        },
        _ => (runner::path().run_sync)(
            shared,
            session,
            &Access::Shared(&shared.engines),
            name,
            &args,
        ),
    };
    let failed = reply.is_error();
    shared
        .command_stats
        .ran(name, &args, started.elapsed(), failed);
    match reply {
        Reply::Error(e)
            if !matches!(name, "multi" | "discard" | "exec")
                && !e.starts_with("ERR unknown command") =>
        {
            Err(e)
        }
        reply => {
            report(name, &reply);
            Ok(())
        }
    }
}

/// Reports an error a master's command got here.
fn report(name: &str, reply: &Reply) {
    if let Reply::Error(e) = reply {
        eprintln!("redcodec serve: replication: the master's {name} failed here: {e}");
    }
}

/// With `--sync always`, syncs the write-ahead log once a batch of the
/// stream wrote something (before it is acknowledged).
pub(crate) fn sync_if_always(shared: &Shared, session: &mut Session) -> Result<(), LinkError> {
    if session.wrote && shared.config.sync == SyncPolicy::Always {
        session.wrote = false;
        shared
            .engines
            .sync_wal()
            .map_err(|e| LinkError::Protocol(format!("the WAL sync failed: {e}")))?;
    }
    Ok(())
}
