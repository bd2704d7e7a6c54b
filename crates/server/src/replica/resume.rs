//! Resuming after a restart: the replication ID and offset of the data
//! held, kept in the data directory (`redcodec-replica-state`), so that a
//! replica started again on the same directory (`serve --replicaof`,
//! `migrate --follow`) asks `PSYNC <replid> <offset+1>` and gets
//! `+CONTINUE` when the master's backlog still holds the bytes since,
//! instead of a full copy.
//!
//! **The rule: the file exists only while the store is exactly at its
//! offset.** It is written (after the store's write-ahead log is synced)
//! at a clean stop, once the link task has ended, and whenever the stream
//! has been quiet for a second; it is removed (and the removal made
//! durable) before the next command of the master that may change the
//! store is applied, before a full copy starts, at `REPLICAOF NO ONE`,
//! and when it is read at start. So a crash at any moment leaves either
//! no file (a full resynchronisation follows) or a file that matches the
//! store; a store left half loaded by a crash has its load marker, which
//! wins over any file. Writes the store makes of its own (an expired key
//! deleted) delete only what the master deletes too.
//!
//! Following a Kvrocks master, the offset is the master's RocksDB sequence
//! number of the last batch applied, and a `kvrocks HOST:PORT plain|cluster`
//! line names the master and its key layout: the next start asks that
//! master `PSYNC <offset+1>` ([`super::kvrocks`]) instead of copying again.
//!
//! Following a Pika master, a `pika HOST:PORT <binlog-file-size>
//! <replication-id>` line and one `pika-db <name> <filenum> <offset>` line
//! per database followed give each database's binlog position after the
//! last item applied: the next start asks that master `kTrySync` from
//! there ([`super::pika`]). The offset line is Pika's measure of them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::load::namespace_of;
use super::pika::pika_resume::{self, db_index, DbPosition, DEFAULT_BINLOG_FILE_SIZE};
use super::replica_state::describe_unknown;
use crate::state::Shared;

pub use super::resume_file::{invalidate, state_path, STATE_FILE};

/// What is kept between runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The replication ID of the stream the data follows.
    pub replid: String,
    /// The offset applied (the next byte wanted is `offset + 1`).
    pub offset: i64,
    /// The database the stream had selected (`None`: none yet).
    pub stream_db: Option<u64>,
    /// Set when the data follows a Kvrocks master: its address and
    /// whether its keys carry a cluster slot.
    pub kvrocks: Option<KvrocksMaster>,
    /// Set when the data follows a Pika master: where each of its
    /// databases continues.
    pub pika: Option<PikaMaster>,
    /// The master's commands not applied here since the last full copy
    /// (this server does not have them), by name: the data still differs
    /// from the master's in their keys after a restart.
    pub unknown_commands: BTreeMap<String, u64>,
}

/// The Pika master a saved state continues from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PikaMaster {
    /// The master's host and port.
    pub master: (String, u16),
    /// Its `binlog-file-size`.
    pub binlog_file_size: u64,
    /// Its replication ID (MetaSync's; may be empty).
    pub replication_id: String,
    /// Each database followed: its name on the master and the binlog
    /// file number and offset after the last item applied.
    pub dbs: Vec<(String, u32, u64)>,
}

impl PikaMaster {
    fn render(&self) -> String {
        let mut out = format!(
            "pika {}:{} {} {}\n",
            self.master.0, self.master.1, self.binlog_file_size, self.replication_id
        );
        for (name, filenum, offset) in &self.dbs {
            out.push_str(&format!("pika-db {name} {filenum} {offset}\n"));
        }
        out
    }

