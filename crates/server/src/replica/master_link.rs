//! The link to the master: connect, the handshake of a Redis 7 replica
//! (`PING`, `AUTH`, `REPLCONF listening-port`, `REPLCONF capa eof capa
//! psync2`, `PSYNC`), a full copy or a partial one, then the command
//! stream until the link breaks; then again, a second later, until
//! REPLICAOF changes or the server stops.

use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::link_error::{read_line, LinkError, REPL_TIMEOUT};
use super::link_phase::phase;
use super::load::{self, LoadError};
use super::rdb_feed::RdbFeed;
use super::replica_state::{LinkPhase, LINK_GENERATION};
use super::stream_apply::{
    apply, apply_group, changes_store, command_name, gather, select_db, sync_if_always,
};
use super::transfer::{self, Announced};
use super::{resume, resume_file};
use crate::command_roles::InStream;
use crate::command_table;
use crate::frame::{frame, Limits};
use crate::session::Session;
use crate::state::Shared;

/// A RESP array of bulk strings.
fn resp(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    redcodec_protocol::encode_request(args, &mut out);
    out
}

/// The connection to the master.
struct Conn {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    buf: BytesMut,
}

impl Conn {
    async fn send(&mut self, args: &[&[u8]]) -> Result<(), LinkError> {
        self.wr
            .write_all(&resp(args))
            .await
            .map_err(LinkError::Write)
    }

    /// One line (without its `\r\n`).
    async fn line(&mut self) -> Result<Vec<u8>, LinkError> {
        read_line(&mut self.rd, &mut self.buf, 64).await
    }

    /// Sends a command and reads its one-line reply.
    async fn ask(&mut self, args: &[&[u8]]) -> Result<String, LinkError> {
        self.send(args).await?;
        let line = self.line().await?;
        Ok(String::from_utf8_lossy(&line).into_owned())
    }
}

/// Follows the master at `host:port` until the generation changes (another
/// REPLICAOF) or the server shuts down, reconnecting a second after a
/// failure.
pub async fn run(
    shared: Arc<Shared>,
    host: String,
    port: u16,
    generation: u64,
    mut stop: watch::Receiver<u64>,
) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        let result = tokio::select! {
            r = LINK_GENERATION.scope(generation, follow_once(&shared, &host, port)) => r,
            _ = stop.wait_for(|g| *g != generation) => return,
            _ = shutdown.wait_for(|s| *s) => return,
        };
        if *stop.borrow() != generation || shared.shutting_down() {
            return;
        }
        if let Err(e) = result {
            shared.replica.fail(e.to_string());
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.wait_for(|g| *g != generation) => return,
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

/// One connection: handshake, sync, stream; returns why it ended.
async fn follow_once(shared: &Arc<Shared>, host: &str, port: u16) -> Result<(), LinkError> {
    phase(shared, LinkPhase::Connecting);
    if let Some(kvrocks) = super::kvrocks::follow_if_kvrocks(shared, host, port).await {
        return kvrocks;
    }
    if let Some(pika) = super::pika::follow_if_pika(shared, host, port).await {
        return pika;
    }
    let stream = tokio::time::timeout(REPL_TIMEOUT, TcpStream::connect((host, port)))
        .await
        .map_err(|_| LinkError::Connect(std::io::ErrorKind::TimedOut.into()))?
        .map_err(LinkError::Connect)?;
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().map_err(LinkError::Connect)?;
    let local = stream.local_addr().map_err(LinkError::Connect)?;
    let (rd, wr) = stream.into_split();
    let mut conn = Conn {
        rd,
        wr,
        buf: BytesMut::with_capacity(64 * 1024),
    };
    handshake(shared, &mut conn).await?;
    let info = shared.clients.add_master(peer, local);
    let mut session = Session::new(shared, info.clone());
    session.authenticated = true;
    let result = sync_and_stream(shared, &mut conn, &mut session).await;
    session.unwatch(shared);
    shared.clients.remove(info.id);
    result
}

/// PING, AUTH, REPLCONF: errors that Redis tolerates are tolerated.
async fn handshake(shared: &Shared, conn: &mut Conn) -> Result<(), LinkError> {
    let pong = conn.ask(&[b"PING"]).await?;
    if pong.starts_with('-')
        && !pong.starts_with("-NOAUTH")
        && !pong.starts_with("-NOPERM")
        && !pong.starts_with("-ERR operation not permitted")
    {
        return Err(LinkError::Handshake(format!(
            "Error reply to PING from master: '{pong}'"
        )));
    }
    if let Some(pass) = &shared.config.replica.masterauth {
        let reply = conn.ask(&[b"AUTH", pass.as_bytes()]).await?;
        if reply.starts_with('-') {
            return Err(LinkError::Handshake(format!(
                "Unable to AUTH to MASTER: {reply}"
            )));
        }
    }
    let port = shared.config.port.to_string();
    let listening = {
        let settings = shared.settings.lock();
        settings.value("port").map(str::to_string)
    }
    .unwrap_or(port);
    let reply = conn
        .ask(&[b"REPLCONF", b"listening-port", listening.as_bytes()])
        .await?;
    if reply.starts_with('-') {
        eprintln!("redcodec serve: replication: (non critical) master does not understand REPLCONF listening-port: {reply}");
    }
    let reply = conn
        .ask(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])
        .await?;
    if reply.starts_with('-') {
        eprintln!("redcodec serve: replication: (non critical) master does not understand REPLCONF capa: {reply}");
    }
    Ok(())
}

