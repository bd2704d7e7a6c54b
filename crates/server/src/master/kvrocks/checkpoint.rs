//! The checkpoint Kvrocks' replicas copy in full: `_fetch_meta` makes it
//! (or shares the current one, as Kvrocks' `GetFullReplDataInfo` does)
//! and names its files; `_fetch_file` sends them.
//!
//! It lives in `<dir>/kvrocks-master-checkpoint/db` (`<dir>` the store's
//! directory), one per server, shared by the replicas that copy while it
//! is young: for half the WAL's TTL, bounded to 10 minutes to an hour
//! (Kvrocks' rule), and only while the WAL still holds the sequence after
//! it (else a replica would copy it and then be refused its PSYNC). A new
//! one replaces it after that; one a previous run left behind is removed.
//!
//! `max-replication-mb` (Kvrocks' setting, MiB a second, 0 for none)
//! limits `_fetch_file` as Kvrocks does: shared equally among the
//! connections sending files at the time, and held to by sleeping after a
//! file sent faster than that.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;

use crate::state::Shared;

/// The checkpoint's directory, inside the store's.
pub const DIR_NAME: &str = "kvrocks-master-checkpoint";

/// The current checkpoint of one server.
#[derive(Clone)]
struct Current {
    /// The directory the files are in.
    files_dir: PathBuf,
    /// Its files, as `_fetch_meta` named them.
    files: Vec<String>,
    created: Instant,
    /// The store's latest sequence number when it was made (a lower
    /// bound of the checkpoint's own).
    sequence: u64,
}

/// The current checkpoints, by server (its replication ID).
fn currents() -> &'static Mutex<HashMap<String, Current>> {
    static CURRENTS: OnceLock<Mutex<HashMap<String, Current>>> = OnceLock::new();
    CURRENTS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// How long replicas share a checkpoint (Kvrocks: half the WAL TTL, from
/// 10 minutes to an hour).
fn share_window() -> Duration {
    let ttl = redcodec_engine::store::wal::retention().ttl_seconds;
    Duration::from_secs((ttl / 2).clamp(600, 3600))
}

/// A checkpoint's files (sorted), made or shared; `Err` says why none
/// could be made.
pub fn files(shared: &Shared) -> Result<Vec<String>, String> {
    let engine = shared.engines.current().map_err(|e| format!("{e:?}"))?;
    let store = engine.store();
    let mut all = currents().lock();
    if let Some(c) = all.get(&shared.replid) {
        if c.created.elapsed() < share_window()
            && c.files_dir.is_dir()
            && store.wal_starts_at(c.sequence + 1)
        {
            return Ok(c.files.clone());
        }
    }
    all.remove(&shared.replid);
    let root = Path::new(&shared.config.dir).join(DIR_NAME);
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .map_err(|e| format!("removing the old checkpoint {}: {e}", root.display()))?;
    }
    let sequence = store.latest_sequence();
    store
        .checkpoint(&root)
        .map_err(|e| format!("checkpoint of the store: {e}"))?;
    let files_dir = root.join(redcodec_kvrocks::layout::DIR);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&files_dir).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.file_type().map_err(|e| e.to_string())?.is_file() {
            files.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    files.sort();
    all.insert(
        shared.replid.clone(),
        Current {
            files_dir,
            files: files.clone(),
            created: Instant::now(),
            sequence,
        },
    );
    eprintln!(
        "redcodec serve: Kvrocks replica: checkpoint of {} files at sequence {sequence} for its full copy",
        files.len()
    );
    Ok(files)
}

/// `_fetch_meta`'s answer: the names, comma-separated, on one line; or
/// Kvrocks' `-can't create db checkpoint`.
pub async fn send_meta(shared: &std::sync::Arc<Shared>, wr: &mut OwnedWriteHalf) {
    let made = {
        let shared = shared.clone();
        tokio::task::spawn_blocking(move || files(&shared))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    };
    let line = match made {
        Ok(files) => format!("{}\r\n", files.join(",")),
        Err(e) => {
            eprintln!("redcodec serve: Kvrocks replica: no checkpoint: {e}");
            "-can't create db checkpoint\r\n".to_string()
        }
    };
    let _ = wr.write_all(line.as_bytes()).await;
}

