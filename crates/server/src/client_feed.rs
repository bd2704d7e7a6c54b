//! Bytes that other connections produce for one connection (MONITOR's
//! lines, Pub/Sub's messages): appended from any thread, taken by the
//! connection's loop when it wakes. A connection that leaves more than its
//! limit unread is disconnected, as Redis' `client-output-buffer-limit`
//! disconnects it.

use parking_lot::Mutex;
use tokio::sync::Notify;

/// What waits for one connection.
pub(crate) struct Feed {
    pending: Mutex<Pending>,
    /// Wakes its connection when bytes arrive.
    ready: Notify,
    /// The most bytes it may leave unread.
    limit: usize,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// More than the limit waited: the connection is disconnected.
    overflowed: bool,
}

impl Feed {
    /// An empty feed that overflows past `limit` bytes.
    pub(crate) fn new(limit: usize) -> Feed {
        Feed {
            pending: Mutex::default(),
            ready: Notify::new(),
            limit,
        }
    }

    /// Appends `bytes` (nothing once it overflowed) and wakes the
    /// connection.
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut pending = self.pending.lock();
        if pending.bytes.len() + bytes.len() > self.limit {
            pending.overflowed = true;
            pending.bytes = Vec::new();
        } else if !pending.overflowed {
            pending.bytes.extend_from_slice(bytes);
        }
        drop(pending);
        self.ready.notify_one();
    }

    /// Waits for bytes: `Some` to write, `None` once it overflowed (the
    /// connection must be closed).
    pub(crate) async fn next(&self) -> Option<Vec<u8>> {
        loop {
            let ready = self.ready.notified();
            let taken = self.take()?;
            if !taken.is_empty() {
                return Some(taken);
            }
            ready.await;
        }
    }

    /// The bytes waiting now (perhaps none), without waiting; `None` once
    /// it overflowed.
    pub(crate) fn take(&self) -> Option<Vec<u8>> {
        let mut pending = self.pending.lock();
        if pending.overflowed {
            return None;
        }
        Some(std::mem::take(&mut pending.bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_arrive_in_order_until_the_limit_is_passed() {
        let feed = Feed::new(8);
        feed.push(b"abc");
        feed.push(b"de");
        assert_eq!(feed.next().await.as_deref(), Some(&b"abcde"[..]));
        assert_eq!(feed.take().as_deref(), Some(&b""[..]));
        feed.push(b"12");
        assert_eq!(feed.take().as_deref(), Some(&b"12"[..]));
        feed.push(b"123456");
        feed.push(b"789");
        assert_eq!(feed.take(), None);
        assert_eq!(feed.next().await, None);
        feed.push(b"x");
        assert_eq!(feed.next().await, None);
    }
}
