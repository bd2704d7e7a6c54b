//! Following an Apache Kvrocks master with Kvrocks' own replication
//! protocol (`src/cluster/replication.cc`, `src/commands/cmd_replication.cc`),
//! on any format.
//!
//! - **Detection** ([`follow_if_kvrocks`], called first by each attempt of
//!   the link): a connection sends `AUTH` (with `--masterauth`) and Kvrocks'
//!   `_db_name`. A Kvrocks master answers with its name on a bare line; a
//!   Redis master answers an error (or, a fake one, nothing for
//!   [`PROBE_TIMEOUT`]): the Redis path then runs unchanged. So does a
//!   redcodec master (`executable:redcodec` in `INFO server`), which
//!   answers `_db_name` on a kvrocks-format store.
//! - **Handshake**: `INFO server` (`kvrocks_mode`: cluster mode puts a slot
//!   in every key), `replconf listening-port <port>`, then `PSYNC <seq>`
//!   when this server holds the master's data up to `seq - 1` (`+OK`: the
//!   stream follows).
//! - **Full copy** ([`fetch`], [`copy`]): `_fetch_meta` names the files of
//!   a RocksDB checkpoint the master makes; `_fetch_file` sends them on a
//!   second connection (`<size>\r\n` + bytes each), into a spool directory
//!   inside the data directory. The checkpoint is opened read-only as a
//!   Kvrocks store and every key of every namespace is copied into this
//!   server's engine through the load marker of the Redis full copy
//!   ([`super::load::MARKER_FILE`]); then `PSYNC <checkpoint sequence + 1>`.
//! - **Stream** ([`apply`]): one bulk string per RocksDB write batch (or
//!   `ping`); each batch is read as Redis commands
//!   ([`redcodec_kvrocks::changes`]) and run through the path clients'
//!   commands take, in one MULTI/EXEC per namespace.
//!
//! The replication offset INFO shows is the master's RocksDB sequence
//! number of the last batch applied. What a Kvrocks master's link knows to
//! resume (the master, the sequence, cluster mode) is kept in memory and,
//! at a clean stop, in the replication state file
//! ([`super::resume`]): a restarted replica asks `PSYNC <seq>` and copies
//! again only when the master refuses (its WAL no longer holds `seq`).

pub mod apply;
pub mod copy;
pub mod fetch;
pub mod kvrocks_conn;
pub mod kvrocks_resume;
pub mod namespace_dest;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::link_error::LinkError;
use super::link_phase::phase;
use super::replica_state::LinkPhase;
use crate::session::Session;
use crate::state::Shared;
pub use kvrocks_conn::Conn;
pub use kvrocks_resume::Resume;
pub(crate) use kvrocks_resume::{current, resume_of, set_resume};
pub use namespace_dest::destination;

/// How long the `_db_name` probe waits for an answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Asks the master `_db_name`: `Some(connection, name)` from a Kvrocks
/// master, `None` from any other.
async fn probe(
    shared: &Shared,
    host: &str,
    port: u16,
) -> Result<Option<(Conn, String)>, LinkError> {
    let mut conn = Conn::connect(host, port).await?;
    let asked = async {
        if let Some(pass) = &shared.config.replica.masterauth {
            if !conn
                .ask(&[b"AUTH", pass.as_bytes()])
                .await?
                .starts_with('+')
            {
                return Ok(None);
            }
        }
        let reply = conn.ask(&[b"_db_name"]).await?;
        Ok::<_, LinkError>(Some(reply))
    };
    match tokio::time::timeout(PROBE_TIMEOUT, asked).await {
        Ok(Ok(Some(name)))
            if !name.is_empty() && !name.starts_with(['-', '+', ':', '$', '*', '%', '_']) =>
        {
            Ok(Some((conn, name)))
        }
        _ => Ok(None),
    }
}

