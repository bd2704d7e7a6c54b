//! The clients in MONITOR mode and the lines waiting for each (the data
//! [`crate::monitor`] feeds; a leaf the server's state holds).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::client_feed::Feed;

/// The most bytes a monitor may leave unread before it is disconnected.
const MAX_PENDING: usize = 256 * 1024 * 1024;

/// The clients in MONITOR mode.
#[derive(Default)]
pub struct Monitors {
    /// How many there are: the only thing a command reads while there
    /// are none.
    pub(crate) count: AtomicUsize,
    by_client: Mutex<HashMap<u64, Arc<Feed>>>,
}

impl Monitors {
    /// Makes client `id` a monitor; false if it is one already.
    pub(crate) fn start(&self, id: u64) -> bool {
        let mut by_client = self.by_client.lock();
        if by_client.contains_key(&id) {
            return false;
        }
        by_client.insert(id, Arc::new(Feed::new(MAX_PENDING)));
        self.count.store(by_client.len(), Ordering::SeqCst);
        true
    }

    /// Client `id` is no longer a monitor (RESET, or it disconnected).
    pub fn stop(&self, id: u64) {
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut by_client = self.by_client.lock();
        by_client.remove(&id);
        self.count.store(by_client.len(), Ordering::SeqCst);
    }

    /// Waits for the next lines for client `id`: `Some(bytes)` to write
    /// to it, `None` when it must be disconnected (it fell too far
    /// behind). Never completes for a client that is not a monitor.
    pub async fn next(&self, id: u64) -> Option<Vec<u8>> {
        if self.count.load(Ordering::Relaxed) == 0 {
            return std::future::pending().await;
        }
        let feed = self.by_client.lock().get(&id).cloned();
        let Some(feed) = feed else {
            return std::future::pending().await;
        };
        feed.next().await
    }

    /// The lines waiting for client `id` now (perhaps none), without
    /// waiting (see [`crate::pubsub::PubSub::take`]); `None` when it must
    /// be disconnected.
    pub fn take(&self, id: u64) -> Option<Vec<u8>> {
        if self.count.load(Ordering::Relaxed) == 0 {
            return Some(Vec::new());
        }
        let feed = self.by_client.lock().get(&id).cloned();
        feed.map_or(Some(Vec::new()), |feed| feed.take())
    }

    /// Sends `line` to every monitor.
    pub(crate) fn send(&self, line: &[u8]) {
        for feed in self.by_client.lock().values() {
            feed.push(line);
        }
    }
}
