//! Following a Pika master (3.5, 4.0) with Pika's own replication
//! protocol, on any format.
//!
//! - **Detection** ([`follow_if_pika`], tried by each attempt of the link
//!   after the Kvrocks probe): `INFO server` on the master's port has a
//!   `pika_version:` line only on Pika. Then `CONFIG GET default-slot-num`
//!   (floyd's key routing) and `binlog-file-size` (for the offset INFO
//!   shows).
//! - **Handshake** (`handshake`): a connection to the master's port +
//!   2000 speaking framed protobuf ([`link`], [`messages`]): `kMetaSync`
//!   (this replica's IP and port, `--masterauth`) names the master's
//!   databases and its replication ID; then per database `kTrySync` from a
//!   binlog position this replica holds, or a full copy.
//! - **Full copy** ([`rsync`], [`full_copy`]): `kDBSync` per database makes the
//!   master dump it (a bgsave); the dump's files come from the rsync2
//!   service (port + 10001) into a spool directory of the data directory,
//!   are read with redcodec's floyd or blackwidow reader and loaded into
//!   this server's engine under the load marker; the dump's `info` file
//!   gives the binlog position to continue from with `kTrySync`.
//! - **Stream** ([`binlog_stream`]): `kBinlogSync` with `first_send` starts it;
//!   binlog items ([`binlog`]) are applied and acknowledged.
//!
//! Pika database `dbN` maps to this server's database N (a format with one
//! keyspace follows db0 only). The replication offset INFO shows is Pika's
//! own measure (its `slave_repl_offset`): the sum over the databases of
//! binlog file number × `binlog-file-size` + offset. What the link knows
//! to continue (master, replication ID, each database's binlog position)
//! is kept in memory, and in the replication state file under its rule
//! ([`crate::replica::resume`]: written at a clean stop and when the
//! stream is quiet, removed before the next item is applied): after a
//! lost link or a restart it asks `kTrySync` from there.

pub mod binlog;
pub mod binlog_stream;
pub mod full_copy;
pub mod link;
pub mod messages;
pub mod pika_resume;
pub mod rsync;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::kvrocks::kvrocks_conn::Conn;
use super::link_error::LinkError;
use super::link_phase::phase;
use super::load::namespace_of;
use super::replica_state::LinkPhase;
use crate::session::Session;
use crate::state::Shared;
use messages::{
    BinlogOffset, InnerRequest, InnerResponse, MetaSyncRequest, Node, Slot, StatusCode,
    TrySyncReplyCode, TrySyncRequest, Type,
};
pub(crate) use pika_resume::{current, set_resume};
pub use pika_resume::{db_index, DbPosition, Resume, DEFAULT_BINLOG_FILE_SIZE};

/// The replication port: the master's port + 2000
/// (`kPortShiftReplServer`).
pub const REPL_PORT_SHIFT: u16 = 2000;

/// How long the `INFO server` probe waits.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What the probe learnt of a Pika master.
struct Probed {
    version: String,
    slot_num: u32,
    binlog_file_size: u64,
}

/// `CONFIG GET name`: the value, if the master answers one.
async fn config_get(conn: &mut Conn, name: &str) -> Result<Option<String>, LinkError> {
    conn.send(&[b"CONFIG", b"GET", name.as_bytes()]).await?;
    let head = String::from_utf8_lossy(&conn.line().await?).into_owned();
    let n: usize = match head.strip_prefix('*').and_then(|n| n.parse().ok()) {
        Some(n) => n,
        None => return Ok(None),
    };
    let mut items = Vec::new();
    for _ in 0..n.min(64) {
        items.push(conn.bulk().await?.ok());
    }
    Ok(items
        .get(1)
        .cloned()
        .flatten()
        .map(|v| String::from_utf8_lossy(&v).into_owned()))
}

