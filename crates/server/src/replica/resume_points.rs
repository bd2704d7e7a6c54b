//! Resume points a replica keeps in memory between its connections to a
//! master, one per server (by its own replication ID): the links to a
//! Kvrocks master and to a Pika master each keep theirs in one.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// The resume points of one kind of link, by server.
pub struct ResumePoints<T> {
    by_server: OnceLock<Mutex<HashMap<String, T>>>,
}

impl<T: Clone> ResumePoints<T> {
    /// None kept yet (usable in a `static`).
    pub const fn new() -> ResumePoints<T> {
        ResumePoints {
            by_server: OnceLock::new(),
        }
    }

    fn map(&self) -> &Mutex<HashMap<String, T>> {
        self.by_server.get_or_init(|| Mutex::new(HashMap::new()))
    }

    /// The resume point of the server `replid`, if any.
    pub fn get(&self, replid: &str) -> Option<T> {
        self.map().lock().get(replid).cloned()
    }

    /// Keeps `point` for the server `replid` (`None`: forgets it).
    pub fn set(&self, replid: &str, point: Option<T>) {
        let mut all = self.map().lock();
        match point {
            Some(p) => all.insert(replid.to_string(), p),
            None => all.remove(replid),
        };
    }
}

impl<T: Clone> Default for ResumePoints<T> {
    fn default() -> ResumePoints<T> {
        ResumePoints::new()
    }
}

#[cfg(test)]
mod tests {
    use super::ResumePoints;

    #[test]
    fn points_are_kept_per_server_and_forgotten() {
        static POINTS: ResumePoints<u64> = ResumePoints::new();
        assert_eq!(POINTS.get("a"), None);
        POINTS.set("a", Some(7));
        POINTS.set("b", Some(9));
        assert_eq!((POINTS.get("a"), POINTS.get("b")), (Some(7), Some(9)));
        POINTS.set("a", None);
        assert_eq!((POINTS.get("a"), POINTS.get("b")), (None, Some(9)));
    }
}
