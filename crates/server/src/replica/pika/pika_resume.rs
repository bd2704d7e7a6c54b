//! Where the link to a Pika master resumes: each database's binlog
//! position, kept by server between connections.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::state::Shared;

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
        let sum: u128 = self
            .dbs
            .iter()
            .map(|d| {
                u128::from(d.filenum) * u128::from(self.binlog_file_size) + u128::from(d.offset)
            })
            .sum();
        i64::try_from(sum).unwrap_or(i64::MAX)
    }
}

fn resumes() -> &'static Mutex<HashMap<String, Resume>> {
    static RESUMES: OnceLock<Mutex<HashMap<String, Resume>>> = OnceLock::new();
    RESUMES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The resume point of this server's link to a Pika master, if it follows
/// one.
pub(crate) fn current(shared: &Shared) -> Option<Resume> {
    resumes().lock().get(&shared.replid).cloned()
}

pub(crate) fn set_resume(shared: &Shared, resume: Option<Resume>) {
    let mut all = resumes().lock();
    match resume {
        Some(r) => all.insert(shared.replid.clone(), r),
        None => all.remove(&shared.replid),
    };
}
