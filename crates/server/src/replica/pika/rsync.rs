//! Fetching a Pika master's dump through its rsync2 service (port +
//! 10001, `src/rsync_server.cc`): a `kRsyncMeta` request names the dump's
//! files (paths relative to the dump: `0/000012.sst` on Pika 4,
//! `strings/000012.sst` on Pika 3.5, and `info`) and its snapshot UUID
//! (the MD5 of the `info` file); the master answers `kErr` while its
//! bgsave is running. Each file then comes in `kRsyncFile` chunks (offset,
//! count, `eof` on the last one); a chunk of another snapshot UUID means
//! the master made a new dump meanwhile, and the fetch starts again.
//!
//! Requests go one at a time, 4 MiB each (Pika's replica asks 4 MiB per
//! request too).

use std::io::Write;
use std::path::{Component, Path};
use std::time::{Duration, Instant};

use super::link::PbConn;
use super::messages::{FileRequest, RsyncRequest, RsyncResponse, RsyncStatus, RsyncType};
use crate::replica::link_error::LinkError;
use crate::state::Shared;

/// The rsync2 service's port: the master's port + 10001
/// (`kPortShiftRsync2`).
pub const PORT_SHIFT: u16 = 10001;

/// Bytes asked per request (`kBytesPerRequest`).
const CHUNK: u64 = 4 << 20;

/// How long a bgsave may take before the copy gives up (and starts
/// again at the next attempt).
const BGSAVE_WAIT: Duration = Duration::from_secs(1800);

/// A dump fetched.
#[derive(Debug)]
pub struct Dump {
    /// The snapshot UUID.
    pub uuid: String,
    /// The files fetched (relative paths).
    pub files: Vec<String>,
    /// Bytes fetched.
    pub bytes: u64,
}

/// A relative path that stays inside the spool directory.
pub fn safe_path(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(['\\', '\0'])
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

fn request(db: &str, kind: RsyncType, file: Option<FileRequest>) -> RsyncRequest {
    RsyncRequest {
        r#type: kind as i32,
        reader_index: 0,
        db_name: db.to_string(),
        slot_id: 0,
        file_req: file,
    }
}

/// The dump's file names and UUID, once the bgsave is done.
async fn meta(
    shared: &Shared,
    conn: &mut PbConn,
    db: &str,
) -> Result<(String, Vec<String>), LinkError> {
    let started = Instant::now();
    loop {
        conn.send(&request(db, RsyncType::Meta, None)).await?;
        let resp: RsyncResponse = conn.recv().await?;
        shared.replica.state.lock().last_io = Some(Instant::now());
        if resp.code == RsyncStatus::Ok as i32 {
            let files = resp.meta_resp.map(|m| m.filenames).unwrap_or_default();
            if let Some(bad) = files.iter().find(|f| !safe_path(f)) {
                return Err(LinkError::Protocol(format!(
                    "the Pika master named a dump file '{bad}', not a relative path"
                )));
            }
            if !files.iter().any(|f| f == "info") {
                return Err(LinkError::Protocol(
                    "the Pika master's dump has no info file".into(),
                ));
            }
            return Ok((resp.snapshot_uuid, files));
        }
        if started.elapsed() > BGSAVE_WAIT {
            return Err(LinkError::Handshake(format!(
                "the Pika master's bgsave of {db} did not finish in {} s",
                BGSAVE_WAIT.as_secs()
            )));
        }
        // The bgsave is running.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Fetches the dump of database `db` into `dir` (emptied first).
pub async fn fetch(
    shared: &Shared,
    host: &str,
    port: u16,
    db: &str,
    dir: &Path,
) -> Result<Dump, LinkError> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(LinkError::spool)?;
    let rsync_port = port.checked_add(PORT_SHIFT).ok_or_else(|| {
        LinkError::Handshake(format!(
            "the Pika master's port {port} leaves no room for its rsync port (+{PORT_SHIFT})"
        ))
    })?;
    let mut conn = PbConn::connect(host, rsync_port).await?;
    let (uuid, files) = meta(shared, &mut conn, db).await?;
    let mut bytes = 0u64;
    for name in &files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(LinkError::spool)?;
        }
        let mut out = std::fs::File::create(&path).map_err(LinkError::spool)?;
        let mut offset = 0u64;
        loop {
            let file = FileRequest {
                filename: name.clone(),
                count: CHUNK,
                offset,
            };
            conn.send(&request(db, RsyncType::File, Some(file))).await?;
            let resp: RsyncResponse = conn.recv().await?;
            if resp.code != RsyncStatus::Ok as i32 {
                return Err(LinkError::Handshake(format!(
                    "the Pika master could not send {name} of its dump of {db}"
                )));
            }
            if resp.snapshot_uuid != uuid {
                return Err(LinkError::Handshake(format!(
                    "the Pika master replaced its dump of {db} during the copy (snapshot {uuid} became {}); copying again",
                    resp.snapshot_uuid
                )));
            }
            let Some(chunk) = resp.file_resp else {
                return Err(LinkError::Protocol(format!(
                    "the Pika master answered a request for {name} without the file's bytes"
                )));
            };
            if chunk.filename != *name
                || chunk.offset != offset
                || chunk.count != chunk.data.len() as u64
            {
                return Err(LinkError::Protocol(format!(
                    "the Pika master sent {} bytes of {} at {} (count {}) where {name} at {offset} was asked",
                    chunk.data.len(),
                    chunk.filename,
                    chunk.offset,
                    chunk.count
                )));
            }
            out.write_all(&chunk.data).map_err(LinkError::spool)?;
            offset += chunk.count;
            bytes += chunk.count;
            {
                let mut st = shared.replica.state.lock();
                st.sync_read = i64::try_from(bytes).unwrap_or(i64::MAX);
                st.last_io = Some(Instant::now());
            }
            if chunk.eof != 0 {
                break;
            }
            if chunk.count == 0 {
                return Err(LinkError::Protocol(format!(
                    "the Pika master sent no bytes of {name} at {offset} and no end of file"
                )));
            }
        }
        out.sync_all().map_err(LinkError::spool)?;
    }
    Ok(Dump { uuid, files, bytes })
}

#[cfg(test)]
mod tests {
    use super::safe_path;

    #[test]
    fn only_relative_paths_inside_the_dump_are_accepted() {
        assert!(safe_path("info"));
        assert!(safe_path("0/000012.sst"));
        assert!(safe_path("strings/MANIFEST-000005"));
        for bad in ["", "/etc/passwd", "../x", "0/../../x", "a\\b", "a\0b", "."] {
            assert!(!safe_path(bad), "{bad:?}");
        }
    }
}
