//! The checkpoints of migrations: small text files, rewritten (to a
//! temporary name, synced, then renamed over the old one) as a migration
//! goes, so they never claim more than was written, and deleted when it
//! completes. One file mechanism, two records:
//!
//! - [`Checkpoint`], of a migration between two stores, rewritten before
//!   every commit on the destination;
//! - [`ServerCheckpoint`], of a migration with a server on one side,
//!   rewritten after each pipeline or page.
//!
//! # Between two stores
//!
//! The checkpoint says which keys are surely written
//! (`done`), which may be partly written (up to `through`, with the
//! metadata of a key cut between commits: `pending`), and the
//! destination's version counter at `done`, so a resumed run hands out the
//! same versions an uninterrupted one would have.
//!
//! Every line is `name value…`; byte strings are lower-case hex, `-` for
//! none. The file names the source and destination so it cannot resume
//! another job.
//!
//! # With a server
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
use std::path::{Path, PathBuf};

use redcodec_codec::DataType;

use crate::error::MigrateError;
use crate::report::{Skipped, Tally};
use crate::represent::Unrepresentable;
use redcodec_engine::store::{hex, unhex};

const MAGIC: &str = "redcodec migration checkpoint 1";

/// What a checkpoint records.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Checkpoint {
    /// The source's format name.
    pub source_format: String,
    /// The source's directory.
    pub source_dir: Vec<u8>,
    /// The destination's format name.
    pub destination_format: String,
    /// Whether the destination held data to merge with.
    pub merge: bool,
    /// Whether destination keys are looked up before they are written.
    pub probe: bool,
    /// The last source key whose records are all written; `None`: none yet.
    pub done: Option<Vec<u8>>,
    /// The destination's version counter right after `done` was written.
    pub counter: u64,
    /// The last source key of the commit in flight (may be partly written).
    pub through: Option<Vec<u8>>,
    /// How many source keys follow `done` up to and including `through`.
    pub through_count: u64,
    /// A key cut between commits: its type and its destination metadata
    /// (encoded by the destination format) as written with the commit in
    /// flight; a resumed run deletes the element records it names.
    pub pending: Option<(DataType, Vec<u8>)>,
    /// What was migrated up to `done`.
    pub tally: Tally,
    /// Keys up to `done` skipped because they had expired.
    pub expired: u64,
    /// Keys skipped as unrepresentable.
    pub skipped: Vec<Skipped>,
    /// The bulk path's own state (`None`: the write path's checkpoint).
    pub bulk: Option<String>,
}

impl Checkpoint {
    /// Writes the checkpoint to `path` atomically (a new file renamed over
    /// the old one); with `durable`, synced to disk as well.
    pub(crate) fn save(&self, path: &Path, durable: bool) -> std::io::Result<()> {
        let mut text = String::new();
        let mut line = |name: &str, value: String| {
            text.push_str(name);
            text.push(' ');
            text.push_str(&value);
            text.push('\n');
        };
        line("format", MAGIC.to_string());
        line("source-format", self.source_format.clone());
        line("source-dir", hex(&self.source_dir));
        line("destination-format", self.destination_format.clone());
        line("merge", u8::from(self.merge).to_string());
        line("probe", u8::from(self.probe).to_string());
        line("done", opt_hex(self.done.as_deref()));
        line("counter", self.counter.to_string());
        line("through", opt_hex(self.through.as_deref()));
        line("through-count", self.through_count.to_string());
        line(
            "pending",
            match &self.pending {
                Some((ty, meta)) => format!("{} {}", ty.redis_name(), hex(meta)),
                None => "-".into(),
            },
        );
        line("keys", self.tally.keys.to_string());
        line("elements", self.tally.elements.to_string());
        line("bytes", self.tally.bytes.to_string());
        line("expired", self.expired.to_string());
        if let Some(bulk) = &self.bulk {
            line("bulk", bulk.clone());
        }
        for skipped in &self.skipped {
            line(
                "skipped",
                format!(
                    "{} {} {}",
                    hex(&skipped.key),
                    skipped.data_type.map_or("-", DataType::redis_name),
                    encode_reason(&skipped.reason)
                ),
            );
        }
        replace(path, &text, durable)
    }

    /// Reads a checkpoint; the error says what is wrong with the file.
    pub(crate) fn load(path: &Path) -> Result<Checkpoint, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        parse_store(&text)
    }
}