/// Asks `INFO server`: `Some` from a Pika master, `None` from any other.
async fn probe(shared: &Shared, host: &str, port: u16) -> Result<Option<Probed>, LinkError> {
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
        conn.send(&[b"INFO", b"server"]).await?;
        let Ok(info) = conn.bulk().await? else {
            return Ok(None);
        };
        let info = String::from_utf8_lossy(&info).into_owned();
        let Some(version) = info
            .lines()
            .find_map(|l| l.trim().strip_prefix("pika_version:"))
            .map(str::to_string)
        else {
            return Ok(None);
        };
        let slot_num = config_get(&mut conn, "default-slot-num")
            .await?
            .and_then(|v| v.trim().parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(1024);
        let binlog_file_size = config_get(&mut conn, "binlog-file-size")
            .await?
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_BINLOG_FILE_SIZE);
        Ok::<_, LinkError>(Some(Probed {
            version,
            slot_num,
            binlog_file_size,
        }))
    };
    match tokio::time::timeout(PROBE_TIMEOUT, asked).await {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(e)) => Err(e),
        Err(_) => Ok(None),
    }
}

/// If the master at `host:port` is a Pika server, follows it for one
/// connection (full copy when needed, then the stream) and returns why it
/// ended; `None` when it is not one.
pub async fn follow_if_pika(
    shared: &Arc<Shared>,
    host: &str,
    port: u16,
) -> Option<Result<(), LinkError>> {
    let probed = match probe(shared, host, port).await {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    Some(follow(shared, host, port, &probed).await)
}

/// This replica as a Pika replica names itself: the IP of its end of the
/// connection, and the port clients reach it on.
fn node(shared: &Shared, conn: &link::PbConn) -> Node {
    let port = {
        let settings = shared.settings.lock();
        settings.value("port").and_then(|p| p.parse::<i32>().ok())
    }
    .unwrap_or(i32::from(shared.config.port));
    Node {
        ip: conn.local.ip().to_string(),
        port,
    }
}

fn error_reply(what: &str, response: &InnerResponse) -> LinkError {
    LinkError::Handshake(format!(
        "the Pika master refused {what}: {}",
        response
            .reply
            .clone()
            .unwrap_or_else(|| format!("code {}", response.code))
    ))
}

/// Connects to the replication port and sends MetaSync; the connection,
/// this replica's node, and the master's databases and replication ID.
async fn handshake(
    shared: &Shared,
    host: &str,
    port: u16,
) -> Result<(link::PbConn, Node, Vec<String>, String), LinkError> {
    let repl_port = port.checked_add(REPL_PORT_SHIFT).ok_or_else(|| {
        LinkError::Handshake(format!(
            "the Pika master's port {port} leaves no room for its replication port (+{REPL_PORT_SHIFT})"
        ))
    })?;
    let mut conn = link::PbConn::connect(host, repl_port).await?;
    let me = node(shared, &conn);
    conn.send(&InnerRequest {
        r#type: Type::MetaSync as i32,
        meta_sync: Some(MetaSyncRequest {
            node: me.clone(),
            auth: shared.config.replica.masterauth.clone(),
        }),
        ..InnerRequest::default()
    })
    .await?;
    let response: InnerResponse = conn.recv().await?;
    if response.r#type != Type::MetaSync as i32 {
        return Err(LinkError::Protocol(format!(
            "the Pika master answered MetaSync with a message of type {}",
            response.r#type
        )));
    }
    if response.code != StatusCode::Ok as i32 {
        return Err(error_reply("MetaSync", &response));
    }
    let meta = response.meta_sync.ok_or_else(|| {
        LinkError::Protocol("the Pika master's MetaSync reply has no databases".into())
    })?;
    let dbs: Vec<String> = meta.dbs_info.into_iter().map(|d| d.db_name).collect();
    if dbs.is_empty() {
        return Err(LinkError::Protocol(
            "the Pika master has no databases".into(),
        ));
    }
    Ok((conn, me, dbs, meta.replication_id.unwrap_or_default()))
}

/// The databases to follow, each with the namespace it maps to here.
fn positions(shared: &Shared, dbs: &[String]) -> Vec<DbPosition> {
    dbs.iter()
        .map(|name| DbPosition {
            name: name.clone(),
            dest: db_index(name).and_then(|i| namespace_of(shared, i)),
            filenum: 0,
            offset: 0,
            session_id: 0,
        })
        .filter(|d| {
            if d.dest.is_none() {
                eprintln!(
                    "redcodec serve: replication: this format cannot hold the Pika master's {}: it is not followed",
                    d.name
                );
            }
            d.dest.is_some()
        })
        .collect()
}