/// The file `name` of the current checkpoint: a name `_fetch_meta`
/// listed, nothing else (no path, no file of the store itself).
pub fn open(shared: &Shared, name: &str) -> Result<(std::fs::File, u64), String> {
    let current = currents().lock().get(&shared.replid).cloned();
    let Some(current) = current else {
        return Err("no checkpoint was made (send _fetch_meta first)".to_string());
    };
    if !current.files.iter().any(|f| f == name) {
        return Err(format!("'{name}' is not a file of the checkpoint"));
    }
    let path = current.files_dir.join(name);
    let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    Ok((file, size))
}

/// The connections sending files now, by server (Kvrocks'
/// `fetch_file_threads_`).
fn senders() -> &'static Mutex<HashMap<String, usize>> {
    static SENDERS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    SENDERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// One connection counted in [`senders`] while it lives.
struct Sending(String);

impl Sending {
    fn start(shared: &Shared) -> Sending {
        *senders().lock().entry(shared.replid.clone()).or_default() += 1;
        Sending(shared.replid.clone())
    }

    /// This connection's share of `max-replication-mb`, in bytes a
    /// second (`None`: no limit).
    fn limit(&self, shared: &Shared) -> Option<u64> {
        let mb: u64 = shared
            .settings
            .lock()
            .value("max-replication-mb")
            .and_then(|v| v.parse().ok())
            .filter(|mb| *mb > 0)?;
        let n = senders().lock().get(&self.0).copied().unwrap_or(1).max(1);
        Some((mb << 20) / n as u64)
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if let Some(n) = senders().lock().get_mut(&self.0) {
            *n = n.saturating_sub(1);
        }
    }
}

/// `_fetch_file`'s answer: per file `<size>\r\n` and its bytes; at a name
/// that is not a file of the checkpoint, an error line, and no more.
pub async fn send_files(shared: &Shared, wr: &mut OwnedWriteHalf, list: &[u8]) {
    let list = String::from_utf8_lossy(list).into_owned();
    let sending = Sending::start(shared);
    for name in list.split(',') {
        let limit = sending.limit(shared);
        let started = Instant::now();
        let (file, size) = match open(shared, name) {
            Ok(found) => found,
            Err(e) => {
                eprintln!("redcodec serve: Kvrocks replica: _fetch_file refused: {e}");
                let _ = wr
                    .write_all(format!("-ERR _fetch_file: {e}\r\n").as_bytes())
                    .await;
                return;
            }
        };
        if wr
            .write_all(format!("{size}\r\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        if send_file(file, size, wr).await.is_err() {
            return;
        }
        // Not faster than the limit: a file of `size` bytes takes at
        // least `size / limit` seconds.
        if let Some(limit) = limit.filter(|l| *l > 0) {
            let shortest = Duration::from_secs_f64(size as f64 / limit as f64);
            if let Some(wait) = shortest.checked_sub(started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// Sends `size` bytes of `file`, read a MiB at a time off the runtime's
/// threads.
async fn send_file(
    mut file: std::fs::File,
    size: u64,
    wr: &mut OwnedWriteHalf,
) -> std::io::Result<()> {
    let mut left = size;
    while left > 0 {
        let want = left.min(1 << 20) as usize;
        let (back, chunk) = tokio::task::spawn_blocking(move || {
            let mut chunk = vec![0u8; want];
            let read = std::io::Read::read_exact(&mut file, &mut chunk);
            (file, read.map(|()| chunk))
        })
        .await
        .map_err(std::io::Error::other)?;
        file = back;
        wr.write_all(&chunk?).await?;
        left -= want as u64;
    }
    Ok(())
}