/// A store-to-store checkpoint's text, parsed.
fn parse_store(text: &str) -> Result<Checkpoint, String> {
    let mut cp = Checkpoint {
        source_format: String::new(),
        source_dir: Vec::new(),
        destination_format: String::new(),
        merge: false,
        probe: true,
        done: None,
        counter: 0,
        through: None,
        through_count: 0,
        pending: None,
        tally: Tally::default(),
        expired: 0,
        skipped: Vec::new(),
        bulk: None,
    };
    let mut magic = false;
    for (n, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("line {}: {what}", n + 1);
        let (name, value) = line.split_once(' ').ok_or_else(|| bad("no value"))?;
        match name {
            "format" => magic = value == MAGIC,
            "source-format" => cp.source_format = value.to_string(),
            "source-dir" => cp.source_dir = unhex(value).ok_or_else(|| bad("bad hex"))?,
            "destination-format" => cp.destination_format = value.to_string(),
            "merge" => cp.merge = value == "1",
            "probe" => cp.probe = value == "1",
            "done" => cp.done = opt_unhex(value).ok_or_else(|| bad("bad hex"))?,
            "counter" => cp.counter = number(value).ok_or_else(|| bad("bad number"))?,
            "through" => cp.through = opt_unhex(value).ok_or_else(|| bad("bad hex"))?,
            "through-count" => {
                cp.through_count = number(value).ok_or_else(|| bad("bad number"))?;
            }
            "pending" => {
                cp.pending = if value == "-" {
                    None
                } else {
                    let (ty, meta) = value.split_once(' ').ok_or_else(|| bad("bad pending"))?;
                    let ty =
                        DataType::from_redis_name(ty.as_bytes()).ok_or_else(|| bad("bad type"))?;
                    Some((ty, unhex(meta).ok_or_else(|| bad("bad hex"))?))
                }
            }
            "keys" => cp.tally.keys = number(value).ok_or_else(|| bad("bad number"))?,
            "elements" => cp.tally.elements = number(value).ok_or_else(|| bad("bad number"))?,
            "bytes" => cp.tally.bytes = number(value).ok_or_else(|| bad("bad number"))?,
            "expired" => cp.expired = number(value).ok_or_else(|| bad("bad number"))?,
            "bulk" => cp.bulk = Some(value.to_string()),
            "skipped" => cp
                .skipped
                .push(decode_skipped(value).ok_or_else(|| bad("bad skipped key"))?),
            _ => return Err(bad(&format!("unknown entry '{name}'"))),
        }
    }
    if !magic {
        return Err("not a redcodec migration checkpoint".into());
    }
    Ok(cp)
}

/// Replaces the file at `path` with `text`: written aside (`PATH.tmp`),
/// then renamed over it; with `durable`, the file and the rename synced
/// to disk before it returns.
fn replace(path: &Path, text: &str, durable: bool) -> std::io::Result<()> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(".tmp");
    let aside = PathBuf::from(aside);
    {
        let mut file = std::fs::File::create(&aside)?;
        file.write_all(text.as_bytes())?;
        if durable {
            file.sync_all()?;
        }
    }
    std::fs::rename(&aside, path)?;
    if !durable {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        // Makes the rename itself durable; not every platform can.
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

pub(crate) fn remove_checkpoint(path: &Path) -> Result<(), MigrateError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(checkpoint_error(path, e.to_string())),
    }
}

/// The bytes of a directory's path, as a checkpoint records its source
/// (canonical where the directory exists).
pub(crate) fn dir_bytes(dir: &Path) -> Vec<u8> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.to_string_lossy().into_owned().into_bytes()
}

pub(crate) fn checkpoint_error(path: &Path, reason: String) -> MigrateError {
    MigrateError::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}

const SERVER_HEADER: &str = "redcodec network migration checkpoint 1";

/// Where a resumed migration with a server continues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// After this key of the source store (`None`: at the first).
    AfterKey(Option<Vec<u8>>),
    /// At this `SCAN` cursor of the source server.
    Cursor(u64),
}

/// The progress of a migration with a server, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCheckpoint {
    /// The source, as described in messages.
    pub from: String,
    /// The destination, likewise.
    pub to: String,
    /// Whether the run was asked to merge.
    pub merge: bool,
    /// What was written so far.
    pub done: Tally,
    /// Where to continue.
    pub position: Position,
}

