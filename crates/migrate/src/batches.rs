//! Items handed from a thread that produces them to one that consumes
//! them, in batches over a bounded channel: a few batches in flight, so
//! the producer runs ahead by that much at most, and each item costs no
//! channel operation of its own. Migration's reader hands its items over
//! so, and the bulk path's merge its records.

use std::sync::mpsc::{Receiver, SyncSender};

/// Batches in flight between the threads.
const IN_FLIGHT: usize = 4;

/// When a batch is sent: once it holds `items` items, or once one of its
/// two loads (say elements and bytes) reaches its limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchLimits {
    /// Items per batch at most.
    pub items: usize,
    /// The limits of the two loads items declare when pushed.
    pub loads: [usize; 2],
}

/// A batch, or the error that ended the producing (sent last).
type Batch<T, E> = Result<Vec<T>, E>;

/// The consumer hung up: producing stops.
#[derive(Debug)]
pub(crate) struct Gone;

/// The producing end: gathers items into batches.
pub(crate) struct BatchSender<T, E> {
    tx: SyncSender<Batch<T, E>>,
    items: Vec<T>,
    loads: [usize; 2],
    limits: BatchLimits,
}

impl<T, E> BatchSender<T, E> {
    /// Adds `item`, with its `loads`; sends the batch once full.
    pub(crate) fn push(&mut self, item: T, loads: [usize; 2]) -> Result<(), Gone> {
        self.items.push(item);
        self.loads[0] += loads[0];
        self.loads[1] += loads[1];
        if self.items.len() >= self.limits.items
            || self.loads[0] >= self.limits.loads[0]
            || self.loads[1] >= self.limits.loads[1]
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Sends the items gathered, if any.
    pub(crate) fn flush(&mut self) -> Result<(), Gone> {
        if self.items.is_empty() {
            return Ok(());
        }
        self.loads = [0, 0];
        let items = std::mem::take(&mut self.items);
        self.tx.send(Ok(items)).map_err(|_| Gone)
    }

    /// Sends the items gathered, then `error`: the consumer gets every
    /// item produced before it.
    pub(crate) fn fail(mut self, error: E) {
        if self.flush().is_ok() {
            let _ = self.tx.send(Err(error));
        }
    }
}

/// The consuming end: the items one by one, in the order pushed.
pub(crate) struct Batches<T, E> {
    rx: Receiver<Batch<T, E>>,
    batch: std::vec::IntoIter<T>,
}

impl<T, E> Batches<T, E> {
    /// The next item (`None`: the producer is done), or the error that
    /// ended the producing.
    pub(crate) fn next(&mut self) -> Result<Option<T>, E> {
        loop {
            if let Some(item) = self.batch.next() {
                return Ok(Some(item));
            }
            match self.rx.recv() {
                Ok(batch) => self.batch = batch?.into_iter(),
                Err(_) => return Ok(None),
            }
        }
    }
}

/// The two ends of a channel of batches of at most `limits`.
pub(crate) fn channel<T, E>(limits: BatchLimits) -> (BatchSender<T, E>, Batches<T, E>) {
    let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT);
    let sender = BatchSender {
        tx,
        items: Vec::new(),
        loads: [0, 0],
        limits,
    };
    let batches = Batches {
        rx,
        batch: Vec::new().into_iter(),
    };
    (sender, batches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_arrive_in_order_across_batches_then_the_error() {
        let limits = BatchLimits {
            items: 3,
            loads: [usize::MAX, 10],
        };
        let (mut tx, mut rx) = channel::<u32, String>(limits);
        let producer = std::thread::spawn(move || {
            for n in 0..20 {
                tx.push(n, [1, n as usize % 4]).map_err(|_| ()).unwrap();
            }
            tx.fail("ended".to_string());
        });
        let mut got = Vec::new();
        let end = loop {
            match rx.next() {
                Ok(Some(n)) => got.push(n),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        producer.join().unwrap();
        assert_eq!(got, (0..20).collect::<Vec<_>>());
        assert_eq!(end.as_deref(), Some("ended"));
    }

    #[test]
    fn a_full_load_sends_the_batch_and_a_gone_consumer_stops_the_producer() {
        let limits = BatchLimits {
            items: usize::MAX,
            loads: [2, usize::MAX],
        };
        let (mut tx, rx) = channel::<u32, ()>(limits);
        tx.push(1, [1, 0]).unwrap();
        assert!(tx.items.len() == 1, "below the limit: kept");
        tx.push(2, [1, 0]).unwrap();
        assert!(tx.items.is_empty(), "at the limit: sent");
        drop(rx);
        tx.push(3, [2, 0]).expect_err("the consumer is gone");
    }
}
