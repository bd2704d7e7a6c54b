//! A master stopped cleanly and started again keeps its replicas' streams,
//! as Redis 7.0 does with the `repl-id` and `repl-offset` of its RDB
//! (`loadDataFromDisk`): the replication ID and offset the stream had
//! reached become `master_replid2` and `second_repl_offset` (offset + 1),
//! the backlog starts at that offset, and a replica that asks
//! `PSYNC <old id> <offset + 1>` gets `+CONTINUE <new id>` with nothing to
//! copy again.
//!
//! They are kept in `redcodec-master-state` in the data directory,
//! written at a clean stop once every connection has closed, with the
//! store's latest sequence numbers. At the next start the file is read and
//! removed; it counts only when the store reopened at exactly those
//! numbers (nothing wrote to it in between: no crash, no other tool) and
//! the server starts as a master. Anything else, and a replica copies in
//! full, as before.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::backlog::Backlog;
use crate::state::Shared;

/// The file's name in the data directory.
pub const STATE_FILE: &str = "redcodec-master-state";

/// What a clean stop keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The replication ID of the stream.
    pub replid: String,
    /// The offset it had reached (`master_repl_offset`).
    pub offset: u64,
    /// The store's latest sequence numbers, one per instance.
    pub sequences: Vec<u64>,
}

impl Saved {
    fn render(&self) -> String {
        let sequences: Vec<String> = self.sequences.iter().map(u64::to_string).collect();
        format!(
            "redcodec-master-state 1\nreplid {}\noffset {}\nsequences {}\n",
            self.replid,
            self.offset,
            sequences.join(",")
        )
    }

    /// Parses the file's text; `None` when it is not one this code wrote.
    pub fn parse(text: &str) -> Option<Saved> {
        let mut lines = text.lines();
        if lines.next()? != "redcodec-master-state 1" {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix(' ');
        let replid = field("replid")?;
        if replid.len() != 40 || !replid.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let offset = field("offset")?.parse().ok()?;
        let sequences = field("sequences")?
            .split(',')
            .map(|s| s.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        lines.next().is_none().then_some(())?;
        Some(Saved {
            replid: replid.to_string(),
            offset,
            sequences,
        })
    }
}

/// The file of the server's data directory.
pub fn state_path(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(STATE_FILE)
}

/// At a clean stop, once every connection has closed: keeps where the
/// stream is, if it was fed (a replica followed this server since its
/// start) and this server is a master.
pub fn save_at_stop(shared: &Shared) {
    if shared.replica.is_replica() {
        return;
    }
    let Some(offset) = shared
        .repl
        .core()
        .stream
        .lock()
        .backlog
        .as_ref()
        .map(Backlog::offset)
    else {
        return;
    };
    let saved = shared.engines.sync_wal().ok().and_then(|()| {
        let (sequences, _) = shared.engines.sequences()?;
        Some(Saved {
            replid: shared.replid.clone(),
            offset,
            sequences,
        })
    });
    let Some(saved) = saved else { return };
    match crate::durable::replace(&state_path(shared), saved.render().as_bytes()) {
        Ok(()) => eprintln!(
            "redcodec serve: replication: stopped as a master at offset {offset} of replication ID {}; replicas may continue from there at the next start",
            saved.replid
        ),
        Err(e) => eprintln!(
            "redcodec serve: replication: saving the master's replication state: {e} (replicas copy in full after the next start)"
        ),
    }
}

/// At start, before clients: takes the file (it is removed) and, when the
/// store is exactly as it was saved and this server starts as a master,
/// continues the stream from it. Returns whether it did.
pub fn restore(shared: &Shared) -> bool {
    let path = state_path(shared);
    let text = match crate::durable::take(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return false,
        Err(e) => {
            eprintln!(
                "redcodec serve: replication: taking {}: {e}",
                path.display()
            );
            return false;
        }
    };
    let Some(saved) = Saved::parse(&text) else {
        eprintln!(
            "redcodec serve: replication: {} is not a state file this version wrote; ignored",
            path.display()
        );
        return false;
    };
    let starts_as_replica = crate::replica::starts_following(shared);
    let unchanged = shared
        .engines
        .sequences()
        .is_some_and(|(_, at_open)| at_open == saved.sequences);
    if starts_as_replica || !unchanged {
        eprintln!(
            "redcodec serve: replication: the master's replication state in {} is dropped: {}",
            path.display(),
            if starts_as_replica {
                "the server starts as a replica"
            } else {
                "the store was written to since it was saved"
            }
        );
        return false;
    }
    let core = shared.repl.core();
    {
        let mut s = core.stream.lock();
        let size = core.backlog_size.load(Ordering::SeqCst);
        s.backlog = Some(Backlog::new(size, saved.offset));
        s.selected = None;
        core.active.store(true, Ordering::SeqCst);
    }
    *core.second.lock() = Some((saved.replid.clone(), saved.offset + 1));
    eprintln!(
        "redcodec serve: replication: the stream continues from offset {} of replication ID {} (now master_replid2)",
        saved.offset, saved.replid
    );
    true
}

#[cfg(test)]
mod tests {
    use super::Saved;

    #[test]
    fn the_file_reads_back_and_refuses_anything_else() {
        let saved = Saved {
            replid: "c0".repeat(20),
            offset: 9_876_543,
            sequences: vec![12, 0, 7],
        };
        assert_eq!(Saved::parse(&saved.render()), Some(saved.clone()));
        let text = saved.render();
        for bad in [
            String::new(),
            text.replace("redcodec-master-state 1", "redcodec-master-state 2"),
            text.replace(&"c0".repeat(20), "c0"),
            text.replace("9876543", "-1"),
            text.replace("12,0,7", "12,,7"),
            text.replace("offset", "offsets"),
            format!("{text}more\n"),
        ] {
            assert_eq!(Saved::parse(&bad), None, "{bad:?}");
        }
    }
}
