//! The stream to one Kvrocks replica after `PSYNC <seq>`: `+OK`, then
//! every write batch of the WAL from `seq` on, each one bulk string of
//! its RocksDB bytes, several packed into one write when they are there
//! (Kvrocks' `FeedSlaveThread::loop`); a bulk `ping` after two idle
//! seconds. A replica sends nothing on this connection: it ends when the
//! replica closes it, is killed (CLIENT KILL), the server stops, or the
//! WAL no longer holds the next batch (the replica then reconnects and
//! takes a full copy).
//!
//! The WAL is read a chunk at a time (up to [`CHUNK_BYTES`]) under a
//! shared hold of the engine, never across a namespace switch or the
//! server's shutdown; when it has nothing new, it is asked again every
//! [`POLL`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redcodec_engine::store::wal::{WalBatch, WalError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::clients::ClientInfo;
use crate::state::Shared;

/// The most WAL bytes read (and sent) at a time.
pub const CHUNK_BYTES: usize = 1 << 20;

/// How often the WAL is asked for new batches when it had none.
pub const POLL: Duration = Duration::from_millis(2);

/// After how long without a batch a `ping` is sent.
pub const PING_AFTER: Duration = Duration::from_secs(2);

/// One Kvrocks replica following the stream, for INFO.
pub struct KvrocksReplica {
    /// Its connection's client id.
    pub id: u64,
    /// `REPLCONF ip-address`, else the peer's address.
    pub ip: String,
    /// `REPLCONF listening-port`.
    pub port: u16,
    /// The sequence number of the next batch it gets.
    pub next: AtomicU64,
    /// The store's latest sequence number when the WAL was last read for
    /// it (INFO's lag; INFO takes no hold of the engine, which a command
    /// inside EXEC holds already).
    pub latest: AtomicU64,
}

/// The Kvrocks replicas, by server (its replication ID).
fn registry() -> &'static Mutex<HashMap<String, Vec<Arc<KvrocksReplica>>>> {
    static ALL: OnceLock<Mutex<HashMap<String, Vec<Arc<KvrocksReplica>>>>> = OnceLock::new();
    ALL.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The Kvrocks replicas of this server.
pub fn replicas(shared: &Shared) -> Vec<Arc<KvrocksReplica>> {
    registry()
        .lock()
        .get(&shared.replid)
        .cloned()
        .unwrap_or_default()
}

/// INFO replication's lines for the Kvrocks replicas, numbered from
/// `first` on, as Kvrocks shapes them
/// (`slaveN:ip=…,port=…,offset=<last sequence sent>,lag=<latest - offset>`);
/// and how many there are.
pub fn info_lines(shared: &Shared, first: usize) -> (usize, String) {
    let all = replicas(shared);
    if all.is_empty() {
        return (0, String::new());
    }
    let mut out = String::new();
    for (i, r) in all.iter().enumerate() {
        let latest = r.latest.load(Ordering::SeqCst);
        // Kvrocks' `GetCurrentReplSeq`: the last sequence sent.
        let offset = r.next.load(Ordering::SeqCst).saturating_sub(1);
        out.push_str(&format!(
            "slave{}:ip={},port={},offset={offset},lag={}\r\n",
            first + i,
            r.ip,
            r.port,
            latest.saturating_sub(offset)
        ));
    }
    (all.len(), out)
}

/// A chunk of the WAL from `next`, and the store's latest sequence
/// number, read off the runtime's threads.
async fn read_chunk(shared: &Arc<Shared>, next: u64) -> Result<(Vec<WalBatch>, u64), String> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || {
        let engine = shared.engines.current().map_err(|e| format!("{e:?}"))?;
        let latest = engine.store().latest_sequence();
        let batches = engine
            .store()
            .wal_batches(next, CHUNK_BYTES)
            .map_err(|e: WalError| e.to_string())?;
        Ok((batches, latest))
    })
    .await
    .map_err(|e| e.to_string())?
}

fn bulk(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Feeds the replica on this connection from sequence `next` (checked by
/// [`super::intercept`]) until it ends.
pub async fn run(
    shared: Arc<Shared>,
    info: Arc<ClientInfo>,
    mut rd: OwnedReadHalf,
    mut wr: OwnedWriteHalf,
    next: u64,
) {
    let hs = shared.repl.take_handshake(info.id);
    let replica = Arc::new(KvrocksReplica {
        id: info.id,
        ip: hs.ip.clone().unwrap_or_else(|| info.addr.ip().to_string()),
        port: hs.port,
        next: AtomicU64::new(next),
        latest: AtomicU64::new(next.saturating_sub(1)),
    });
    if wr.write_all(b"+OK\r\n").await.is_err() {
        return;
    }
    registry()
        .lock()
        .entry(shared.replid.clone())
        .or_default()
        .push(replica.clone());
    eprintln!(
        "redcodec serve: Kvrocks replica {}:{} follows the WAL from sequence {next}",
        replica.ip, replica.port
    );
    let why = stream(&shared, &info, &mut rd, &mut wr, &replica).await;
    eprintln!(
        "redcodec serve: Kvrocks replica {}:{} left at sequence {}: {why}",
        replica.ip,
        replica.port,
        replica.next.load(Ordering::SeqCst)
    );
    if let Some(list) = registry().lock().get_mut(&shared.replid) {
        list.retain(|r| r.id != replica.id);
    }
    let _ = wr.shutdown().await;
}

async fn stream(
    shared: &Arc<Shared>,
    info: &ClientInfo,
    rd: &mut OwnedReadHalf,
    wr: &mut OwnedWriteHalf,
    replica: &KvrocksReplica,
) -> String {
    let mut shutdown = shared.shutdown.subscribe();
    let mut last_sent = Instant::now();
    let mut scratch = [0u8; 4096];
    let mut out = Vec::new();
    loop {
        if *shutdown.borrow() || info.killed.load(Ordering::SeqCst) {
            return "the server stops or the replica was killed".to_string();
        }
        let next = replica.next.load(Ordering::SeqCst);
        let batches = match read_chunk(shared, next).await {
            Ok((b, latest)) => {
                replica.latest.store(latest, Ordering::SeqCst);
                b
            }
            Err(e) => return format!("reading the WAL: {e}"),
        };
        if let Some(last) = batches.last() {
            out.clear();
            for b in &batches {
                bulk(&mut out, &b.data);
            }
            if let Err(e) = wr.write_all(&out).await {
                return format!("writing to it: {e}");
            }
            replica.next.store(last.next_sequence(), Ordering::SeqCst);
            last_sent = Instant::now();
            continue;
        }
        if last_sent.elapsed() >= PING_AFTER {
            out.clear();
            bulk(&mut out, b"ping");
            if let Err(e) = wr.write_all(&out).await {
                return format!("writing to it: {e}");
            }
            last_sent = Instant::now();
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            read = rd.read(&mut scratch) => match read {
                Ok(0) => return "it closed the connection".to_string(),
                Err(e) => return format!("reading from it: {e}"),
                Ok(_) => {}
            },
            _ = shutdown.changed() => {}
            () = info.kill.notified() => {}
        }
    }
}
