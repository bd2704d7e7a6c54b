//! One replica's connection after its PSYNC or SYNC: a partial
//! resynchronisation from the backlog, or a full one (snapshot, RDB
//! transfer); then the stream, and the replica's `REPLCONF ACK`s.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use redcodec_rdb::file_writer::{FileInfo, ReplInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::Notify;

use super::backlog::Backlog;
use super::databases;
use super::replication_state::{Handshake, Link, LinkState, Queue};
use super::snapshot;
use crate::clients::ClientInfo;
use crate::command_roles::{Handover, InStream, KvrocksCommand};
use crate::command_table;
use crate::frame::{take_request, Limits};
use crate::persistence::unix_now;
use crate::state::Shared;

/// Why a replica's link ended.
#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Snapshot(#[from] snapshot::SnapshotError),
    #[error("the server is shutting down")]
    Closed,
    #[error("its output queue passed the limit")]
    Overflow,
}

/// 40 random hex digits (the `$EOF:` mark).
fn random_mark() -> String {
    let mut bytes = [0u8; 20];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_err()
    {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes[..16].copy_from_slice(&nanos.to_le_bytes());
    }
    hex::encode(bytes)
}

fn new_link(info: &Arc<ClientInfo>, hs: &Handshake, state: LinkState) -> Arc<Link> {
    Arc::new(Link {
        info: info.clone(),
        ip: hs.ip.clone().unwrap_or_else(|| info.addr.ip().to_string()),
        port: hs.port,
        queue: Mutex::new(Queue::default()),
        wake: Notify::new(),
        state: Mutex::new(state),
        ack: std::sync::atomic::AtomicU64::new(0),
        ack_time: Mutex::new(Instant::now()),
    })
}

/// What a connection was handed over for (the command that did it, with
/// its arguments, is kept beside it).
#[derive(Clone, Copy, Debug)]
pub enum Handed {
    /// A Redis replica's PSYNC or SYNC (checked by [`super::check_sync`]).
    Redis(Handover),
    /// A command of Kvrocks' protocol (checked by
    /// [`super::kvrocks::intercept`]).
    Kvrocks(KvrocksCommand),
}

