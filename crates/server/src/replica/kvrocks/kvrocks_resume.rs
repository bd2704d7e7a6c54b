//! Where the link to a Kvrocks master resumes: the next batch's
//! sequence number, kept by server between connections.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::state::Shared;

/// What the link to a Kvrocks master keeps between connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The master.
    pub master: (String, u16),
    /// The sequence number of the next batch to apply.
    pub next_sequence: u64,
    /// Whether the master's keys carry a cluster slot.
    pub cluster: bool,
}

/// The resume points, by server (its own replication ID).
fn resumes() -> &'static Mutex<HashMap<String, Resume>> {
    static RESUMES: OnceLock<Mutex<HashMap<String, Resume>>> = OnceLock::new();
    RESUMES.get_or_init(|| Mutex::new(HashMap::new()))
}

pub(crate) fn resume_of(shared: &Shared, host: &str, port: u16) -> Option<Resume> {
    resumes()
        .lock()
        .get(&shared.replid)
        .filter(|r| r.master.0 == host && r.master.1 == port)
        .cloned()
}

/// The resume point of this server's link to a Kvrocks master, if it
/// follows one.
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