/// PSYNC, then a full copy (`+FULLRESYNC`) or none (`+CONTINUE`), then
/// the stream.
async fn sync_and_stream(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &mut Session,
) -> Result<(), LinkError> {
    let replica = &shared.replica;
    if replica.offer_own_stream.swap(false, Ordering::SeqCst) {
        offer_own_stream(shared).await;
    }
    let (replid, offset) = if replica.can_continue.load(Ordering::SeqCst) {
        let st = replica.state.lock();
        (st.replid.clone(), (st.offset + 1).to_string())
    } else {
        ("?".to_string(), "-1".to_string())
    };
    conn.send(&[b"PSYNC", replid.as_bytes(), offset.as_bytes()])
        .await?;
    // The master may send newlines to keep the link alive before it
    // replies (a diskless master waits for more replicas first).
    let reply = loop {
        let line = conn.line().await?;
        if !line.is_empty() {
            break String::from_utf8_lossy(&line).into_owned();
        }
        shared.replica.state.lock().last_io = Some(Instant::now());
    };
    let words: Vec<&str> = reply.split(' ').collect();
    match words.as_slice() {
        ["+FULLRESYNC", id, off] => {
            let off: i64 = off
                .parse()
                .map_err(|_| LinkError::Protocol(format!("bad +FULLRESYNC reply: {reply}")))?;
            eprintln!("redcodec serve: replication: full resync from the master: {id}:{off}");
            full_sync(shared, conn, session).await?;
            let mut st = replica.state.lock();
            st.replid = (*id).to_string();
            st.offset = off;
            st.read_offset = off;
            st.replid2 = "0".repeat(40);
            st.second_offset = -1;
            st.stream_db = None;
            replica.can_continue.store(true, Ordering::SeqCst);
        }
        ["+CONTINUE", rest @ ..] => {
            let mut st = replica.state.lock();
            if let Some(new_id) = rest.first().filter(|id| id.len() == 40) {
                if **new_id != st.replid {
                    st.replid2 = std::mem::replace(&mut st.replid, (*new_id).to_string());
                    st.second_offset = st.offset + 1;
                }
            }
            eprintln!(
                "redcodec serve: replication: partial resync accepted, continuing from offset {}",
                st.offset
            );
        }
        _ if reply.starts_with("-NOMASTERLINK") || reply.starts_with("-LOADING") => {
            return Err(LinkError::Handshake(format!(
                "Master is currently unable to PSYNC but should be in the future: {reply}"
            )))
        }
        _ => {
            return Err(LinkError::Handshake(format!(
                "Unexpected reply to PSYNC from master: {reply}"
            )))
        }
    }
    stream(shared, conn, session).await
}

