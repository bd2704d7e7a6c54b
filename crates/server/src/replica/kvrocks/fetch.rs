//! The files of a Kvrocks master's checkpoint: `_fetch_meta` (one line:
//! the file names, comma-separated; the master closes the connection
//! after it) and `_fetch_file <names>` on a new connection (per file
//! `<size>\r\n` then the bytes; on a missing file the master closes the
//! connection).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use super::kvrocks_conn::Conn;
use crate::replica::link_error::LinkError;
use crate::state::Shared;

/// `_fetch_meta`: the checkpoint's file names.
pub async fn fetch_meta(conn: &mut Conn) -> Result<Vec<String>, LinkError> {
    conn.send(&[b"_fetch_meta"]).await?;
    let line = conn.line().await?;
    let text = String::from_utf8_lossy(&line).into_owned();
    if text.starts_with('-') {
        return Err(LinkError::Handshake(format!(
            "the Kvrocks master could not make a checkpoint: {text}"
        )));
    }
    let files: Vec<String> = text.split(',').map(str::to_string).collect();
    for f in &files {
        if !safe_name(f) {
            return Err(LinkError::Protocol(format!(
                "the Kvrocks master named a checkpoint file '{f}', not a plain file name"
            )));
        }
    }
    Ok(files)
}

/// A file name that stays inside the spool directory.
fn safe_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// Fetches every file into `spool/db/` (the directory emptied first);
/// INFO's sync byte counts follow.
pub async fn fetch_files(
    shared: &Shared,
    host: &str,
    port: u16,
    files: &[String],
    spool: &Path,
) -> Result<(), LinkError> {
    let db = spool.join(redcodec_kvrocks::layout::DIR);
    let _ = std::fs::remove_dir_all(spool);
    std::fs::create_dir_all(&db).map_err(LinkError::spool)?;
    {
        let mut st = shared.replica.state.lock();
        st.sync_total = -1;
        st.sync_read = 0;
    }
    let mut conn = Conn::connect(host, port).await?;
    conn.auth(shared).await?;
    let list = files.join(",");
    conn.send(&[b"_fetch_file", list.as_bytes()]).await?;
    let mut total: u64 = 0;
    for name in files {
        let line = conn.line().await?;
        let text = String::from_utf8_lossy(&line).into_owned();
        if text.starts_with('-') {
            return Err(LinkError::Handshake(format!(
                "the Kvrocks master could not send {name}: {text}"
            )));
        }
        let size: u64 = text.parse().map_err(|_| {
            LinkError::Protocol(format!("bad size of checkpoint file {name}: '{text}'"))
        })?;
        let mut out = std::fs::File::create(db.join(name)).map_err(LinkError::spool)?;
        let mut left = size;
        while left > 0 {
            if conn.buf.is_empty() {
                conn.more().await?;
            }
            let n = usize::try_from(left)
                .unwrap_or(usize::MAX)
                .min(conn.buf.len());
            let chunk = conn.buf.split_to(n);
            out.write_all(&chunk).map_err(LinkError::spool)?;
            left -= n as u64;
            total += n as u64;
            let mut st = shared.replica.state.lock();
            st.sync_read = i64::try_from(total).unwrap_or(i64::MAX);
            st.last_io = Some(Instant::now());
        }
        out.sync_all().map_err(LinkError::spool)?;
    }
    Ok(())
}
