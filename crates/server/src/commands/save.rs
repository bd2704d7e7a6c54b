//! SAVE, `BGSAVE [SCHEDULE]`, LASTSAVE: saving makes every write so far
//! durable in the store (the WAL synced, every memtable flushed; see
//! [`crate::persistence`]).

use bytes::Bytes;
use redcodec_engine::Reply;

use crate::access::Access;
use crate::persistence::{save_store, SaveError, IN_PROGRESS};
use crate::session::Session;
use crate::state::Shared;

/// SAVE (refused inside MULTI, as Redis refuses it): `OK`, or Redis' bare
/// `-ERR` when the store fails (the cause goes to the server's log).
pub fn save(shared: &Shared, session: &Session, access: &Access<'_>) -> Reply {
    let outcome = shared
        .saves
        .save(|| match access.with(&session.namespace, save_store) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                eprintln!("redcodec serve: SAVE failed: {e}");
                Err(Reply::error("ERR"))
            }
            Err(refused) => Err(refused),
        });
    match outcome {
        Ok(()) => Reply::ok(),
        Err(SaveError::InProgress) => Reply::error(IN_PROGRESS),
        Err(SaveError::Failed(reply)) => reply,
    }
}

/// `BGSAVE [SCHEDULE]`: the save runs on a blocking thread of the runtime;
/// `Background saving started`, or `… scheduled` inside EXEC (it starts
/// once the transaction lets go of the engine).
pub fn bgsave(shared: &Shared, access: &Access<'_>, args: &[Bytes]) -> Reply {
    let schedule = args.len() == 2 && args[1].eq_ignore_ascii_case(b"schedule");
    if args.len() > 1 && !schedule {
        return Reply::error("ERR syntax error");
    }
    let Some(bg) = shared.saves.start_background() else {
        return Reply::error(IN_PROGRESS);
    };
    let engines = shared.engines.clone();
    let saves = shared.saves.clone();
    tokio::task::spawn_blocking(move || {
        let outcome = engines.save();
        saves.finish_background(bg, outcome);
    });
    match access {
        Access::Held(..) => Reply::Status("Background saving scheduled".into()),
        Access::Shared(_) => Reply::Status("Background saving started".into()),
    }
}

/// COMPACT (Kvrocks' and Pika's command): starts a full compaction of the
/// store in the background and answers OK at once, as both do; a failure
/// is logged. INFO rocksdb's `is_compacting` is `yes` until it ends.
pub fn compact(shared: &Shared) -> Reply {
    let engines = shared.engines.clone();
    let saves = shared.saves.clone();
    // Counted before the reply: an INFO after OK sees it running.
    saves.compaction_started();
    tokio::task::spawn_blocking(move || {
        if let Err(e) = engines.compact() {
            eprintln!("redcodec serve: COMPACT failed: {e}");
        }
        saves.compaction_ended();
    });
    Reply::ok()
}

/// LASTSAVE: the unix time of the last successful save (the server's
/// start before any).
pub fn lastsave(shared: &Shared) -> Reply {
    Reply::Integer(shared.saves.last_save())
}