    /// `HOST:PORT SIZE ID` (the ID may be empty); databases come after.
    fn parse(value: &str) -> Option<PikaMaster> {
        let mut fields = value.splitn(3, ' ');
        let (host, port) = fields.next()?.rsplit_once(':')?;
        let binlog_file_size = fields.next()?.parse().ok()?;
        let replication_id = fields.next()?.to_string();
        (!host.is_empty() && !replication_id.contains(char::is_whitespace)).then_some(())?;
        Some(PikaMaster {
            master: (host.to_string(), port.parse().ok()?),
            binlog_file_size,
            replication_id,
            dbs: Vec::new(),
        })
    }

    /// `NAME FILENUM OFFSET`.
    fn parse_db(value: &str) -> Option<(String, u32, u64)> {
        let mut fields = value.split(' ');
        let name = fields.next().filter(|n| !n.is_empty())?;
        let filenum = fields.next()?.parse().ok()?;
        let offset = fields.next()?.parse().ok()?;
        fields.next().is_none().then_some(())?;
        Some((name.to_string(), filenum, offset))
    }
}

/// The Kvrocks master a saved state continues from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvrocksMaster {
    /// The master's host and port.
    pub master: (String, u16),
    /// Whether its keys carry a cluster slot.
    pub cluster: bool,
}

impl KvrocksMaster {
    fn render(&self) -> String {
        let layout = if self.cluster { "cluster" } else { "plain" };
        format!("kvrocks {}:{} {layout}\n", self.master.0, self.master.1)
    }

    fn parse(value: &str) -> Option<KvrocksMaster> {
        let (address, layout) = value.rsplit_once(' ')?;
        let (host, port) = address.rsplit_once(':')?;
        let cluster = match layout {
            "cluster" => true,
            "plain" => false,
            _ => return None,
        };
        (!host.is_empty()).then_some(())?;
        Some(KvrocksMaster {
            master: (host.to_string(), port.parse().ok()?),
            cluster,
        })
    }
}

impl Saved {
    fn render(&self) -> String {
        let db = self.stream_db.map_or("-".to_string(), |d| d.to_string());
        let kvrocks = self
            .kvrocks
            .as_ref()
            .map_or(String::new(), KvrocksMaster::render);
        let pika = self.pika.as_ref().map_or(String::new(), PikaMaster::render);
        let unknown = if self.unknown_commands.is_empty() {
            String::new()
        } else {
            format!("unknown {}\n", describe_unknown(&self.unknown_commands))
        };
        format!(
            "redcodec-replica-state 1\nreplid {}\noffset {}\ndb {db}\n{kvrocks}{pika}{unknown}",
            self.replid, self.offset
        )
    }

    /// Parses the file's text; `None` when it is not one this code wrote.
    pub fn parse(text: &str) -> Option<Saved> {
        let mut lines = text.lines();
        if lines.next()? != "redcodec-replica-state 1" {
            return None;
        }
        let mut replid = None;
        let mut offset = None;
        let mut db = None;
        let mut kvrocks = None;
        let mut pika: Option<PikaMaster> = None;
        let mut unknown_commands = BTreeMap::new();
        for line in lines {
            let (name, value) = line.split_once(' ')?;
            match name {
                "replid" if value.len() == 40 && value.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    replid = Some(value.to_string());
                }
                "offset" => offset = Some(value.parse::<i64>().ok().filter(|o| *o >= 0)?),
                "kvrocks" => kvrocks = Some(KvrocksMaster::parse(value)?),
                "pika" if pika.is_none() => pika = Some(PikaMaster::parse(value)?),
                "pika-db" => pika.as_mut()?.dbs.push(PikaMaster::parse_db(value)?),
                "unknown" if unknown_commands.is_empty() => {
                    for pair in value.split(',') {
                        let (name, n) = pair.split_once('=')?;
                        let n = n.parse::<u64>().ok().filter(|n| *n > 0)?;
                        if name.is_empty() || unknown_commands.insert(name.to_string(), n).is_some()
                        {
                            return None;
                        }
                    }
                }
                "db" => {
                    db = Some(match value {
                        "-" => None,
                        d => Some(d.parse::<u64>().ok()?),
                    });
                }
                _ => return None,
            }
        }
        Some(Saved {
            replid: replid?,
            offset: offset?,
            stream_db: db?,
            kvrocks,
            pika: match pika {
                Some(p) if p.dbs.is_empty() => return None,
                p => p,
            },
            unknown_commands,
        })
    }
}

