//! The replication stream's commands held back while a thread runs a
//! group of writes (a leaf: the master's observer holds them here,
//! [`crate::group_commit`] appends them once the group commits).

use std::cell::RefCell;

use crate::master::propagate::Args;

/// The commands a group held back, and the database they ran in (a group
/// runs in one namespace: one database).
#[derive(Default)]
pub(crate) struct Held {
    pub(crate) db: u32,
    pub(crate) commands: Vec<Args>,
}

thread_local! {
    /// The replication stream's commands held back by the group this
    /// thread runs (`None`: no group, feed at once).
    static HELD_FEED: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// Holds `commands`, run in database `db`, back when the calling thread
/// runs a group (they are appended to the stream once it commits);
/// otherwise gives them back to be appended now.
pub fn hold_feed(db: u32, commands: Vec<Args>) -> Option<Vec<Args>> {
    HELD_FEED.with(|held| match held.borrow_mut().as_mut() {
        Some(held) => {
            held.db = db;
            held.commands.extend(commands);
            None
        }
        None => Some(commands),
    })
}

/// Clears the thread's held-back stream when dropped (a group that
/// failed, or panicked).
pub(crate) struct HeldFeed;

impl HeldFeed {
    pub(crate) fn start() -> HeldFeed {
        HELD_FEED.with(|held| *held.borrow_mut() = Some(Held::default()));
        HeldFeed
    }

    pub(crate) fn take() -> Held {
        HELD_FEED.with(|held| {
            held.borrow_mut()
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default()
        })
    }
}

impl HeldFeed {
    /// How many commands are held.
    pub(crate) fn len() -> usize {
        HELD_FEED.with(|held| held.borrow().as_ref().map_or(0, |h| h.commands.len()))
    }

    /// Wraps the commands held since there were `mark` in `MULTI` …
    /// `EXEC` (one script's writes, as a script alone sends them).
    pub(crate) fn wrap_since(mark: usize) {
        HELD_FEED.with(|held| {
            if let Some(held) = held.borrow_mut().as_mut() {
                let held = &mut held.commands;
                if held.len() > mark {
                    held.insert(mark, vec![b"MULTI".to_vec()]);
                    held.push(vec![b"EXEC".to_vec()]);
                }
            }
        });
    }
}

impl Drop for HeldFeed {
    fn drop(&mut self) {
        HELD_FEED.with(|held| *held.borrow_mut() = None);
    }
}
