//! Where the link to a Pika master resumes: each database's binlog
//! position, kept by server between connections, and across a restart in
//! the replication state file (`crate::replica::resume`).

use crate::replica::resume_points::ResumePoints;
use crate::state::Shared;

/// Pika's default `binlog-file-size` (100 MiB).
pub const DEFAULT_BINLOG_FILE_SIZE: u64 = 104_857_600;

/// The database index of a Pika database name (`db3` is 3).
pub fn db_index(name: &str) -> Option<u64> {
    name.strip_prefix("db")?.parse().ok()
}

/// One database followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbPosition {
    /// Its name on the master (`db0`).
    pub name: String,
    /// The namespace of this server it maps to (`None`: not held here).
    pub dest: Option<String>,
    /// The binlog file of the position after the last item applied.
    pub filenum: u32,
    /// The offset in that file.
    pub offset: u64,
    /// The master's session for this replica (from TrySync).
    pub session_id: i32,
}

/// What the link to a Pika master keeps between connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The master.
    pub master: (String, u16),
    /// Its replication ID.
    pub replication_id: String,
    /// `binlog-file-size`.
    pub binlog_file_size: u64,
    /// The databases.
    pub dbs: Vec<DbPosition>,
}

impl Resume {
    /// The offset INFO shows (see the module docs).
    pub fn offset(&self) -> i64 {
        measure(
            self.binlog_file_size,
            self.dbs.iter().map(|d| (d.filenum, d.offset)),
        )
    }
}

/// Pika's measure of binlog positions (`slave_repl_offset`): the sum of
/// file number × `binlog_file_size` + offset.
pub fn measure(binlog_file_size: u64, positions: impl IntoIterator<Item = (u32, u64)>) -> i64 {
    let sum: u128 = positions
        .into_iter()
        .map(|(filenum, offset)| {
            u128::from(filenum) * u128::from(binlog_file_size) + u128::from(offset)
        })
        .sum();
    i64::try_from(sum).unwrap_or(i64::MAX)
}

/// The resume points, by server (its own replication ID).
static RESUMES: ResumePoints<Resume> = ResumePoints::new();

/// The resume point of this server's link to a Pika master, if it follows
/// one.
pub(crate) fn current(shared: &Shared) -> Option<Resume> {
    RESUMES.get(&shared.replid)
}

pub(crate) fn set_resume(shared: &Shared, resume: Option<Resume>) {
    RESUMES.set(&shared.replid, resume);
}
