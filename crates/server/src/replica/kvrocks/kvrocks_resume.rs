//! Where the link to a Kvrocks master resumes: the next batch's
//! sequence number, kept by server between connections.

use crate::replica::resume_points::ResumePoints;
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
static RESUMES: ResumePoints<Resume> = ResumePoints::new();

pub(crate) fn resume_of(shared: &Shared, host: &str, port: u16) -> Option<Resume> {
    RESUMES
        .get(&shared.replid)
        .filter(|r| r.master.0 == host && r.master.1 == port)
}

/// The resume point of this server's link to a Kvrocks master, if it
/// follows one.
pub(crate) fn current(shared: &Shared) -> Option<Resume> {
    RESUMES.get(&shared.replid)
}

pub(crate) fn set_resume(shared: &Shared, resume: Option<Resume>) {
    RESUMES.set(&shared.replid, resume);
}