fn sync_request(kind: Type, me: &Node, db: &DbPosition) -> InnerRequest {
    let body = TrySyncRequest {
        node: me.clone(),
        slot: Slot {
            db_name: db.name.clone(),
            slot_id: 0,
        },
        binlog_offset: BinlogOffset {
            filenum: db.filenum,
            offset: db.offset,
            term: None,
            index: None,
        },
    };
    let mut request = InnerRequest {
        r#type: kind as i32,
        ..InnerRequest::default()
    };
    if kind == Type::DbSync {
        request.db_sync = Some(body);
    } else {
        request.try_sync = Some(body);
    }
    request
}

/// The outcome of TrySync for every database.
enum Tried {
    /// Every database continues (sessions set).
    Continue,
    /// The master no longer has a position (binlog purged): copy again.
    FullCopy(String),
}

async fn try_sync(
    conn: &mut link::PbConn,
    me: &Node,
    resume: &mut Resume,
) -> Result<Tried, LinkError> {
    for db in &mut resume.dbs {
        conn.send(&sync_request(Type::TrySync, me, db)).await?;
        let response: InnerResponse = loop {
            let r: InnerResponse = conn.recv().await?;
            if r.r#type == Type::TrySync as i32 {
                break r;
            }
        };
        if response.code != StatusCode::Ok as i32 {
            return Err(error_reply(&format!("TrySync of {}", db.name), &response));
        }
        let tried = response.try_sync.ok_or_else(|| {
            LinkError::Protocol("the Pika master's TrySync reply is empty".into())
        })?;
        let at = format!("{}:{}", db.filenum, db.offset);
        match TrySyncReplyCode::try_from(tried.reply_code) {
            Ok(TrySyncReplyCode::Ok) => {
                db.session_id = tried.session_id.ok_or_else(|| {
                    LinkError::Protocol("the Pika master's TrySync reply has no session".into())
                })?;
            }
            Ok(TrySyncReplyCode::SyncPointBePurged) => {
                return Ok(Tried::FullCopy(format!(
                    "the Pika master no longer has the binlog of {} at {at}",
                    db.name
                )))
            }
            Ok(TrySyncReplyCode::SyncPointLarger) => {
                return Ok(Tried::FullCopy(format!(
                    "the Pika master's binlog of {} ends before {at}",
                    db.name
                )))
            }
            _ => {
                return Ok(Tried::FullCopy(format!(
                    "the Pika master refused TrySync of {} at {at}",
                    db.name
                )))
            }
        }
    }
    Ok(Tried::Continue)
}