/// Writes the state of the data held, if it came from a master it can
/// continue from: the store's write-ahead log is synced first, then the
/// file is written whole (a temporary file renamed). The caller makes
/// sure nothing applies the master's commands meanwhile.
pub fn save(shared: &Shared) -> std::io::Result<bool> {
    let replica = &shared.replica;
    if !replica.can_continue.load(Ordering::SeqCst) || replica.is_loading() {
        return Ok(false);
    }
    let saved = {
        let st = replica.state.lock();
        if st.master.is_none() || st.offset < 0 {
            return Ok(false);
        }
        Saved {
            replid: st.replid.clone(),
            offset: st.offset,
            stream_db: st.stream_db,
            kvrocks: super::kvrocks::kvrocks_resume::current(shared).map(|r| KvrocksMaster {
                master: r.master,
                cluster: r.cluster,
            }),
            pika: pika_resume::current(shared).map(|r| PikaMaster {
                master: r.master,
                binlog_file_size: r.binlog_file_size,
                replication_id: r.replication_id,
                dbs: r
                    .dbs
                    .into_iter()
                    .map(|d| (d.name, d.filenum, d.offset))
                    .collect(),
            }),
            unknown_commands: st.unknown_commands.clone(),
        }
    };
    shared
        .engines
        .sync_wal()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    crate::durable::replace(&state_path(shared), saved.render().as_bytes())?;
    replica.resume.on_disk.store(true, Ordering::SeqCst);
    Ok(true)
}

/// After a store was copied from a Pika dump (`redcodec migrate --src
/// <dump>/db0`): writes the state of `dir` to be the dump's binlog
/// position, read from its `info` file (`info_text`), so that following
/// the master that made the dump continues from there (`kTrySync`)
/// instead of copying again. `db` is the dump's database (`db0`). The
/// master's replication ID is not in the dump: it is left empty, and any
/// is taken. Returns the master's address and the position.
pub fn save_pika_dump_position(
    dir: &Path,
    db: &str,
    info_text: &str,
) -> Result<((String, u16), u32, u64), String> {
    let (filenum, offset) = super::pika::full_copy::parse_info(info_text)?;
    let lines: Vec<&str> = info_text.lines().collect();
    let host = lines
        .get(1)
        .map(|h| h.trim())
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace))
        .ok_or("no master host (line 2)")?;
    let port = lines
        .get(2)
        .and_then(|p| p.trim().parse::<u16>().ok())
        .ok_or("no master port (line 3)")?;
    let binlog_file_size = DEFAULT_BINLOG_FILE_SIZE;
    let saved = Saved {
        replid: "0".repeat(40),
        offset: pika_resume::measure(binlog_file_size, [(filenum, offset)]),
        stream_db: None,
        kvrocks: None,
        pika: Some(PikaMaster {
            master: (host.to_string(), port),
            binlog_file_size,
            replication_id: String::new(),
            dbs: vec![(db.to_string(), filenum, offset)],
        }),
        unknown_commands: BTreeMap::new(),
    };
    crate::durable::replace(&dir.join(STATE_FILE), saved.render().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(((host.to_string(), port), filenum, offset))
}

/// At start, before anything is applied: reads the file and removes it
/// (the store may change from now on). Returns what it held when the
/// data can be continued from: no load marker (a half copy), and the
/// server follows a master from the start (`--replicaof`, or its
/// cluster topology lists it as a replica).
pub fn take(shared: &Shared, marker: &Path) -> std::io::Result<Option<Saved>> {
    let path = state_path(shared);
    let Some(text) = crate::durable::take(&path)? else {
        return Ok(None);
    };
    if marker.exists() {
        return Ok(None);
    }
    let Some(saved) = Saved::parse(&text) else {
        eprintln!(
            "redcodec serve: replication: {} is not a state file this version wrote; ignored (a full copy follows)",
            path.display()
        );
        return Ok(None);
    };
    if !starts_following(shared) {
        eprintln!(
            "redcodec serve: replication: the replication state in {} is dropped: the server does not start as a replica (--replicaof, or a replica in its cluster topology), so the data may change",
            path.display()
        );
        return Ok(None);
    }
    Ok(Some(saved))
}