/// A master told to follow another offers its own stream in its first
/// PSYNC (Redis' `replicationCacheMasterUsingMyself`): its replication ID
/// and offset, once the writes its clients started before REPLICAOF are
/// done (new ones get `-READONLY`). A master whose stream was never fed
/// (no replica since its start) has nothing to offer.
async fn offer_own_stream(shared: &Arc<Shared>) {
    let s = shared.clone();
    let offered = tokio::task::spawn_blocking(move || {
        drop(s.engines.exclusive(&s.config.default_namespace));
        s.repl.fed_offset()
    })
    .await;
    if let Ok(Some(offset)) = offered {
        let mut st = shared.replica.state.lock();
        st.replid = shared.replid.clone();
        st.offset = i64::try_from(offset).unwrap_or(i64::MAX);
        st.read_offset = st.offset;
        shared.replica.can_continue.store(true, Ordering::SeqCst);
    }
}

/// Receives the RDB into the spool, checks it whole, then loads it (the
/// master gets a newline every second meanwhile, as Redis' replica sends
/// while it loads, so it does not time the link out); a replica that holds
/// no key loads it as it arrives instead ([`load`]).
async fn full_sync(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &mut Session,
) -> Result<(), LinkError> {
    phase(shared, LinkPhase::Syncing);
    // Newlines are the master's keep-alive while it prepares the RDB.
    let header = loop {
        let line = conn.line().await?;
        if !line.is_empty() {
            break line;
        }
        shared.replica.state.lock().last_io = Some(Instant::now());
    };
    let announced = Announced::parse(&header)?;
    {
        let mut st = shared.replica.state.lock();
        st.sync_total = match announced {
            Announced::Length(n) => i64::try_from(n).unwrap_or(i64::MAX),
            Announced::EofMark(_) => -1,
        };
        st.sync_read = 0;
    }
    let holds_nothing = {
        let shared = shared.clone();
        let mut s = master_session(&shared, session);
        tokio::task::spawn_blocking(move || load::holds_nothing(&shared, &mut s))
            .await
            .unwrap_or(false)
    };
    let loaded = if holds_nothing {
        load_as_it_arrives(shared, conn, session, &announced).await?
    } else {
        check_then_load(shared, conn, session, &announced).await?
    };
    eprintln!(
        "redcodec serve: replication: MASTER <-> REPLICA sync: {} keys loaded{}",
        loaded.keys,
        loaded.note()
    );
    Ok(())
}

/// A session of the master's, for a blocking task.
fn master_session(shared: &Arc<Shared>, session: &Session) -> Session {
    let mut s = Session::new(shared, session.info.clone());
    s.authenticated = true;
    s
}

/// [`load::load`] in the master's session `s` (a blocking task's), which
/// then watches nothing.
fn load_in(
    shared: &Shared,
    mut s: Session,
    input: impl std::io::Read,
    keys: Option<u64>,
) -> Result<load::Loaded, LoadError> {
    let loaded = load::load(shared, &mut s, input, keys);
    s.unwatch(shared);
    loaded
}

/// Receives the RDB into the spool while a thread checks it, then, if it
/// is whole and valid, replaces the data held with its keys.
async fn check_then_load(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &Session,
    announced: &Announced,
) -> Result<load::Loaded, LinkError> {
    let spool = load::spool_path(shared);
    let mut check = RdbFeed::check();
    let received = receive(shared, conn, announced, Some(&spool), &mut check).await;
    if let Err(e) = received {
        let _ = std::fs::remove_file(&spool);
        return Err(e);
    }
    // Checked whole (while it arrived) before anything changes.
    let checked = keep_alive(conn, check.finish())
        .await?
        .map_err(LoadError::Invalid);
    let keys = match checked {
        Ok(keys) => keys,
        Err(e) => {
            let _ = std::fs::remove_file(&spool);
            return Err(e.into());
        }
    };
    shared.replica.can_continue.store(false, Ordering::SeqCst);
    let loaded = {
        let shared = shared.clone();
        let spool = spool.clone();
        let s = master_session(&shared, session);
        keep_alive(
            conn,
            tokio::task::spawn_blocking(move || {
                let input = std::io::BufReader::with_capacity(1 << 20, File::open(&spool)?);
                load_in(&shared, s, input, Some(keys))
            }),
        )
        .await
    };
    shared.replica.loading.store(false, Ordering::SeqCst);
    let _ = std::fs::remove_file(&spool);
    Ok(loaded??)
}