/// Serves a replica on the connection that sent `args` until it leaves,
/// is killed, falls too far behind, or the server stops.
pub async fn serve_replica(
    shared: Arc<Shared>,
    info: Arc<ClientInfo>,
    mut rd: OwnedReadHalf,
    mut wr: OwnedWriteHalf,
    mut buf: BytesMut,
    handed: Handed,
    args: Vec<Bytes>,
) {
    let psync = match handed {
        Handed::Kvrocks(command) => {
            return super::kvrocks::serve(shared, info, rd, wr, command, args).await;
        }
        Handed::Redis(handover) => handover == Handover::Psync,
    };
    let hs = shared.repl.take_handshake(info.id);
    let core = shared.repl.core().clone();
    let link = if psync {
        try_partial(&shared, &info, &hs, &args)
    } else {
        None
    };
    let result = match link {
        Some((link, head)) => {
            core.sync_partial_ok.fetch_add(1, Ordering::Relaxed);
            match wr.write_all(head.as_bytes()).await {
                Ok(()) => stream(&shared, &link, &mut rd, &mut wr, &mut buf, false).await,
                Err(e) => Err(e.into()),
            }
        }
        None => {
            if psync && args[1][..] != b"?"[..] {
                core.sync_partial_err.fetch_add(1, Ordering::Relaxed);
            }
            core.sync_full.fetch_add(1, Ordering::Relaxed);
            let link = new_link(&info, &hs, LinkState::WaitBgsave);
            // After an `$EOF:` transfer the stream waits for the replica's
            // first ACK, as Redis 7 does: bytes right behind the mark would
            // hide it from a replica that looks for it at the end of a read.
            match full_sync(&shared, &link, &hs, &mut wr).await {
                Ok(()) => stream(&shared, &link, &mut rd, &mut wr, &mut buf, hs.capa_eof).await,
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = &result {
        eprintln!("redcodec serve: replica {} disconnected: {e}", info.addr);
    }
    core.remove_link_of(info.id);
    let _ = wr.shutdown().await;
}

/// `+CONTINUE` when the replica asks for this master's stream from an
/// offset the backlog still holds: the link, registered with the bytes
/// it lacks already queued, and the reply line.
fn try_partial(
    shared: &Shared,
    info: &Arc<ClientInfo>,
    hs: &Handshake,
    args: &[Bytes],
) -> Option<(Arc<Link>, String)> {
    let from: u64 = std::str::from_utf8(&args[2]).ok()?.parse().ok()?;
    // This stream, or the one it continues up to where it was taken over
    // (Redis' `masterTryPartialResynchronization`).
    let continued = shared
        .repl
        .core()
        .second
        .lock()
        .as_ref()
        .is_some_and(|(id, upto)| args[1] == id.as_bytes() && from <= *upto);
    if args[1] != shared.replid.as_bytes() && !continued {
        return None;
    }
    let mut s = shared.repl.core().stream.lock();
    let missing = s.backlog.as_ref()?.since(from)?;
    let link = new_link(info, hs, LinkState::Online);
    link.acknowledge(from.saturating_sub(1));
    if !missing.is_empty() {
        link.push(&bytes::Bytes::from(missing));
    }
    s.links.push(link.clone());
    Some((link, format!("+CONTINUE {}\r\n", shared.replid)))
}

/// A full resynchronisation: the snapshot (see the module docs of
/// [`super`]), `+FULLRESYNC <replid> <offset>`, newlines while the file
/// is written, then the file.
async fn full_sync(
    shared: &Arc<Shared>,
    link: &Arc<Link>,
    hs: &Handshake,
    wr: &mut OwnedWriteHalf,
) -> Result<(), LinkError> {
    let started = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = {
        let shared = shared.clone();
        let link = link.clone();
        tokio::task::spawn_blocking(move || snapshot_to_file(&shared, &link, tx))
    };
    let offset = rx.await.map_err(|_| LinkError::Closed)?;
    let head = format!("+FULLRESYNC {} {offset}\r\n", shared.replid);
    wr.write_all(head.as_bytes()).await?;
    tokio::pin!(task);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let (file, len, keys, waited) = loop {
        tokio::select! {
            done = &mut task => break done.map_err(std::io::Error::other)??,
            _ = tick.tick() => wr.write_all(b"\n").await?,
        }
    };
    let snapshot_took = started.elapsed();
    link.set_state(LinkState::SendBulk);
    let mark = hs.capa_eof.then(random_mark);
    match &mark {
        Some(mark) => wr.write_all(format!("$EOF:{mark}\r\n").as_bytes()).await?,
        None => wr.write_all(format!("${len}\r\n").as_bytes()).await?,
    }
    // A temporary file the snapshot just wrote: read from the page
    // cache, a chunk at a time, between socket writes.
    let mut file = file;
    let mut chunk = vec![0u8; 256 * 1024];
    let mut copied = 0u64;
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        wr.write_all(&chunk[..n]).await?;
        copied += n as u64;
    }
    if copied != len {
        return Err(std::io::Error::other(format!("sent {copied} of {len} RDB bytes")).into());
    }
    if let Some(mark) = &mark {
        wr.write_all(mark.as_bytes()).await?;
    }
    eprintln!(
        "redcodec serve: full resync of replica {}: {keys} keys, {len} bytes of RDB at offset {offset}; commands waited {:.3}s, snapshot {:.2}s, transfer {:.2}s",
        link.info.addr,
        waited.as_secs_f64(),
        snapshot_took.as_secs_f64(),
        (started.elapsed() - snapshot_took).as_secs_f64(),
    );
    link.set_state(LinkState::Online);
    Ok(())
}

/// Takes every key lock of the default namespace's engine (no other
/// namespace's engine is open meanwhile: the slot holds one) just long enough
/// to register the link at the stream's current offset (sent on `offset`)
/// and to checkpoint the store at that point; then, with commands running
/// again, writes the snapshot from the checkpoint to an anonymous
/// temporary file. Returns the file, rewound, its length, how many keys
/// it holds and how long commands waited.
fn snapshot_to_file(
    shared: &Shared,
    link: &Arc<Link>,
    offset: tokio::sync::oneshot::Sender<u64>,
) -> Result<(std::fs::File, u64, u64, Duration), LinkError> {
    let ns = shared.config.default_namespace.clone();
    let engine = shared.engines.shared(&ns).map_err(|_| LinkError::Closed)?;
    shared.repl.attach(shared, &engine, &ns);
    // Most of the memtables go to disk before commands wait: the
    // checkpoint under the locks then flushes only what came meanwhile.
    engine
        .store()
        .flush()
        .map_err(snapshot::SnapshotError::Checkpoint)?;
    let waiting = Instant::now();
    let held = engine.lock_all();
    let checkpoint = snapshot::Checkpoint::take(&engine, Path::new(&shared.config.dir))?;
    let at = {
        let core = shared.repl.core();
        let mut s = core.stream.lock();
        if s.backlog.is_none() {
            let size = core.backlog_size.load(Ordering::SeqCst);
            s.backlog = Some(Backlog::new(size, 0));
            core.active.store(true, Ordering::SeqCst);
        }
        s.selected = None;
        s.links.push(link.clone());
        s.backlog.as_ref().map_or(0, Backlog::offset)
    };
    drop(held);
    let waited = waiting.elapsed();
    let _ = offset.send(at);
    let copy = checkpoint.open(&engine)?;
    drop(engine);
    let info = FileInfo {
        redis_ver: "7.0.15".into(),
        ctime: unix_now().max(0) as u64,
        used_mem: 0,
        repl: Some(ReplInfo {
            stream_db: 0,
            replid: shared.replid.clone(),
            offset: at,
        }),
        aux: crate::namespace_replication::rdb_aux(shared),
    };
    let file = tempfile::tempfile()?;
    let database_of = |namespace: &str| databases::database_of(shared, namespace);
    let (out, len, keys) = snapshot::write_rdb(
        &copy,
        &ns,
        &database_of,
        std::io::BufWriter::new(file),
        &info,
    )?;
    drop(copy);
    let mut file = out
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    file.flush()?;
    file.seek(SeekFrom::Start(0))?;
    Ok((file, len, keys, waited))
}

/// How long a replica's last bytes may take at shutdown (Redis'
/// `shutdown-timeout`, 10 seconds).
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(10);

/// Writes everything queued for the replica, in one write (a chunk is one
/// command).
async fn write_queued(link: &Link, wr: &mut OwnedWriteHalf) -> Result<(), LinkError> {
    let chunks = link.take().ok_or(LinkError::Overflow)?;
    if let [one] = chunks.as_slice() {
        wr.write_all(one).await?;
    } else if !chunks.is_empty() {
        let mut out = BytesMut::with_capacity(chunks.iter().map(bytes::Bytes::len).sum());
        for chunk in &chunks {
            out.extend_from_slice(chunk);
        }
        wr.write_all(&out).await?;
    }
    Ok(())
}

/// Sends the stream to an online replica and reads its acknowledgements;
/// with `wait_ack`, sends nothing before the first acknowledgement. At
/// shutdown what is queued still goes out: a replica that has the whole
/// stream continues after the master restarts.
async fn stream(
    shared: &Shared,
    link: &Arc<Link>,
    rd: &mut OwnedReadHalf,
    wr: &mut OwnedWriteHalf,
    buf: &mut BytesMut,
    mut wait_ack: bool,
) -> Result<(), LinkError> {
    let core = shared.repl.core();
    let mut shutdown = shared.shutdown.subscribe();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let limits = Limits {
        max_bulk_len: shared.max_bulk_len.load(Ordering::Relaxed),
    };
    loop {
        if link.info.killed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let stopping = *shutdown.borrow();
        if link.overflowed() {
            return Err(LinkError::Overflow);
        }
        if stopping {
            // Bounded, as Redis' `shutdown-timeout`: a replica that does
            // not read does not hold the shutdown.
            if !wait_ack {
                let _ = tokio::time::timeout(SHUTDOWN_FLUSH, write_queued(link, wr)).await;
            }
            return Ok(());
        }
        if !wait_ack {
            write_queued(link, wr).await?;
        }
        tokio::select! {
            () = link.wake.notified() => {}
            read = rd.read_buf(buf) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return Ok(());
                }
                while let Ok(Some(request)) = take_request(buf, &limits) {
                    let a = &request.args;
                    // REPLCONF ACK <offset> (a blank line, a replica's
                    // keepalive, has no word).
                    let ack = a.len() >= 3
                        && a[1].eq_ignore_ascii_case(b"ack")
                        && command_table::get(&a[0])
                            .is_some_and(|spec| spec.in_stream == InStream::Replconf);
                    if ack {
                        if let Some(off) = std::str::from_utf8(&a[2]).ok().and_then(|s| s.parse().ok()) {
                            link.acknowledge(off);
                            wait_ack = false;
                            link.wake.notify_one();
                            core.acked.notify_waiters();
                        }
                    }
                }
                if buf.len() > 1024 * 1024 {
                    buf.clear();
                }
            }
            () = link.info.kill.notified() => return Ok(()),
            _ = shutdown.changed() => return Ok(()),
            _ = tick.tick() => core.ping_if_idle(),
        }
    }
}