async fn follow(
    shared: &Arc<Shared>,
    host: &str,
    port: u16,
    probed: &Probed,
) -> Result<(), LinkError> {
    let (mut conn, me, dbs, replication_id) = handshake(shared, host, port).await?;
    // An empty ID (a position taken from a dump's `info` file) is any.
    let resume = current(shared).filter(|r| {
        r.master.0 == host
            && r.master.1 == port
            && (r.replication_id.is_empty() || r.replication_id == replication_id)
            && shared.replica.can_continue.load(Ordering::SeqCst)
    });
    if let Some(mut r) = resume {
        r.replication_id.clone_from(&replication_id);
        r.binlog_file_size = probed.binlog_file_size;
        match try_sync(&mut conn, &me, &mut r).await? {
            Tried::Continue => {
                eprintln!(
                    "redcodec serve: replication: Pika {} master continues from binlog {}",
                    probed.version,
                    r.dbs
                        .iter()
                        .map(|d| format!("{} {}:{}", d.name, d.filenum, d.offset))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return stream(shared, conn, &me, r).await;
            }
            Tried::FullCopy(why) => {
                eprintln!("redcodec serve: replication: {why}; full copy");
            }
        }
    }
    set_resume(shared, None);
    shared.replica.can_continue.store(false, Ordering::SeqCst);
    phase(shared, LinkPhase::Syncing);
    {
        let mut st = shared.replica.state.lock();
        st.sync_total = -1;
        st.sync_read = 0;
    }
    let mut dbs = positions(shared, &dbs);
    // DBSync makes the master dump each database.
    for db in &dbs {
        conn.send(&sync_request(Type::DbSync, &me, db)).await?;
        let response: InnerResponse = loop {
            let r: InnerResponse = conn.recv().await?;
            if r.r#type == Type::DbSync as i32 {
                break r;
            }
        };
        if response.code != StatusCode::Ok as i32 {
            return Err(error_reply(&format!("DBSync of {}", db.name), &response));
        }
    }
    drop(conn);
    let spool = full_copy::spool_dir(shared);
    let mut fetched = Vec::new();
    for db in &mut dbs {
        let dir = spool.join(&db.name);
        let dump = rsync::fetch(shared, host, port, &db.name, &dir).await;
        let dump = match dump {
            Ok(d) => d,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&spool);
                return Err(e);
            }
        };
        let info = std::fs::read_to_string(dir.join("info")).map_err(LinkError::spool)?;
        let (filenum, offset) = full_copy::parse_info(&info).map_err(|e| {
            LinkError::Protocol(format!(
                "the info file of the Pika master's dump of {}: {e}",
                db.name
            ))
        })?;
        db.filenum = filenum;
        db.offset = offset;
        eprintln!(
            "redcodec serve: replication: Pika {} master: dump of {} fetched ({} files, {} bytes, snapshot {}) at binlog {filenum}:{offset}",
            probed.version,
            db.name,
            dump.files.len(),
            dump.bytes,
            dump.uuid
        );
        fetched.push(full_copy::Fetched {
            dir,
            dest: db.dest.clone().unwrap_or_default(),
        });
    }
    let copied = {
        let shared = shared.clone();
        let slot_num = probed.slot_num;
        tokio::task::spawn_blocking(move || full_copy::load(&shared, &fetched, slot_num))
            .await
            .map_err(|e| LinkError::Protocol(format!("the copy task failed: {e}")))?
    };
    let _ = std::fs::remove_dir_all(&spool);
    let copied = copied?;
    eprintln!(
        "redcodec serve: replication: Pika {} master: {} keys copied from its dump{}",
        probed.version,
        copied.keys,
        copied.note()
    );
    let mut r = Resume {
        master: (host.to_string(), port),
        replication_id,
        binlog_file_size: probed.binlog_file_size,
        dbs,
    };
    set_resume(shared, Some(r.clone()));
    shared.replica.can_continue.store(true, Ordering::SeqCst);
    {
        let mut st = shared.replica.state.lock();
        st.offset = r.offset();
        st.read_offset = st.offset;
    }
    // A new connection: the master forgets the old one's replica entry
    // when it sees it closed, which may take a moment.
    let mut attempt = 0;
    let (mut conn, me) = loop {
        match handshake(shared, host, port).await {
            Ok((conn, me, _, _)) => break (conn, me),
            Err(e) if attempt < 10 => {
                attempt += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e),
        }
    };
    match try_sync(&mut conn, &me, &mut r).await? {
        Tried::Continue => stream(shared, conn, &me, r).await,
        Tried::FullCopy(why) => {
            set_resume(shared, None);
            Err(LinkError::Handshake(format!("after the full copy, {why}")))
        }
    }
}

/// Starts the binlog stream of every database, then applies it through a
/// session of the link's own.
async fn stream(
    shared: &Arc<Shared>,
    mut conn: link::PbConn,
    me: &Node,
    resume: Resume,
) -> Result<(), LinkError> {
    set_resume(shared, Some(resume.clone()));
    for db in &resume.dbs {
        let at = BinlogOffset {
            filenum: db.filenum,
            offset: db.offset,
            term: Some(0),
            index: Some(0),
        };
        conn.send(&binlog_stream::ack(me, db, at.clone(), at, true))
            .await?;
    }
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let info = shared.clients.add_master(local, local);
    let mut session = Session::new(shared, info.clone());
    session.authenticated = true;
    phase(shared, LinkPhase::Up);
    let result = binlog_stream::run(shared, &mut conn, &mut session, me, resume).await;
    session.unwatch(shared);
    shared.clients.remove(info.id);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_map_to_indexes() {
        assert_eq!(db_index("db0"), Some(0));
        assert_eq!(db_index("db12"), Some(12));
        assert_eq!(db_index("db"), None);
        assert_eq!(db_index("x0"), None);
    }

    #[test]
    fn the_offset_is_pikas_slave_repl_offset() {
        let db = |filenum, offset| DbPosition {
            name: "db0".into(),
            dest: Some(String::new()),
            filenum,
            offset,
            session_id: 0,
        };
        let r = Resume {
            master: ("h".into(), 1),
            replication_id: String::new(),
            binlog_file_size: 100,
            dbs: vec![db(2, 5), db(1, 1)],
        };
        assert_eq!(r.offset(), 306);
    }
}