/// At start: continues from the state the file held, if any (see
/// [`take`]).
pub fn restore(shared: &Shared, marker: &Path) {
    match take(shared, marker) {
        Ok(Some(saved)) => {
            let at = match &saved.pika {
                Some(p) => format!(
                    "binlog {} of the Pika master {}:{}",
                    p.dbs
                        .iter()
                        .map(|(name, filenum, offset)| format!("{name} {filenum}:{offset}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.master.0,
                    p.master.1
                ),
                None => format!("offset {} of replication ID {}", saved.offset, saved.replid),
            };
            eprintln!(
                "redcodec serve: replication: the data held is at {at}: asking the master to continue from there"
            );
            let mut st = shared.replica.state.lock();
            st.replid = saved.replid;
            st.offset = saved.offset;
            st.read_offset = saved.offset;
            st.stream_db = saved.stream_db;
            st.unknown_commands = saved.unknown_commands;
            drop(st);
            if let Some(p) = saved.pika {
                restore_pika(shared, p);
            }
            if let Some(k) = saved.kvrocks {
                super::kvrocks::kvrocks_resume::set_resume(
                    shared,
                    Some(super::kvrocks::kvrocks_resume::Resume {
                        master: k.master,
                        next_sequence: u64::try_from(saved.offset).unwrap_or(0) + 1,
                        cluster: k.cluster,
                    }),
                );
            }
            shared.replica.can_continue.store(true, Ordering::SeqCst);
        }
        Ok(None) => {}
        Err(e) => eprintln!(
            "redcodec serve: replication: reading {}: {e} (a full copy follows)",
            state_path(shared).display()
        ),
    }
}

/// At start, from the replication state file: where the link to `saved`'s
/// master continues. A database that no longer maps to a namespace here
/// leaves no resume point (the link copies again).
fn restore_pika(shared: &Shared, saved: PikaMaster) {
    let dbs: Option<Vec<DbPosition>> = saved
        .dbs
        .into_iter()
        .map(|(name, filenum, offset)| {
            let dest = db_index(&name).and_then(|i| namespace_of(shared, i))?;
            Some(DbPosition {
                name,
                dest: Some(dest),
                filenum,
                offset,
                session_id: 0,
            })
        })
        .collect();
    let resume = dbs.map(|dbs| pika_resume::Resume {
        master: saved.master,
        replication_id: saved.replication_id,
        binlog_file_size: saved.binlog_file_size,
        dbs,
    });
    pika_resume::set_resume(shared, resume);
}

/// Whether this server follows a master from its start: `--replicaof`,
/// or its cluster topology lists it as a replica.
pub fn starts_following(shared: &Shared) -> bool {
    shared.config.replica.replicaof.is_some()
        || crate::cluster::replica_role::starts_as_replica(shared)
}

/// At a clean stop, once the link task has ended: keeps the state for
/// the next start.
pub fn save_at_stop(shared: &Shared) {
    match save(shared) {
        Ok(true) => {
            let st = shared.replica.state.lock();
            eprintln!(
                "redcodec serve: replication: stopped at offset {} of replication ID {}; saved in {} for a partial resync at the next start",
                st.offset,
                st.replid,
                state_path(shared).display()
            );
        }
        Ok(false) => {}
        Err(e) => eprintln!(
            "redcodec serve: replication: saving the replication state: {e} (the next start makes a full copy)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pika_dumps_info_file_becomes_a_state_or_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (master, filenum, offset) =
            save_pika_dump_position(dir.path(), "db0", "3s\n10.0.0.9\n9221\n12\n3456\n").unwrap();
        assert_eq!(
            (master, filenum, offset),
            (("10.0.0.9".to_string(), 9221), 12, 3456)
        );
        let text = std::fs::read_to_string(dir.path().join(STATE_FILE)).unwrap();
        let saved = Saved::parse(&text).unwrap();
        let pika = saved.pika.unwrap();
        assert_eq!(pika.replication_id, "");
        assert_eq!(pika.dbs, vec![("db0".to_string(), 12, 3456)]);
        for bad in [
            "",
            "3s\n\n9221\n12\n3456\n",
            "3s\n10.0.0.9\nport\n12\n3456\n",
            "3s\n10.0.0.9\n9221\n12\n",
        ] {
            let other = tempfile::tempdir().unwrap();
            assert!(
                save_pika_dump_position(other.path(), "db0", bad).is_err(),
                "{bad:?}"
            );
            assert!(!other.path().join(STATE_FILE).exists());
        }
    }

    #[test]
    fn the_file_reads_back_and_refuses_anything_else() {
        let saved = Saved {
            replid: "ab".repeat(20),
            offset: 12345,
            stream_db: Some(3),
            kvrocks: None,
            pika: None,
            unknown_commands: BTreeMap::new(),
        };
        assert_eq!(Saved::parse(&saved.render()), Some(saved.clone()));
        let unknown = Saved {
            unknown_commands: BTreeMap::from([("bitfield".into(), 2), ("pfadd".into(), 1)]),
            ..saved.clone()
        };
        assert!(unknown.render().ends_with("unknown bitfield=2,pfadd=1\n"));
        assert_eq!(Saved::parse(&unknown.render()), Some(unknown));
        for cluster in [false, true] {
            let kvrocks = Saved {
                kvrocks: Some(KvrocksMaster {
                    master: ("::1".to_string(), 6666),
                    cluster,
                }),
                ..saved.clone()
            };
            assert_eq!(Saved::parse(&kvrocks.render()), Some(kvrocks));
        }
        for replication_id in ["", "9f3a"] {
            let pika = Saved {
                pika: Some(PikaMaster {
                    master: ("::1".to_string(), 9221),
                    binlog_file_size: 104_857_600,
                    replication_id: replication_id.to_string(),
                    dbs: vec![("db0".into(), 3, 1234), ("db1".into(), 0, 0)],
                }),
                ..saved.clone()
            };
            assert_eq!(Saved::parse(&pika.render()), Some(pika));
        }
        let none = Saved {
            stream_db: None,
            ..saved.clone()
        };
        assert_eq!(Saved::parse(&none.render()), Some(none));
        for bad in [
            "",
            "replid x\n",
            &saved.render().replace("offset 12345", "offset -4"),
            &saved.render().replace("offset 12345\n", ""),
            &saved.render().replace(&"ab".repeat(20), "zz"),
            &saved
                .render()
                .replace("redcodec-replica-state 1", "other 1"),
            &format!("{}kvrocks host:6666 sideways\n", saved.render()),
            &format!("{}kvrocks host:port plain\n", saved.render()),
            &format!("{}kvrocks :6666 plain\n", saved.render()),
            &format!("{}pika-db db0 1 2\n", saved.render()),
            &format!("{}pika h:1 100 id\n", saved.render()),
            &format!("{}pika h:1 100 id\npika-db db0 1\n", saved.render()),
            &format!("{}pika h:1 100 id\npika-db db0 1 2 3\n", saved.render()),
            &format!("{}pika h:1 many id\npika-db db0 1 2\n", saved.render()),
            &format!("{}pika h:1 100 i d\npika-db db0 1 2\n", saved.render()),
        ] {
            assert_eq!(Saved::parse(bad), None, "{bad:?}");
        }
    }
}