/// Loads the RDB while it arrives, with no spool (the replica holds no
/// key): a bad or cut RDB leaves the replica flushed, as a failed load does.
async fn load_as_it_arrives(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &Session,
    announced: &Announced,
) -> Result<load::Loaded, LinkError> {
    shared.replica.can_continue.store(false, Ordering::SeqCst);
    let mut feed = {
        let shared = shared.clone();
        let s = master_session(&shared, session);
        RdbFeed::start(move |input| load_in(&shared, s, input, None))
    };
    let loaded = match receive(shared, conn, announced, None, &mut feed).await {
        // The load ends at the cut, and flushes what it wrote.
        Err(e) => {
            let _ = feed.finish().await;
            Err(e)
        }
        Ok(_) => keep_alive(conn, feed.finish()).await,
    };
    shared.replica.loading.store(false, Ordering::SeqCst);
    Ok(loaded??)
}

/// Receives the RDB the master announced, into `spool` if any, each byte
/// handed to `feed`, noting the progress in the replica's state.
async fn receive<T: Send + 'static>(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    announced: &Announced,
    spool: Option<&std::path::Path>,
    feed: &mut RdbFeed<T>,
) -> Result<u64, LinkError> {
    let replica = &shared.replica;
    transfer::receive(&mut conn.rd, &mut conn.buf, announced, spool, feed, |n| {
        let mut st = replica.state.lock();
        st.sync_read = i64::try_from(n).unwrap_or(i64::MAX);
        st.last_io = Some(Instant::now());
    })
    .await
}

/// Waits for a blocking task, sending the master a newline every second.
async fn keep_alive<T>(conn: &mut Conn, task: tokio::task::JoinHandle<T>) -> Result<T, LinkError> {
    tokio::pin!(task);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    loop {
        tokio::select! {
            done = &mut task => {
                return done.map_err(|e| LinkError::Protocol(format!("the load task failed: {e}")));
            }
            _ = tick.tick() => {
                // A failed write shows when the stream starts.
                let _ = conn.wr.write_all(b"\n").await;
            }
        }
    }
}

/// `REPLCONF ACK <offset>`.
async fn ack(conn: &mut Conn, offset: i64) -> Result<(), LinkError> {
    conn.send(&[b"REPLCONF", b"ACK", offset.to_string().as_bytes()])
        .await
}

/// Records that the stream's writes up to `offset` are applied, in the
/// database the session is in, and when.
fn note_applied(shared: &Shared, session: &Session, offset: i64) {
    let mut st = shared.replica.state.lock();
    st.offset = offset;
    st.stream_db = Some(u64::try_from(session.db).unwrap_or(0));
    st.last_write = Some(Instant::now());
}

