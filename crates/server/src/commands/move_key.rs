//! MOVE key db, as Redis 7.0's `moveCommand` answers it for the store's
//! layout of databases (the format's capabilities, through the server's
//! [`NamespaceMode`]): a store with one database (most formats) has
//! database 0 only; Kvrocks' namespaces take every SELECT index from 0 to
//! 15 for the one keyspace of a connection; a store with a database per
//! index (Ardb's column families) moves the key to another one.

use bytes::Bytes;
use redcodec_engine::Reply;

use crate::access::Access;
use crate::config::NamespaceMode;
use crate::session::Session;
use crate::state::Shared;

/// The databases a SELECT index may name.
const DATABASES: i64 = 16;

/// MOVE `key db`.
pub fn move_key(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    args: &[Bytes],
) -> Reply {
    if shared.cluster.enabled() {
        return Reply::error("ERR MOVE is not allowed in cluster mode");
    }
    // Redis' `getIntFromObjectOrReply`: a long long, then an int.
    let Some(db) = redcodec_engine::internals::number::parse_i64(&args[2]) else {
        return Reply::error("ERR value is not an integer or out of range");
    };
    if i32::try_from(db).is_err() {
        return Reply::error(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        );
    }
    let (exists, same) = match shared.config.namespaces {
        NamespaceMode::DbIndex => ((0..DATABASES).contains(&db), db == session.db),
        // Every index is the connection's one keyspace.
        NamespaceMode::Tokens => ((0..DATABASES).contains(&db), true),
        NamespaceMode::None => (db == 0, true),
    };
    if !exists {
        return Reply::error("ERR DB index is out of range");
    }
    if same {
        return Reply::error("ERR source and destination objects are the same");
    }
    between_databases(shared, session, access, &args[1], db)
}

/// Moves `key` from the connection's database to database `db` (a
/// namespace of its own): its DUMP and expiry read there, RESTORE'd in
/// `db` unless the key exists there (0), then deleted here (1). Each step
/// is a command of its database, so WATCH, blocked clients and replicas
/// see it there.
fn between_databases(
    shared: &Shared,
    session: &mut Session,
    access: &Access<'_>,
    key: &[u8],
    db: i64,
) -> Reply {
    let run = |session: &mut Session, args: &[&[u8]]| {
        let args = crate::frame::args_of(args);
        (crate::runner::path().run_sync)(shared, session, access, &args)
    };
    let payload = match run(session, &[b"dump", key]) {
        Reply::Bulk(payload) => payload,
        Reply::Nil => return Reply::Integer(0),
        other => return other,
    };
    let expire = match run(session, &[b"pexpiretime", key]) {
        Reply::Integer(at) if at > 0 => at,
        _ => 0,
    };
    let (home_ns, home_db) = (session.namespace.clone(), session.db);
    session.namespace = db.to_string();
    session.set_db(db);
    let at = expire.to_string();
    let restored = run(
        session,
        &[b"restore", key, at.as_bytes(), &payload, b"absttl"],
    );
    session.namespace = home_ns;
    session.set_db(home_db);
    match restored {
        Reply::Status(_) => {}
        Reply::Error(e) if e.starts_with("BUSYKEY") => return Reply::Integer(0),
        other => return other,
    }
    match run(session, &[b"del", key]) {
        Reply::Error(e) => Reply::Error(e),
        _ => Reply::Integer(1),
    }
}
