//! The checkpoint of a migration to or from a server: which migration it
//! is, how far it got, what it had done. A text file, replaced atomically
//! (written aside, then renamed) after each pipeline or page, so it never
//! claims more than was written.
//!
//! ```text
//! redcodec network migration checkpoint 1
//! from kvrocks /data/kv
//! to redis://127.0.0.1:6379/0
//! merge false
//! done 12 3456 78901
//! after-key 6b6579
//! ```
//!
//! `after-key HEX` (or `after-key -`, before the first key): the last key
//! of a store surely written to the server; `cursor N`: the `SCAN` cursor
//! after the last page of the server surely written to the store.

use std::io::Write;
use std::path::Path;

use redcodec_engine::store::{hex, unhex};
use redcodec_migrate::Tally;

use super::fail;
use crate::error::CliError;

const HEADER: &str = "redcodec network migration checkpoint 1";

/// Where a resumed migration continues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// After this key of the source store (`None`: at the first).
    AfterKey(Option<Vec<u8>>),
    /// At this `SCAN` cursor of the source server.
    Cursor(u64),
}

/// A migration's progress, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The source, as `describe`d.
    pub from: String,
    /// The destination, as described.
    pub to: String,
    /// Whether the run was asked to merge.
    pub merge: bool,
    /// What was written so far.
    pub done: Tally,
    /// Where to continue.
    pub position: Position,
}

impl Checkpoint {
    /// The checkpoint in `path`, if there is one.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, CliError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(fail(format!("checkpoint {}: {e}", path.display()))),
        };
        parse(&text)
            .map(Some)
            .ok_or_else(|| fail(format!("checkpoint {} is not readable", path.display())))
    }

    /// Replaces the file at `path` with this checkpoint; with `sync`, on
    /// disk before it returns.
    pub fn save(&self, path: &Path, sync: bool) -> Result<(), CliError> {
        let error = |e: std::io::Error| fail(format!("checkpoint {}: {e}", path.display()));
        let mut aside = path.as_os_str().to_owned();
        aside.push(".tmp");
        let aside = std::path::PathBuf::from(aside);
        let mut file = std::fs::File::create(&aside).map_err(error)?;
        file.write_all(self.text().as_bytes()).map_err(error)?;
        if sync {
            file.sync_all().map_err(error)?;
        }
        std::fs::rename(&aside, path).map_err(error)
    }

    /// Deletes the file at `path` (the migration completed).
    pub fn remove(path: &Path) -> Result<(), CliError> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(fail(format!("checkpoint {}: {e}", path.display())))
            }
            _ => Ok(()),
        }
    }

    fn text(&self) -> String {
        let position = match &self.position {
            Position::AfterKey(Some(key)) => format!("after-key {}", hex(key)),
            Position::AfterKey(None) => "after-key -".to_string(),
            Position::Cursor(c) => format!("cursor {c}"),
        };
        let d = self.done;
        format!(
            "{HEADER}\nfrom {}\nto {}\nmerge {}\ndone {} {} {}\n{position}\n",
            self.from, self.to, self.merge, d.keys, d.elements, d.bytes
        )
    }
}

fn parse(text: &str) -> Option<Checkpoint> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut field = |name: &str| -> Option<String> {
        let line = lines.next()?;
        let rest = line.strip_prefix(name)?.strip_prefix(' ')?;
        Some(rest.to_string())
    };
    let from = field("from")?;
    let to = field("to")?;
    let merge = field("merge")?.parse().ok()?;
    let done: Vec<u64> = field("done")?
        .split(' ')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [keys, elements, bytes] = done[..] else {
        return None;
    };
    let line = lines.next()?;
    let position = if let Some(key) = line.strip_prefix("after-key ") {
        Position::AfterKey(if key == "-" { None } else { Some(unhex(key)?) })
    } else {
        Position::Cursor(line.strip_prefix("cursor ")?.parse().ok()?)
    };
    Some(Checkpoint {
        from,
        to,
        merge,
        done: Tally {
            keys,
            elements,
            bytes,
        },
        position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_survive_a_save_and_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.checkpoint");
        assert_eq!(Checkpoint::load(&path).unwrap(), None);
        for position in [
            Position::AfterKey(Some(b"k\x00\xff ".to_vec())),
            Position::AfterKey(None),
            Position::Cursor(1234),
        ] {
            let c = Checkpoint {
                from: "kvrocks /tmp/a b".into(),
                to: "redis://127.0.0.1:1/0".into(),
                merge: true,
                done: Tally {
                    keys: 1,
                    elements: 2,
                    bytes: 3,
                },
                position,
            };
            c.save(&path, true).unwrap();
            assert_eq!(Checkpoint::load(&path).unwrap(), Some(c));
        }
        std::fs::write(&path, "something else").unwrap();
        assert!(Checkpoint::load(&path).is_err());
        Checkpoint::remove(&path).unwrap();
        Checkpoint::remove(&path).unwrap();
        assert!(!path.exists());
    }
}