impl ServerCheckpoint {
    /// The checkpoint in `path`, if there is one.
    pub fn load(path: &Path) -> Result<Option<ServerCheckpoint>, MigrateError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(checkpoint_error(path, e.to_string())),
        };
        parse_server(&text)
            .map(Some)
            .ok_or_else(|| checkpoint_error(path, "is not readable".into()))
    }

    /// Replaces the file at `path` with this checkpoint; with `sync`, on
    /// disk before it returns.
    pub fn save(&self, path: &Path, sync: bool) -> Result<(), MigrateError> {
        replace(path, &self.text(), sync).map_err(|e| checkpoint_error(path, e.to_string()))
    }

    fn text(&self) -> String {
        let position = match &self.position {
            Position::AfterKey(key) => format!("after-key {}", opt_hex(key.as_deref())),
            Position::Cursor(c) => format!("cursor {c}"),
        };
        let d = self.done;
        format!(
            "{SERVER_HEADER}\nfrom {}\nto {}\nmerge {}\ndone {} {} {}\n{position}\n",
            self.from, self.to, self.merge, d.keys, d.elements, d.bytes
        )
    }
}

/// A checkpoint of a migration with a server, parsed.
fn parse_server(text: &str) -> Option<ServerCheckpoint> {
    let mut lines = text.lines();
    if lines.next()? != SERVER_HEADER {
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
        .map(number)
        .collect::<Option<_>>()?;
    let [keys, elements, bytes] = done[..] else {
        return None;
    };
    let line = lines.next()?;
    let position = match line.strip_prefix("after-key ") {
        Some(key) => Position::AfterKey(opt_unhex(key)?),
        None => Position::Cursor(number(line.strip_prefix("cursor ")?)?),
    };
    Some(ServerCheckpoint {
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

fn opt_hex(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(|| "-".to_string(), hex)
}

fn opt_unhex(text: &str) -> Option<Option<Vec<u8>>> {
    if text == "-" {
        Some(None)
    } else {
        unhex(text).map(Some)
    }
}

fn number(text: &str) -> Option<u64> {
    text.parse().ok()
}

fn float(text: &str) -> Option<f64> {
    u64::from_str_radix(text, 16).ok().map(f64::from_bits)
}

fn encode_reason(reason: &Unrepresentable) -> String {
    match reason {
        Unrepresentable::KeyTooLong {
            data_type,
            len,
            limit,
        } => format!("key-too-long {} {len} {limit}", data_type.redis_name()),
        Unrepresentable::ExpireTooLate { expire_ms, max_ms } => {
            format!("expire-too-late {expire_ms} {max_ms}")
        }
        Unrepresentable::ScoreOutOfRange {
            member,
            score,
            min,
            max,
        } => format!(
            "score-out-of-range {} {:x} {:x} {:x}",
            hex(member),
            score.to_bits(),
            min.to_bits(),
            max.to_bits()
        ),
        Unrepresentable::Refused(message) => format!("refused {}", hex(message.as_bytes())),
        Unrepresentable::SeveralTypes { types } => {
            let names: Vec<&str> = types.iter().map(|t| t.redis_name()).collect();
            format!("several-types {}", names.join(","))
        }
        Unrepresentable::Unmodelled { type_name } => {
            format!("unmodelled {}", hex(type_name.as_bytes()))
        }
    }
}

fn decode_skipped(text: &str) -> Option<Skipped> {
    let mut words = text.split(' ');
    let key = unhex(words.next()?)?;
    let data_type = match words.next()? {
        "-" => None,
        name => Some(DataType::from_redis_name(name.as_bytes())?),
    };
    let reason = match words.next()? {
        "key-too-long" => Unrepresentable::KeyTooLong {
            data_type: DataType::from_redis_name(words.next()?.as_bytes())?,
            len: words.next()?.parse().ok()?,
            limit: words.next()?.parse().ok()?,
        },
        "expire-too-late" => Unrepresentable::ExpireTooLate {
            expire_ms: number(words.next()?)?,
            max_ms: number(words.next()?)?,
        },
        "score-out-of-range" => Unrepresentable::ScoreOutOfRange {
            member: unhex(words.next()?)?,
            score: float(words.next()?)?,
            min: float(words.next()?)?,
            max: float(words.next()?)?,
        },
        "refused" => Unrepresentable::Refused(String::from_utf8(unhex(words.next()?)?).ok()?),
        "unmodelled" => Unrepresentable::Unmodelled {
            type_name: String::from_utf8(unhex(words.next()?)?).ok()?,
        },
        "several-types" => Unrepresentable::SeveralTypes {
            types: words
                .next()?
                .split(',')
                .map(|t| DataType::from_redis_name(t.as_bytes()))
                .collect::<Option<Vec<_>>>()?,
        },
        _ => return None,
    };
    if words.next().is_some() {
        return None;
    }
    Some(Skipped {
        key,
        data_type,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let cp = Checkpoint {
            source_format: "kvrocks".into(),
            source_dir: b"/tmp/a b".to_vec(),
            destination_format: "blackwidow".into(),
            merge: true,
            probe: false,
            done: Some(b"k\x00\xff".to_vec()),
            counter: 42,
            through: Some(Vec::new()),
            through_count: 3,
            pending: Some((DataType::List, vec![1, 2, 3])),
            tally: Tally {
                keys: 1,
                elements: 2,
                bytes: 3,
            },
            expired: 4,
            skipped: vec![
                Skipped {
                    key: b"long".to_vec(),
                    data_type: Some(DataType::Hash),
                    reason: Unrepresentable::KeyTooLong {
                        data_type: DataType::Hash,
                        len: 300,
                        limit: 254,
                    },
                },
                Skipped {
                    key: b"z".to_vec(),
                    data_type: Some(DataType::ZSet),
                    reason: Unrepresentable::ScoreOutOfRange {
                        member: b"m".to_vec(),
                        score: -1e300,
                        min: -1e15,
                        max: 1e15,
                    },
                },
                Skipped {
                    key: b"t".to_vec(),
                    data_type: Some(DataType::String),
                    reason: Unrepresentable::ExpireTooLate {
                        expire_ms: 5,
                        max_ms: 4,
                    },
                },
                Skipped {
                    key: b"r".to_vec(),
                    data_type: Some(DataType::Set),
                    reason: Unrepresentable::Refused("too long: 5 bytes".into()),
                },
                Skipped {
                    key: b"bits".to_vec(),
                    data_type: None,
                    reason: Unrepresentable::Unmodelled {
                        type_name: "bitmap".into(),
                    },
                },
                Skipped {
                    key: b"multi".to_vec(),
                    data_type: Some(DataType::String),
                    reason: Unrepresentable::SeveralTypes {
                        types: vec![DataType::String, DataType::Hash],
                    },
                },
            ],
            bulk: Some("phase=sort runs=2".into()),
        };
        cp.save(&path, true).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap(), cp);
        let fresh = Checkpoint {
            done: None,
            through: None,
            pending: None,
            skipped: Vec::new(),
            ..cp
        };
        fresh.save(&path, false).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap(), fresh);
        assert!(!dir.path().join("cp.tmp").exists());
    }

    #[test]
    fn server_checkpoints_survive_a_save_and_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.checkpoint");
        assert_eq!(ServerCheckpoint::load(&path).unwrap(), None);
        for position in [
            Position::AfterKey(Some(b"k\x00\xff ".to_vec())),
            Position::AfterKey(None),
            Position::Cursor(1234),
        ] {
            let c = ServerCheckpoint {
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
            assert_eq!(ServerCheckpoint::load(&path).unwrap(), Some(c));
        }
        // The file an earlier release wrote reads the same.
        std::fs::write(
            &path,
            "redcodec network migration checkpoint 1\nfrom a\nto b\nmerge false\ndone 1 2 3\nafter-key 6b\n",
        )
        .unwrap();
        let c = ServerCheckpoint::load(&path).unwrap().unwrap();
        assert_eq!(c.position, Position::AfterKey(Some(b"k".to_vec())));
        std::fs::write(&path, "something else").unwrap();
        assert!(ServerCheckpoint::load(&path).is_err());
        remove_checkpoint(&path).unwrap();
        remove_checkpoint(&path).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn other_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        std::fs::write(&path, "hello world\n").unwrap();
        assert!(Checkpoint::load(&path)
            .unwrap_err()
            .contains("unknown entry"));
        std::fs::write(&path, "keys 1\n").unwrap();
        assert!(Checkpoint::load(&path)
            .unwrap_err()
            .contains("not a redcodec"));
        std::fs::write(&path, "done zz\n").unwrap();
        assert!(Checkpoint::load(&path).unwrap_err().contains("bad hex"));
    }
}