/// Applies the command stream until the link breaks: every command through
/// the engine path clients use; the offset counts the bytes of each
/// command once it has run (inside MULTI, once EXEC has run, as Redis
/// counts them); REPLCONF GETACK is answered, and an ACK goes to the
/// master every second.
async fn stream(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session: &mut Session,
) -> Result<(), LinkError> {
    phase(shared, LinkPhase::Up);
    let replica = &shared.replica;
    let stream_db = replica.state.lock().stream_db;
    select_db(shared, session, stream_db.unwrap_or(0));
    let mut offset = replica.state.lock().offset;
    // Bytes of commands read since the last one that completed (MULTI …).
    let mut pending: i64 = 0;
    ack(conn, offset).await?;
    let limits = Limits {
        max_bulk_len: i64::MAX,
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let info = session.info.clone();
    // The offset at the previous tick: when a whole tick passed without
    // a byte applied, the state is saved for a restart ([`resume`]).
    let mut quiet_since_tick = offset;
    let mut saved = -1;
    // A command that may change the store was applied since the state
    // was last updated.
    let mut wrote = false;
    loop {
        loop {
            let found = frame(&conn.buf, &limits)
                .map_err(|e| LinkError::Protocol(format!("bad command from the master: {e}")))?;
            let Some(found) = found else { break };
            let used = found.used();
            let request = found.take(&mut conn.buf);
            pending += used as i64;
            let args = request.args;
            if args.is_empty() {
                continue;
            }
            // CLIENT PAUSE holds the master's writes as a client's, as in
            // Redis 7.0: the offset applied stays until the pause ends
            // (acknowledged meanwhile, so the master keeps the link).
            if let Some(spec) = command_table::get(&args[0]) {
                while crate::pause_gate::held(shared, session, spec, &args).is_some() {
                    tokio::select! {
                        _ = tick.tick() => ack(conn, offset).await?,
                        () = tokio::time::sleep(Duration::from_millis(20)) => {}
                    }
                }
            }
            let args = match gather(shared, session, args, used, &mut conn.buf, &limits) {
                Err(alone) => alone,
                Ok(group) => {
                    // The bytes before the group's first command (blank
                    // requests) count with it.
                    let before = offset + pending - used as i64;
                    replica
                        .step(|| -> Result<(), LinkError> {
                            resume_file::invalidate(shared).map_err(LinkError::State)?;
                            saved = -1;
                            let applied = apply_group(shared, session, &group);
                            let bytes = match &applied {
                                Ok(bytes) => *bytes,
                                Err(refused) => refused.applied_bytes,
                            };
                            if bytes > 0 {
                                offset = before + bytes as i64;
                                pending = 0;
                                note_applied(shared, session, offset);
                            }
                            applied.map(|_| ()).map_err(|refused| LinkError::Refused {
                                command: refused.command,
                                error: refused.error,
                                offset,
                            })
                        })
                        .ok_or(LinkError::Killed)??;
                    continue;
                }
            };
            let spec = command_table::get(&args[0]);
            let replconf = spec.is_some_and(|spec| spec.in_stream == InStream::Replconf);
            let getack = replconf
                && args
                    .get(1)
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"getack"));
            let acked = offset;
            // Applied and counted as one step, unless a REPLICAOF came
            // first (see `Replica::step`).
            replica
                .step(|| -> Result<(), LinkError> {
                    if !replconf {
                        if changes_store(spec) {
                            resume_file::invalidate(shared).map_err(LinkError::State)?;
                            saved = -1;
                            wrote = true;
                        }
                        let name = command_name(spec, &args);
                        if let Err(refused) = apply(shared, session, spec, args) {
                            // The offset stays before the command (the data
                            // held is what the master had there), or moves
                            // past it when the store completes it.
                            if refused.applied {
                                offset += pending;
                                pending = 0;
                                note_applied(shared, session, offset);
                            }
                            return Err(LinkError::Refused {
                                command: name.into_owned(),
                                error: refused.error,
                                offset,
                            });
                        }
                    }
                    if session.queued.is_none() {
                        offset += pending;
                        pending = 0;
                        if std::mem::take(&mut wrote) {
                            note_applied(shared, session, offset);
                        } else {
                            let mut st = replica.state.lock();
                            st.offset = offset;
                            st.stream_db = Some(u64::try_from(session.db).unwrap_or(0));
                        }
                    }
                    Ok(())
                })
                .ok_or(LinkError::Killed)??;
            if getack {
                ack(conn, acked).await?;
            }
        }
        sync_if_always(shared, session)?;
        {
            let mut st = replica.state.lock();
            st.read_offset = offset + pending + conn.buf.len() as i64;
        }
        if info.killed.load(Ordering::SeqCst) {
            return Err(LinkError::Killed);
        }
        tokio::select! {
            read = tokio::time::timeout(REPL_TIMEOUT, conn.rd.read_buf(&mut conn.buf)) => match read {
                Err(_) => return Err(LinkError::Timeout),
                Ok(Err(e)) => return Err(LinkError::Read(e)),
                Ok(Ok(0)) => return Err(LinkError::Closed),
                Ok(Ok(_)) => replica.state.lock().last_io = Some(Instant::now()),
            },
            _ = tick.tick() => {
                if offset == quiet_since_tick && offset != saved && session.queued.is_none() {
                    match resume::save(shared) {
                        Ok(_) => saved = offset,
                        Err(e) => eprintln!("redcodec serve: replication: saving the replication state: {e}"),
                    }
                }
                quiet_since_tick = offset;
                ack(conn, offset).await?;
            }
            () = info.kill.notified() => return Err(LinkError::Killed),
        }
    }
}