/// If the master at `host:port` is a Kvrocks server, follows it for one
/// connection (full copy when needed, then the stream) and returns why it
/// ended; `None` when it is not one (the Redis link goes on).
pub async fn follow_if_kvrocks(
    shared: &Arc<Shared>,
    host: &str,
    port: u16,
) -> Option<Result<(), LinkError>> {
    let (mut conn, name) = match probe(shared, host, port).await {
        Ok(Some(found)) => found,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let info = match server_info(&mut conn).await {
        Ok(info) => info,
        Err(e) => return Some(Err(e)),
    };
    // A redcodec master of the kvrocks format answers `_db_name` too: it
    // is followed with the Redis protocol, which carries every command
    // of every namespace (docs/src/replication-master.md).
    if info.lines().any(|l| l.trim() == "executable:redcodec") {
        return None;
    }
    let cluster = info.lines().any(|l| l.trim() == "kvrocks_mode:cluster");
    Some(follow(shared, host, port, conn, &name, cluster).await)
}

async fn follow(
    shared: &Arc<Shared>,
    host: &str,
    port: u16,
    mut conn: Conn,
    name: &str,
    cluster: bool,
) -> Result<(), LinkError> {
    listening_port(shared, &mut conn).await?;
    // REPLICAOF NO ONE clears `can_continue` (this server may have taken
    // writes since): then the data is copied again, as Redis does.
    let resume = resume_of(shared, host, port)
        .filter(|r| r.cluster == cluster && shared.replica.can_continue.load(Ordering::SeqCst));
    if let Some(r) = resume {
        let reply = conn
            .ask(&[b"PSYNC", r.next_sequence.to_string().as_bytes()])
            .await?;
        if reply == "+OK" {
            eprintln!(
                "redcodec serve: replication: Kvrocks master '{name}' continues from sequence {}",
                r.next_sequence
            );
            return stream(shared, conn, r).await;
        }
        eprintln!(
            "redcodec serve: replication: Kvrocks master refused PSYNC {}: {reply}; full copy",
            r.next_sequence
        );
    }
    set_resume(shared, None);
    shared.replica.can_continue.store(false, Ordering::SeqCst);
    phase(shared, LinkPhase::Syncing);
    let files = fetch::fetch_meta(&mut conn).await?;
    drop(conn);
    let spool = copy::spool_dir(shared);
    fetch::fetch_files(shared, host, port, &files, &spool).await?;
    let copied = {
        let shared = shared.clone();
        let spool = spool.clone();
        tokio::task::spawn_blocking(move || copy::load(&shared, &spool, cluster))
            .await
            .map_err(|e| LinkError::Protocol(format!("the copy task failed: {e}")))?
    };
    let _ = std::fs::remove_dir_all(&spool);
    let copied = copied?;
    eprintln!(
        "redcodec serve: replication: Kvrocks master '{name}': {} keys copied from its checkpoint at sequence {}{}",
        copied.keys,
        copied.sequence,
        copied.note()
    );
    let r = Resume {
        master: (host.to_string(), port),
        next_sequence: copied.sequence + 1,
        cluster,
    };
    set_resume(shared, Some(r.clone()));
    shared.replica.can_continue.store(true, Ordering::SeqCst);
    {
        let mut st = shared.replica.state.lock();
        st.offset = i64::try_from(copied.sequence).unwrap_or(i64::MAX);
        st.read_offset = st.offset;
    }
    let mut conn = Conn::connect(host, port).await?;
    conn.auth(shared).await?;
    listening_port(shared, &mut conn).await?;
    let reply = conn
        .ask(&[b"PSYNC", r.next_sequence.to_string().as_bytes()])
        .await?;
    if reply != "+OK" {
        set_resume(shared, None);
        return Err(LinkError::Handshake(format!(
            "the Kvrocks master refused PSYNC {} after the full copy: {reply}",
            r.next_sequence
        )));
    }
    stream(shared, conn, r).await
}

/// `INFO server` (its `kvrocks_mode`: whether keys carry a slot).
async fn server_info(conn: &mut Conn) -> Result<String, LinkError> {
    conn.send(&[b"INFO", b"server"]).await?;
    let info = conn
        .bulk()
        .await?
        .map_err(|e| LinkError::Handshake(format!("INFO server from the Kvrocks master: {e}")))?;
    Ok(String::from_utf8_lossy(&info).into_owned())
}

/// `replconf listening-port <port>` (an error is tolerated, as Kvrocks'
/// replica tolerates it).
async fn listening_port(shared: &Shared, conn: &mut Conn) -> Result<(), LinkError> {
    // The port clients reach this server on (as the Redis link sends it).
    let port = {
        let settings = shared.settings.lock();
        settings.value("port").map(str::to_string)
    }
    .unwrap_or_else(|| shared.config.port.to_string());
    let reply = conn
        .ask(&[b"replconf", b"listening-port", port.as_bytes()])
        .await?;
    if reply.starts_with('-') {
        eprintln!("redcodec serve: replication: (non critical) the Kvrocks master refused replconf listening-port: {reply}");
    }
    Ok(())
}

/// The stream, through a session of the link's own.
async fn stream(shared: &Arc<Shared>, mut conn: Conn, resume: Resume) -> Result<(), LinkError> {
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let info = shared.clients.add_master(local, local);
    let mut session = Session::new(shared, info.clone());
    session.authenticated = true;
    phase(shared, LinkPhase::Up);
    let result = apply::run(shared, &mut conn, &mut session, resume).await;
    session.unwatch(shared);
    shared.clients.remove(info.id);
    result
}
